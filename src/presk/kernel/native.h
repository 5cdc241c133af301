// The calling convention of kernels compiled to machine code: the native backend (LLVM ORC
// JIT, kernel/llvm_jit.cpp), the cc backend (the C printer and the system compiler,
// kernel/cc.cpp) and `presk export --target c` all produce functions of this one type, so the
// executor, the worker pool and the exported program call them the same way.
//
// Buffers are row-major arrays in their storage types: f64 `double`, f32 `float`, bf16
// `uint16_t` (the bf16 bits), i64 `int64_t`. bufs[0..n) are the inputs, bufs[n] the output.
// A kernel reads its inputs, never writes them, and writes every element of its output before
// it reads it (the output is not zeroed first).
//
// The arithmetic is the kernel interpreter's (kernel/eval.cpp's header states it): each real
// operation one IEEE operation in the arithmetic type, no contraction and no reassociation,
// sqrt native, exp log tanh sin cos erf erfc pow from pmath.h, max/min as the interpreter
// orders them, stores rounded to the storage type (bf16: nearest even from f32), integers
// int64 with overflow and division by zero detected.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernel/ir.h"

extern "C" {

/// What a compiled kernel reports when it stops early (nothing is read or written out of
/// bounds; the output is then partly written and must be discarded).
enum presk_status {
    PRESK_OK = 0,
    PRESK_INDEX_OUT_OF_RANGE = 1,  // err[0] the access (numbered in kernel text order, loads
                                   // and stores alike, from 0), err[1] its axis, err[2] the index
    PRESK_INT_OVERFLOW = 2,        // an integer add, sub, mul, neg, div or mod overflowed
    PRESK_DIV_BY_ZERO = 3,         // an integer div (err[0] = 0) or mod (err[0] = 1) by zero
};

/// A compiled kernel. When the kernel has a split loop (presk::kernel::split_loop), the call
/// runs iterations [lo, hi) of that loop (lo <= hi within its bounds) with every other loop in
/// full; otherwise lo and hi are ignored. `err` points to three int64 filled on failure.
/// Returns a presk_status.
typedef int (*presk_kernel_fn)(void* const* bufs, int64_t lo, int64_t hi, int64_t* err);
}

namespace presk::kernel {

/// The loop a thread split may divide: the loop at depth k.split_depth of the kernel's body
/// when the body down to it is a perfect nest (one For per level; the loop of at least two
/// iterations); every store to the output and every load from it indexes it at one and the
/// same position with that loop's variable itself, or c * v + t with constants 0 <= t < c (a
/// block loop of a tiled contraction; not the last axis of a vector access, which covers
/// lanes along it), so different iterations write different
/// elements and read only their own (the seed's "threads" rule); and every scalar or vector
/// variable the loop's body reads is assigned earlier in the same iteration, so no value is
/// carried from one iteration to the next. `var` is the loop's variable, [lo, hi) its bounds.
/// A reduction over the outer axis, or a scatter whose output index is a loaded value (embed's
/// vjp), has none.
struct Split {
    int var = -1;
    int64_t lo = 0, hi = 0;
    const Stmt* loop = nullptr;  // the loop in k.body (valid while the kernel is)
};
std::optional<Split> split_loop(const Kernel& k);

/// The kernel's work in weighted operations: every expression node and store counted once
/// per iteration of its enclosing loops, a call of pmath (exp log tanh sin cos erf erfc pow)
/// as 16. The executor splits only kernels above kSplitWork.
double work(const Kernel& k);
inline constexpr double kSplitWork = 4e6;

/// A kernel compiled to machine code and what keeps it loaded (the JIT's dylib, a dlopen
/// handle). `text` is the source it was compiled from where there is one (the cc backend's C).
struct NativeCode {
    presk_kernel_fn fn = nullptr;
    std::shared_ptr<void> keep;
    std::string text;
};

/// The message a compiled kernel's failure gives, in the kernel interpreter's words where it
/// can ("kernel NAME: %1[...] index 7 out of range: axis 0 has size 4", "integer overflow").
std::string status_message(const Kernel& k, int status, const int64_t* err);

} // namespace presk::kernel
