// quant.cpp - ggml's type traits, quantize_chunk and f16/bf16 conversions on gk's codec
// (src/quant: the same block formats bit for bit).
#include "convert.h"

#include "quant/codec.h"
#include "quant/fp16.h"

#include <array>
#include <cmath>
#include <cstring>
#include <utility>

namespace {

using gk::quant::get_type_traits;

// from_float_ref of `Type` (ggml's quantize_row_*_ref): gk's encoder without importance
// weights. (gk's own from_float_ref is ggml's CPU-backend row encoder, a different thing.)
template <int Type> void encode_ref(const float * x, void * y, int64_t k) {
    get_type_traits(Type)->from_float(x, y, k, nullptr);
}

template <std::size_t... I>
std::array<ggml_type_traits, GGML_TYPE_COUNT> make_traits(std::index_sequence<I...>) {
    std::array<ggml_type_traits, GGML_TYPE_COUNT> out{};
    constexpr ggml_from_float_t encoders[] = {&encode_ref<static_cast<int>(I)>...};
    for (std::size_t t = 0; t < out.size(); ++t) {
        const gk::quant::type_traits * tt = get_type_traits(static_cast<int>(t));
        ggml_type_traits & r = out[t];
        r.type_name = tt ? tt->name : "NONE";
        if (!tt) {
            continue;
        }
        r.blck_size      = tt->blck_size;
        r.type_size      = tt->type_size;
        r.is_quantized   = gk_is_quantized(static_cast<gk_type>(t));
        // ggml has no to_float for f32, the integers, f64, q8_1 and q8_K (callers, such as
        // llama.cpp's test-quantize-fns, test for NULL), nor a from_float_ref for f32.
        const bool no_decoder = t == GGML_TYPE_F32 || t == GGML_TYPE_F64 || t == GGML_TYPE_Q8_1 ||
                                t == GGML_TYPE_Q8_K || t == GGML_TYPE_I8 || t == GGML_TYPE_I16 ||
                                t == GGML_TYPE_I32 || t == GGML_TYPE_I64;
        r.to_float       = no_decoder ? nullptr : tt->to_float;
        r.from_float_ref = tt->from_float && t != GGML_TYPE_F32 ? encoders[t] : nullptr;
    }
    return out;
}

} // namespace

extern "C" {

const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type) {
    static const auto table = make_traits(std::make_index_sequence<GGML_TYPE_COUNT>{});
    if (static_cast<int>(type) < 0 || type >= GGML_TYPE_COUNT) {
        ggml_abort(__FILE__, __LINE__, "ggml_get_type_traits: type %d out of range", static_cast<int>(type));
    }
    return &table[type];
}

void ggml_quantize_init(enum ggml_type type) {}
void ggml_quantize_free(void) {}

bool ggml_quantize_requires_imatrix(enum ggml_type type) {
    return type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ1_S;
}

size_t ggml_quantize_chunk(enum ggml_type type, const float * src, void * dst, int64_t start, int64_t nrows,
                           int64_t n_per_row, const float * imatrix) {
    const gk::quant::type_traits * tt = get_type_traits(type);
    if (!tt || !tt->from_float || n_per_row <= 0 || nrows < 0 || start < 0 || start % n_per_row != 0 ||
        !gk_row_len_ok(compat::to_gk(type), n_per_row)) {
        ggml_abort(__FILE__, __LINE__, "ggml_quantize_chunk: cannot encode %s rows of %lld from element %lld",
                   ggml_type_name(type), static_cast<long long>(n_per_row), static_cast<long long>(start));
    }
    if (ggml_quantize_requires_imatrix(type) && !imatrix) {
        ggml_abort(__FILE__, __LINE__, "ggml_quantize_chunk: %s needs an importance matrix", ggml_type_name(type));
    }
    const size_t row_size = gk_row_size(compat::to_gk(type), n_per_row);
    auto *       out      = static_cast<char *>(dst) + static_cast<size_t>(start / n_per_row) * row_size;
    const size_t written  = gk::quant::quantize_rows(type, src + start, out, nrows, n_per_row, imatrix);
    if (written != row_size * static_cast<size_t>(nrows)) {
        ggml_abort(__FILE__, __LINE__, "ggml_quantize_chunk: %s encoder failed", ggml_type_name(type));
    }
    return written;
}

float ggml_fp16_to_fp32(ggml_fp16_t h) { return gk::fp16_to_fp32(h); }
ggml_fp16_t ggml_fp32_to_fp16(float f) { return gk::fp32_to_fp16(f); }
void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = gk::fp16_to_fp32(x[i]);
    }
}
void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = gk::fp32_to_fp16(x[i]);
    }
}
ggml_bf16_t ggml_fp32_to_bf16(float f) { return {gk::fp32_to_bf16(f)}; }
float ggml_bf16_to_fp32(ggml_bf16_t h) { return gk::bf16_to_fp32(h.bits); }
void ggml_bf16_to_fp32_row(const ggml_bf16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = gk::bf16_to_fp32(x[i].bits);
    }
}
void ggml_fp32_to_bf16_row_ref(const float * x, ggml_bf16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i].bits = gk::fp32_to_bf16(x[i]);
    }
}
void ggml_fp32_to_bf16_row(const float * x, ggml_bf16_t * y, int64_t n) { ggml_fp32_to_bf16_row_ref(x, y, n); }

// The weight type of each whole-model ftype (ggml's enum ggml_ftype); UNKNOWN and
// MOSTLY_Q4_1_SOME_F16 have none, and ggml asserts for them, so they abort here.
enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype) {
    switch (ftype) {
    case GGML_FTYPE_ALL_F32: return GGML_TYPE_F32;
    case GGML_FTYPE_MOSTLY_F16: return GGML_TYPE_F16;
    case GGML_FTYPE_MOSTLY_BF16: return GGML_TYPE_BF16;
    case GGML_FTYPE_MOSTLY_Q4_0: return GGML_TYPE_Q4_0;
    case GGML_FTYPE_MOSTLY_Q4_1: return GGML_TYPE_Q4_1;
    case GGML_FTYPE_MOSTLY_Q5_0: return GGML_TYPE_Q5_0;
    case GGML_FTYPE_MOSTLY_Q5_1: return GGML_TYPE_Q5_1;
    case GGML_FTYPE_MOSTLY_Q8_0: return GGML_TYPE_Q8_0;
    case GGML_FTYPE_MOSTLY_Q2_K: return GGML_TYPE_Q2_K;
    case GGML_FTYPE_MOSTLY_Q3_K: return GGML_TYPE_Q3_K;
    case GGML_FTYPE_MOSTLY_Q4_K: return GGML_TYPE_Q4_K;
    case GGML_FTYPE_MOSTLY_Q5_K: return GGML_TYPE_Q5_K;
    case GGML_FTYPE_MOSTLY_Q6_K: return GGML_TYPE_Q6_K;
    case GGML_FTYPE_MOSTLY_IQ2_XXS: return GGML_TYPE_IQ2_XXS;
    case GGML_FTYPE_MOSTLY_IQ2_XS: return GGML_TYPE_IQ2_XS;
    case GGML_FTYPE_MOSTLY_IQ3_XXS: return GGML_TYPE_IQ3_XXS;
    case GGML_FTYPE_MOSTLY_IQ1_S: return GGML_TYPE_IQ1_S;
    case GGML_FTYPE_MOSTLY_IQ1_M: return GGML_TYPE_IQ1_M;
    case GGML_FTYPE_MOSTLY_IQ4_NL: return GGML_TYPE_IQ4_NL;
    case GGML_FTYPE_MOSTLY_IQ4_XS: return GGML_TYPE_IQ4_XS;
    case GGML_FTYPE_MOSTLY_IQ3_S: return GGML_TYPE_IQ3_S;
    case GGML_FTYPE_MOSTLY_IQ2_S: return GGML_TYPE_IQ2_S;
    case GGML_FTYPE_MOSTLY_MXFP4: return GGML_TYPE_MXFP4;
    case GGML_FTYPE_MOSTLY_NVFP4: return GGML_TYPE_NVFP4;
    case GGML_FTYPE_MOSTLY_Q1_0: return GGML_TYPE_Q1_0;
    case GGML_FTYPE_MOSTLY_Q2_0: return GGML_TYPE_Q2_0;
    case GGML_FTYPE_UNKNOWN:
    case GGML_FTYPE_MOSTLY_Q4_1_SOME_F16: break;
    }
    ggml_abort(__FILE__, __LINE__, "ggml_ftype_to_ggml_type: ftype %d has no single weight type", static_cast<int>(ftype));
}

} // extern "C"
