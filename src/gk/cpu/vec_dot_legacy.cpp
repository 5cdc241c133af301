// vec_dot_legacy.cpp - integer dots of the 32-element formats against q8_0 activations:
// q8_0 . q8_0 and q4_0 . q8_0, each a vector kernel and its scalar twin.
//
// Per block b (32 elements): isum = sum of weight quant * activation quant, exact in
// int32; d = f32(weight d) * f32(activation d), exact (two f16 significands); chain b % 4
// += d * float(isum) with one fused multiply-add; the dot is (c0 + c1) + (c2 + c3). The
// vector kernels do four blocks at a time, one per chain, in the four lanes of a register.
#include "vec_dot_impl.h"

#include "quant/legacy.h"
#include "simd_neon.h"
#include "simd_x86.h"

namespace gk::cpu::detail {
namespace {

using quant::block_q4_0;
using quant::block_q8_0;
using quant::QK8_0;

int32_t block_isum(const block_q8_0 & x, const block_q8_0 & y) {
    int32_t s = 0;
    for (int j = 0; j < QK8_0; ++j) {
        s += static_cast<int32_t>(x.qs[j]) * y.qs[j];
    }
    return s;
}

int32_t block_isum(const block_q4_0 & x, const block_q8_0 & y) {
    int32_t s = 0;
    for (int j = 0; j < QK8_0 / 2; ++j) {
        s += ((x.qs[j] & 0xF) - 8) * static_cast<int32_t>(y.qs[j]);
        s += ((x.qs[j] >> 4) - 8) * static_cast<int32_t>(y.qs[j + QK8_0 / 2]);
    }
    return s;
}

template <class Block> float block_scale(const Block & x, const block_q8_0 & y) {
    return simd::half_to_float(x.d) * simd::half_to_float(y.d);
}

template <class Block> void dot_scalar(int64_t n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const block_q8_0 *>(vy);
    block_chains ch;
    for (int64_t b = 0; b < n / QK8_0; ++b) {
        ch.add(b, block_scale(x[b], y[b]), static_cast<float>(block_isum(x[b], y[b])));
    }
    *s = ch.sum();
}

// Each vector level supplies: chains4 (the four chains in one register) with
// chains4_zero / chains4_store, step4 (four blocks, one per chain: exact integer sums,
// exact scale products, one fused multiply-add per lane) and isum_vec (one block's
// integer sum, for the last n/32 % 4 blocks).
#if defined(GK_SIMD_X86)

using namespace simd::x86;
using chains4 = __m128;

/// The block's 32 products, summed in fours (8 int32 lanes). The activation quants are
/// never -128 (the q8_0 encoder's range is -127..127).
__m256i block_products(const block_q8_0 & x, const block_q8_0 & y) {
    return dot_s8s8(load256(x.qs), load256(y.qs));
}

__m256i block_products(const block_q4_0 & x, const block_q8_0 & y) {
    const __m128i q   = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.qs));
    const __m256i nib = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0F));
    return dot_s8s8(_mm256_sub_epi8(nib, _mm256_set1_epi8(8)), load256(y.qs));
}

/// The f16 scales d of four consecutive blocks as f32.
template <class Block> __m128 scales4(const Block * x) {
    const __m128i h = _mm_setr_epi16(static_cast<short>(x[0].d), static_cast<short>(x[1].d),
                                     static_cast<short>(x[2].d), static_cast<short>(x[3].d), 0, 0, 0, 0);
    return _mm_cvtph_ps(h);
}

chains4 chains4_zero() { return _mm_setzero_ps(); }
void chains4_store(float * c, chains4 v) { _mm_storeu_ps(c, v); }

template <class Block> chains4 step4(chains4 acc, const Block * x, const block_q8_0 * y) {
    const __m128i isum = hsum4_i32(block_products(x[0], y[0]), block_products(x[1], y[1]),
                                   block_products(x[2], y[2]), block_products(x[3], y[3]));
    return _mm_fmadd_ps(_mm_mul_ps(scales4(x), scales4(y)), _mm_cvtepi32_ps(isum), acc);
}

template <class Block> int32_t isum_vec(const Block & x, const block_q8_0 & y) {
    return hsum_i32(block_products(x, y));
}

#elif defined(GK_SIMD_NEON)

using namespace simd::neon;
using chains4 = float32x4_t;

/// The block's 32 products, summed into 4 int32 lanes.
int32x4_t block_products(const block_q8_0 & x, const block_q8_0 & y) {
    const int32x4_t p = dot_s8(vdupq_n_s32(0), load_s8(x.qs), load_s8(y.qs));
    return dot_s8(p, load_s8(x.qs + 16), load_s8(y.qs + 16));
}

int32x4_t block_products(const block_q4_0 & x, const block_q8_0 & y) {
    const uint8x16_t q   = load_u8(x.qs);
    const int8x16_t  lo  = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F))), vdupq_n_s8(8));
    const int8x16_t  hi  = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), vdupq_n_s8(8));
    const int32x4_t  p   = dot_s8(vdupq_n_s32(0), lo, load_s8(y.qs));
    return dot_s8(p, hi, load_s8(y.qs + 16));
}

template <class Block> float32x4_t scales4(const Block * x) {
    const uint16_t h[4] = {x[0].d, x[1].d, x[2].d, x[3].d};
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
}

chains4 chains4_zero() { return vdupq_n_f32(0.0f); }
void chains4_store(float * c, chains4 v) { vst1q_f32(c, v); }

template <class Block> chains4 step4(chains4 acc, const Block * x, const block_q8_0 * y) {
    const int32x4_t isum = hsum4_i32(block_products(x[0], y[0]), block_products(x[1], y[1]),
                                     block_products(x[2], y[2]), block_products(x[3], y[3]));
    return vfmaq_f32(acc, vmulq_f32(scales4(x), scales4(y)), vcvtq_f32_s32(isum));
}

template <class Block> int32_t isum_vec(const Block & x, const block_q8_0 & y) {
    return vaddvq_s32(block_products(x, y));
}

#endif

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)

template <class Block> void dot_simd(int64_t n, float * s, const void * vx, const void * vy) {
    const auto *  x   = static_cast<const Block *>(vx);
    const auto *  y   = static_cast<const block_q8_0 *>(vy);
    const int64_t nb  = n / QK8_0;
    chains4       acc = chains4_zero();  // lane c = chain c
    int64_t       b   = 0;
    for (; b + 4 <= nb; b += 4) {
        acc = step4(acc, x + b, y + b);
    }
    block_chains ch;
    chains4_store(ch.c, acc);
    for (; b < nb; ++b) {
        ch.add(b, block_scale(x[b], y[b]), static_cast<float>(isum_vec(x[b], y[b])));
    }
    *s = ch.sum();
}

template <class Block> constexpr vec_dot_fn fast_dot = dot_simd<Block>;
#else
template <class Block> constexpr vec_dot_fn fast_dot = dot_scalar<Block>;
#endif

} // namespace

void vec_dot_q8_0_q8_0(int64_t n, float * s, const void * x, const void * y) { fast_dot<block_q8_0>(n, s, x, y); }
void vec_dot_q8_0_q8_0_scalar(int64_t n, float * s, const void * x, const void * y) {
    dot_scalar<block_q8_0>(n, s, x, y);
}
void vec_dot_q4_0_q8_0(int64_t n, float * s, const void * x, const void * y) { fast_dot<block_q4_0>(n, s, x, y); }
void vec_dot_q4_0_q8_0_scalar(int64_t n, float * s, const void * x, const void * y) {
    dot_scalar<block_q4_0>(n, s, x, y);
}

} // namespace gk::cpu::detail
