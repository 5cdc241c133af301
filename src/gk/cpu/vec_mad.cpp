// vec_mad.cpp - y += the weighted sum of f32, f16 or bf16 rows (vec_mad.h), on the vector
// layer.
//
// Up to 6 output rows are taken together, and their columns a chunk of 4, 2 or 1 registers
// per output row at a time: the chunk of every output row stays in registers while the
// value rows pass, each value row loaded (and widened) once for all of them. Per value row
// and output row that leaves one multiply and one add per register, and the output rows'
// sums are independent chains: one output row alone waits on its add's latency at every
// value row (a head of 8, one register, runs at a quarter of the adds' throughput).
// With AVX-512 the last register of a row shorter than a whole number of registers loads
// and stores under a lane mask (a head of 8 is one masked register); the other levels
// finish such a row element by element; rows of half a register or less go two to a
// register there (half_chunk). Every element sees the same steps in the same order either
// way.
#include "vec_mad.h"

#include "vec_dot_impl.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace gk::cpu {
namespace {

using detail::elem;

constexpr int L = simd::vf_lanes;

#if defined(GK_SIMD_AVX512)
/// Lanes [0, k) of y's last register in a chunk (the others neither read nor written).
using lane_mask = __mmask16;
constexpr lane_mask lanes(int k) { return static_cast<lane_mask>((1u << k) - 1u); }

template <elem E>
simd::vf load_lanes(const void * p, int64_t i, lane_mask m) {
    return detail::load_vec_masked<E>(p, i, m);
}
simd::vf load_y(const float * y, lane_mask m) { return detail::load_vec_masked<elem::f32>(y, 0, m); }
void     store_y(float * y, simd::vf v, lane_mask m) { _mm512_mask_storeu_ps(y, m, v); }
#else
/// Every register of a chunk is whole on the other levels.
struct lane_mask {};
constexpr lane_mask lanes(int) { return {}; }

template <elem E>
simd::vf load_lanes(const void * p, int64_t i, lane_mask) {
    return detail::load_vec<E>(p, i);
}
simd::vf load_y(const float * y, lane_mask) { return simd::load(y); }
void     store_y(float * y, simd::vf v, lane_mask) { simd::store(y, v); }
#endif

// A weight below it may make products subnormal: they are taken through double
// (simd::mul_via_f64, the same bits without the microcode assist). Far-away keys of a long
// context get such weights (exp underflows), a run of them at a time.
constexpr float tiny_weight = 0x1p-60f;

/// Output rows y_q (ldy apart), q < Q, value rows j < n for all of them, columns
/// [0, R * L) (y and v already offset to the chunk's first column), the last register
/// limited to `last` where Partial (AVX-512 only): each value row is loaded once for all Q
/// output rows, whose sums are independent chains. A zero weight's update is dropped by a
/// select, not skipped by a branch, and a partial register's masked loads are made a block
/// of rows at a time into a buffer: GCC 12 keeps accumulators in memory (a store at every
/// update) when a branch may skip their update or a masked load sits in their loop.
template <elem E, int Q, int R, bool Partial>
void chunk(float * y, size_t ldy, const float * w, size_t ldw, int64_t n, const char * v, size_t stride,
           lane_mask last) {
    constexpr int64_t block = 64;  // value rows whose partial register is loaded ahead
    simd::vf          acc[Q][R];
    for (int q = 0; q < Q; ++q) {
        for (int r = 0; r < R; ++r) {
            acc[q][r] = Partial && r == R - 1 ? load_y(y + q * ldy + r * L, last) : simd::load(y + q * ldy + r * L);
        }
    }
    simd::vf ahead[Partial ? block : 1];
    for (int64_t j0 = 0; j0 < n; j0 += block) {
        const int64_t nb = std::min(block, n - j0);
        if constexpr (Partial) {
            for (int64_t j = 0; j < nb; ++j) {
                ahead[j] = load_lanes<E>(v + (j0 + j) * stride, (R - 1) * L, last);
            }
        }
        for (int64_t j = j0; j < j0 + nb; ++j) {
            const char * row = v + j * stride;
            simd::vf     x[R];
            for (int r = 0; r < R; ++r) {
                x[r] = Partial && r == R - 1 ? ahead[j - j0] : detail::load_vec<E>(row, r * L);
            }
            for (int q = 0; q < Q; ++q) {
                const float    wq = w[q * ldw + j];
                const simd::vf wv = simd::broadcast(wq);
                simd::vf       p[R];
                if (wq != 0.0f && std::fabs(wq) < tiny_weight) [[unlikely]] {
                    for (int r = 0; r < R; ++r) {
                        p[r] = simd::mul_via_f64(wv, x[r]);
                    }
                } else {
                    for (int r = 0; r < R; ++r) {
                        p[r] = simd::mul(wv, x[r]);
                    }
                }
                for (int r = 0; r < R; ++r) {
                    acc[q][r] = simd::select_nonzero(wv, simd::add(acc[q][r], p[r]), acc[q][r]);
                }
            }
        }
    }
    for (int q = 0; q < Q; ++q) {
        for (int r = 0; r < R; ++r) {
            if (Partial && r == R - 1) {
                store_y(y + q * ldy + r * L, acc[q][r], last);
            } else {
                simd::store(y + q * ldy + r * L, acc[q][r]);
            }
        }
    }
}

#if defined(GK_SIMD_AVX512)
/// Output rows of at most half a register (d <= 8; attention heads of 8), P pairs of them:
/// output rows 2p and 2p + 1 share a register (low and high 256 bits), so that a value row,
/// loaded into both halves, costs one multiply, add and select per pair. The weights come a
/// block of 8 value rows at a time: one vector per pair, [row 2p's 8 | row 2p + 1's 8], from
/// which a permute spreads value row j's two weights. A block with a tiny weight takes every
/// product through double (mul_via_f64: mul's bits either way). The value rows and weights
/// past n are zero: their updates are dropped by the select, as a zero weight's are.
template <elem E, int P>
void half_chunk(float * y, size_t ldy, const float * w, size_t ldw, int64_t n, const char * v, size_t stride, int d) {
    constexpr int   block = 8;
    const __mmask16 m     = lanes(d);
    const __m512    zero  = _mm512_setzero_ps();
    simd::vf        acc[P];
    for (int p = 0; p < P; ++p) {
        acc[p] = detail::low_halves(load_y(y + 2 * p * ldy, m), load_y(y + (2 * p + 1) * ldy, m));
    }
    for (int64_t j0 = 0; j0 < n; j0 += block) {
        const int       nb    = static_cast<int>(std::min<int64_t>(block, n - j0));
        const __mmask16 valid = lanes(nb);
        simd::vf        x[block], wp[P];
        for (int j = 0; j < block; ++j) {
            const simd::vf r = j < nb ? load_lanes<E>(v + (j0 + j) * stride, 0, m) : zero;
            x[j]             = detail::low_halves(r, r);
        }
        bool tiny = false;
        for (int p = 0; p < P; ++p) {
            wp[p]             = detail::low_halves(load_lanes<elem::f32>(w + 2 * p * ldw, j0, valid),
                                                   load_lanes<elem::f32>(w + (2 * p + 1) * ldw, j0, valid));
            tiny              = tiny || simd::any_tiny(wp[p], tiny_weight);
        }
        const auto update = [&]<bool Tiny>() {
            for (int j = 0; j < block; ++j) {
                const __m512i idx = _mm512_setr_epi32(j, j, j, j, j, j, j, j, 8 + j, 8 + j, 8 + j, 8 + j, 8 + j, 8 + j,
                                                      8 + j, 8 + j);
                for (int p = 0; p < P; ++p) {
                    const simd::vf wv = _mm512_permutexvar_ps(idx, wp[p]);
                    const simd::vf pr = Tiny ? simd::mul_via_f64(wv, x[j]) : simd::mul(wv, x[j]);
                    acc[p]            = simd::select_nonzero(wv, simd::add(acc[p], pr), acc[p]);
                }
            }
        };
        if (tiny) [[unlikely]] {
            update.template operator()<true>();
        } else {
            update.template operator()<false>();
        }
    }
    for (int p = 0; p < P; ++p) {
        store_y(y + 2 * p * ldy, acc[p], m);
        store_y(y + (2 * p + 1) * ldy, _mm512_shuffle_f32x4(acc[p], acc[p], 0xEE), m);
    }
}

using half_chunk_fn = void (*)(float *, size_t, const float *, size_t, int64_t, const char *, size_t, int);
#endif

// Output rows taken together (at most), and the accumulator registers a chunk may hold:
// two thirds of the register file, the rest for the value row and the weight.
constexpr int max_rows = 6;
#if defined(GK_SIMD_AVX2)
constexpr int acc_regs = 10;  // of 16
#else
constexpr int acc_regs = 24;     // of 32 (AVX-512, NEON; the scalar set's floats as well)
#endif
constexpr int chunk_regs[] = {4, 2, 1};  // registers per output row in a chunk, largest first

using chunk_fn = void (*)(float *, size_t, const float *, size_t, int64_t, const char *, size_t, lane_mask);

/// chunk<E, q + 1, chunk_regs[k], p> at [q][k][p].
template <elem E, int Qm1>
constexpr std::array<std::array<chunk_fn, 2>, 3> chunk_row() {
    return {{{chunk<E, Qm1 + 1, chunk_regs[0], false>, chunk<E, Qm1 + 1, chunk_regs[0], true>},
             {chunk<E, Qm1 + 1, chunk_regs[1], false>, chunk<E, Qm1 + 1, chunk_regs[1], true>},
             {chunk<E, Qm1 + 1, chunk_regs[2], false>, chunk<E, Qm1 + 1, chunk_regs[2], true>}}};
}
template <elem E, int... Q>
constexpr auto chunk_table(std::integer_sequence<int, Q...>) {
    return std::array<std::array<std::array<chunk_fn, 2>, 3>, sizeof...(Q)>{chunk_row<E, Q>()...};
}

/// Output rows y_q, q < Q, value rows j < n for all of them, in chunks of columns over the
/// registers of a row (regs of them, the last limited to `tail` lanes).
template <elem E>
void columns(float * y, size_t ldy, const float * w, size_t ldw, int Q, int64_t n, const char * v, size_t stride,
             int64_t regs, int tail) {
    static constexpr auto table = chunk_table<E>(std::make_integer_sequence<int, max_rows>());
    constexpr size_t      esize = E == elem::f32 ? sizeof(float) : sizeof(uint16_t);
    for (int64_t r0 = 0; r0 < regs;) {
        int k = 0;  // the largest chunk that fits the registers and the columns left
        while (k + 1 < 3 && (chunk_regs[k] * Q > acc_regs || chunk_regs[k] > regs - r0)) {
            ++k;
        }
        const int  R       = chunk_regs[k];
        const bool partial = r0 + R == regs && tail < L;
        table[Q - 1][k][partial](y + r0 * L, ldy, w, ldw, n, v + r0 * L * esize, stride, lanes(partial ? tail : L));
        r0 += R;
    }
}

/// Output rows y_q, q < Q (at most max_rows), value rows j < n for all of them: in pairs to
/// a register where a row is half a register or less (AVX-512), else in chunks of columns.
template <elem E>
void together(float * y, size_t ldy, const float * w, size_t ldw, int Q, int64_t n, const char * v, size_t stride,
              int64_t d, int64_t regs, int tail) {
#if defined(GK_SIMD_AVX512)
    if (2 * d <= L && Q >= 2) {  // an odd row alone
        static constexpr half_chunk_fn pairs[] = {half_chunk<E, 1>, half_chunk<E, 2>, half_chunk<E, 3>};
        static_assert(std::size(pairs) == max_rows / 2);
        pairs[Q / 2 - 1](y, ldy, w, ldw, n, v, stride, static_cast<int>(d));
        if (Q % 2 != 0) {
            columns<E>(y + (Q - 1) * ldy, ldy, w + (Q - 1) * ldw, ldw, 1, n, v, stride, regs, tail);
        }
        return;
    }
#endif
    columns<E>(y, ldy, w, ldw, Q, n, v, stride, regs, tail);
}

template <elem E>
void mad_rows(float * y, size_t ldy, const float * w, size_t ldw, const int64_t * n, int rows, const void * v,
              size_t stride, int64_t d) {
    const auto * vrows = static_cast<const char *>(v);
#if defined(GK_SIMD_AVX512)
    const int64_t regs = (d + L - 1) / L;  // the last one masked when d % L != 0
    const int     tail = d % L == 0 ? L : static_cast<int>(d % L);
#else
    const int64_t regs = d / L;  // whole registers, then the rest element by element
    const int     tail = L;
#endif
    for (int q0 = 0; q0 < rows; q0 += max_rows) {
        // the value rows all of the group's output rows see, then each one's own rest
        const int     Q     = std::min(max_rows, rows - q0);
        const int64_t n_min = *std::min_element(n + q0, n + q0 + Q);
        together<E>(y + q0 * ldy, ldy, w + q0 * ldw, ldw, Q, n_min, vrows, stride, d, regs, tail);
        for (int q = q0; q < q0 + Q; ++q) {
            if (n[q] > n_min) {
                columns<E>(y + q * ldy, ldy, w + q * ldw + n_min, ldw, 1, n[q] - n_min, vrows + n_min * stride, stride,
                           regs, tail);
            }
            for (int64_t i = regs * L; i < d; ++i) {
                float acc = y[q * ldy + i];
                for (int64_t j = 0; j < n[q]; ++j) {
                    const float wq = w[q * ldw + j];
                    if (wq != 0.0f) {
                        acc = acc + wq * detail::load_one<E>(vrows + j * stride, i);
                    }
                }
                y[q * ldy + i] = acc;
            }
        }
    }
}

} // namespace

vec_mad_fn vec_mad_table(gk_type type) {
    switch (type) {
    case GK_TYPE_F32: return mad_rows<elem::f32>;
    case GK_TYPE_F16: return mad_rows<elem::f16>;
    case GK_TYPE_BF16: return mad_rows<elem::bf16>;
    default: return nullptr;
    }
}

} // namespace gk::cpu
