// vec_dot_iq.h - what the integer dots of the lattice i-quants against q8_K activations
// share (vec_dot_iq2.cpp: iq2_xxs, iq2_xs, iq2_s; vec_dot_iq3.cpp: iq3_xxs, iq3_s;
// vec_dot_iq1.cpp: iq1_s, iq1_m): the kernel, its scalar twin, the row loop and the tile
// kernel, written once against a description of the format (format<Block>, below) that each
// file supplies.
//
// Every format is read the same way: 8 sub-blocks of 32 values, each 4 grid rows of 8
// coordinates (the iq3 grids' rows of 4 taken two at a time), 32 sign bits, and a scale
// code c per half of 16 values (formats with one code per 32 give both halves the same),
// ls = 2c + 1. The integer weight of a value with grid coordinate g:
//   iq2_*, iq3_*: w = g (1..62), negated where its sign bit is set;
//   iq1_*:        w = 8g + delta, g in {-1, 0, 1}, delta = -1 where its group's shift
//                 bit is set, else +1: 8 times g -+ IQ1S_DELTA, so the shift term that
//                 ggml adds through the activation sums is part of the exact sum.
// Per super-block b, exact in int32: isum = sum over the 16 halves h of ls_h * (sum of
// w * a over the values of h). Then d = (f32(weight d) * activation d) * f, where f is
// the constant factor ggml applies to the sum (1/8: iq2_*, iq1_*; 1/4: iq3_xxs; 1:
// iq3_s; powers of two, so folding them into d is exact), and chain b % 4 += d *
// float(isum), fused; the dot is (c0 + c1) + (c2 + c3). (ggml's iq1 value sumi +
// IQ1S_DELTA * sumi1 is isum / 8 exactly: |isum| < 2^24.)
//
// x86 multiplies unsigned by signed bytes, and q8_K may hold -128, whose negation does not
// fit a byte; so the x86 kernel multiplies u = w + o (o = 64, iq1: 9; u in 0..126) by the
// activation and takes o * (sum over h of ls_h * bsums[h]) back out, bsums being q8_K's
// sums of 16 (the converter writes them, vec_dot.h); iq1_s, with one shift per sub-block,
// takes the shift through bsums too (shift_by_sums). NEON multiplies w by a directly. The
// scalar twins multiply w by a, value by value. All three give the same isum, exactly.
//
// The tile kernel (AVX-512 VNNI, vec_dot_tile_q8k.h) takes the x86 u = w + o of every
// format (iq1_s's shift through the sign mask, as iq1_m's), with its grid indices computed
// 16 at a time where they are split between a byte and high bits, and the scales per group
// of 16, or of 32 where both halves share a code (scale_groups).
//
// Internal to those files; the names live in detail::iq, in an unnamed namespace: each file
// gets its own copy with internal linkage, so that everything inlines as within one file,
// and builds of the files for different vector levels cannot share a definition.
#pragma once

#include "vec_dot_impl.h"
#include "vec_dot_q8k.h"
#include "vec_dot_tile_q8k.h"
#include "vec_dot_tile_rows.h"

#include "quant/iq_quants.h"
#include "simd_neon.h"
#include "simd_x86.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gk::cpu::detail::iq {
namespace {

using quant::block_q8_K;
using quant::QK_K;

/// Scale codes of the halves: byte k of lo is the code of values 32k .. 32k + 15, byte k
/// of hi that of 32k + 16 .. 32k + 31.
struct half_codes {
    uint64_t lo;
    uint64_t hi;
};

/// ls of sub-block k's half from a field of half_codes.
inline int half_scale(uint64_t codes, int k) { return 2 * static_cast<int>((codes >> (8 * k)) & 0xFF) + 1; }

/// A T read from an address of any alignment.
template <class T> T load(const void * p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// A u64 whose byte k is code(k), k < 8 (each code below 256).
template <class Code> uint64_t bytes8(Code code) {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) {
        v |= static_cast<uint64_t>(code(k)) << (8 * k);
    }
    return v;
}

/// Both halves from one code per sub-block.
template <class Code> half_codes same_halves(Code code) {
    const uint64_t c = bytes8(code);
    return {c, c};
}

/// The 8 bytes of iq2_xs / iq2_s scales: low nibble first half, high nibble second.
inline half_codes nibble_halves(const uint8_t * scales) {
    const auto s = load<uint64_t>(scales);
    return {s & 0x0F0F0F0F0F0F0F0Full, (s >> 4) & 0x0F0F0F0F0F0F0F0Full};
}

// ---- what a format supplies ----------------------------------------------------------------
//
// format<Block> describes a format to the shared code. A super-block has QK_K / R grid
// rows of R coordinates (R = sizeof(table[0]): 8, or 4 for the iq3 grids); row r has
// grid index
//   index(x, r), or in the formats whose index is split between a byte and high bits:
//   low(x)[r] | ((high(x, r / 8) >> high_shift(r % 8)) & high_mask) << 8,
// in the table's range for any bytes (a byte, or a byte and high_mask's bits, index it).
// sign_word(x, k)  a word that holds sub-block k's sign bits (iq1: shift bits), those of
//                  group l (values 8l .. 8l + 7) from bit sign_at(l);
// group_signs      8: one bit per value; 7: bits for the first 7, the eighth the parity of
//                  those (each group has an even number of negatives); 1: one bit for all 8;
// halves(x), d(x)  the scale codes, the f16 super-block scale;
// factor           ggml's constant factor on the sum (folded into d);
// shifted          iq1: coordinates -1, 0, 1 and w = 8g + delta;
// eight_minus_delta(x)  (x86, optional) iq1_s, one shift per sub-block: see shift_by_sums.
// scale_groups     16, or 8 where halves(x) gives both halves of a sub-block one code.
// codes16(x)       (x86, optional) halves(x) as 16 bytes (lo, then hi), read by vector
//                  operations (top_nibbles8) where the scalar gathering of the codes costs more.
// sign_table       (x86) true: the signs of each group read from k_parity_signs by its
//                  7-bit code (group_signs 7) instead of spread by vector operations.
// format_defaults supplies shifted, scale_groups, sign_table, d and low where a format has
// nothing else to say.
template <class Block> struct format;

/// What a format shares unless it says otherwise: unsigned coordinates, d in the block's
/// field d, and (split indices) the low index bytes in qs.
template <class Block> struct format_defaults {
    static constexpr bool shifted      = false;
    static constexpr int  scale_groups = 16;
    static constexpr int   tile_planes  = 0;  // the AMX tile's digit planes (q8k_tile_format)
    static constexpr bool  sign_table   = false;
    static fp16_t d(const Block & x) { return x.d; }
    static const uint8_t * low(const Block & x) { return x.qs; }
};

/// Coordinates per grid row (8 or 4).
template <class F> constexpr int row_len = sizeof(F::table[0]);

/// True for the formats whose grid index is split between a byte and high bits.
template <class F> concept split_index = requires { F::high_mask; };

/// Grid index of row r of super-block x.
template <class F, class Block> uint32_t grid_index(const Block & x, int r) {
    if constexpr (split_index<F>) {
        return F::low(x)[r] | ((F::high(x, r / 8) >> F::high_shift(r % 8)) & F::high_mask) << 8;
    } else {
        return F::index(x, r);
    }
}

/// The coordinates of values 8i .. 8i + 7 of sub-block k, value 8i + j in byte j.
template <class F, class Block> uint64_t coords8(const Block & x, int k, int i) {
    if constexpr (row_len<F> == 8) {
        return F::table[grid_index<F>(x, 4 * k + i)];
    } else {
        return F::table[grid_index<F>(x, 8 * k + 2 * i)] |
               static_cast<uint64_t>(F::table[grid_index<F>(x, 8 * k + 2 * i + 1)]) << 32;
    }
}

/// True where the eighth sign of each group is its parity.
template <class F> constexpr bool has_parity = F::group_signs == 7;

/// The bit of the sign word that belongs to value e, or -1 for a parity sign.
template <class F> constexpr int sign_bit(int e) {
    if constexpr (F::group_signs == 1) {
        return F::sign_at(e / 8);
    } else {
        return has_parity<F> && e % 8 == 7 ? -1 : F::sign_at(e / 8) + e % 8;
    }
}

// ---- the twins -------------------------------------------------------------------------

/// Bit e set where value e is negated (iq1: where its shift is negative).
template <class F> uint32_t neg_bits(uint64_t word) {
    uint32_t neg = 0;
    for (int l = 0; l < 4; ++l) {
        uint32_t g = static_cast<uint32_t>(word >> F::sign_at(l));
        if constexpr (F::group_signs == 1) {
            g = (g & 1) * 0xFF;
        } else if constexpr (has_parity<F>) {
            uint32_t p = g & 0x7F;  // its parity folded into bit 0
            p ^= p >> 4;
            p ^= p >> 2;
            p ^= p >> 1;
            g = (g & 0x7F) | (p & 1) << 7;
        } else {
            g &= 0xFF;
        }
        neg |= g << (8 * l);
    }
    return neg;
}

/// The twins' isum: value by value, w * a summed per half, times the half's ls.
template <class Block> int32_t isum_scalar(const Block & x, const block_q8_K & y) {
    using F               = format<Block>;
    const half_codes c    = F::halves(x);
    int32_t          isum = 0;
    for (int k = 0; k < QK_K / 32; ++k) {
        const uint32_t neg = neg_bits<F>(F::sign_word(x, k));
        int8_t         w[32];
        for (int i = 0; i < 4; ++i) {
            const uint64_t row = coords8<F>(x, k, i);
            for (int j = 0; j < 8; ++j) {
                const auto g    = static_cast<uint8_t>(row >> (8 * j));
                const int  sign = (neg >> (8 * i + j)) & 1 ? -1 : 1;
                w[8 * i + j]    = static_cast<int8_t>(F::shifted ? 8 * static_cast<int8_t>(g) + sign : sign * g);
            }
        }
        for (int h = 0; h < 2; ++h) {
            int32_t dot = 0;
            for (int e = 16 * h; e < 16 * h + 16; ++e) {
                dot += w[e] * static_cast<int32_t>(y.qs[32 * k + e]);
            }
            isum += half_scale(h ? c.hi : c.lo, k) * dot;
        }
    }
    return isum;
}

/// A whole row given the per-super-block integer sums: d and the chains of vec_dot.h.
template <class Block, int32_t (*isum)(const Block &, const block_q8_K &)>
void iq_dot(int64_t n, float * s, const void * vx, const void * vy) {
    using F        = format<Block>;
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const block_q8_K *>(vy);
    block_chains ch;
    for (int64_t b = 0; b < n / QK_K; ++b) {
        const float d = simd::half_to_float(F::d(x[b])) * y[b].d * F::factor;
        ch.add(b, d, static_cast<float>(isum(x[b], y[b])));
    }
    *s = ch.sum();
}

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)

/// Per value e: the byte of the sign word that holds its bit (0x80 where there is none:
/// a byte shuffle or table look-up then yields 0) and that bit's mask (0x80 there).
struct sign_lanes {
    uint8_t index[32];
    uint8_t mask[32];
};

template <class F> constexpr sign_lanes make_sign_lanes() {
    sign_lanes t{};
    for (int e = 0; e < 32; ++e) {
        const int b = sign_bit<F>(e);
        t.index[e]  = static_cast<uint8_t>(b < 0 ? 0x80 : b / 8);
        t.mask[e]   = static_cast<uint8_t>(b < 0 ? 0x80 : 1 << (b % 8));
    }
    return t;
}
template <class F> constexpr sign_lanes sign_lanes_of = make_sign_lanes<F>();

#endif

#if defined(GK_SIMD_X86)

using namespace simd::x86;

/// The word in every 32- or 64-bit lane.
inline __m256i broadcast(uint32_t w) { return _mm256_set1_epi32(static_cast<int>(w)); }
inline __m256i broadcast(uint16_t w) { return broadcast(uint32_t{w}); }
inline __m256i broadcast(uint64_t w) { return _mm256_set1_epi64x(static_cast<int64_t>(w)); }

/// The sign word's bits spread to the 32 values: the top bit of byte e is set where value
/// e is negated. Where the eighth sign of a group is its parity, the group's count of
/// negatives (times 255, in its 64-bit lane) sets bit 63 of the lane when odd.
template <class F, class Word> __m256i neg_mask(Word word) {
    const __m256i bit = load256(sign_lanes_of<F>.mask);
    const __m256i b   = _mm256_shuffle_epi8(broadcast(word), load256(sign_lanes_of<F>.index));
    const __m256i m   = _mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit);
    if constexpr (has_parity<F>) {
        return _mm256_or_si256(m, _mm256_slli_epi64(_mm256_sad_epu8(m, _mm256_setzero_si256()), 63));
    } else {
        return m;
    }
}

/// The offset o of the unsigned operand u = w + o.
template <class F> constexpr int weight_offset = F::shifted ? 9 : 64;

/// True where the shift is one per sub-block (iq1_s): it then enters through the
/// activation sums alone, sum of ls (8g + delta) a = 8 ls sum (g + 1) a - ls (8 - delta) A,
/// so u = g + 1 needs no sign mask; F::eight_minus_delta(x) gives 8 - delta per half in
/// the layout of the scales in isum_simd.
template <class F> constexpr bool shift_by_sums = requires { F::eight_minus_delta; };

/// u = w + o of a sub-block's 32 values from their coordinates g and negation mask m.
template <class F> __m256i unsigned_weights(__m256i g, __m256i m) {
    if constexpr (F::shifted) {
        // 8 (g + 1) + (delta + 1); g + 1 <= 2 keeps the 16-bit shift inside each byte
        const __m256i g1 = _mm256_add_epi8(g, _mm256_set1_epi8(1));
        return _mm256_or_si256(_mm256_slli_epi16(g1, 3), _mm256_andnot_si256(m, _mm256_set1_epi8(2)));
    } else {
        return _mm256_add_epi8(_mm256_sign_epi8(g, _mm256_or_si256(m, _mm256_set1_epi8(1))), _mm256_set1_epi8(64));
    }
}

#if defined(__BMI2__) && !defined(__AVX512VL__)
/// Per 4-bit group mask n (bit l: group l negative), the bytes delta + 1 adds: 2 in the
/// groups whose bit is clear, 0 in the others (sub_block_weights without AVX-512).
struct positive_twos {
    alignas(32) uint8_t v[16][32];
};
inline constexpr positive_twos k_positive_twos = [] {
    positive_twos t{};
    for (int n = 0; n < 16; ++n) {
        for (int e = 0; e < 32; ++e) {
            t.v[n][e] = (n >> (e / 8) & 1) ? 0 : 2;
        }
    }
    return t;
}();
#endif

/// Per 7-bit sign code c of a group of 8 (group_signs 7), the group's signs as bytes: -1
/// for bit j of c (j < 7) set and for the eighth where c has odd parity, else +1.
struct parity_signs {
    uint64_t v[128];
};
inline constexpr parity_signs k_parity_signs = [] {
    parity_signs t{};
    for (int c = 0; c < 128; ++c) {
        int odd = 0;
        for (int j = 0; j < 8; ++j) {
            const int neg = j < 7 ? (c >> j & 1) : odd;
            odd ^= j < 7 ? neg : 0;
            t.v[c] |= static_cast<uint64_t>(neg ? 0xFF : 0x01) << (8 * j);
        }
    }
    return t;
}();

/// u = w + o of the 32 values of sub-block k of x from their coordinates g. With BMI2 the
/// formats with one sign per group of 8 (iq1_*: the shift) take the 4 bits by PEXT (or the
/// one bit of iq1_s's sub-block 4 times) and OR delta + 1 = 2 into the positive groups:
/// with AVX-512 by a mask register, else from a 16-entry table (one load for the four
/// vector operations of the byte mask; gk-bench iq1_m decode on an AVX2 Zen 3: 0.85 -> 0.97).
template <class F, class Block>
[[gnu::always_inline]] inline __m256i sub_block_weights(const Block & x, int k, __m256i g) {
#if defined(__BMI2__)
    if constexpr (F::shifted && F::group_signs == 1) {
        const auto word = static_cast<uint32_t>(F::sign_word(x, k));
        uint32_t   neg;
        if constexpr (F::sign_at(0) == F::sign_at(3)) {
            neg = (word >> F::sign_at(0) & 1) * 0xF;
        } else {
            constexpr uint32_t bits =
                1u << F::sign_at(0) | 1u << F::sign_at(1) | 1u << F::sign_at(2) | 1u << F::sign_at(3);
            neg = _pext_u32(word, bits);
        }
        const __m256i base = _mm256_slli_epi16(_mm256_add_epi8(g, _mm256_set1_epi8(1)), 3);
#if defined(__AVX512VL__)
        return _mm256_mask_or_epi64(base, static_cast<__mmask8>(~neg), base, _mm256_set1_epi8(2));
#else
        return _mm256_or_si256(base, load256(k_positive_twos.v[neg]));
#endif
    }
#endif
    if constexpr (F::sign_table) {
        // the four groups' signs read from k_parity_signs: scalar shifts and loads instead of
        // the byte mask's nine vector operations
        static_assert(has_parity<F> && !F::shifted, "the sign table holds 7-bit codes with parity");
        const auto word = F::sign_word(x, k);
        const auto sign = [&](int l) { return static_cast<int64_t>(k_parity_signs.v[word >> F::sign_at(l) & 127]); };
        return _mm256_add_epi8(_mm256_sign_epi8(g, _mm256_setr_epi64x(sign(0), sign(1), sign(2), sign(3))),
                               _mm256_set1_epi8(weight_offset<F>));
    }
    return unsigned_weights<F>(g, neg_mask<F>(F::sign_word(x, k)));
}

/// The 32 coordinates of sub-block k, grid row r having the index index(r).
template <class F, class Index>
[[gnu::always_inline]] inline __m256i load_coords(int k, Index index) {
    const auto row = [&](int r) { return F::table[index(r)]; };
    if constexpr (row_len<F> == 8) {
#if defined(__AVX512VL__)
        // a masked broadcast per row is one operation; a 64-bit insert is two
        __m256i v = _mm256_set1_epi64x(static_cast<int64_t>(row(4 * k)));
        for (int i = 1; i < 4; ++i) {
            v = _mm256_mask_set1_epi64(v, static_cast<__mmask8>(1u << i), static_cast<int64_t>(row(4 * k + i)));
        }
        return v;
#else
        return _mm256_setr_epi64x(static_cast<int64_t>(row(4 * k)), static_cast<int64_t>(row(4 * k + 1)),
                                  static_cast<int64_t>(row(4 * k + 2)), static_cast<int64_t>(row(4 * k + 3)));
#endif
    } else {
        return _mm256_setr_epi32(static_cast<int>(row(8 * k)), static_cast<int>(row(8 * k + 1)),
                                 static_cast<int>(row(8 * k + 2)), static_cast<int>(row(8 * k + 3)),
                                 static_cast<int>(row(8 * k + 4)), static_cast<int>(row(8 * k + 5)),
                                 static_cast<int>(row(8 * k + 6)), static_cast<int>(row(8 * k + 7)));
    }
}

#if defined(__BMI2__)
/// The field stride of the high index bits of a split format: rows 4t .. 4t + 3 (t < 2)
/// take theirs from F::high(x, .) at F::high_shift(4t) + stride * i.
template <class F> constexpr int high_stride() {
    constexpr int w = F::high_shift(1) - F::high_shift(0);
    static_assert(F::high_shift(0) == 0 && F::high_shift(2) == 2 * w && F::high_shift(3) == 3 * w &&
                      F::high_shift(5) == F::high_shift(4) + w && F::high_shift(6) == F::high_shift(4) + 2 * w &&
                      F::high_shift(7) == F::high_shift(4) + 3 * w && w <= 8,
                  "four high fields of equal stride per half");
    return w;
}

/// The grid indices of rows 4j .. 4j + 3 of a split format, row 4j + i in bits 16i: PDEP
/// puts the 4 low bytes into the low bytes of the words and the 4 high fields above them.
template <class F, class Block> uint64_t index_quad(const Block & x, int j) {
    constexpr int      w    = high_stride<F>();
    constexpr uint64_t mask = uint64_t{F::high_mask} * (1 | 1ull << w | 1ull << 2 * w | 1ull << 3 * w);
    constexpr uint64_t dest = (((1ull << w) - 1) << 8) * 0x0001000100010001ull;
    const uint64_t     high = F::high(x, 4 * j / 8) >> F::high_shift(4 * j % 8) & mask;
    const auto         low  = load<uint32_t>(F::low(x) + 4 * j);
    return _pdep_u64(low, 0x00FF00FF00FF00FFull) | _pdep_u64(high, dest);
}

#endif

/// The 32 coordinates of sub-block k of x (split formats with BMI2: the indices four at a
/// time, index_quad). Gather: the 8 rows of 4 coordinates (iq3_xxs, iq3_s) in one
/// VPGATHERDD, where the host runs it at full speed (cpu_features' fast_gather): the
/// scalar loads it replaces put 7 inserts per sub-block on the shuffle port. On the
/// Emerald Rapids Xeon, gk-bench 4096 x 14336 decode (gk/ggml, three alternating runs):
/// iq3_s 0.84-0.85 -> 1.21-1.31, iq3_xxs 1.18-1.23 -> 1.35-1.60.
template <class F, bool Gather = false, class Block>
[[gnu::always_inline]] inline __m256i load_coords(const Block & x, int k) {
#if defined(__BMI2__)
    if constexpr (split_index<F>) {
        constexpr int quads = QK_K / row_len<F> / 32;  // per sub-block
        uint64_t      q[2]  = {index_quad<F>(x, quads * k), quads == 2 ? index_quad<F>(x, quads * k + 1) : 0};
        if constexpr (Gather) {
            static_assert(quads == 2 && row_len<F> == 4, "eight 32-bit rows per sub-block");
            const __m256i index = _mm256_cvtepu16_epi32(
                _mm_set_epi64x(static_cast<int64_t>(q[1]), static_cast<int64_t>(q[0])));
            return _mm256_i32gather_epi32(reinterpret_cast<const int *>(F::table), index, 4);
        }
        return load_coords<F>(k, [&](int r) {  // row r of the sub-block: word r % 4 of its quad
            return static_cast<uint32_t>(q[r % (4 * quads) / 4] >> 16 * (r % 4) & 0xFFFF);
        });
    }
#endif
    if constexpr (Gather && !split_index<F>) {  // iq3_xxs: the rows' indices are bytes
        static_assert(row_len<F> == 4, "eight 32-bit rows per sub-block");
        const auto bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(F::index_bytes(x) + 8 * k));
        return _mm256_i32gather_epi32(reinterpret_cast<const int *>(F::table), _mm256_cvtepu8_epi32(bytes), 4);
    }
    return load_coords<F>(k, [&](int r) { return grid_index<F>(x, r); });
}

/// Word k of each 128-bit lane of v broadcast across that lane.
inline __m256i lane_word(__m256i v, int k) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16(static_cast<short>(((2 * k + 1) << 8) | (2 * k))));
}

/// The high nibbles of the bytes p[first + Step k], k < 8, in bytes 0..7 and again in
/// 8..15 (Step 4: p[0 .. 32) is read; Step 8: p[0 .. 64)): the scale codes of iq2_xxs and
/// iq3_xxs, the top nibbles of a u32 per sub-block. Two byte shuffles instead of eight
/// scalar shifts, shifts and ORs: the AVX2 iq2_xxs / iq3_xxs kernels spent a tenth of their
/// instructions gathering the codes.
template <int Step, int First>
__m128i top_nibbles8(const uint8_t * p) {
    static_assert((Step == 4 || Step == 8) && First < Step, "one byte per word of Step bytes");
    const auto     at = [](int j) { return static_cast<char>(j); };
    constexpr char z  = static_cast<char>(0x80);
    __m128i        b;  // the 8 bytes in order
    if constexpr (Step == 4) {
        const __m256i pick = _mm256_setr_epi8(at(First), at(First + 4), at(First + 8), at(First + 12), z, z, z, z, z, z,
                                              z, z, z, z, z, z, at(First), at(First + 4), at(First + 8), at(First + 12),
                                              z, z, z, z, z, z, z, z, z, z, z, z);
        const __m256i v    = _mm256_shuffle_epi8(load256(p), pick);  // lane 0: k = 0..3, lane 1: 4..7
        b                  = _mm_unpacklo_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    } else {
        const __m256i lo = _mm256_setr_epi8(at(First), at(First + 8), z, z, z, z, z, z, z, z, z, z, z, z, z, z,
                                            at(First), at(First + 8), z, z, z, z, z, z, z, z, z, z, z, z, z, z);
        const __m256i hi = _mm256_setr_epi8(z, z, at(First), at(First + 8), z, z, z, z, z, z, z, z, z, z, z, z, z, z,
                                            at(First), at(First + 8), z, z, z, z, z, z, z, z, z, z, z, z);
        const __m256i v  = _mm256_or_si256(_mm256_shuffle_epi8(load256(p), lo),
                                           _mm256_shuffle_epi8(load256(p + 32), hi));
        b                = _mm_unpacklo_epi16(_mm256_castsi256_si128(v),
                                              _mm256_extracti128_si256(v, 1));  // lanes [0 1 4 5], [2 3 6 7]
    }
    const __m128i c = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0F));
    return _mm_unpacklo_epi64(c, c);
}

/// The int16 factors of isum_simd: scale_h and weight_h of the 16 halves (see below).
struct half_factors {
    __m256i scale;   // word k of the low lane: the first half of sub-block k; of the high lane: the second
    __m256i weight;  // word h: the weight of bsums[h]
};

/// scale_h = ls_h and weight_h = o ls_h (iq1_s: 8 ls_h and (8 - delta_h) ls_h). The
/// weights are computed in the scales' order (even halves low, odd high) and then put in
/// the order of q8_K's bsums, once per super-block rather than the bsums once per column.
/// VectorCodes: the codes by F::codes16 where the format has one.
template <class Block, bool VectorCodes = true>
half_factors factors_of(const Block & x) {
    using F = format<Block>;
    __m128i c8;
    if constexpr (VectorCodes && requires { F::codes16(x); }) {
        c8 = F::codes16(x);
    } else {
        const half_codes c = F::halves(x);
        c8                 = _mm_set_epi64x(static_cast<int64_t>(c.hi), static_cast<int64_t>(c.lo));
    }
    const __m256i    ls = _mm256_add_epi16(_mm256_slli_epi16(_mm256_cvtepu8_epi16(c8), 1), _mm256_set1_epi16(1));
    __m256i          scale, weight;
    if constexpr (shift_by_sums<F>) {
        scale  = _mm256_slli_epi16(ls, 3);
        weight = _mm256_mullo_epi16(ls, F::eight_minus_delta(x));
    } else {
        scale  = ls;
        weight = _mm256_mullo_epi16(ls, _mm256_set1_epi16(weight_offset<F>));
    }
    // word 2k of the 16 bsums is the first half of sub-block k (low lane word k), word
    // 2k + 1 the second (high lane word k): the 64-bit quarters [0, 2, 1, 3], then in each
    // lane the words [0, 4, 1, 5, 2, 6, 3, 7]
    const __m256i interleave = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15, 0, 1, 8, 9, 2, 3,
                                                10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    return {scale, _mm256_shuffle_epi8(_mm256_permute4x64_epi64(weight, 0xD8), interleave)};
}

/// u of sub-block k of x: u = w + o, or g + 1 where the shift goes through the sums.
/// (The pieces of a sub-block's u are always inlined: with the tile as a second caller
/// GCC 12 kept iq3_s's load_coords out of line, and its vec_dot fell from 1.02 to 0.94
/// of ggml.)
template <class Block, bool Gather = false>
[[gnu::always_inline]] inline __m256i sub_block_u(const Block & x, int k) {
    using F         = format<Block>;
    const __m256i g = load_coords<F, Gather>(x, k);
    if constexpr (shift_by_sums<F>) {
        return _mm256_add_epi8(g, _mm256_set1_epi8(1));
    } else {
        return sub_block_weights<F>(x, k, g);
    }
}

/// The scaled products acc (8 int32 lanes) minus the halves' weights against the bsums.
inline __m256i isum_lanes(__m256i acc, __m256i weight, const block_q8_K & y) {
    return _mm256_sub_epi32(acc, _mm256_madd_epi16(weight, load256(y.bsums)));
}

/// isum = sum over halves h of scale_h * (sum of u * a over h) - sum over h of weight_h *
/// bsums[h] (factors_of), spread over 8 int32 lanes (their sum is isum). The pair sums of
/// maddubs (u <= 126, |a| <= 128) fit int16, as do scale <= 120 and weight <= 64 * 31.
template <class Block, bool Gather = false>
[[gnu::always_inline]] inline i32v isum_simd(const Block & x, const block_q8_K & y) {
    const half_factors f   = factors_of(x);
    __m256i            acc = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < QK_K / 32; ++k) {
        acc = acc_u8s8_scaled(acc, sub_block_u<Block, Gather>(x, k), load256(y.qs + 32 * k), lane_word(f.scale, k));
    }
    return isum_lanes(acc, f.weight, y);
}

#if defined(GK_SIMD_AVX2)
/// The AVX2 set's tile policy (vec_dot_tile_rows.h): a row holds u of the 8 sub-blocks,
/// the scale words lane_word(scale, k) and the bsums weights; iq_dot's d and factor.
template <class Block>
struct iq_rows {
    using block                   = Block;
    static constexpr float factor = format<Block>::factor;
    static constexpr bool  mins   = false;
    struct row {
        __m256i u[QK_K / 32];
        __m256i scale[QK_K / 32];
        __m256i weight;
    };
    static void unpack(const Block & x, row & r, float & d, float &) {
        // the scalar codes: with codes16 here GCC 12's tile lost 7 % (AVX2 set on Zen 4,
        // 4096 x 14336 x 512: iq2_xxs 114 -> 107 GFLOP/s, iq3_xxs 112 -> 104), though it
        // unpacks a row once per 64 columns
        const half_factors f = factors_of<Block, false>(x);
        for (int k = 0; k < QK_K / 32; ++k) {
            r.u[k]     = sub_block_u(x, k);
            r.scale[k] = lane_word(f.scale, k);
        }
        r.weight = f.weight;
        d        = simd::half_to_float(format<Block>::d(x));
    }
    static __m256i product(__m256i acc, const row & r, int k, __m256i a) {
        return acc_u8s8_scaled(acc, r.u[k], a, r.scale[k]);
    }
    static __m256i isum_lanes(__m256i acc, const row & r, const block_q8_K & y) {
        return iq::isum_lanes(acc, r.weight, y);
    }
};
#endif

#if defined(GK_TILE_AVX512)

/// format<Block> for the tile (vec_dot_tile_q8k.h): u = w + o by the sign mask (iq1_s too:
/// its shift is a sign per sub-block), F::scale_groups groups (the halves, or the
/// sub-blocks) with scale ls, d by F::d, and F::factor. Gather: the grid rows by
/// load_coords' gather (iq3_xxs, iq3_s, on hosts with fast_gather). gk-bench 4096 x 256 x
/// 64 on the Emerald Rapids Xeon, gk alone, four alternating runs: iq3_xxs (VNNI tile)
/// 121-173 -> 160-210 GFLOP/s, iq3_s (AMX) 155-217 -> 165-260.
template <class Block, bool Gather = false>
struct tile_format : q8k_tile_format<Block, format<Block>::scale_groups, weight_offset<format<Block>>, false> {
    using F = format<Block>;
    static constexpr float factor = F::factor;
    // 3-bit digits where |w| * 7 fits a signed byte (iq3_s |w| <= 15, iq1 |w| <= 9; the
    // scales 2 ls + 1 <= 31): two planes
    static constexpr int planes     = F::tile_planes;
    static constexpr int digit_bits = 3;

    /// u of the sub-blocks of x from the grid indices of their rows, index(r).
    template <class Index> static void set_weights(const Block & x, Index index, q8k_tile_row & r) {
        r.set_quants([&](int k) {
            return sub_block_weights<F>(x, k, load_coords<F>(k, index));
        });
    }

    /// The split grid indices of x, 16 at a time: row 16i + j has its high bits in
    /// F::high(x, 2i + j / 8), at F::high_shift(j % 8).
    static void split_indices(const Block & x, uint32_t * idx) {
        alignas(64) static constexpr int32_t shift[16] = {
            F::high_shift(0), F::high_shift(1), F::high_shift(2), F::high_shift(3), F::high_shift(4), F::high_shift(5),
            F::high_shift(6), F::high_shift(7), F::high_shift(0), F::high_shift(1), F::high_shift(2), F::high_shift(3),
            F::high_shift(4), F::high_shift(5), F::high_shift(6), F::high_shift(7)};
        for (int i = 0; i < QK_K / row_len<F> / 16; ++i) {
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(F::low(x) + 16 * i));
            const __m512i low   = _mm512_cvtepu8_epi32(bytes);
            const __m512i high  = _mm512_inserti32x8(_mm512_set1_epi32(static_cast<int>(F::high(x, 2 * i))),
                                                     _mm256_set1_epi32(static_cast<int>(F::high(x, 2 * i + 1))), 1);
            const __m512i bits  = _mm512_and_si512(_mm512_srlv_epi32(high, _mm512_load_si512(shift)),
                                                   _mm512_set1_epi32(static_cast<int>(F::high_mask)));
            _mm512_store_si512(idx + 16 * i, _mm512_or_si512(low, _mm512_slli_epi32(bits, 8)));
        }
    }

    static void unpack(const Block & x, q8k_tile_row & r) {
        if constexpr (Gather) {
            r.set_quants([&](int k) { return sub_block_weights<F>(x, k, load_coords<F, true>(x, k)); });
        } else if constexpr (split_index<F>) {
            alignas(64) uint32_t idx[QK_K / row_len<F>];
            split_indices(x, idx);
            set_weights(x, [&](int i) { return idx[i]; }, r);
        } else {
            set_weights(x, [&](int i) { return F::index(x, i); }, r);
        }
        // group 2k + h is half h of sub-block k (16 groups), or group k sub-block k (8)
        const half_codes c     = F::halves(x);
        const __m128i    lo    = _mm_cvtsi64_si128(static_cast<int64_t>(c.lo));
        const __m128i    hi    = _mm_cvtsi64_si128(static_cast<int64_t>(c.hi));
        const __m128i    codes = F::scale_groups == 16 ? _mm_unpacklo_epi8(lo, hi) : lo;
        r.set_scales(_mm512_add_epi32(_mm512_slli_epi32(_mm512_cvtepu8_epi32(codes), 1), _mm512_set1_epi32(1)));
        r.d = simd::half_to_float(F::d(x));
    }
};

#endif

#elif defined(GK_SIMD_NEON)

using namespace simd::neon;

/// The weights w of values 16h .. 16h + 15 of sub-block k as signed bytes; the negation
/// mask as on x86 (top bit per byte), then widened to whole bytes.
template <class F, class Block> int8x16_t signed_weights(const Block & x, int k, int h) {
    const int8x16_t  g = vcombine_s8(vcreate_s8(coords8<F>(x, k, 2 * h)), vcreate_s8(coords8<F>(x, k, 2 * h + 1)));
    const uint8x16_t w = vreinterpretq_u8_u64(vdupq_n_u64(F::sign_word(x, k)));
    const uint8x16_t b = vqtbl1q_u8(w, vld1q_u8(sign_lanes_of<F>.index + 16 * h));
    uint8x16_t       m = vtstq_u8(b, vld1q_u8(sign_lanes_of<F>.mask + 16 * h));
    if constexpr (has_parity<F>) {
        const uint64x2_t count = vpaddlq_u32(vpaddlq_u16(vpaddlq_u8(m)));
        m = vorrq_u8(m, vreinterpretq_u8_u64(vshlq_n_u64(count, 63)));
        m = vreinterpretq_u8_s8(vshrq_n_s8(vreinterpretq_s8_u8(m), 7));
    }
    const int8x16_t neg = vreinterpretq_s8_u8(m);
    if constexpr (F::shifted) {
        return vaddq_s8(vshlq_n_s8(g, 3), vorrq_s8(neg, vdupq_n_s8(1)));
    } else {
        return vsubq_s8(veorq_s8(g, neg), neg);
    }
}

/// Each half's products in 4 int32 lanes, scaled there by its ls (their sum is isum).
template <class Block, bool Gather = false>
i32v isum_simd(const Block & x, const block_q8_K & y) {
    static_assert(!Gather, "the gathered grid rows are x86's");
    using F              = format<Block>;
    const half_codes c   = F::halves(x);
    int32x4_t        acc = vdupq_n_s32(0);
    for (int k = 0; k < QK_K / 32; ++k) {
        for (int h = 0; h < 2; ++h) {
            const int32x4_t p = dot_s8(vdupq_n_s32(0), signed_weights<F>(x, k, h), load_s8(y.qs + 32 * k + 16 * h));
            acc               = vmlaq_n_s32(acc, p, half_scale(h ? c.hi : c.lo, k));
        }
    }
    return acc;
}

#endif

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)
/// The vector kernel: iq_dot's operations four super-blocks at a time, one per chain lane
/// (vec_dot_q8k.h's four_block_rows: their integer sums reduced together, their d formed
/// four at a time), the last nb % 4 as iq_dot. gk-bench decode on a Zen 4, against iq_dot
/// (one reduction per super-block, the chains in memory): AVX-512 set iq2_xs 0.97 -> 1.10
/// of ggml, iq2_xxs 1.02 -> 1.12, iq3_xxs 1.02 -> 1.18, iq2_s 1.12 -> 1.20; AVX2 set iq2_xs
/// 0.94 -> 0.98, iq3_xxs 1.01 -> 1.12.
template <class Block, bool Gather = false>
void iq_dot_simd(int64_t n, float * s, const void * vx, const void * vy) {
    using F        = format<Block>;
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const block_q8_K *>(vy);
    *s             = four_block_rows<i32v>(
        n / QK_K, [&](int64_t b) { return isum_simd<Block, Gather>(x[b], y[b]); },
        [&](f32x4 acc, int64_t b, const i32v(&r)[4]) {
            const f32x4 wd     = halves4(F::d(x[b]), F::d(x[b + 1]), F::d(x[b + 2]), F::d(x[b + 3]));
            const f32x4 factor = floats4(F::factor, F::factor, F::factor, F::factor);
            const f32x4 d      = mul4(mul4(wd, floats4(y[b].d, y[b + 1].d, y[b + 2].d, y[b + 3].d)), factor);
            return fma4(d, to_f32x4(i32v_sum4(r[0], r[1], r[2], r[3])), acc);
        },
        [&](block_chains & ch, int64_t b, const i32v & r) {
            ch.add(b, simd::half_to_float(F::d(x[b])) * y[b].d * F::factor, static_cast<float>(i32v_sum(r)));
        });
}

template <class Block> constexpr vec_dot_fn fast_dot = iq_dot_simd<Block>;
#else
template <class Block> constexpr vec_dot_fn fast_dot = iq_dot<Block, isum_scalar<Block>>;
#endif

template <class Block> constexpr vec_dot_fn twin_dot = iq_dot<Block, isum_scalar<Block>>;

} // namespace
} // namespace gk::cpu::detail::iq

/// Defines the tile kernel `name` of Block (in gk::cpu::detail): the q8_K tile with
/// AVX-512 VNNI, the row tile in the AVX2 set.
#if defined(GK_SIMD_AVX2)
#define GK_DEFINE_IQ_TILE(name, Block) GK_DEFINE_ROWS_TILE(name, iq::iq_rows<Block>)
#else
#define GK_DEFINE_IQ_TILE(name, Block) GK_DEFINE_Q8K_TILE(name, iq::tile_format<Block>)
#endif

/// Defines kernel `name` for Block and its twin name##_scalar (in gk::cpu::detail).
#define GK_DEFINE_IQ_DOT(name, Block)                                                                      \
    void name(int64_t n, float * s, const void * x, const void * y) { iq::fast_dot<Block>(n, s, x, y); } \
    void name##_scalar(int64_t n, float * s, const void * x, const void * y) { iq::twin_dot<Block>(n, s, x, y); }
