// vec_mad.cpp - y += w * v for f32, f16 and bf16 rows (vec_mad.h), on the vector layer.
#include "vec_mad.h"

#include "vec_dot_impl.h"

namespace gk::cpu {
namespace {

template <detail::elem E> void mad_row(float * y, float w, const void * v, int64_t n) {
    const simd::vf wv = simd::broadcast(w);
    int64_t        i  = 0;
    for (; i + simd::vf_lanes <= n; i += simd::vf_lanes) {
        simd::store(y + i, simd::add(simd::load(y + i), simd::mul(wv, detail::load_vec<E>(v, i))));
    }
    for (; i < n; ++i) {
        y[i] += w * detail::load_one<E>(v, i);
    }
}

} // namespace

vec_mad_fn vec_mad_table(gk_type type) {
    switch (type) {
        case GK_TYPE_F32: return mad_row<detail::elem::f32>;
        case GK_TYPE_F16: return mad_row<detail::elem::f16>;
        case GK_TYPE_BF16: return mad_row<detail::elem::bf16>;
        default: return nullptr;
    }
}

} // namespace gk::cpu
