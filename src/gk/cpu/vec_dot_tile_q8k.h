// vec_dot_tile_q8k.h - the tile kernel of every format against q8_K activations (the
// K-quants, iq4_xs, the ternary formats, the lattice i-quants): 16 weight rows (one 32-bit
// lane each) times up to 128 columns, each element bit-identical to the format's vec_dot.
//
// Per super-block b (256 elements) the 16 rows are unpacked once. A format's T::unpack
// writes one row's super-block as a q8k_tile_row:
// * u, the 256 values as unsigned bytes: the integer level the format's dot multiplies by
//   the activation plus T::offset o, or (q2_K) that level times its group scale where the
//   product fits a byte;
// * sc_g, the integer scale of each group g (T::groups: 16 groups of 16, 8 of 32, or 0
//   where u holds the scales);
// * mw_h, the int16 weight of the activation sum of the 16 elements h (q8_K's bsums[h])
//   in isum_min (the mins of q2_K, q4_K, q5_K);
// * the f32 super-block scales d and dmin.
// The 16 rows are then transposed, 16 x 16 dwords at a time, so that 64 bytes hold
// elements 4k .. 4k + 3 of all 16 rows (row r in bytes 4r .. 4r + 3), and a group's
// scales or a pair of mins are one register, lane r = row r. For every column, in int32
// (exact: the integer of the format's vec_dot, wrap-around included):
//   isum     = sum over g of sc_g * (dot_g - o * A_g)   (no group scales: dot - o * A),
//   isum_min = sum over h of mw_h * bsums[h],
// dot_g the products u * a over group g by VPDPBUSD (the weight bytes unsigned, four
// activation bytes broadcast), started from the column's -o * A_g (A_g the activation sum
// of group g, from bsums; the same for every row), and isum_min by VPDPWSSD (the weights of
// h = 2j, 2j + 1 against dword j of bsums). Then, lane by lane, vec_dot's float step on the
// column's chain b % 4: d = f32(weight d) * activation d (then times T::factor, the
// i-quants' constant), chain = fma(d, float(isum), chain); with mins chain = fma(-(f32(dmin)
// * activation d), float(isum_min), chain). The result is (c0 + c1) + (c2 + c3)
// (vec_dot_q8k.h, vec_dot_iq.h).
//
// Eight columns go together (each weight vector loaded once for them), and up to 128 share
// one unpacking of the rows: decoding the lattice i-quants costs about a third of their
// products at 64. The next super-block of the rows and of the columns is prefetched while
// this one's are computed.
//
// Internal to the format files (vec_dot_k.cpp, vec_dot_k_low.cpp, vec_dot_iq4_xs.cpp,
// vec_dot_ternary.cpp, vec_dot_iq.h), which define their kernels with GK_DEFINE_Q8K_TILE
// from their own unpacking (the decoding of their x86 vector kernels).
#pragma once

#include "amx.h"
#include "vec_dot_tile_impl.h"

#include "quant/k_quants.h"
#include "simd.h"

#include <cstddef>
#include <cstring>

#if defined(GK_TILE_AVX512)

namespace gk::cpu::detail {

/// One weight row's super-block as a format hands it to the tile (see the file comment).
struct q8k_tile_row {
    alignas(64) uint8_t q[quant::QK_K];  // u of element i
    int32_t sc[16];                      // scale of group g (8 groups: g < 8)
    int16_t mw[32];                      // weight of bsums[h] in isum_min (h < 16; the rest pads)
    float   d;
    float   dmin;

    /// u of elements 32k .. 32k + 31 = quants(k), for the 8 vectors k.
    template <class Quants> void set_quants(Quants quants) {
        for (int k = 0; k < quant::QK_K / 32; ++k) {
            _mm256_store_si256(reinterpret_cast<__m256i *>(q + 32 * k), quants(k));
        }
    }
    /// The scales of 8 or 16 groups.
    void set_scales(__m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i *>(sc), v); }
    void set_scales(__m512i v) { _mm512_storeu_si512(sc, v); }
    /// d and, where the block has one, dmin from the block's f16 fields.
    template <class Block> void set_d(const Block & x) {
        d = simd::half_to_float(x.d);
        if constexpr (requires { x.dmin; }) {
            dmin = simd::half_to_float(x.dmin);
        }
    }
};

/// What a format tells q8k_tile: its block, `groups` (16, 8, or 0 where u holds the
/// scales), the offset o of u, whether it has mins (mw and dmin are used), and ggml's
/// constant factor on isum (1 here; a format with another one declares its own `factor`,
/// which hides this one: a float template parameter would need clang 18). A format's
/// description derives from it and adds unpack(const block &, q8k_tile_row &).
template <class Block, int Groups, int Offset = 0, bool HasMin = false> struct q8k_tile_format {
    using block                    = Block;
    static constexpr int   groups  = Groups;
    static constexpr int   offset  = Offset;
    static constexpr bool  has_min = HasMin;
    static constexpr float factor  = 1.0f;
    /// Digit planes for the AMX tile (0: none): the group scale sc as `planes` digits of
    /// `digit_bits` bits, sc = sum over p of s_p << (digit_bits p), the top digit signed
    /// (an arithmetic shift), the others not. Each digit times the weight fits a byte:
    /// u * s_p unsigned where the offset is 0 (q4_K, q5_K: u < 32, sc < 64, 3-bit digits),
    /// (u - offset) * s_p signed otherwise (q6_K, q3_K).
    static constexpr int planes     = 0;
    static constexpr int digit_bits = 0;
};

template <class T> struct q8k_tile {
    using block = typename T::block;

    static constexpr int rows     = 16;
    static constexpr int max_cols = 128;
    static constexpr int cols     = 8;  // columns whose sums are computed together
    static constexpr int words    = quant::QK_K / 4;  // VPDPBUSD steps per super-block

    /// One super-block of 16 rows, transposed.
    struct unpacked {
        alignas(64) uint8_t q[quant::QK_K * rows];  // q[64 k + 4 r + t] = u of element 4k + t, row r
        alignas(64) int32_t sc[16][rows];           // scale of group g, row r
        alignas(64) int32_t mw[16][rows];           // pair j < 8 of mw (int16 each); the rest pads
        alignas(64) float   d[rows];
        alignas(64) float   dmin[rows];
    };

    struct work {
        unpacked     u;
        q8k_tile_row row[rows];
        alignas(64) float chains[max_cols][4][rows];  // chain j of column c, lane r
    };

    static constexpr size_t work_bytes = sizeof(work);

    /// Every cache line of *p into L1.
    template <class Obj> static void prefetch(const Obj * p) {
        const char * bytes = reinterpret_cast<const char *>(p);
        for (size_t at = 0; at < sizeof(Obj); at += 64) {
            _mm_prefetch(bytes + at, _MM_HINT_T0);
        }
        _mm_prefetch(bytes + sizeof(Obj) - 1, _MM_HINT_T0);
    }

    /// Super-block b of rows 0 .. nr-1 into w.u (`more`: another follows); the rows from
    /// nr keep the zeros the call began with (their lanes are computed and never stored).
    static void unpack_block(const char * x, size_t bx, int nr, int64_t b, bool more, work & w) {
        for (int r = 0; r < nr; ++r) {
            const block * xr = reinterpret_cast<const block *>(x + r * bx);
            if (more) {  // the next super-block, while this one's columns are computed
                prefetch(xr + b + 1);
            }
            T::unpack(xr[b], w.row[r]);
        }
        const auto *     src    = reinterpret_cast<const uint8_t *>(w.row);
        constexpr size_t stride = sizeof(q8k_tile_row);
        for (int m = 0; m < quant::QK_K / 64; ++m) {
            transpose_16x16(src + offsetof(q8k_tile_row, q) + 64 * m, stride, w.u.q + 1024 * m);
        }
        if constexpr (T::groups != 0) {
            transpose_16x16(src + offsetof(q8k_tile_row, sc), stride, w.u.sc);
        }
        if constexpr (T::has_min) {
            transpose_16x16(src + offsetof(q8k_tile_row, mw), stride, w.u.mw);
        }
        for (int r = 0; r < rows; ++r) {
            w.u.d[r]    = w.row[r].d;
            w.u.dmin[r] = w.row[r].dmin;
        }
    }

    /// Independent VPDPBUSD chains per column: the groups, or 4 quarters where u holds the
    /// scales (summed without scaling).
    static constexpr int parts = T::groups ? T::groups : 4;

    /// -o * A_g of the column's super-block y for the groups g (where u holds the scales:
    /// -o * A of the whole super-block, in init[0]).
    static void offset_terms(const quant::block_q8_K & y, int32_t * init) {
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y.bsums));
        if constexpr (T::groups == 16) {
            _mm512_storeu_si512(init, _mm512_mullo_epi32(_mm512_cvtepi16_epi32(bsums), _mm512_set1_epi32(-T::offset)));
        } else {
            const __m256i pairs = _mm256_madd_epi16(bsums, _mm256_set1_epi16(1));  // sums of 32 elements
            if constexpr (T::groups == 8) {
                _mm256_storeu_si256(reinterpret_cast<__m256i *>(init),
                                    _mm256_mullo_epi32(pairs, _mm256_set1_epi32(-T::offset)));
            } else {
                init[0] = -T::offset * _mm512_reduce_add_epi32(_mm512_zextsi256_si512(pairs));
            }
        }
    }

    /// isum and isum_min of the 16 rows of u against the super-blocks y[0 .. C-1] of C
    /// columns; each weight vector is loaded once for all of them.
    template <int C>
    [[gnu::always_inline]] static inline void block_sums(const unpacked & u, const quant::block_q8_K * const * y,
                                                         __m512i * isum, __m512i * imin) {
        constexpr int per_part = words / parts;  // VPDPBUSDs per chain
        int32_t       init[C][16];
        for (int c = 0; c < C; ++c) {
            if constexpr (T::offset != 0) {
                offset_terms(*y[c], init[c]);
            }
        }
        for (int g = 0; g < parts; ++g) {
            __m512i dot[C];
            for (int c = 0; c < C; ++c) {
                const bool from_offset = T::offset != 0 && (T::groups != 0 || g == 0);
                dot[c]                 = from_offset ? _mm512_set1_epi32(init[c][g]) : _mm512_setzero_si512();
            }
            for (int t = 0; t < per_part; ++t) {
                const int     k = g * per_part + t;
                const __m512i w = _mm512_load_si512(u.q + 64 * k);
                for (int c = 0; c < C; ++c) {
                    int32_t a4;
                    std::memcpy(&a4, y[c]->qs + 4 * k, sizeof a4);
                    dot[c] = _mm512_dpbusd_epi32(dot[c], w, _mm512_set1_epi32(a4));
                }
            }
            for (int c = 0; c < C; ++c) {
                __m512i p = dot[c];
                if constexpr (T::groups != 0) {
                    p = _mm512_mullo_epi32(p, _mm512_load_si512(u.sc[g]));
                }
                isum[c] = g == 0 ? p : _mm512_add_epi32(isum[c], p);
            }
        }
        min_sums<C>(u, y, imin);
    }

    /// isum_min of the 16 rows of u against the super-blocks y[0 .. C-1] (formats with mins).
    template <int C>
    [[gnu::always_inline]] static inline void min_sums(const unpacked & u, const quant::block_q8_K * const * y,
                                                       __m512i * imin) {
        if constexpr (T::has_min) {
            for (int c = 0; c < C; ++c) {
                imin[c] = _mm512_setzero_si512();
            }
            for (int j = 0; j < 8; ++j) {
                const __m512i mw = _mm512_load_si512(u.mw[j]);
                for (int c = 0; c < C; ++c) {
                    int32_t pair;
                    std::memcpy(&pair, y[c]->bsums + 2 * j, sizeof pair);
                    imin[c] = _mm512_dpwssd_epi32(imin[c], mw, _mm512_set1_epi32(pair));
                }
            }
        }
    }

    /// yb[c]: super-block b of column c0 + c (`more`: the next one is prefetched).
    template <int C>
    static void column_blocks(const char * y, size_t by, int c0, int64_t b, bool more,
                              const quant::block_q8_K * (&yb)[C]) {
        for (int c = 0; c < C; ++c) {
            yb[c] = reinterpret_cast<const quant::block_q8_K *>(y + (c0 + c) * by) + b;
            if (more) {  // the column's next super-block
                prefetch(yb[c] + 1);
            }
        }
    }

    /// Super-block b of C columns from column c0: the integer sums, then vec_dot's float
    /// step on each column's chain b % 4.
    template <int C>
    static void block_columns(work & w, const char * y, size_t by, int c0, int64_t b, bool more) {
        const quant::block_q8_K * yb[C];
        column_blocks<C>(y, by, c0, b, more, yb);
        __m512i isum[C], imin[C];
        block_sums<C>(w.u, yb, isum, imin);
        column_steps<C>(w, yb, isum, imin, c0, b);
    }

    /// vec_dot's float step of super-block b on the chains b % 4 of columns c0 .. c0 + C - 1.
    template <int C>
    [[gnu::always_inline]] static inline void column_steps(work & w, const quant::block_q8_K * const * yb,
                                                           const __m512i * isum, const __m512i * imin, int c0,
                                                           int64_t b) {
        const __m512 d    = _mm512_load_ps(w.u.d);
        const __m512 dmin = _mm512_load_ps(w.u.dmin);
        const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(0x80000000u)));
        for (int c = 0; c < C; ++c) {
            float *      chain = w.chains[c0 + c][b & 3];
            const __m512 ya    = _mm512_set1_ps(yb[c]->d);
            __m512       dy    = _mm512_mul_ps(d, ya);
            if constexpr (T::factor != 1.0f) {
                dy = _mm512_mul_ps(dy, _mm512_set1_ps(T::factor));
            }
            __m512 acc = _mm512_fmadd_ps(dy, _mm512_cvtepi32_ps(isum[c]), _mm512_load_ps(chain));
            if constexpr (T::has_min) {
                const __m512 dm = _mm512_xor_ps(_mm512_mul_ps(dmin, ya), sign);  // -(dmin * y.d), exact
                acc             = _mm512_fmadd_ps(dm, _mm512_cvtepi32_ps(imin[c]), acc);
            }
            _mm512_store_ps(chain, acc);
        }
    }

    /// The tile kernel (vec_dot_tile.h).
    static void dot(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s,
                    size_t ldc, void * vwork) {
        run(n, nr, vx, bx, nc, vy, by, s, ldc, *static_cast<work *>(vwork), [](int64_t, bool) { return 0; });
    }

    /// The kernel's body: per super-block b, the rows unpacked, `wide(b, more)` computing
    /// the first columns it takes and returning how many, then the rest cols at a time,
    /// half that, and one by one.
    template <class Wide>
    static void run(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s,
                    size_t ldc, work & w, Wide wide) {
        const char *  x  = static_cast<const char *>(vx);
        const char *  y  = static_cast<const char *>(vy);
        const int64_t nb = n / quant::QK_K;
        std::memset(w.row, 0, sizeof w.row);
        std::memset(w.chains, 0, sizeof(w.chains[0]) * static_cast<size_t>(nc));
        for (int64_t b = 0; b < nb; ++b) {
            const bool more = b + 1 < nb;
            unpack_block(x, bx, nr, b, more, w);
            int c = wide(b, more);
            for (; c + cols <= nc; c += cols) {
                block_columns<cols>(w, y, by, c, b, more);
            }
            if (c + cols / 2 <= nc) {
                block_columns<cols / 2>(w, y, by, c, b, more);
                c += cols / 2;
            }
            for (; c < nc; ++c) {
                block_columns<1>(w, y, by, c, b, more);
            }
        }
        store_chain_sums(w.chains[0][0], nr, nc, s, ldc);
    }
};

/// The same tile with the products taken from AMX (amx.h) for 16 columns at a time (the
/// formats q8k_tile_amx_kernel names). The activation bytes are read in place (a: one
/// column per row, the rows `by` apart) and meet one or more planes of weight bytes, each
/// summed over the whole super-block, four 64-byte quarters, into its own tile:
/// * where u holds the scales (q8k_tile_format::groups 0), one plane, u itself (TDPBSUD):
///   isum = dot - o * A;
/// * with digit planes (q8k_tile_format::planes), per super-block of rows the weights are
///   written once more per plane, as the bytes w * s_p of the element's group (w = u, or
///   u - offset; TDPBSUD, or TDPBSSD for signed planes): isum = sum over p of dot_p <<
///   (digit_bits p) = sum over g of sc_g * (dot_g - o * A_g).
/// Either way the integers are those of q8k_tile's VPDPBUSD chains (no int32 sum here
/// overflows), followed by q8k_tile's own isum_min and float steps. Columns left over take
/// q8k_tile's VNNI path.
template <class T>
struct q8k_tile_amx {
    using base                = q8k_tile<T>;
    static constexpr int rows = base::rows;
    static constexpr int cols = 16;

    static constexpr bool in_planes     = T::planes != 0;
    static constexpr int  planes        = in_planes ? T::planes : 1;
    static constexpr bool signed_planes = in_planes && T::offset != 0;
    static_assert(in_planes || T::groups == 0, "group scales need digit planes");
    static_assert(planes <= 4, "one sum tile per plane, tiles 0-3");

    struct work {
        typename base::work w;
        alignas(64) int32_t dot[planes][cols][rows];  // plane p's sums: column c, lane r = row r
        alignas(64) uint8_t plane[in_planes ? planes : 1][in_planes ? quant::QK_K * rows : 1];  // w * s_p, as u.q
    };

    static constexpr size_t work_bytes = sizeof(work);

    /// Tiles 0-3: the planes' sums (16 columns x 16 rows); 4, 5: a, 6, 7: b (16 rows of 64
    /// bytes, a quarter).
    static constexpr amx_config config() {
        amx_config cfg;
        for (int t = 0; t < 8; ++t) {
            cfg.tile(t, 16, 64);
        }
        return cfg;
    }

    /// The bytes of plane p, laid out as u.q.
    static const uint8_t * plane_bytes(const work & aw, int p) { return in_planes ? aw.plane[p] : aw.w.u.q; }

    /// The digit planes from the unpacked super-block (u.q and u.sc).
    static void plane_weights(work & aw) {
        const auto &  u     = aw.w.u;
        const __m512i low8  = _mm512_set1_epi16(0x00FF);
        const auto    times = [&](__m512i q, __m512i s) {  // each byte of q times its dword's s
            const __m512i s16 = _mm512_or_si512(_mm512_and_si512(s, _mm512_set1_epi32(0xFFFF)),
                                                   _mm512_slli_epi32(s, 16));
            __m512i       even, odd;  // the bytes widened to 16 bits, by sign or by zero
            if constexpr (signed_planes) {
                   even = _mm512_srai_epi16(_mm512_slli_epi16(q, 8), 8);
                   odd  = _mm512_srai_epi16(q, 8);
            } else {
                   even = _mm512_and_si512(q, low8);
                   odd  = _mm512_srli_epi16(q, 8);
            }
            return _mm512_or_si512(_mm512_and_si512(_mm512_mullo_epi16(even, s16), low8),
                                      _mm512_slli_epi16(_mm512_mullo_epi16(odd, s16), 8));
        };
        constexpr int mask  = (1 << T::digit_bits) - 1;
        constexpr int words = quant::QK_K / 4 / T::groups;  // 64-byte vectors of u.q per group
        for (int g = 0; g < T::groups; ++g) {
            const __m512i sc = _mm512_load_si512(u.sc[g]);
            __m512i       digit[planes];
            for (int p = 0; p < planes; ++p) {
                digit[p] = p + 1 < planes
                               ? _mm512_and_si512(_mm512_srai_epi32(sc, T::digit_bits * p), _mm512_set1_epi32(mask))
                               : _mm512_srai_epi32(sc, T::digit_bits * p);
            }
            for (int k = g * words; k < (g + 1) * words; ++k) {
                __m512i q = _mm512_load_si512(u.q + 64 * k);
                if constexpr (signed_planes) {
                    q = _mm512_sub_epi8(q, _mm512_set1_epi8(static_cast<char>(T::offset)));
                }
                for (int p = 0; p < planes; ++p) {
                    _mm512_store_si512(aw.plane[p] + 64 * k, times(q, digit[p]));
                }
            }
        }
    }

    /// Quarter Q: a in tile 4 + Q % 2, plane p's b in 6 + p % 2, added to tile p.
    template <int Q>
    static void quarter(const work & aw, const int8_t * a, size_t by) {
        constexpr int A = 4 + Q % 2;
        amx_load<A>(a + 64 * Q, static_cast<long>(by));
        amx_each<planes>([&]<int P>() {
            constexpr int B = 6 + P % 2;
            amx_load<B>(plane_bytes(aw, P) + 1024 * Q, 64);
            if constexpr (signed_planes) {
                amx_dpbssd<P, A, B>();
            } else {
                amx_dpbsud<P, A, B>();
            }
        });
    }

    /// Super-block b of the 16 columns from c0.
    static void amx_columns(work & aw, const char * y, size_t by, int c0, int64_t b, bool more) {
        auto &                    w = aw.w;
        const quant::block_q8_K * yb[cols];
        base::template column_blocks<cols>(y, by, c0, b, more, yb);
        amx_each<planes>([]<int P>() { amx_zero<P>(); });
        amx_each<4>([&]<int Q>() { quarter<Q>(aw, yb[0]->qs, by); });
        amx_each<planes>([&]<int P>() { amx_store<P>(aw.dot[P], 4 * rows); });
        __m512i isum[cols], imin[cols];
        for (int c = 0; c < cols; ++c) {
            isum[c] = _mm512_load_si512(aw.dot[0][c]);
            for (int p = 1; p < planes; ++p) {
                isum[c] = _mm512_add_epi32(isum[c],
                                           _mm512_slli_epi32(_mm512_load_si512(aw.dot[p][c]), T::digit_bits * p));
            }
            if constexpr (!in_planes && T::offset != 0) {
                int32_t init[16];
                base::offset_terms(*yb[c], init);  // -o * A in init[0]
                isum[c] = _mm512_add_epi32(isum[c], _mm512_set1_epi32(init[0]));
            }
        }
        base::template min_sums<cols>(w.u, yb, imin);
        base::template column_steps<cols>(w, yb, isum, imin, c0, b);
    }

    /// The tile kernel: q8k_tile's body with amx_columns for 16 columns at a time, between
    /// loading the tile configuration and releasing the tiles.
    static void dot(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s,
                    size_t ldc, void * vwork) {
        static constexpr amx_config cfg = config();
        auto &                      aw  = *static_cast<work *>(vwork);
        amx_load_config(cfg);
        base::run(n, nr, vx, bx, nc, vy, by, s, ldc, aw.w, [&](int64_t b, bool more) {
            int c = 0;
            if constexpr (in_planes) {
                if (nc >= cols) {
                    plane_weights(aw);
                }
            }
            for (; c + cols <= nc; c += cols) {
                amx_columns(aw, static_cast<const char *>(vy), by, c, b, more);
            }
            return c;
        });
        amx_release();
    }
};

/// The kernel a format's AMX variant is: q8k_tile_amx where u holds the scales (64-byte
/// quarters: q2_K, tq1_0, tq2_0) or the scales go into digit planes (q4_K, q5_K, q6_K,
/// q3_K, iq3_s, iq1_s, iq1_m), q8k_tile's own for the other grouped formats. There one
/// tile per group, stored, reloaded, offset and multiplied by the scale per column
/// (VPMULLD is two uops) costs more than the VPDPBUSDs AMX saves: gk-bench's prompt shape
/// (each side against ggml in the same run, the ratios compared) measured that form at
/// 0.75-0.91x of the VNNI tile for the 8-group formats and 0.52-0.55x for the 16-group
/// ones; docs/performance.md.
template <class T>
constexpr tile_kernel q8k_tile_amx_kernel() {
    if constexpr (T::groups == 0 || T::planes != 0) {
        return {q8k_tile_amx<T>::dot, q8k_tile_amx<T>::rows, q8k_tile<T>::max_cols, q8k_tile_amx<T>::work_bytes, false};
    } else {
        return {q8k_tile<T>::dot, q8k_tile<T>::rows, q8k_tile<T>::max_cols, q8k_tile<T>::work_bytes, false};
    }
}

/// Defines the tile kernel `name` of the format description T, and its AMX variant name_amx.
#define GK_DEFINE_Q8K_TILE(name, T)                                                                                      \
    const tile_kernel name       = {q8k_tile<T>::dot, q8k_tile<T>::rows, q8k_tile<T>::max_cols, q8k_tile<T>::work_bytes, \
                                    false};                                                                              \
    const tile_kernel name##_amx = q8k_tile_amx_kernel<T>();

} // namespace gk::cpu::detail

#else

#define GK_DEFINE_Q8K_TILE(name, T)

#endif
