// vec_dot_k_low.cpp - integer dots of the low-bit K-quants against q8_K activations: q2_K
// and q3_K, each a vector kernel and its scalar twin, and their tile kernels (AVX-512 VNNI,
// vec_dot_tile_q8k.h: q2_K's bytes q * sc_g, q3_K's q with offset 4, through the x86 views).
//
// Per super-block b (256 elements, groups g of 16), all in exact int32:
//   q2_K: isum = sum over g of sc_g * (sum of q * a over g), q the 2-bit quant (0..3) and
//         sc_g the low nibble of scales[g]; isum_min = sum over g of m_g * (sum of a over
//         g), m_g the high nibble;
//   q3_K: isum = sum over g of sc_g * (sum of (q - 4) * a over g), q the 2 low bits plus 4
//         where the element's hmask bit is set, sc_g the signed 6-bit scale (-32..31).
// Then d = f32(weight d) * activation d and chain b % 4 += d * float(isum) (fused); q2_K
// then chain b % 4 += -(f32(weight dmin) * activation d) * float(isum_min). The dot is
// (c0 + c1) + (c2 + c3) (vec_dot_q8k.h).
//
// The twins sum the unpacked levels directly and the sums of a from the quants. The vector
// kernels take the sums of a from q8_K's bsums, and dot q3_K's unsigned q (0..7): its -4
// comes out as 4 * sum over g of sc_g * bsums[g].
#include "vec_dot_q8k.h"
#include "vec_dot_tile_q8k.h"

#include <bit>
#include <cstring>

namespace gk::cpu::detail {
namespace {

using quant::block_q2_K;
using quant::block_q3_K;
using quant::block_q8_K;
using quant::QK_K;

unpacked_sb unpack(const block_q2_K & x) {
    unpacked_sb w;
    unpack_crumbs(x.qs, w.q);
    for (int g = 0; g < QK_K / 16; ++g) {
        w.sc[g] = x.scales[g] & 0xF;
        w.m[g]  = x.scales[g] >> 4;
    }
    return w;
}

unpacked_sb unpack(const block_q3_K & x) {
    int8_t sc[QK_K / 16];
    quant::unpack_scales_q3_K(x.scales, sc);
    unpacked_sb w;
    unpack_crumbs(x.qs, w.q);
    for (int k = 0; k < QK_K / 32; ++k) {  // element 32k + l: its high bit is bit k of hmask[l]
        for (int l = 0; l < 32; ++l) {
            w.q[32 * k + l] = static_cast<int8_t>(w.q[32 * k + l] - ((x.hmask[l] >> k) & 1 ? 0 : 4));
        }
    }
    for (int g = 0; g < QK_K / 16; ++g) {
        w.sc[g] = sc[g];
        w.m[g]  = 0;
    }
    return w;
}

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)

/// The 16 scales of a q3_K block as stored (scale + 32, 0..63), one per byte, scale j at
/// byte j % 8 of lo (j < 8) or hi, word-parallel: a second implementation of the layout
/// that unpack_scales_q3_K reads (the twins use that one; the twin test compares them).
/// Bytes 0..7 hold the low 4 bits of scales 0..7 in their low nibble and of 8..15 in their
/// high nibble; bits 2t .. 2t + 1 of bytes 8..11 hold the top bits of scales 4t .. 4t + 3.
struct q3k_scales {
    uint64_t lo;
    uint64_t hi;
};

q3k_scales unpack_q3k_scales(const uint8_t * packed) {
    static_assert(std::endian::native == std::endian::little, "byte j of a word is scale j");
    uint32_t p[3];
    std::memcpy(p, packed, sizeof p);
    const uint32_t lo4 = 0x0F0F0F0Fu;
    const uint32_t top = 0x03030303u;
    const uint32_t s[4] = {(p[0] & lo4) | ((p[2] & top) << 4), (p[1] & lo4) | (((p[2] >> 2) & top) << 4),
                           ((p[0] >> 4) & lo4) | (((p[2] >> 4) & top) << 4),
                           ((p[1] >> 4) & lo4) | (((p[2] >> 6) & top) << 4)};
    return {s[0] | static_cast<uint64_t>(s[1]) << 32, s[2] | static_cast<uint64_t>(s[3]) << 32};
}

#endif

#if defined(GK_SIMD_X86)

using namespace simd::x86;

/// q2_K through the x86 view of vec_dot_q8k.h: quants 0..3, scales the low nibbles.
struct q2k_view {
    static constexpr bool signed_quants = false;
    const uint8_t * qs;
    __m256i         sc;  // scales_even_odd

    __m256i quants(int k) const { return crumbs(qs, k); }
    __m256i scale(int k) const { return lane_word(sc, k); }
};

/// The view of a q2_K block and its mins, int16 words in group order.
struct q2k_parts {
    q2k_view w;
    __m256i  mins;
};

q2k_parts q2k_unpack(const block_q2_K & x) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales));
    const __m128i low4   = _mm_set1_epi8(0x0F);
    return {{x.qs, scales_even_odd(_mm_and_si128(packed, low4), false)},
            _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4))};
}

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
/// With VNNI: q * sc_g (at most 45) is looked up rather than multiplied, so each vector
/// of 32 elements costs one VPDPBUSD where the view's form needs VPMADDUBSW and VPDPWSSD.
/// Table t holds, at byte 4i + j of its low lane, j * sc of group 8t + 2i, and of group
/// 8t + 2i + 1 in its high lane (one 16-bit multiply makes the four multiples of a scale:
/// word (0 | s << 8) and (2s | 3s << 8)); vector k reads table k / 4 at index q | 4 (k % 4),
/// its low lane being group 2k and its high lane group 2k + 1.
q8k_vsums sums_simd(const block_q2_K & x, const block_q8_K & y) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales));
    const __m256i sc     = _mm256_broadcastsi128_si256(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
    __m256i       table[2];
    for (int t = 0; t < 2; ++t) {
        const auto    g     = [t](int i, int lane) { return static_cast<char>(8 * t + 2 * i + lane); };
        const char    z     = static_cast<char>(0x80);  // VPSHUFB writes 0
        const __m256i words = _mm256_shuffle_epi8(
            sc, _mm256_setr_epi8(g(0, 0), z, g(0, 0), z, g(1, 0), z, g(1, 0), z, g(2, 0), z, g(2, 0), z, g(3, 0), z,
                                 g(3, 0), z, g(0, 1), z, g(0, 1), z, g(1, 1), z, g(1, 1), z, g(2, 1), z, g(2, 1), z,
                                 g(3, 1), z, g(3, 1), z));
        table[t] = _mm256_mullo_epi16(words, _mm256_set1_epi32(0x03020100));
    }
    __m256i acc[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int k = 0; k < QK_K / 32; ++k) {
        const __m256i bits  = _mm256_srli_epi16(load256(x.qs + 32 * (k / 4)), 2 * (k % 4));
        const __m256i index = _mm256_ternarylogic_epi32(bits, _mm256_set1_epi8(3),
                                                        _mm256_set1_epi8(static_cast<char>(4 * (k % 4))),
                                                        0xEA);  // (bits & 3) | 4 (k % 4)
        acc[k % 2] = _mm256_dpbusd_epi32(acc[k % 2], _mm256_shuffle_epi8(table[k / 4], index), load256(y.qs + 32 * k));
    }
    return {_mm256_add_epi32(acc[0], acc[1]), bsums_dot(q2k_unpack(x).mins, y)};
}
#else
q8k_vsums sums_simd(const block_q2_K & x, const block_q8_K & y) {
    const q2k_parts p = q2k_unpack(x);
    return {scaled_dot(p.w, y.qs), bsums_dot(p.mins, y)};
}
#endif

/// q3_K through the x86 view: quants q = crumb + 4 * hmask bit (0..7), signed scales.
struct q3k_view {
    static constexpr bool signed_quants = false;
    const uint8_t * qs;
    __m256i         hmask;  // element 32k + l has its high bit at bit k of byte l
    __m256i         sc;     // scales_even_odd

    __m256i quants(int k) const {
        const __m256i h = k < 2 ? _mm256_slli_epi16(hmask, 2 - k) : _mm256_srli_epi16(hmask, k - 2);
        return _mm256_or_si256(crumbs(qs, k), _mm256_and_si256(h, _mm256_set1_epi8(4)));
    }
    __m256i scale(int k) const { return lane_word(sc, k); }
};

/// The 16 signed scales of a q3_K block, byte g = group g.
__m128i q3k_scale_bytes(const block_q3_K & x) {
    const q3k_scales s = unpack_q3k_scales(x.scales);
    return _mm_sub_epi8(_mm_set_epi64x(static_cast<int64_t>(s.hi), static_cast<int64_t>(s.lo)), _mm_set1_epi8(32));
}

q3k_view q3k_view_of(const block_q3_K & x, __m128i sc8) {
    return {x.qs, load256(x.hmask), scales_even_odd(sc8, true)};
}

q8k_vsums sums_simd(const block_q3_K & x, const block_q8_K & y) {
    const __m128i sc8    = q3k_scale_bytes(x);
    const __m256i offset = bsums_dot(_mm256_cvtepi8_epi16(sc8), y);
    return {_mm256_sub_epi32(scaled_dot(q3k_view_of(x, sc8), y.qs), _mm256_slli_epi32(offset, 2)), i32v_zero()};
}

#if defined(GK_SIMD_AVX2)
/// The AVX2 tile's q2_K rows (vec_dot_tile_rows.h) from its view: quants 0..3 unsigned,
/// the scale words, the mins against bsums.
struct q2k_rows : rows_policy<block_q2_K, bsums_term::mins, false> {
    static constexpr int max_q       = 3;  // the lane form's bounds
    static constexpr int group_steps = 4;  // 16 elements a scale
    static void unpack(const block_q2_K & x, row & r, float & d, float & dmin) {
        const q2k_parts p = q2k_unpack(x);
        for (int k = 0; k < QK_K / 32; ++k) {
            r.q[k]     = p.w.quants(k);
            r.scale[k] = p.w.scale(k);
        }
        r.m  = p.mins;
        d    = simd::half_to_float(x.d);
        dmin = simd::half_to_float(x.dmin);
    }
};

/// The AVX2 tile's q3_K rows from its view: quants 0..7 unsigned, the signed scale words,
/// and the -4 as 4 sc_g against bsums[g] inside the isum.
struct q3k_rows : rows_policy<block_q3_K, bsums_term::offset, false> {
    static constexpr int max_q       = 7;  // the lane form's bounds
    static constexpr int group_steps = 4;  // 16 elements a scale
    static void unpack(const block_q3_K & x, row & r, float & d, float &) {
        const __m128i  sc8 = q3k_scale_bytes(x);
        const q3k_view w   = q3k_view_of(x, sc8);
        for (int k = 0; k < QK_K / 32; ++k) {
            r.q[k]     = w.quants(k);
            r.scale[k] = w.scale(k);
        }
        r.m = _mm256_slli_epi16(_mm256_cvtepi8_epi16(sc8), 2);
        d   = simd::half_to_float(x.d);
    }
};
#endif

#if defined(GK_TILE_AVX512)

// ---- the tile kernels (vec_dot_tile_q8k.h) --------------------------------------------------

/// q2_K: q * sc_g <= 45 fits a byte, so u holds the scaled quants (one 16-bit multiply per
/// byte pair: the low byte's product never carries into the high byte); the mins weigh
/// bsums[h] in isum_min.
struct q2k_tile : q8k_tile_format<block_q2_K, 0, 0, true> {
    static void unpack(const block_q2_K & x, q8k_tile_row & r) {
        const q2k_parts p = q2k_unpack(x);
        r.set_quants([&](int k) { return _mm256_mullo_epi16(p.w.quants(k), p.w.scale(k)); });
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(r.mw), p.mins);
        r.set_d(x);
    }
};

/// q3_K: u = q (0..7) with offset 4, the signed group scales.
struct q3k_tile : q8k_tile_format<block_q3_K, 16, 4> {
    static constexpr int planes     = 2;  // sc in [-32, 31], u - 4 in [-4, 3]: digits 0..1 and -16..15
    static constexpr int digit_bits = 1;
    static void unpack(const block_q3_K & x, q8k_tile_row & r) {
        const __m128i  sc8 = q3k_scale_bytes(x);
        const q3k_view w   = q3k_view_of(x, sc8);
        r.set_quants([&](int k) { return w.quants(k); });
        r.set_scales(_mm512_cvtepi8_epi32(sc8));
        r.set_d(x);
    }
};

#endif

#elif defined(GK_SIMD_NEON)

using namespace simd::neon;

/// q2_K through the NEON view of vec_dot_q8k.h: quants 0..3, scales the low nibbles.
struct q2k_view {
    const uint8_t * qs;
    scales16        sc;

    uint8x16_t quants(int g) const { return crumbs(qs, g); }
    int32x4_t  scales4(int i) const { return sc.v[i]; }
};

q8k_vsums sums_simd(const block_q2_K & x, const block_q8_K & y) {
    const uint8x16_t packed = load_u8(x.scales);
    const q2k_view   w{x.qs, widen_scales(vandq_u8(packed, vdupq_n_u8(0x0F)), 0)};
    return {scaled_dot(w, y.qs), bsums_dot(widen_scales(vshrq_n_u8(packed, 4), 0).h, y)};
}

/// q3_K through the NEON view: quants q = crumb + 4 * hmask bit (0..7), signed scales.
struct q3k_view {
    const uint8_t * qs;
    const uint8_t * hmask;  // element 16g + i has its high bit at bit g / 2 of byte 16 (g % 2) + i
    scales16        sc;

    uint8x16_t quants(int g) const {
        const uint8x16_t h = vshlq_u8(load_u8(hmask + 16 * (g % 2)), vdupq_n_s8(static_cast<int8_t>(2 - g / 2)));
        return vorrq_u8(crumbs(qs, g), vandq_u8(h, vdupq_n_u8(4)));
    }
    int32x4_t scales4(int i) const { return sc.v[i]; }
};

q8k_vsums sums_simd(const block_q3_K & x, const block_q8_K & y) {
    const q3k_scales s = unpack_q3k_scales(x.scales);
    const q3k_view   w{x.qs, x.hmask, widen_scales(vcombine_u8(vcreate_u8(s.lo), vcreate_u8(s.hi)), 32)};
    return {vsubq_s32(scaled_dot(w, y.qs), vshlq_n_s32(bsums_dot(w.sc.h, y), 2)), i32v_zero()};
}

#endif

} // namespace

GK_DEFINE_Q8K_DOT(vec_dot_q2_K_q8_K, block_q2_K)
GK_DEFINE_Q8K_DOT(vec_dot_q3_K_q8_K, block_q3_K)
GK_DEFINE_Q8K_TILE(tile_q2_K, q2k_tile)
GK_DEFINE_Q8K_TILE(tile_q3_K, q3k_tile)
#if defined(GK_SIMD_AVX2)
GK_DEFINE_LANES_TILE(tile_q2_K, q2k_rows)
GK_DEFINE_LANES_TILE(tile_q3_K, q3k_rows)
#endif

} // namespace gk::cpu::detail
