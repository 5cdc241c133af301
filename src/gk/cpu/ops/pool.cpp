// pool.cpp - pool_1d, pool_2d and pool_2d_back, split by destination row.
//
// pool_2d_back gathers: an input element adds, in output order (oy, then ox), the
// gradient of every output whose window holds it (max: whose window's first largest
// element it is) - the terms and order in which ggml's scattering kernel adds them.
#include "../dispatch.h"
#include "../rows.h"
#include "windows.h"

#include <cfloat>

namespace gk::cpu {
namespace {

/// The pool_2d op_params: i32 op, k0, k1, s0, s1, p0, p1.
struct pool_params {
    int64_t op, k0, k1, s0, s1, p0, p1;
};

pool_params get_pool_params(const gk_tensor * dst) {
    return {gk_get_op_params_i32(dst, 0), gk_get_op_params_i32(dst, 1), gk_get_op_params_i32(dst, 2),
            gk_get_op_params_i32(dst, 3), gk_get_op_params_i32(dst, 4), gk_get_op_params_i32(dst, 5),
            gk_get_op_params_i32(dst, 6)};
}

/// max as ggml takes it: the new value unless it is below the running one (a NaN sticks).
float max_step(float v, float res) { return v < res ? res : v; }

/// op_params i32 op, k, s, p; the average divides by the elements inside the row.
void pool_1d(const compute_params & p, gk_tensor * dst) {
    const bool    is_max = gk_get_op_params_i32(dst, 0) == GK_OP_POOL_MAX;
    const int64_t k      = gk_get_op_params_i32(dst, 1);
    const int64_t s      = gk_get_op_params_i32(dst, 2);
    const int64_t pd     = gk_get_op_params_i32(dst, 3);
    const int64_t iw     = dst->src[0]->ne[0];
    scratch       w      = p.work();
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t, int64_t, int64_t) {
        for (int64_t o = 0; o < dst->ne[0]; ++o) {
            float res   = is_max ? -FLT_MAX : 0.0f;
            int   count = 0;
            for (int64_t j = o * s - pd; j < o * s - pd + k; ++j) {
                if (j >= 0 && j < iw) {
                    res = is_max ? max_step(x[j], res) : res + x[j];
                    ++count;
                }
            }
            y[o] = is_max ? res : (count > 0 ? res / static_cast<float>(count) : 0.0f);
        }
    });
}

/// Row (oy, i2, i3): the average divides by k0*k1 whatever falls outside a.
void pool_2d(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a  = dst->src[0];
    const pool_params q  = get_pool_params(dst);
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    float *           xb = w.floats(a->ne[0] * q.k1);
    auto *            xr = static_cast<const float **>(w.take(sizeof(float *) * static_cast<size_t>(q.k1)));
    for_each_row(p, dst, [&](int64_t oy, int64_t i2, int64_t i3) {
        const int64_t y0 = oy * q.s1 - q.p1;
        for (int64_t ky = 0; ky < q.k1; ++ky) {
            const bool in = y0 + ky >= 0 && y0 + ky < a->ne[1];
            xr[ky]        = in ? read_row(a, y0 + ky, i2, i3, xb + ky * a->ne[0]) : nullptr;
        }
        float * y = out_row(dst, oy, i2, i3, yb);
        for (int64_t ox = 0; ox < dst->ne[0]; ++ox) {
            const int64_t x0  = ox * q.s0 - q.p0;
            float         res = q.op == GK_OP_POOL_MAX ? -FLT_MAX : 0.0f;
            for (int64_t ky = 0; ky < q.k1; ++ky) {
                for (int64_t kx = 0; kx < q.k0 && xr[ky]; ++kx) {
                    if (x0 + kx >= 0 && x0 + kx < a->ne[0]) {
                        const float v = xr[ky][x0 + kx];
                        res           = q.op == GK_OP_POOL_MAX ? max_step(v, res) : res + v;
                    }
                }
            }
            y[ox] = q.op == GK_OP_POOL_MAX ? res : res / static_cast<float>(q.k0 * q.k1);
        }
        store_row(dst, oy, i2, i3, y);
    });
}

size_t pool_2d_work(const gk_tensor * dst) {
    const int64_t k1 = gk_get_op_params_i32(dst, 2);
    return scratch_bytes(static_cast<size_t>(dst->ne[0]) * sizeof(float)) +
           scratch_bytes(static_cast<size_t>(dst->src[0]->ne[0] * k1) * sizeof(float)) +
           scratch_bytes(sizeof(float *) * static_cast<size_t>(k1));
}

/// Row (iy, i2, i3) of the input gradient.
void pool_2d_back(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * g  = dst->src[0];
    const gk_tensor * af = dst->src[1];
    const pool_params q  = get_pool_params(dst);
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    // (x, y) of the first largest element of output (ox, oy)'s window, as ggml picks it.
    const auto argmax_is = [&](int64_t ox, int64_t oy, int64_t x, int64_t y, int64_t i2, int64_t i3) {
        float   best = -FLT_MAX;
        int64_t bx = -1, by = -1;
        for (int64_t ky = 0; ky < q.k1; ++ky) {
            const int64_t yy = oy * q.s1 - q.p1 + ky;
            for (int64_t kx = 0; kx < q.k0 && yy >= 0 && yy < af->ne[1]; ++kx) {
                const int64_t xx = ox * q.s0 - q.p0 + kx;
                if (xx >= 0 && xx < af->ne[0]) {
                    const float v = read_element(af, xx, yy, i2, i3);
                    if (v > best) {
                        best = v, bx = xx, by = yy;
                    }
                }
            }
        }
        return bx == x && by == y;
    };
    for_each_row(p, dst, [&](int64_t iy, int64_t i2, int64_t i3) {
        float *         y  = out_row(dst, iy, i2, i3, yb);
        const row_range ry = windows_holding(iy + q.p1, q.k1, q.s1, g->ne[1]);
        for (int64_t ix = 0; ix < dst->ne[0]; ++ix) {
            const row_range rx  = windows_holding(ix + q.p0, q.k0, q.s0, g->ne[0]);
            float           sum = 0.0f;
            for (int64_t oy = ry.begin; oy < ry.end; ++oy) {
                for (int64_t ox = rx.begin; ox < rx.end; ++ox) {
                    const float gv = read_element(g, ox, oy, i2, i3);
                    if (q.op == GK_OP_POOL_AVG) {
                        sum += gv / static_cast<float>(q.k0 * q.k1);
                    } else if (argmax_is(ox, oy, ix, iy, i2, i3)) {
                        sum += gv;
                    }
                }
            }
            y[ix] = sum;
        }
        store_row(dst, iy, i2, i3, y);
    });
}

}  // namespace

void register_pool(kernel_table & t) {
    t.ops[GK_OP_POOL_1D]      = {pool_1d, nullptr};
    t.ops[GK_OP_POOL_2D]      = {pool_2d, pool_2d_work};
    t.ops[GK_OP_POOL_2D_BACK] = {pool_2d_back, nullptr};
}

}  // namespace gk::cpu
