// composed.cpp - ggml entry points that ggml itself builds from other ops, built here the
// same way from gk's: the node ggml would produce (op, sources, shape, strides), so a graph
// holding one computes the same bits.
#include "convert.h"

using compat::to_gk;

extern "C" {

// A REPEAT node of shape [ne0, ne1, ne2, ne3]. gk's repeat takes its shape from a second
// tensor; that one is made without storage (it costs a tensor struct in ctx) and is not a
// source of the node, as in ggml.
struct ggml_tensor * ggml_repeat_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                    int64_t ne3) {
    gk_context * g        = to_gk(ctx);
    const bool   no_alloc = gk_get_no_alloc(g);
    gk_set_no_alloc(g, true);
    gk_tensor * shape = gk_new_tensor_4d(g, to_gk(a) ? to_gk(a)->type : GK_TYPE_F32, ne0, ne1, ne2, ne3);
    gk_set_no_alloc(g, no_alloc);
    compat::built(ctx, shape, "ggml_repeat_4d");
    return compat::built(ctx, gk_repeat(g, to_gk(a), shape), "ggml_repeat_4d");
}

// The first k columns of the descending argsort: a view of the I32 index rows.
struct ggml_tensor * ggml_argsort_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    if (!a || k < 0 || a->ne[0] < k) {
        ggml_abort(__FILE__, __LINE__, "ggml_argsort_top_k: k = %d is outside [0, %lld]", k,
                   a ? static_cast<long long>(a->ne[0]) : 0LL);
    }
    ggml_tensor * order = ggml_argsort(ctx, a, GGML_SORT_ORDER_DESC);
    return ggml_view_4d(ctx, order, k, order->ne[1], order->ne[2], order->ne[3], order->nb[1], order->nb[2], order->nb[3], 0);
}

struct ggml_tensor * ggml_cont_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) {
    return ggml_cont_4d(ctx, a, ne0, 1, 1, 1);
}

} // extern "C"
