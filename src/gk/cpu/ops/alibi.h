// alibi.h - the ALiBi slope of an attention head and the softmax of a row of logits,
// shared by soft_max and flash_attn_ext.
//
// With n_head heads and m = 2^floor(log2(n_head)): head h < m gets m0^(h+1) and the rest
// m1^(2(h-m)+1), where m0 = 2^(-max_bias/m) and m1 = 2^(-max_bias/(2m)). max_bias = 0
// means no ALiBi: every slope is 1.
#pragma once

#include "../vec_exp.h"

#include <algorithm>
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

/// The largest of w[0..n) and the sink (when there is one), -inf for none: in 8
/// interleaved runs (the maximum does not depend on the order; only the sign of a zero
/// maximum can, and w[i] - max and exp do not see it).
inline float row_max(const float * w, int64_t n, const float * sink) {
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
    return max;
}

namespace detail {

/// sums[r] = the sum of row r's n[r] values (w + r * ld) in double, left to right from +0,
/// for R rows at once: each row's adds depend on one another, the rows' do not, so they
/// overlap (R a template argument, so that the sums stay in registers).
template <int R>
void sum_rows(const float * w, size_t ld, const int64_t * n, double * sums) {
    double  s[R]  = {};
    int64_t n_min = n[0];
    for (int r = 1; r < R; ++r) {
        n_min = std::min(n_min, n[r]);
    }
    for (int64_t i = 0; i < n_min; ++i) {
        for (int r = 0; r < R; ++r) {
            s[r] += w[r * ld + i];
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int64_t i = n_min; i < n[r]; ++i) {
            s[r] += w[r * ld + i];
        }
        sums[r] = s[r];
    }
}

}  // namespace detail

/// Softmax in place over each of `rows` rows (row r: w + r * ld, its first n[r] values),
/// with an optional extra logit per row (sinks[r], an attention sink; sinks may be null)
/// that joins its normaliser only. Per row: w[i] = exp_f32(w[i] - max) (vec_exp.h;
/// exp_kernels::exp_shift), normalised by their sum in double, left to right from +0, plus
/// exp_f32(sink - max) (gk's exp, not libm's, so that a device reproduces it; ggml adds
/// expf's value), then multiplied by the normaliser's f32 reciprocal (exp_kernels::scale).
/// A row whose logits are all -inf (fully masked) gives zeros. A -inf logit gets weight +0
/// (exp_f32(-inf) = +0), and a +0 leaves every sum's bits, so -inf entries (masked keys)
/// change nothing for the others: attention's batch invariance. (ggml's AVX-512 order -
/// blocks of 16 in f32 - does not have that.) Each row gets the bits it gets alone; rows
/// are taken together so that their sums overlap.
inline void softmax_rows(float * w, size_t ld, const int64_t * n, int rows, const float * sinks) {
    constexpr int k_rows = 6;  // sums overlapped at most
    for (int r0 = 0; r0 < rows; r0 += k_rows) {
        const int R = std::min(k_rows, rows - r0);
        float     max[k_rows];
        int64_t   len[k_rows];  // 0 for a fully masked row: its sum is not taken
        for (int r = 0; r < R; ++r) {
            float * row = w + (r0 + r) * ld;
            max[r]      = row_max(row, n[r0 + r], sinks ? &sinks[r0 + r] : nullptr);
            len[r]      = max[r] == -INFINITY ? 0 : n[r0 + r];
            if (len[r] > 0) {
                get_exp_kernels().exp_shift(row, len[r], max[r]);
            }
        }
        double sums[k_rows];
        switch (R) {
        case 1: detail::sum_rows<1>(w + r0 * ld, ld, len, sums); break;
        case 2: detail::sum_rows<2>(w + r0 * ld, ld, len, sums); break;
        case 3: detail::sum_rows<3>(w + r0 * ld, ld, len, sums); break;
        case 4: detail::sum_rows<4>(w + r0 * ld, ld, len, sums); break;
        case 5: detail::sum_rows<5>(w + r0 * ld, ld, len, sums); break;
        default: detail::sum_rows<6>(w + r0 * ld, ld, len, sums); break;
        }
        for (int r = 0; r < R; ++r) {
            float * row = w + (r0 + r) * ld;
            if (max[r] == -INFINITY) {
                std::fill(row, row + n[r0 + r], 0.0f);
                continue;
            }
            const double sum = sums[r] + (sinks ? static_cast<double>(exp_f32(sinks[r0 + r] - max[r])) : 0.0);
            get_exp_kernels().scale(row, n[r0 + r], static_cast<float>(1.0 / sum));
        }
    }
}

/// softmax_rows of one row, w[0..n), with the sink *sink where sink is not null.
inline void softmax_in_place(float * w, int64_t n, const float * sink) { softmax_rows(w, 0, &n, 1, sink); }

} // namespace gk::cpu
