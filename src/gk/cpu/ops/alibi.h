// alibi.h - the ALiBi slope of an attention head, shared by soft_max and flash_attn_ext.
//
// With n_head heads and m = 2^floor(log2(n_head)): head h < m gets m0^(h+1) and the rest
// m1^(2(h-m)+1), where m0 = 2^(-max_bias/m) and m1 = 2^(-max_bias/(2m)). max_bias = 0
// means no ALiBi: every slope is 1.
#pragma once

#include <cmath>
#include <cstdint>

namespace gk::cpu {

inline float alibi_slope(float max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0.0f) {
        return 1.0f;
    }
    const int64_t m  = int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(n_head))));
    const float   m0 = std::pow(2.0f, -max_bias / static_cast<float>(m));
    const float   m1 = std::pow(2.0f, -max_bias / 2.0f / static_cast<float>(m));
    return h < m ? std::pow(m0, static_cast<float>(h + 1)) : std::pow(m1, static_cast<float>(2 * (h - m) + 1));
}

/// Softmax in place over w[0..n) with an optional extra logit (an attention sink)
/// that joins the normaliser only. The normaliser is summed in double, left to right.
/// A row whose logits are all -inf (fully masked) gives zeros.
inline void softmax_in_place(float * w, int64_t n, const float * sink) {
    float max = sink ? *sink : -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
        max = w[i] > max ? w[i] : max;
    }
    if (max == -INFINITY) {
        for (int64_t i = 0; i < n; ++i) {
            w[i] = 0.0f;
        }
        return;
    }
    double sum = sink ? std::exp(static_cast<double>(*sink - max)) : 0.0;
    for (int64_t i = 0; i < n; ++i) {
        w[i] = std::exp(w[i] - max);
        sum += w[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) {
        w[i] *= inv;
    }
}

} // namespace gk::cpu
