// plan.h - which tensors gk-quantize re-encodes, to which type, and the file type
// it records.
#pragma once

#include "gk/gk-type.h"

#include <cstdint>
#include <string>

namespace gk_quantize {

/// True when `type` may be the target of a model: not an activation type (q8_1,
/// q8_K) and not an integer or f64 type.
bool is_weight_type(gk_type type);

/// llama.cpp's file type (general.file_type, enum llama_ftype) of a model whose
/// matrices are `type`; -1 when there is none (q2_0).
int file_type_of(gk_type type);

/// Re-encoded: matrices (n_dims >= 2) named "*weight" that are not norms. Everything
/// else (norms, biases, 1-D tensors) is kept in f32.
bool is_weight_matrix(const std::string & name, uint32_t n_dims);

/// The type of a matrix with rows of `ne0` elements: `target` when a row is a whole
/// number of its blocks, else the first of the fallback chain that fits and has an
/// encoder (a 32-element block type of similar size, then f16, then f32). When it
/// falls back, `why` says why and what it chose.
gk_type choose_type(gk_type target, int64_t ne0, std::string & why);

/// True when the codec can encode `type`.
bool has_encoder(gk_type type);

} // namespace gk_quantize
