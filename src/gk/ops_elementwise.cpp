// ops_elementwise.cpp - builders of the element-wise ops: binary arithmetic with
// broadcast, the math functions, activations, GLUs, scale and clamp.
#include "internal.h"

#include <cmath>

namespace gk {
namespace {

/// Result of an element-wise op on a: a's type and shape (or a view of a when in place).
gk_tensor * like(builder & bd, gk_tensor * a, gk_op op, bool inplace, gk_tensor * b = nullptr) {
    return inplace ? bd.alias(a, op, a, b) : bd.result(a->type, a->ne, op, a, b);
}

gk_tensor * binary(gk_context * ctx, gk_op op, gk_tensor * a, gk_tensor * b, bool inplace) {
    builder bd(ctx, gk_op_symbol(op));
    if (!bd.inputs(a, b) || !bd.float_type(a, "a") || !bd.float_type(b, "b")) {
        return nullptr;
    }
    if (!gk_can_repeat(b, a)) {
        bd.fail("b %s cannot be broadcast to a %s", describe(b).c_str(), describe(a).c_str());
        return nullptr;
    }
    return like(bd, a, op, inplace, b);
}

gk_tensor * math(gk_context * ctx, gk_op op, gk_tensor * a) {
    builder bd(ctx, gk_op_symbol(op));
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    return like(bd, a, op, false);
}

gk_tensor * unary(gk_context * ctx, gk_tensor * a, gk_unary_op uop, bool inplace) {
    builder bd(ctx, "unary");
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    if (uop < 0 || uop >= GK_UNARY_OP_COUNT || uop == GK_UNARY_OP_XIELU) {
        bd.fail("unsupported activation %d", static_cast<int>(uop));
        return nullptr;
    }
    gk_tensor * r = like(bd, a, GK_OP_UNARY, inplace);
    if (r) {
        set_op_param_i32(r, 0, uop);
    }
    return r;
}

/// The GLUs: fused when b is null (a = [x | g] along dim 0), split otherwise.
gk_tensor * glu(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_glu_op gop, bool swapped, float alpha, float limit) {
    builder bd(ctx, "glu");
    if (!bd.inputs(a) || !bd.float_type(a, "a") || !bd.dense_rows(a, "a")) {
        return nullptr;
    }
    if (gop < 0 || gop >= GK_GLU_OP_COUNT) {
        bd.fail("unsupported GLU %d", static_cast<int>(gop));
        return nullptr;
    }
    int64_t ne[4] = {a->ne[0], a->ne[1], a->ne[2], a->ne[3]};
    if (b) {
        if (!bd.same_shape(a, b) || !bd.type_is(b, a->type, "b") || !bd.dense_rows(b, "b")) {
            return nullptr;
        }
    } else {
        ne[0] /= 2;  // as ggml: of an odd row, the last element is not read
    }
    gk_tensor * r = bd.result(a->type, ne, GK_OP_GLU, a, b);
    if (r) {
        set_op_param_i32(r, 0, gop);
        set_op_param_i32(r, 1, swapped ? 1 : 0);
        set_op_param_f32(r, 2, alpha);
        set_op_param_f32(r, 3, limit);
    }
    return r;
}

gk_tensor * affine(gk_context * ctx, gk_op op, gk_tensor * a, float p0, float p1, bool inplace) {
    builder bd(ctx, gk_op_symbol(op));
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    gk_tensor * r = like(bd, a, op, inplace);
    if (r) {
        set_op_param_f32(r, 0, p0);
        set_op_param_f32(r, 1, p1);
    }
    return r;
}

/// The GLUs gk_glu / gk_glu_split build: not those with parameters (swiglu_oai, swiglu_clamp).
bool parameterless_glu(builder & bd, gk_glu_op op) {
    if (op == GK_GLU_OP_SWIGLU_OAI) {
        return bd.fail("swiglu_oai takes alpha and limit: use gk_swiglu_oai");
    }
    return op != GK_GLU_OP_SWIGLU_CLAMP || bd.fail("swiglu_clamp takes a limit: use gk_swiglu_clamp");
}

/// xIELU's softplus of its parameters, as ggml computes it at build time.
float softplus_param(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }

} // namespace
} // namespace gk

using namespace gk;

extern "C" {

gk_tensor * gk_add(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_ADD, a, b, false); }
gk_tensor * gk_sub(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_SUB, a, b, false); }
gk_tensor * gk_mul(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_MUL, a, b, false); }
gk_tensor * gk_div(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_DIV, a, b, false); }
gk_tensor * gk_add_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_ADD, a, b, true); }
gk_tensor * gk_sub_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_SUB, a, b, true); }
gk_tensor * gk_mul_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_MUL, a, b, true); }
gk_tensor * gk_div_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return binary(ctx, GK_OP_DIV, a, b, true); }

gk_tensor * gk_sqr(gk_context * ctx, gk_tensor * a) { return math(ctx, GK_OP_SQR, a); }
gk_tensor * gk_sqrt(gk_context * ctx, gk_tensor * a) { return math(ctx, GK_OP_SQRT, a); }
gk_tensor * gk_log(gk_context * ctx, gk_tensor * a) { return math(ctx, GK_OP_LOG, a); }
gk_tensor * gk_sin(gk_context * ctx, gk_tensor * a) { return math(ctx, GK_OP_SIN, a); }
gk_tensor * gk_cos(gk_context * ctx, gk_tensor * a) { return math(ctx, GK_OP_COS, a); }

gk_tensor * gk_unary(gk_context * ctx, gk_tensor * a, gk_unary_op op) { return unary(ctx, a, op, false); }
gk_tensor * gk_unary_inplace(gk_context * ctx, gk_tensor * a, gk_unary_op op) { return unary(ctx, a, op, true); }
gk_tensor * gk_abs(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_ABS, false); }
gk_tensor * gk_sgn(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_SGN, false); }
gk_tensor * gk_neg(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_NEG, false); }
gk_tensor * gk_step(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_STEP, false); }
gk_tensor * gk_tanh(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_TANH, false); }
gk_tensor * gk_elu(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_ELU, false); }
gk_tensor * gk_relu(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_RELU, false); }
gk_tensor * gk_sigmoid(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_SIGMOID, false); }
gk_tensor * gk_gelu(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_GELU, false); }
gk_tensor * gk_gelu_erf(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_GELU_ERF, false); }
gk_tensor * gk_gelu_quick(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_GELU_QUICK, false); }
gk_tensor * gk_silu(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_SILU, false); }
gk_tensor * gk_hardswish(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_HARDSWISH, false); }
gk_tensor * gk_hardsigmoid(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_HARDSIGMOID, false); }
gk_tensor * gk_exp(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_EXP, false); }
gk_tensor * gk_expm1(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_EXPM1, false); }
gk_tensor * gk_softplus(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_SOFTPLUS, false); }
gk_tensor * gk_floor(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_FLOOR, false); }
gk_tensor * gk_ceil(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_CEIL, false); }
gk_tensor * gk_round(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_ROUND, false); }
gk_tensor * gk_trunc(gk_context * ctx, gk_tensor * a) { return unary(ctx, a, GK_UNARY_OP_TRUNC, false); }

gk_tensor * gk_leaky_relu(gk_context * ctx, gk_tensor * a, float negative_slope, bool inplace) {
    return affine(ctx, GK_OP_LEAKY_RELU, a, negative_slope, 0.0f, inplace);
}

gk_tensor * gk_glu(gk_context * ctx, gk_tensor * a, gk_glu_op op, bool swapped) {
    builder bd(ctx, "glu");
    if (!parameterless_glu(bd, op)) {
        return nullptr;
    }
    return glu(ctx, a, nullptr, op, swapped, 0.0f, 0.0f);
}

gk_tensor * gk_glu_split(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_glu_op op) {
    builder bd(ctx, "glu");
    if (!bd.inputs(a, b) || !parameterless_glu(bd, op)) {
        return nullptr;
    }
    return glu(ctx, a, b, op, false, 0.0f, 0.0f);
}

gk_tensor * gk_reglu(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_REGLU, false); }
gk_tensor * gk_geglu(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_GEGLU, false); }
gk_tensor * gk_swiglu(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_SWIGLU, false); }
gk_tensor * gk_geglu_erf(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_GEGLU_ERF, false); }
gk_tensor * gk_geglu_quick(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_GEGLU_QUICK, false); }

gk_tensor * gk_reglu_split(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    return gk_glu_split(ctx, a, b, GK_GLU_OP_REGLU);
}
gk_tensor * gk_geglu_split(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    return gk_glu_split(ctx, a, b, GK_GLU_OP_GEGLU);
}
gk_tensor * gk_swiglu_split(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    return gk_glu_split(ctx, a, b, GK_GLU_OP_SWIGLU);
}
gk_tensor * gk_geglu_erf_split(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    return gk_glu_split(ctx, a, b, GK_GLU_OP_GEGLU_ERF);
}
gk_tensor * gk_geglu_quick_split(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    return gk_glu_split(ctx, a, b, GK_GLU_OP_GEGLU_QUICK);
}

gk_tensor * gk_swiglu_oai(gk_context * ctx, gk_tensor * a, gk_tensor * b, float alpha, float limit) {
    return glu(ctx, a, b, GK_GLU_OP_SWIGLU_OAI, false, alpha, limit);
}

gk_tensor * gk_scale(gk_context * ctx, gk_tensor * a, float s) { return affine(ctx, GK_OP_SCALE, a, s, 0.0f, false); }
gk_tensor * gk_scale_inplace(gk_context * ctx, gk_tensor * a, float s) {
    return affine(ctx, GK_OP_SCALE, a, s, 0.0f, true);
}
gk_tensor * gk_scale_bias(gk_context * ctx, gk_tensor * a, float s, float b) {
    return affine(ctx, GK_OP_SCALE, a, s, b, false);
}
gk_tensor * gk_clamp(gk_context * ctx, gk_tensor * a, float min, float max) {
    return affine(ctx, GK_OP_CLAMP, a, min, max, false);
}


gk_tensor * gk_reglu_swapped(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_REGLU, true); }
gk_tensor * gk_geglu_swapped(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_GEGLU, true); }
gk_tensor * gk_swiglu_swapped(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_SWIGLU, true); }
gk_tensor * gk_geglu_erf_swapped(gk_context * ctx, gk_tensor * a) { return gk_glu(ctx, a, GK_GLU_OP_GEGLU_ERF, true); }
gk_tensor * gk_geglu_quick_swapped(gk_context * ctx, gk_tensor * a) {
    return gk_glu(ctx, a, GK_GLU_OP_GEGLU_QUICK, true);
}

gk_tensor * gk_swiglu_clamp(gk_context * ctx, gk_tensor * a, gk_tensor * b, float limit) {
    return glu(ctx, a, b, GK_GLU_OP_SWIGLU_CLAMP, false, 0.0f, limit);
}

gk_tensor * gk_xielu(gk_context * ctx, gk_tensor * a, float alpha_n, float alpha_p, float beta, float eps) {
    builder bd(ctx, "xielu");
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    gk_tensor * r = like(bd, a, GK_OP_UNARY, false);
    if (r) {
        set_op_param_i32(r, 0, GK_UNARY_OP_XIELU);
        set_op_param_f32(r, 1, beta + softplus_param(alpha_n));
        set_op_param_f32(r, 2, softplus_param(alpha_p));
        set_op_param_f32(r, 3, beta);
        set_op_param_f32(r, 4, eps);
    }
    return r;
}

gk_tensor * gk_fill(gk_context * ctx, gk_tensor * a, float c) { return affine(ctx, GK_OP_FILL, a, c, 0.0f, false); }
gk_tensor * gk_fill_inplace(gk_context * ctx, gk_tensor * a, float c) {
    return affine(ctx, GK_OP_FILL, a, c, 0.0f, true);
}

gk_tensor * gk_add_id(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * ids) {
    builder bd(ctx, "add_id");
    if (!bd.inputs(a, b, ids) || !bd.float_type(a, "a") || !bd.float_type(b, "b") || !bd.type_is(ids, GK_TYPE_I32, "ids")) {
        return nullptr;
    }
    if (a->ne[0] != b->ne[0] || a->ne[1] != ids->ne[0] || a->ne[2] != ids->ne[1]) {
        bd.fail("a %s, b %s and ids %s do not match (a [n, n_used, T], b [n, n_expert], ids [n_used, T])",
                describe(a).c_str(), describe(b).c_str(), describe(ids).c_str());
        return nullptr;
    }
    return bd.result(a->type, a->ne, GK_OP_ADD_ID, a, b, ids);
}

gk_tensor * gk_add_cast(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_type type) {
    builder bd(ctx, "add_cast");
    if (!bd.inputs(a, b) || !bd.decodable(a, "a") || !bd.float_type(b, "b")) {
        return nullptr;
    }
    if (type < 0 || type >= GK_TYPE_COUNT || !has_encoder(type)) {
        bd.fail("result type %d has no row encoder", static_cast<int>(type));
        return nullptr;
    }
    if (b->ne[0] != a->ne[0] || !gk_can_repeat(b, a)) {
        bd.fail("the rows of b %s cannot be broadcast to a %s", describe(b).c_str(), describe(a).c_str());
        return nullptr;
    }
    return bd.result(type, a->ne, GK_OP_ADD, a, b);
}

} // extern "C"
