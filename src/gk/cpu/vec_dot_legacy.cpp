// vec_dot_legacy.cpp - integer dots of the legacy 32-element formats (legacy.h): q4_0,
// q5_0, q8_0 against q8_0 activations and q4_1, q5_1, q8_1 against q8_1, each a vector
// kernel and its scalar twin in the shape of vec_dot_blocks.h.
//
// Per block b (32 elements): isum = sum of weight integer * activation quant, exact in
// int32, the weight integers being q4_0: q - 8, q5_0: q - 16, q4_1 / q5_1: q (0..15 /
// 0..31), q8_0 / q8_1: q; d = f32(weight d) * f32(activation d), exact (two f16
// significands); chain b % 4 += d * float(isum) with one fused multiply-add. q4_1 and
// q5_1 then add their offset as ggml does, chain b % 4 += f32(weight m) * f32(activation
// s), s being the q8_1 block's stored d * sum(qs); q8_1 . q8_1 has no offset term. The dot
// is (c0 + c1) + (c2 + c3). The vector kernels do four blocks at a time, one per chain.
#include "vec_dot_blocks.h"
#include "vec_dot_tile_blocks.h"

namespace gk::cpu::detail {
namespace {

using quant::block_q4_0;
using quant::block_q4_1;
using quant::block_q5_0;
using quant::block_q5_1;
using quant::block_q8_0;
using quant::block_q8_1;

/// q8_0 / q8_1 weights: the stored quants.
template <class W> struct q8_format : format_base<W, W, QK8_0, QK8_0> {
    static int value(const W & x, int j) { return x.qs[j]; }
#if defined(GK_SIMD_X86)
    static __m256i unpack(const W * x, int64_t k) { return simd::x86::load256(x[k].qs); }
#elif defined(GK_SIMD_NEON)
    static int8x16x2_t unpack(const W * x, int64_t k) {
        return {{simd::neon::load_s8(x[k].qs), simd::neon::load_s8(x[k].qs + 16)}};
    }
#endif
};

/// q4_* / q5_* weights: a nibble, for q5 with the fifth bit of qh above it, minus Offset
/// (8 for q4_0, 16 for q5_0, none for the formats with a stored offset m).
template <class W, class A, int Offset> struct nibble_format : format_base<W, A, QK8_0, QK8_0, Offset == 0> {
    static constexpr bool five_bit   = requires(const W & b) { b.qh; };
    static constexpr int  max_code   = five_bit ? 31 : 15;
    static constexpr int  max_weight = Offset > max_code - Offset ? Offset : max_code - Offset;
    static_assert(!five_bit || Offset == 0 || Offset == 16, "q5_0 folds its offset into the fifth bit");

    static int value(const W & x, int j) {
        int q = group_nibble(x.qs, QK8_0, j);
        if constexpr (five_bit) {
            q |= bit_of(x.qh, j) << 4;
        }
        return q - Offset;
    }

#if defined(GK_SIMD_X86)
#if defined(__AVX512BW__) && defined(__AVX512VL__)
    /// The unsigned codes: the nibble, for q5 with 16 added where the fifth bit is set (qh
    /// the mask of one byte add); value = code - Offset. q4_0 / q5_0 dot them on VNNI
    /// (vec_dot_blocks.h's biased_codes); they are q4_1's / q5_1's unpacked bytes.
    static __m256i codes(const W * x, int64_t k) {
        const __m256i q = split_nibbles(x[k].qs);
        if constexpr (five_bit) {
            uint32_t bits;
            std::memcpy(&bits, x[k].qh, sizeof bits);
            return _mm256_mask_add_epi8(q, _cvtu32_mask32(bits), q, _mm256_set1_epi8(16));
        } else {
            return q;
        }
    }
    static constexpr int bias = Offset;
#endif
    /// q5: the fifth bit adds 16 where set; q5_0 instead adds 0xF0 (-16) where it is clear.
    /// With byte masks (AVX-512) the 32 bits of qh are the mask of a byte subtract or add.
    static __m256i unpack(const W * x, int64_t k) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
        if constexpr (five_bit && Offset == 0) {
            return codes(x, k);
        } else if constexpr (five_bit) {
            uint32_t bits;
            std::memcpy(&bits, x[k].qh, sizeof bits);
            const __m256i q = split_nibbles(x[k].qs);
            return _mm256_mask_sub_epi8(q, _cvtu32_mask32(~bits), q, _mm256_set1_epi8(16));
        }
#endif
        const __m256i q = split_nibbles(x[k].qs);
        if constexpr (five_bit) {
            const __m256i clear = bit_clear_bytes(x[k].qh);
            return _mm256_or_si256(q, Offset != 0 ? _mm256_and_si256(clear, _mm256_set1_epi8(-16))
                                                  : _mm256_andnot_si256(clear, _mm256_set1_epi8(0x10)));
        } else {
            return Offset != 0 ? _mm256_sub_epi8(q, _mm256_set1_epi8(Offset)) : q;
        }
    }
#elif defined(GK_SIMD_NEON)
    static int8x16x2_t unpack(const W * x, int64_t k) {
        uint8x16x2_t q = split_nibbles(x[k].qs);
        if constexpr (five_bit) {
            const uint8x16x2_t set = bit_set_bytes(x[k].qh);
            for (int h = 0; h < 2; ++h) {
                q.val[h] = vorrq_u8(q.val[h], Offset != 0 ? vbicq_u8(vdupq_n_u8(0xF0), set.val[h])
                                                          : vandq_u8(set.val[h], vdupq_n_u8(0x10)));
            }
        } else if constexpr (Offset != 0) {
            for (int h = 0; h < 2; ++h) {
                q.val[h] = vsubq_u8(q.val[h], vdupq_n_u8(Offset));
            }
        }
        return {{vreinterpretq_s8_u8(q.val[0]), vreinterpretq_s8_u8(q.val[1])}};
    }
#endif
};

using q8_0_format = q8_format<block_q8_0>;
using q8_1_format = q8_format<block_q8_1>;
using q4_0_format = nibble_format<block_q4_0, block_q8_0, 8>;
using q4_1_format = nibble_format<block_q4_1, block_q8_1, 0>;
using q5_0_format = nibble_format<block_q5_0, block_q8_0, 16>;
using q5_1_format = nibble_format<block_q5_1, block_q8_1, 0>;

} // namespace

GK_DEFINE_BLOCK_DOT(vec_dot_q8_0_q8_0, q8_0_format)
GK_DEFINE_BLOCK_DOT(vec_dot_q8_1_q8_1, q8_1_format)
GK_DEFINE_BLOCK_DOT(vec_dot_q4_0_q8_0, q4_0_format)
GK_DEFINE_BLOCK_DOT(vec_dot_q4_1_q8_1, q4_1_format)
GK_DEFINE_BLOCK_DOT(vec_dot_q5_0_q8_0, q5_0_format)
GK_DEFINE_BLOCK_DOT(vec_dot_q5_1_q8_1, q5_1_format)

GK_DEFINE_BLOCK_TILE(tile_q8_0, q8_0_format)
GK_DEFINE_BLOCK_TILE(tile_q8_1, q8_1_format)
GK_DEFINE_BLOCK_TILE(tile_q4_0, q4_0_format)
GK_DEFINE_BLOCK_TILE(tile_q4_1, q4_1_format)
GK_DEFINE_BLOCK_TILE(tile_q5_0, q5_0_format)
GK_DEFINE_BLOCK_TILE(tile_q5_1, q5_1_format)

} // namespace gk::cpu::detail
