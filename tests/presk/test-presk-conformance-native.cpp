// The conformance suite on the native backend (issue 11): within the seed's bands of the reference
// as the kernel backend is, and every element's bits equal to the kernel interpreter's on the
// same inputs (Result::bits_differ, asserted in every realization): the primitive cases in f64
// and f32, the examples in f64, f32 and bf16, and with their zeros drawn. Skipped while the
// backend is not built (realize::compile_native refuses every kernel).
#include "conformance_suite.h"

namespace presk::realize {
namespace {

using test::run_suite;
using test::uniform;

SuiteOptions on_native(bool zeros_drawn) {
    SuiteOptions o;
    o.backend = Backend::Native;
    o.zeros_drawn = zeros_drawn;
    return o;
}

TEST(ConformanceNative, PrimitivesF64F32) {
    if (!test::built(Backend::Native)) GTEST_SKIP() << "GK-SKIP: the native backend is not built";
    run_suite(primitive_cases(), uniform({"f64", "f32"}), on_native(false));
}

TEST(ConformanceNative, ExamplesF64F32Bf16) {
    if (!test::built(Backend::Native)) GTEST_SKIP() << "GK-SKIP: the native backend is not built";
    run_suite(example_cases(PRESK_SOURCE_DIR "/examples"), uniform({"f64", "f32", "bf16"}), on_native(false));
}

TEST(ConformanceNative, ExamplesWithTheirZerosDrawn) {
    if (!test::built(Backend::Native)) GTEST_SKIP() << "GK-SKIP: the native backend is not built";
    run_suite(example_cases(PRESK_SOURCE_DIR "/examples"), uniform({"f64", "f32", "bf16"}), on_native(true));
}

} // namespace
} // namespace presk::realize
