// block_formats.cpp - see block_formats.h.
#include "block_formats.h"

#include "../cpu/vec_dot.h"
#include "quant/fp4.h"
#include "quant/iq_quants.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace gk::device {

namespace {

/// The formats block_decode.h decodes (its T_* constants).
constexpr gk_type k_decoded[] = {
    GK_TYPE_Q4_0,  GK_TYPE_Q4_1,    GK_TYPE_Q5_0,  GK_TYPE_Q5_1,  GK_TYPE_Q8_0,   GK_TYPE_Q8_1,    GK_TYPE_Q2_K,
    GK_TYPE_Q3_K,  GK_TYPE_Q4_K,    GK_TYPE_Q5_K,  GK_TYPE_Q6_K,  GK_TYPE_IQ4_NL, GK_TYPE_IQ4_XS,  GK_TYPE_TQ1_0,
    GK_TYPE_TQ2_0, GK_TYPE_MXFP4,   GK_TYPE_NVFP4, GK_TYPE_Q1_0,  GK_TYPE_Q2_0,   GK_TYPE_IQ2_XXS, GK_TYPE_IQ2_XS,
    GK_TYPE_IQ2_S, GK_TYPE_IQ3_XXS, GK_TYPE_IQ3_S, GK_TYPE_IQ1_S, GK_TYPE_IQ1_M,
};

/// The lattice i-quants (block_decode.h's lattice()).
bool lattice(gk_type t) {
    return t == GK_TYPE_IQ2_XXS || t == GK_TYPE_IQ2_XS || t == GK_TYPE_IQ2_S || t == GK_TYPE_IQ3_XXS ||
           t == GK_TYPE_IQ3_S || t == GK_TYPE_IQ1_S || t == GK_TYPE_IQ1_M;
}

}  // namespace

gk_type block_act_type(gk_type type) {
    if (std::find(std::begin(k_decoded), std::end(k_decoded), type) == std::end(k_decoded)) return GK_TYPE_COUNT;
    const cpu::vec_dot_traits * t = cpu::get_vec_dot_traits(type);
    const gk_type               a = t ? t->vec_dot_type : GK_TYPE_COUNT;
    return a == GK_TYPE_Q8_0 || a == GK_TYPE_Q8_1 || a == GK_TYPE_Q8_K ? a : GK_TYPE_COUNT;
}

bool block_rows_decodable(gk_type type) { return !lattice(type) && block_act_type(type) != GK_TYPE_COUNT; }

std::vector<uint32_t> block_table(gk_type type) {
    const auto grid = [](const auto & t) {  // the table's bytes as words
        const size_t          bytes = sizeof t;
        std::vector<uint32_t> w(bytes / 4);
        std::memcpy(w.data(), t, bytes);
        return w;
    };
    const auto codebook = [](const int8_t(&v)[16]) {
        std::vector<uint32_t> w;
        for (int8_t e : v) w.push_back(static_cast<uint32_t>(static_cast<int32_t>(e)));
        return w;
    };
    switch (type) {
    case GK_TYPE_IQ4_NL:
    case GK_TYPE_IQ4_XS: return codebook(quant::k_iq4nl_values);
    case GK_TYPE_MXFP4:
    case GK_TYPE_NVFP4: return codebook(quant::k_e2m1_doubled);
    case GK_TYPE_IQ2_XXS: return grid(quant::iq2xxs_grid);
    case GK_TYPE_IQ2_XS: return grid(quant::iq2xs_grid);
    case GK_TYPE_IQ2_S: return grid(quant::iq2s_grid);
    case GK_TYPE_IQ3_XXS: return grid(quant::iq3xxs_grid);
    case GK_TYPE_IQ3_S: return grid(quant::iq3s_grid);
    case GK_TYPE_IQ1_S:
    case GK_TYPE_IQ1_M: return grid(quant::iq1s_grid);
    default: return {};
    }
}

}  // namespace gk::device
