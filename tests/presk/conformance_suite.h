// The conformance suite as the test programs run it (test-presk-conformance for the kernel
// backend, test-presk-conformance-native and -cc for the machine-code ones): every case in
// the given realizations, the results the suite asserts asserted, the others printed, and the
// table.
#pragma once
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "realize/conformance.h"

namespace presk::realize::test {

inline std::vector<Realization> uniform(std::initializer_list<const char*> names) {
    std::vector<Realization> rs;
    for (const char* n : names) rs.push_back(parse_realization(n));
    return rs;
}

inline std::string describe(const Result& r) {
    std::ostringstream o;
    o << r.name << " in " << r.realization << ": " << (r.error.empty() ? "" : r.error + "; ") << r.outside << " of "
      << r.compared << " outside the band (" << r.cancelling << " of them cancelling), worst gap " << r.worst << " = "
      << r.worst_factor << " x eps at " << r.worst_leaf << " (exact " << r.worst_exact << ", computed " << r.worst_got
      << "), " << r.int_mismatch << " integers differ, " << r.bits_differ
      << " elements differ from the kernel interpreter's bits";
    return o.str();
}

/// Runs every case in `rs` with `o`; asserts the results the suite asserts (asserted()), prints
/// the others and the table.
inline void run_suite(const std::vector<Case>& cases, const std::vector<Realization>& rs, const SuiteOptions& o) {
    std::vector<Result> all;
    for (const Case& c : cases) {
        for (const Result& r : run_case(c, rs, o)) {
            EXPECT_EQ(r.error, "") << describe(r);
            if (asserted(c, r, o.zeros_drawn)) EXPECT_TRUE(r.pass()) << describe(r);
            else if (!r.pass()) std::cout << "reported, not asserted: " << describe(r) << "\n";
            all.push_back(r);
        }
    }
    std::cout << table(all);
}

/// Whether backend `b` is built: false when compile_native refuses the first primitive case's
/// kernel as "not built" (its test is then skipped).
inline bool built(Backend b) {
    SuiteOptions o;
    o.backend = b;
    for (const Result& r : run_case(primitive_cases().front(), uniform({"f64"}), o))
        if (r.error.find("backend is not built") != std::string::npos) return false;
    return true;
}

} // namespace presk::realize::test
