// PSK-Kernel printed as C: the one printer behind the cc backend (kernel/cc.h compiles its text
// with the system compiler) and `presk export --target c` (whose program links its text), so
// that both run the same code (../shared/seeds/presk-native.txt: "--backend llvm prints each
// kernel as C", "export ... computes the same bits").
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "kernel/ir.h"

namespace presk::kernel {

/// `k` as a C11 translation unit that defines `int fn(void* const* bufs, int64_t lo, int64_t
/// hi, int64_t* err)`, a presk_kernel_fn (kernel/native.h: typed row-major buffers, inputs
/// then the output, the split loop run over [lo, hi) clamped to its bounds, a presk_status
/// returned and err[] filled on failure). It computes the kernel interpreter's bits
/// (kernel/eval.cpp's header states the rule): each real operation one C operation in the
/// arithmetic type (float for f32 and bf16 kernels, double for f64), constants rounded to it
/// once and printed exactly, sqrt as sqrt/sqrtf, the other functions pmath.h's, integers int64
/// with every overflow and division by zero detected, and every index the loop bounds do not
/// prove in range checked. The text includes <math.h>, <stdint.h>, <string.h> and "pmath.h",
/// and must be compiled without fast-math and with -ffp-contract=off. Throws presk::Error
/// naming the kernel when it is malformed (the interpreter's checks, kernel::Compiled) or `fn`
/// is not a C identifier.
std::string print_c(const Kernel& k, const std::string& fn);
/// Kernels ks[i] as the functions fns[i] of one translation unit (so one compiler run builds
/// them all); the same text per function as print_c of one kernel.
std::string print_c(const std::vector<const Kernel*>& ks, const std::vector<std::string>& fns);

/// The text of pmath.c and of pmath.h (kernel/), embedded in the library at build time, so that
/// the cc backend and export need no source tree at run time.
std::string_view pmath_c_text();
std::string_view pmath_h_text();

} // namespace presk::kernel
