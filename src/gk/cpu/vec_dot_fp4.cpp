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

#include <array>

namespace gk::cpu::detail {
namespace {

using quant::block_iq4_nl;
using quant::block_mxfp4;
using quant::block_nvfp4;
using quant::block_q8_0;

/// Codes -> codebook entries, 32 at a time.
template <const int8_t (&Values)[16]> struct codebook {
#if defined(GK_SIMD_X86)
    /// Entry codes[i] of the 16 bytes at `table`, in both 128-bit lanes.
    static __m256i lookup_in(const void * table, __m256i codes) {
        const __m128i t = _mm_loadu_si128(static_cast<const __m128i *>(table));
        return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(t), codes);
    }
    static __m256i lookup(__m256i codes) { return lookup_in(Values, codes); }
#elif defined(GK_SIMD_NEON)
    static int8x16x2_t lookup(uint8x16x2_t codes) {
        const int8x16_t t = vld1q_s8(Values);
        return {{vqtbl1q_s8(t, codes.val[0]), vqtbl1q_s8(t, codes.val[1])}};
    }
#endif
};

/// iq4_nl and mxfp4: 32 codes in q4_0's nibble order and one scale per block.
/// The largest |entry| of a codebook.
constexpr int max_abs(const int8_t (&values)[16]) {
    int m = 0;
    for (int8_t v : values) {
        m = v < -m ? -v : v > m ? v : m;
    }
    return m;
}

/// The smallest entry of a codebook.
constexpr int min_entry(const int8_t (&values)[16]) {
    int m = values[0];
    for (int8_t v : values) {
        m = v < m ? v : m;
    }
    return m;
}

/// A codebook shifted by -min_entry: every entry an unsigned byte (iq4_nl 0..240, E2M1
/// doubled 0..24).
template <const int8_t (&Values)[16]>
struct biased_codebook {
    static constexpr int                     bias    = -min_entry(Values);
    static constexpr std::array<uint8_t, 16> entries = [] {
        std::array<uint8_t, 16> e{};
        for (int i = 0; i < 16; ++i) {
            e[static_cast<size_t>(i)] = static_cast<uint8_t>(Values[i] + bias);
        }
        return e;
    }();
};

template <class W, const int8_t (&Values)[16]>
struct codebook32 : codebook<Values>, format_base<W, block_q8_0, QK8_0, QK8_0> {
    static constexpr int max_weight = max_abs(Values);
    static int value(const W & x, int j) { return Values[group_nibble(x.qs, QK8_0, j)]; }
#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)
    static auto unpack(const W * x, int64_t k) { return codebook<Values>::lookup(split_nibbles(x[k].qs)); }
#endif
#if defined(GK_SIMD_X86)
    /// The entries as unsigned codes (vec_dot_blocks.h's biased_codes): looked up in the
    /// codebook shifted by `bias`, value = code - bias.
    static __m256i codes(const W * x, int64_t k) {
        return codebook<Values>::lookup_in(biased_codebook<Values>::entries.data(), split_nibbles(x[k].qs));
    }
    static constexpr int bias = biased_codebook<Values>::bias;
#endif
};

struct iq4_nl_format : codebook32<block_iq4_nl, quant::k_iq4nl_values> {};

struct mxfp4_format : codebook32<block_mxfp4, quant::k_e2m1_doubled> {
    static float wscale(const weight * x, int64_t u) { return quant::e8m0_to_fp32_half(x[u].e); }
#if defined(GK_SIMD_X86)
    /// The four blocks' scales as e8m0_to_fp32_half forms them, in one vector: (e - 1) <<
    /// 23, or 0x00200000 << e for the subnormals of e = 0 and 1.
    static f32x4 wscales4(const weight * x) {
        const uint32_t e = x[0].e | static_cast<uint32_t>(x[1].e) << 8 | static_cast<uint32_t>(x[2].e) << 16 |
                           static_cast<uint32_t>(x[3].e) << 24;
        const __m128i v      = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(e)));
        const __m128i normal = _mm_slli_epi32(_mm_sub_epi32(v, _mm_set1_epi32(1)), 23);
        const __m128i tiny   = _mm_sllv_epi32(_mm_set1_epi32(0x00200000), v);
        return _mm_castsi128_ps(_mm_blendv_epi8(normal, tiny, _mm_cmpgt_epi32(_mm_set1_epi32(2), v)));
    }
#endif
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
    /// The four scales of block x: (code & 0x7F) << 7 is the f16 of the code's value / 256
    /// (the same field positions, bias 15 for 7, subnormals alike), so its f32 times 128
    /// is k_ue4m3_half[code] exactly; code 0x7F alone (not 0xFF) is zero. One vector chain
    /// instead of four table reads and three inserts.
    static f32x4 wscales4(const weight * x) {
        uint32_t codes;
        std::memcpy(&codes, x->d, sizeof codes);
        const __m128i w   = _mm_cvtepu8_epi16(_mm_cvtsi32_si128(static_cast<int>(codes)));
        const __m128i f16 = _mm_and_si128(_mm_slli_epi16(w, 7), _mm_set1_epi16(0x3F80));
        const __m128i h   = _mm_andnot_si128(_mm_cmpeq_epi16(w, _mm_set1_epi16(0x7F)), f16);
        return _mm_mul_ps(_mm_cvtph_ps(h), _mm_set1_ps(128.0f));
    }

    /// The integer sums of the block's four groups against activation blocks y[0], y[1],
    /// without bringing the codes into element order: the block's qwords (groups) taken
    /// as [g0, g2 | g1, g3], their low nibbles (elements 0-7 of each group) and high
    /// nibbles (8-15) meet the activations' qwords paired alike by unpacklo / unpackhi,
    /// the two products added as int16 (at most 4 x 12 x 127) and widened, or with VNNI
    /// both accumulated by VPDPBUSD, then reduced to the four groups. Both kernel sets;
    /// on the AVX-512 one (Zen 4) gk-bench 4096 x 14336 decode 0.94 -> 1.09 of ggml with
    /// this and wscales4 over the form with unpack and four table reads.
    static i32x4 isums4(const weight * x, const act * y) {
        const __m256i v   = _mm256_permute4x64_epi64(simd::x86::load256(x->qs), _MM_SHUFFLE(3, 1, 2, 0));
        const __m256i m   = _mm256_set1_epi8(0x0F);
        const __m256i wlo = lookup(_mm256_and_si256(v, m));
        const __m256i whi = lookup(_mm256_and_si256(_mm256_srli_epi16(v, 4), m));
        const __m256i a0  = simd::x86::load256(y[0].qs);
        const __m256i a1  = simd::x86::load256(y[1].qs);
        const __m256i alo = _mm256_unpacklo_epi64(a0, a1);  // elements [0-7, 32-39 | 16-23, 48-55]
        const __m256i ahi = _mm256_unpackhi_epi64(a0, a1);  // elements [8-15, 40-47 | 24-31, 56-63]
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
        const __m256i q = _mm256_dpbusd_epi32(
            _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(wlo), _mm256_sign_epi8(alo, wlo)),
            _mm256_abs_epi8(whi), _mm256_sign_epi8(ahi, whi));
#else
        const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(wlo), _mm256_sign_epi8(alo, wlo)),
                                           _mm256_maddubs_epi16(_mm256_abs_epi8(whi), _mm256_sign_epi8(ahi, whi)));
        const __m256i q = _mm256_madd_epi16(p, _mm256_set1_epi16(1));
#endif
        // q: the groups [0, 0, 2, 2 | 1, 1, 3, 3]
        const __m256i h = _mm256_hadd_epi32(q, q);  // [0, 2, 0, 2 | 1, 3, 1, 3]
        return _mm_unpacklo_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
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
