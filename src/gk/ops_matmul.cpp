// ops_matmul.cpp - builders of the matrix products: mul_mat, mul_mat_id, out_prod.
#include "internal.h"

namespace {

/// A weight of dense rows, each a whole number of blocks of its type. Whether a
/// backend has a product for that type is its supports_op's question, not the builder's.
bool dot_ok(gk::builder & bd, const gk_tensor * w, const char * what) {
    if (!bd.dense_rows(w, what)) {
        return false;
    }
    return gk_row_len_ok(w->type, w->ne[0]) ||
           bd.fail("%s %s: rows of %lld elements are not whole blocks of %s", what, gk::describe(w).c_str(),
                   static_cast<long long>(w->ne[0]), gk_type_name(w->type));
}

} // namespace

extern "C" {

gk_tensor * gk_mul_mat(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    gk::builder bd(ctx, "mul_mat");
    if (!bd.inputs(a, b) || !dot_ok(bd, a, "a") || !bd.float_type(b, "b")) {
        return nullptr;
    }
    if (a->ne[0] != b->ne[0] || a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0) {
        bd.fail("a %s and b %s: need equal ne[0] and b's ne[2], ne[3] multiples of a's",
                gk::describe(a).c_str(), gk::describe(b).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    return bd.result(GK_TYPE_F32, ne, GK_OP_MUL_MAT, a, b);
}

gk_tensor * gk_mul_mat_id(gk_context * ctx, gk_tensor * as, gk_tensor * b, gk_tensor * ids) {
    gk::builder bd(ctx, "mul_mat_id");
    if (!bd.inputs(as, b, ids) || !dot_ok(bd, as, "as") || !bd.float_type(b, "b") ||
        !bd.type_is(ids, GK_TYPE_I32, "ids") || !bd.dims_at_most(as, 3, "as") || !bd.dims_at_most(b, 3, "b") ||
        !bd.dims_at_most(ids, 2, "ids")) {
        return nullptr;
    }
    if (as->ne[0] != b->ne[0] || ids->ne[1] != b->ne[2] || b->ne[1] == 0 || ids->ne[0] % b->ne[1] != 0) {
        bd.fail("as %s, b %s, ids %s: need as.ne0 == b.ne0, ids.ne1 == b.ne2, ids.ne0 a multiple of b.ne1",
                gk::describe(as).c_str(), gk::describe(b).c_str(), gk::describe(ids).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {as->ne[1], ids->ne[0], b->ne[2], 1};
    return bd.result(GK_TYPE_F32, ne, GK_OP_MUL_MAT_ID, as, b, ids);
}

gk_tensor * gk_out_prod(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    gk::builder bd(ctx, "out_prod");
    if (!bd.inputs(a, b) || !bd.decodable(a, "a") || !bd.float_type(b, "b")) {
        return nullptr;
    }
    if (a->ne[1] != b->ne[1] || a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0) {
        bd.fail("a %s and b %s: need equal ne[1] and b's ne[2], ne[3] multiples of a's", gk::describe(a).c_str(),
                gk::describe(b).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[2], b->ne[3]};
    return bd.result(GK_TYPE_F32, ne, GK_OP_OUT_PROD, a, b);
}

} // extern "C"
