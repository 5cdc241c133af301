// vec_dot_tile_impl.h - what the tile kernel files share: the vector level they need, the
// kernels the table in vec_dot_tile.cpp lists and the transposes that interleave 16 weight
// rows (AVX-512) or 8 (AVX2). Internal to src/gk/cpu/vec_dot_tile* and the format files
// that define tile kernels.
#pragma once

#include "simd.h"
#include "vec_dot_tile.h"

#include <cstddef>

// The tile kernels use 512-bit registers (one 32-bit lane per weight row) and VPDPBUSD.
#if defined(GK_SIMD_AVX512) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define GK_TILE_AVX512 1
#endif

namespace gk::cpu {

/// This kernel set's tile kernel of `type`, or nullptr (get_tile_kernel's source).
const tile_kernel * tile_table(gk_type type);

} // namespace gk::cpu

namespace gk::cpu::detail {

#if defined(GK_TILE_AVX512) || defined(GK_SIMD_AVX2)
// The integer formats' tile kernels, each with its AMX variant name_amx on the AVX-512 set:
#if defined(GK_TILE_AVX512)
#define GK_DECLARE_INT_TILE(name) extern const tile_kernel name, name##_amx;
#else
#define GK_DECLARE_INT_TILE(name) extern const tile_kernel name;
#endif
// the formats against q8_K: the AVX-512 VNNI tile (vec_dot_tile_q8k.h) or the AVX2 set's
// (vec_dot_tile_rows.h)
GK_DECLARE_INT_TILE(tile_q2_K)
GK_DECLARE_INT_TILE(tile_q3_K)
GK_DECLARE_INT_TILE(tile_q4_K)
GK_DECLARE_INT_TILE(tile_q5_K)
GK_DECLARE_INT_TILE(tile_q6_K)
GK_DECLARE_INT_TILE(tile_iq4_xs)
GK_DECLARE_INT_TILE(tile_tq1_0)
GK_DECLARE_INT_TILE(tile_tq2_0)
GK_DECLARE_INT_TILE(tile_iq2_xxs)
GK_DECLARE_INT_TILE(tile_iq2_xs)
GK_DECLARE_INT_TILE(tile_iq2_s)
GK_DECLARE_INT_TILE(tile_iq3_xxs)
GK_DECLARE_INT_TILE(tile_iq3_s)
GK_DECLARE_INT_TILE(tile_iq1_s)
GK_DECLARE_INT_TILE(tile_iq1_m)
// the formats against q8_0 / q8_1 (vec_dot_tile_blocks.h)
GK_DECLARE_INT_TILE(tile_q8_0)
GK_DECLARE_INT_TILE(tile_q8_1)
GK_DECLARE_INT_TILE(tile_q4_0)
GK_DECLARE_INT_TILE(tile_q4_1)
GK_DECLARE_INT_TILE(tile_q5_0)
GK_DECLARE_INT_TILE(tile_q5_1)
GK_DECLARE_INT_TILE(tile_iq4_nl)
GK_DECLARE_INT_TILE(tile_mxfp4)
GK_DECLARE_INT_TILE(tile_nvfp4)
GK_DECLARE_INT_TILE(tile_q1_0)
GK_DECLARE_INT_TILE(tile_q2_0)
#endif

#if defined(GK_TILE_AVX512)
/// The tile of iq3_xxs or iq3_s (its AMX variant where `amx`) with the grid rows gathered
/// (vec_dot_iq.h's tile_format), on a host with fast_gather (cpu_features.h); else, and for
/// other types, nullptr. Same bits as the plain tiles.
const tile_kernel * gathered_tile(gk_type type, bool amx);

extern const tile_kernel tile_f32;
extern const tile_kernel tile_f16;
extern const tile_kernel tile_bf16;

/// The last step of vec_dot for 16 rows times nc columns, lane r = row r: s[c * ldc + r] =
/// (c0 + c1) + (c2 + c3) for r < nr, chain j of column c the 16 floats at chains + 16 (4c + j).
inline void store_chain_sums(const float * chains, int nr, int nc, float * s, size_t ldc) {
    const __mmask16 mask = static_cast<__mmask16>((1u << nr) - 1);
    for (int c = 0; c < nc; ++c) {
        const float * ch  = chains + 64 * static_cast<size_t>(c);
        const __m512  sum = _mm512_add_ps(_mm512_add_ps(_mm512_load_ps(ch), _mm512_load_ps(ch + 16)),
                                          _mm512_add_ps(_mm512_load_ps(ch + 32), _mm512_load_ps(ch + 48)));
        _mm512_mask_storeu_ps(s + c * ldc, mask, sum);
    }
}

/// out[k] = simd::reduce_add(v[k]) for k < 8, with the same bits (each vector's lanes by
/// halving: l + 8, + 4, + 2, + 1), the eight reduced together: each add serves two or four
/// of them at once, in 11 shuffles and 4 adds where one at a time takes 8 operations each.
inline void reduce_add_8(const __m512 (&v)[8], float * out) {
    __m512 h[4], g[2];
    for (int p = 0; p < 4; ++p) {  // [v2p lanes l + (l + 8) | v2p+1 lanes l + (l + 8)], l < 8
        h[p] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * p], v[2 * p + 1], 0x44),
                             _mm512_shuffle_f32x4(v[2 * p], v[2 * p + 1], 0xEE));
    }
    for (int q = 0; q < 2; ++q) {  // 128-bit lane k: vector 4q + k, its lanes l + (l + 4), l < 4
        g[q] = _mm512_add_ps(_mm512_shuffle_f32x4(h[2 * q], h[2 * q + 1], 0x88),
                             _mm512_shuffle_f32x4(h[2 * q], h[2 * q + 1], 0xDD));
    }
    // 128-bit lane k: [vector k: l + (l + 2), l < 2 | vector 4 + k: the same]
    const __m512 f = _mm512_add_ps(_mm512_shuffle_ps(g[0], g[1], 0x44), _mm512_shuffle_ps(g[0], g[1], 0xEE));
    // 128-bit lane k: [vector k, vector 4 + k, ...]: lane 0 + lane 1 of each
    const __m512      e = _mm512_add_ps(_mm512_shuffle_ps(f, f, 0x88), _mm512_shuffle_ps(f, f, 0xDD));
    alignas(64) float t[16];
    _mm512_store_ps(t, e);
    for (int k = 0; k < 4; ++k) {
        out[k]     = t[4 * k];
        out[4 + k] = t[4 * k + 1];
    }
}

/// The outputs of a chain tile's RR x CC group (vec_dot_tile_float.cpp, _bf16.cpp):
/// s[c * ldc + r] = the lanes of t[r * CC + c] summed by halving (reduce_add_8).
template <int RR, int CC>
void store_outputs(const __m512 (&t)[8], float * s, size_t ldc) {
    static_assert(RR * CC <= 8);
    float out[8];
    reduce_add_8(t, out);
    for (int r = 0; r < RR; ++r) {
        for (int c = 0; c < CC; ++c) {
            s[c * ldc + r] = out[r * CC + c];
        }
    }
}

/// The outputs of a chain tile's RR x CC group from their 4 chains each: per lane
/// (c0 + c1) + (c2 + c3), then store_outputs.
template <int RR, int CC>
void store_chain_outputs(const __m512 (&acc)[RR][CC][4], float * s, size_t ldc) {
    __m512 t[8] = {};
    for (int r = 0; r < RR; ++r) {
        for (int c = 0; c < CC; ++c) {
            t[r * CC + c] = _mm512_add_ps(_mm512_add_ps(acc[r][c][0], acc[r][c][1]),
                                          _mm512_add_ps(acc[r][c][2], acc[r][c][3]));
        }
    }
    store_outputs<RR, CC>(t, s, ldc);
}

/// The driver of the chain tiles (vec_dot_tile_float.cpp, vec_dot_tile_bf16.cpp), a
/// tile kernel's body: rows in pairs (the last one alone), and for each, columns in threes
/// (the last one or two alone), each group of outputs by Micro::template run<RR, CC>(n,
/// rows, bx, columns, by, s, ldc) with s[c * ldc + r] its outputs.
template <class Micro>
void pair_triple_tile(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s,
                      size_t ldc) {
    const auto columns = [&]<int RR>(const char * x, float * out) {
        const char * y = static_cast<const char *>(vy);
        int          c = 0;
        for (; c + 3 <= nc; c += 3) {
            Micro::template run<RR, 3>(n, x, bx, y + c * by, by, out + c * ldc, ldc);
        }
        if (nc - c == 2) {
            Micro::template run<RR, 2>(n, x, bx, y + c * by, by, out + c * ldc, ldc);
        } else if (nc - c == 1) {
            Micro::template run<RR, 1>(n, x, bx, y + c * by, by, out + c * ldc, ldc);
        }
    };
    const char * x = static_cast<const char *>(vx);
    int          r = 0;
    for (; r + 2 <= nr; r += 2) {
        columns.template operator()<2>(x + r * bx, s + r);
    }
    if (r < nr) {
        columns.template operator()<1>(x + r * bx, s + r);
    }
}

/// 16 rows of 16 dwords (src + r * stride) into 16 vectors of 16 dwords (dst + 64 k): dword r
/// of vector k is dword k of row r, so that a vector holds the same 4 bytes of every row.
/// Both 64-byte aligned.
inline void transpose_16x16(const void * vsrc, size_t stride, void * vdst) {
    const auto * src = static_cast<const char *>(vsrc);
    auto *       dst = static_cast<char *>(vdst);
    __m512i      a[16], b[16];
    for (int r = 0; r < 16; ++r) {
        a[r] = _mm512_load_si512(src + r * stride);
    }
    for (int i = 0; i < 8; ++i) {  // rows 2i, 2i + 1: dwords 4L + t, t = 0..3, pairwise
        b[2 * i]     = _mm512_unpacklo_epi32(a[2 * i], a[2 * i + 1]);
        b[2 * i + 1] = _mm512_unpackhi_epi32(a[2 * i], a[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {  // a[4i + t]: rows 4i .. 4i + 3, dword 4L + t in 128-bit lane L
        a[4 * i]     = _mm512_unpacklo_epi64(b[4 * i], b[4 * i + 2]);
        a[4 * i + 1] = _mm512_unpackhi_epi64(b[4 * i], b[4 * i + 2]);
        a[4 * i + 2] = _mm512_unpacklo_epi64(b[4 * i + 1], b[4 * i + 3]);
        a[4 * i + 3] = _mm512_unpackhi_epi64(b[4 * i + 1], b[4 * i + 3]);
    }
    for (int h = 0; h < 2; ++h) {  // b[8h + t], b[8h + 4 + t]: rows 8h .. 8h + 7, lanes L even / odd
        for (int t = 0; t < 4; ++t) {
            b[8 * h + t]     = _mm512_shuffle_i32x4(a[8 * h + t], a[8 * h + 4 + t], 0x88);
            b[8 * h + 4 + t] = _mm512_shuffle_i32x4(a[8 * h + t], a[8 * h + 4 + t], 0xDD);
        }
    }
    for (int k = 0; k < 8; ++k) {  // b[k]: rows 0 .. 7, dwords k and k + 8; b[8 + k]: rows 8 .. 15
        _mm512_store_si512(dst + 64 * k, _mm512_shuffle_i32x4(b[k], b[8 + k], 0x88));
        _mm512_store_si512(dst + 64 * (k + 8), _mm512_shuffle_i32x4(b[k], b[8 + k], 0xDD));
    }
}

#endif

#if defined(GK_SIMD_AVX2)
/// How many maddubs steps of pair sums, each at most `pair_bound` in magnitude, an int16
/// accumulator takes before it must be widened: the largest power of two up to `max_steps`
/// (a power of two itself) whose sum still fits int16.
constexpr int int16_depth(int pair_bound, int max_steps) {
    int d = 1;
    while (2 * d <= max_steps && 2 * d * pair_bound <= 32767) {
        d *= 2;
    }
    return d;
}

/// 8 rows of 8 dwords into 8 vectors: dword r of v[i] is dword i of row r.
inline void transpose_8x8(__m256i (&v)[8]) {
    __m256i t[8];
    for (int i = 0; i < 4; ++i) {
        t[2 * i]     = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {  // rows 4i .. 4i + 3: dwords [0, 4 | ...] in v[4i], [1, 5] ...
        v[4 * i]     = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        v[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        v[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        v[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 4; ++i) {  // dwords i (low lanes) and i + 4 (high lanes) of rows 0 .. 3, 4 .. 7
        t[i]     = _mm256_permute2x128_si256(v[i], v[4 + i], 0x20);
        t[4 + i] = _mm256_permute2x128_si256(v[i], v[4 + i], 0x31);
    }
    for (int i = 0; i < 8; ++i) {
        v[i] = t[i];
    }
}
#endif

} // namespace gk::cpu::detail
