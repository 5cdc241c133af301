// vec_dot_tile_blocks.h - the tile kernel of every format vec_dot_blocks.h describes
// (weights against q8_0 / q8_1 activations): 16 weight rows (one 32-bit lane each) times
// up to 64 columns, each element bit-identical to the format's vec_dot.
//
// A row is walked in spans of 8 activation blocks (256 elements). Per span the 16 rows
// are unpacked once, with the format's own F::unpack, into signed bytes laid out so that
// 64 bytes hold elements 4k .. 4k + 3 of all 16 rows, plus per unit the weight scale, the
// offset m (q4_1, q5_1) and 128 times the sum of the unit's weights. Each column's span
// is biased once to unsigned bytes (a + 128), so that one VPDPBUSD (unsigned activation
// bytes times signed weight bytes) adds four products to every row's lane; the unit's
// exact integer sum is then dot - 128 * sum(w). vec_dot's float step follows lane by
// lane on the unit's chain u % 4: fma(weight scale * activation d, float(isum)), then
// for an offset format fma(m, activation s). Four columns go together, their chains in
// registers for the span. That is the AVX-512 VNNI tile; the AVX2 set's, below it, keeps
// the layout in 8-row halves and forms the products with maddubs.
//
// Internal to the format files (vec_dot_legacy.cpp, vec_dot_fp4.cpp, vec_dot_low_bit.cpp),
// which define their kernels with GK_DEFINE_BLOCK_TILE next to GK_DEFINE_BLOCK_DOT.
#pragma once

#include "vec_dot_blocks.h"
#include "vec_dot_tile_impl.h"

#include <cstring>

#if defined(GK_TILE_AVX512) || defined(GK_SIMD_AVX2)

namespace gk::cpu::detail {

/// The body both variants of block_tile<F> (T below) share: the row in spans of
/// T::span_blocks activation blocks, each span's rows unpacked once (T::unpack_span) and
/// met by the columns T::cols at a time, then one by one (T::span_columns), the chains in
/// the work buffer after T::unpacked and T::acts, and vec_dot's last step (T::store_sums).
template <class T>
void span_tile(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s,
               size_t ldc, void * work) {
    using unpacked       = typename T::unpacked;
    using acts           = typename T::acts;
    auto *        u      = static_cast<unpacked *>(work);
    auto *        ab     = reinterpret_cast<acts *>(static_cast<char *>(work) + sizeof(unpacked));
    auto *        chains = reinterpret_cast<float *>(static_cast<char *>(work) + sizeof(unpacked) + sizeof(acts));
    const char *  x      = static_cast<const char *>(vx);
    const char *  y      = static_cast<const char *>(vy);
    const int64_t nb     = n / QK8_0;  // activation blocks
    std::memset(chains, 0, sizeof(float) * T::rows * 4 * static_cast<size_t>(nc));
    for (int64_t kb = 0; kb < nb; kb += T::span_blocks) {
        const int nbk = static_cast<int>(nb - kb < T::span_blocks ? nb - kb : T::span_blocks);
        T::unpack_span(x, bx, nr, kb, nbk, *u);
        int c = 0;
        for (; c + T::cols <= nc; c += T::cols) {
            T::template span_columns<T::cols>(*u, *ab, y, by, c, kb, nbk, chains);
        }
        for (; c < nc; ++c) {
            T::template span_columns<1>(*u, *ab, y, by, c, kb, nbk, chains);
        }
    }
    T::store_sums(chains, nr, nc, s, ldc);
}

/// The activation blocks kb .. kb + nbk - 1 of columns c0 .. c0 + C - 1: yb[c] points at
/// column c's first, and a[c] receives their quants, XOR 0x80 (a + 128 as unsigned) where
/// Bias.
template <class Act, int C, bool Bias>
void span_acts(const char * y, size_t by, int c0, int64_t kb, int nbk, const Act * (&yb)[C], uint8_t (*a)[8 * QK8_0]) {
    for (int c = 0; c < C; ++c) {
        yb[c] = reinterpret_cast<const Act *>(y + (c0 + c) * by) + kb;
        for (int k = 0; k < nbk; ++k) {
            __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(yb[c][k].qs));
            if constexpr (Bias) {
                q = _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80)));
            }
            _mm256_store_si256(reinterpret_cast<__m256i *>(a[c] + QK8_0 * k), q);
        }
    }
}

/// Defines the tile kernel `name` of format F (and, on the AVX-512 set, name_amx).
#define GK_DEFINE_BLOCK_TILE(name, F)                                                                 \
    const tile_kernel name = {span_tile<block_tile<F>>, block_tile<F>::rows, block_tile<F>::max_cols, \
                              block_tile<F>::work_bytes, false};                                      \
    GK_DEFINE_BLOCK_TILE_AMX(name, F)

} // namespace gk::cpu::detail

#endif

#if defined(GK_TILE_AVX512)

#include "amx.h"

#define GK_DEFINE_BLOCK_TILE_AMX(name, F) const tile_kernel name##_amx = block_tile_amx_kernel<F>();

namespace gk::cpu::detail {

template <class F> struct block_tile {
    static constexpr int rows        = 16;
    static constexpr int max_cols    = 64;
    static constexpr int span_blocks = 8;                     // activation blocks per span
    static constexpr int span_elems  = span_blocks * QK8_0;   // 256
    static constexpr int unit_words  = F::unit / 4;           // VPDPBUSD steps per unit
    static constexpr int span_units  = span_elems / F::unit;  // 8, or 16 for 16-element units
    static constexpr int cols        = 4;                     // columns computed together

    /// One span of 16 rows, unpacked.
    struct unpacked {
        alignas(64) int8_t  q[span_elems * rows];      // q[64 k + 4 r + t] = element 4k + t of row r
        alignas(64) int32_t wsum[span_units][rows];    // 128 * sum of unit u's weights of row r
        alignas(64) float   ws[span_units][rows];      // weight scale of unit u, row r
        alignas(64) float   m[span_units][rows];       // offset of unit u, row r (q4_1, q5_1)
        alignas(64) int8_t  rowv[rows][span_elems];    // the bytes row by row, before interleaving
    };

    /// The activation bytes of one column's span, biased to unsigned.
    struct acts {
        alignas(64) uint8_t a[cols][span_elems];
    };

    static constexpr size_t work_bytes = sizeof(unpacked) + sizeof(acts) + sizeof(float) * rows * 4 * max_cols;

    /// Span s (activation blocks kb .. kb + nbk - 1) of rows 0 .. nr-1; other rows zero.
    static void unpack_span(const char * x, size_t bx, int nr, int64_t kb, int nbk, unpacked & u) {
        const int nu = nbk * QK8_0 / F::unit;
        for (int r = 0; r < rows; ++r) {
            if (r >= nr) {
                std::memset(u.rowv[r], 0, span_elems);
                for (int j = 0; j < span_units; ++j) {
                    u.ws[j][r] = 0.0f;
                    u.m[j][r]  = 0.0f;
                }
                continue;
            }
            const auto * xr = reinterpret_cast<const typename F::weight *>(x + r * bx);
            for (int k = 0; k < nbk; ++k) {
                _mm256_store_si256(reinterpret_cast<__m256i *>(u.rowv[r] + QK8_0 * k), F::unpack(xr, kb + k));
            }
            std::memset(u.rowv[r] + QK8_0 * nbk, 0, static_cast<size_t>(span_elems - QK8_0 * nbk));
            const int64_t ub = kb * QK8_0 / F::unit;
            for (int j = 0; j < nu; ++j) {
                u.ws[j][r] = weight_scale<F>(xr, ub + j);
                if constexpr (has_offset<F>) {
                    u.m[j][r] = simd::half_to_float(weight_of<F>(xr, ub + j).m);
                }
            }
        }
        for (int m = 0; m < span_elems / 64; ++m) {  // 16 dwords of every row at a time
            transpose_16x16(u.rowv[0] + 64 * m, span_elems, u.q + 1024 * m);
        }
        const __m512i ones = _mm512_set1_epi8(1);
        for (int j = 0; j < nu; ++j) {
            __m512i s = _mm512_setzero_si512();
            for (int t = 0; t < unit_words; ++t) {
                s = _mm512_dpbusd_epi32(s, ones, _mm512_load_si512(u.q + 64 * (j * unit_words + t)));
            }
            _mm512_store_si512(u.wsum[j], _mm512_slli_epi32(s, 7));
        }
    }

    /// Columns c0 .. c0 + C - 1 over one span: the units' integer sums and float steps.
    template <int C>
    static void span_columns(const unpacked & u, acts & ab, const char * y, size_t by, int c0, int64_t kb, int nbk,
                             float * chains) {
        using act = typename F::act;
        const act * yb[C];
        span_acts<act, C, true>(y, by, c0, kb, nbk, yb, ab.a);
        __m512 ch[C][4];
        for (int c = 0; c < C; ++c) {
            for (int j = 0; j < 4; ++j) {
                ch[c][j] = _mm512_load_ps(chains + (static_cast<size_t>(c0 + c) * 4 + j) * rows);
            }
        }
        const int nu = nbk * QK8_0 / F::unit;
        // unit j of the span is unit kb * 32 / unit + j of the row, a multiple of 4 plus j:
        // its chain is j % 4
        const auto unit = [&]<int J>(int j) {
            __m512i dot[C];
            for (int c = 0; c < C; ++c) {
                dot[c] = _mm512_setzero_si512();
            }
            for (int t = 0; t < unit_words; ++t) {
                const int     k = j * unit_words + t;
                const __m512i w = _mm512_load_si512(u.q + 64 * k);
                for (int c = 0; c < C; ++c) {
                    int32_t a4;
                    std::memcpy(&a4, ab.a[c] + 4 * k, sizeof a4);
                    dot[c] = _mm512_dpbusd_epi32(dot[c], _mm512_set1_epi32(a4), w);
                }
            }
            const __m512i wsum = _mm512_load_si512(u.wsum[j]);
            const __m512  ws   = _mm512_load_ps(u.ws[j]);
            for (int c = 0; c < C; ++c) {
                const act &  ya  = yb[c][j * F::unit / QK8_0];
                const __m512 d   = _mm512_mul_ps(ws, _mm512_set1_ps(simd::half_to_float(ya.d)));
                const __m512 isf = _mm512_cvtepi32_ps(_mm512_sub_epi32(dot[c], wsum));
                ch[c][J]         = _mm512_fmadd_ps(d, isf, ch[c][J]);
                if constexpr (has_offset<F>) {
                    ch[c][J] = _mm512_fmadd_ps(_mm512_load_ps(u.m[j]), _mm512_set1_ps(simd::half_to_float(ya.s)),
                                               ch[c][J]);
                }
            }
        };
        for (int j = 0; j < nu; j += 4) {
            unit.template operator()<0>(j);
            if (j + 1 < nu) unit.template operator()<1>(j + 1);
            if (j + 2 < nu) unit.template operator()<2>(j + 2);
            if (j + 3 < nu) unit.template operator()<3>(j + 3);
        }
        for (int c = 0; c < C; ++c) {
            for (int j = 0; j < 4; ++j) {
                _mm512_store_ps(chains + (static_cast<size_t>(c0 + c) * 4 + j) * rows, ch[c][j]);
            }
        }
    }

    /// vec_dot's last step (vec_dot_tile_impl.h).
    static void store_sums(const float * chains, int nr, int nc, float * s, size_t ldc) {
        store_chain_sums(chains, nr, nc, s, ldc);
    }
};

/// The same tile with the units' integer sums taken from AMX (amx.h) for 16 columns at a
/// time (formats with 32-element units): per unit one TDPBUSD of the 16 columns' biased
/// activation bytes (a: one column per row, F::unit bytes) by the unpacked span (b: the
/// unit's words, 64 bytes each), four units in flight; then each column's float steps,
/// unit by unit on its chains, exactly as block_tile's. Columns left over (fewer than 16)
/// take block_tile's VNNI path.
template <class F>
struct block_tile_amx : block_tile<F> {
    using base                  = block_tile<F>;
    using unpacked              = typename base::unpacked;
    static constexpr int cols   = 16;
    static constexpr int rows   = base::rows;
    static constexpr int elems  = base::span_elems;
    static constexpr int units  = base::span_units;
    static constexpr int u_word = base::unit_words;

    struct acts {
        alignas(64) uint8_t a[cols][elems];          // column c's span, biased
        alignas(64) int32_t dot[units][cols][rows];  // unit j's sums: column c, lane r = row r
        typename base::acts vnni;                    // the left-over columns' (block_tile)
    };

    static constexpr size_t work_bytes = sizeof(unpacked) + sizeof(acts) + sizeof(float) * rows * 4 * base::max_cols;

    /// Tiles 0-3: four units' sums (16 columns x 16 rows); 4, 5: a; 6, 7: b.
    static constexpr amx_config config() {
        amx_config cfg;
        for (int t = 0; t < 4; ++t) {
            cfg.tile(t, cols, 4 * rows);
        }
        cfg.tile(4, cols, F::unit).tile(5, cols, F::unit);
        cfg.tile(6, u_word, 64).tile(7, u_word, 64);
        return cfg;
    }

    /// Unit j's sums into tile T (a in tile 4 + T % 2, b in 6 + T % 2).
    template <int T>
    static void unit_dot(const unpacked & u, const acts & ab, int j) {
        constexpr int A = 4 + T % 2, B = 6 + T % 2;
        amx_load<A>(ab.a[0] + F::unit * j, elems);
        amx_load<B>(u.q + 64 * u_word * j, 64);
        amx_zero<T>();
        amx_dpbusd<T, A, B>();
    }

    template <int C>
    static void span_columns(const unpacked & u, acts & ab, const char * y, size_t by, int c0, int64_t kb, int nbk,
                             float * chains) {
        if constexpr (C != cols) {
            base::template span_columns<C>(u, ab.vnni, y, by, c0, kb, nbk, chains);
        } else {
            using act = typename F::act;
            const act * yb[C];
            span_acts<act, C, true>(y, by, c0, kb, nbk, yb, ab.a);
            const int nu = nbk * QK8_0 / F::unit;
            for (int j = 0; j < nu; j += 4) {
                amx_each<4>([&]<int T>() {
                    if (j + T < nu) {
                        unit_dot<T>(u, ab, j + T);
                    }
                });
                amx_each<4>([&]<int T>() {
                    if (j + T < nu) {
                        amx_store<T>(ab.dot[j + T], 4 * rows);
                    }
                });
            }
            for (int c = 0; c < C; ++c) {
                float * chc = chains + static_cast<size_t>(c0 + c) * 4 * rows;
                __m512  ch[4];
                for (int q = 0; q < 4; ++q) {
                    ch[q] = _mm512_load_ps(chc + q * rows);
                }
                // unit j of the span is unit kb * 32 / unit + j of the row: its chain is j % 4
                for (int j = 0; j < nu; ++j) {
                    const act &  ya = yb[c][j * F::unit / QK8_0];
                    const __m512 d  = _mm512_mul_ps(_mm512_load_ps(u.ws[j]), _mm512_set1_ps(simd::half_to_float(ya.d)));
                    const __m512 isf = _mm512_cvtepi32_ps(
                        _mm512_sub_epi32(_mm512_load_si512(ab.dot[j][c]), _mm512_load_si512(u.wsum[j])));
                    ch[j % 4] = _mm512_fmadd_ps(d, isf, ch[j % 4]);
                    if constexpr (has_offset<F>) {
                        ch[j % 4] = _mm512_fmadd_ps(_mm512_load_ps(u.m[j]), _mm512_set1_ps(simd::half_to_float(ya.s)),
                                                    ch[j % 4]);
                    }
                }
                for (int q = 0; q < 4; ++q) {
                    _mm512_store_ps(chc + q * rows, ch[q]);
                }
            }
        }
    }
};

/// block_tile_amx's kernel: span_tile between loading its tile configuration and
/// releasing the tiles.
template <class F>
void amx_block_tile(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s,
                    size_t ldc, void * work) {
    static constexpr amx_config cfg = block_tile_amx<F>::config();
    amx_load_config(cfg);
    span_tile<block_tile_amx<F>>(n, nr, vx, bx, nc, vy, by, s, ldc, work);
    amx_release();
}

/// The kernel a format's AMX variant is: block_tile_amx where its units are 32 elements,
/// block_tile's own where they are 16 (nvfp4: a 16-byte a operand halves the tile's work
/// per instruction, and gk-bench measured it at 0.6x of the VNNI tile).
template <class F>
constexpr tile_kernel block_tile_amx_kernel() {
    if constexpr (F::unit == QK8_0) {
        return {amx_block_tile<F>, block_tile_amx<F>::rows, block_tile_amx<F>::max_cols, block_tile_amx<F>::work_bytes,
                false};
    } else {
        return {span_tile<block_tile<F>>, block_tile<F>::rows, block_tile<F>::max_cols, block_tile<F>::work_bytes,
                false};
    }
}

} // namespace gk::cpu::detail

#elif defined(GK_SIMD_AVX2)

#define GK_DEFINE_BLOCK_TILE_AMX(name, F)

namespace gk::cpu::detail {

/// The AVX2 set's tile of the formats against q8_0 / q8_1: the same span, unpacking and
/// float steps as the AVX-512 tile above, with 8 rows per register (16 rows: two halves)
/// and the four-byte products formed by maddubs, which has no accumulating form and
/// saturates its pair sums at int16. So a format whose pair sums with biased activations,
/// at most 2 x 255 x max_weight, fit int16 (every format here but q8_0, q8_1 and iq4_nl)
/// takes the biased activation bytes as maddubs' unsigned operand, adds `depth` steps'
/// pair sums as int16 and widens them once; the others take |w| as the unsigned operand
/// and move w's sign onto the activation (dot_s8s8's exact form: the activations are
/// never -128) and widen every step. Either way the unit's integer sum is exact, and each
/// row's chain takes vec_dot's float steps in vec_dot's order.
template <class F>
struct block_tile {
    static constexpr int rows        = 16;
    static constexpr int max_cols    = 64;
    static constexpr int span_blocks = 8;                     // activation blocks per span
    static constexpr int span_elems  = span_blocks * QK8_0;   // 256
    static constexpr int unit_words  = F::unit / 4;           // four-byte steps per unit
    static constexpr int span_units  = span_elems / F::unit;  // 8, or 16 for 16-element units
    static constexpr int cols        = 4;                     // columns computed together

    static constexpr int  pair_bound = 2 * 255 * max_weight_of<F>();
    static constexpr bool biased     = pair_bound <= 32767;
    /// Steps whose int16 pair sums are added before widening (1 on the |w| path).
    static constexpr int depth = biased ? int16_depth(pair_bound, unit_words) : 1;

    /// One span of 16 rows, unpacked.
    struct unpacked {
        alignas(64) int8_t q[span_elems * rows];     // q[64 k + 32 h + 4 r + t] = element 4k + t of row 8h + r
        alignas(64) int32_t wsum[span_units][rows];  // 128 * sum of unit u's weights of row r (biased)
        alignas(64) float ws[span_units][rows];      // weight scale of unit u, row r
        alignas(64) float m[span_units][rows];       // offset of unit u, row r (q4_1, q5_1)
    };

    /// The activation bytes of the columns' span: biased to unsigned, or as they are.
    struct acts {
        alignas(64) uint8_t a[cols][span_elems];
    };

    static constexpr size_t work_bytes = sizeof(unpacked) + sizeof(acts) + sizeof(float) * rows * 4 * max_cols;

    /// Span (activation blocks kb .. kb + nbk - 1) of rows 0 .. nr-1; other rows zero.
    static void unpack_span(const char * x, size_t bx, int nr, int64_t kb, int nbk, unpacked & u) {
        for (int h = 0; h < 2; ++h) {
            for (int k = 0; k < nbk; ++k) {
                __m256i v[8];
                for (int r = 0; r < 8; ++r) {
                    const int row = 8 * h + r;
                    v[r] = row < nr ? F::unpack(reinterpret_cast<const typename F::weight *>(x + row * bx), kb + k)
                                    : _mm256_setzero_si256();
                }
                transpose_8x8(v);
                for (int i = 0; i < 8; ++i) {
                    _mm256_store_si256(reinterpret_cast<__m256i *>(u.q + 64 * (8 * k + i) + 32 * h), v[i]);
                }
            }
        }
        const int     nu = nbk * QK8_0 / F::unit;
        const int64_t ub = kb * QK8_0 / F::unit;
        for (int r = 0; r < rows; ++r) {
            const auto * xr = reinterpret_cast<const typename F::weight *>(x + r * bx);
            for (int j = 0; j < nu; ++j) {
                u.ws[j][r] = r < nr ? weight_scale<F>(xr, ub + j) : 0.0f;
                if constexpr (has_offset<F>) {
                    u.m[j][r] = r < nr ? simd::half_to_float(weight_of<F>(xr, ub + j).m) : 0.0f;
                }
            }
        }
        if constexpr (biased) {
            const __m256i ones8  = _mm256_set1_epi8(1);
            const __m256i ones16 = _mm256_set1_epi16(1);
            for (int j = 0; j < nu; ++j) {
                for (int h = 0; h < 2; ++h) {
                    __m256i s = _mm256_setzero_si256();
                    for (int t = 0; t < unit_words; ++t) {
                        const __m256i w = _mm256_load_si256(
                            reinterpret_cast<const __m256i *>(u.q + 64 * (j * unit_words + t) + 32 * h));
                        s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, w), ones16));
                    }
                    _mm256_store_si256(reinterpret_cast<__m256i *>(u.wsum[j] + 8 * h), _mm256_slli_epi32(s, 7));
                }
            }
        }
    }

    /// Columns c0 .. c0 + C - 1 over one span: the units' integer sums and float steps.
    template <int C>
    static void span_columns(const unpacked & u, acts & ab, const char * y, size_t by, int c0, int64_t kb, int nbk,
                             float * chains) {
        using act = typename F::act;
        const act * yb[C];
        span_acts<act, C, biased>(y, by, c0, kb, nbk, yb, ab.a);
        const __m256i ones16 = _mm256_set1_epi16(1);
        const int     nu     = nbk * QK8_0 / F::unit;
        for (int h = 0; h < 2; ++h) {
            for (int j = 0; j < nu; ++j) {
                // unit j of the span is unit kb * 32 / unit + j of the row, a multiple of 4
                // plus j: its chain is j % 4
                __m256i dot[C];
                for (int c = 0; c < C; ++c) {
                    dot[c] = _mm256_setzero_si256();
                }
                for (int t0 = 0; t0 < unit_words; t0 += depth) {
                    __m256i pairs[C];
                    for (int c = 0; c < C; ++c) {
                        pairs[c] = _mm256_setzero_si256();
                    }
                    for (int t = t0; t < t0 + depth; ++t) {
                        const int     k  = j * unit_words + t;
                        const __m256i w  = _mm256_load_si256(reinterpret_cast<const __m256i *>(u.q + 64 * k + 32 * h));
                        const __m256i wa = biased ? w : _mm256_sign_epi8(w, w);
                        for (int c = 0; c < C; ++c) {
                            int32_t a4;
                            std::memcpy(&a4, ab.a[c] + 4 * k, sizeof a4);
                            const __m256i a = _mm256_set1_epi32(a4);
                            pairs[c]        = _mm256_add_epi16(
                                       pairs[c],
                                biased ? _mm256_maddubs_epi16(a, w) : _mm256_maddubs_epi16(wa, _mm256_sign_epi8(a, w)));
                        }
                    }
                    for (int c = 0; c < C; ++c) {
                        dot[c] = _mm256_add_epi32(dot[c], _mm256_madd_epi16(pairs[c], ones16));
                    }
                }
                const __m256 ws = _mm256_load_ps(u.ws[j] + 8 * h);
                for (int c = 0; c < C; ++c) {
                    const act & ya   = yb[c][j * F::unit / QK8_0];
                    __m256i     isum = dot[c];
                    if constexpr (biased) {
                        isum = _mm256_sub_epi32(
                            isum, _mm256_load_si256(reinterpret_cast<const __m256i *>(u.wsum[j] + 8 * h)));
                    }
                    float *      chp = chains + (static_cast<size_t>(c0 + c) * 4 + j % 4) * rows + 8 * h;
                    const __m256 d   = _mm256_mul_ps(ws, _mm256_set1_ps(simd::half_to_float(ya.d)));
                    __m256       ch  = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum), _mm256_load_ps(chp));
                    if constexpr (has_offset<F>) {
                        ch = _mm256_fmadd_ps(_mm256_load_ps(u.m[j] + 8 * h), _mm256_set1_ps(simd::half_to_float(ya.s)),
                                             ch);
                    }
                    _mm256_store_ps(chp, ch);
                }
            }
        }
    }

    /// vec_dot's last step: (c0 + c1) + (c2 + c3).
    static void store_sums(const float * chains, int nr, int nc, float * s, size_t ldc) {
        for (int c = 0; c < nc; ++c) {
            const float * ch = chains + static_cast<size_t>(c) * 4 * rows;
            for (int r = 0; r < nr; ++r) {
                s[c * ldc + r] = (ch[r] + ch[rows + r]) + (ch[2 * rows + r] + ch[3 * rows + r]);
            }
        }
    }
};

}  // namespace gk::cpu::detail

#else

#define GK_DEFINE_BLOCK_TILE(name, F)

#endif
