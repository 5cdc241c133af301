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

/// Whether backend `b` runs here: false when compile_native refuses the first primitive case's
/// kernel as not built, built without LLVM, or without its C compiler (the test is then skipped).
inline bool built(Backend b) {
    SuiteOptions o;
    o.backend = b;
    for (const Result& r : run_case(primitive_cases().front(), uniform({"f64"}), o))
        for (const char* why : {"backend is not built", "built without LLVM", "was not found"})
            if (r.error.find(why) != std::string::npos) return false;
    return true;
}

/// The suite's three parts on machine-code backend `b` (native, cc): the primitive cases in f64
/// and f32, the examples in f64, f32 and bf16, and the examples with their zeros drawn; each
/// within the bands and bit-identical to the kernel interpreter. Skipped while `b` is not built.
enum class Part { Primitives, Examples, ExamplesZerosDrawn };
inline void run_part_on(Backend b, Part part) {
    if (!built(b)) GTEST_SKIP() << "GK-SKIP: the " << backend_name(b) << " backend is not built";
    SuiteOptions o;
    o.backend = b;
    o.zeros_drawn = part == Part::ExamplesZerosDrawn;
    if (part == Part::Primitives) run_suite(primitive_cases(), uniform({"f64", "f32"}), o);
    else run_suite(example_cases(PRESK_SOURCE_DIR "/examples"), uniform({"f64", "f32", "bf16"}), o);
}

} // namespace presk::realize::test
