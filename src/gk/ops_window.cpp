// ops_window.cpp - builders of the windowed-attention ops of SAM's image encoder:
// win_part / win_unpart (cut a [C, W, H] grid into w x w windows and back), get_rel_pos
// (relative-position embeddings per query, key pair) and add_rel_pos (add the decomposed
// height and width terms to attention scores). Shapes and op_params are ggml's.
#include "internal.h"

#include <climits>

namespace gk {
namespace {

int64_t windows_along(int64_t n, int w) { return (n + w - 1) / w; }

gk_tensor * add_rel_pos(gk_context * ctx, gk_tensor * a, gk_tensor * pw, gk_tensor * ph, bool inplace) {
    builder bd(ctx, "add_rel_pos");
    if (!bd.inputs(a, pw, ph) || !bd.type_is(a, GK_TYPE_F32, "a") || !bd.type_is(pw, GK_TYPE_F32, "pw") ||
        !bd.type_is(ph, GK_TYPE_F32, "ph") || !bd.contiguous(a, "a") || !bd.contiguous(pw, "pw") ||
        !bd.contiguous(ph, "ph") || !bd.same_shape(pw, ph) || !bd.dims_at_most(a, 3, "a")) {
        return nullptr;
    }
    if (pw->ne[0] * pw->ne[0] != a->ne[0] || pw->ne[1] * pw->ne[2] != a->ne[1] || pw->ne[3] != a->ne[2]) {
        bd.fail("pw and ph %s must be [k, qw, qh, n] for a %s = [k*k, qw*qh, n]", describe(pw).c_str(),
                describe(a).c_str());
        return nullptr;
    }
    gk_tensor * r = inplace ? bd.alias(a, GK_OP_ADD_REL_POS, a, pw, ph)
                            : bd.result(a->type, a->ne, GK_OP_ADD_REL_POS, a, pw, ph);
    if (r) {
        set_op_param_i32(r, 0, inplace ? 1 : 0);
    }
    return r;
}

} // namespace
} // namespace gk

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_win_part(gk_context * ctx, gk_tensor * a, int w) {
    builder bd(ctx, "win_part");
    if (!bd.inputs(a) || !bd.plain_type(a, "a") || !bd.dims_at_most(a, 3, "a")) {
        return nullptr;
    }
    if (w < 1) {
        bd.fail("window size w = %d must be >= 1", w);
        return nullptr;
    }
    const int64_t npx = gk::windows_along(a->ne[1], w), npy = gk::windows_along(a->ne[2], w);
    if (npx > INT32_MAX || npy > INT32_MAX) {
        bd.fail("a %s cut into windows of %d gives window counts beyond int32", describe(a).c_str(), w);
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0], w, w, npx * npy};
    gk_tensor *   r     = bd.result(a->type, ne, GK_OP_WIN_PART, a);
    if (r) {
        gk::set_op_param_i32(r, 0, static_cast<int32_t>(npx));
        gk::set_op_param_i32(r, 1, static_cast<int32_t>(npy));
        gk::set_op_param_i32(r, 2, w);
    }
    return r;
}

gk_tensor * gk_win_unpart(gk_context * ctx, gk_tensor * a, int w0, int h0, int w) {
    builder bd(ctx, "win_unpart");
    if (!bd.inputs(a) || !bd.plain_type(a, "a")) {
        return nullptr;
    }
    if (w < 1 || w0 < 0 || h0 < 0) {
        bd.fail("window size w = %d must be >= 1 and the grid %d x %d not negative", w, w0, h0);
        return nullptr;
    }
    if (a->ne[1] != w || a->ne[2] != w || a->ne[3] < gk::windows_along(w0, w) * gk::windows_along(h0, w)) {
        bd.fail("a %s must hold [C, w, w, >= %lld] windows of w = %d for a %d x %d grid", describe(a).c_str(),
                static_cast<long long>(gk::windows_along(w0, w) * gk::windows_along(h0, w)), w, w0, h0);
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0], w0, h0, 1};
    gk_tensor *   r     = bd.result(a->type, ne, GK_OP_WIN_UNPART, a);
    if (r) {
        gk::set_op_param_i32(r, 0, w);
    }
    return r;
}

gk_tensor * gk_get_rel_pos(gk_context * ctx, gk_tensor * a, int qh, int kh) {
    builder bd(ctx, "get_rel_pos");
    if (!bd.inputs(a) || !bd.plain_type(a, "a") || !bd.dims_at_most(a, 2, "a")) {
        return nullptr;
    }
    if (qh != kh || qh < 1 || a->ne[1] != 2 * static_cast<int64_t>(qh) - 1) {
        bd.fail("qh = %d and kh = %d must be equal and >= 1, with a %s = [C, 2 qh - 1]", qh, kh, describe(a).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0], kh, qh, 1};
    return bd.result(a->type, ne, GK_OP_GET_REL_POS, a);
}

gk_tensor * gk_add_rel_pos(gk_context * ctx, gk_tensor * a, gk_tensor * pw, gk_tensor * ph) {
    return gk::add_rel_pos(ctx, a, pw, ph, false);
}

gk_tensor * gk_add_rel_pos_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * pw, gk_tensor * ph) {
    return gk::add_rel_pos(ctx, a, pw, ph, true);
}

} // extern "C"
