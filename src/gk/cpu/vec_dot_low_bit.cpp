// vec_dot_low_bit.cpp - integer dots of the one- and two-bit formats q1_0 and q2_0
// (low_bit.h) against q8_0 activations, each a vector kernel and its scalar twin in the
// shape of vec_dot_blocks.h.
//
// A weight block spans several activation blocks (q1_0: 128 elements = 4, q2_0: 64 = 2);
// the unit is the activation block. Per unit u: isum = sum of weight integer * activation
// quant, exact in int32, the weight integers being q1_0: +1 (bit set) or -1, q2_0: q - 1
// (-1..2); d = f32(weight d) * f32(activation d), exact (two f16 significands); chain
// u % 4 += d * float(isum) with one fused multiply-add; the dot is (c0 + c1) + (c2 + c3).
// (ggml sums d_a * isum over a weight block before multiplying by d_w; the products here
// are the same, formed per unit as the integer path's order asks.)
#include "vec_dot_blocks.h"
#include "vec_dot_tile_blocks.h"

#include "quant/low_bit.h"

namespace gk::cpu::detail {
namespace {

using quant::block_q1_0;
using quant::block_q2_0;
using quant::block_q8_0;

/// q1_0: one bit per element, element j at bit j % 8 of qs[j / 8].
struct q1_0_format : format_base<block_q1_0, block_q8_0, quant::QK1_0, QK8_0> {
    static constexpr int max_weight = 1;
    static int value(const weight & x, int j) { return bit_of(x.qs, j) ? 1 : -1; }

#if defined(GK_SIMD_X86)
    /// clear | 1: -1 where the bit is clear, +1 where it is set.
    static __m256i unpack(const weight * x, int64_t k) {
        return _mm256_or_si256(bit_clear_bytes(x[k / 4].qs + 4 * (k % 4)), _mm256_set1_epi8(1));
    }
#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
    /// Activation blocks y[0], y[1] against 64 weight bits, two blocks per 512-bit
    /// register: with byte masks the bits are the masks themselves, the activation bytes
    /// negated where the bit is clear (0 - a: never -128, so exact), summed in fours by
    /// VPDPBUSD. 128-bit lanes [y0 lo, y0 hi, y1 lo, y1 hi], four int32 each.
    static __m512i pair_sums(uint64_t bits, const act * y) {
        const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(simd::x86::load256(y[0].qs)),
                                             simd::x86::load256(y[1].qs), 1);
        const __m512i s = _mm512_mask_sub_epi8(a, _cvtu64_mask64(~bits), _mm512_setzero_si512(), a);
        return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), s);
    }
    /// The pair sums of blocks 0, 1 (s01) and 2, 3 (s23) folded once: 128-bit lane i of
    /// the result holds four partial sums of activation block i.
    static __m512i fold_pairs(__m512i s01, __m512i s23) {
        return _mm512_add_epi32(_mm512_shuffle_i64x2(s01, s23, _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm512_shuffle_i64x2(s01, s23, _MM_SHUFFLE(3, 1, 3, 1)));
    }
    /// The four unit sums of a step (one weight block): pair_sums of its two halves, then
    /// the 16 + 16 lanes reduced to the four blocks. gk-bench 4096 x 14336 decode (Zen 4):
    /// 0.80 of ggml with unpack, 0.96 with one 256-bit masked negation per activation
    /// block, 0.98 with 512-bit pairs (half the instructions before the reduction).
    static i32x4 isums4(const weight * x, const act * y) {
        uint64_t bits[2];
        std::memcpy(bits, x->qs, sizeof bits);
        __m512i p           = fold_pairs(pair_sums(bits[0], y), pair_sums(bits[1], y + 2));
        p                   = _mm512_add_epi32(p, _mm512_shuffle_epi32(p, _MM_PERM_BADC));
        p                   = _mm512_add_epi32(p, _mm512_shuffle_epi32(p, _MM_PERM_CDAB));
        const __m512i first = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        return _mm512_castsi512_si128(_mm512_permutexvar_epi32(first, p));
    }
    /// isums4 of two rows, their lanes reduced together: after the fold, one interleave
    /// (lanes [r0 0 + r0 2, r1 0 + r1 2, r0 1 + r0 3, r1 1 + r1 3] per block) and one
    /// swap-and-add leave both rows' sums in each 128-bit lane, and one permutation takes
    /// them out. The same exact int32 sums, 9 shuffles for 8 sums instead of 10.
    static i32x4x2 isums4x2(const weight * x0, const weight * x1, const act * y) {
        uint64_t b0[2], b1[2];
        std::memcpy(b0, x0->qs, sizeof b0);
        std::memcpy(b1, x1->qs, sizeof b1);
        const __m512i t0   = fold_pairs(pair_sums(b0[0], y), pair_sums(b0[1], y + 2));
        const __m512i t1   = fold_pairs(pair_sums(b1[0], y), pair_sums(b1[1], y + 2));
        __m512i       u    = _mm512_add_epi32(_mm512_unpacklo_epi32(t0, t1), _mm512_unpackhi_epi32(t0, t1));
        u                  = _mm512_add_epi32(u, _mm512_shuffle_epi32(u, _MM_PERM_BADC));
        const __m512i take = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
        const __m256i r    = _mm512_castsi512_si256(_mm512_permutexvar_epi32(take, u));
        return {_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)};
    }
#else
    /// The four unit sums of a step (one weight block): w is +-1, so each activation block's
    /// bytes are negated where the bit is clear ((a ^ m) - m with the byte mask m: never
    /// -128, so exact), summed in pairs (at most 2 x 127 in magnitude) and the four reduced
    /// as int16 (hsum4_i16). The block's 128 bits are loaded once into both lanes, and
    /// activation block k spreads its 32 from bytes 4k .. 4k + 3. gk-bench 4096 x 14336
    /// decode on an AVX2 Zen 3: 0.77 -> 0.81 of ggml with the int16 reduction, -> 0.86 with
    /// the negation by XOR / SUB instead of OR 1 and VPSIGNB, -> 0.92 with one load of the
    /// bits per block instead of one broadcast per activation block.
    static i32x4 isums4(const weight * x, const act * y) {
        const __m256i bits = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x->qs)));
        __m256i       p[4];
        for (int k = 0; k < 4; ++k) {
            const __m256i clear = bit_clear_bytes(bits, 4 * k);
            const __m256i a     = simd::x86::load256(y[k].qs);
            p[k] = _mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_sub_epi8(_mm256_xor_si256(a, clear), clear));
        }
        return hsum4_i16(p[0], p[1], p[2], p[3]);
    }
#endif
#elif defined(GK_SIMD_NEON)
    /// 1 | ~set: +1 where the bit is set, -1 where it is clear.
    static int8x16x2_t unpack(const weight * x, int64_t k) {
        const uint8x16x2_t set = bit_set_bytes(x[k / 4].qs + 4 * (k % 4));
        return {{vreinterpretq_s8_u8(vornq_u8(vdupq_n_u8(1), set.val[0])),
                 vreinterpretq_s8_u8(vornq_u8(vdupq_n_u8(1), set.val[1]))}};
    }
#endif
};

/// q2_0: two bits per element, element j at bits 2 (j % 4) of qs[j / 4].
struct q2_0_format : format_base<block_q2_0, block_q8_0, quant::QK2_0, QK8_0> {
    static constexpr int max_weight = 2;
    static int value(const weight & x, int j) { return ((x.qs[j / 4] >> (2 * (j % 4))) & 3) - 1; }

#if defined(GK_SIMD_X86)
    /// The 8 bytes b0..b7 meeting activation block k: 128-bit lane L takes b4L..b4L+3 into
    /// each of its four 32-bit words, word r shifts right by 2r (byte m of word r is then
    /// element 16L + 4m + r), and an in-lane 4 x 4 byte transpose restores element order.
    static __m256i unpack(const weight * x, int64_t k) {
        uint64_t bytes;
        std::memcpy(&bytes, x[k / 2].qs + 8 * (k % 2), sizeof bytes);
        const __m256i spread = _mm256_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3,  //
                                                4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);
        const __m256i transpose = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                                                   0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        const __m256i words = _mm256_shuffle_epi8(_mm256_set1_epi64x(static_cast<int64_t>(bytes)), spread);
        const __m256i q     = _mm256_and_si256(_mm256_srlv_epi32(words, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)),
                                               _mm256_set1_epi8(3));
        return _mm256_sub_epi8(_mm256_shuffle_epi8(q, transpose), _mm256_set1_epi8(1));
    }
#elif defined(GK_SIMD_NEON)
    /// Byte i of each half takes its source byte (i / 4) and shifts it right by 2 (i % 4).
    static int8x16x2_t unpack(const weight * x, int64_t k) {
        const uint8x8_t  b8       = vld1_u8(x[k / 2].qs + 8 * (k % 2));
        const uint8x16_t b        = vcombine_u8(b8, b8);
        const uint8_t    src[16]  = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
        const int8_t     shift[16] = {0, -2, -4, -6, 0, -2, -4, -6, 0, -2, -4, -6, 0, -2, -4, -6};
        const uint8x16_t idx      = vld1q_u8(src);
        const int8x16_t  sh       = vld1q_s8(shift);
        int8x16x2_t      w;
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t q = vshlq_u8(vqtbl1q_u8(b, vaddq_u8(idx, vdupq_n_u8(static_cast<uint8_t>(4 * h)))), sh);
            w.val[h]           = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(3))), vdupq_n_s8(1));
        }
        return w;
    }
#endif
};

} // namespace

GK_DEFINE_BLOCK_DOT(vec_dot_q1_0_q8_0, q1_0_format)
GK_DEFINE_BLOCK_DOT(vec_dot_q2_0_q8_0, q2_0_format)

GK_DEFINE_BLOCK_TILE(tile_q1_0, q1_0_format)
GK_DEFINE_BLOCK_TILE(tile_q2_0, q2_0_format)

} // namespace gk::cpu::detail
