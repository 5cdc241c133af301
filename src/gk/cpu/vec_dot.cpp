// vec_dot.cpp - the per-type dot table: activation format, activation conversion, the
// kernel and its scalar twin (see vec_dot.h for the order every kernel keeps).
#include "vec_dot.h"

#include "vec_dot_impl.h"

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
    auto * d = static_cast<fp16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) {
        d[i] = fp32_to_fp16(src[i]);
    }
}
void from_bf16(const float * src, void * dst, int64_t n) {
    auto * d = static_cast<bf16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) {
        d[i] = fp32_to_bf16(src[i]);
    }
}

// ---- the table ------------------------------------------------------------------------

#if defined(GK_SIMD_SCALAR)
constexpr dot_path float_path = dot_path::float_scalar;
#else
constexpr dot_path float_path = dot_path::float_simd;
#endif

struct table {
    vec_dot_traits rows[GK_TYPE_COUNT];
    bool           present[GK_TYPE_COUNT] = {};

    void set(gk_type w, const vec_dot_traits & t) {
        rows[w]    = t;
        present[w] = true;
    }
};

table build_table() {
    table t;
    t.set(GK_TYPE_F32, {GK_TYPE_F32, from_f32, vec_dot_f32, vec_dot_f32_scalar, float_path});
    t.set(GK_TYPE_F16, {GK_TYPE_F16, from_f16, vec_dot_f16, vec_dot_f16_scalar, float_path});
    t.set(GK_TYPE_BF16, {GK_TYPE_BF16, from_bf16, vec_dot_bf16, vec_dot_bf16_scalar, float_path});
    return t;
}

const table & get_table() {
    static const table t = build_table();
    return t;
}

} // namespace

const char * dot_path_name(dot_path p) {
    switch (p) {
        case dot_path::float_simd: return "float-simd";
        case dot_path::float_scalar: return "float-scalar";
        case dot_path::int_simd: return "int-simd";
        case dot_path::int_scalar: return "int-scalar";
        case dot_path::generic: return "generic";
    }
    return "?";
}

const vec_dot_traits * get_vec_dot_traits(gk_type type) {
    if (static_cast<int>(type) < 0 || type >= GK_TYPE_COUNT) {
        return nullptr;
    }
    const table & t = get_table();
    return t.present[type] ? &t.rows[type] : nullptr;
}

bool vec_dot_row_ok(gk_type type, int64_t n) {
    const vec_dot_traits * t = get_vec_dot_traits(type);
    return t && gk_row_len_ok(type, n) && gk_row_len_ok(t->vec_dot_type, n);
}

} // namespace gk::cpu
