// ops_pool.cpp - builders of the pooling ops: pool_1d, pool_2d and pool_2d's gradient.
#include "internal.h"

namespace gk {
namespace {

/// ggml's pooling output size, computed as ggml does (in float, truncated).
int64_t pool_out_size(int64_t in, int k, int s, float p) {
    return static_cast<int64_t>((static_cast<float>(in) + 2 * p - static_cast<float>(k)) / static_cast<float>(s) + 1);
}

/// op a pooling function, kernel sizes and strides >= 1, paddings >= 0 and finite.
bool pool_params_ok(builder & bd, gk_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1) {
    if (op != GK_OP_POOL_MAX && op != GK_OP_POOL_AVG) {
        return bd.fail("op = %d is not GK_OP_POOL_MAX or GK_OP_POOL_AVG", static_cast<int>(op));
    }
    if (k0 < 1 || k1 < 1 || s0 < 1 || s1 < 1) {
        return bd.fail("kernel (%d, %d) and stride (%d, %d) must be >= 1", k0, k1, s0, s1);
    }
    if (!(p0 >= 0.0f && p0 < 1e9f && p1 >= 0.0f && p1 < 1e9f)) {
        return bd.fail("padding (%g, %g) must be >= 0 and finite", static_cast<double>(p0), static_cast<double>(p1));
    }
    return true;
}

/// The shape pool_2d gives for a (false with a message when it is empty).
bool pool_2d_shape(builder & bd, const gk_tensor * a, int k0, int k1, int s0, int s1, float p0, float p1,
                   int64_t ne[4]) {
    ne[0] = pool_out_size(a->ne[0], k0, s0, p0);
    ne[1] = pool_out_size(a->ne[1], k1, s1, p1);
    ne[2] = a->ne[2];
    ne[3] = a->ne[3];
    if (ne[0] < 1 || ne[1] < 1) {
        return bd.fail("a %s is too small for a %d x %d window", describe(a).c_str(), k0, k1);
    }
    return true;
}

void set_pool_2d_params(gk_tensor * r, gk_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1) {
    const int32_t v[7] = {op, k0, k1, s0, s1, static_cast<int32_t>(p0), static_cast<int32_t>(p1)};
    for (int i = 0; i < 7; ++i) {
        set_op_param_i32(r, i, v[i]);
    }
}

}  // namespace
}  // namespace gk

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_pool_1d(gk_context * ctx, gk_tensor * a, gk_op_pool op, int k0, int s0, int p0) {
    builder bd(ctx, "pool_1d");
    if (!bd.inputs(a) || !bd.float_type(a, "a") ||
        !gk::pool_params_ok(bd, op, k0, 1, s0, 1, static_cast<float>(p0), 0.0f)) {
        return nullptr;
    }
    const int64_t ne[4] = {gk::pool_out_size(a->ne[0], k0, s0, static_cast<float>(p0)), a->ne[1], a->ne[2], a->ne[3]};
    if (ne[0] < 1) {
        bd.fail("a %s is too small for a window of %d", describe(a).c_str(), k0);
        return nullptr;
    }
    gk_tensor * r = bd.result(GK_TYPE_F32, ne, GK_OP_POOL_1D, a);
    if (r) {
        const int32_t v[4] = {op, k0, s0, p0};
        for (int i = 0; i < 4; ++i) {
            gk::set_op_param_i32(r, i, v[i]);
        }
    }
    return r;
}

gk_tensor * gk_pool_2d(gk_context * ctx, gk_tensor * a, gk_op_pool op, int k0, int k1, int s0, int s1, float p0,
                       float p1) {
    builder bd(ctx, "pool_2d");
    int64_t ne[4];
    if (!bd.inputs(a) || !bd.float_type(a, "a") || !gk::pool_params_ok(bd, op, k0, k1, s0, s1, p0, p1) ||
        !gk::pool_2d_shape(bd, a, k0, k1, s0, s1, p0, p1, ne)) {
        return nullptr;
    }
    gk_tensor * r = bd.result(GK_TYPE_F32, ne, GK_OP_POOL_2D, a);
    if (r) {
        gk::set_pool_2d_params(r, op, k0, k1, s0, s1, p0, p1);
    }
    return r;
}

gk_tensor * gk_pool_2d_back(gk_context * ctx, gk_tensor * a, gk_tensor * af, gk_op_pool op, int k0, int k1, int s0,
                            int s1, float p0, float p1) {
    builder bd(ctx, "pool_2d_back");
    int64_t ne[4];
    if (!bd.inputs(a, af) || !bd.float_type(a, "a") || !bd.float_type(af, "af") ||
        !gk::pool_params_ok(bd, op, k0, k1, s0, s1, p0, p1) || !gk::pool_2d_shape(bd, af, k0, k1, s0, s1, p0, p1, ne)) {
        return nullptr;
    }
    if (a->ne[0] != ne[0] || a->ne[1] != ne[1] || a->ne[2] != ne[2] || a->ne[3] != ne[3]) {
        bd.fail("gradient a %s is not the shape pool_2d gives for af %s", describe(a).c_str(), describe(af).c_str());
        return nullptr;
    }
    gk_tensor * r = bd.result(GK_TYPE_F32, af->ne, GK_OP_POOL_2D_BACK, a, af);
    if (r) {
        gk::set_pool_2d_params(r, op, k0, k1, s0, s1, p0, p1);
    }
    return r;
}

}  // extern "C"
