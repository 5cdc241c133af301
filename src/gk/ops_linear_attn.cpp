// ops_linear_attn.cpp - builders of the recurrent (linear-attention) ops whose state is
// one S x S matrix per head: rwkv_wkv6, gated_linear_attn, rwkv_wkv7 and
// gated_delta_net (with its KDA form). Sources, result shapes and op_params are ggml's
// (ggml.c).
#include "internal.h"

#include <climits>
#include <initializer_list>
#include <utility>

namespace gk {
namespace {

/// Each tensor is contiguous F32.
bool contiguous_f32(builder & bd, std::initializer_list<std::pair<const gk_tensor *, const char *>> ts) {
    for (const auto & [t, what] : ts) {
        if (!bd.type_is(t, GK_TYPE_F32, what) || !bd.contiguous(t, what)) {
            return false;
        }
    }
    return true;
}

/// The rwkv / gla family: every token tensor is [S, H, n_tokens] (the first one, k or r,
/// sets S, H and n_tokens), state holds S*S*H*n_seqs values with n_seqs = state->ne[1],
/// and n_tokens is a whole number of sequences. Result F32 [S*H, n_tokens + S*n_seqs]:
/// the outputs, then the new states.
gk_tensor * wkv_result(builder & bd, gk_op op, std::initializer_list<gk_tensor *> tokens, gk_tensor * state,
                       std::initializer_list<gk_tensor *> srcs) {
    const gk_tensor * first = *tokens.begin();
    const int64_t     S = first->ne[0], H = first->ne[1], T = first->ne[2];
    for (const gk_tensor * t : tokens) {
        if (t->ne[0] != S || t->ne[1] != H || t->ne[2] != T || t->ne[3] != 1) {
            bd.fail("token tensor %s must be [S, H, n_tokens] = %s", describe(t).c_str(), describe(first).c_str());
            return nullptr;
        }
    }
    const int64_t n_seqs    = state->ne[1];
    const int64_t states[4] = {S, S, H, n_seqs};
    int64_t       n_state   = 0;
    if (n_seqs < 1 || T % n_seqs != 0 || !checked_nelements(states, &n_state) || gk_nelements(state) != n_state) {
        bd.fail(
            "state %s must hold S*S*H*n_seqs values with n_seqs = ne[1] >= 1 dividing n_tokens %lld (S %lld, H "
            "%lld)",
            describe(state).c_str(), static_cast<long long>(T), static_cast<long long>(S), static_cast<long long>(H));
        return nullptr;
    }
    const int64_t ne[4] = {S * H, T + S * n_seqs, 1, 1};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, op);
    if (r) {
        int i = 0;
        for (gk_tensor * s : srcs) {
            r->src[i++] = s;
        }
    }
    return r;
}

} // namespace
} // namespace gk

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_rwkv_wkv6(gk_context * ctx, gk_tensor * k, gk_tensor * v, gk_tensor * r, gk_tensor * tf, gk_tensor * td,
                         gk_tensor * state) {
    builder bd(ctx, "rwkv_wkv6");
    if (!bd.inputs(k, v, r, tf, td, state) ||
        !gk::contiguous_f32(bd, {{k, "k"}, {v, "v"}, {r, "r"}, {tf, "tf"}, {td, "td"}, {state, "state"}})) {
        return nullptr;
    }
    if (gk_nelements(tf) != k->ne[0] * k->ne[1]) {
        bd.fail("tf %s must hold S*H = %lld values", describe(tf).c_str(), static_cast<long long>(k->ne[0] * k->ne[1]));
        return nullptr;
    }
    return gk::wkv_result(bd, GK_OP_RWKV_WKV6, {k, v, r, td}, state, {k, v, r, tf, td, state});
}

gk_tensor * gk_gated_linear_attn(gk_context * ctx, gk_tensor * k, gk_tensor * v, gk_tensor * q, gk_tensor * g,
                                 gk_tensor * state, float scale) {
    builder bd(ctx, "gated_linear_attn");
    if (!bd.inputs(k, v, q, g, state) ||
        !gk::contiguous_f32(bd, {{k, "k"}, {v, "v"}, {q, "q"}, {g, "g"}, {state, "state"}})) {
        return nullptr;
    }
    gk_tensor * res = gk::wkv_result(bd, GK_OP_GATED_LINEAR_ATTN, {k, v, q, g}, state, {k, v, q, g, state});
    if (res) {
        gk::set_op_param_f32(res, 0, scale);
    }
    return res;
}

gk_tensor * gk_rwkv_wkv7(gk_context * ctx, gk_tensor * r, gk_tensor * w, gk_tensor * k, gk_tensor * v, gk_tensor * a,
                         gk_tensor * b, gk_tensor * state) {
    builder bd(ctx, "rwkv_wkv7");
    if (!bd.inputs(r, w, k, v, a, b, state) ||
        !gk::contiguous_f32(bd, {{r, "r"}, {w, "w"}, {k, "k"}, {v, "v"}, {a, "a"}, {b, "b"}, {state, "state"}})) {
        return nullptr;
    }
    return gk::wkv_result(bd, GK_OP_RWKV_WKV7, {k, r, w, v, a, b}, state, {r, w, k, v, a, b, state});
}

gk_tensor * gk_gated_delta_net(gk_context * ctx, gk_tensor * q, gk_tensor * k, gk_tensor * v, gk_tensor * g,
                               gk_tensor * beta, gk_tensor * state, int64_t K) {
    builder bd(ctx, "gated_delta_net");
    if (!bd.inputs(q, k, v, g, beta, state) || !gk::contiguous_f32(bd, {{g, "g"}, {beta, "beta"}, {state, "state"}}) ||
        !bd.type_is(q, GK_TYPE_F32, "q") || !bd.type_is(k, GK_TYPE_F32, "k") || !bd.type_is(v, GK_TYPE_F32, "v") ||
        !bd.dense_rows(q, "q") || !bd.dense_rows(k, "k") || !bd.dense_rows(v, "v")) {
        return nullptr;
    }
    const int64_t S = v->ne[0], H = v->ne[1], T = v->ne[2], n_seqs = v->ne[3];
    for (const gk_tensor * t : {q, k}) {
        if (t->ne[0] != S || t->ne[2] != T || t->ne[1] < 1 || H % t->ne[1] != 0 || t->ne[3] < 1 ||
            n_seqs % t->ne[3] != 0) {
            bd.fail(
                "q and k %s must be [S, H', n_tokens, n_seqs'] with H' dividing H and n_seqs' dividing n_seqs of "
                "v %s",
                describe(t).c_str(), describe(v).c_str());
            return nullptr;
        }
    }
    if ((g->ne[0] != 1 && g->ne[0] != S) || g->ne[1] != H || g->ne[2] != T || g->ne[3] != n_seqs || beta->ne[0] != 1 ||
        beta->ne[1] != H || beta->ne[2] != T || beta->ne[3] != n_seqs) {
        bd.fail("g %s must be [1 or S, H, n_tokens, n_seqs] and beta %s [1, H, n_tokens, n_seqs] for v %s",
                describe(g).c_str(), describe(beta).c_str(), describe(v).c_str());
        return nullptr;
    }
    if (state->ne[0] != S || state->ne[1] != S || state->ne[2] != H || state->ne[3] != n_seqs) {
        bd.fail("state %s must be [S, S, H, n_seqs] for v %s", describe(state).c_str(), describe(v).c_str());
        return nullptr;
    }
    int64_t rows = 0;
    if (K < 1 || K > INT32_MAX || __builtin_mul_overflow(K, S * n_seqs, &rows) ||
        __builtin_add_overflow(rows, T * n_seqs, &rows)) {
        bd.fail("K = %lld snapshot slots must be in [1, INT32_MAX] and fit the result", static_cast<long long>(K));
        return nullptr;
    }
    const int64_t ne[4] = {S * H, rows, 1, 1};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_GATED_DELTA_NET, q, k, v, g);
    if (r) {
        r->src[4] = beta;
        r->src[5] = state;
        gk::set_op_param_i32(r, 0, static_cast<int32_t>(K));
    }
    return r;
}

} // extern "C"
