// vec_dot_k.cpp - integer dots of the K-quants against q8_K activations: q4_K, q5_K and
// q6_K, each a vector kernel and its scalar twin.
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

#include "quant/k_quants.h"
#include "simd_x86.h"

namespace gk::cpu::detail {
namespace {

using quant::block_q4_K;
using quant::block_q5_K;
using quant::block_q6_K;
using quant::block_q8_K;
using quant::QK_K;
using quant::unpack_scale_min_k4;

/// The integer sums of one super-block: the scaled products and (q4_K, q5_K) the
/// min-weighted activation sums.
struct k_sums {
    int32_t isum     = 0;
    int32_t isum_min = 0;
};

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

template <class Block> k_sums sums_scalar(const Block & x, const block_q8_K & y) {
    k_sums r;
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

k_sums sums_scalar(const block_q6_K & x, const block_q8_K & y) {
    k_sums r;
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

/// chain b % 4 += d * isum (- dmin * isum_min where the format has mins): the float
/// step the kernels and the twins share.
template <class Block>
void accumulate(block_chains & ch, int64_t b, const Block & x, const block_q8_K & y, const k_sums & r) {
    ch.add(b, fp16_to_fp32(x.d) * y.d, static_cast<float>(r.isum));
    if constexpr (requires { x.dmin; }) {
        ch.add(b, -(fp16_to_fp32(x.dmin) * y.d), static_cast<float>(r.isum_min));
    }
}

/// A whole row given the per-super-block integer sums `sums(x, y)`.
template <class Block, k_sums (*sums)(const Block &, const block_q8_K &)>
void k_dot(int64_t n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const block_q8_K *>(vy);
    block_chains ch;
    for (int64_t b = 0; b < n / QK_K; ++b) {
        accumulate(ch, b, x[b], y[b], sums(x[b], y[b]));
    }
    *s = ch.sum();
}

#if defined(GK_SIMD_X86)

using namespace simd::x86;

/// sum over j of m_j * (bsums[2j] + bsums[2j+1]) for the 8 mins of a q4_K / q5_K block.
int32_t mins_sum(const uint8_t (&m)[8], const block_q8_K & y) {
    int32_t r = 0;
    for (int j = 0; j < 8; ++j) {
        r += m[j] * (y.bsums[2 * j] + y.bsums[2 * j + 1]);
    }
    return r;
}

/// q4_K / q5_K: 64 elements per step (sub-blocks 2c and 2c + 1); `high(c, lo, hi)` adds
/// the fifth bits of q5_K (identity for q4_K).
template <class Block, class High> k_sums sums_q45(const Block & x, const block_q8_K & y, High high) {
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
        unpack_scale_min_k4(j, x.scales, sc[j], m[j]);
    }
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m256i       acc  = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
        const __m256i q  = load256(x.qs + 32 * c);
        __m256i       lo = _mm256_and_si256(q, low4);
        __m256i       hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
        high(c, lo, hi);
        acc = _mm256_add_epi32(acc, dot_u8s8_scaled(lo, load256(y.qs + 64 * c), _mm256_set1_epi16(sc[2 * c])));
        acc = _mm256_add_epi32(acc,
                               dot_u8s8_scaled(hi, load256(y.qs + 64 * c + 32), _mm256_set1_epi16(sc[2 * c + 1])));
    }
    return {hsum_i32(acc), mins_sum(m, y)};
}

k_sums sums_simd(const block_q4_K & x, const block_q8_K & y) {
    return sums_q45(x, y, [](int, __m256i &, __m256i &) {});
}

k_sums sums_simd(const block_q5_K & x, const block_q8_K & y) {
    const __m256i qh  = load256(x.qh);
    const __m256i one = _mm256_set1_epi8(1);
    return sums_q45(x, y, [&](int c, __m256i & lo, __m256i & hi) {
        // bit 2c of qh[l] is the fifth bit of sub-block 2c, bit 2c + 1 that of 2c + 1
        const __m256i b_lo = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one);
        const __m256i b_hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one);
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(b_lo, 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(b_hi, 4));
    });
}

/// q6_K: each 32-byte vector of stored values (0..63) spans two groups of 16; the scale
/// vector holds group g's scale in its low 128 bits and g + 1's in its high ones. The
/// -32 comes out as 32 * sum over g of sc_g * bsums[g].
k_sums sums_simd(const block_q6_K & x, const block_q8_K & y) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i low2 = _mm256_set1_epi8(3);
    __m256i       acc  = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
        const __m256i l0 = load256(x.ql + 64 * h);
        const __m256i l1 = load256(x.ql + 64 * h + 32);
        const __m256i qh = load256(x.qh + 32 * h);
        const __m256i v[4] = {
            _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4)),
            _mm256_or_si256(_mm256_and_si256(l1, low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), low2), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), low2), 4)),
        };
        for (int k = 0; k < 4; ++k) {
            const int     g  = 8 * h + 2 * k;
            const __m256i sc = _mm256_set_m128i(_mm_set1_epi16(x.scales[g + 1]), _mm_set1_epi16(x.scales[g]));
            acc = _mm256_add_epi32(acc, dot_u8s8_scaled(v[k], load256(y.qs + 128 * h + 32 * k), sc));
        }
    }
    int32_t offset = 0;
    for (int g = 0; g < QK_K / 16; ++g) {
        offset += x.scales[g] * y.bsums[g];
    }
    return {hsum_i32(acc) - 32 * offset, 0};
}

template <class Block> constexpr vec_dot_fn fast_dot = k_dot<Block, sums_simd>;
#else
template <class Block> constexpr vec_dot_fn fast_dot = k_dot<Block, sums_scalar>;
#endif

template <class Block> constexpr vec_dot_fn twin_dot = k_dot<Block, sums_scalar>;

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

} // namespace gk::cpu::detail
