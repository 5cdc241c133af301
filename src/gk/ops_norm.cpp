// ops_norm.cpp - builders of the normalisations along dim 0 (norm, rms_norm, l2_norm)
// and over groups of slices (group_norm).
#include "internal.h"

namespace gk {
namespace {

gk_tensor * row_norm(gk_context * ctx, gk_op op, gk_tensor * a, float eps) {
    builder bd(ctx, gk_op_symbol(op));
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    if (!(eps >= 0.0f)) {
        bd.fail("eps = %g must be >= 0", static_cast<double>(eps));
        return nullptr;
    }
    gk_tensor * r = bd.result(a->type, a->ne, op, a);
    if (r) {
        set_op_param_f32(r, 0, eps);
    }
    return r;
}

} // namespace
} // namespace gk

extern "C" {

gk_tensor * gk_norm(gk_context * ctx, gk_tensor * a, float eps) { return gk::row_norm(ctx, GK_OP_NORM, a, eps); }

gk_tensor * gk_rms_norm(gk_context * ctx, gk_tensor * a, float eps) {
    return gk::row_norm(ctx, GK_OP_RMS_NORM, a, eps);
}

gk_tensor * gk_l2_norm(gk_context * ctx, gk_tensor * a, float eps) { return gk::row_norm(ctx, GK_OP_L2_NORM, a, eps); }

gk_tensor * gk_group_norm(gk_context * ctx, gk_tensor * a, int n_groups, float eps) {
    gk::builder bd(ctx, "group_norm");
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    if (n_groups < 1 || n_groups > a->ne[2]) {
        bd.fail("n_groups = %d must be in 1..ne[2] = %lld", n_groups, static_cast<long long>(a->ne[2]));
        return nullptr;
    }
    if (!(eps >= 0.0f)) {
        bd.fail("eps = %g must be >= 0", static_cast<double>(eps));
        return nullptr;
    }
    gk_tensor * r = bd.result(a->type, a->ne, GK_OP_GROUP_NORM, a);
    if (r) {
        gk::set_op_param_i32(r, 0, n_groups);
        gk::set_op_param_f32(r, 1, eps);
    }
    return r;
}

} // extern "C"
