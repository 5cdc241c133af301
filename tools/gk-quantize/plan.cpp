// plan.cpp - tensor selection, type fallback and file types for gk-quantize.
#include "plan.h"

#include "quant/codec.h"

namespace gk_quantize {
namespace {

// llama_ftype values (llama.h; gguf-py LlamaFileType): the pure-type member of each
// family (Q3_K -> MOSTLY_Q3_K_S, Q4_K -> MOSTLY_Q4_K_S, Q5_K -> MOSTLY_Q5_K_S).
struct file_type_row {
    gk_type type;
    int     ftype;
};
constexpr file_type_row k_file_types[] = {
    {GK_TYPE_F32, 0},      {GK_TYPE_F16, 1},     {GK_TYPE_Q4_0, 2},     {GK_TYPE_Q4_1, 3},    {GK_TYPE_Q8_0, 7},
    {GK_TYPE_Q5_0, 8},     {GK_TYPE_Q5_1, 9},    {GK_TYPE_Q2_K, 10},    {GK_TYPE_Q3_K, 11},   {GK_TYPE_Q4_K, 14},
    {GK_TYPE_Q5_K, 16},    {GK_TYPE_Q6_K, 18},   {GK_TYPE_IQ2_XXS, 19}, {GK_TYPE_IQ2_XS, 20}, {GK_TYPE_IQ3_XXS, 23},
    {GK_TYPE_IQ1_S, 24},   {GK_TYPE_IQ4_NL, 25}, {GK_TYPE_IQ3_S, 26},   {GK_TYPE_IQ2_S, 28},  {GK_TYPE_IQ4_XS, 30},
    {GK_TYPE_IQ1_M, 31},   {GK_TYPE_BF16, 32},   {GK_TYPE_TQ1_0, 36},   {GK_TYPE_TQ2_0, 37},  {GK_TYPE_MXFP4, 38},
    {GK_TYPE_NVFP4, 39},   {GK_TYPE_Q1_0, 40},
};

// For a type whose blocks are longer than 32: the 32-element type to try next.
// K-quants step to the legacy type of about the same bits; the low-bit and i-quant
// types to iq4_nl; nvfp4 to mxfp4.
gk_type shorter_block(gk_type t) {
    switch (t) {
    case GK_TYPE_Q4_K: return GK_TYPE_Q5_0;
    case GK_TYPE_Q5_K: return GK_TYPE_Q5_1;
    case GK_TYPE_Q6_K: return GK_TYPE_Q8_0;
    case GK_TYPE_NVFP4: return GK_TYPE_MXFP4;
    default: return gk_blck_size(t) > 32 ? GK_TYPE_IQ4_NL : GK_TYPE_F16;
    }
}

bool ends_with(const std::string & s, const std::string & tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

} // namespace

bool is_weight_type(gk_type type) {
    switch (type) {
    case GK_TYPE_Q8_1:
    case GK_TYPE_Q8_K:
    case GK_TYPE_I8:
    case GK_TYPE_I16:
    case GK_TYPE_I32:
    case GK_TYPE_I64:
    case GK_TYPE_F64: return false;
    default: return gk_type_is_valid(type);
    }
}

int file_type_of(gk_type type) {
    for (const file_type_row & r : k_file_types) {
        if (r.type == type) {
            return r.ftype;
        }
    }
    return -1;
}

bool is_weight_matrix(const std::string & name, uint32_t n_dims) {
    return n_dims >= 2 && ends_with(name, "weight") && name.find("norm") == std::string::npos;
}

bool has_encoder(gk_type type) {
    const gk::quant::type_traits * tt = gk::quant::get_type_traits(type);
    return tt && tt->from_float;
}

gk_type choose_type(gk_type target, int64_t ne0, std::string & why) {
    const auto fits = [&](gk_type t) { return gk_row_len_ok(t, ne0) && has_encoder(t); };
    if (fits(target)) {
        return target;
    }
    why = std::string("rows of ") + std::to_string(ne0) + " are not whole " + gk_type_name(target) + " blocks of " +
          std::to_string(gk_blck_size(target));
    for (gk_type t : {shorter_block(target), GK_TYPE_F16, GK_TYPE_F32}) {
        if (fits(t)) {
            why += ": " + std::string(gk_type_name(t)) + " instead";
            return t;
        }
    }
    why += ": kept in f32";
    return GK_TYPE_F32;
}

} // namespace gk_quantize
