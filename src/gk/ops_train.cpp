// ops_train.cpp - builders of the training ops that are not gradients of a forward op:
// the loss (cross_entropy_loss and its gradient) and the optimizer steps (opt_step_adamw,
// opt_step_sgd), with ggml's operands and checks.
#include "internal.h"

using gk::builder;
using gk::describe;

namespace gk {
namespace {

/// An optimizer step's checks: a flagged as a parameter, a and grad F32 with dense rows and
/// the same shape, params F32 contiguous with n_params elements.
bool opt_step_ok(builder & bd, const gk_tensor * a, const gk_tensor * grad, const gk_tensor * params,
                 int64_t n_params) {
    if (!(a->flags & GK_TENSOR_FLAG_PARAM)) {
        return bd.fail("a %s must be flagged as a parameter (gk_set_param)", describe(a).c_str());
    }
    if (!bd.type_is(a, GK_TYPE_F32, "a") || !bd.type_is(grad, GK_TYPE_F32, "grad") || !bd.dense_rows(a, "a") ||
        !bd.dense_rows(grad, "grad") || !bd.same_shape(a, grad) || !bd.type_is(params, GK_TYPE_F32, "params") ||
        !bd.contiguous(params, "params")) {
        return false;
    }
    return gk_nelements(params) == n_params ||
           bd.fail("params %s must hold %lld values", describe(params).c_str(), static_cast<long long>(n_params));
}

} // namespace
} // namespace gk

extern "C" {

gk_tensor * gk_cross_entropy_loss(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    builder bd(ctx, "cross_entropy_loss");
    if (!bd.inputs(a, b) || !bd.type_is(a, GK_TYPE_F32, "logits a") || !bd.type_is(b, GK_TYPE_F32, "labels b") ||
        !bd.same_shape(a, b)) {
        return nullptr;
    }
    if (gk_is_empty(a)) {
        bd.fail("logits a %s are empty", describe(a).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {1, 1, 1, 1};
    return bd.result(GK_TYPE_F32, ne, GK_OP_CROSS_ENTROPY_LOSS, a, b);
}

gk_tensor * gk_cross_entropy_loss_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c) {
    builder bd(ctx, "cross_entropy_loss_back");
    if (!bd.inputs(a, b, c) || !bd.type_is(a, GK_TYPE_F32, "gradient a") || !bd.type_is(b, GK_TYPE_F32, "logits b") ||
        !bd.type_is(c, GK_TYPE_F32, "labels c") || !bd.same_shape(b, c)) {
        return nullptr;
    }
    if (gk_nelements(a) != 1) {
        bd.fail("gradient a %s must be a scalar (one element)", describe(a).c_str());
        return nullptr;
    }
    return bd.result(GK_TYPE_F32, b->ne, GK_OP_CROSS_ENTROPY_LOSS_BACK, a, b, c);
}

gk_tensor * gk_opt_step_adamw(gk_context * ctx, gk_tensor * a, gk_tensor * grad, gk_tensor * m, gk_tensor * v,
                              gk_tensor * adamw_params) {
    builder bd(ctx, "opt_step_adamw");
    if (!bd.inputs(a, grad, m, v, adamw_params) || !gk::opt_step_ok(bd, a, grad, adamw_params, 7) ||
        !bd.type_is(m, GK_TYPE_F32, "m") || !bd.type_is(v, GK_TYPE_F32, "v") || !bd.dense_rows(m, "m") ||
        !bd.dense_rows(v, "v") || !bd.same_shape(a, m) || !bd.same_shape(a, v)) {
        return nullptr;
    }
    gk_tensor * r = bd.alias(a, GK_OP_OPT_STEP_ADAMW, a, grad, m);
    if (r) {
        r->src[3] = v;
        r->src[4] = adamw_params;
    }
    return r;
}

gk_tensor * gk_opt_step_sgd(gk_context * ctx, gk_tensor * a, gk_tensor * grad, gk_tensor * sgd_params) {
    builder bd(ctx, "opt_step_sgd");
    if (!bd.inputs(a, grad, sgd_params) || !gk::opt_step_ok(bd, a, grad, sgd_params, 2)) {
        return nullptr;
    }
    return bd.alias(a, GK_OP_OPT_STEP_SGD, a, grad, sgd_params);
}

} // extern "C"
