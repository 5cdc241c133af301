// vec_dot.cpp - the per-type dot table: activation format, activation conversion, the
// kernel and its scalar twin (see vec_dot.h for the order every kernel keeps).
#include "vec_dot.h"

#include "act_convert.h"
#include "vec_dot_impl.h"

#include "quant/k_quants.h"
#include "quant/legacy.h"

#include <cstring>

namespace gk::cpu {
namespace {

using namespace detail;

// ---- activation conversions ---------------------------------------------------------

void from_f32(const float * src, void * dst, int64_t n) {
    if (n > 0) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    }
}
void from_f16(const float * src, void * dst, int64_t n) {
    convert_row_f16(src, static_cast<fp16_t *>(dst), n);
}
void from_bf16(const float * src, void * dst, int64_t n) {
    convert_row_bf16(src, static_cast<bf16_t *>(dst), n);
}

void to_f32(const void * src, float * dst, int64_t n) {
    if (n > 0) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    }
}
void to_f16(const void * src, float * dst, int64_t n) { widen_row_f16(static_cast<const fp16_t *>(src), dst, n); }
void to_bf16(const void * src, float * dst, int64_t n) { widen_row_bf16(static_cast<const bf16_t *>(src), dst, n); }

void from_q8_0(const float * src, void * dst, int64_t n) {
    convert_row_q8_0(src, static_cast<quant::block_q8_0 *>(dst), n);
}
void from_q8_1(const float * src, void * dst, int64_t n) {
    convert_row_q8_1(src, static_cast<quant::block_q8_1 *>(dst), n);
}
void from_q8_K(const float * src, void * dst, int64_t n) {
    convert_row_q8_K(src, static_cast<quant::block_q8_K *>(dst), n);
}

/// The activation format of weight type `w` (ggml's vec_dot_type), or GK_TYPE_COUNT
/// for a type with no dot.
constexpr gk_type act_type(gk_type w) {
    switch (w) {
        case GK_TYPE_F32: case GK_TYPE_F16: case GK_TYPE_BF16:
            return w;
        case GK_TYPE_Q4_0: case GK_TYPE_Q5_0: case GK_TYPE_Q8_0: case GK_TYPE_IQ4_NL:
        case GK_TYPE_MXFP4: case GK_TYPE_NVFP4: case GK_TYPE_Q1_0: case GK_TYPE_Q2_0:
            return GK_TYPE_Q8_0;
        case GK_TYPE_Q4_1: case GK_TYPE_Q5_1: case GK_TYPE_Q8_1:
            return GK_TYPE_Q8_1;
        case GK_TYPE_Q2_K: case GK_TYPE_Q3_K: case GK_TYPE_Q4_K: case GK_TYPE_Q5_K: case GK_TYPE_Q6_K:
        case GK_TYPE_IQ2_XXS: case GK_TYPE_IQ2_XS: case GK_TYPE_IQ2_S: case GK_TYPE_IQ3_XXS:
        case GK_TYPE_IQ3_S: case GK_TYPE_IQ1_S: case GK_TYPE_IQ1_M: case GK_TYPE_IQ4_XS:
        case GK_TYPE_TQ1_0: case GK_TYPE_TQ2_0:
            return GK_TYPE_Q8_K;
        default:
            return GK_TYPE_COUNT;
    }
}

constexpr act_from_float_fn act_converter(gk_type a) {
    switch (a) {
        case GK_TYPE_F32: return from_f32;
        case GK_TYPE_F16: return from_f16;
        case GK_TYPE_BF16: return from_bf16;
        case GK_TYPE_Q8_0: return from_q8_0;
        case GK_TYPE_Q8_1: return from_q8_1;
        case GK_TYPE_Q8_K: return from_q8_K;
        default: return nullptr;
    }
}

constexpr act_to_float_fn act_widener(gk_type a) {
    switch (a) {
    case GK_TYPE_F32: return to_f32;
    case GK_TYPE_F16: return to_f16;
    case GK_TYPE_BF16: return to_bf16;
    default: return nullptr;
    }
}

// ---- the table ------------------------------------------------------------------------

#if defined(GK_SIMD_SCALAR)
constexpr dot_path float_path = dot_path::float_scalar;
#else
constexpr dot_path float_path = dot_path::float_simd;
#endif

struct table {
    vec_dot_traits rows[GK_TYPE_COUNT] = {};
    bool           present[GK_TYPE_COUNT] = {};

    void set(gk_type w, const vec_dot_traits & t) {
        rows[w]    = t;
        present[w] = true;
    }
};

constexpr dot_path int_path = int_dots_vectorised ? dot_path::int_simd : dot_path::int_scalar;

/// A kernel row: weight type, its kernel (or its gathering form where the host has one,
/// gathered_dot) and twin, the path they take and (where the type has one) the kernel of
/// two rows at once.
void set_kernel(table & t, gk_type w, vec_dot_fn fn, vec_dot_fn twin, dot_path path, vec_dot2_fn two = nullptr) {
    const vec_dot_fn gathered = gathered_dot(w);
    t.set(w, {act_type(w), act_converter(act_type(w)), act_widener(act_type(w)), gathered ? gathered : fn, twin, two,
              path});
}

table build_table() {
    table t;
    // Two float rows keep 2 x 64 partial sums in registers: only where a chain is one
    // register (16 lanes, AVX-512) do they fit without spilling.
    const bool float_pairs = simd::vf_lanes == float_lanes;
    set_kernel(t, GK_TYPE_F32, vec_dot_f32, vec_dot_f32_scalar, float_path, float_pairs ? vec_dot_f32_x2 : nullptr);
    set_kernel(t, GK_TYPE_F16, vec_dot_f16, vec_dot_f16_scalar, float_path, float_pairs ? vec_dot_f16_x2 : nullptr);
    if (vec_dot_fn dp = bf16_instruction_dot()) {
        set_kernel(t, GK_TYPE_BF16, dp, vec_dot_bf16_scalar, dot_path::bf16_dpbf16);
    } else {
        set_kernel(t, GK_TYPE_BF16, vec_dot_bf16, vec_dot_bf16_scalar, float_path);
    }
    set_kernel(t, GK_TYPE_Q8_0, vec_dot_q8_0_q8_0, vec_dot_q8_0_q8_0_scalar, int_path, vec_dot_q8_0_q8_0_x2);
    set_kernel(t, GK_TYPE_Q4_0, vec_dot_q4_0_q8_0, vec_dot_q4_0_q8_0_scalar, int_path, vec_dot_q4_0_q8_0_x2);
    set_kernel(t, GK_TYPE_Q4_1, vec_dot_q4_1_q8_1, vec_dot_q4_1_q8_1_scalar, int_path, vec_dot_q4_1_q8_1_x2);
    set_kernel(t, GK_TYPE_Q5_0, vec_dot_q5_0_q8_0, vec_dot_q5_0_q8_0_scalar, int_path, vec_dot_q5_0_q8_0_x2);
    set_kernel(t, GK_TYPE_Q5_1, vec_dot_q5_1_q8_1, vec_dot_q5_1_q8_1_scalar, int_path, vec_dot_q5_1_q8_1_x2);
    set_kernel(t, GK_TYPE_Q8_1, vec_dot_q8_1_q8_1, vec_dot_q8_1_q8_1_scalar, int_path, vec_dot_q8_1_q8_1_x2);
    set_kernel(t, GK_TYPE_IQ4_NL, vec_dot_iq4_nl_q8_0, vec_dot_iq4_nl_q8_0_scalar, int_path, vec_dot_iq4_nl_q8_0_x2);
    set_kernel(t, GK_TYPE_MXFP4, vec_dot_mxfp4_q8_0, vec_dot_mxfp4_q8_0_scalar, int_path, vec_dot_mxfp4_q8_0_x2);
    set_kernel(t, GK_TYPE_NVFP4, vec_dot_nvfp4_q8_0, vec_dot_nvfp4_q8_0_scalar, int_path, vec_dot_nvfp4_q8_0_x2);
    set_kernel(t, GK_TYPE_Q1_0, vec_dot_q1_0_q8_0, vec_dot_q1_0_q8_0_scalar, int_path, vec_dot_q1_0_q8_0_x2);
    set_kernel(t, GK_TYPE_Q2_0, vec_dot_q2_0_q8_0, vec_dot_q2_0_q8_0_scalar, int_path, vec_dot_q2_0_q8_0_x2);
    set_kernel(t, GK_TYPE_Q2_K, vec_dot_q2_K_q8_K, vec_dot_q2_K_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_Q3_K, vec_dot_q3_K_q8_K, vec_dot_q3_K_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_Q4_K, vec_dot_q4_K_q8_K, vec_dot_q4_K_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_Q5_K, vec_dot_q5_K_q8_K, vec_dot_q5_K_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_Q6_K, vec_dot_q6_K_q8_K, vec_dot_q6_K_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ4_XS, vec_dot_iq4_xs_q8_K, vec_dot_iq4_xs_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_TQ1_0, vec_dot_tq1_0_q8_K, vec_dot_tq1_0_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_TQ2_0, vec_dot_tq2_0_q8_K, vec_dot_tq2_0_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ2_XXS, vec_dot_iq2_xxs_q8_K, vec_dot_iq2_xxs_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ2_XS, vec_dot_iq2_xs_q8_K, vec_dot_iq2_xs_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ2_S, vec_dot_iq2_s_q8_K, vec_dot_iq2_s_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ3_XXS, vec_dot_iq3_xxs_q8_K, vec_dot_iq3_xxs_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ3_S, vec_dot_iq3_s_q8_K, vec_dot_iq3_s_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ1_S, vec_dot_iq1_s_q8_K, vec_dot_iq1_s_q8_K_scalar, int_path);
    set_kernel(t, GK_TYPE_IQ1_M, vec_dot_iq1_m_q8_K, vec_dot_iq1_m_q8_K_scalar, int_path);
    return t;
}

const table & get_table() {
    static const table t = build_table();
    return t;
}

} // namespace

const vec_dot_traits * vec_dot_table(gk_type type) {
    if (static_cast<int>(type) < 0 || type >= GK_TYPE_COUNT) {
        return nullptr;
    }
    const table & t = get_table();
    return t.present[type] ? &t.rows[type] : nullptr;
}

} // namespace gk::cpu
