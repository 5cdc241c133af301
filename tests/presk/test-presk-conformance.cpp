// The conformance suite (issue 6, acceptance item 2): the kernel backend against the reference
// at 256 bits within the seed's bands: every primitive case in f64 and f32, every example
// entry in f64, f32 and bf16 (the tutorial entries beyond the seed's list in f64 and f32,
// their bf16 gaps reported, as the seed treats its own test programs); and the examples with
// their zero-initialised parameters drawn, asserted in f64 where an element outside the band
// is not a cancellation (it would be inside with the floor a raised to the output's largest
// magnitude); the rest is reported. The tables are printed; docs/conformance.md records them.
#include <gtest/gtest.h>

#include <iostream>

#include "realize/conformance.h"

namespace presk::realize {
namespace {

std::vector<Realization> uniform(std::initializer_list<const char*> names) {
    std::vector<Realization> rs;
    for (const char* n : names) rs.push_back(parse_realization(n));
    return rs;
}

std::string describe(const Result& r) {
    std::ostringstream o;
    o << r.name << " in " << r.realization << ": " << (r.error.empty() ? "" : r.error + "; ") << r.outside << " of "
      << r.compared << " outside the band (" << r.cancelling << " of them cancelling), worst gap " << r.worst << " = "
      << r.worst_factor << " x eps at " << r.worst_leaf << " (exact " << r.worst_exact << ", computed " << r.worst_got
      << "), " << r.int_mismatch << " integers differ";
    return o.str();
}

/// Runs every case in `rs`; asserts the results the suite asserts, prints the others.
void run_suite(const std::vector<Case>& cases, const std::vector<Realization>& rs, bool zeros) {
    SuiteOptions o;
    o.zeros_drawn = zeros;
    std::vector<Result> all;
    for (const Case& c : cases) {
        for (const Result& r : run_case(c, rs, o)) {
            EXPECT_EQ(r.error, "") << describe(r);
            if (asserted(c, r, zeros)) EXPECT_TRUE(r.pass()) << describe(r);
            else if (!r.pass()) std::cout << "reported, not asserted: " << describe(r) << "\n";
            all.push_back(r);
        }
    }
    std::cout << table(all);
}

TEST(Conformance, PrimitivesF64F32) {
    auto cases = primitive_cases();
    EXPECT_GE(cases.size(), 41u);
    run_suite(cases, uniform({"f64", "f32"}), false);
}

TEST(Conformance, ExamplesF64F32Bf16) {
    run_suite(example_cases(PRESK_SOURCE_DIR "/examples"), uniform({"f64", "f32", "bf16"}), false);
}

TEST(Conformance, ExamplesWithTheirZerosDrawn) {
    run_suite(example_cases(PRESK_SOURCE_DIR "/examples"), uniform({"f64", "f32", "bf16"}), true);
}

} // namespace
} // namespace presk::realize
