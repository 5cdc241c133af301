// The conformance suite on the cc backend (issue 11): within the seed's bands of the reference
// as the kernel backend is, and every element's bits equal to the kernel interpreter's on the
// same inputs (Result::bits_differ, asserted in every realization): the primitive cases in f64
// and f32, the examples in f64, f32 and bf16, and with their zeros drawn. Skipped while the
// backend is not built (realize::compile_native refuses every kernel).
#include "conformance_suite.h"

namespace presk::realize {
namespace {

using test::Part;

TEST(ConformanceCc, PrimitivesF64F32) { test::run_part_on(Backend::Cc, Part::Primitives); }
TEST(ConformanceCc, ExamplesF64F32Bf16) { test::run_part_on(Backend::Cc, Part::Examples); }
TEST(ConformanceCc, ExamplesWithTheirZerosDrawn) { test::run_part_on(Backend::Cc, Part::ExamplesZerosDrawn); }

} // namespace
} // namespace presk::realize
