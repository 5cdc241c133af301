// vec_exp.cpp - exp_f32 on vectors (vec_exp.h), and the row kernels that use it: one
// small vexp per instruction-set level, one shared loop per kernel, exp_f32 for the tails
// and as the whole of the scalar level.
#include "vec_exp.h"

#include "simd.h"

namespace gk::cpu {
namespace {

namespace c = exp_constants;
using simd::vf;

#if !defined(GK_SIMD_SCALAR)

/// exp_f32's polynomial j ~ e^b on a vector of reduced arguments b, with u = b * b.
vf poly(vf b) {
    const vf u = simd::mul(b, b);
    return simd::fmadd(simd::fmadd(simd::fmadd(simd::broadcast(c::p5), b, simd::broadcast(c::p4)), u,
                                   simd::fmadd(simd::broadcast(c::p3), b, simd::broadcast(c::p2))),
                       u, simd::fmadd(simd::broadcast(c::p1), b, simd::broadcast(1.0f)));
}

#endif

#if defined(GK_SIMD_AVX512)

/// j * 2^n on double lanes (exact), for simd::in_f64: VSCALEFPS's bits once rounded.
__m512d scalef_pd(__m512d j, __m512d n) { return _mm512_scalef_pd(j, n); }

/// exp_f32 on 16 lanes: 2^n applied by VSCALEFPS (one rounding, as exp_f32's two steps).
vf vexp(vf x) {
    const vf z   = _mm512_fmadd_ps(x, simd::broadcast(c::log2e), simd::broadcast(c::shift));
    const vf n   = _mm512_sub_ps(z, simd::broadcast(c::shift));
    const vf b   = _mm512_fnmadd_ps(n, simd::broadcast(c::ln2_lo), _mm512_fnmadd_ps(n, simd::broadcast(c::ln2_hi), x));
    const vf j   = poly(b);
    // j * 2^n is subnormal below n = -125: scaled in double there (the same one rounding,
    // without the microcode assist a subnormal result costs; see simd::mul_via_f64)
    const vf        res  = _mm512_cmp_ps_mask(n, simd::broadcast(-125.0f), _CMP_LT_OQ) == 0 ? _mm512_scalef_ps(j, n)
                                                                                            : simd::in_f64(j, n, scalef_pd);
    const __mmask16 big  = _mm512_cmp_ps_mask(_mm512_abs_ps(n), simd::broadcast(c::big), _CMP_GT_OQ);
    const __mmask16 pos  = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_GT_OQ);
    const vf        edge = _mm512_mask_blend_ps(pos, _mm512_setzero_ps(), simd::broadcast(INFINITY));
    const __mmask16 nan  = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_add_ps(_mm512_mask_blend_ps(big, res, edge), nan, x, x);
}

#elif defined(GK_SIMD_AVX2)

/// 2^k for integer-valued lanes k in [-126, 127].
vf exp2_int(vf k) {
    const __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(k), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

/// exp_f32 on 8 lanes.
vf vexp(vf x) {
    const vf z    = _mm256_fmadd_ps(x, simd::broadcast(c::log2e), simd::broadcast(c::shift));
    const vf n    = _mm256_sub_ps(z, simd::broadcast(c::shift));
    const vf b    = _mm256_fnmadd_ps(n, simd::broadcast(c::ln2_lo), _mm256_fnmadd_ps(n, simd::broadcast(c::ln2_hi), x));
    const vf j    = poly(b);
    const vf n1   = _mm256_min_ps(_mm256_max_ps(n, simd::broadcast(-c::step)), simd::broadcast(c::step));
    const vf jn1  = _mm256_mul_ps(j, exp2_int(n1));  // normal: |n1| <= 100
    const vf rest = exp2_int(_mm256_sub_ps(n, n1));
    // subnormal below n = -125: multiplied in double there (simd::mul_via_f64)
    const vf res  = _mm256_movemask_ps(_mm256_cmp_ps(n, simd::broadcast(-125.0f), _CMP_LT_OQ)) == 0
                        ? _mm256_mul_ps(jn1, rest)
                        : simd::mul_via_f64(jn1, rest);
    const vf absn = _mm256_andnot_ps(simd::broadcast(-0.0f), n);
    const vf big  = _mm256_cmp_ps(absn, simd::broadcast(c::big), _CMP_GT_OQ);
    const vf edge = _mm256_and_ps(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_GT_OQ), simd::broadcast(INFINITY));
    const vf nan  = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(_mm256_blendv_ps(res, edge, big), _mm256_add_ps(x, x), nan);
}

#elif defined(GK_SIMD_NEON)

/// 2^k for integer-valued lanes k in [-126, 127].
vf exp2_int(vf k) {
    const int32x4_t e = vaddq_s32(vcvtq_s32_f32(k), vdupq_n_s32(127));
    return vreinterpretq_f32_s32(vshlq_n_s32(e, 23));
}

/// exp_f32 on 4 lanes.
vf vexp(vf x) {
    const vf         z    = vfmaq_f32(simd::broadcast(c::shift), x, simd::broadcast(c::log2e));
    const vf         n    = vsubq_f32(z, simd::broadcast(c::shift));
    const vf         b    = vfmsq_f32(vfmsq_f32(x, n, simd::broadcast(c::ln2_hi)), n, simd::broadcast(c::ln2_lo));
    const vf         j    = poly(b);
    const vf         n1   = vminq_f32(vmaxq_f32(n, simd::broadcast(-c::step)), simd::broadcast(c::step));
    const vf         res  = vmulq_f32(vmulq_f32(j, exp2_int(n1)), exp2_int(vsubq_f32(n, n1)));
    const uint32x4_t big  = vcagtq_f32(n, simd::broadcast(c::big));
    const vf         edge = vbslq_f32(vcgtq_f32(n, vdupq_n_f32(0.0f)), simd::broadcast(INFINITY), vdupq_n_f32(0.0f));
    const uint32x4_t num  = vceqq_f32(x, x);
    return vbslq_f32(num, vbslq_f32(big, edge, res), vaddq_f32(x, x));
}

#else

vf vexp(vf x) { return exp_f32(x); }

#endif

void exp_shift(float * w, int64_t n, float max) {
    const vf m = simd::broadcast(max);
    int64_t  i = 0;
    for (; i + simd::vf_lanes <= n; i += simd::vf_lanes) {
        simd::store(w + i, vexp(simd::sub(simd::load(w + i), m)));
    }
    for (; i < n; ++i) {
        w[i] = exp_f32(w[i] - max);
    }
}

void scale(float * w, int64_t n, float s) {
    // A product of at most 2^-100 by a factor of at least 2^-26 (1 / the sum of up to 2^26
    // softmax numerators) is normal: a vector with no nonzero value below 2^-100 takes the
    // float multiply, others go through double (the same bits, no microcode assist).
    const vf f = simd::broadcast(s);
    int64_t  i = 0;
    for (; i + simd::vf_lanes <= n; i += simd::vf_lanes) {
        const vf v = simd::load(w + i);
        simd::store(w + i, simd::any_tiny(v, 0x1p-100f) ? simd::mul_via_f64(v, f) : simd::mul(v, f));
    }
    for (; i < n; ++i) {
        w[i] *= s;
    }
}

vf vsilu(vf x) { return simd::div(x, simd::add(simd::broadcast(1.0f), vexp(simd::sub(simd::zero(), x)))); }

void silu(float * y, const float * x, int64_t n) {
    int64_t i = 0;
    for (; i + simd::vf_lanes <= n; i += simd::vf_lanes) {
        simd::store(y + i, vsilu(simd::load(x + i)));
    }
    for (; i < n; ++i) {
        y[i] = silu_f32(x[i]);
    }
}

void swiglu(float * y, const float * x, const float * g, int64_t n) {
    int64_t i = 0;
    for (; i + simd::vf_lanes <= n; i += simd::vf_lanes) {
        simd::store(y + i, simd::mul(vsilu(simd::load(x + i)), simd::load(g + i)));
    }
    for (; i < n; ++i) {
        y[i] = silu_f32(x[i]) * g[i];
    }
}

}  // namespace

const exp_kernels & exp_kernels_table() {
    static constexpr exp_kernels k{exp_shift, scale, silu, swiglu};
    return k;
}

}  // namespace gk::cpu
