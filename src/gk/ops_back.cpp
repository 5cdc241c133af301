// ops_back.cpp - builders of the gradients of forward ops (ggml's *_back ops a training
// step needs): silu_back, rms_norm_back, soft_max_ext_back, get_rows_back, repeat_back.
// rope's gradient (rope_ext_back, rope_multi_back) is built with rope in ops_attention.cpp.
// Operand order and op_params are ggml's: a is the gradient of the forward op's result.
#include "internal.h"

#include <cmath>

using gk::builder;
using gk::describe;

namespace gk {
namespace {

/// An element-wise or row-wise gradient: dy a and the forward input b, float, of one
/// shape -> a's type and shape (a view of a when inplace).
gk_tensor * row_grad(gk_context * ctx, gk_op op, const char * name, gk_tensor * a, gk_tensor * b, bool inplace) {
    builder bd(ctx, name);
    if (!bd.inputs(a, b) || !bd.float_type(a, "a (dy)") || !bd.float_type(b, "b") || !bd.same_shape(a, b)) {
        return nullptr;
    }
    return inplace ? bd.alias(a, op, a, b) : bd.result(a->type, a->ne, op, a, b);
}

gk_tensor * soft_max_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, float scale, float max_bias, bool inplace) {
    if (!std::isfinite(scale) || !std::isfinite(max_bias)) {
        set_error(ctx, "soft_max_ext_back: scale %g and max_bias %g must be finite", static_cast<double>(scale),
                  static_cast<double>(max_bias));
        return nullptr;
    }
    gk_tensor * r = row_grad(ctx, GK_OP_SOFT_MAX_BACK, "soft_max_ext_back", a, b, inplace);
    if (r) {
        set_op_param_f32(r, 0, scale);
        set_op_param_f32(r, 1, max_bias);
    }
    return r;
}

} // namespace
} // namespace gk

extern "C" {

gk_tensor * gk_silu_back(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    return gk::row_grad(ctx, GK_OP_SILU_BACK, "silu_back", a, b, false);
}

gk_tensor * gk_rms_norm_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, float eps) {
    if (!(eps >= 0.0f)) {
        gk::set_error(ctx, "rms_norm_back: eps = %g must be >= 0", static_cast<double>(eps));
        return nullptr;
    }
    gk_tensor * r = gk::row_grad(ctx, GK_OP_RMS_NORM_BACK, "rms_norm_back", a, b, false);
    if (r) {
        gk::set_op_param_f32(r, 0, eps);
    }
    return r;
}

gk_tensor * gk_soft_max_ext_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, float scale, float max_bias) {
    return gk::soft_max_back(ctx, a, b, scale, max_bias, false);
}

gk_tensor * gk_soft_max_ext_back_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b, float scale, float max_bias) {
    return gk::soft_max_back(ctx, a, b, scale, max_bias, true);
}

gk_tensor * gk_get_rows_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c) {
    builder bd(ctx, "get_rows_back");
    if (!bd.inputs(a, b, c) || !bd.decodable(a, "a (dy)") || !bd.type_is(b, GK_TYPE_I32, "indices b") ||
        !bd.dims_at_most(a, 2, "a (dy)") || !bd.dims_at_most(b, 1, "indices b") || !bd.dims_at_most(c, 2, "c")) {
        return nullptr;
    }
    if (a->ne[0] != c->ne[0] || a->ne[1] < b->ne[0]) {  // rows of a past the indices' count are not read (ggml)
        bd.fail("a %s must have c's row length (c %s) and a row per index (b %s)", describe(a).c_str(),
                describe(c).c_str(), describe(b).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {c->ne[0], c->ne[1], 1, 1};
    return bd.result(GK_TYPE_F32, ne, GK_OP_GET_ROWS_BACK, a, b);
}

gk_tensor * gk_repeat_back(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    builder bd(ctx, "repeat_back");
    if (!bd.inputs(a, b) || !bd.float_type(a, "a (dy)")) {
        return nullptr;
    }
    if (!gk_can_repeat(b, a)) {
        bd.fail("b %s does not tile a %s (each a.ne[i] must be a multiple of b.ne[i])", describe(b).c_str(),
                describe(a).c_str());
        return nullptr;
    }
    return bd.result(a->type, b->ne, GK_OP_REPEAT_BACK, a);
}

} // extern "C"
