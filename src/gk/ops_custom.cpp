// ops_custom.cpp - builders of the custom-op hooks (ggml's map_custom1/2/3, custom_4d,
// custom_inplace): a node whose CPU kernel is a caller's callback. op_params hold
// ggml's struct: the callback, i32 n_tasks, the userdata pointer (custom_op.h).
// A missing source of custom_4d is a build error; its result's type and shape are checked
// by the tensor constructor.
#include "custom_op.h"
#include "internal.h"

#include <cstring>

namespace gk {
namespace {

template <class Fun>
bool hook_ok(builder & bd, Fun fun, int n_tasks) {
    if (!fun) {
        return bd.fail("the callback is NULL");
    }
    return n_tasks == GK_N_TASKS_MAX || n_tasks > 0 ||
           bd.fail("n_tasks = %d must be > 0 or GK_N_TASKS_MAX (-1)", n_tasks);
}

template <class Fun>
gk_tensor * with_hook(gk_tensor * r, Fun fun, int n_tasks, void * userdata) {
    if (r) {
        const custom_op_params<Fun> params{fun, n_tasks, userdata};
        std::memcpy(r->op_params, &params, sizeof(params));
    }
    return r;
}

/// map_custom1/2/3: a node of a's type and shape (or a view of a) with sources a, b, c.
template <class Fun>
gk_tensor * map_custom(gk_context * ctx, gk_op op, gk_tensor * a, gk_tensor * b, gk_tensor * c, int n_srcs, Fun fun,
                       int n_tasks, void * userdata, bool inplace) {
    builder    bd(ctx, gk_op_symbol(op));
    const bool have = n_srcs == 1 ? bd.inputs(a) : n_srcs == 2 ? bd.inputs(a, b) : bd.inputs(a, b, c);
    if (!have || !hook_ok(bd, fun, n_tasks)) {
        return nullptr;
    }
    gk_tensor * r = inplace ? bd.alias(a, op, a, b, c) : bd.result(a->type, a->ne, op, a, b, c);
    return with_hook(r, fun, n_tasks, userdata);
}

/// The n_args sources of custom_4d / custom_inplace: at most `max` of them, none NULL.
bool args_ok(builder & bd, gk_tensor ** args, int n_args, int max) {
    if (n_args < 0 || n_args > max || (n_args > 0 && !args)) {
        return bd.fail("n_args = %d must be in [0, %d], with args not NULL when > 0", n_args, max);
    }
    for (int i = 0; i < n_args; ++i) {
        if (!args[i]) {
            return bd.fail("args[%d] is NULL", i);
        }
    }
    return true;
}

} // namespace
} // namespace gk

using gk::builder;

extern "C" {

gk_tensor * gk_map_custom1(gk_context * ctx, gk_tensor * a, gk_custom1_op_t fun, int n_tasks, void * userdata) {
    return gk::map_custom(ctx, GK_OP_MAP_CUSTOM1, a, nullptr, nullptr, 1, fun, n_tasks, userdata, false);
}

gk_tensor * gk_map_custom1_inplace(gk_context * ctx, gk_tensor * a, gk_custom1_op_t fun, int n_tasks, void * userdata) {
    return gk::map_custom(ctx, GK_OP_MAP_CUSTOM1, a, nullptr, nullptr, 1, fun, n_tasks, userdata, true);
}

gk_tensor * gk_map_custom2(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_custom2_op_t fun, int n_tasks,
                           void * userdata) {
    return gk::map_custom(ctx, GK_OP_MAP_CUSTOM2, a, b, nullptr, 2, fun, n_tasks, userdata, false);
}

gk_tensor * gk_map_custom2_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_custom2_op_t fun, int n_tasks,
                                   void * userdata) {
    return gk::map_custom(ctx, GK_OP_MAP_CUSTOM2, a, b, nullptr, 2, fun, n_tasks, userdata, true);
}

gk_tensor * gk_map_custom3(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c, gk_custom3_op_t fun,
                           int n_tasks, void * userdata) {
    return gk::map_custom(ctx, GK_OP_MAP_CUSTOM3, a, b, c, 3, fun, n_tasks, userdata, false);
}

gk_tensor * gk_map_custom3_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c, gk_custom3_op_t fun,
                                   int n_tasks, void * userdata) {
    return gk::map_custom(ctx, GK_OP_MAP_CUSTOM3, a, b, c, 3, fun, n_tasks, userdata, true);
}

gk_tensor * gk_custom_4d(gk_context * ctx, gk_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                         gk_tensor ** args, int n_args, gk_custom_op_t fun, int n_tasks, void * userdata) {
    if (!ctx) {
        return nullptr;
    }
    builder bd(ctx, "custom");
    if (!gk::args_ok(bd, args, n_args, GK_MAX_SRC - 1) || !gk::hook_ok(bd, fun, n_tasks)) {
        return nullptr;
    }
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    gk_tensor *   r     = bd.result(type, ne, GK_OP_CUSTOM);
    for (int i = 0; r && i < n_args; ++i) {
        r->src[i] = args[i];
    }
    return gk::with_hook(r, fun, n_tasks, userdata);
}

gk_tensor * gk_custom_inplace(gk_context * ctx, gk_tensor * a, gk_tensor ** args, int n_args, gk_custom_op_t fun,
                              int n_tasks, void * userdata) {
    builder bd(ctx, "custom");
    if (!bd.inputs(a) || !gk::args_ok(bd, args, n_args, GK_MAX_SRC - 2) || !gk::hook_ok(bd, fun, n_tasks)) {
        return nullptr;
    }
    gk_tensor * r = bd.alias(a, GK_OP_CUSTOM, a);
    for (int i = 0; r && i < n_args; ++i) {
        r->src[i + 1] = args[i];
    }
    return gk::with_hook(r, fun, n_tasks, userdata);
}

} // extern "C"
