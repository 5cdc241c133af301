// vec_exp.h - exp of f32 values, and the row kernels built on it (softmax's numerators
// and normaliser, silu, swiglu), in the kernel sets (kernel_set.h).
//
// exp_f32 below is the one definition of gk's f32 exp; every kernel set computes its
// bits lane by lane (test-vec-exp sweeps each set the host runs against it). It is the
// approximation ggml's CPU backend vectorises softmax and silu with on AVX-512 (a range
// reduction by ln 2 and a degree-5 polynomial, from Arm's optimized-routines expf), so
// that gk's softmax and silu give the values llama.cpp's AVX-512 build gives; ggml's
// AVX2 and NEON variants and its scalar tails (libm expf) differ from it in the last
// bit for some inputs, gk's do not.
//
//   z = fma(x, log2(e), 1.5 * 2^23)    n = z - 1.5 * 2^23     (n = round(x / ln 2))
//   b = fma(-n, C2, fma(-n, C1, x))   (x - n ln 2, ln 2 split as C1 + C2)
//   u = b * b
//   j = fma(fma(fma(P5, b, P4), u, fma(P3, b, P2)), u, fma(P1, b, 1))   (~ e^b)
//   exp(x) = j * 2^n, rounded once; +inf for n > 192, +0 for n < -192; NaN -> x + x.
//
// Accuracy (the source's bound): at most 1.45 ulp plus rounding; x > 88.72 gives +inf,
// x < -103.97 gives +0 (subnormal results are rounded once, never flushed).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace gk::cpu {

namespace exp_constants {
inline constexpr float shift = 0x1.8p23f;     // 1.5 * 2^23: adding it rounds to an integer
inline constexpr float log2e = 0x1.715476p+0f;
inline constexpr float ln2_hi = 0x1.62e4p-1f;  // ln 2 = ln2_hi + ln2_lo
inline constexpr float ln2_lo = 0x1.7f7d1cp-20f;
inline constexpr float p1 = 0x1.ffffecp-1f;
inline constexpr float p2 = 0x1.fffdb6p-2f;
inline constexpr float p3 = 0x1.555e66p-3f;
inline constexpr float p4 = 0x1.573e2ep-5f;
inline constexpr float p5 = 0x1.0e4020p-7f;
inline constexpr float big = 192.0f;          // |n| above it: the result is +inf or +0
inline constexpr float step = 100.0f;         // 2^n applied as 2^clamp(n, ±step) * 2^rest
} // namespace exp_constants

/// 2^k as a float, for an integer k in [-126, 127].
inline float exp2_int(int32_t k) {
    const uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
    float          f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}

/// gk's exp of an f32 (see the file comment). Every fma here is fused whatever the
/// target (std::fma), so the value does not depend on the CPU.
inline float exp_f32(float x) {
    namespace c = exp_constants;
    if (std::isnan(x)) {
        return x + x;
    }
    const float z = std::fma(x, c::log2e, c::shift);
    const float n = z - c::shift;
    if (std::fabs(n) > c::big) {
        return n > 0.0f ? INFINITY : 0.0f;
    }
    const float b  = std::fma(-n, c::ln2_lo, std::fma(-n, c::ln2_hi, x));
    const float u  = b * b;
    const float j  = std::fma(std::fma(std::fma(c::p5, b, c::p4), u, std::fma(c::p3, b, c::p2)), u,
                              std::fma(c::p1, b, 1.0f));
    // j * 2^n with one rounding: j * 2^n1 is exact (j is near 1 and |n1| <= 100), and
    // 2^(n - n1) is a normal float.
    const float n1 = std::fmin(std::fmax(n, -c::step), c::step);
    return j * exp2_int(static_cast<int32_t>(n1)) * exp2_int(static_cast<int32_t>(n - n1));
}

/// silu(x) = x / (1 + exp(-x)), with exp_f32.
inline float silu_f32(float x) { return x / (1.0f + exp_f32(0.0f - x)); }

/// The row kernels of one kernel set; each gives exp_f32's bits at every element.
struct exp_kernels {
    /// w[i] = exp_f32(w[i] - max) for i < n (softmax's numerators, alibi.h).
    void (*exp_shift)(float * w, int64_t n, float max);
    /// w[i] = w[i] * s for i < n (softmax's normalisation): the float product's bits, with
    /// subnormal values and results taken without microcode assists (simd.h's mul_via_f64).
    void (*scale)(float * w, int64_t n, float s);
    /// y[i] = silu_f32(x[i]) for i < n (y may be x).
    void (*silu)(float * y, const float * x, int64_t n);
    /// y[i] = silu_f32(x[i]) * g[i] for i < n (y may be x or g).
    void (*swiglu)(float * y, const float * x, const float * g, int64_t n);
};

/// The active kernel set's exp kernels.
const exp_kernels & get_exp_kernels();

/// This kernel set's exp kernels (get_exp_kernels's source).
const exp_kernels & exp_kernels_table();

} // namespace gk::cpu
