// ops_ssm.cpp - builders of the state-space-model ops of Mamba and Mamba-2: ssm_conv (the
// causal depthwise convolution) and ssm_scan (the selective scan). Shapes, sources and
// op_params are ggml's (ggml.c, ggml_ssm_conv / ggml_ssm_scan).
#include "internal.h"

#include <climits>

namespace gk {
namespace {

/// F32 with dense rows that follow each other (nb[1] == ne[0] * 4): ssm_scan's x, B, C.
bool dense_f32_matrix_rows(builder & bd, const gk_tensor * t, const char * what) {
    if (!bd.type_is(t, GK_TYPE_F32, what) || !bd.dense_rows(t, what)) {
        return false;
    }
    return t->nb[1] == static_cast<size_t>(t->ne[0]) * sizeof(float) ||
           bd.fail("%s %s must have adjacent rows (nb[1] == ne[0] * 4)", what, describe(t).c_str());
}

bool contiguous_f32(builder & bd, const gk_tensor * t, const char * what) {
    return bd.type_is(t, GK_TYPE_F32, what) && bd.contiguous(t, what);
}

} // namespace
} // namespace gk

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_ssm_conv(gk_context * ctx, gk_tensor * sx, gk_tensor * c) {
    builder bd(ctx, "ssm_conv");
    if (!bd.inputs(sx, c) || !bd.type_is(sx, GK_TYPE_F32, "sx") || !bd.type_is(c, GK_TYPE_F32, "c") ||
        !bd.dense_rows(sx, "sx") || !bd.dense_rows(c, "c") || !bd.dims_at_most(sx, 3, "sx") ||
        !bd.dims_at_most(c, 2, "c")) {
        return nullptr;
    }
    const int64_t d_conv  = c->ne[0];
    const int64_t d_inner = c->ne[1];
    if (d_conv < 1 || sx->ne[1] != d_inner || sx->ne[0] < d_conv - 1) {
        bd.fail("sx %s must be [d_conv - 1 + n_t, d_inner, n_s] for c %s = [d_conv >= 1, d_inner]",
                describe(sx).c_str(), describe(c).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {d_inner, sx->ne[0] - d_conv + 1, sx->ne[2], 1};
    return bd.result(GK_TYPE_F32, ne, GK_OP_SSM_CONV, sx, c);
}

gk_tensor * gk_ssm_scan(gk_context * ctx, gk_tensor * s, gk_tensor * x, gk_tensor * dt, gk_tensor * A, gk_tensor * B,
                        gk_tensor * C, gk_tensor * ids, int64_t K) {
    builder bd(ctx, "ssm_scan");
    if (!bd.inputs(s, x, dt, A, B, C, ids) || !gk::contiguous_f32(bd, s, "s") || !gk::contiguous_f32(bd, dt, "dt") ||
        !gk::contiguous_f32(bd, A, "A") || !gk::dense_f32_matrix_rows(bd, x, "x") ||
        !gk::dense_f32_matrix_rows(bd, B, "B") || !gk::dense_f32_matrix_rows(bd, C, "C") ||
        !bd.type_is(ids, GK_TYPE_I32, "ids") || !bd.same_shape(B, C) || !bd.dims_at_most(dt, 3, "dt") ||
        !bd.dims_at_most(A, 2, "A") || !bd.dims_at_most(ids, 1, "ids")) {
        return nullptr;
    }
    const int64_t d_state = s->ne[0], head_dim = x->ne[0], n_head = x->ne[1], n_tokens = x->ne[2], n_seqs = x->ne[3];
    if (K < 1 || K > INT32_MAX) {
        bd.fail("K = %lld snapshot slots must be in [1, INT32_MAX]", static_cast<long long>(K));
        return nullptr;
    }
    if (s->ne[1] != head_dim || s->ne[2] != n_head || dt->ne[0] != n_head || dt->ne[1] != n_tokens ||
        dt->ne[2] != n_seqs || ids->ne[0] != n_seqs) {
        bd.fail(
            "s %s, x %s, dt %s, ids %s: need s [d_state, head_dim, n_head, *], x [head_dim, n_head, n_tokens, "
            "n_seqs], dt [n_head, n_tokens, n_seqs], ids [n_seqs]",
            describe(s).c_str(), describe(x).c_str(), describe(dt).c_str(), describe(ids).c_str());
        return nullptr;
    }
    if (B->ne[0] != d_state || B->ne[1] < 1 || n_head % B->ne[1] != 0 || B->ne[2] != n_tokens || B->ne[3] != n_seqs) {
        bd.fail("B and C %s must be [d_state, n_group, n_tokens, n_seqs] with n_head %lld a multiple of n_group",
                describe(B).c_str(), static_cast<long long>(n_head));
        return nullptr;
    }
    if (A->ne[1] != n_head || (A->ne[0] != 1 && A->ne[0] != d_state) || (A->ne[0] != 1 && K != 1)) {
        bd.fail("A %s must be [1, n_head] (Mamba-2) or [d_state, n_head] (Mamba-1, with K = 1; K = %lld)",
                describe(A).c_str(), static_cast<long long>(K));
        return nullptr;
    }
    const int64_t states[4] = {d_state, head_dim, n_head, n_seqs};
    int64_t       ne[4]     = {0, 1, 1, 1};
    if (!gk::checked_nelements(states, &ne[0]) || __builtin_mul_overflow(ne[0], K, &ne[0]) ||
        __builtin_add_overflow(ne[0], gk_nelements(x), &ne[0])) {
        bd.fail("K = %lld snapshots of the state overflow the result size", static_cast<long long>(K));
        return nullptr;
    }
    gk_tensor * r = bd.result(GK_TYPE_F32, ne, GK_OP_SSM_SCAN, s, x, dt, A);
    if (r) {
        r->src[4] = B;
        r->src[5] = C;
        r->src[6] = ids;
        gk::set_op_param_i32(r, 0, static_cast<int32_t>(K));
    }
    return r;
}

} // extern "C"
