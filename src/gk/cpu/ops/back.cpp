// back.cpp - the gradients of forward ops (ggml's *_back ops): silu_back, rms_norm_back,
// soft_max_back, get_rows_back, repeat_back. (rope_back is rope.cpp's kernel with the
// rotation reversed.) src[0] is the gradient dy of the forward op's result. The formulas
// and their rounding steps are ggml's CPU kernels' (ggml-cpu/ops.cpp); the orders of the
// sums are fixed and documented here.
//
// silu_back, rms_norm_back, soft_max_back and repeat_back split by destination row.
// get_rows_back splits by destination row too: every thread scans all the indices in
// order and adds the gradient rows that land in its own range of rows, so each row sums
// its terms in index order at every thread count (ggml adds them in that order on one
// thread).
#include "../dispatch.h"
#include "../rows.h"

#include <cmath>

namespace gk::cpu {
namespace {

/// The row loop of the element- and row-wise gradients: f(dy, x, dx, n) for each row of
/// thread p.ith's share, dy that row of src[0] (the gradient), x of src[1] and dx where
/// dst's row is computed (transform_rows), n = ne0.
template <class F>
void grad_rows(const compute_params & p, gk_tensor * dst, F && f) {
    const gk_tensor * x    = dst->src[1];
    scratch           w    = p.work();
    float *           xbuf = w.floats(x->ne[0]);
    transform_rows(p, w, dst, [&](const float * dy, float * dx, int64_t i1, int64_t i2, int64_t i3) {
        f(dy, read_row(x, i1, i2, i3, xbuf), dx, dst->ne[0]);
    });
}

/// dy * s * (1 + x (1 - s)), s = sigmoid(x) with libm's expf (ggml's silu_backward).
void silu_back(const compute_params & p, gk_tensor * dst) {
    grad_rows(p, dst, [](const float * dy, const float * x, float * dx, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
            const float s = 1.0f / (1.0f + std::exp(-x[i]));
            dx[i]         = dy[i] * s * (1.0f + x[i] * (1.0f - s));
        }
    });
}

/// dx = (dy + x * (-sxd / (sxx + eps n))) / sqrt(sxx / n + eps), the sums in double of f32
/// products, left to right; each step rounded to f32 where ggml's kernel rounds it.
void rms_norm_back(const compute_params & p, gk_tensor * dst) {
    const float eps = gk_get_op_params_f32(dst, 0);
    grad_rows(p, dst, [eps](const float * dy, const float * x, float * dx, int64_t n) {
        double sum_xx  = 0.0;
        double sum_xdy = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            sum_xx += static_cast<double>(x[i] * x[i]);
            sum_xdy += static_cast<double>(x[i] * dy[i]);
        }
        const float mean_eps = static_cast<float>(sum_xx) / static_cast<float>(n) + eps;
        const float sum_eps  = static_cast<float>(sum_xx) + eps * static_cast<float>(n);
        const float rrms     = 1.0f / std::sqrt(mean_eps);
        const float scale_x  = static_cast<float>(-sum_xdy) / sum_eps;
        for (int64_t i = 0; i < n; ++i) {
            dx[i] = (dy[i] + x[i] * scale_x) * rrms;
        }
    });
}

/// dx = ((dy - dot(y, dy)) * y) * scale (src[1] is y), the dot in double of f32 products,
/// left to right. dx may be dy (the _inplace form): the dot is taken before any write.
void soft_max_back(const compute_params & p, gk_tensor * dst) {
    const float scale = gk_get_op_params_f32(dst, 0);
    grad_rows(p, dst, [scale](const float * dy, const float * y, float * dx, int64_t n) {
        double dot = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            dot += static_cast<double>(y[i] * dy[i]);
        }
        const float d = static_cast<float>(dot);
        for (int64_t i = 0; i < n; ++i) {
            dx[i] = (dy[i] - d) * y[i] * scale;
        }
    });
}

/// Row r of dst = 0 + the rows a[:, i] with idx[i] == r, added in f32 for i ascending.
void get_rows_back(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const gk_tensor * idx  = dst->src[1];
    const int64_t     n    = dst->ne[0];
    const int64_t     rows = dst->ne[1];
    const row_range   mine = split_rows(rows, p.ith, p.nth);
    scratch           w    = p.work();
    float *           buf  = w.floats(n);
    for (int64_t r = mine.begin; r < mine.end; ++r) {
        auto * out = reinterpret_cast<float *>(element_ptr(dst, 0, r, 0, 0));
        for (int64_t j = 0; j < n; ++j) {
            out[j] = 0.0f;
        }
    }
    for (int64_t i = 0; i < idx->ne[0]; ++i) {
        const int64_t r = read_index(idx, i, 0, 0, 0);
        if (r < 0 || r >= rows) {
            p.error->set(GK_STATUS_OUT_OF_RANGE, "row index %lld at [%lld] is outside [0, %lld)",
                         static_cast<long long>(r), static_cast<long long>(i), static_cast<long long>(rows));
            return;
        }
        if (r >= mine.begin && r < mine.end) {
            const float * g   = read_row(a, i, 0, 0, buf);
            auto *        out = reinterpret_cast<float *>(element_ptr(dst, 0, r, 0, 0));
            for (int64_t j = 0; j < n; ++j) {
                out[j] += g[j];
            }
        }
    }
}

/// Element (k0, k1, k2, k3) of dst = 0 + a[r0 ne0 + k0, r1 ne1 + k1, r2 ne2 + k2, r3 ne3 + k3]
/// added in f32 over (r3, r2, r1, r0) in lexicographic order (ggml's).
void repeat_back(const compute_params & p, gk_tensor * dst) {
    if (gk_is_empty(dst)) {
        return;
    }
    const gk_tensor * a = dst->src[0];
    int64_t           nr[4];
    for (int k = 0; k < 4; ++k) {
        nr[k] = a->ne[k] / dst->ne[k];
    }
    const int64_t n    = dst->ne[0];
    scratch       w    = p.work();
    float *       abuf = w.floats(a->ne[0]);
    float *       ybuf = w.floats(n);
    for_each_row(p, dst, [&](int64_t k1, int64_t k2, int64_t k3) {
        float * y = out_row(dst, k1, k2, k3, ybuf);
        for (int64_t j = 0; j < n; ++j) {
            y[j] = 0.0f;
        }
        for (int64_t r3 = 0; r3 < nr[3]; ++r3) {
            for (int64_t r2 = 0; r2 < nr[2]; ++r2) {
                for (int64_t r1 = 0; r1 < nr[1]; ++r1) {
                    const float * x = read_row(a, r1 * dst->ne[1] + k1, r2 * dst->ne[2] + k2, r3 * dst->ne[3] + k3,
                                               abuf);
                    for (int64_t r0 = 0; r0 < nr[0]; ++r0) {
                        for (int64_t j = 0; j < n; ++j) {
                            y[j] += x[r0 * n + j];
                        }
                    }
                }
            }
        }
        store_row(dst, k1, k2, k3, y);
    });
}

} // namespace

void register_back(kernel_table & t) {
    t.ops[GK_OP_SILU_BACK]     = {silu_back, nullptr};
    t.ops[GK_OP_RMS_NORM_BACK] = {rms_norm_back, nullptr};
    t.ops[GK_OP_SOFT_MAX_BACK] = {soft_max_back, nullptr};
    t.ops[GK_OP_GET_ROWS_BACK] = {get_rows_back, nullptr};
    t.ops[GK_OP_REPEAT_BACK]   = {repeat_back, nullptr};
}

} // namespace gk::cpu
