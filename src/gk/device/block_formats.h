// block_formats.h - what the device backends' quantized mul_mat needs on the host for the
// block formats that block_decode.h decodes: which formats those are, the activation
// format each dots against, and the table each reads. Used by src/gk/vulkan and
// src/gk/cuda.
#pragma once

#include "gk/gk-type.h"

#include <cstdint>
#include <vector>

namespace gk::device {

/// The activation format the device's dot of weights of `type` converts to - the CPU's
/// vec_dot_type (cpu/vec_dot.h): GK_TYPE_Q8_0, GK_TYPE_Q8_1 or GK_TYPE_Q8_K - or
/// GK_TYPE_COUNT for a type block_decode.h does not decode (f32, f16, bf16, ...).
gk_type block_act_type(gk_type type);

/// Whether a row of `type` decodes to f32 in block_decode.h's terms as the codec's
/// to_float does (the get_rows kernels): every format block_act_type takes but the lattice
/// i-quants (their to_float is not the dot's form).
bool block_rows_decodable(gk_type type);

/// The table block_decode.h reads (wtable) for weights of `type`:
/// quant/fp4.h's codebook, an entry a word (iq4_nl, iq4_xs: k_iq4nl_values; mxfp4,
/// nvfp4: k_e2m1_doubled), or quant/iq_quants.h's grid as its little-endian words (the
/// lattice i-quants); empty for the other formats.
std::vector<uint32_t> block_table(gk_type type);

}  // namespace gk::device
