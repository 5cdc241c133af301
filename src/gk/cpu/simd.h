// simd.h - the vector layer of the CPU kernels.
//
// One float vector type `vf` of `vf_lanes` lanes and a handful of inline operations on
// it (load, store, broadcast, add, sub, mul, div, fused multiply-add, a select by w != 0,
// horizontal sum, and loads that widen f16 / bf16 to f32), compiled to one of four levels
// chosen at compile time by what the compiler may use (-march / -m flags). Run-time
// dispatch happens a layer above: the kernel sources are compiled once per level
// (kernel_set.h):
//
//   GK_SIMD_AVX512  __m512, 16 lanes   needs AVX-512F, FMA, F16C
//   GK_SIMD_AVX2    __m256,  8 lanes   needs AVX2, FMA, F16C
//   GK_SIMD_NEON    float32x4_t, 4     AArch64 Advanced SIMD
//   GK_SIMD_SCALAR  float,   1 lane    anything else
//
// Rounding contract, the reason this file exists rather than raw intrinsics:
// * fmadd(a, b, c) is fused (one rounding) on every level whose target has an FMA
//   instruction (GK_SIMD_HAS_FMA), and fmadd_scalar() is the same operation on one
//   float. The build never contracts a * b + c on its own (-ffp-contract=off), so a
//   scalar loop and a vector loop that perform the same operations in the same order
//   agree bit for bit. On a target without FMA both round the product separately.
// * reduce_add() sums the lanes by halving: lane l += lane l + W/2, then l += l + W/4,
//   ... down to lane 0. A kernel that keeps several registers and combines them the
//   same way therefore has an order that does not depend on the vector width.
// * load_f16 / load_bf16 are exact (every f16 and bf16 value is an f32 value).
// * mul_via_f64(a, b) is mul(a, b) to the bit: the product of two floats is exact in
//   double, and rounding it to float is the one rounding mul makes (in_f64, AVX-512: any
//   operation on double lanes, its results rounded once to float). On x86 it goes through
//   double so that a subnormal operand or result costs no microcode assist (a float
//   multiply that meets one takes about 150 cycles on Intel cores; converting to and from
//   double does not). any_tiny(v, bound) says whether a lane is nonzero and below bound in
//   magnitude: when to take it. Elsewhere both are the plain multiply and false.
// * load_bf16_pairs splits 2W bf16 values into the W even- and W odd-indexed ones, and
//   flush_tiny / has_min_normal are the flush-to-zero step of the bf16 dot's order
//   (vec_dot_bf16.cpp): both compare magnitudes with FLT_MIN, so they are exact.
#pragma once

#include "quant/fp16.h"

#include <cmath>
#include <cstdint>

#if defined(__AVX512F__) && defined(__FMA__) && defined(__F16C__)
#define GK_SIMD_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define GK_SIMD_AVX2 1
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define GK_SIMD_NEON 1
#else
#define GK_SIMD_SCALAR 1
#endif

#if defined(GK_SIMD_AVX512) || defined(GK_SIMD_AVX2)
#define GK_SIMD_X86 1
#endif

#if defined(GK_SIMD_X86) || defined(__F16C__)
// GCC 12's AVX-512 intrinsics initialise their "undefined" operand from itself, which
// -Wuninitialized reports at every inlined use (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#elif defined(GK_SIMD_NEON)
#include <arm_neon.h>
#endif

#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define GK_SIMD_HAS_FMA 1
#endif

// x86 integer dot of unsigned by signed bytes into int32 without intermediate
// saturation (VPDPBUSD), used by the integer dot kernels where present.
#if defined(GK_SIMD_X86) && ((defined(__AVX512VNNI__) && defined(__AVX512VL__)) || defined(__AVXVNNI__))
#define GK_SIMD_VNNI 1
#endif

namespace gk::simd {

/// What this build of the kernels was compiled for (for the device-discovery line).
struct features {
    const char * level;  // "AVX512", "AVX2", "NEON" or "scalar"
    bool avx512;
    bool avx2;
    bool fma;
    bool f16c;
    bool vnni;           // VPDPBUSD in the x86 integer dots
    bool neon;
};

/// The compiled SIMD level and flags.
constexpr features compiled_features() {
    features f{};
#if defined(GK_SIMD_AVX512)
    f.level = "AVX512";
#elif defined(GK_SIMD_AVX2)
    f.level = "AVX2";
#elif defined(GK_SIMD_NEON)
    f.level = "NEON";
#else
    f.level = "scalar";
#endif
#if defined(__AVX512F__)
    f.avx512 = true;
#endif
#if defined(__AVX2__)
    f.avx2 = true;
#endif
#if defined(GK_SIMD_HAS_FMA)
    f.fma = true;
#endif
#if defined(__F16C__)
    f.f16c = true;
#endif
#if defined(GK_SIMD_VNNI)
    f.vnni = true;
#endif
#if defined(GK_SIMD_NEON)
    f.neon = true;
#endif
    return f;
}

/// a * b + c on one float, rounded exactly as fmadd() rounds each lane.
inline float fmadd_scalar(float a, float b, float c) {
#if defined(GK_SIMD_HAS_FMA)
    return std::fma(a, b, c);
#else
    return a * b + c;
#endif
}

/// The smallest normal float, 2^-126 (FLT_MIN).
inline constexpr float min_normal = 0x1p-126f;

/// v, or a zero of v's sign where |v| < 2^-126 (a subnormal): flush to zero.
inline float flush_tiny_scalar(float v) { return std::fabs(v) < min_normal ? std::copysign(0.0f, v) : v; }

/// f16 bits -> f32, exact: the F16C instruction where there is one, else gk::fp16_to_fp32
/// (the same value for every pattern; a NaN comes out quiet either way).
inline float half_to_float(fp16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    return fp16_to_fp32(h);
#endif
}

#if defined(GK_SIMD_AVX512)

using vf = __m512;
inline constexpr int vf_lanes = 16;

inline vf zero() { return _mm512_setzero_ps(); }
inline vf broadcast(float x) { return _mm512_set1_ps(x); }
inline vf load(const float * p) { return _mm512_loadu_ps(p); }
inline void store(float * p, vf v) { _mm512_storeu_ps(p, v); }
inline vf add(vf a, vf b) { return _mm512_add_ps(a, b); }
inline vf sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
inline vf mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
inline vf div(vf a, vf b) { return _mm512_div_ps(a, b); }
inline vf fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }

inline vf select_nonzero(vf w, vf a, vf b) {
    const __mmask16 nonzero = _mm512_cmp_ps_mask(w, _mm512_setzero_ps(), _CMP_NEQ_UQ);
    return _mm512_mask_mov_ps(b, nonzero, a);
}
template <class Op>
inline vf in_f64(vf a, vf b, Op op) {
    const __m512d lo = op(_mm512_cvtps_pd(_mm512_castps512_ps256(a)), _mm512_cvtps_pd(_mm512_castps512_ps256(b)));
    const __m512d hi = op(_mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)), _mm512_cvtps_pd(_mm512_extractf32x8_ps(b, 1)));
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}
inline vf mul_via_f64(vf a, vf b) {
    return in_f64(a, b, [](__m512d x, __m512d y) { return _mm512_mul_pd(x, y); });
}
inline bool any_tiny(vf v, float bound) {
    const __m512 a = _mm512_abs_ps(v);
    return (_mm512_cmp_ps_mask(a, _mm512_set1_ps(bound), _CMP_LT_OQ) &
            _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_NEQ_OQ)) != 0;
}
inline vf load_f16(const fp16_t * p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}
inline vf load_bf16(const bf16_t * p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
inline void load_bf16_pairs(const bf16_t * p, vf & even, vf & odd) {
    const __m512i w = _mm512_loadu_si512(p);
    even            = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    odd             = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(int32_t(0xFFFF0000u))));
}
inline vf flush_tiny(vf v) {
    const __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(min_normal), _CMP_LT_OQ);
    const __m512i   bits = _mm512_castps_si512(v);
    return _mm512_castsi512_ps(_mm512_mask_and_epi32(bits, tiny, bits, _mm512_set1_epi32(int32_t(0x80000000u))));
}
inline bool has_min_normal(vf v) {
    return _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(min_normal), _CMP_EQ_OQ) != 0;
}
inline float reduce_add(vf v) {
    const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v),
                                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    const __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
    return _mm_cvtss_f32(s1);
}

#elif defined(GK_SIMD_AVX2)

using vf = __m256;
inline constexpr int vf_lanes = 8;

inline vf zero() { return _mm256_setzero_ps(); }
inline vf broadcast(float x) { return _mm256_set1_ps(x); }
inline vf load(const float * p) { return _mm256_loadu_ps(p); }
inline void store(float * p, vf v) { _mm256_storeu_ps(p, v); }
inline vf add(vf a, vf b) { return _mm256_add_ps(a, b); }
inline vf sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
inline vf mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
inline vf div(vf a, vf b) { return _mm256_div_ps(a, b); }
inline vf fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
inline vf select_nonzero(vf w, vf a, vf b) {
    return _mm256_blendv_ps(b, a, _mm256_cmp_ps(w, _mm256_setzero_ps(), _CMP_NEQ_UQ));
}
inline vf mul_via_f64(vf a, vf b) {
    const __m256d lo = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a)),
                                     _mm256_cvtps_pd(_mm256_castps256_ps128(b)));
    const __m256d hi = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)),
                                     _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)));
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}
inline bool any_tiny(vf v, float bound) {
    const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(a, _mm256_set1_ps(bound), _CMP_LT_OQ),
                                            _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_NEQ_OQ))) != 0;
}
inline vf load_f16(const fp16_t * p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}
inline vf load_bf16(const bf16_t * p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
inline void load_bf16_pairs(const bf16_t * p, vf & even, vf & odd) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
    even            = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    odd             = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(int32_t(0xFFFF0000u))));
}
inline vf flush_tiny(vf v) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 tiny = _mm256_cmp_ps(_mm256_andnot_ps(sign, v), _mm256_set1_ps(min_normal), _CMP_LT_OQ);
    return _mm256_andnot_ps(_mm256_andnot_ps(sign, tiny), v);  // a tiny lane keeps its sign bit only
}
inline bool has_min_normal(vf v) {
    const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(min_normal), _CMP_EQ_OQ)) != 0;
}
inline float reduce_add(vf v) {
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    const __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
    return _mm_cvtss_f32(s1);
}

#elif defined(GK_SIMD_NEON)

using vf = float32x4_t;
inline constexpr int vf_lanes = 4;

inline vf zero() { return vdupq_n_f32(0.0f); }
inline vf broadcast(float x) { return vdupq_n_f32(x); }
inline vf load(const float * p) { return vld1q_f32(p); }
inline void store(float * p, vf v) { vst1q_f32(p, v); }
inline vf add(vf a, vf b) { return vaddq_f32(a, b); }
inline vf sub(vf a, vf b) { return vsubq_f32(a, b); }
inline vf mul(vf a, vf b) { return vmulq_f32(a, b); }
inline vf div(vf a, vf b) { return vdivq_f32(a, b); }
inline vf fmadd(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
inline vf select_nonzero(vf w, vf a, vf b) { return vbslq_f32(vceqq_f32(w, vdupq_n_f32(0.0f)), b, a); }
inline vf mul_via_f64(vf a, vf b) { return vmulq_f32(a, b); }  // Arm cores take subnormals at full speed
inline bool any_tiny(vf, float) { return false; }
inline vf load_f16(const fp16_t * p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
inline vf load_bf16(const bf16_t * p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
inline void load_bf16_pairs(const bf16_t * p, vf & even, vf & odd) {
    const uint32x4_t w = vld1q_u32(reinterpret_cast<const uint32_t *>(p));
    even               = vreinterpretq_f32_u32(vshlq_n_u32(w, 16));
    odd                = vreinterpretq_f32_u32(vandq_u32(w, vdupq_n_u32(0xFFFF0000u)));
}
inline vf flush_tiny(vf v) {
    const uint32x4_t tiny = vcltq_f32(vabsq_f32(v), vdupq_n_f32(min_normal));
    const uint32x4_t keep = vorrq_u32(vmvnq_u32(tiny), vdupq_n_u32(0x80000000u));
    return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), keep));
}
inline bool has_min_normal(vf v) { return vmaxvq_u32(vceqq_f32(vabsq_f32(v), vdupq_n_f32(min_normal))) != 0; }
inline float reduce_add(vf v) {
    const float32x2_t s2 = vadd_f32(vget_low_f32(v), vget_high_f32(v));
    return vget_lane_f32(s2, 0) + vget_lane_f32(s2, 1);
}

#else

using vf = float;
inline constexpr int vf_lanes = 1;

inline vf zero() { return 0.0f; }
inline vf broadcast(float x) { return x; }
inline vf load(const float * p) { return *p; }
inline void store(float * p, vf v) { *p = v; }
inline vf add(vf a, vf b) { return a + b; }
inline vf sub(vf a, vf b) { return a - b; }
inline vf mul(vf a, vf b) { return a * b; }
inline vf div(vf a, vf b) { return a / b; }
inline vf fmadd(vf a, vf b, vf c) { return fmadd_scalar(a, b, c); }
inline vf select_nonzero(vf w, vf a, vf b) { return w != 0.0f ? a : b; }
inline vf mul_via_f64(vf a, vf b) { return a * b; }
inline bool any_tiny(vf v, float bound) { return v != 0.0f && std::fabs(v) < bound; }
inline vf load_f16(const fp16_t * p) { return half_to_float(*p); }
inline vf load_bf16(const bf16_t * p) { return bf16_to_fp32(*p); }
inline void load_bf16_pairs(const bf16_t * p, vf & even, vf & odd) {
    even = bf16_to_fp32(p[0]);
    odd  = bf16_to_fp32(p[1]);
}
inline vf flush_tiny(vf v) { return flush_tiny_scalar(v); }
inline bool has_min_normal(vf v) { return std::fabs(v) == min_normal; }
inline float reduce_add(vf v) { return v; }

#endif

} // namespace gk::simd
