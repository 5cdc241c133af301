// vec_dot_tile_rows.h - the AVX2 set's tile for the formats against q8_K activations: up to
// 16 weight rows times up to 128 columns, each element bit-identical to its vec_dot. Two
// forms: the row form (rows_tile, described here; iq4_xs and the i-quants) and the lane
// form (lanes_tile, below; the K-quants and the ternaries).
//
// Per super-block b the rows are unpacked once into the work buffer by the format's
// policy P (P::row: the decoded quants and scales its products need). Every column's
// block b then meets them four rows at a time: its activation vectors are read once for
// the four rows, each row's exact isum (and isum_min where the format has mins) is formed
// by P::product and P::isum_lanes, the four are reduced together, and the float step is
// done for the four rows in one vector, lane r holding row r's chain b % 4 of the column:
//   chain = fma((d_r * activation d) * P::factor, float(isum), chain),
//   then, with mins, chain = fma(-(dmin_r * activation d), float(isum_min), chain),
// which is lane by lane what the format's vec_dot does (vec_dot_q8k.h, vec_dot_iq.h), so
// a column's bits never depend on the batch. Rows past nr repeat the last one and are
// not stored. Decoding a block is much of a vec_dot; here up to 128 columns share it
// (64 columns: q4_K 0.69, q5_K 0.64, q6_K 0.91 of ggml at 4096 x 1024 x 512 on an AVX2
// Zen 3; 128: 0.75, 0.75, 0.96).
//
// A policy P supplies: block (the weight block type), row (the unpacked form), factor,
// mins (bool), unpack(const block &, row &, float & d, float & dmin),
// product(acc, const row &, k, a) (acc plus vector k's scaled products with activation
// vector a), isum_lanes(acc, const row &, y) (the isum's int32 lanes from acc), and with
// mins, min_lanes(const row &, y). Internal to src/gk/cpu/vec_dot*.
#pragma once

#include "vec_dot_impl.h"
#include "vec_dot_tile.h"
#include "vec_dot_tile_impl.h"

#include "quant/k_quants.h"
#include "simd_x86.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(GK_SIMD_AVX2)

namespace gk::cpu::detail {

/// How the 16 words m of a row meet q8_K's bsums: not at all, as the mins (isum_min, its
/// own float step with dmin), or as an offset taken out of isum itself (isum - m . bsums).
enum class bsums_term { none, mins, offset };

/// What the policies of the K-quants, iq4_xs and tq1_0 share: factor 1, a row of 8 quant
/// vectors with their scale words (vector k: group 2k in the low lane, 2k + 1 in the high)
/// and the 16 words m in bsums order. Signed quants take |a| as maddubs' unsigned operand
/// and q with a's sign (|q| <= 127, |a| <= 128: the pair sums fit int16, a = -128
/// included); unsigned ones (at most 127) take a as is.
template <class Block, bsums_term Term, bool Signed>
struct rows_policy {
    using block                   = Block;
    static constexpr float factor = 1.0f;
    static constexpr bool  mins   = Term == bsums_term::mins;
    static constexpr bsums_term term = Term;
    struct row {
        __m256i q[quant::QK_K / 32];
        __m256i scale[quant::QK_K / 32];
        __m256i m;
    };
    static __m256i product(__m256i acc, const row & r, int k, __m256i a) {
        if constexpr (Signed) {
            return simd::x86::acc_u8s8_scaled(acc, _mm256_sign_epi8(a, a), _mm256_sign_epi8(r.q[k], a), r.scale[k]);
        } else {
            return simd::x86::acc_u8s8_scaled(acc, r.q[k], a, r.scale[k]);
        }
    }
    static __m256i m_dot(const row & r, const quant::block_q8_K & y) {
        return _mm256_madd_epi16(r.m, simd::x86::load256(y.bsums));
    }
    static __m256i isum_lanes(__m256i acc, const row & r, const quant::block_q8_K & y) {
        if constexpr (Term == bsums_term::offset) {
            return _mm256_sub_epi32(acc, m_dot(r, y));
        } else {
            return acc;
        }
    }
    static __m256i min_lanes(const row & r, const quant::block_q8_K & y) { return m_dot(r, y); }
};

/// The work buffer of rows_tile<P>.
template <class P>
struct rows_tile_work {
    typename P::row rows[16];
    float           d[16];
    float           dmin[16];
    __m128          chains[128][4][4];  // column, row group, chain j: lane r = row 4 group + r
};

template <class P>
void rows_tile(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s, size_t ldc,
               void * vwork) {
    using quant::block_q8_K;
    using quant::QK_K;
    auto &    w   = *static_cast<rows_tile_work<P> *>(vwork);
    const int ngr = (nr + 3) / 4;
    for (int c = 0; c < nc; ++c) {
        for (int g = 0; g < ngr; ++g) {
            for (__m128 & v : w.chains[c][g]) {
                v = _mm_setzero_ps();
            }
        }
    }
    for (int64_t b = 0; b < n / QK_K; ++b) {
        for (int r = 0; r < 4 * ngr; ++r) {
            const auto * x = reinterpret_cast<const typename P::block *>(static_cast<const char *>(vx) +
                                                                         (r < nr ? r : nr - 1) * bx) +
                             b;
            P::unpack(*x, w.rows[r], w.d[r], w.dmin[r]);
        }
        for (int c = 0; c < nc; ++c) {
            const block_q8_K & y  = reinterpret_cast<const block_q8_K *>(static_cast<const char *>(vy) + c * by)[b];
            const __m128       yd = _mm_set1_ps(y.d);
            for (int g = 0; g < ngr; ++g) {
                const typename P::row * row = w.rows + 4 * g;
                __m256i acc[4]              = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                                               _mm256_setzero_si256()};
                for (int k = 0; k < QK_K / 32; ++k) {
                    const __m256i a = simd::x86::load256(y.qs + 32 * k);
                    for (int r = 0; r < 4; ++r) {
                        acc[r] = P::product(acc[r], row[r], k, a);
                    }
                }
                const __m128i isum = simd::x86::hsum4_i32(
                    P::isum_lanes(acc[0], row[0], y), P::isum_lanes(acc[1], row[1], y),
                    P::isum_lanes(acc[2], row[2], y), P::isum_lanes(acc[3], row[3], y));
                const __m128 d  = _mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(w.d + 4 * g), yd), _mm_set1_ps(P::factor));
                __m128 &     ch = w.chains[c][g][b & 3];
                ch              = _mm_fmadd_ps(d, _mm_cvtepi32_ps(isum), ch);
                if constexpr (P::mins) {
                    const __m128i isum_min = simd::x86::hsum4_i32(P::min_lanes(row[0], y), P::min_lanes(row[1], y),
                                                                  P::min_lanes(row[2], y), P::min_lanes(row[3], y));
                    const __m128  dmin = _mm_xor_ps(_mm_mul_ps(_mm_loadu_ps(w.dmin + 4 * g), yd), _mm_set1_ps(-0.0f));
                    ch                 = _mm_fmadd_ps(dmin, _mm_cvtepi32_ps(isum_min), ch);
                }
            }
        }
    }
    for (int c = 0; c < nc; ++c) {
        for (int g = 0; g < ngr; ++g) {
            const __m128 *    ch = w.chains[c][g];
            alignas(16) float sum[4];
            _mm_store_ps(sum, _mm_add_ps(_mm_add_ps(ch[0], ch[1]), _mm_add_ps(ch[2], ch[3])));
            for (int r = 4 * g; r < 4 * g + 4 && r < nr; ++r) {
                s[c * ldc + r] = sum[r - 4 * g];
            }
        }
    }
}

/// Defines the tile kernel `name` of the policy named by the remaining arguments.
#define GK_DEFINE_ROWS_TILE(name, ...) \
    const tile_kernel name = {rows_tile<__VA_ARGS__>, 16, 128, sizeof(rows_tile_work<__VA_ARGS__>), false};

// ---- the lane form: one row per 32-bit lane ---------------------------------------------
//
// For a policy whose quants are unsigned and small (P::max_q: q2_K 3, q3_K 7, q4_K 15,
// q5_K 31, q6_K 63, tq1_0 2, tq2_0 3) the rows can instead be interleaved as the tile of
// the q8_0 formats interleaves them (vec_dot_tile_blocks.h): per super-block each row's
// quant vectors, scale words and 16 bsums words are transposed by dwords, 8 rows to a
// register, so that 32-bit lane r holds row r. Four activation bytes broadcast to every
// lane then meet 8 rows at once, maddubs' int16 pair sums (at most 2 x max_q x 128) are
// added as int16 over `depth` steps of one scale group (P::group_steps four-byte steps
// share a scale), and one madd with the group's scale words widens them into the row's
// isum. Every row's isum, isum_min and float steps are those of rows_tile above, lane by
// lane, with no horizontal sums: two vector operations per 32 products where rows_tile
// spends three and a reduction.

/// The work buffer of lanes_tile<P>.
template <class P>
struct lanes_tile_work {
    static constexpr int max_cols = 64;
    typename P::row      rows[16];
    alignas(32) int8_t q[2][quant::QK_K / 32][8][32];    // half, vector k, step t: lane r = row 8 half + r
    alignas(32) int16_t sc[2][quant::QK_K / 32][8][16];  // the scale words of the step's two pairs
    alignas(32) int16_t m[2][8][16];                     // words 2t, 2t + 1 of the row's m
    alignas(32) float d[16];
    alignas(32) float dmin[16];
    alignas(32) float chains[max_cols][2][4][8];  // column, half, chain j: lane r = row 8 half + r
};

/// 8 rows' vectors (v(r), r < 8) transposed into out[t] (8 x 32 bytes).
template <class V>
void store_lanes(V v, void * out) {
    __m256i t[8];
    for (int r = 0; r < 8; ++r) {
        t[r] = v(r);
    }
    transpose_8x8(t);
    for (int i = 0; i < 8; ++i) {
        _mm256_store_si256(static_cast<__m256i *>(out) + i, t[i]);
    }
}

/// Columns y[0 .. C-1] of super-block b, rows 8h .. 8h + 7 (lanes_tile_work's layout).
template <class P, int C>
void lanes_columns(lanes_tile_work<P> & w, const quant::block_q8_K * const (&y)[C], int c0, int h, int64_t b) {
    constexpr int depth = int16_depth(2 * P::max_q * 128, P::group_steps);  // steps before the madd
    const auto    bcast = [](const void * p) {
        int32_t v;
        std::memcpy(&v, p, sizeof v);
        return _mm256_set1_epi32(v);
    };
    __m256i isum[C];
    for (int c = 0; c < C; ++c) {
        isum[c] = _mm256_setzero_si256();
    }
    for (int k = 0; k < quant::QK_K / 32; ++k) {
        for (int t0 = 0; t0 < 8; t0 += depth) {
            __m256i pairs[C];
            for (int c = 0; c < C; ++c) {
                pairs[c] = _mm256_setzero_si256();
            }
            for (int t = t0; t < t0 + depth; ++t) {
                const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i *>(w.q[h][k][t]));
                for (int c = 0; c < C; ++c) {
                    pairs[c] = _mm256_add_epi16(pairs[c], _mm256_maddubs_epi16(q, bcast(y[c]->qs + 32 * k + 4 * t)));
                }
            }
            const __m256i sc = _mm256_load_si256(reinterpret_cast<const __m256i *>(w.sc[h][k][t0]));
            for (int c = 0; c < C; ++c) {
                isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(pairs[c], sc));
            }
        }
    }
    const __m256 d    = _mm256_load_ps(w.d + 8 * h);
    const __m256 dmin = _mm256_load_ps(w.dmin + 8 * h);
    for (int c = 0; c < C; ++c) {
        __m256i mdot = _mm256_setzero_si256();
        for (int t = 0; t < 8; ++t) {
            mdot = _mm256_add_epi32(mdot,
                                    _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i *>(w.m[h][t])),
                                                      bcast(y[c]->bsums + 2 * t)));
        }
        const __m256 yd = _mm256_set1_ps(y[c]->d);
        __m256 &     ch = *reinterpret_cast<__m256 *>(w.chains[c0 + c][h][b & 3]);
        __m256i      is = isum[c];
        if constexpr (P::term == bsums_term::offset) {
            is = _mm256_sub_epi32(is, mdot);
        }
        ch = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(d, yd), _mm256_set1_ps(P::factor)), _mm256_cvtepi32_ps(is),
                             ch);
        if constexpr (P::mins) {
            ch = _mm256_fmadd_ps(_mm256_xor_ps(_mm256_mul_ps(dmin, yd), _mm256_set1_ps(-0.0f)),
                                 _mm256_cvtepi32_ps(mdot), ch);
        }
    }
}

/// The lane form's tile kernel (vec_dot_tile.h): 16 rows, up to 64 columns.
template <class P>
void lanes_tile(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s,
                size_t ldc, void * vwork) {
    using quant::block_q8_K;
    using quant::QK_K;
    auto &    w      = *static_cast<lanes_tile_work<P> *>(vwork);
    const int halves = nr > 8 ? 2 : 1;
    std::memset(w.chains, 0, sizeof(w.chains[0]) * static_cast<size_t>(nc));
    for (int64_t b = 0; b < n / QK_K; ++b) {
        for (int r = 0; r < 8 * halves; ++r) {  // rows past nr repeat the last one, never stored
            const auto * x = reinterpret_cast<const typename P::block *>(static_cast<const char *>(vx) +
                                                                         (r < nr ? r : nr - 1) * bx) +
                             b;
            P::unpack(*x, w.rows[r], w.d[r], w.dmin[r]);
        }
        for (int h = 0; h < halves; ++h) {
            const typename P::row * row = w.rows + 8 * h;
            for (int k = 0; k < QK_K / 32; ++k) {
                store_lanes([&](int r) { return row[r].q[k]; }, w.q[h][k]);
                store_lanes([&](int r) { return row[r].scale[k]; }, w.sc[h][k]);
            }
            store_lanes([&](int r) { return row[r].m; }, w.m[h]);
        }
        const auto column = [&](int c) {
            return reinterpret_cast<const block_q8_K *>(static_cast<const char *>(vy) + c * by) + b;
        };
        int c = 0;
        for (; c + 4 <= nc; c += 4) {
            const block_q8_K * const y[4] = {column(c), column(c + 1), column(c + 2), column(c + 3)};
            for (int h = 0; h < halves; ++h) {
                lanes_columns<P, 4>(w, y, c, h, b);
            }
        }
        for (; c < nc; ++c) {
            const block_q8_K * const y[1] = {column(c)};
            for (int h = 0; h < halves; ++h) {
                lanes_columns<P, 1>(w, y, c, h, b);
            }
        }
    }
    for (int c = 0; c < nc; ++c) {
        for (int h = 0; h < halves; ++h) {
            const auto &      ch = w.chains[c][h];
            alignas(32) float sum[8];
            _mm256_store_ps(sum, _mm256_add_ps(_mm256_add_ps(_mm256_load_ps(ch[0]), _mm256_load_ps(ch[1])),
                                               _mm256_add_ps(_mm256_load_ps(ch[2]), _mm256_load_ps(ch[3]))));
            for (int r = 8 * h; r < 8 * h + 8 && r < nr; ++r) {
                s[c * ldc + r] = sum[r - 8 * h];
            }
        }
    }
}

/// Defines the lane-form tile kernel `name` of policy P.
#define GK_DEFINE_LANES_TILE(name, P) \
    const tile_kernel name = {lanes_tile<P>, 16, lanes_tile_work<P>::max_cols, sizeof(lanes_tile_work<P>), false};

}  // namespace gk::cpu::detail

#endif
