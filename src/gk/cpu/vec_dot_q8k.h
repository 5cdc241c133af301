// vec_dot_q8k.h - what the super-block dots against q8_K activations in vec_dot_k_low.cpp,
// vec_dot_iq4_xs.cpp and vec_dot_ternary.cpp share: the integer sums of a super-block, the
// float step and row loop that fold them into the chains (vec_dot.h), the scalar form of a
// super-block that the twins dot, and the per-ISA pieces of the vector kernels.
//
// A kernel splits into "unpack the weight super-block" and "dot the unpacked quants with an
// activation block": the scalar twins unpack to signed bytes and integer scales per group
// of 16 (unpacked_sb) and dot that; the vector kernels read their weights through a small
// view whose quants(k) / scale(k) give vector k already unpacked, and scaled_dot() is the
// dot. Internal to src/gk/cpu/vec_dot*.cpp.
#pragma once

#include "vec_dot_blocks.h"  // the f32x4 pieces of the four-chain step
#include "vec_dot_impl.h"
#include "vec_dot_tile_rows.h"  // the AVX2 tile the including files define

#include "quant/k_quants.h"
#include "simd_neon.h"
#include "simd_x86.h"

#include <cstdint>

namespace gk::cpu::detail {

/// The exact integer sums of one super-block against its q8_K block: isum, the scaled
/// products; isum_min, the min-weighted activation sums (q2_K; 0 for the others).
struct q8k_sums {
    int32_t isum     = 0;
    int32_t isum_min = 0;
};

/// A weight super-block unpacked for the scalar twins: q[i], the integer level element i
/// decodes to before its scales; sc[g] and m[g], the integer scale and min of the group of
/// 16 elements g (formats without scales: 1; without mins: 0).
struct unpacked_sb {
    int8_t  q[quant::QK_K];
    int16_t sc[quant::QK_K / 16];
    int16_t m[quant::QK_K / 16];
};

/// isum = sum over groups g of sc[g] * (sum of q[i] * a[i] over g); isum_min = sum over g
/// of m[g] * (sum of a[i] over g), summed from the quants.
inline q8k_sums dot_unpacked(const unpacked_sb & w, const quant::block_q8_K & y) {
    q8k_sums r;
    for (int g = 0; g < quant::QK_K / 16; ++g) {
        int32_t dot = 0, asum = 0;
        for (int i = 16 * g; i < 16 * g + 16; ++i) {
            dot += w.q[i] * static_cast<int32_t>(y.qs[i]);
            asum += y.qs[i];
        }
        r.isum += w.sc[g] * dot;
        r.isum_min += w.m[g] * asum;
    }
    return r;
}

/// The 2-bit fields of q2_K / q3_K / tq2_0 quants: element 128h + 32j + l sits at bits
/// 2j of qs[32h + l].
inline void unpack_crumbs(const uint8_t * qs, int8_t * q) {
    for (int h = 0; h < 2; ++h) {
        for (int j = 0; j < 4; ++j) {
            for (int l = 0; l < 32; ++l) {
                q[128 * h + 32 * j + l] = static_cast<int8_t>((qs[32 * h + l] >> (2 * j)) & 3);
            }
        }
    }
}

/// The twins' sums: unpack, then dot_unpacked.
template <class Block, unpacked_sb (*unpack)(const Block &)>
q8k_sums twin_sums(const Block & x, const quant::block_q8_K & y) {
    return dot_unpacked(unpack(x), y);
}

template <class Block> constexpr bool has_dmin = requires(const Block & x) { x.dmin; };

/// Super-block b's float step: chain b % 4 += d * isum with d = f32(weight d) * activation
/// d; a format with a dmin then adds -(f32(weight dmin) * activation d) * isum_min on the
/// same chain (ggml's float step, in the order of vec_dot.h).
template <class Block>
void q8k_step(block_chains & ch, int64_t b, const Block & x, const quant::block_q8_K & y, const q8k_sums & r) {
    ch.add(b, simd::half_to_float(x.d) * y.d, static_cast<float>(r.isum));
    if constexpr (has_dmin<Block>) {
        ch.add(b, -(simd::half_to_float(x.dmin) * y.d), static_cast<float>(r.isum_min));
    }
}

/// A whole row given the per-super-block integer sums `sums(x, y)`: the twins.
template <class Block, q8k_sums (*sums)(const Block &, const quant::block_q8_K &)>
void q8k_dot(int64_t n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const quant::block_q8_K *>(vy);
    block_chains ch;
    for (int64_t b = 0; b < n / quant::QK_K; ++b) {
        q8k_step(ch, b, x[b], y[b], sums(x[b], y[b]));
    }
    *s = ch.sum();
}

#if defined(GK_SIMD_X86)

// x86: vector k of a super-block is elements 32k .. 32k + 31; its low 128-bit lane is
// group 2k, its high lane group 2k + 1. A view W gives quants(k) (bytes; unsigned unless
// W::signed_quants) and scale(k) (the int16 scale of each byte pair of vector k).

/// A byte shuffle that broadcasts int16 word k of each 128-bit lane across that lane.
inline __m256i lane_word(__m256i v, int k) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16(static_cast<short>(((2 * k + 1) << 8) | (2 * k))));
}

/// 16 scale bytes (group g at byte g, signed where `is_signed`) as int16 with the even
/// groups in the low lane and the odd ones in the high lane: lane_word(v, k) is then
/// the scale vector k needs.
inline __m256i scales_even_odd(__m128i bytes, bool is_signed) {
    const __m128i eo = _mm_shuffle_epi8(bytes, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    return is_signed ? _mm256_cvtepi8_epi16(eo) : _mm256_cvtepu8_epi16(eo);
}

/// Bits 2j .. 2j + 1 of each of the 32 bytes at qs[32 * (k / 4)], j = k % 4: vector k of
/// the 2-bit fields of q2_K, q3_K and tq2_0 (element 128h + 32j + l at bits 2j of
/// qs[32h + l]).
inline __m256i crumbs(const uint8_t * qs, int k) {
    return _mm256_and_si256(_mm256_srli_epi16(simd::x86::load256(qs + 32 * (k / 4)), 2 * (k % 4)),
                            _mm256_set1_epi8(3));
}

/// Sum over the 8 vectors k of a super-block of the products of w.quants(k) with the
/// activation quants a[32k ..], each byte pair scaled by w.scale(k): 8 int32 lanes.
/// Exact: every pair sum fits int16 (unsigned quants up to 7; signed ones never -128,
/// taken through |a|, so a = -128 is exact).
template <class W> __m256i scaled_dot(const W & w, const int8_t * a) {
    using namespace simd::x86;
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int k = 0; k < 8; ++k) {  // four accumulators: VPDPWSSD's latency is not one chain
        const __m256i q = w.quants(k);
        const __m256i y = load256(a + 32 * k);
        if constexpr (W::signed_quants) {
            acc[k % 4] = acc_u8s8_scaled(acc[k % 4], _mm256_sign_epi8(y, y), _mm256_sign_epi8(q, y), w.scale(k));
        } else {
            acc[k % 4] = acc_u8s8_scaled(acc[k % 4], q, y, w.scale(k));
        }
    }
    return _mm256_add_epi32(_mm256_add_epi32(acc[0], acc[1]), _mm256_add_epi32(acc[2], acc[3]));
}

/// sum over the 16 groups g of f[g] * bsums[g], f the int16 words of `factors` in group
/// order: 8 int32 lanes.
inline __m256i bsums_dot(__m256i factors, const quant::block_q8_K & y) {
    return _mm256_madd_epi16(factors, simd::x86::load256(y.bsums));
}

#elif defined(GK_SIMD_NEON)

// NEON: register g of a super-block is the group of 16 elements 16g .. 16g + 15. A view W
// gives quants(g) (bytes, read as signed by SDOT) and scales4(i) (the int32 scales of
// groups 4i .. 4i + 3).

/// 16 scale bytes (group g at byte g) minus `offset`, widened: h[0] / h[1] hold groups
/// 0..7 / 8..15 as int16, v[i] groups 4i .. 4i + 3 as int32.
struct scales16 {
    int16x8_t h[2];
    int32x4_t v[4];
};
inline scales16 widen_scales(uint8x16_t bytes, int offset) {
    const int16x8_t off = vdupq_n_s16(static_cast<int16_t>(offset));
    const int16x8_t lo  = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(bytes))), off);
    const int16x8_t hi  = vsubq_s16(vreinterpretq_s16_u16(vmovl_high_u8(bytes)), off);
    return {{lo, hi},
            {vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo), vmovl_s16(vget_low_s16(hi)), vmovl_high_s16(hi)}};
}

/// Bits 2j .. 2j + 1 of each of the 16 bytes at qs[32 * (g / 8) + 16 * (g % 2)], j =
/// (g % 8) / 2: group g of the 2-bit fields of q2_K, q3_K and tq2_0 (vshlq by a negative
/// count shifts right).
inline uint8x16_t crumbs(const uint8_t * qs, int g) {
    const uint8x16_t v = simd::neon::load_u8(qs + 32 * (g / 8) + 16 * (g % 2));
    return vandq_u8(vshlq_u8(v, vdupq_n_s8(static_cast<int8_t>(-2 * ((g % 8) / 2)))), vdupq_n_u8(3));
}

/// Sum over the 16 groups g of w.scales4(g / 4) lane g % 4 times the products of
/// w.quants(g) with the activation quants a[16g ..]: 4 int32 lanes. Exact.
template <class W> int32x4_t scaled_dot(const W & w, const int8_t * a) {
    using namespace simd::neon;
    int32x4_t acc = vdupq_n_s32(0);
    for (int i = 0; i < 4; ++i) {
        int32x4_t p[4];
        for (int t = 0; t < 4; ++t) {
            const int g = 4 * i + t;
            p[t]        = dot_s8(vdupq_n_s32(0), vreinterpretq_s8_u8(w.quants(g)), load_s8(a + 16 * g));
        }
        acc = vmlaq_s32(acc, hsum4_i32(p[0], p[1], p[2], p[3]), w.scales4(i));
    }
    return acc;
}

/// sum over the 16 groups g of f[g] * bsums[g], f = the int16 scales16::h of a format: 4
/// int32 lanes.
inline int32x4_t bsums_dot(const int16x8_t (&f)[2], const quant::block_q8_K & y) {
    const int16x8_t b_lo = vld1q_s16(y.bsums);
    const int16x8_t b_hi = vld1q_s16(y.bsums + 8);
    int32x4_t       acc  = vmull_s16(vget_low_s16(f[0]), vget_low_s16(b_lo));
    acc                  = vmlal_high_s16(acc, f[0], b_lo);
    acc                  = vmlal_s16(acc, vget_low_s16(f[1]), vget_low_s16(b_hi));
    return vmlal_high_s16(acc, f[1], b_hi);
}

#endif

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)

// ---- the vector row loop ------------------------------------------------------------------

#if defined(GK_SIMD_X86)
using i32v = __m256i;  // a super-block's integer sums, spread over the lanes
inline i32v  i32v_zero() { return _mm256_setzero_si256(); }
inline int32_t i32v_sum(i32v v) { return simd::x86::hsum_i32(v); }
inline i32x4 i32v_sum4(i32v a, i32v b, i32v c, i32v d) { return simd::x86::hsum4_i32(a, b, c, d); }
inline f32x4 neg4(f32x4 v) { return _mm_xor_ps(v, _mm_set1_ps(-0.0f)); }
#else
using i32v = int32x4_t;
inline i32v  i32v_zero() { return vdupq_n_s32(0); }
inline int32_t i32v_sum(i32v v) { return vaddvq_s32(v); }
inline i32x4 i32v_sum4(i32v a, i32v b, i32v c, i32v d) { return simd::neon::hsum4_i32(a, b, c, d); }
inline f32x4 neg4(f32x4 v) { return vnegq_f32(v); }
#endif

/// A super-block's sums before the horizontal add: the lane totals are its q8k_sums.
struct q8k_vsums {
    i32v isum;
    i32v isum_min;
};

/// The row loop of the vector dots against q8_K (these and the i-quants'): super-blocks four
/// at a time, lane c of one register holding chain c. sums(b) gives super-block b's integer
/// sums (R, before the horizontal add); step(acc, b, r) folds blocks b .. b + 3 into acc's
/// four lanes with the float operations of four scalar steps; tail(ch, b, r) folds the last
/// nb % 4 one by one. Returns the chains' sum. sums has one call site (a step's blocks are
/// summed before the step knows whether it is whole), so that it is inlined: with a second
/// one for the tail GCC 12 kept it out of line and q4_K fell to 0.53 of ggml.
template <class R, class Sums, class Step, class Tail>
[[gnu::always_inline]] inline float four_block_rows(int64_t nb, Sums && sums, Step && step, Tail && tail) {
    f32x4   acc = f32x4_zero();
    R       r[4];
    int64_t b = 0;
    for (; b < nb; b += 4) {
        const int64_t m = nb - b < 4 ? nb - b : 4;
        for (int64_t c = 0; c < m; ++c) {
            r[c] = sums(b + c);
        }
        if (m < 4) {
            break;
        }
        acc = step(acc, b, r);
    }
    block_chains ch;
    f32x4_store(ch.c, acc);
    for (int64_t c = 0; c < nb % 4; ++c) {
        tail(ch, b + c, r[c]);
    }
    return ch.sum();
}

/// A whole row given the per-super-block sums `vsums(x, y)` (four_block_rows): per step
/// the d and dmin of four super-blocks at once, then q8k_step for the last n / 256 % 4.
template <class Block, q8k_vsums (*vsums)(const Block &, const quant::block_q8_K &)>
void q8k_dot_simd(int64_t n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const quant::block_q8_K *>(vy);
    *s             = four_block_rows<q8k_vsums>(
        n / quant::QK_K, [&](int64_t b) { return vsums(x[b], y[b]); },
        [&](f32x4 acc, int64_t b, const q8k_vsums(&r)[4]) {
            const f32x4 ad = floats4(y[b].d, y[b + 1].d, y[b + 2].d, y[b + 3].d);
            const f32x4 d  = mul4(halves4(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d), ad);
            acc            = fma4(d, to_f32x4(i32v_sum4(r[0].isum, r[1].isum, r[2].isum, r[3].isum)), acc);
            if constexpr (has_dmin<Block>) {
                const f32x4 dmin = mul4(halves4(x[b].dmin, x[b + 1].dmin, x[b + 2].dmin, x[b + 3].dmin), ad);
                acc = fma4(neg4(dmin), to_f32x4(i32v_sum4(r[0].isum_min, r[1].isum_min, r[2].isum_min, r[3].isum_min)),
                                       acc);
            }
            return acc;
        },
        [&](block_chains & ch, int64_t b, const q8k_vsums & r) {
            q8k_step(ch, b, x[b], y[b], {i32v_sum(r.isum), i32v_sum(r.isum_min)});
        });
}

#endif

/// Defines kernel `name` for Block and its twin name##_scalar, from the overloads the
/// including file defines: sums_simd(Block, q8_K) -> q8k_vsums (vector builds) and
/// unpack(Block) -> unpacked_sb. A build without a vector variant runs the twin.
#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)
#define GK_Q8K_FAST_DOT(Block) q8k_dot_simd<Block, sums_simd>
#else
#define GK_Q8K_FAST_DOT(Block) q8k_dot<Block, twin_sums<Block, unpack>>
#endif
#define GK_DEFINE_Q8K_DOT(name, Block)                                                                   \
    void name(int64_t n, float * s, const void * x, const void * y) { GK_Q8K_FAST_DOT(Block)(n, s, x, y); } \
    void name##_scalar(int64_t n, float * s, const void * x, const void * y) {                           \
        q8k_dot<Block, twin_sums<Block, unpack>>(n, s, x, y);                                             \
    }

} // namespace gk::cpu::detail
