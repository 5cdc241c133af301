// timestep.h - a row of timestep_embedding (gk_timestep_embedding), shared by the CPU
// kernel and the device backends, which make the values on the host with this code (its
// exp, log, cos and sin are libm's, which no shader or kernel reproduces bit for bit).
#pragma once

#include <cmath>

namespace gk::cpu {

/// y[0 .. dim): [cos(t f_0) .. cos(t f_{h-1}), sin(t f_0) .. sin(t f_{h-1}) (, 0 if dim
/// is odd)] with h = dim / 2 and f_i = exp(-ln(max_period) i / h), in float.
inline void timestep_row(float t, int dim, int max_period, float * y) {
    const int half = dim / 2;
    for (int i = 0; i < half; ++i) {
        const float f =
            std::exp(-std::log(static_cast<float>(max_period)) * static_cast<float>(i) / static_cast<float>(half));
        y[i]        = std::cos(t * f);
        y[i + half] = std::sin(t * f);
    }
    if (dim % 2 != 0) {
        y[dim - 1] = 0.0f;
    }
}

} // namespace gk::cpu
