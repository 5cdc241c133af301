// ops_matrix.cpp - builders of the ops on the [ne0, ne1] matrices of a tensor: tri (keep one
// triangle), diag (a row as a diagonal matrix) and solve_tri (forward substitution).
// Checks, shapes and op_params are ggml's (ggml.c: ggml_tri, ggml_diag, ggml_solve_tri).
#include "internal.h"

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_tri(gk_context * ctx, gk_tensor * a, gk_tri_type type) {
    builder bd(ctx, "tri");
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    if (a->ne[0] != a->ne[1]) {
        bd.fail("a %s must hold square matrices (ne0 == ne1)", describe(a).c_str());
        return nullptr;
    }
    if (type < GK_TRI_TYPE_UPPER_DIAG || type > GK_TRI_TYPE_LOWER) {
        bd.fail("unknown triangle type %d", static_cast<int>(type));
        return nullptr;
    }
    gk_tensor * r = bd.result(a->type, a->ne, GK_OP_TRI, a);
    if (r) {
        gk::set_op_param_i32(r, 0, type);
    }
    return r;
}

gk_tensor * gk_diag(gk_context * ctx, gk_tensor * a) {
    builder bd(ctx, "diag");
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    if (a->ne[1] != 1) {
        bd.fail("a %s must be one row per matrix (ne1 == 1)", describe(a).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0], a->ne[0], a->ne[2], a->ne[3]};
    return bd.result(a->type, ne, GK_OP_DIAG, a);
}

gk_tensor * gk_solve_tri(gk_context * ctx, gk_tensor * a, gk_tensor * b, bool left, bool lower, bool uni) {
    builder bd(ctx, "solve_tri");
    if (!bd.inputs(a, b) || !bd.type_is(a, GK_TYPE_F32, "a") || !bd.type_is(b, GK_TYPE_F32, "b") ||
        !bd.contiguous(a, "a") || !bd.contiguous(b, "b")) {
        return nullptr;
    }
    if (!left || !lower || uni) {
        bd.fail("only left, lower, non-unit-diagonal systems are solved (left %d, lower %d, uni %d)", left, lower, uni);
        return nullptr;
    }
    if (a->ne[0] != a->ne[1] || a->ne[1] != b->ne[1] || a->ne[2] != b->ne[2] || a->ne[3] != b->ne[3]) {
        bd.fail("a %s must be [n, n, C, D] and b %s [k, n, C, D]", describe(a).c_str(), describe(b).c_str());
        return nullptr;
    }
    return bd.result(GK_TYPE_F32, b->ne, GK_OP_SOLVE_TRI, a, b);
}

} // extern "C"
