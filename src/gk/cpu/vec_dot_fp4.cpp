// vec_dot_fp4.cpp - integer dots of the 4-bit codebook formats (fp4.h) against q8_0
// activations: iq4_nl, mxfp4 and nvfp4, each a vector kernel and its scalar twin in the
// shape of vec_dot_blocks.h. A code's integer is its codebook entry: k_iq4nl_values, or
// k_e2m1_doubled (E2M1 doubled, so the scales are taken at half their value, as ggml does),
// looked up 16 at a time by a byte shuffle (pshufb / TBL).
//
// Per unit, all exact in int32: isum = sum of codebook entry * activation quant. Then
//   iq4_nl (32 elements): d = f32(weight d) * f32(activation d), exact;
//   mxfp4  (32 elements): d = e8m0_to_fp32_half(e) * f32(activation d);
//   nvfp4  (units of 16, four per block, two per activation block):
//                         d = ue4m3_to_fp32_half(d[s]) * f32(activation d);
// and chain u % 4 += d * float(isum) with one fused multiply-add (an nvfp4 block's four
// sub-blocks are exactly one chain each); the dot is (c0 + c1) + (c2 + c3).
#include "vec_dot_blocks.h"
#include "vec_dot_tile_blocks.h"

#include "quant/fp4.h"

namespace gk::cpu::detail {
namespace {

using quant::block_iq4_nl;
using quant::block_mxfp4;
using quant::block_nvfp4;
using quant::block_q8_0;

/// Codes -> codebook entries, 32 at a time.
template <const int8_t (&Values)[16]> struct codebook {
#if defined(GK_SIMD_X86)
    static __m256i lookup(__m256i codes) {
        const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i *>(Values));
        return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(t), codes);
    }
#elif defined(GK_SIMD_NEON)
    static int8x16x2_t lookup(uint8x16x2_t codes) {
        const int8x16_t t = vld1q_s8(Values);
        return {{vqtbl1q_s8(t, codes.val[0]), vqtbl1q_s8(t, codes.val[1])}};
    }
#endif
};

/// iq4_nl and mxfp4: 32 codes in q4_0's nibble order and one scale per block.
template <class W, const int8_t (&Values)[16]>
struct codebook32 : codebook<Values>, format_base<W, block_q8_0, QK8_0, QK8_0> {
    static int value(const W & x, int j) { return Values[group_nibble(x.qs, QK8_0, j)]; }
#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)
    static auto unpack(const W * x, int64_t k) { return codebook<Values>::lookup(split_nibbles(x[k].qs)); }
#endif
};

struct iq4_nl_format : codebook32<block_iq4_nl, quant::k_iq4nl_values> {};

struct mxfp4_format : codebook32<block_mxfp4, quant::k_e2m1_doubled> {
    static float wscale(const weight * x, int64_t u) { return quant::e8m0_to_fp32_half(x[u].e); }
};

/// nvfp4: four groups of 16 codes per block, group s in qs[8s .. 8s + 7] (low nibbles
/// first), each with its UE4M3 scale d[s].
struct nvfp4_format : codebook<quant::k_e2m1_doubled>,
                      format_base<block_nvfp4, block_q8_0, quant::QK_NVFP4, quant::QK_NVFP4_SUB> {
    static int value(const weight & x, int j) {
        return quant::k_e2m1_doubled[group_nibble(x.qs + unit / 2 * (j / unit), unit, j % unit)];
    }
    static float wscale(const weight * x, int64_t u) { return quant::k_ue4m3_half[x[u / 4].d[u % 4]]; }

#if defined(GK_SIMD_X86)
    /// Activation block k meets groups 2k and 2k + 1, the 8-byte halves g0, g1 of the 16
    /// bytes qs[16 (k % 2) ..]: the quarters [g0, g0 >> 4, g1, g1 >> 4] masked to nibbles
    /// are the two groups' codes in element order.
    static __m256i unpack(const weight * x, int64_t k) {
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x[k / 2].qs + 16 * (k % 2)));
        const __m256i g = _mm256_permute4x64_epi64(_mm256_castsi128_si256(q), _MM_SHUFFLE(1, 1, 0, 0));
        const __m256i codes =
            _mm256_and_si256(_mm256_srlv_epi64(g, _mm256_setr_epi64x(0, 4, 0, 4)), _mm256_set1_epi8(0x0F));
        return lookup(codes);
    }
#elif defined(GK_SIMD_NEON)
    static int8x16x2_t unpack(const weight * x, int64_t k) {
        const uint8x16x2_t q  = split_nibbles(x[k / 2].qs + 16 * (k % 2));
        const uint64x2_t   lo = vreinterpretq_u64_u8(q.val[0]);
        const uint64x2_t   hi = vreinterpretq_u64_u8(q.val[1]);
        return lookup({{vreinterpretq_u8_u64(vzip1q_u64(lo, hi)), vreinterpretq_u8_u64(vzip2q_u64(lo, hi))}});
    }
#endif
};

} // namespace

GK_DEFINE_BLOCK_DOT(vec_dot_iq4_nl_q8_0, iq4_nl_format)
GK_DEFINE_BLOCK_DOT(vec_dot_mxfp4_q8_0, mxfp4_format)
GK_DEFINE_BLOCK_DOT(vec_dot_nvfp4_q8_0, nvfp4_format)

GK_DEFINE_BLOCK_TILE(tile_iq4_nl, iq4_nl_format)
GK_DEFINE_BLOCK_TILE(tile_mxfp4, mxfp4_format)
GK_DEFINE_BLOCK_TILE(tile_nvfp4, nvfp4_format)

} // namespace gk::cpu::detail
