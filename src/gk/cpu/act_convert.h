// act_convert.h - the dot products' activation conversions, vectorised: an f32 row to the
// weight type's vec_dot_type (f16, bf16, q8_0, q8_1, q8_K), and f16 / bf16 rows to f32.
// Each writes, for every input (NaN, infinities and subnormals included), exactly the
// bytes of the codec's function it stands for; in a scalar build it is that function.
// Internal to src/gk/cpu.
#pragma once

#include "quant/fp16.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"

#include <cstdint>

namespace gk::cpu::detail {

/// y[i] = fp32_to_fp16(x[i]) for i < n.
void convert_row_f16(const float * x, fp16_t * y, int64_t n);

/// y[i] = fp32_to_bf16(x[i]) for i < n.
void convert_row_bf16(const float * x, bf16_t * y, int64_t n);

/// y[i] = fp16_to_fp32(x[i]) for i < n (a row of an f16 tensor read as f32).
void widen_row_f16(const fp16_t * x, float * y, int64_t n);

/// y[i] = bf16_to_fp32(x[i]) for i < n.
void widen_row_bf16(const bf16_t * x, float * y, int64_t n);

/// quant::quantize_row_q8_0_dot(x, y, n); n a multiple of 32.
void convert_row_q8_0(const float * x, quant::block_q8_0 * y, int64_t n);

/// quant::quantize_row_q8_1_dot(x, y, n); n a multiple of 32.
void convert_row_q8_1(const float * x, quant::block_q8_1 * y, int64_t n);

/// quant::quantize_row_q8_K(x, y, n); n a multiple of 256.
void convert_row_q8_K(const float * x, quant::block_q8_K * y, int64_t n);

} // namespace gk::cpu::detail
