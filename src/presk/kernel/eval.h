// The kernel interpreter (--backend kernel): evaluates a PSK-Kernel in its machine type, every
// real operation rounded to the kernel's arithmetic type (f64, or f32 for f32 and bf16
// storage), stores rounded to the buffer's storage type (bf16: round to nearest even), the
// transcendental functions from pmath.h so that every backend computes the same bits.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kernel/ir.h"

namespace presk::kernel {

/// A buffer's contents, row-major. Reals of f64/f32/bf16 buffers are held in `re` as doubles
/// (every f32 and bf16 value is one exactly); i64 buffers hold `in`.
struct Data {
    DType dtype = DType::F32;
    std::vector<double> re;
    std::vector<int64_t> in;

    int64_t size() const { return dtype == DType::I64 ? (int64_t)in.size() : (int64_t)re.size(); }
};

/// `x` rounded to storage type `t`: f64 unchanged, f32 one rounding to nearest even, bf16
/// through f32 then to bf16 (two roundings, the language's rule for an f64 value reaching
/// bf16). Not for I64.
double round_to(DType t, double x);

/// A kernel checked and translated once for the interpreter, then run any number of times.
/// It keeps what it needs of the kernel (a copy: no reference to `k`).
class Compiled {
public:
    /// Translates `k`. Throws presk::Error naming the kernel when a buffer has too many
    /// elements or the kernel is malformed in a way its constructors cannot see (a buffer
    /// number or index count that does not match, a real access to an integer buffer, a
    /// store to an input, a loop nested in itself, a variable used outside its loop or at two
    /// lane counts, an unknown operation).
    explicit Compiled(const Kernel& k);
    ~Compiled();
    Compiled(Compiled&&) noexcept;
    Compiled& operator=(Compiled&&) noexcept;

    /// Runs the kernel on `in` (one Data per input, of the declared dtype and element count)
    /// and writes every element of `out` (resized to the output's element count, dtype set;
    /// its storage reused when large enough). Throws presk::Error naming the
    /// kernel when an input does not match its declaration or a load or store index falls
    /// outside its buffer (an embed id out of range, say); nothing is read or written out of
    /// bounds.
    void run(const std::vector<const Data*>& in, Data& out) const;

private:
    struct Impl;
    std::unique_ptr<const Impl> impl_;
};

/// Compiled(k).run(in, out): for a kernel run once.
void run(const Kernel& k, const std::vector<const Data*>& in, Data& out);

} // namespace presk::kernel
