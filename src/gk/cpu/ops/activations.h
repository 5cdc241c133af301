// activations.h - the scalar activation functions, shared by the unary kernels and the
// GLUs so that gelu inside geglu is the same function as gelu on its own.
#pragma once

#include "gk/gk.h"

#include <cmath>

namespace gk::cpu {

inline float act_relu(float x) { return x > 0.0f ? x : 0.0f; }
inline float act_sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float act_silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float act_gelu_quick(float x) { return x / (1.0f + std::exp(-1.702f * x)); }
inline float act_gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

/// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline float act_gelu(float x) {
    return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * x * (1.0f + 0.044715f * x * x)));
}

using act_fn = float (*)(float);

/// The activation of a unary op; nullptr for an op outside the enum (or XIELU).
act_fn unary_activation(gk_unary_op op);

} // namespace gk::cpu
