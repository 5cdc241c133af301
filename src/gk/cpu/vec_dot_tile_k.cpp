// vec_dot_tile_k.cpp - tile kernels of the K-quants against q8_K activations: q4_K,
// q5_K and q6_K, 16 weight rows (one 32-bit lane each) times up to 64 columns.
//
// Per super-block b (256 elements), the 16 rows are unpacked once into
// * q: the stored values as unsigned bytes (q4_K 0..15, q5_K 0..31, q6_K 0..63), laid
//   out so that 64 bytes hold elements 4k .. 4k + 3 of all 16 rows (row r in bytes
//   4r .. 4r + 3): one VPDPBUSD against 4 broadcast activation bytes adds four products
//   to every row's lane;
// * the integer scale sc_g of each group g (q4_K/q5_K: 8 groups of 32 with their mins
//   m_g; q6_K: 16 groups of 16, signed), one lane per row;
// * the f32 block scales d (and dmin).
// Then for every column, all exact in int32 (as the per-row kernels of vec_dot_k.cpp):
//   isum = sum over g of sc_g * (dot_g - o * asum_g),  isum_min = sum over g of m_g * asum_g,
// with dot_g the products of group g, asum_g its activation sum (q8_K's bsums) and o the
// stored value's offset (q6_K 32, else 0); and then, lane by lane, vec_dot's float step:
// chain b % 4 += (d * y.d) * float(isum) fused, and for q4_K/q5_K chain b % 4 +=
// -(dmin * y.d) * float(isum_min) fused. The result is (c0 + c1) + (c2 + c3): the bits of
// vec_dot_q*_K_q8_K for every element (vec_dot_tile.h; swept by test-vec-dot).
#include "vec_dot_tile.h"
#include "vec_dot_tile_impl.h"

#include "quant/k_quants.h"
#include "simd.h"
#include "vec_dot_impl.h"

#include <cstring>

#if defined(GK_TILE_AVX512)

namespace gk::cpu::detail {
namespace {

using quant::block_q4_K;
using quant::block_q5_K;
using quant::block_q6_K;
using quant::block_q8_K;
using quant::QK_K;

constexpr int kRows = 16;  // one 32-bit lane per weight row
constexpr int kCols = 64;  // columns per call (their chains stay in L1)

/// One super-block of 16 rows, unpacked.
template <int Groups> struct unpacked {
    alignas(64) uint8_t q[QK_K * kRows];       // q[64 k + 4 r + t] = value of element 4k + t of row r
    alignas(64) int32_t sc[Groups][kRows];     // integer scale of group g, row r
    alignas(64) int32_t mn[Groups][kRows];     // integer min of group g, row r (q4_K, q5_K)
    alignas(64) float   d[kRows];              // f32(d) of row r
    alignas(64) float   dmin[kRows];           // f32(dmin) of row r (q4_K, q5_K)
    alignas(64) uint8_t rowv[kRows][QK_K];     // the values row by row, before interleaving
};

// ---- unpacking one row's super-block (stored values, scales; scalar, exact) ----------

/// q4_K / q5_K: value of element 32 j + l is the low (j even) or high (j odd) nibble of
/// qs[32 (j / 2) + l], q5_K adding bit j of qh[l] as its fifth bit.
template <class Block> void unpack_row_q45(const Block & x, uint8_t * v, int32_t (*sc)[kRows], int32_t (*mn)[kRows],
                                           int r) {
    const k4_scales sm = unpack_k4_all(x.scales);
    for (int j = 0; j < QK_K / 32; ++j) {
        sc[j][r] = static_cast<int32_t>((sm.sc >> (8 * j)) & 0xFF);
        mn[j][r] = static_cast<int32_t>((sm.m >> (8 * j)) & 0xFF);
        for (int l = 0; l < 32; ++l) {
            const uint8_t byte = x.qs[32 * (j / 2) + l];
            uint8_t       q    = j % 2 ? byte >> 4 : byte & 0xF;
            if constexpr (requires { x.qh; }) {
                q |= static_cast<uint8_t>(((x.qh[l] >> j) & 1) << 4);
            }
            v[32 * j + l] = q;
        }
    }
}

/// q6_K: the layout of block_q6_K's comment; group g (16 elements) has scale scales[g].
void unpack_row_q6(const block_q6_K & x, uint8_t * v, int32_t (*sc)[kRows], int r) {
    for (int g = 0; g < QK_K / 16; ++g) {
        sc[g][r] = x.scales[g];
    }
    for (int h = 0; h < 2; ++h) {
        const uint8_t * ql = x.ql + 64 * h;
        const uint8_t * qh = x.qh + 32 * h;
        for (int l = 0; l < 32; ++l) {
            v[128 * h + l]      = static_cast<uint8_t>((ql[l] & 0xF) | ((qh[l] & 3) << 4));
            v[128 * h + 32 + l] = static_cast<uint8_t>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
            v[128 * h + 64 + l] = static_cast<uint8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
            v[128 * h + 96 + l] = static_cast<uint8_t>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
        }
    }
}

// ---- per type: groups, offset, mins, and the row unpacker --------------------------------

struct q4_K_traits {
    using block                   = block_q4_K;
    static constexpr int  groups  = 8;
    static constexpr int  offset  = 0;
    static constexpr bool has_min = true;
    static void unpack(const block & x, unpacked<groups> & u, int r) {
        unpack_row_q45(x, u.rowv[r], u.sc, u.mn, r);
        u.d[r]    = simd::half_to_float(x.d);
        u.dmin[r] = simd::half_to_float(x.dmin);
    }
};

struct q5_K_traits {
    using block                   = block_q5_K;
    static constexpr int  groups  = 8;
    static constexpr int  offset  = 0;
    static constexpr bool has_min = true;
    static void unpack(const block & x, unpacked<groups> & u, int r) {
        unpack_row_q45(x, u.rowv[r], u.sc, u.mn, r);
        u.d[r]    = simd::half_to_float(x.d);
        u.dmin[r] = simd::half_to_float(x.dmin);
    }
};

struct q6_K_traits {
    using block                   = block_q6_K;
    static constexpr int  groups  = 16;
    static constexpr int  offset  = 32;
    static constexpr bool has_min = false;
    static void unpack(const block & x, unpacked<groups> & u, int r) {
        unpack_row_q6(x, u.rowv[r], u.sc, r);
        u.d[r] = simd::half_to_float(x.d);
    }
};

/// Super-block b of rows 0 .. nr-1 into u; rows nr .. 15 become zeros (their lanes are
/// computed and never stored).
template <class T>
void unpack_block(const char * x, size_t bx, int nr, int64_t b, unpacked<T::groups> & u) {
    for (int r = 0; r < kRows; ++r) {
        if (r < nr) {
            T::unpack(reinterpret_cast<const typename T::block *>(x + r * bx)[b], u, r);
        } else {
            std::memset(u.rowv[r], 0, QK_K);
            for (int g = 0; g < T::groups; ++g) {
                u.sc[g][r] = 0;
                u.mn[g][r] = 0;
            }
            u.d[r]    = 0.0f;
            u.dmin[r] = 0.0f;
        }
    }
    // interleave: the 32-bit word k of row r goes to word 16 k + r
    uint32_t * q = reinterpret_cast<uint32_t *>(u.q);
    for (int r = 0; r < kRows; ++r) {
        uint32_t words[QK_K / 4];
        std::memcpy(words, u.rowv[r], QK_K);
        for (int k = 0; k < QK_K / 4; ++k) {
            q[kRows * k + r] = words[k];
        }
    }
}

/// The activation sum of group g of y (bsums hold sums of 16).
template <int Groups> int32_t group_asum(const block_q8_K & y, int g) {
    if constexpr (Groups == 8) {
        return y.bsums[2 * g] + y.bsums[2 * g + 1];
    } else {
        return y.bsums[g];
    }
}

/// isum and isum_min of the 16 rows of u against the super-blocks y[0 .. C-1] of C
/// columns. The C columns' sums are independent chains of VPDPBUSDs, and each weight
/// vector is loaded once for all of them.
template <class T, int C>
[[gnu::always_inline]] inline void block_sums(const unpacked<T::groups> & u, const block_q8_K * const * y,
                                              __m512i * isum, __m512i * imin) {
    constexpr int per_group = QK_K / T::groups / 4;  // VPDPBUSDs per group
    for (int c = 0; c < C; ++c) {
        isum[c] = _mm512_setzero_si512();
        imin[c] = _mm512_setzero_si512();
    }
    for (int g = 0; g < T::groups; ++g) {
        __m512i dot[C];
        for (int c = 0; c < C; ++c) {
            dot[c] = _mm512_setzero_si512();
        }
        for (int t = 0; t < per_group; ++t) {
            const int     k = g * per_group + t;
            const __m512i w = _mm512_load_si512(u.q + 64 * k);
            for (int c = 0; c < C; ++c) {
                int32_t a4;
                std::memcpy(&a4, y[c]->qs + 4 * k, sizeof a4);
                dot[c] = _mm512_dpbusd_epi32(dot[c], w, _mm512_set1_epi32(a4));
            }
        }
        const __m512i sc = _mm512_load_si512(u.sc[g]);
        for (int c = 0; c < C; ++c) {
            const int32_t asum = group_asum<T::groups>(*y[c], g);
            if constexpr (T::offset != 0) {
                dot[c] = _mm512_sub_epi32(dot[c], _mm512_set1_epi32(T::offset * asum));
            }
            isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(dot[c], sc));
            if constexpr (T::has_min) {
                imin[c] = _mm512_add_epi32(imin[c], _mm512_mullo_epi32(_mm512_load_si512(u.mn[g]), _mm512_set1_epi32(asum)));
            }
        }
    }
}

/// Super-block b of C columns from column c0: the integer sums, then vec_dot's float
/// step on each column's chain b % 4.
template <class T, int C>
void block_columns(const unpacked<T::groups> & u, const char * y, size_t by, int c0, int64_t b, float * chains) {
    const block_q8_K * yb[C];
    for (int c = 0; c < C; ++c) {
        yb[c] = reinterpret_cast<const block_q8_K *>(y + (c0 + c) * by) + b;
    }
    __m512i isum[C], imin[C];
    block_sums<T, C>(u, yb, isum, imin);
    const __m512 d    = _mm512_load_ps(u.d);
    const __m512 dmin = _mm512_load_ps(u.dmin);
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(0x80000000u)));
    for (int c = 0; c < C; ++c) {
        float *      chain = chains + (static_cast<size_t>(c0 + c) * 4 + (b & 3)) * kRows;
        const __m512 ya    = _mm512_set1_ps(yb[c]->d);
        __m512       acc   = _mm512_fmadd_ps(_mm512_mul_ps(d, ya), _mm512_cvtepi32_ps(isum[c]), _mm512_load_ps(chain));
        if constexpr (T::has_min) {
            const __m512 dm = _mm512_xor_ps(_mm512_mul_ps(dmin, ya), sign);  // -(dmin * y.d), exact
            acc             = _mm512_fmadd_ps(dm, _mm512_cvtepi32_ps(imin[c]), acc);
        }
        _mm512_store_ps(chain, acc);
    }
}

constexpr int kColStep = 4;  // columns whose sums are computed together

/// The tile kernel: see vec_dot_tile.h for the contract and the file comment for the order.
template <class T>
void tile_dot(int64_t n, int nr, const void * vx, size_t bx, int nc, const void * vy, size_t by, float * s, size_t ldc,
              void * work) {
    auto *        u      = static_cast<unpacked<T::groups> *>(work);
    auto *        chains = reinterpret_cast<float *>(static_cast<char *>(work) + sizeof(unpacked<T::groups>));
    const char *  x      = static_cast<const char *>(vx);
    const char *  y      = static_cast<const char *>(vy);
    const int64_t nb     = n / QK_K;
    std::memset(chains, 0, sizeof(float) * kRows * 4 * static_cast<size_t>(nc));
    for (int64_t b = 0; b < nb; ++b) {
        unpack_block<T>(x, bx, nr, b, *u);
        int c = 0;
        for (; c + kColStep <= nc; c += kColStep) {
            block_columns<T, kColStep>(*u, y, by, c, b, chains);
        }
        for (; c < nc; ++c) {
            block_columns<T, 1>(*u, y, by, c, b, chains);
        }
    }
    const __mmask16 rows = static_cast<__mmask16>((1u << nr) - 1);
    for (int c = 0; c < nc; ++c) {
        const float * ch  = chains + static_cast<size_t>(c) * 4 * kRows;
        const __m512  sum = _mm512_add_ps(_mm512_add_ps(_mm512_load_ps(ch), _mm512_load_ps(ch + kRows)),
                                          _mm512_add_ps(_mm512_load_ps(ch + 2 * kRows), _mm512_load_ps(ch + 3 * kRows)));
        _mm512_mask_storeu_ps(s + c * ldc, rows, sum);
    }
}

template <class T> constexpr size_t work_bytes = sizeof(unpacked<T::groups>) + sizeof(float) * kRows * 4 * kCols;

} // namespace

const tile_kernel tile_q4_K = {tile_dot<q4_K_traits>, kRows, kCols, work_bytes<q4_K_traits>};
const tile_kernel tile_q5_K = {tile_dot<q5_K_traits>, kRows, kCols, work_bytes<q5_K_traits>};
const tile_kernel tile_q6_K = {tile_dot<q6_K_traits>, kRows, kCols, work_bytes<q6_K_traits>};

} // namespace gk::cpu::detail

#endif
