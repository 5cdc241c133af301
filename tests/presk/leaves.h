// A value's bytes as the tests compare them bit for bit (test-presk-threads, test-presk-plan).
#pragma once
#include <vector>

#include "realize/executor.h"

namespace presk::test {

/// Every tensor leaf's bytes of `v`, in order.
inline void leaves(const realize::Value& v, std::vector<std::vector<unsigned char>>& out) {
    if (v.t) {
        const auto* p = static_cast<const unsigned char*>(v.t->raw());
        out.emplace_back(p, p + (size_t)v.t->size() * kernel::element_size(v.t->dtype()));
        return;
    }
    for (const realize::Value& i : v.items) leaves(i, out);
}

} // namespace presk::test
