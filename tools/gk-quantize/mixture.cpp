// mixture.cpp - the table of llama-quantize's types (mixture.h). Names, ids and base
// types are llama.cpp's (tools/quantize/quantize.cpp QUANT_OPTIONS, llama-quant.cpp's
// default type per ftype); the descriptions say what the rules of plan.cpp do.
#include "mixture.h"

#include <cctype>
#include <charconv>
#include <string_view>

namespace gk_quantize {
namespace {

constexpr mixture k_mixtures[] = {
    {"Q1_0", FTYPE_Q1_0, GK_TYPE_Q1_0, false, "q1_0 (1.125 bpw); output q6_K"},
    {"Q4_0", FTYPE_Q4_0, GK_TYPE_Q4_0, false,
     "q4_0 (4.5 bpw); output q6_K; with an imatrix the first 1/8 ffn_down q4_1"},
    {"Q4_1", FTYPE_Q4_1, GK_TYPE_Q4_1, false, "q4_1 (5.0 bpw); output q6_K"},
    {"MXFP4_MOE", FTYPE_MXFP4_MOE, GK_TYPE_MXFP4, false, "mxfp4 for the expert tensors (3-D), q8_0 for the rest"},
    {"Q5_0", FTYPE_Q5_0, GK_TYPE_Q5_0, false,
     "q5_0 (5.5 bpw); output q6_K; with an imatrix the first 1/8 ffn_down q5_1"},
    {"Q5_1", FTYPE_Q5_1, GK_TYPE_Q5_1, false, "q5_1 (6.0 bpw); output q6_K"},
    {"IQ2_XXS", FTYPE_IQ2_XXS, GK_TYPE_IQ2_XXS, false, "iq2_xxs (2.06 bpw)"},
    {"IQ2_XS", FTYPE_IQ2_XS, GK_TYPE_IQ2_XS, false, "iq2_xs (2.31 bpw)"},
    {"IQ2_S", FTYPE_IQ2_S, GK_TYPE_IQ2_XS, false, "iq2_xs with iq3_s attn_v/attn_output (2.5 bpw)"},
    {"IQ2_M", FTYPE_IQ2_M, GK_TYPE_IQ2_S, false, "iq2_s with iq3_s attn_v/attn_output (2.7 bpw)"},
    {"IQ1_S", FTYPE_IQ1_S, GK_TYPE_IQ1_S, false, "iq1_s (1.56 bpw); attn_output iq2_xxs"},
    {"IQ1_M", FTYPE_IQ1_M, GK_TYPE_IQ1_M, false, "iq1_m (1.75 bpw); attn_output iq2_xxs"},
    {"TQ1_0", FTYPE_TQ1_0, GK_TYPE_TQ1_0, false, "tq1_0 ternary (1.69 bpw); token_embd q4_K"},
    {"TQ2_0", FTYPE_TQ2_0, GK_TYPE_TQ2_0, false, "tq2_0 ternary (2.06 bpw); token_embd q4_K"},
    {"Q2_K", FTYPE_Q2_K, GK_TYPE_Q2_K, false,
     "q2_K; attn_v, attn_output and ffn_down q3_K (q4_K attn_v with GQA >= 4)"},
    {"Q2_K_S", FTYPE_Q2_K_S, GK_TYPE_Q2_K, false, "q2_K; the first 1/8 ffn_down q4_K"},
    {"IQ3_XXS", FTYPE_IQ3_XXS, GK_TYPE_IQ3_XXS, false, "iq3_xxs (3.06 bpw); attn_q/attn_k iq2_s, attn_output iq3_s"},
    {"IQ3_S", FTYPE_IQ3_S, GK_TYPE_IQ3_S, false, "iq3_s (3.44 bpw)"},
    {"IQ3_M", FTYPE_IQ3_M, GK_TYPE_IQ3_S, false, "iq3_s with q4_K attn_v, attn_output, first 1/8 ffn_down (3.66 bpw)"},
    {"Q3_K", FTYPE_Q3_K_M, GK_TYPE_Q3_K, false, "alias for Q3_K_M"},
    {"IQ3_XS", FTYPE_IQ3_XS, GK_TYPE_IQ3_S, false, "iq3_s with iq3_xxs attn_q/attn_k and middle ffn_gate/up (3.3 bpw)"},
    {"Q3_K_S", FTYPE_Q3_K_S, GK_TYPE_Q3_K, false, "q3_K everywhere but the output (q6_K)"},
    {"Q3_K_M", FTYPE_Q3_K_M, GK_TYPE_Q3_K, false, "q3_K; attn_v q5_K/q4_K, attn_output q4_K, ffn_down q5_K/q4_K"},
    {"Q3_K_L", FTYPE_Q3_K_L, GK_TYPE_Q3_K, false, "q3_K; attn_v, attn_output and ffn_down q5_K"},
    {"IQ4_NL", FTYPE_IQ4_NL, GK_TYPE_IQ4_NL, false, "iq4_nl non-linear (4.5 bpw); q5_K attn_v with GQA >= 4"},
    {"IQ4_XS", FTYPE_IQ4_XS, GK_TYPE_IQ4_XS, false, "iq4_xs non-linear (4.25 bpw); q5_K attn_v with GQA >= 4"},
    {"Q4_K", FTYPE_Q4_K_M, GK_TYPE_Q4_K, false, "alias for Q4_K_M"},
    {"Q4_K_S", FTYPE_Q4_K_S, GK_TYPE_Q4_K, false, "q4_K; the first 4 attn_v and first 1/8 ffn_down q5_K"},
    {"Q4_K_M", FTYPE_Q4_K_M, GK_TYPE_Q4_K, false, "q4_K; attn_v and ffn_down of half the layers q6_K"},
    {"Q5_K", FTYPE_Q5_K_M, GK_TYPE_Q5_K, false, "alias for Q5_K_M"},
    {"Q5_K_S", FTYPE_Q5_K_S, GK_TYPE_Q5_K, false, "q5_K everywhere but the output (q6_K)"},
    {"Q5_K_M", FTYPE_Q5_K_M, GK_TYPE_Q5_K, false, "q5_K; attn_v and ffn_down of half the layers q6_K"},
    {"Q6_K", FTYPE_Q6_K, GK_TYPE_Q6_K, false, "q6_K (6.56 bpw)"},
    {"Q8_0", FTYPE_Q8_0, GK_TYPE_Q8_0, false, "q8_0 (8.5 bpw), output included"},
    {"F16", FTYPE_F16, GK_TYPE_F16, false, "f16 matrices"},
    {"BF16", FTYPE_BF16, GK_TYPE_BF16, false, "bf16 matrices"},
    {"F32", FTYPE_ALL_F32, GK_TYPE_F32, false, "f32 matrices"},
    {"COPY", FTYPE_ALL_F32, GK_TYPE_F32, true, "every tensor copied as stored, no re-encoding"},
};

bool same_ignoring_case(const std::string & a, const char * b) {
    size_t i = 0;
    for (; i < a.size() && b[i]; ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return i == a.size() && !b[i];
}

}  // namespace

std::span<const mixture> mixtures() { return k_mixtures; }

const mixture * find_mixture(const std::string & name) {
    for (const mixture & m : k_mixtures) {
        if (same_ignoring_case(name, m.name)) {
            return &m;
        }
    }
    int id               = -1;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (ec != std::errc() || end != name.data() + name.size()) {
        return nullptr;
    }
    for (const mixture & m : k_mixtures) {
        if (m.id == id) {
            return &m;
        }
    }
    return nullptr;
}

int file_type_of(gk_type type) {
    switch (type) {
    case GK_TYPE_F32: return FTYPE_ALL_F32;
    case GK_TYPE_F16: return FTYPE_F16;
    case GK_TYPE_BF16: return FTYPE_BF16;
    case GK_TYPE_Q4_0: return FTYPE_Q4_0;
    case GK_TYPE_Q4_1: return FTYPE_Q4_1;
    case GK_TYPE_Q5_0: return FTYPE_Q5_0;
    case GK_TYPE_Q5_1: return FTYPE_Q5_1;
    case GK_TYPE_Q8_0: return FTYPE_Q8_0;
    case GK_TYPE_Q2_K: return FTYPE_Q2_K;
    case GK_TYPE_Q3_K: return FTYPE_Q3_K_M;
    case GK_TYPE_Q4_K: return FTYPE_Q4_K_M;
    case GK_TYPE_Q5_K: return FTYPE_Q5_K_M;
    case GK_TYPE_Q6_K: return FTYPE_Q6_K;
    case GK_TYPE_IQ2_XXS: return FTYPE_IQ2_XXS;
    case GK_TYPE_IQ2_XS: return FTYPE_IQ2_XS;
    case GK_TYPE_IQ2_S: return FTYPE_IQ2_S;
    case GK_TYPE_IQ3_XXS: return FTYPE_IQ3_XXS;
    case GK_TYPE_IQ3_S: return FTYPE_IQ3_S;
    case GK_TYPE_IQ1_S: return FTYPE_IQ1_S;
    case GK_TYPE_IQ1_M: return FTYPE_IQ1_M;
    case GK_TYPE_IQ4_NL: return FTYPE_IQ4_NL;
    case GK_TYPE_IQ4_XS: return FTYPE_IQ4_XS;
    case GK_TYPE_TQ1_0: return FTYPE_TQ1_0;
    case GK_TYPE_TQ2_0: return FTYPE_TQ2_0;
    case GK_TYPE_MXFP4: return FTYPE_MXFP4_MOE;
    case GK_TYPE_NVFP4: return FTYPE_NVFP4;
    case GK_TYPE_Q1_0: return FTYPE_Q1_0;
    default: return -1;
    }
}

const char * file_type_name(int id) {
    if (id == FTYPE_NVFP4) {
        return "NVFP4";  // llama.h has it; llama-quantize does not offer it
    }
    for (const mixture & m : k_mixtures) {
        if (m.id == id && !std::string_view(m.description).starts_with("alias")) {
            return m.name;
        }
    }
    return "?";
}

}  // namespace gk_quantize
