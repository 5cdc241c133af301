// glu.cpp - the gated linear units: out = act(x) * g, fused (x and g are the halves of
// one source row) or split (x from src0, g from src1). Split by destination row.
//
// swiglu_oai (gpt-oss) clamps first: x = min(x, limit), g = clamp(g, -limit, limit),
// out = x / (1 + exp_f32(-alpha x)) * (g + 1), with gk's exp (vec_exp.h), so that a
// device reproduces it (ggml's is libm's expf); swiglu_clamp: x = min(x, limit),
// g = clamp(g, -limit, limit), out = x * sigmoid(x) * g.
#include "../dispatch.h"
#include "../rows.h"
#include "../vec_dot.h"
#include "../vec_exp.h"
#include "activations.h"

#include <algorithm>
#include <cmath>

namespace gk::cpu {
namespace {

// The activation for rows of `type` (GELU and GELU_QUICK by unary_activation's rules);
// nullptr for swiglu, which has its own row kernel (exp_kernels::swiglu: silu_f32's
// bits), and for swiglu_oai, which has its own formula.
act_fn glu_activation(gk_glu_op op, gk_type type) {
    switch (op) {
    case GK_GLU_OP_REGLU: return act_relu;
    case GK_GLU_OP_GEGLU: return unary_activation(GK_UNARY_OP_GELU, type);
    case GK_GLU_OP_GEGLU_ERF: return act_gelu_erf;
    case GK_GLU_OP_GEGLU_QUICK: return unary_activation(GK_UNARY_OP_GELU_QUICK, type);
    default: return nullptr;
    }
}

/// y[i] = act_gelu_f32(x[i]) * g[i], or 0 for x[i] <= -10 (ggml's f32 geglu) for i < n,
/// by gelu_f32_row's method (the f16 of the row at once into h, then the table).
void geglu_f32_row(float * y, const float * x, const float * g, int64_t n, fp16_t * h) {
    get_vec_dot_traits(GK_TYPE_F16)->from_float(x, h, n);
    const float * table = gelu_f16_table();
    for (int64_t i = 0; i < n; ++i) {
        y[i] = x[i] <= -10.0f ? 0.0f : gelu_f32_at(x[i], h[i], table) * g[i];
    }
}

/// v clamped to [-limit, limit] (comparisons, not std::clamp: a negative limit is not UB).
float clamp_limit(float v, float limit) { return v < -limit ? -limit : (limit < v ? limit : v); }

void glu(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a       = dst->src[0];
    const gk_tensor * b       = dst->src[1];
    const gk_glu_op   op      = gk_get_glu_op(dst);
    const bool        swapped = gk_get_op_params_i32(dst, 1) != 0;
    const float       alpha   = gk_get_op_params_f32(dst, 2);
    const float       limit   = gk_get_op_params_f32(dst, 3);
    const act_fn      act     = glu_activation(op, a->type);
    // ggml's f32 geglu gives 0 below -10, not act(x) * g (which is -0 or NaN for some g)
    const bool        zero_lo = act == act_gelu_f32;
    const int64_t     n       = dst->ne[0];
    scratch           w       = p.work();
    float *           abuf    = w.floats(a->ne[0]);
    float *           bbuf    = b ? w.floats(b->ne[0]) : nullptr;
    float *           ybuf    = w.floats(n);
    auto *            hbuf = zero_lo ? static_cast<fp16_t *>(w.take(static_cast<size_t>(n) * sizeof(fp16_t))) : nullptr;
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float * ra = read_row(a, i1, i2, i3, abuf);
        const float * x  = ra;
        const float * g  = nullptr;
        if (b) {
            g = read_row(b, i1, i2, i3, bbuf);
        } else {
            x = swapped ? ra + n : ra;
            g = swapped ? ra : ra + n;
        }
        float * y = out_row(dst, i1, i2, i3, ybuf);
        if (op == GK_GLU_OP_SWIGLU) {
            get_exp_kernels().swiglu(y, x, g, n);  // silu_f32(x[i]) * g[i], vectorised
        } else if (zero_lo) {
            geglu_f32_row(y, x, g, n, hbuf);
        } else if (act) {
            for (int64_t i = 0; i < n; ++i) {
                y[i] = act(x[i]) * g[i];
            }
        } else if (op == GK_GLU_OP_SWIGLU_CLAMP) {
            for (int64_t i = 0; i < n; ++i) {
                const float xc = std::min(x[i], limit);
                const float gc = clamp_limit(g[i], limit);
                y[i]           = xc / (1.0f + std::exp(-xc)) * gc;
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                const float xc = std::min(x[i], limit);
                const float gc = clamp_limit(g[i], limit);
                y[i]           = xc / (1.0f + exp_f32(-alpha * xc)) * (gc + 1.0f);
            }
        }
        store_row(dst, i1, i2, i3, y);
    });
}

/// The rows of default_work_size and the f16 row of geglu_f32_row.
size_t glu_work_size(const gk_tensor * dst) {
    return default_work_size(dst) + scratch_bytes(static_cast<size_t>(dst->ne[0]) * sizeof(fp16_t));
}

} // namespace

void register_glu(kernel_table & t) { t.ops[GK_OP_GLU] = {glu, glu_work_size}; }

} // namespace gk::cpu
