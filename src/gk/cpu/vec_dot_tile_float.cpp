// vec_dot_tile_float.cpp - tile kernels of the float path (f32 and f16 weights against
// activations of the same type), AVX-512: 2 weight rows x 3 columns held in registers.
//
// The float path's order (vec_dot.h) gives each output 64 partial sums: chain (i / 16) % 4,
// lane i % 16, fused multiply-adds in increasing i, then (c0 + c1) + (c2 + c3) per lane and
// the lanes by halving. With 16-lane registers a chain is one register, so an output is 4
// registers, and 2 x 3 outputs (24 registers) run side by side: each 16-element step loads
// 2 weight and 3 activation vectors for 6 fused multiply-adds, where vec_dot loads 2 for 1.
// Every output keeps its own 64 partial sums and its own order, so it has the bits of
// vec_dot_f32 / f16 (the last partial register is a masked fused multiply-add,
// which leaves the other lanes as the scalar loop does). Rows of 8 elements or fewer
// (attention heads of 8) go two to a register instead (half_rows).
#include "vec_dot_tile_impl.h"

#include "vec_dot_impl.h"

#if defined(GK_TILE_AVX512)

namespace gk::cpu::detail {
namespace {

constexpr int kRows     = 16;  // weight rows per call (pairs of them in turn)
constexpr int kCols     = 64;  // columns per call

/// 16 elements from element i of a row of kind E as f32 (exact); `mask` keeps the lanes
/// of a partial register and zeroes the rest. Whole registers take plain loads: GCC 12
/// keeps the accumulators in memory, stored at every step, across a loop with masked loads
/// in it (one store per multiply-add: half the multiply-adds' speed).
template <elem E, bool Partial>
__m512 load16(const void * p, int64_t i, __mmask16 mask) {
    static_assert(E != elem::bf16, "bf16 has its own tile (vec_dot_tile_bf16.cpp)");
    return Partial ? load_vec_masked<E>(p, i, mask) : load_vec<E>(p, i);
}

/// RR x CC outputs (RR <= 2, CC <= 3) of rows no longer than one register (n <= 16): chain 0
/// alone, the other three +0.
template <elem E, int RR, int CC>
void micro_short(int64_t n, const char * x, size_t bx, const char * y, size_t by, float * s, size_t ldc) {
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
    const __m512    zero = _mm512_setzero_ps();
    __m512          w[RR], a[CC], t[8] = {};
    for (int r = 0; r < RR; ++r) {
        w[r] = load16<E, true>(x + r * bx, 0, mask);
    }
    for (int c = 0; c < CC; ++c) {
        a[c] = load16<E, true>(y + c * by, 0, mask);
    }
    for (int r = 0; r < RR; ++r) {
        for (int c = 0; c < CC; ++c) {
            const __m512 c0 = _mm512_mask3_fmadd_ps(w[r], a[c], zero, mask);
            t[r * CC + c]   = _mm512_add_ps(_mm512_add_ps(c0, zero), _mm512_add_ps(zero, zero));
        }
    }
    store_outputs<RR, CC>(t, s, ldc);
}

/// Rows of at most half a register (n <= 8; attention over heads of 8 or fewer), as many
/// outputs per register as fit: 16 rows against one column at a time, two rows to a
/// register (row 2p in the low 256 bits of w[p], row 2p + 1 in the high). An output is
/// still vec_dot's: per element fma(w, a, +0) (never -0), then its lanes by halving. The
/// first halving (lane l + lane l + 8) only adds +0 where one row fills a register, so it
/// is left out; the other three run on 16 outputs at once (reduce_add_8's steps over
/// 256-bit halves), where micro_short reduces 8 registers for 6 outputs.
template <elem E>
void half_rows(int64_t n, int nr, const char * x, size_t bx, int nc, const char * y, size_t by, float * s, size_t ldc) {
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
    const __m512    zero = _mm512_setzero_ps();
    // lane 4k + j of the reduced register holds row 4j + k
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (int r0 = 0; r0 < nr; r0 += 16) {
        const int rows = std::min(16, nr - r0);
        __m512    w[8];
        for (int p = 0; p < 8; ++p) {
            const int    r  = r0 + 2 * p;
            const __m512 lo = 2 * p < rows ? load_vec_masked<E>(x + r * bx, 0, mask) : zero;
            const __m512 hi = 2 * p + 1 < rows ? load_vec_masked<E>(x + (r + 1) * bx, 0, mask) : zero;
            w[p]            = low_halves(lo, hi);
        }
        for (int c = 0; c < nc; ++c) {
            const __m512 a1 = load_vec_masked<E>(y + c * by, 0, mask);
            const __m512 a  = low_halves(a1, a1);
            __m512       h[4], g[2];
            for (int q = 0; q < 4; ++q) {  // 128-bit lane k: row 4q + k, lanes l + (l + 4), l < 4
                const __m512 u = _mm512_fmadd_ps(w[2 * q], a, zero), v = _mm512_fmadd_ps(w[2 * q + 1], a, zero);
                h[q] = _mm512_add_ps(_mm512_shuffle_f32x4(u, v, 0x88), _mm512_shuffle_f32x4(u, v, 0xDD));
            }
            for (int q = 0; q < 2; ++q) {  // 128-bit lane k: [row 8q + k | row 8q + 4 + k], l + (l + 2)
                g[q] = _mm512_add_ps(_mm512_shuffle_ps(h[2 * q], h[2 * q + 1], 0x44),
                                     _mm512_shuffle_ps(h[2 * q], h[2 * q + 1], 0xEE));
            }
            // 128-bit lane k: rows k, 4 + k, 8 + k, 12 + k: lane 0 + lane 1 of each
            const __m512 e = _mm512_add_ps(_mm512_shuffle_ps(g[0], g[1], 0x88), _mm512_shuffle_ps(g[0], g[1], 0xDD));
            _mm512_mask_storeu_ps(s + c * ldc + r0, static_cast<__mmask16>((1u << rows) - 1),
                                  _mm512_permutexvar_ps(order, e));
        }
    }
}

/// RR x CC outputs (RR <= 2, CC <= 3): rows x[0 .. RR-1] (bx bytes apart) times columns
/// y[0 .. CC-1] (by apart), s[c * ldc + r].
template <elem E, int RR, int CC>
void micro(int64_t n, const char * x, size_t bx, const char * y, size_t by, float * s, size_t ldc) {
    if (n <= float_lanes) {
        micro_short<E, RR, CC>(n, x, bx, y, by, s, ldc);
        return;
    }
    __m512 acc[RR][CC][float_chains];
    for (int r = 0; r < RR; ++r) {
        for (int c = 0; c < CC; ++c) {
            for (int k = 0; k < float_chains; ++k) {
                acc[r][c][k] = _mm512_setzero_ps();
            }
        }
    }
    // chain K of every output += the 16 elements from i (a template argument, so that the
    // 24 accumulators stay in registers; so do whole registers' plain loads, see load16)
    const auto step = [&]<int K, bool Partial = false>(int64_t i, __mmask16 mask) {
        __m512 w[RR], a[CC];
        for (int r = 0; r < RR; ++r) {
            w[r] = load16<E, Partial>(x + r * bx, i, mask);
        }
        for (int c = 0; c < CC; ++c) {
            a[c] = load16<E, Partial>(y + c * by, i, mask);
        }
        for (int r = 0; r < RR; ++r) {
            for (int c = 0; c < CC; ++c) {
                acc[r][c][K] = _mm512_mask3_fmadd_ps(w[r], a[c], acc[r][c][K], mask);
            }
        }
    };
    constexpr __mmask16 all = 0xFFFF;
    int64_t             i   = 0;
    for (; i + float_step <= n; i += float_step) {
        step.template operator()<0>(i, all);
        step.template operator()<1>(i + float_lanes, all);
        step.template operator()<2>(i + 2 * float_lanes, all);
        step.template operator()<3>(i + 3 * float_lanes, all);
    }
    for (; i < n; i += float_lanes) {  // the last round: whole registers, then a partial one
        const int64_t   left = n - i;
        const __mmask16 mask = left >= float_lanes ? all : static_cast<__mmask16>((1u << left) - 1);
        switch ((i / float_lanes) % float_chains) {
        case 0: step.template operator()<0, true>(i, mask); break;
        case 1: step.template operator()<1, true>(i, mask); break;
        case 2: step.template operator()<2, true>(i, mask); break;
        default: step.template operator()<3, true>(i, mask); break;
        }
    }
    store_chain_outputs<RR, CC>(acc, s, ldc);
}

/// micro<E, RR, CC> as pair_triple_tile calls it.
template <elem E> struct float_micro {
    template <int RR, int CC>
    static void run(int64_t n, const char * x, size_t bx, const char * y, size_t by, float * s, size_t ldc) {
        micro<E, RR, CC>(n, x, bx, y, by, s, ldc);
    }
};

/// The tile kernel (vec_dot_tile.h).
template <elem E>
void tile_dot(int64_t n, int nr, const void * x, size_t bx, int nc, const void * y, size_t by, float * s, size_t ldc,
              void *) {
    if (n <= float_lanes / 2) {
        half_rows<E>(n, nr, static_cast<const char *>(x), bx, nc, static_cast<const char *>(y), by, s, ldc);
        return;
    }
    pair_triple_tile<float_micro<E>>(n, nr, x, bx, nc, y, by, s, ldc);
}

} // namespace

const tile_kernel tile_f32 = {tile_dot<elem::f32>, kRows, kCols, 0, true};
const tile_kernel tile_f16 = {tile_dot<elem::f16>, kRows, kCols, 0, true};

} // namespace gk::cpu::detail

#endif
