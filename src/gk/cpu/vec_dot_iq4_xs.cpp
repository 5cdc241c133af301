// vec_dot_iq4_xs.cpp - integer dot of iq4_xs against q8_K activations: a vector kernel, its
// scalar twin and the tile kernel (AVX-512 VNNI, vec_dot_tile_q8k.h: the codebook values
// plus 128 through the x86 view).
//
// Per super-block b (256 elements, 8 sub-blocks j of 32), all in exact int32: isum = sum
// over j of (ls_j - 32) * (sum of v * a over j), v = k_iq4nl_values[4-bit index] (the
// codebook, -127..113) and ls_j the 6-bit scale code (low 4 bits in scales_l, top 2 in
// scales_h). Then d = f32(weight d) * activation d and chain b % 4 += d * float(isum)
// (fused); the dot is (c0 + c1) + (c2 + c3) (vec_dot_q8k.h).
#include "vec_dot_q8k.h"
#include "vec_dot_tile_q8k.h"

#include "quant/fp4.h"

#include <bit>
#include <cstring>

namespace gk::cpu::detail {
namespace {

using quant::block_iq4_xs;
using quant::block_q8_K;
using quant::k_iq4nl_values;
using quant::QK_K;

unpacked_sb unpack(const block_iq4_xs & x) {
    unpacked_sb w;
    for (int j = 0; j < QK_K / 32; ++j) {
        const int code = ((x.scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((x.scales_h >> (2 * j)) & 3) << 4);
        for (int t = 0; t < 2; ++t) {
            w.sc[2 * j + t] = static_cast<int16_t>(code - 32);
            w.m[2 * j + t]  = 0;
        }
        for (int i = 0; i < 16; ++i) {
            w.q[32 * j + i]      = k_iq4nl_values[x.qs[16 * j + i] & 0xF];
            w.q[32 * j + 16 + i] = k_iq4nl_values[x.qs[16 * j + i] >> 4];
        }
    }
    return w;
}

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)

/// The 8 scale codes (0..63) of an iq4_xs block, byte j = sub-block j, by spreading bit
/// fields: nibble j of scales_l (read little-endian) is the low 4 bits of code j, bits
/// 2j .. 2j + 1 of scales_h its top 2. A second implementation of the layout (the twin
/// reads it field by field; the twin test compares them).
uint64_t scale_codes(const block_iq4_xs & x) {
    static_assert(std::endian::native == std::endian::little, "nibble j of the word is code j");
    uint32_t l;
    std::memcpy(&l, x.scales_l, sizeof l);
    uint64_t lo = l;  // 8 nibbles -> the low nibbles of 8 bytes
    lo = (lo | lo << 16) & 0x0000FFFF0000FFFFull;
    lo = (lo | lo << 8) & 0x00FF00FF00FF00FFull;
    lo = (lo | lo << 4) & 0x0F0F0F0F0F0F0F0Full;
    uint64_t hi = x.scales_h;  // 8 two-bit fields -> the low 2 bits of 8 bytes
    hi = (hi | hi << 24) & 0x000000FF000000FFull;
    hi = (hi | hi << 12) & 0x000F000F000F000Full;
    hi = (hi | hi << 6) & 0x0303030303030303ull;
    return lo | hi << 4;
}

#endif

#if defined(GK_SIMD_X86)

using namespace simd::x86;

/// iq4_xs through the x86 view of vec_dot_q8k.h: vector k is sub-block k, the low nibbles
/// of qs[16k ..] in the low lane and the high nibbles in the high lane, mapped through the
/// codebook (signed quants); its scale is code k - 32 in both lanes.
struct iq4xs_view {
    static constexpr bool signed_quants = true;
    const uint8_t * qs;
    __m256i         values;  // the codebook in both lanes
    __m256i         sc;      // word k of both lanes: code k - 32

    __m256i quants(int k) const { return _mm256_shuffle_epi8(values, split_nibbles(qs + 16 * k)); }
    __m256i scale(int k) const { return lane_word(sc, k); }
};

/// The view of an iq4_xs block whose scale codes are `codes` (scale_codes).
iq4xs_view iq4xs_view_of(const block_iq4_xs & x, uint64_t codes) {
    const __m128i c      = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(codes)));
    const __m128i values = _mm_loadu_si128(reinterpret_cast<const __m128i *>(k_iq4nl_values));
    const __m128i scales = _mm_sub_epi16(c, _mm_set1_epi16(32));
    return {x.qs, _mm256_broadcastsi128_si256(values), _mm256_broadcastsi128_si256(scales)};
}

q8k_vsums sums_simd(const block_iq4_xs & x, const block_q8_K & y) {
    return {scaled_dot(iq4xs_view_of(x, scale_codes(x)), y.qs), i32v_zero()};
}

#if defined(GK_SIMD_AVX2)
/// The AVX2 tile's iq4_xs rows (vec_dot_tile_rows.h): the view's vectors stored once, then
/// scaled_dot's products (signed quants: |a| against q with a's sign). Against the twin's
/// unpacking (this tile's first form) at 4096 x 1024 x 512 on an AVX2 Zen 3, side by
/// side (loaded): 0.79-1.02 -> 0.95-1.09 of ggml.
struct iq4xs_rows : rows_policy<block_iq4_xs, bsums_term::none, true> {
    static void unpack(const block_iq4_xs & x, row & r, float & d, float &) {
        const iq4xs_view w = iq4xs_view_of(x, scale_codes(x));
        for (int k = 0; k < QK_K / 32; ++k) {
            r.q[k]     = w.quants(k);
            r.scale[k] = w.scale(k);
        }
        d = simd::half_to_float(x.d);
    }
};
#endif

#if defined(GK_TILE_AVX512)

/// iq4_xs for the tile (vec_dot_tile_q8k.h): u = v + 128 (the codebook value with its top
/// bit flipped), offset 128, 8 groups of 32 with scales code - 32.
struct iq4xs_tile : q8k_tile_format<block_iq4_xs, 8, 128> {
    static void unpack(const block_iq4_xs & x, q8k_tile_row & r) {
        const uint64_t   codes = scale_codes(x);
        const iq4xs_view w     = iq4xs_view_of(x, codes);
        r.set_quants([&](int k) { return _mm256_xor_si256(w.quants(k), _mm256_set1_epi8(static_cast<char>(0x80))); });
        r.set_scales(_mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(codes))),
                                      _mm256_set1_epi32(32)));
        r.set_d(x);
    }
};

#endif

#elif defined(GK_SIMD_NEON)

using namespace simd::neon;

/// iq4_xs through the NEON view: group g is the low (g even) or high nibbles of
/// qs[16 (g / 2) ..] mapped through the codebook; its scale is code g / 2 - 32.
struct iq4xs_view {
    const uint8_t * qs;
    int8x16_t       values;  // the codebook
    scales16        sc;

    uint8x16_t quants(int g) const {
        return vreinterpretq_u8_s8(vqtbl1q_s8(values, split_nibbles(qs + 16 * (g / 2)).val[g % 2]));
    }
    int32x4_t scales4(int i) const { return sc.v[i]; }
};

q8k_vsums sums_simd(const block_iq4_xs & x, const block_q8_K & y) {
    const uint8x8_t  codes = vcreate_u8(scale_codes(x));
    const iq4xs_view w{x.qs, vld1q_s8(k_iq4nl_values),
                       widen_scales(vcombine_u8(vzip1_u8(codes, codes), vzip2_u8(codes, codes)), 32)};
    return {scaled_dot(w, y.qs), i32v_zero()};
}

#endif

} // namespace

GK_DEFINE_Q8K_DOT(vec_dot_iq4_xs_q8_K, block_iq4_xs)
GK_DEFINE_Q8K_TILE(tile_iq4_xs, iq4xs_tile)
#if defined(GK_SIMD_AVX2)
GK_DEFINE_ROWS_TILE(tile_iq4_xs, iq4xs_rows)
#endif

} // namespace gk::cpu::detail
