// vec_dot_ternary.cpp - integer dots of the ternary formats against q8_K activations:
// tq1_0 and tq2_0, each a vector kernel, its scalar twin and a tile kernel (AVX-512 VNNI,
// vec_dot_tile_q8k.h: the digits q with offset 1 through the x86 views).
//
// Per super-block b (256 elements), in exact int32: isum = sum of (q - 1) * a, q the stored
// digit (tq1_0: a base-3 digit, 0..2; tq2_0: a 2-bit field, 0..3, so level 2 exists in
// arbitrary bytes). Then d = f32(weight d) * activation d and chain b % 4 += d * float(isum)
// (fused); the dot is (c0 + c1) + (c2 + c3) (vec_dot_q8k.h).
//
// The twins sum the levels q - 1 directly; the vector kernels, as ggml does, dot the
// unsigned digits q and subtract the sum of a (q8_K's bsums), the same integer.
//
// tq1_0's digit n of a packed byte b is ((b * 3^n mod 256) * 3) >> 8 (low_bit.h), which is
// [x >= 86] + [x >= 171] for x = b * 3^n mod 256: the vector kernels compare instead of
// multiplying twice.
#include "vec_dot_q8k.h"
#include "vec_dot_tile_q8k.h"

#include "quant/low_bit.h"

#include <cstring>

namespace gk::cpu::detail {
namespace {

using quant::block_q8_K;
using quant::block_tq1_0;
using quant::block_tq2_0;
using quant::QK_K;

constexpr uint8_t k_pow3[5] = {1, 3, 9, 27, 81};

/// Digit n (0 = most significant) of a base-3 packed byte.
int trit(uint8_t b, int n) { return (static_cast<uint8_t>(b * k_pow3[n]) * 3) >> 8; }

/// The digits in w.q turned into levels q - 1, with unit scales and no mins.
void to_levels(unpacked_sb & w) {
    for (int e = 0; e < QK_K; ++e) {
        w.q[e] = static_cast<int8_t>(w.q[e] - 1);
    }
    for (int g = 0; g < QK_K / 16; ++g) {
        w.sc[g] = 1;
        w.m[g]  = 0;
    }
}

/// Digit n of `bytes` packed bytes of base-3 digits, for n < digits, into q[n * bytes ..]
/// (the runs of block_tq1_0: qs[0..31], qs[32..47], qh).
void unpack_trits(const uint8_t * packed, int bytes, int digits, int8_t * q) {
    for (int n = 0; n < digits; ++n) {
        for (int m = 0; m < bytes; ++m) {
            q[n * bytes + m] = static_cast<int8_t>(trit(packed[m], n));
        }
    }
}

unpacked_sb unpack(const block_tq1_0 & x) {
    unpacked_sb w;
    unpack_trits(x.qs, 32, 5, w.q);
    unpack_trits(x.qs + 32, 16, 5, w.q + 160);
    unpack_trits(x.qh, 4, 4, w.q + 240);
    to_levels(w);
    return w;
}

unpacked_sb unpack(const block_tq2_0 & x) {
    unpacked_sb w;
    unpack_crumbs(x.qs, w.q);
    to_levels(w);
    return w;
}

#if defined(GK_SIMD_X86)

using namespace simd::x86;

/// Byte-wise x * 3 and x * 9 (mod 256): AVX2 has no byte multiply.
__m256i times3(__m256i x) { return _mm256_add_epi8(x, _mm256_add_epi8(x, x)); }
__m256i times9(__m256i x) {
    return _mm256_add_epi8(x, _mm256_and_si256(_mm256_slli_epi16(x, 3), _mm256_set1_epi8(static_cast<char>(0xF8))));
}

/// tq1_0's digits by vector k (elements 32k .. 32k + 31). Each packed byte is flipped
/// (xor 0x80) before it is multiplied: 3^n is odd, so (b ^ 0x80) * 3^n = (b * 3^n) ^ 0x80
/// (mod 256), and the digit's two unsigned thresholds become signed compares.
struct tq1_view {
    __m256i m[8];  // vector k's bytes times 3^(its digit), flipped

    explicit tq1_view(const block_tq1_0 & x) {
        const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
        // elements 0..159: digit k of qs[0..31]
        const __m256i q = _mm256_xor_si256(load256(x.qs), flip);
        m[0] = q;
        m[1] = times3(q);
        m[2] = times9(q);
        m[3] = times9(m[1]);
        m[4] = times9(m[2]);
        // elements 160..239: digit n of qs[32..47] by 16; 240..255: digit n of qh[0..3] by 4
        uint32_t qh;
        std::memcpy(&qh, x.qh, sizeof qh);
        const __m128i tail = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.qs + 32));
        const __m256i t    = _mm256_xor_si256(_mm256_set_m128i(_mm_set1_epi32(static_cast<int>(qh)), tail), flip);
        const __m256i t3 = times3(t), t9 = times9(t), t27 = times9(t3), t81 = times9(t9);
        m[5] = _mm256_permute2x128_si256(t, t3, 0x20);
        m[6] = _mm256_permute2x128_si256(t9, t27, 0x20);
        // low lane digit 4 of the tail; high lane dword n = qh times 3^n
        m[7] = _mm256_blend_epi32(_mm256_blend_epi32(_mm256_blend_epi32(_mm256_blend_epi32(t81, t, 0x10), t3, 0x20),
                                                     t9, 0x40),
                                  t27, 0x80);
    }

    /// Digits 0..2: x >= 86 and x >= 171 as signed compares of x ^ 0x80.
    __m256i quants(int k) const {
        const __m256i ge86  = _mm256_cmpgt_epi8(m[k], opaque(_mm256_set1_epi8(85 - 128)));
        const __m256i ge171 = _mm256_cmpgt_epi8(m[k], _mm256_set1_epi8(170 - 128));
        return _mm256_sub_epi8(_mm256_setzero_si256(), _mm256_add_epi8(ge86, ge171));
    }
};

/// tq2_0's 2-bit fields by vector k.
struct tq2_view {
    const uint8_t * qs;

    __m256i quants(int k) const { return crumbs(qs, k); }
};

/// isum = sum over k of w.quants(k) . a[32k ..] minus the sum of a.
/// Without VNNI the products are summed as int16 and widened once: a digit is at most 3
/// and |a| at most 128, so each maddubs pair sum is within +-768 and the 8 vectors' sums
/// within +-6144. gk-bench decode on an AVX2 Zen 3, side by side: tq2_0 0.94-0.95 -> 1.00,
/// tq1_0 0.95-0.96 -> 1.02-1.03 of ggml.
/// With VNNI the products accumulate in VPDPBUSD itself, on two chains (even and odd k)
/// so that its latency is not one chain of eight: the same int32 lanes as a separate add
/// per vector, one instruction fewer each.
template <class W> q8k_vsums ternary_sums(const W & w, const block_q8_K & y) {
    __m256i acc = _mm256_setzero_si256();
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    __m256i odd = _mm256_setzero_si256();
    for (int k = 0; k < QK_K / 32; k += 2) {
        acc = _mm256_dpbusd_epi32(acc, w.quants(k), load256(y.qs + 32 * k));
        odd = _mm256_dpbusd_epi32(odd, w.quants(k + 1), load256(y.qs + 32 * k + 32));
    }
    acc = _mm256_add_epi32(acc, odd);
#else
    for (int k = 0; k < QK_K / 32; ++k) {
        acc = _mm256_add_epi16(acc, _mm256_maddubs_epi16(w.quants(k), load256(y.qs + 32 * k)));
    }
    acc = _mm256_madd_epi16(acc, _mm256_set1_epi16(1));
#endif
    return {_mm256_sub_epi32(acc, bsums_dot(_mm256_set1_epi16(1), y)), i32v_zero()};
}

#elif defined(GK_SIMD_NEON)

using namespace simd::neon;

/// tq1_0's digits by group g (elements 16g .. 16g + 15).
struct tq1_view {
    const block_tq1_0 & x;

    /// The packed bytes of group g times 3^(their digit).
    uint8x16_t scaled(int g) const {
        if (g < 10) {  // digit g / 2 of qs[0..31]
            return vmulq_u8(load_u8(x.qs + 16 * (g % 2)), vdupq_n_u8(k_pow3[g / 2]));
        }
        if (g < 15) {  // digit g - 10 of qs[32..47]
            return vmulq_u8(load_u8(x.qs + 32), vdupq_n_u8(k_pow3[g - 10]));
        }
        uint32_t qh;  // digit n of qh[0..3] in bytes 4n .. 4n + 3
        std::memcpy(&qh, x.qh, sizeof qh);
        static constexpr uint8_t pow3_by4[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
        return vmulq_u8(vreinterpretq_u8_u32(vdupq_n_u32(qh)), vld1q_u8(pow3_by4));
    }
    /// Digits 0..2: -([x >= 86] + [x >= 171]) with compare masks of -1.
    uint8x16_t quants(int g) const {
        const uint8x16_t b = scaled(g);
        return vreinterpretq_u8_s8(
            vnegq_s8(vreinterpretq_s8_u8(vaddq_u8(vcgeq_u8(b, vdupq_n_u8(86)), vcgeq_u8(b, vdupq_n_u8(171))))));
    }
};

/// tq2_0's 2-bit fields by group g.
struct tq2_view {
    const uint8_t * qs;

    uint8x16_t quants(int g) const { return crumbs(qs, g); }
};

/// isum = sum over g of w.quants(g) . a[16g ..] minus the sum of a.
template <class W> q8k_vsums ternary_sums(const W & w, const block_q8_K & y) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int g = 0; g < QK_K / 16; ++g) {
        acc = dot_s8(acc, vreinterpretq_s8_u8(w.quants(g)), load_s8(y.qs + 16 * g));
    }
    const int32x4_t asum = vaddq_s32(vpaddlq_s16(vld1q_s16(y.bsums)), vpaddlq_s16(vld1q_s16(y.bsums + 8)));
    return {vsubq_s32(acc, asum), i32v_zero()};
}

#endif

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)
tq1_view  view_of(const block_tq1_0 & x) { return tq1_view{x}; }
tq2_view  view_of(const block_tq2_0 & x) { return tq2_view{x.qs}; }
q8k_vsums sums_simd(const block_tq1_0 & x, const block_q8_K & y) { return ternary_sums(view_of(x), y); }
q8k_vsums sums_simd(const block_tq2_0 & x, const block_q8_K & y) { return ternary_sums(view_of(x), y); }
#endif

#if defined(GK_SIMD_AVX2)
/// tq1_0 / tq2_0 for the AVX2 tile (vec_dot_tile_rows.h): the digits q (0..2 or 0..3)
/// through the format's x86 view, unit scales, and the -1 as the sum of a (bsums with
/// weights 1) inside the isum.
template <class Block>
struct ternary_rows : rows_policy<Block, bsums_term::offset, false> {
    using row = typename rows_policy<Block, bsums_term::offset, false>::row;
    static constexpr int max_q       = std::is_same_v<Block, block_tq1_0> ? 2 : 3;  // the lane form's bounds
    static constexpr int group_steps = 8;                                           // unit scales
    static void unpack(const Block & x, row & r, float & d, float &) {
        const auto w = view_of(x);
        for (int k = 0; k < QK_K / 32; ++k) {
            r.q[k]     = w.quants(k);
            r.scale[k] = _mm256_set1_epi16(1);
        }
        r.m = _mm256_set1_epi16(1);
        d   = simd::half_to_float(x.d);
    }
};
#endif

#if defined(GK_TILE_AVX512)

/// tq1_0 / tq2_0 for the tile (vec_dot_tile_q8k.h): u = the digit q through the format's
/// x86 view, offset 1, no group scales.
template <class Block> struct ternary_tile : q8k_tile_format<Block, 0, 1> {
    static void unpack(const Block & x, q8k_tile_row & r) {
        const auto w = view_of(x);
        r.set_quants([&](int k) { return w.quants(k); });
        r.set_d(x);
    }
};

#endif

} // namespace

GK_DEFINE_Q8K_DOT(vec_dot_tq1_0_q8_K, block_tq1_0)
GK_DEFINE_Q8K_DOT(vec_dot_tq2_0_q8_K, block_tq2_0)
GK_DEFINE_Q8K_TILE(tile_tq1_0, ternary_tile<block_tq1_0>)
GK_DEFINE_Q8K_TILE(tile_tq2_0, ternary_tile<block_tq2_0>)
#if defined(GK_SIMD_AVX2)
GK_DEFINE_LANES_TILE(tile_tq1_0, ternary_rows<block_tq1_0>)
GK_DEFINE_LANES_TILE(tile_tq2_0, ternary_rows<block_tq2_0>)
#endif

} // namespace gk::cpu::detail
