// traits.cpp - block geometry of every gk_type (GGUF type ids and block sizes as
// published in ggml's ggml-common.h) and the dispatch table the families fill.
#include "codec.h"

#include "common/keyed_table.h"

#include <cctype>
#include <cstdint>

namespace gk::quant {
namespace {

using gk::keyed_table_complete;

struct geometry {
    int          key;   // gk_type id
    const char * name;  // nullptr: an id removed upstream, not a valid type
    int64_t      blck;
    size_t       size;
};

// Bytes per block follow from each block struct (see the family files, which
// static_assert the same numbers against their structs). One entry per id, in id order.
constexpr geometry k_geometry[] = {
    {GK_TYPE_F32,     "f32",       1,   4},
    {GK_TYPE_F16,     "f16",       1,   2},
    {GK_TYPE_Q4_0,    "q4_0",     32,  18},
    {GK_TYPE_Q4_1,    "q4_1",     32,  20},
    {4,                nullptr,    0,   0},  // removed upstream
    {5,                nullptr,    0,   0},  // removed upstream
    {GK_TYPE_Q5_0,    "q5_0",     32,  22},
    {GK_TYPE_Q5_1,    "q5_1",     32,  24},
    {GK_TYPE_Q8_0,    "q8_0",     32,  34},
    {GK_TYPE_Q8_1,    "q8_1",     32,  36},
    {GK_TYPE_Q2_K,    "q2_K",    256,  84},
    {GK_TYPE_Q3_K,    "q3_K",    256, 110},
    {GK_TYPE_Q4_K,    "q4_K",    256, 144},
    {GK_TYPE_Q5_K,    "q5_K",    256, 176},
    {GK_TYPE_Q6_K,    "q6_K",    256, 210},
    {GK_TYPE_Q8_K,    "q8_K",    256, 292},
    {GK_TYPE_IQ2_XXS, "iq2_xxs", 256,  66},
    {GK_TYPE_IQ2_XS,  "iq2_xs",  256,  74},
    {GK_TYPE_IQ3_XXS, "iq3_xxs", 256,  98},
    {GK_TYPE_IQ1_S,   "iq1_s",   256,  50},
    {GK_TYPE_IQ4_NL,  "iq4_nl",   32,  18},
    {GK_TYPE_IQ3_S,   "iq3_s",   256, 110},
    {GK_TYPE_IQ2_S,   "iq2_s",   256,  82},
    {GK_TYPE_IQ4_XS,  "iq4_xs",  256, 136},
    {GK_TYPE_I8,      "i8",        1,   1},
    {GK_TYPE_I16,     "i16",       1,   2},
    {GK_TYPE_I32,     "i32",       1,   4},
    {GK_TYPE_I64,     "i64",       1,   8},
    {GK_TYPE_F64,     "f64",       1,   8},
    {GK_TYPE_IQ1_M,   "iq1_m",   256,  56},
    {GK_TYPE_BF16,    "bf16",      1,   2},
    {31,               nullptr,    0,   0},  // removed upstream
    {32,               nullptr,    0,   0},  // removed upstream
    {33,               nullptr,    0,   0},  // removed upstream
    {GK_TYPE_TQ1_0,   "tq1_0",   256,  54},
    {GK_TYPE_TQ2_0,   "tq2_0",   256,  66},
    {36,               nullptr,    0,   0},  // removed upstream
    {37,               nullptr,    0,   0},  // removed upstream
    {38,               nullptr,    0,   0},  // removed upstream
    {GK_TYPE_MXFP4,   "mxfp4",    32,  17},
    {GK_TYPE_NVFP4,   "nvfp4",    64,  36},
    {GK_TYPE_Q1_0,    "q1_0",    128,  18},
    {GK_TYPE_Q2_0,    "q2_0",     64,  18},
};
static_assert(keyed_table_complete(k_geometry, GK_TYPE_COUNT), "k_geometry must list every type id in order");

codec_table build_table() {
    codec_table t;
    for (const geometry & g : k_geometry) {
        if (!g.name) {
            continue;
        }
        type_traits & r = t.rows[g.key];
        r.name      = g.name;
        r.blck_size = g.blck;
        r.type_size = g.size;
        r.valid     = true;
    }
    register_plain(t);
    register_legacy(t);
    register_low_bit(t);
    register_fp4(t);
    register_k_quants(t);
    register_iq_quants(t);
    return t;
}

const codec_table & table() {
    static const codec_table t = build_table();
    return t;
}

} // namespace

bool equal_ignoring_case(const char * a, const char * b) {
    for (; *a && *b; ++a, ++b) {
        if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) {
            return false;
        }
    }
    return *a == *b;
}

const type_traits * get_type_traits(int type) {
    if (type < 0 || type >= GK_TYPE_COUNT) {
        return nullptr;
    }
    const type_traits & r = table().rows[type];
    return r.valid ? &r : nullptr;
}

size_t quantize_rows(int type, const float * src, void * dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    const type_traits * tt = get_type_traits(type);
    if (!tt || !tt->from_float || nrows < 0 || !gk_row_len_ok(static_cast<gk_type>(type), n_per_row)) {
        return 0;
    }
    const size_t row_size = gk_row_size(static_cast<gk_type>(type), n_per_row);
    auto * out = static_cast<uint8_t *>(dst);
    for (int64_t r = 0; r < nrows; ++r) {
        tt->from_float(src + r * n_per_row, out + r * row_size, n_per_row, imatrix);
    }
    return row_size * static_cast<size_t>(nrows);
}

bool dequantize_rows(int type, const void * src, float * dst, int64_t nrows, int64_t n_per_row) {
    const type_traits * tt = get_type_traits(type);
    if (!tt || !tt->to_float || nrows < 0 || !gk_row_len_ok(static_cast<gk_type>(type), n_per_row)) {
        return false;
    }
    const size_t row_size = gk_row_size(static_cast<gk_type>(type), n_per_row);
    const auto * in = static_cast<const uint8_t *>(src);
    for (int64_t r = 0; r < nrows; ++r) {
        tt->to_float(in + r * row_size, dst + r * n_per_row, n_per_row);
    }
    return true;
}

} // namespace gk::quant

using gk::quant::equal_ignoring_case;
using gk::quant::get_type_traits;

extern "C" {

bool gk_type_is_valid(int id) { return get_type_traits(id) != nullptr; }

const char * gk_type_name(enum gk_type type) {
    const auto * tt = get_type_traits(type);
    return tt ? tt->name : "?";
}

bool gk_type_from_name(const char * name, enum gk_type * out) {
    if (!name) {
        return false;
    }
    for (int id = 0; id < GK_TYPE_COUNT; ++id) {
        const auto * tt = get_type_traits(id);
        if (tt && equal_ignoring_case(tt->name, name)) {
            if (out) {
                *out = static_cast<gk_type>(id);
            }
            return true;
        }
    }
    return false;
}

int64_t gk_blck_size(enum gk_type type) {
    const auto * tt = get_type_traits(type);
    return tt ? tt->blck_size : 0;
}

size_t gk_type_size(enum gk_type type) {
    const auto * tt = get_type_traits(type);
    return tt ? tt->type_size : 0;
}

bool gk_is_quantized(enum gk_type type) { return gk_blck_size(type) > 1; }

bool gk_row_len_ok(enum gk_type type, int64_t ne) {
    const int64_t b = gk_blck_size(type);
    // The row's bytes fit in int64_t, so every size and stride computed from them does too.
    return b > 0 && ne >= 0 && ne % b == 0 && ne / b <= INT64_MAX / static_cast<int64_t>(gk_type_size(type));
}

size_t gk_row_size(enum gk_type type, int64_t ne) {
    if (!gk_row_len_ok(type, ne)) {
        return 0;
    }
    return gk_type_size(type) * static_cast<size_t>(ne / gk_blck_size(type));
}

} // extern "C"
