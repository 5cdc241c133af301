// vec_mad.cpp - y += w * v for f32, f16 and bf16 rows (vec_mad.h), on the vector layer.
#include "vec_mad.h"

#include "simd.h"

namespace gk::cpu {
namespace {

/// Elements i .. i + vf_lanes - 1 of a row of plain type T as f32 (exact).
template <gk_type T> simd::vf load_vec(const void * row, int64_t i) {
    if constexpr (T == GK_TYPE_F32) {
        return simd::load(static_cast<const float *>(row) + i);
    } else if constexpr (T == GK_TYPE_F16) {
        return simd::load_f16(static_cast<const fp16_t *>(row) + i);
    } else {
        return simd::load_bf16(static_cast<const bf16_t *>(row) + i);
    }
}

/// Element i of a row of plain type T as f32 (exact).
template <gk_type T> float load_one(const void * row, int64_t i) {
    if constexpr (T == GK_TYPE_F32) {
        return static_cast<const float *>(row)[i];
    } else if constexpr (T == GK_TYPE_F16) {
        return simd::half_to_float(static_cast<const fp16_t *>(row)[i]);
    } else {
        return bf16_to_fp32(static_cast<const bf16_t *>(row)[i]);
    }
}

template <gk_type T> void mad_row(float * y, float w, const void * v, int64_t n) {
    const simd::vf wv = simd::broadcast(w);
    int64_t        i  = 0;
    for (; i + simd::vf_lanes <= n; i += simd::vf_lanes) {
        simd::store(y + i, simd::add(simd::load(y + i), simd::mul(wv, load_vec<T>(v, i))));
    }
    for (; i < n; ++i) {
        y[i] += w * load_one<T>(v, i);
    }
}

} // namespace

vec_mad_fn vec_mad_table(gk_type type) {
    switch (type) {
        case GK_TYPE_F32: return mad_row<GK_TYPE_F32>;
        case GK_TYPE_F16: return mad_row<GK_TYPE_F16>;
        case GK_TYPE_BF16: return mad_row<GK_TYPE_BF16>;
        default: return nullptr;
    }
}

} // namespace gk::cpu
