// activations.h - the scalar activation functions, shared by the unary kernels and the
// GLUs so that gelu inside geglu is the same function as gelu on its own.
//
// GELU and GELU_QUICK give the bits ggml's CPU backend gives, because ggml programs
// expect ggml_gelu's values (a quantized matmul after it rounds its input to 8 bits, so a
// last-bit difference can move a whole step). ggml evaluates them through tables over
// the 65536 f16 inputs, each entry the f16-rounded value of the f32 formula:
// - f32 rows: GELU is 0 for x <= -10, x for x >= 10, else table[f16(x)] (input and
//   output rounded to f16); GELU_QUICK is table[f16(x)] everywhere.
// - f16 rows: table[x] for both, with no range test.
// - bf16 rows: the f32 formula, rounded to bf16 on store.
// GELU_ERF (the erf form) is computed in f32 at every type, as ggml does. SILU uses gk's
// exp (vec_exp.h, the approximation ggml's vector silu uses); SIGMOID keeps libm's, as
// ggml's sigmoid does.
#pragma once

#include "gk/gk.h"
#include "quant/fp16.h"

#include <cmath>
#include <cstdint>

namespace gk::cpu {

inline float act_relu(float x) { return x > 0.0f ? x : 0.0f; }
inline float act_sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float act_gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

/// GELU, tanh approximation, in f32: 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))).
/// 1 + 0.044715 x^2 is one fused multiply-add of (0.044715 x) and x, as compilers
/// contract it in ggml builds for CPUs with FMA (x86-64 with -march=native, aarch64);
/// over the f16 inputs this differs from the unfused form at one entry (x = -1.999).
inline float act_gelu(float x) {
    return 0.5f * x * (1.0f + std::tanh(0.79788456080286535588f * x * std::fma(0.044715f * x, x, 1.0f)));
}

/// GELU_QUICK in f32: x * (1 / (1 + exp(-1.702 x))).
inline float act_gelu_quick(float x) { return x * (1.0f / (1.0f + std::exp(-1.702f * x))); }

/// The table act_gelu_f16 reads: entry h = act_gelu(f32(h)) rounded to f16, widened to
/// f32, for every f16 bit pattern h (built on first use; thread-safe).
const float * gelu_f16_table();

/// act_gelu at f16(x), rounded to f16: gelu_f16_table()[fp32_to_fp16(x)].
float act_gelu_f16(float x);

/// GELU of an f32 row element x whose f16 is h (fp32_to_fp16(x)): 0 for x <= -10, x for
/// x >= 10, else table[h], table being gelu_f16_table().
inline float gelu_f32_at(float x, fp16_t h, const float * table) {
    return x <= -10.0f ? 0.0f : (x >= 10.0f ? x : table[h]);
}

/// GELU of an f32 row element: gelu_f32_at with the codec's f16 of x.
inline float act_gelu_f32(float x) { return gelu_f32_at(x, fp32_to_fp16(x), gelu_f16_table()); }

/// y[i] = act_gelu_f32(x[i]) for i < n (y may be x): the row converted to f16 at once into
/// h by the kernel set's conversion (fp32_to_fp16's bytes, act_convert.cpp), then one table
/// read per element in a loop the compiler sees whole, instead of a call and a software
/// conversion per element (11 % of gemma3-270m's prompt, in its geglu).
void gelu_f32_row(float * y, const float * x, int64_t n, fp16_t * h);

/// act_gelu_quick at f16(x), rounded to f16 (a table built on first use; thread-safe).
float act_gelu_quick_f16(float x);

using act_fn = float (*)(float);

/// The activation a GLU op applies to x, as a unary op (swiglu: silu, geglu: gelu, reglu:
/// relu, geglu_quick: gelu_quick); GK_UNARY_OP_COUNT for swiglu_oai and geglu_erf, whose
/// formulas have no unary op of the same bits.
inline gk_unary_op glu_unary_op(gk_glu_op op) {
    switch (op) {
    case GK_GLU_OP_SWIGLU: return GK_UNARY_OP_SILU;
    case GK_GLU_OP_GEGLU: return GK_UNARY_OP_GELU;
    case GK_GLU_OP_REGLU: return GK_UNARY_OP_RELU;
    case GK_GLU_OP_GEGLU_QUICK: return GK_UNARY_OP_GELU_QUICK;
    default: return GK_UNARY_OP_COUNT;
    }
}

/// f16(act(x)) as bits at each of the 65536 f16 inputs x (out[h] for bit pattern h): the
/// table act_gelu_f16 / act_gelu_quick_f16 look up (act_gelu, act_gelu_quick), for the
/// device backends, which look the values up as the CPU does.
void f16_table_bits(act_fn act, uint16_t * out);

/// The activation of a unary op for rows of `type` (see the file comment for the GELU
/// variants); nullptr for an op outside the enum, XIELU, and SILU (computed by its row
/// kernel, exp_kernels::silu).
act_fn unary_activation(gk_unary_op op, gk_type type);

} // namespace gk::cpu
