// vec_dot_bf16.cpp - the bf16 dot (bf16 weights against bf16 activations) in the order of
// x86's VDPBF16PS, on every CPU: the instruction where the host has AVX512-BF16, a
// fused multiply-add emulation of it elsewhere (on x86 with MXCSR's FTZ and DAZ doing the
// flushes, dot_mxcsr; in software otherwise), and the scalar twin that defines it.
//
// The order (vec_dot.h): the row is padded with zeros to a whole number of 32-element
// steps; pair p (elements 2p, 2p + 1) feeds chain (p / 16) % 4, lane p % 16, and updates
// it in two steps, the odd element first:
//     acc = ftz(fma(x[2p + 1], y[2p + 1], acc));  acc = ftz(fma(x[2p], y[2p], acc));
// with every bf16 input that is subnormal read as a zero of its sign (DAZ), and ftz() the
// flush of a tiny result to a zero of its sign, tininess detected after rounding: the
// result rounded to 24 bits with an unbounded exponent is below 2^-126. Then per lane
// (c0 + c1) + (c2 + c3) and the 16 lanes by halving, plain adds, as the float path ends.
//
// This is Intel's definition of VDPBF16PS (SDM: each product of two bf16 values is exact
// in f32, added with round to nearest even; denormal inputs and outputs flushed whatever
// MXCSR says). On the AMD Zen 4 of this project's machines the instruction gives these
// bits: 32 million random lanes (random exponents, subnormal inputs, cancellation against
// the accumulator) and the cases around 2^-126 that tell tininess before rounding from
// after it agreed with this file's twin, while the other pair order or one rounding per
// pair disagreed in about 1 lane in 10 (test-vec-dot keeps the edge cases).
//
// The fused multiply-add gives the instruction's result except where it lands exactly
// on +-2^-126: there the exact sum may lie below 2^-126 - 2^-151 (tiny: flushed) or not,
// which rounding to the subnormal grid hides. The twin settles it in double, where that
// sum is exact (the accumulator is a normal float or zero and the product has 16
// significant bits, so the sum spans fewer than 53 bits whenever it lies near 2^-126);
// the software emulation notes such a lane and leaves the row to the twin. x86's FTZ has
// no such case: it tests tininess on the 24-bit rounding itself, as the order does.
#include "cpu_features.h"
#include "vec_dot_impl.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

namespace gk::cpu::detail {
namespace {

constexpr int     kLanes  = float_lanes;   // pairs per step: the float path's lanes
constexpr int     kChains = float_chains;  // steps in flight: the float path's chains
constexpr int64_t kStep   = 2 * kLanes;    // elements per step
constexpr int64_t kRound  = kStep * kChains;

/// One update of the order: acc + x * y, rounded once, then flushed if tiny.
float bf16_update(float acc, float x, float y) {
    const float r = std::fma(x, y, acc);
    if (std::fabs(r) != simd::min_normal) {
        return simd::flush_tiny_scalar(r);
    }
    // +-2^-126: tiny when the exact sum rounds below 2^-126 at 24 bits, i.e. lies below
    // 2^-126 - 2^-151 (the tie rounds to even, 2^-126).
    const double exact = std::fma(static_cast<double>(x), static_cast<double>(y), static_cast<double>(acc));
    return std::fabs(exact) < 0x1p-126 - 0x1p-151 ? std::copysign(0.0f, r) : r;
}

/// Element i of a bf16 row as f32 with subnormals read as zero; 0 past the end.
float bf16_daz(const bf16_t * p, int64_t i, int64_t n) {
    return i < n ? simd::flush_tiny_scalar(bf16_to_fp32(p[i])) : 0.0f;
}

/// fma(a, b, c) rounded once on every level (the base set of a target without FMA
/// has one lane and takes the library's fma).
simd::vf fma_once(simd::vf a, simd::vf b, simd::vf c) {
#if defined(GK_SIMD_HAS_FMA)
    return simd::fmadd(a, b, c);
#else
    static_assert(simd::vf_lanes == 1, "a vector level without FMA");
    return std::fma(a, b, c);
#endif
}

constexpr int W = simd::vf_lanes;
constexpr int R = kLanes / W;  // registers per chain
static_assert(kLanes % W == 0, "a chain is a whole number of registers");

/// Where an update's flush happens: in software (simd::flush_tiny on every input and
/// result, lanes that land on +-2^-126 noted for the twin), or in the x86 FPU itself under
/// MXCSR's FTZ and DAZ (dot_mxcsr below), where a plain fused multiply-add is the update.
enum class flush { software, mxcsr };

/// The vector loop on the vector layer: chain c's 16 lanes in R registers, pairs from
/// load_bf16_pairs, the partial sums left in `lanes`. Returns false where a software
/// flush saw a lane land on +-2^-126 (the twin decides).
template <flush F>
bool dot_vector(int64_t n, const bf16_t * x, const bf16_t * y, float (&lanes)[kChains][kLanes]) {
    simd::vf a[kChains][R];
    for (auto & chain : a) {
        for (simd::vf & r : chain) {
            r = simd::zero();
        }
    }
    bool       edge = false;
    const auto step = [&](simd::vf & acc, const bf16_t * px, const bf16_t * py) {
        simd::vf xe, xo, ye, yo;
        simd::load_bf16_pairs(px, xe, xo);
        simd::load_bf16_pairs(py, ye, yo);
        if constexpr (F == flush::mxcsr) {
            acc = fma_once(xe, ye, fma_once(xo, yo, acc));
        } else {
            simd::vf r = fma_once(simd::flush_tiny(xo), simd::flush_tiny(yo), acc);
            edge       = edge || simd::has_min_normal(r);
            r          = fma_once(simd::flush_tiny(xe), simd::flush_tiny(ye), simd::flush_tiny(r));
            edge       = edge || simd::has_min_normal(r);
            acc        = simd::flush_tiny(r);
        }
    };
    int64_t i = 0;
    for (; i + kStep <= n; i += kStep) {
        const int c = static_cast<int>((i / kStep) % kChains);
        for (int r = 0; r < R; ++r) {
            step(a[c][r], x + i + 2 * W * r, y + i + 2 * W * r);
        }
    }
    if (i < n) {  // the last step, zero-padded
        bf16_t px[kStep] = {}, py[kStep] = {};
        std::memcpy(px, x + i, static_cast<size_t>(n - i) * sizeof(bf16_t));
        std::memcpy(py, y + i, static_cast<size_t>(n - i) * sizeof(bf16_t));
        const int c = static_cast<int>((i / kStep) % kChains);
        for (int r = 0; r < R; ++r) {
            step(a[c][r], px + 2 * W * r, py + 2 * W * r);
        }
    }
    for (int c = 0; c < kChains; ++c) {
        for (int r = 0; r < R; ++r) {
            simd::store(lanes[c] + r * W, a[c][r]);
        }
    }
    return !edge;
}

/// The emulation with the flush in software, on every level.
bool dot_emulated(int64_t n, const bf16_t * x, const bf16_t * y, float & out) {
    float      lanes[kChains][kLanes];
    const bool ok = dot_vector<flush::software>(n, x, y, lanes);
    out           = combine_chains(lanes);
    return ok;
}

#if defined(GK_SIMD_X86)
/// The emulation with the flush in the FPU: MXCSR set to round to nearest, every exception
/// masked, FTZ (bit 15) and DAZ (bit 6) for the updates, then restored before the chains
/// are combined with plain adds. DAZ reads a subnormal input as a zero of its sign, and
/// FTZ turns a tiny result into a zero of its sign with x86's tininess rule, detected after
/// rounding (the result rounded to 24 bits with an unbounded exponent below 2^-126) - the
/// order's own rule, so one fused multiply-add is one update, +-2^-126 included (the probe
/// in agrees_with_twin checks that on the host before the path is used). The two MXCSR
/// writes fence the loop: the first clobbers memory (the loads, and so every update, come
/// after it), the second takes the partial sums as an operand (the updates come before it,
/// the combination after).
/// gk-bench bf16 decode on an AVX2 Zen 3: 0.52 of ggml with the software flush.
__attribute__((noinline)) void dot_mxcsr(int64_t n, float * s, const void * vx, const void * vy) {
    constexpr uint32_t ftz_daz = 0x1F80u | 0x8000u | 0x0040u;
    uint32_t           saved;
    float              lanes[kChains][kLanes];
    asm volatile("stmxcsr %0" : "=m"(saved)::"memory");
    asm volatile("ldmxcsr %0" ::"m"(ftz_daz) : "memory");
    dot_vector<flush::mxcsr>(n, static_cast<const bf16_t *>(vx), static_cast<const bf16_t *>(vy), lanes);
    asm volatile("ldmxcsr %1" : "+m"(lanes) : "m"(saved) : "memory");  // lanes: written before, read after
    *s = combine_chains(lanes);
}
#endif

#if defined(GK_SIMD_AVX512)
/// The instruction itself (AVX512-BF16): one VDPBF16PS per step, the padded last step
/// from masked loads, which read zeros past the end.
__attribute__((target("avx512bf16"))) void dot_dp(int64_t n, float * s, const void * vx, const void * vy) {
    const bf16_t * x = static_cast<const bf16_t *>(vx);
    const bf16_t * y = static_cast<const bf16_t *>(vy);
    __m512         a[kChains];
    for (__m512 & r : a) {
        r = _mm512_setzero_ps();
    }
    const auto dp = [](__m512 acc, __m512i u, __m512i v) __attribute__((target("avx512bf16"))) {
        return _mm512_dpbf16_ps(acc, (__m512bh)u, (__m512bh)v);
    };
    int64_t i = 0;
    for (; i + kRound <= n; i += kRound) {
        for (int c = 0; c < kChains; ++c) {
            a[c] = dp(a[c], _mm512_loadu_si512(x + i + c * kStep), _mm512_loadu_si512(y + i + c * kStep));
        }
    }
    for (; i < n; i += kStep) {
        const int64_t   left = n - i;
        const __mmask32 mask = left >= kStep ? ~__mmask32(0) : static_cast<__mmask32>((1ull << left) - 1);
        const int       c    = static_cast<int>((i / kStep) % kChains);
        a[c]                 = dp(a[c], _mm512_maskz_loadu_epi16(mask, x + i), _mm512_maskz_loadu_epi16(mask, y + i));
    }
    *s = simd::reduce_add(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])));
}
#endif

}  // namespace

void vec_dot_bf16_scalar(int64_t n, float * s, const void * vx, const void * vy) {
    const bf16_t * x                  = static_cast<const bf16_t *>(vx);
    const bf16_t * y                  = static_cast<const bf16_t *>(vy);
    float          a[kChains][kLanes] = {};
    const int64_t  pairs              = (n + kStep - 1) / kStep * kLanes;
    for (int64_t p = 0; p < pairs; ++p) {
        float & acc = a[(p / kLanes) % kChains][p % kLanes];
        acc         = bf16_update(acc, bf16_daz(x, 2 * p + 1, n), bf16_daz(y, 2 * p + 1, n));
        acc         = bf16_update(acc, bf16_daz(x, 2 * p, n), bf16_daz(y, 2 * p, n));
    }
    *s = combine_chains(a);
}

#if defined(GK_SIMD_X86)
namespace {

/// Whether `dot` gives the twin's bits on this host: the rows that tell tininess after
/// rounding from before it (2^-126 - 2^-151 is kept, 2^-126 - 2^-150 flushed), then 384
/// rows of 1 to 160 elements (partial steps, every chain) of random bf16 bits in three
/// bands: every exponent with subnormals, exponents near 1 (cancellation, ties), and near
/// 2^-63 (products near 2^-126, where the flush decides). VDPBF16PS and x86's FTZ / DAZ
/// are the definition on the CPUs checked so far; this keeps a CPU where either differs
/// on the software emulation instead of off the order.
bool agrees_with_twin(vec_dot_fn dot) {
    const auto same = [dot](int n, const bf16_t * x, const bf16_t * y) {
        float a, b;
        dot(n, &a, x, y);
        vec_dot_bf16_scalar(n, &b, x, y);
        return std::memcmp(&a, &b, sizeof a) == 0;
    };
    // pair 0: odd 2^-63 * 2^-63 = 2^-126, then even 2^-75 * -(2^-76 or 2^-75)
    const bf16_t edge_x[2]    = {0x1A00, 0x2000};
    const bf16_t edge_y[2][2] = {{0x9980, 0x2000}, {0x9A00, 0x2000}};
    if (!same(2, edge_x, edge_y[0]) || !same(2, edge_x, edge_y[1])) {
        return false;
    }
    uint64_t   state = 0x9E3779B97F4A7C15ull;
    const auto next  = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return static_cast<uint32_t>(state >> 11);
    };
    bf16_t x[160], y[160];
    for (int trial = 0; trial < 384; ++trial) {
        const int      n    = 1 + trial % 160;
        const uint32_t low  = trial % 3 == 0 ? 0u : trial % 3 == 1 ? 121u : 58u;
        const uint32_t band = trial % 3 == 0 ? 255u : 12u;
        for (bf16_t * row : {x, y}) {
            for (int i = 0; i < n; ++i) {
                const uint32_t e = low + next() % band;  // 0: a zero or a subnormal; never 255
                row[i]           = static_cast<bf16_t>((next() & 0x8000u) | (e << 7) | (next() & 0x7Fu));
            }
        }
        if (!same(n, x, y)) {
            return false;
        }
    }
    return true;
}

}  // namespace
#endif

void vec_dot_bf16(int64_t n, float * s, const void * x, const void * y) {
#if defined(GK_SIMD_X86)
    static const bool mxcsr_usable = agrees_with_twin(dot_mxcsr);
    if (mxcsr_usable) {
        dot_mxcsr(n, s, x, y);
        return;
    }
#endif
    if (!dot_emulated(n, static_cast<const bf16_t *>(x), static_cast<const bf16_t *>(y), *s)) {
        vec_dot_bf16_scalar(n, s, x, y);
    }
}

vec_dot_fn bf16_instruction_dot() {
#if defined(GK_SIMD_AVX512)
    static const bool usable = host_cpu().avx512bf16 && agrees_with_twin(dot_dp);
    if (usable) {
        return dot_dp;
    }
#endif
    return nullptr;
}

}  // namespace gk::cpu::detail
