// train.cpp - the loss and the optimizer steps: cross_entropy_loss, its gradient
// cross_entropy_loss_back, opt_step_adamw and opt_step_sgd. The formulas and their
// rounding steps are ggml's CPU kernels' (ggml-cpu/ops.cpp).
//
// cross_entropy_loss reduces over all rows, so it runs on thread 0 alone, adding the rows
// in index order (ggml sums per thread and then over threads, which changes its bits with
// the thread count; at one thread the order is this one). The others split by row. The
// optimizer steps write a (the result is a view of it) and, for AdamW, m and v in place.
#include "../dispatch.h"
#include "../rows.h"
#include "alibi.h"

#include <cmath>

namespace gk::cpu {
namespace {

/// -1/rows * sum over rows (index order, f32) of the row's sum (double, left to right) of
/// b_i * ((a_i - max) - logf(sum_j expf(a_j - max))), the exp sum in double.
void cross_entropy_loss(const compute_params & p, gk_tensor * dst) {
    if (p.ith != 0) {
        return;
    }
    const gk_tensor * a     = dst->src[0];
    const gk_tensor * b     = dst->src[1];
    const int64_t     n     = a->ne[0];
    scratch           w     = p.work();
    float *           abuf  = w.floats(n);
    float *           bbuf  = w.floats(n);
    float             total = 0.0f;
    for (int64_t i3 = 0; i3 < a->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < a->ne[2]; ++i2) {
            for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
                const float * x   = read_row(a, i1, i2, i3, abuf);
                const float * lab = read_row(b, i1, i2, i3, bbuf);
                float         max = -INFINITY;
                for (int64_t i = 0; i < n; ++i) {
                    max = x[i] > max ? x[i] : max;
                }
                double sum = 0.0;
                for (int64_t i = 0; i < n; ++i) {
                    sum += static_cast<double>(std::exp(x[i] - max));
                }
                const float lse = std::log(static_cast<float>(sum));
                double      row = 0.0;
                for (int64_t i = 0; i < n; ++i) {
                    row += static_cast<double>((x[i] - max - lse) * lab[i]);
                }
                total += static_cast<float>(row);
            }
        }
    }
    *static_cast<float *>(dst->data) = total * (-1.0f / static_cast<float>(gk_nrows(a)));
}

/// (softmax(b) - c) * (a / rows), softmax as soft_max's (alibi.h: softmax_in_place).
void cross_entropy_loss_back(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * logits  = dst->src[1];
    const gk_tensor * labels  = dst->src[2];
    const int64_t     n       = dst->ne[0];
    const float       d_by_nr = read_element(dst->src[0], 0, 0, 0, 0) / static_cast<float>(gk_nrows(logits));
    scratch           w       = p.work();
    float *           xbuf    = w.floats(n);
    float *           lbuf    = w.floats(n);
    float *           ybuf    = w.floats(n);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float * x   = read_row(logits, i1, i2, i3, xbuf);
        const float * lab = read_row(labels, i1, i2, i3, lbuf);
        float *       y   = out_row(dst, i1, i2, i3, ybuf);
        for (int64_t i = 0; i < n; ++i) {
            y[i] = x[i];
        }
        softmax_in_place(y, n, nullptr);
        for (int64_t i = 0; i < n; ++i) {
            y[i] = (y[i] - lab[i]) * d_by_nr;
        }
        store_row(dst, i1, i2, i3, y);
    });
}

float param(const gk_tensor * params, int i) { return static_cast<const float *>(params->data)[i]; }

/// AdamW: m = m beta1 + g (1 - beta1); v = v beta2 + g g (1 - beta2);
/// w = w (1 - alpha wd) - alpha (m beta1h) / (sqrt(v beta2h) + eps), in f32.
void opt_step_adamw(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a      = dst->src[0];
    const gk_tensor * grad   = dst->src[1];
    const gk_tensor * mt     = dst->src[2];
    const gk_tensor * vt     = dst->src[3];
    const gk_tensor * params = dst->src[4];
    const float       alpha  = param(params, 0);
    const float       beta1  = param(params, 1);
    const float       beta2  = param(params, 2);
    const float       eps    = param(params, 3);
    const float       keep   = 1.0f - alpha * param(params, 4);
    const float       beta1h = param(params, 5);
    const float       beta2h = param(params, 6);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        auto *       wr = reinterpret_cast<float *>(element_ptr(a, 0, i1, i2, i3));
        const auto * g  = reinterpret_cast<const float *>(element_ptr(grad, 0, i1, i2, i3));
        auto *       m  = reinterpret_cast<float *>(element_ptr(mt, 0, i1, i2, i3));
        auto *       v  = reinterpret_cast<float *>(element_ptr(vt, 0, i1, i2, i3));
        for (int64_t i = 0; i < a->ne[0]; ++i) {
            m[i]           = m[i] * beta1 + g[i] * (1.0f - beta1);
            v[i]           = v[i] * beta2 + g[i] * g[i] * (1.0f - beta2);
            const float mh = m[i] * beta1h;
            const float vh = std::sqrt(v[i] * beta2h) + eps;
            wr[i]          = wr[i] * keep - alpha * mh / vh;
        }
    });
}

/// SGD: w = w (1 - alpha wd) - alpha g, in f32.
void opt_step_sgd(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a     = dst->src[0];
    const gk_tensor * grad  = dst->src[1];
    const float       alpha = param(dst->src[2], 0);
    const float       keep  = 1.0f - alpha * param(dst->src[2], 1);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        auto *       wr = reinterpret_cast<float *>(element_ptr(a, 0, i1, i2, i3));
        const auto * g  = reinterpret_cast<const float *>(element_ptr(grad, 0, i1, i2, i3));
        for (int64_t i = 0; i < a->ne[0]; ++i) {
            wr[i] = wr[i] * keep - alpha * g[i];
        }
    });
}

} // namespace

void register_train(kernel_table & t) {
    t.ops[GK_OP_CROSS_ENTROPY_LOSS]      = {cross_entropy_loss, nullptr};
    t.ops[GK_OP_CROSS_ENTROPY_LOSS_BACK] = {cross_entropy_loss_back, nullptr};
    t.ops[GK_OP_OPT_STEP_ADAMW]          = {opt_step_adamw, nullptr};
    t.ops[GK_OP_OPT_STEP_SGD]            = {opt_step_sgd, nullptr};
}

} // namespace gk::cpu
