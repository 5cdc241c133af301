// inplace.cpp - ggml's *_inplace builders for the ops gk builds only out of place.
//
// ggml's in-place form returns a view of `a` that carries the op: at compute time the op
// reads a and writes its result into a's memory. gk's CPU kernels for the ops below read
// each source element (or, for row ops, each row) before writing the same position of the
// destination, so they compute correctly when the destination aliases the source. The
// builder therefore asks gk for the out-of-place node (without storage: the context's
// no_alloc is set for that call), checks that it has a's type and shape, and returns a
// view of a with that node's op, op parameters and sources. The unused out-of-place node
// costs one tensor struct in the context's arena (ggml_tensor_overhead() bytes), no data.
// The ops gk has its own in-place builders for (add, sub, mul, div, scale, unary,
// soft_max, diag_mask_inf, set, acc, add1) forward directly (forward.cpp).
#include "convert.h"

#include <cstring>

namespace {

// The in-place form of the node `build` makes from ctx: a view of a carrying its op.
// Aborts naming `name` when gk refuses the op or its result does not fit in a.
template <class Build> ggml_tensor * in_place(ggml_context * ctx, ggml_tensor * a, const char * name, Build && build) {
    gk_context * g        = compat::to_gk(ctx);
    const bool   no_alloc = gk_get_no_alloc(g);
    gk_set_no_alloc(g, true);
    gk_tensor * node = build(g);
    gk_set_no_alloc(g, no_alloc);
    compat::built(ctx, node, name);
    gk_tensor * source = compat::to_gk(a);
    if (node->type != source->type || std::memcmp(node->ne, source->ne, sizeof node->ne) != 0) {
        ggml_abort(__FILE__, __LINE__, "%s: the result's type or shape differs from a's, so it cannot be written into a",
                   name);
    }
    gk_tensor * view = compat::to_gk(compat::built(ctx, gk_view_tensor(g, source), name));
    view->op = node->op;
    std::memcpy(view->op_params, node->op_params, sizeof view->op_params);
    std::memcpy(view->src, node->src, sizeof view->src);
    return compat::to_ggml(view);
}

} // namespace

using compat::to_gk;

extern "C" {

// Elementwise functions of a.
#define GK_COMPAT_INPLACE_UNARY(op)                                                                    \
    struct ggml_tensor * ggml_##op##_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {      \
        return in_place(ctx, a, "ggml_" #op "_inplace", [&](gk_context * g) { return gk_##op(g, to_gk(a)); }); \
    }
GK_COMPAT_INPLACE_UNARY(dup)
GK_COMPAT_INPLACE_UNARY(sqr)
GK_COMPAT_INPLACE_UNARY(sqrt)
GK_COMPAT_INPLACE_UNARY(log)
GK_COMPAT_INPLACE_UNARY(expm1)
GK_COMPAT_INPLACE_UNARY(softplus)
GK_COMPAT_INPLACE_UNARY(sin)
GK_COMPAT_INPLACE_UNARY(cos)
GK_COMPAT_INPLACE_UNARY(abs)
GK_COMPAT_INPLACE_UNARY(sgn)
GK_COMPAT_INPLACE_UNARY(neg)
GK_COMPAT_INPLACE_UNARY(step)
GK_COMPAT_INPLACE_UNARY(tanh)
GK_COMPAT_INPLACE_UNARY(elu)
GK_COMPAT_INPLACE_UNARY(relu)
GK_COMPAT_INPLACE_UNARY(sigmoid)
GK_COMPAT_INPLACE_UNARY(gelu)
GK_COMPAT_INPLACE_UNARY(gelu_erf)
GK_COMPAT_INPLACE_UNARY(gelu_quick)
GK_COMPAT_INPLACE_UNARY(silu)
GK_COMPAT_INPLACE_UNARY(exp)
GK_COMPAT_INPLACE_UNARY(floor)
GK_COMPAT_INPLACE_UNARY(ceil)
GK_COMPAT_INPLACE_UNARY(round)
GK_COMPAT_INPLACE_UNARY(trunc)
#undef GK_COMPAT_INPLACE_UNARY

// Row normalisations.
#define GK_COMPAT_INPLACE_NORM(op)                                                                             \
    struct ggml_tensor * ggml_##op##_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) { \
        return in_place(ctx, a, "ggml_" #op "_inplace", [&](gk_context * g) { return gk_##op(g, to_gk(a), eps); }); \
    }
GK_COMPAT_INPLACE_NORM(norm)
GK_COMPAT_INPLACE_NORM(rms_norm)
GK_COMPAT_INPLACE_NORM(l2_norm)
#undef GK_COMPAT_INPLACE_NORM

struct ggml_tensor * ggml_group_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps) {
    return in_place(ctx, a, "ggml_group_norm_inplace", [&](gk_context * g) { return gk_group_norm(g, to_gk(a), n_groups, eps); });
}

struct ggml_tensor * ggml_scale_bias_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b) {
    return in_place(ctx, a, "ggml_scale_bias_inplace", [&](gk_context * g) { return gk_scale_bias(g, to_gk(a), s, b); });
}

struct ggml_tensor * ggml_clamp_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max) {
    return in_place(ctx, a, "ggml_clamp_inplace", [&](gk_context * g) { return gk_clamp(g, to_gk(a), min, max); });
}

struct ggml_tensor * ggml_diag_mask_zero_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return in_place(ctx, a, "ggml_diag_mask_zero_inplace", [&](gk_context * g) { return gk_diag_mask_zero(g, to_gk(a), n_past); });
}

struct ggml_tensor * ggml_soft_max_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                               float scale, float max_bias) {
    return in_place(ctx, a, "ggml_soft_max_ext_inplace",
                    [&](gk_context * g) { return gk_soft_max_ext(g, to_gk(a), to_gk(mask), scale, max_bias); });
}

struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims,
                                       int mode) {
    return in_place(ctx, a, "ggml_rope_inplace", [&](gk_context * g) { return gk_rope(g, to_gk(a), to_gk(b), n_dims, mode); });
}

struct ggml_tensor * ggml_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                           struct ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                                           float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                           float beta_slow) {
    return in_place(ctx, a, "ggml_rope_ext_inplace", [&](gk_context * g) {
        return gk_rope_ext(g, to_gk(a), to_gk(b), to_gk(c), n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                           attn_factor, beta_fast, beta_slow);
    });
}

struct ggml_tensor * ggml_rope_multi_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                             struct ggml_tensor * c, int n_dims, int sections[GGML_MROPE_SECTIONS],
                                             int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                             float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return in_place(ctx, a, "ggml_rope_multi_inplace", [&](gk_context * g) {
        return gk_rope_multi(g, to_gk(a), to_gk(b), to_gk(c), n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                             ext_factor, attn_factor, beta_fast, beta_slow);
    });
}

} // extern "C"
