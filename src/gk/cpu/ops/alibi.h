// alibi.h - the ALiBi slope of an attention head and the softmax of a row of logits,
// shared by soft_max and flash_attn_ext.
//
// With n_head heads and m = 2^floor(log2(n_head)): head h < m gets m0^(h+1) and the rest
// m1^(2(h-m)+1), where m0 = 2^(-max_bias/m) and m1 = 2^(-max_bias/(2m)). max_bias = 0
// means no ALiBi: every slope is 1.
#pragma once

#include "../vec_exp.h"

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
/// that joins the normaliser only: w[i] = exp_f32(w[i] - max) (vec_exp.h), normalised by
/// their sum in double, left to right (exp_kernels::exp_sum), plus exp_f32(sink - max)
/// (gk's exp, not libm's, so that a device reproduces it; ggml adds expf's value), then
/// multiplied by the normaliser's f32 reciprocal. A row whose logits are all -inf (fully
/// masked) gives zeros. A -inf logit gets weight +0 (exp_f32(-inf) = +0), and a +0 leaves
/// every run's bits, so -inf entries (masked keys) change nothing for the others.
inline void softmax_in_place(float * w, int64_t n, const float * sink) {
    // The largest logit, in 8 interleaved runs (the maximum does not depend on the order;
    // only the sign of a zero maximum can, and w[i] - max and exp do not see it).
    constexpr int k_runs = 8;
    float         run[k_runs];
    for (float & r : run) {
        r = sink ? *sink : -INFINITY;
    }
    int64_t i = 0;
    for (; i + k_runs <= n; i += k_runs) {
        for (int r = 0; r < k_runs; ++r) {
            run[r] = w[i + r] > run[r] ? w[i + r] : run[r];
        }
    }
    for (; i < n; ++i) {
        run[0] = w[i] > run[0] ? w[i] : run[0];
    }
    float max = run[0];
    for (int r = 1; r < k_runs; ++r) {
        max = run[r] > max ? run[r] : max;
    }
    if (max == -INFINITY) {
        for (i = 0; i < n; ++i) {
            w[i] = 0.0f;
        }
        return;
    }
    const double sum = get_exp_kernels().exp_sum(w, n, max) + (sink ? static_cast<double>(exp_f32(*sink - max)) : 0.0);
    const float inv = static_cast<float>(1.0 / sum);
    for (i = 0; i < n; ++i) {
        w[i] *= inv;
    }
}

} // namespace gk::cpu
