// ops_reduce.cpp - builders of the reductions and orderings: sum, sum_rows, mean,
// argmax, count_equal, cumsum, argsort, top_k.
#include "internal.h"

#include <climits>

using gk::builder;

namespace gk {
namespace {

gk_tensor * reduce(gk_context * ctx, gk_op op, gk_tensor * a, gk_type type, const int64_t ne[4]) {
    builder bd(ctx, gk_op_symbol(op));
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    return bd.result(type, ne, op, a);
}

} // namespace
} // namespace gk

extern "C" {

gk_tensor * gk_sum(gk_context * ctx, gk_tensor * a) {
    const int64_t ne[4] = {1, 1, 1, 1};
    return gk::reduce(ctx, GK_OP_SUM, a, GK_TYPE_F32, ne);
}

gk_tensor * gk_sum_rows(gk_context * ctx, gk_tensor * a) {
    if (!a) {
        builder(ctx, "sum_rows").inputs(a);
        return nullptr;
    }
    const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
    return gk::reduce(ctx, GK_OP_SUM_ROWS, a, a->type, ne);
}

gk_tensor * gk_mean(gk_context * ctx, gk_tensor * a) {
    if (!a) {
        builder(ctx, "mean").inputs(a);
        return nullptr;
    }
    const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
    return gk::reduce(ctx, GK_OP_MEAN, a, GK_TYPE_F32, ne);
}

gk_tensor * gk_argmax(gk_context * ctx, gk_tensor * a) {
    builder bd(ctx, "argmax");
    if (!bd.inputs(a) || !bd.dims_at_most(a, 2, "a")) {
        return nullptr;
    }
    if (a->ne[0] < 1) {
        bd.fail("rows of a %s are empty", gk::describe(a).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[1], 1, 1, 1};
    return gk::reduce(ctx, GK_OP_ARGMAX, a, GK_TYPE_I32, ne);
}

gk_tensor * gk_count_equal(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    builder bd(ctx, "count_equal");
    if (!bd.inputs(a, b) || !bd.type_is(a, GK_TYPE_I32, "a") || !bd.type_is(b, GK_TYPE_I32, "b") ||
        !bd.same_shape(a, b)) {
        return nullptr;
    }
    const int64_t ne[4] = {1, 1, 1, 1};
    return bd.result(GK_TYPE_I64, ne, GK_OP_COUNT_EQUAL, a, b);
}

gk_tensor * gk_cumsum(gk_context * ctx, gk_tensor * a) {
    if (!a) {
        builder(ctx, "cumsum").inputs(a);
        return nullptr;
    }
    return gk::reduce(ctx, GK_OP_CUMSUM, a, a->type, a->ne);
}

gk_tensor * gk_argsort(gk_context * ctx, gk_tensor * a, gk_sort_order order) {
    builder bd(ctx, "argsort");
    if (!bd.inputs(a)) {
        return nullptr;
    }
    if (order != GK_SORT_ORDER_ASC && order != GK_SORT_ORDER_DESC) {
        bd.fail("order %d is neither ascending (0) nor descending (1)", static_cast<int>(order));
        return nullptr;
    }
    if (a->ne[0] > INT32_MAX) {
        bd.fail("rows of %lld elements do not fit i32 indices", static_cast<long long>(a->ne[0]));
        return nullptr;
    }
    gk_tensor * r = gk::reduce(ctx, GK_OP_ARGSORT, a, GK_TYPE_I32, a->ne);
    if (r) {
        gk::set_op_param_i32(r, 0, order);
    }
    return r;
}

gk_tensor * gk_top_k(gk_context * ctx, gk_tensor * a, int k) {
    builder bd(ctx, "top_k");
    if (!bd.inputs(a)) {
        return nullptr;
    }
    if (k < 1 || k > a->ne[0]) {
        bd.fail("k = %d must be in 1..ne0 = %lld", k, static_cast<long long>(a->ne[0]));
        return nullptr;
    }
    const int64_t ne[4] = {k, a->ne[1], a->ne[2], a->ne[3]};
    return gk::reduce(ctx, GK_OP_TOP_K, a, GK_TYPE_I32, ne);
}


} // extern "C"
