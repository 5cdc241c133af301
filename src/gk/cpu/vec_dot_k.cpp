// vec_dot_k.cpp - integer dots of the K-quants against q8_K activations: q4_K, q5_K and
// q6_K, each a vector kernel and its scalar twin, and their tile kernels (AVX-512 VNNI,
// vec_dot_tile_q8k.h: the stored values as unsigned bytes through the x86 kernels' decoding,
// q6_K with offset 32).
//
// Per super-block b (256 elements), all in exact int32:
//   q4_K, q5_K: isum = sum over sub-blocks j of sc_j * (sum of q * a over the 32
//               elements of j), isum_min = sum over j of m_j * (sum of a over j);
//   q6_K:       isum = sum over groups g of sc_g * (sum of (q - 32) * a over the 16
//               elements of g).
// Then d = f32(weight d) * activation d and chain b % 4 += d * float(isum) (fused);
// q4_K / q5_K also chain b % 4 += -(f32(weight dmin) * activation d) * float(isum_min).
// The dot is (c0 + c1) + (c2 + c3).
//
// The scalar twins compute the sums of a from the activation quants; the vector kernels
// take them from q8_K's bsums, which the activation converter writes (vec_dot.h).
#include "vec_dot_impl.h"
#include "vec_dot_q8k.h"
#include "vec_dot_tile_q8k.h"

#include "quant/k_quants.h"
#include "simd_neon.h"
#include "simd_x86.h"

#include <bit>
#include <cstring>

namespace gk::cpu::detail {

/// unpack_scale_min_k4 for all eight sub-blocks at once, four bytes per 32-bit word
/// (the test sweeps it against the codec's helper). Bytes 0-3 and 4-7 hold sc and m of
/// sub-blocks 0-3 in their low 6 bits and the top 2 bits of 4-7 in their top 2 bits;
/// bytes 8-11 hold the low 4 bits of sc (low nibble) and m (high nibble) of 4-7.
k4_scales unpack_k4_all(const uint8_t * packed) {
    static_assert(std::endian::native == std::endian::little, "byte j of a word is sub-block j");
    uint32_t w[3];
    std::memcpy(w, packed, sizeof w);
    const uint32_t sc_lo = w[0] & 0x3F3F3F3Fu;
    const uint32_t m_lo  = w[1] & 0x3F3F3F3Fu;
    const uint32_t sc_hi = (w[2] & 0x0F0F0F0Fu) | ((w[0] >> 2) & 0x30303030u);
    const uint32_t m_hi  = ((w[2] >> 4) & 0x0F0F0F0Fu) | ((w[1] >> 2) & 0x30303030u);
    return {sc_lo | static_cast<uint64_t>(sc_hi) << 32, m_lo | static_cast<uint64_t>(m_hi) << 32};
}

namespace {

using quant::block_q4_K;
using quant::block_q5_K;
using quant::block_q6_K;
using quant::block_q8_K;
using quant::QK_K;
using quant::unpack_scale_min_k4;

/// Quant of element 32 * j + l of a q4_K / q5_K super-block (sub-block j, l < 32).
int quant_of(const block_q4_K & x, int j, int l) {
    const uint8_t byte = x.qs[32 * (j / 2) + l];
    return j % 2 ? byte >> 4 : byte & 0xF;
}
int quant_of(const block_q5_K & x, int j, int l) {
    const uint8_t byte = x.qs[32 * (j / 2) + l];
    const int     low  = j % 2 ? byte >> 4 : byte & 0xF;
    return low | (((x.qh[l] >> j) & 1) << 4);
}

template <class Block> q8k_sums sums_scalar(const Block & x, const block_q8_K & y) {
    q8k_sums r;
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        unpack_scale_min_k4(j, x.scales, sc, m);
        int32_t dot = 0, asum = 0;
        for (int l = 0; l < 32; ++l) {
            dot += quant_of(x, j, l) * static_cast<int32_t>(y.qs[32 * j + l]);
            asum += y.qs[32 * j + l];
        }
        r.isum += sc * dot;
        r.isum_min += m * asum;
    }
    return r;
}

q8k_sums sums_scalar(const block_q6_K & x, const block_q8_K & y) {
    q8k_sums r;
    for (int h = 0; h < 2; ++h) {
        const uint8_t * ql = x.ql + 64 * h;
        const uint8_t * qh = x.qh + 32 * h;
        for (int l = 0; l < 32; ++l) {
            // the four elements 128h + 32k + l, k = 0..3, as in block_q6_K's comment
            const int q[4] = {(ql[l] & 0xF) | ((qh[l] & 3) << 4), (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4),
                              (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4), (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)};
            for (int k = 0; k < 4; ++k) {
                const int e = 128 * h + 32 * k + l;
                r.isum += x.scales[e / 16] * (q[k] - 32) * static_cast<int32_t>(y.qs[e]);
            }
        }
    }
    return r;
}

#if defined(GK_SIMD_X86)

using namespace simd::x86;

/// A byte shuffle that broadcasts int16 word k of each 128-bit lane across that lane.
inline __m256i word_broadcast(__m256i v, int k) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16(static_cast<short>(((2 * k + 1) << 8) | (2 * k))));
}

/// q4_K / q5_K: the stored values of sub-blocks 2c (lo) and 2c + 1 (hi), 32 each: the low
/// and high nibbles of qs[32c ..], q5_K adding bits 2c and 2c + 1 of qh[l] as fifth bits.
template <class Block> void q45_values(const Block & x, int c, __m256i & lo, __m256i & hi) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i q    = load256(x.qs + 32 * c);
    lo                 = _mm256_and_si256(q, low4);
    hi                 = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
    if constexpr (requires { x.qh; }) {
        // bit j of qh moved to bit 4 (a 16-bit shift by 4 - j; what crosses a byte is masked off)
        const __m256i qh    = load256(x.qh);
        const __m256i bit4  = _mm256_set1_epi8(0x10);
        const auto    to_b4 = [&](int j) {
            return _mm256_and_si256(j <= 4 ? _mm256_slli_epi16(qh, 4 - j) : _mm256_srli_epi16(qh, j - 4), bit4);
        };
        lo = _mm256_or_si256(lo, to_b4(2 * c));
        hi = _mm256_or_si256(hi, to_b4(2 * c + 1));
    }
}

/// unpack_k4_all in one 128-bit register: byte j of the result is sc_j, byte 8 + j is m_j
/// (j < 8), from the 12 packed bytes (the 16 bytes at `packed` are read; those past the
/// twelfth, a block's first quants, do not matter).
inline __m128i k4_scales_bytes(const uint8_t * packed) {
    const __m128i v  = _mm_loadu_si128(reinterpret_cast<const __m128i *>(packed));
    const __m128i a  = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m128i hi = _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    const __m128i m1 = _mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0);
    const __m128i m2 = _mm_setr_epi32(0, 0, 0, 0x0F0F0F0F);
    const __m128i m3 = _mm_setr_epi32(0, 0x30303030, 0, 0x30303030);
    // low 6 bits of bytes 0-3 and 4-7; low (sc) or high (m) nibbles of bytes 8-11 with the
    // top 2 bits of bytes 0-3 / 4-7 above them
    return _mm_or_si128(_mm_or_si128(_mm_and_si128(a, m1), _mm_and_si128(_mm_srli_epi16(a, 4), m2)),
                        _mm_and_si128(_mm_srli_epi16(hi, 2), m3));
}

/// The 16 words m_0, m_0, m_1, m_1, .., m_7, m_7 (the weights of the bsums in isum_min)
/// from sm, k4_scales_bytes in both lanes.
inline __m256i k4_min_words(__m256i sm) {
    return _mm256_shuffle_epi8(sm, _mm256_setr_epi8(8, -1, 8, -1, 9, -1, 9, -1, 10, -1, 10, -1, 11, -1, 11, -1, 12, -1,
                                                    12, -1, 13, -1, 13, -1, 14, -1, 14, -1, 15, -1, 15, -1));
}

/// sc_k as the 16 words of both lanes, from sm as above.
inline __m256i k4_scale_words(__m256i sm, int k) {
    return _mm256_shuffle_epi8(sm, _mm256_set1_epi16(static_cast<short>(0xFF00 | k)));
}

/// q4_K / q5_K: 64 elements per step (sub-blocks 2c and 2c + 1). The scales and mins stay
/// in registers, one byte each in both lanes of `sm`: a byte shuffle widens sc_k to the
/// words of the byte pairs of sub-block k; the mins, each doubled, meet the 16 bsums.
template <class Block> q8k_vsums sums_q45(const Block & x, const block_q8_K & y) {
    const __m256i sm    = _mm256_broadcastsi128_si256(k4_scales_bytes(x.scales));
    const __m256i mins  = _mm256_madd_epi16(k4_min_words(sm), load256(y.bsums));
    const auto    scale = [&](int k) { return k4_scale_words(sm, k); };

    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int c = 0; c < 4; ++c) {  // four accumulators: VPDPWSSD's latency is not one chain
        __m256i lo, hi;
        q45_values(x, c, lo, hi);
        acc[2 * (c % 2)]     = acc_u8s8_scaled(acc[2 * (c % 2)], lo, load256(y.qs + 64 * c), scale(2 * c));
        acc[2 * (c % 2) + 1] = acc_u8s8_scaled(acc[2 * (c % 2) + 1], hi, load256(y.qs + 64 * c + 32), scale(2 * c + 1));
    }
    return {_mm256_add_epi32(_mm256_add_epi32(acc[0], acc[1]), _mm256_add_epi32(acc[2], acc[3])), mins};
}

q8k_vsums sums_simd(const block_q4_K & x, const block_q8_K & y) { return sums_q45(x, y); }
q8k_vsums sums_simd(const block_q5_K & x, const block_q8_K & y) { return sums_q45(x, y); }

#if defined(GK_SIMD_AVX2)
/// The AVX2 tile's q4_K / q5_K rows (vec_dot_tile_rows.h), unpacked as sums_q45 does: the
/// stored values unsigned (maddubs takes them directly: 2 x 31 x 128 fits int16), sc_k as
/// words, the doubled mins against the bsums. Against the twins' unpacking (this tile's
/// first form) at 4096 x 1024 x 512 on an AVX2 Zen 3: q4_K 0.74 -> 0.85, q5_K 0.77 ->
/// 0.91 of ggml.
template <class Block>
struct q45_rows : rows_policy<Block, bsums_term::mins, false> {
    using row = typename rows_policy<Block, bsums_term::mins, false>::row;
    static constexpr int max_q       = std::is_same_v<Block, block_q5_K> ? 31 : 15;  // the lane form's bounds
    static constexpr int group_steps = 8;                                               // 32 elements a scale
    static void unpack(const Block & x, row & r, float & d, float & dmin) {
        const __m256i sm = _mm256_broadcastsi128_si256(k4_scales_bytes(x.scales));
        for (int c = 0; c < QK_K / 64; ++c) {
            q45_values(x, c, r.q[2 * c], r.q[2 * c + 1]);
        }
        for (int k = 0; k < QK_K / 32; ++k) {
            r.scale[k] = k4_scale_words(sm, k);
        }
        r.m  = k4_min_words(sm);
        d    = simd::half_to_float(x.d);
        dmin = simd::half_to_float(x.dmin);
    }
};
#endif

/// q6_K: the stored values (0..63) of elements 128h + 32k .. 128h + 32k + 31 in v[k].
inline void q6k_values(const block_q6_K & x, int h, __m256i (&v)[4]) {
    // the 2-bit fields of qh at bits 0, 2, 4, 6 to bits 4-5: left by 4, 2, by 0, right by 2
    // (16-bit shifts; what crosses a byte is masked off)
    const __m256i low4   = _mm256_set1_epi8(0x0F);
    const __m256i bits45 = _mm256_set1_epi8(0x30);
    const __m256i l0     = load256(x.ql + 64 * h);
    const __m256i l1     = load256(x.ql + 64 * h + 32);
    const __m256i qh     = load256(x.qh + 32 * h);
    v[0] = _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45));
    v[1] = _mm256_or_si256(_mm256_and_si256(l1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45));
    v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4), _mm256_and_si256(qh, bits45));
    v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                           _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45));
}

#if defined(GK_SIMD_AVX2)
/// The AVX2 tile's q6_K rows (vec_dot_tile_rows.h) from q6k_values: the stored values
/// unsigned (2 x 63 x 128 fits int16), the signed group scales as words, and the -32 as
/// 32 sc_g against bsums[g] in the isum itself (q6_K has no dmin). Against the twin's
/// unpacking (this tile's first form) at 4096 x 1024 x 512 on an AVX2 Zen 3, four runs
/// each, loaded: 0.94-0.99 -> 0.99-1.08 of ggml (one run of the new form at 0.68).
struct q6k_rows : rows_policy<block_q6_K, bsums_term::offset, false> {
    static constexpr int max_q       = 63;  // the lane form's bounds
    static constexpr int group_steps = 4;   // 16 elements a scale
    static void unpack(const block_q6_K & x, row & r, float & d, float &) {
        for (int h = 0; h < 2; ++h) {
            __m256i v[4];
            q6k_values(x, h, v);
            for (int k = 0; k < 4; ++k) {
                r.q[4 * h + k] = v[k];
            }
        }
        const __m128i s8 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales));
        const __m256i sc = scales_even_odd(s8, true);
        for (int k = 0; k < QK_K / 32; ++k) {
            r.scale[k] = lane_word(sc, k);
        }
        r.m = _mm256_slli_epi16(_mm256_cvtepi8_epi16(s8), 5);
        d   = simd::half_to_float(x.d);
    }
};
#endif

/// q6_K: each 32-byte vector of stored values (0..63) spans two groups of 16, g and
/// g + 1 with g even. The scales are widened once with the even groups in the low lane
/// and the odd ones in the high lane, so one in-lane broadcast gives exactly that
/// pairing. The -32 comes out as 32 * sum over g of sc_g * bsums[g].
q8k_vsums sums_simd(const block_q6_K & x, const block_q8_K & y) {
    const __m128i s8      = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales));
    const __m256i offset  = _mm256_madd_epi16(_mm256_cvtepi8_epi16(s8), load256(y.bsums));

#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
    // Per half h, two registers of 64 elements: 128h .. 128h + 63 (v[0] | v[1] of
    // q6k_values) and 128h + 64 .. 128h + 127 (v[2] | v[3]); word w of the first meets group
    // 8h + w / 8, of the second 8h + 4 + w / 8 (vpermw from the 16 widened scales), through
    // VPDPWSSD into two accumulators (0.92 -> 0.95 of ggml against madd + add, kernel
    // microbenchmark).
    // Measured on Zen 4 (CPU time against ggml's q6_K dot, gk-bench 4096 x 14336 x 1):
    // 0.97 against 0.93 for the 256-bit form below. The same pairing for q4_K / q5_K
    // (one register per two sub-blocks) was slower there - 0.85 / 0.94 against 0.93 /
    // 1.12 - so they keep the 256-bit form.
    const __m512i sc16   = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(s8));
    const __m512i low4   = _mm512_set1_epi8(0x0F);
    const __m512i bits45 = _mm512_set1_epi8(0x30);
    // the 2-bit fields of qh at bits 0, 2 (v[0], v[1]) and 4, 6 (v[2], v[3]) to bits 4-5:
    // left by 4, 2 and right by 0, 2 (16-bit shifts; what crosses a byte is masked off)
    const __m512i s01    = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i s23    = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    const __m512i group  = _mm512_setr_epi64(0, 0, 0x0001000100010001, 0x0001000100010001, 0x0002000200020002,
                                             0x0002000200020002, 0x0003000300030003, 0x0003000300030003);  // w / 8
    __m512i       acc01  = _mm512_setzero_si512();  // VPDPWSSD (AVX-512 VNNI) scales and adds
    __m512i       acc23  = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
        const __m512i l  = _mm512_loadu_si512(x.ql + 64 * h);
        const __m512i qh = _mm512_broadcast_i64x4(load256(x.qh + 32 * h));
        const __m512i v01 =
            _mm512_or_si512(_mm512_and_si512(l, low4), _mm512_and_si512(_mm512_sllv_epi16(qh, s01), bits45));
        const __m512i v23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), low4),
                                            _mm512_and_si512(_mm512_srlv_epi16(qh, s23), bits45));
        const __m512i g01 = _mm512_add_epi16(group, _mm512_set1_epi16(static_cast<short>(8 * h)));
        const __m512i g23 = _mm512_add_epi16(g01, _mm512_set1_epi16(4));
        acc01 = _mm512_dpwssd_epi32(acc01, _mm512_maddubs_epi16(v01, _mm512_loadu_si512(y.qs + 128 * h)),
                                    _mm512_permutexvar_epi16(g01, sc16));
        acc23 = _mm512_dpwssd_epi32(acc23, _mm512_maddubs_epi16(v23, _mm512_loadu_si512(y.qs + 128 * h + 64)),
                                    _mm512_permutexvar_epi16(g23, sc16));
    }
    const __m512i acc512 = _mm512_add_epi32(acc01, acc23);
    const __m256i acc    = _mm256_add_epi32(_mm512_castsi512_si256(acc512), _mm512_extracti64x4_epi64(acc512, 1));
#else
    const __m128i evenodd = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    const __m256i sc_eo   = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(s8, evenodd));
    __m256i       acc     = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
        __m256i v[4];
        q6k_values(x, h, v);
        for (int k = 0; k < 4; ++k) {
            acc = acc_u8s8_scaled(acc, v[k], load256(y.qs + 128 * h + 32 * k), word_broadcast(sc_eo, 4 * h + k));
        }
    }
#endif
    return {_mm256_sub_epi32(acc, _mm256_slli_epi32(offset, 5)), _mm256_setzero_si256()};
}

#if defined(GK_TILE_AVX512)

// ---- the tile kernels (vec_dot_tile_q8k.h) --------------------------------------------------

/// q4_K / q5_K: u = the stored value, 8 groups of 32 with scales sc_j, and the mins m_j as
/// the weight of both sums of 16 of sub-block j.
template <class Block> struct k45_tile : q8k_tile_format<Block, 8, 0, true> {
    static constexpr int planes     = 2;  // sc < 64, u < 32: u * (3-bit digit) < 256 (q8k_tile_format)
    static constexpr int digit_bits = 3;
    static void unpack(const Block & x, q8k_tile_row & r) {
        r.set_quants([&](int k) {  // sub-block k: the low (k even) or high nibbles of qs[32 (k / 2) ..]
            __m256i lo, hi;
            q45_values(x, k / 2, lo, hi);
            return k % 2 ? hi : lo;
        });
        const k4_scales sm = unpack_k4_all(x.scales);
        const __m128i   m8 = _mm_cvtsi64_si128(static_cast<int64_t>(sm.m));
        r.set_scales(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(sm.sc))));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(r.mw), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8)));
        r.set_d(x);
    }
};

/// q6_K: u = the stored value (0..63) with offset 32, 16 groups with the signed scales.
struct q6k_tile : q8k_tile_format<block_q6_K, 16, 32> {
    static constexpr int planes     = 4;  // sc in [-128, 127], u - 32 in [-32, 31]: digits 0..3 and -2..1
    static constexpr int digit_bits = 2;
    static void unpack(const block_q6_K & x, q8k_tile_row & r) {
        r.set_quants([&](int k) {  // elements 32k ..: vector k % 4 of half k / 4
            __m256i v[4];
            q6k_values(x, k / 4, v);
            return v[k % 4];
        });
        r.set_scales(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales))));
        r.set_d(x);
    }
};

#endif

#elif defined(GK_SIMD_NEON)

using namespace simd::neon;

/// Byte j of a packed k4_scales field.
int k4_byte(uint64_t v, int j) { return static_cast<int>((v >> (8 * j)) & 0xFF); }

/// q4_K / q5_K: sub-blocks 2c and 2c + 1 from the 32 bytes qs[32c ..], 16 at a time;
/// `high(c, lo, hi)` adds the fifth bits of q5_K (nothing for q4_K). Each sub-block's
/// products land in 4 int32 lanes and are scaled there by its sc.
template <class Block, class High> q8k_vsums sums_q45(const Block & x, const block_q8_K & y, High high) {
    const k4_scales sm  = unpack_k4_all(x.scales);
    int32x4_t       acc = vdupq_n_s32(0);
    for (int c = 0; c < 4; ++c) {
        uint8x16_t lo[2], hi[2];
        for (int t = 0; t < 2; ++t) {
            const uint8x16_t q = load_u8(x.qs + 32 * c + 16 * t);
            lo[t]              = vandq_u8(q, vdupq_n_u8(0x0F));
            hi[t]              = vshrq_n_u8(q, 4);
        }
        high(c, lo, hi);
        int32x4_t p_lo = vdupq_n_s32(0), p_hi = vdupq_n_s32(0);
        for (int t = 0; t < 2; ++t) {
            p_lo = dot_s8(p_lo, vreinterpretq_s8_u8(lo[t]), load_s8(y.qs + 64 * c + 16 * t));
            p_hi = dot_s8(p_hi, vreinterpretq_s8_u8(hi[t]), load_s8(y.qs + 64 * c + 32 + 16 * t));
        }
        acc = vmlaq_n_s32(acc, p_lo, k4_byte(sm.sc, 2 * c));
        acc = vmlaq_n_s32(acc, p_hi, k4_byte(sm.sc, 2 * c + 1));
    }
    // mins: m_j times bsums[2j] + bsums[2j + 1]
    const int16x8_t pairs = vpaddq_s16(vld1q_s16(y.bsums), vld1q_s16(y.bsums + 8));
    const int16x8_t mins  = vreinterpretq_s16_u16(vmovl_u8(vcreate_u8(sm.m)));
    const int32x4_t pm    = vmlal_high_s16(vmull_s16(vget_low_s16(mins), vget_low_s16(pairs)), mins, pairs);
    return {acc, pm};
}

q8k_vsums sums_simd(const block_q4_K & x, const block_q8_K & y) {
    return sums_q45(x, y, [](int, uint8x16_t *, uint8x16_t *) {});
}

q8k_vsums sums_simd(const block_q5_K & x, const block_q8_K & y) {
    const uint8x16_t qh[2] = {load_u8(x.qh), load_u8(x.qh + 16)};
    return sums_q45(x, y, [&](int c, uint8x16_t * lo, uint8x16_t * hi) {
        // bit 2c of qh[l] is the fifth bit of sub-block 2c, bit 2c + 1 that of 2c + 1;
        // vshlq by a negative count shifts right
        for (int t = 0; t < 2; ++t) {
            const uint8x16_t b_lo = vandq_u8(qh[t], vdupq_n_u8(static_cast<uint8_t>(1u << (2 * c))));
            const uint8x16_t b_hi = vandq_u8(qh[t], vdupq_n_u8(static_cast<uint8_t>(1u << (2 * c + 1))));
            lo[t] = vorrq_u8(lo[t], vshlq_u8(b_lo, vdupq_n_s8(static_cast<int8_t>(4 - 2 * c))));
            hi[t] = vorrq_u8(hi[t], vshlq_u8(b_hi, vdupq_n_s8(static_cast<int8_t>(3 - 2 * c))));
        }
    });
}

/// q6_K: every 16 bytes of stored values are one group of 16 with one scale; the value
/// minus 32 fits a signed byte.
q8k_vsums sums_simd(const block_q6_K & x, const block_q8_K & y) {
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    const uint8x16_t low2 = vdupq_n_u8(3);
    int32x4_t        acc  = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h) {
        for (int t = 0; t < 2; ++t) {  // bytes 16t .. 16t + 15 of each 32-byte field
            const uint8x16_t l0 = load_u8(x.ql + 64 * h + 16 * t);
            const uint8x16_t l1 = load_u8(x.ql + 64 * h + 32 + 16 * t);
            const uint8x16_t qh = load_u8(x.qh + 32 * h + 16 * t);
            const uint8x16_t v[4] = {
                vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(qh, low2), 4)),
                vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 2), low2), 4)),
                vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 4), low2), 4)),
                vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(qh, 6), 4)),
            };
            for (int k = 0; k < 4; ++k) {
                const int       g = 8 * h + 2 * k + t;  // elements 16g .. 16g + 15
                const int8x16_t w = vsubq_s8(vreinterpretq_s8_u8(v[k]), vdupq_n_s8(32));
                acc = vmlaq_n_s32(acc, dot_s8(vdupq_n_s32(0), w, load_s8(y.qs + 16 * g)), x.scales[g]);
            }
        }
    }
    return {acc, vdupq_n_s32(0)};
}

#endif

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)
template <class Block> constexpr vec_dot_fn fast_dot = q8k_dot_simd<Block, sums_simd>;
#else
template <class Block> constexpr vec_dot_fn fast_dot = q8k_dot<Block, sums_scalar>;
#endif

template <class Block> constexpr vec_dot_fn twin_dot = q8k_dot<Block, sums_scalar>;

} // namespace

void vec_dot_q4_K_q8_K(int64_t n, float * s, const void * x, const void * y) { fast_dot<block_q4_K>(n, s, x, y); }
void vec_dot_q4_K_q8_K_scalar(int64_t n, float * s, const void * x, const void * y) {
    twin_dot<block_q4_K>(n, s, x, y);
}
void vec_dot_q5_K_q8_K(int64_t n, float * s, const void * x, const void * y) { fast_dot<block_q5_K>(n, s, x, y); }
void vec_dot_q5_K_q8_K_scalar(int64_t n, float * s, const void * x, const void * y) {
    twin_dot<block_q5_K>(n, s, x, y);
}
void vec_dot_q6_K_q8_K(int64_t n, float * s, const void * x, const void * y) { fast_dot<block_q6_K>(n, s, x, y); }
void vec_dot_q6_K_q8_K_scalar(int64_t n, float * s, const void * x, const void * y) {
    twin_dot<block_q6_K>(n, s, x, y);
}

GK_DEFINE_Q8K_TILE(tile_q4_K, k45_tile<block_q4_K>)
GK_DEFINE_Q8K_TILE(tile_q5_K, k45_tile<block_q5_K>)
GK_DEFINE_Q8K_TILE(tile_q6_K, q6k_tile)
#if defined(GK_SIMD_AVX2)
GK_DEFINE_LANES_TILE(tile_q4_K, q45_rows<block_q4_K>)
GK_DEFINE_LANES_TILE(tile_q5_K, q45_rows<block_q5_K>)
GK_DEFINE_LANES_TILE(tile_q6_K, q6k_rows)
#endif

} // namespace gk::cpu::detail
