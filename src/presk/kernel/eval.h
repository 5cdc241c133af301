// The kernel interpreter (--backend kernel): evaluates a PSK-Kernel in its machine type, every
// real operation rounded to the kernel's arithmetic type (f64, or f32 for f32 and bf16
// storage), stores rounded to the buffer's storage type (bf16: round to nearest even), the
// transcendental functions from pmath.h so that every backend computes the same bits.
#pragma once
#include <memory>
#include <vector>

#include "kernel/data.h"
#include "kernel/ir.h"

namespace presk::kernel {

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
    /// and writes every element of `out`: `out` itself when it has the output's dtype and
    /// element count and shares its elements with no other Data, else a fresh buffer put in its
    /// place. Loads and stores are in the buffers' storage types. Throws presk::Error naming
    /// the kernel when an input does not match its declaration or a load or store index falls
    /// outside its buffer (an embed id out of range, say); nothing is read or written out of
    /// bounds.
    void run(const std::vector<const Data*>& in, Data& out) const;

private:
    struct Impl;
    std::unique_ptr<const Impl> impl_;
};

/// The checks Compiled::run makes of its buffers, for a backend that runs machine code on
/// them: `in` one Data per input of `k` of the declared dtype and element count, none of them
/// `out`, and `out` of the output's dtype and element count, sharing its elements with no
/// other Data. Throws presk::Error naming the kernel (its messages are Compiled::run's).
void check_buffers(const Kernel& k, const std::vector<const Data*>& in, const Data& out);
/// The element count of every buffer of `k` in buffer order, the output's last (what the
/// checks compare with). Throws presk::Error naming the kernel when a count overflows.
std::vector<int64_t> buffer_counts(const Kernel& k);
/// check_buffers with `n` = buffer_counts(k), for a caller that keeps the counts per kernel.
void check_buffers(const Kernel& k, const std::vector<int64_t>& n, const std::vector<const Data*>& in, const Data& out);

/// Compiled(k).run(in, out): for a kernel run once.
void run(const Kernel& k, const std::vector<const Data*>& in, Data& out);

} // namespace presk::kernel
