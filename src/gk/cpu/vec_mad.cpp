// vec_mad.cpp - y += the weighted sum of f32, f16 or bf16 rows (vec_mad.h), on the vector
// layer.
//
// The columns are taken a chunk of up to 8 registers at a time, and the chunk of y stays
// in those registers while every row passes: per row and register one load (widened), one
// multiply and one add, where a pass per row would also load and store y. A chunk of 8
// registers is 128 columns with AVX-512 (a head of 256 reads its rows twice, from cache).
// With AVX-512 the last register of a row shorter than a whole number of registers loads
// and stores under a lane mask (a head of 8 is one masked register); the other levels
// finish such a row element by element. Every element sees the same steps in the same
// order either way.
#include "vec_mad.h"

#include "vec_dot_impl.h"

#include <algorithm>
#include <array>
#include <utility>

namespace gk::cpu {
namespace {

using detail::elem;

constexpr int L         = simd::vf_lanes;
constexpr int max_chunk = 8;  // registers of y held across the rows

#if defined(GK_SIMD_AVX512)
/// Lanes [0, k) of y's last register in a chunk (the others neither read nor written).
using lane_mask = __mmask16;
constexpr lane_mask lanes(int k) { return static_cast<lane_mask>((1u << k) - 1u); }

template <elem E>
simd::vf load_lanes(const void * p, int64_t i, lane_mask m) {
    if constexpr (E == elem::f32) {
        return _mm512_maskz_loadu_ps(m, static_cast<const float *>(p) + i);
    } else if constexpr (E == elem::f16) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, static_cast<const fp16_t *>(p) + i));
    } else {
        const __m512i u = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, static_cast<const bf16_t *>(p) + i));
        return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
    }
}
simd::vf load_y(const float * y, lane_mask m) { return _mm512_maskz_loadu_ps(m, y); }
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

/// Columns [0, R * L) of y and of the rows (v already offset to the chunk's first column),
/// the last register limited to `last`.
template <elem E, int R>
void chunk(float * y, const float * w, int64_t n, const char * v, size_t stride, lane_mask last) {
    simd::vf acc[R];
    for (int r = 0; r + 1 < R; ++r) {
        acc[r] = simd::load(y + r * L);
    }
    acc[R - 1] = load_y(y + (R - 1) * L, last);
    for (int64_t j = 0; j < n; ++j) {
        if (w[j] == 0.0f) {
            continue;  // a masked key's row is not read
        }
        const simd::vf wv  = simd::broadcast(w[j]);
        const char *   row = v + j * stride;
        for (int r = 0; r + 1 < R; ++r) {
            acc[r] = simd::add(acc[r], simd::mul(wv, detail::load_vec<E>(row, r * L)));
        }
        acc[R - 1] = simd::add(acc[R - 1], simd::mul(wv, load_lanes<E>(row, (R - 1) * L, last)));
    }
    for (int r = 0; r + 1 < R; ++r) {
        simd::store(y + r * L, acc[r]);
    }
    store_y(y + (R - 1) * L, acc[R - 1], last);
}

using chunk_fn = void (*)(float *, const float *, int64_t, const char *, size_t, lane_mask);

template <elem E, int... R>
constexpr auto chunks(std::integer_sequence<int, R...>) {
    return std::array<chunk_fn, sizeof...(R)>{chunk<E, R + 1>...};
}

template <elem E>
void mad_rows(float * y, const float * w, int64_t n, const void * v, size_t stride, int64_t d) {
    static constexpr auto by_regs = chunks<E>(std::make_integer_sequence<int, max_chunk>());
    constexpr size_t      esize   = E == elem::f32 ? sizeof(float) : sizeof(uint16_t);
    const auto *          rows    = static_cast<const char *>(v);
#if defined(GK_SIMD_AVX512)
    const int64_t regs = (d + L - 1) / L;  // the last one masked when d % L != 0
    const int     tail = d % L == 0 ? L : static_cast<int>(d % L);
#else
    const int64_t regs = d / L;  // whole registers, then the rest element by element
    const int     tail = L;
#endif
    for (int64_t r0 = 0; r0 < regs; r0 += max_chunk) {
        const int64_t k = std::min<int64_t>(max_chunk, regs - r0);
        by_regs[k - 1](y + r0 * L, w, n, rows + r0 * L * esize, stride, lanes(r0 + k == regs ? tail : L));
    }
    for (int64_t i = regs * L; i < d; ++i) {
        float acc = y[i];
        for (int64_t j = 0; j < n; ++j) {
            if (w[j] != 0.0f) {
                acc = acc + w[j] * detail::load_one<E>(rows + j * stride, i);
            }
        }
        y[i] = acc;
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
