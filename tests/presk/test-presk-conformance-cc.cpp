// The conformance suite on the cc backend (issue 11): within the seed's bands of the reference
// as the kernel backend is, and every element's bits equal to the kernel interpreter's on the
// same inputs (Result::bits_differ, asserted in every realization): the primitive cases in f64
// and f32, the examples in f64, f32 and bf16, and with their zeros drawn. Skipped while the
// backend is not built (realize::compile_native refuses every kernel).
#include "conformance_suite.h"

namespace presk::realize {
namespace {

using test::run_suite;
using test::uniform;

SuiteOptions on_cc(bool zeros_drawn) {
    SuiteOptions o;
    o.backend = Backend::Cc;
    o.zeros_drawn = zeros_drawn;
    return o;
}

TEST(ConformanceCc, PrimitivesF64F32) {
    if (!test::built(Backend::Cc)) GTEST_SKIP() << "GK-SKIP: the cc backend is not built";
    run_suite(primitive_cases(), uniform({"f64", "f32"}), on_cc(false));
}

TEST(ConformanceCc, ExamplesF64F32Bf16) {
    if (!test::built(Backend::Cc)) GTEST_SKIP() << "GK-SKIP: the cc backend is not built";
    run_suite(example_cases(PRESK_SOURCE_DIR "/examples"), uniform({"f64", "f32", "bf16"}), on_cc(false));
}

TEST(ConformanceCc, ExamplesWithTheirZerosDrawn) {
    if (!test::built(Backend::Cc)) GTEST_SKIP() << "GK-SKIP: the cc backend is not built";
    run_suite(example_cases(PRESK_SOURCE_DIR "/examples"), uniform({"f64", "f32", "bf16"}), on_cc(true));
}

} // namespace
} // namespace presk::realize
