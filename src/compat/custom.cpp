// custom.cpp - ggml's custom-op hooks (map_custom1/2/3, custom_4d, custom_inplace) on gk's.
//
// A ggml callback takes ggml_tensor pointers, a gk callback gk_tensor pointers: the
// structs are layout-identical but the function types differ, so a ggml callback is not
// called through a gk function pointer. Each node gets a gk trampoline as its callback
// instead; the ggml callback is kept in the node's op_params right after gk's
// {callback, n_tasks, userdata} (bytes gk leaves unused), where the trampoline finds it.
// A node's op_params thus hold the trampoline, not the ggml callback, at the offset where
// ggml keeps its callback.
#include "gk/custom_op.h"
#include "convert.h"

#include <cstring>

using compat::to_gk;

namespace {

/// Where the ggml callback lives in a node's op_params.
template <class GgmlFun>
constexpr size_t ggml_fun_offset = sizeof(gk::custom_op_params<GgmlFun>);

static_assert(ggml_fun_offset<ggml_custom_op_t> + sizeof(ggml_custom_op_t) <= GGML_MAX_OP_PARAMS);

template <class GgmlFun>
GgmlFun ggml_fun(const gk_tensor * node) {
    GgmlFun f;
    std::memcpy(&f, reinterpret_cast<const char *>(node->op_params) + ggml_fun_offset<GgmlFun>, sizeof(f));
    return f;
}

const ggml_tensor * to_ggml(const gk_tensor * t) { return reinterpret_cast<const ggml_tensor *>(t); }

void call1(gk_tensor * dst, const gk_tensor * a, int ith, int nth, void * userdata) {
    ggml_fun<ggml_custom1_op_t>(dst)(compat::to_ggml(dst), to_ggml(a), ith, nth, userdata);
}

void call2(gk_tensor * dst, const gk_tensor * a, const gk_tensor * b, int ith, int nth, void * userdata) {
    ggml_fun<ggml_custom2_op_t>(dst)(compat::to_ggml(dst), to_ggml(a), to_ggml(b), ith, nth, userdata);
}

void call3(gk_tensor * dst, const gk_tensor * a, const gk_tensor * b, const gk_tensor * c, int ith, int nth,
           void * userdata) {
    ggml_fun<ggml_custom3_op_t>(dst)(compat::to_ggml(dst), to_ggml(a), to_ggml(b), to_ggml(c), ith, nth, userdata);
}

void call(gk_tensor * dst, int ith, int nth, void * userdata) {
    ggml_fun<ggml_custom_op_t>(dst)(compat::to_ggml(dst), ith, nth, userdata);
}

/// The node gk built with the trampoline (or an abort naming `name`), with fun stored
/// where the trampoline reads it. A NULL fun is refused by gk (the trampoline is passed
/// only when there is a callback to call).
template <class GgmlFun>
ggml_tensor * hooked(ggml_context * ctx, gk_tensor * node, GgmlFun fun, const char * name) {
    ggml_tensor * r = compat::built(ctx, node, name);
    std::memcpy(reinterpret_cast<char *>(r->op_params) + ggml_fun_offset<GgmlFun>, &fun, sizeof(fun));
    return r;
}

/// args as gk tensors (n_args is checked by gk; a count beyond GGML_MAX_SRC is passed on
/// unconverted for gk to refuse).
struct gk_args {
    gk_tensor *  t[GGML_MAX_SRC] = {};
    gk_tensor ** ptr             = nullptr;
    gk_args(ggml_tensor ** args, int n_args) {
        if (!args || n_args < 0 || n_args > GGML_MAX_SRC) {
            ptr = reinterpret_cast<gk_tensor **>(args);
            return;
        }
        for (int i = 0; i < n_args; ++i) {
            t[i] = to_gk(args[i]);
        }
        ptr = t;
    }
};

} // namespace

extern "C" {

struct ggml_tensor * ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                      int n_tasks, void * userdata) {
    return hooked(ctx, gk_map_custom1(to_gk(ctx), to_gk(a), fun ? call1 : nullptr, n_tasks, userdata), fun,
                  "ggml_map_custom1");
}

struct ggml_tensor * ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                              int n_tasks, void * userdata) {
    return hooked(ctx, gk_map_custom1_inplace(to_gk(ctx), to_gk(a), fun ? call1 : nullptr, n_tasks, userdata), fun,
                  "ggml_map_custom1_inplace");
}

struct ggml_tensor * ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return hooked(ctx, gk_map_custom2(to_gk(ctx), to_gk(a), to_gk(b), fun ? call2 : nullptr, n_tasks, userdata), fun,
                  "ggml_map_custom2");
}

struct ggml_tensor * ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return hooked(ctx, gk_map_custom2_inplace(to_gk(ctx), to_gk(a), to_gk(b), fun ? call2 : nullptr, n_tasks, userdata),
                  fun, "ggml_map_custom2_inplace");
}

struct ggml_tensor * ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    return hooked(ctx,
                  gk_map_custom3(to_gk(ctx), to_gk(a), to_gk(b), to_gk(c), fun ? call3 : nullptr, n_tasks, userdata),
                  fun, "ggml_map_custom3");
}

struct ggml_tensor * ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks,
                                              void * userdata) {
    return hooked(
        ctx, gk_map_custom3_inplace(to_gk(ctx), to_gk(a), to_gk(b), to_gk(c), fun ? call3 : nullptr, n_tasks, userdata),
        fun, "ggml_map_custom3_inplace");
}

struct ggml_tensor * ggml_custom_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                    int64_t ne2, int64_t ne3, struct ggml_tensor ** args, int n_args,
                                    ggml_custom_op_t fun, int n_tasks, void * userdata) {
    gk_args ga(args, n_args);
    return hooked(ctx,
                  gk_custom_4d(to_gk(ctx), to_gk(type), ne0, ne1, ne2, ne3, ga.ptr, n_args, fun ? call : nullptr,
                               n_tasks, userdata),
                  fun, "ggml_custom_4d");
}

struct ggml_tensor * ggml_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor ** args,
                                         int n_args, ggml_custom_op_t fun, int n_tasks, void * userdata) {
    gk_args ga(args, n_args);
    return hooked(ctx, gk_custom_inplace(to_gk(ctx), to_gk(a), ga.ptr, n_args, fun ? call : nullptr, n_tasks, userdata),
                  fun, "ggml_custom_inplace");
}

} // extern "C"
