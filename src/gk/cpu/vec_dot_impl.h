// vec_dot_impl.h - what the vec_dot kernel files share: the float path's shape, the
// per-block chains of the integer path, and the kernels the table in vec_dot.cpp lists.
// Internal to src/gk/cpu/vec_dot*.cpp; callers use vec_dot.h.
#pragma once

#include "simd.h"
#include "vec_dot.h"

#include <cstdint>

namespace gk::cpu {

/// This kernel set's dot of `type`, or nullptr (get_vec_dot_traits's source).
const vec_dot_traits * vec_dot_table(gk_type type);

} // namespace gk::cpu

namespace gk::cpu::detail {

// ---- float path: 4 chains x 16 lanes (the order is written out in vec_dot.h) ----------

inline constexpr int float_lanes  = 16;
inline constexpr int float_chains = 4;
inline constexpr int float_step   = float_lanes * float_chains;  // elements per round

/// The end of the float and bf16 orders on 64 partial sums a[chain][lane]: per lane
/// (c0 + c1) + (c2 + c3), then the 16 lanes by halving (l += l + 8, + 4, + 2, + 1).
inline float combine_chains(const float (&a)[float_chains][float_lanes]) {
    float t[float_lanes];
    for (int l = 0; l < float_lanes; ++l) {
        t[l] = (a[0][l] + a[1][l]) + (a[2][l] + a[3][l]);
    }
    for (int h = float_lanes / 2; h >= 1; h /= 2) {
        for (int l = 0; l < h; ++l) {
            t[l] = t[l] + t[l + h];
        }
    }
    return t[0];
}

// Element kinds a float dot reads.
enum class elem { f32, f16, bf16 };

/// Elements i .. i + vf_lanes - 1 of a row of kind E as f32 (exact).
template <elem E> simd::vf load_vec(const void * p, int64_t i) {
    if constexpr (E == elem::f32) {
        return simd::load(static_cast<const float *>(p) + i);
    } else if constexpr (E == elem::f16) {
        return simd::load_f16(static_cast<const fp16_t *>(p) + i);
    } else {
        return simd::load_bf16(static_cast<const bf16_t *>(p) + i);
    }
}

#if defined(GK_SIMD_AVX512)
/// load_vec's 16 lanes from element i, those outside `mask` zero and not read (a row's
/// last, partial register).
template <elem E>
simd::vf load_vec_masked(const void * p, int64_t i, __mmask16 mask) {
    if constexpr (E == elem::f32) {
        return _mm512_maskz_loadu_ps(mask, static_cast<const float *>(p) + i);
    } else if constexpr (E == elem::f16) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, static_cast<const fp16_t *>(p) + i));
    } else {
        const __m512i u = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, static_cast<const bf16_t *>(p) + i));
        return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
    }
}

/// [a's lanes 0..7 | b's lanes 0..7]: two rows of at most 8 elements in one register, one
/// per 256-bit half (the kernels for heads of 8: vec_dot_tile_float.cpp, vec_mad.cpp).
inline simd::vf low_halves(simd::vf a, simd::vf b) { return _mm512_shuffle_f32x4(a, b, 0x44); }
#endif

/// Element i of a row of kind E as f32 (exact).
template <elem E> float load_one(const void * p, int64_t i) {
    if constexpr (E == elem::f32) {
        return static_cast<const float *>(p)[i];
    } else if constexpr (E == elem::f16) {
        return simd::half_to_float(static_cast<const fp16_t *>(p)[i]);
    } else {
        return bf16_to_fp32(static_cast<const bf16_t *>(p)[i]);
    }
}

// ---- integer path: block b updates chain b % 4 ---------------------------------------

struct block_chains {
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};

    /// chain b % 4 += d * v (fused where the target has FMA).
    void add(int64_t b, float d, float v) { c[b & 3] = simd::fmadd_scalar(d, v, c[b & 3]); }
    float sum() const { return (c[0] + c[1]) + (c[2] + c[3]); }
};

// ---- q4_K / q5_K scales --------------------------------------------------------------

/// The 8 scales (sc) and 8 mins (m) of a q4_K / q5_K block, byte j = sub-block j.
struct k4_scales {
    uint64_t sc;
    uint64_t m;
};

/// The codec's unpack_scale_min_k4 for all eight sub-blocks at once, word-parallel; a
/// second implementation of that layout, so the test sweeps the two against each other.
k4_scales unpack_k4_all(const uint8_t * packed);

// ---- the kernels (n, s, weight row, activation row); *_scalar are the twins ---------

#define GK_DECLARE_DOT(name)                                                  \
    void name(int64_t n, float * s, const void * x, const void * y);          \
    void name##_scalar(int64_t n, float * s, const void * x, const void * y);

GK_DECLARE_DOT(vec_dot_f32)
GK_DECLARE_DOT(vec_dot_f16)
GK_DECLARE_DOT(vec_dot_bf16)
GK_DECLARE_DOT(vec_dot_q8_0_q8_0)

/// The bf16 dot by VDPBF16PS, in the AVX-512 set on a host with AVX512-BF16 whose
/// instruction gave the twin's bits on a probe (vec_dot_bf16.cpp; checked once); else
/// nullptr, and vec_dot_bf16, the emulation, runs (and no bf16 tile).
vec_dot_fn bf16_instruction_dot();

/// The vec_dot of iq3_xxs or iq3_s with its grid rows gathered by VPGATHERDD (vec_dot_iq.h's
/// load_coords), in the x86 sets on a host whose gathers run at full speed (cpu_features'
/// fast_gather); else (and for other types) nullptr, and the plain kernel runs. Same bits.
/// The table's set_kernel asks it for every type.
vec_dot_fn gathered_dot(gk_type type);

GK_DECLARE_DOT(vec_dot_q4_0_q8_0)
GK_DECLARE_DOT(vec_dot_q4_1_q8_1)
GK_DECLARE_DOT(vec_dot_q5_0_q8_0)
GK_DECLARE_DOT(vec_dot_q5_1_q8_1)
GK_DECLARE_DOT(vec_dot_q8_1_q8_1)
GK_DECLARE_DOT(vec_dot_iq4_nl_q8_0)
GK_DECLARE_DOT(vec_dot_mxfp4_q8_0)
GK_DECLARE_DOT(vec_dot_nvfp4_q8_0)
GK_DECLARE_DOT(vec_dot_q1_0_q8_0)
GK_DECLARE_DOT(vec_dot_q2_0_q8_0)
GK_DECLARE_DOT(vec_dot_q2_K_q8_K)
GK_DECLARE_DOT(vec_dot_q3_K_q8_K)
GK_DECLARE_DOT(vec_dot_q4_K_q8_K)
GK_DECLARE_DOT(vec_dot_q5_K_q8_K)
GK_DECLARE_DOT(vec_dot_q6_K_q8_K)
GK_DECLARE_DOT(vec_dot_iq4_xs_q8_K)
GK_DECLARE_DOT(vec_dot_tq1_0_q8_K)
GK_DECLARE_DOT(vec_dot_tq2_0_q8_K)
GK_DECLARE_DOT(vec_dot_iq2_xxs_q8_K)
GK_DECLARE_DOT(vec_dot_iq2_xs_q8_K)
GK_DECLARE_DOT(vec_dot_iq2_s_q8_K)
GK_DECLARE_DOT(vec_dot_iq3_xxs_q8_K)
GK_DECLARE_DOT(vec_dot_iq3_s_q8_K)
GK_DECLARE_DOT(vec_dot_iq1_s_q8_K)
GK_DECLARE_DOT(vec_dot_iq1_m_q8_K)

/// f32, f16 and the formats of vec_dot_blocks.h also take two weight rows at once
/// (vec_dot2_fn).
#define GK_DECLARE_DOT2(name) void name##_x2(int64_t n, float * s, const void * x, size_t bx, const void * y);

GK_DECLARE_DOT2(vec_dot_f32)
GK_DECLARE_DOT2(vec_dot_f16)
GK_DECLARE_DOT2(vec_dot_q8_0_q8_0)
GK_DECLARE_DOT2(vec_dot_q4_0_q8_0)
GK_DECLARE_DOT2(vec_dot_q4_1_q8_1)
GK_DECLARE_DOT2(vec_dot_q5_0_q8_0)
GK_DECLARE_DOT2(vec_dot_q5_1_q8_1)
GK_DECLARE_DOT2(vec_dot_q8_1_q8_1)
GK_DECLARE_DOT2(vec_dot_iq4_nl_q8_0)
GK_DECLARE_DOT2(vec_dot_mxfp4_q8_0)
GK_DECLARE_DOT2(vec_dot_nvfp4_q8_0)
GK_DECLARE_DOT2(vec_dot_q1_0_q8_0)
GK_DECLARE_DOT2(vec_dot_q2_0_q8_0)

#undef GK_DECLARE_DOT
#undef GK_DECLARE_DOT2

/// True when the integer kernels above have a vector variant in this build.
#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)
inline constexpr bool int_dots_vectorised = true;
#else
inline constexpr bool int_dots_vectorised = false;
#endif

} // namespace gk::cpu::detail
