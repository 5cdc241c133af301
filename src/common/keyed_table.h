// keyed_table.h - a table indexed by an enum, checked at compile time to list every value
// in order: entry i carries key i and the table has one entry per value below the count.
#pragma once

#include <cstddef>

namespace gk {

/// True when `table` has exactly `count` entries and entry i has key i. Use in a
/// static_assert next to the table, so that a shifted, missing or extra entry stops the build.
template <typename Entry, std::size_t N>
constexpr bool keyed_table_complete(const Entry (&table)[N], std::size_t count) {
    if (N != count) {
        return false;
    }
    for (std::size_t i = 0; i < N; ++i) {
        if (static_cast<std::size_t>(table[i].key) != i) {
            return false;
        }
    }
    return true;
}

} // namespace gk
