// ops_dsv4.cpp - builders of DeepSeek-V4's ops: lightning_indexer (the sparse-attention
// indexer's scores) and the hyper-connection ops dsv4_hc_comb, dsv4_hc_pre (and its gated
// form) and dsv4_hc_post. Sources, result shapes, checks and op_params are ggml's (ggml.c);
// the CPU kernels are cpu/ops/dsv4.cpp.
#include "internal.h"

using gk::builder;
using gk::describe;

namespace {

/// ggml's hyper-connection count of a mixes row of (2 + hc) hc values; 0 when none fits.
int64_t hc_of_mix_dim(int64_t mix_dim) {
    for (int64_t i = 1; i * i + 2 * i <= mix_dim; ++i) {
        if ((2 + i) * i == mix_dim) {
            return i;
        }
    }
    return 0;
}

bool shape_is(builder & bd, const gk_tensor * t, int64_t n0, int64_t n1, int64_t n2, int64_t n3, const char * what) {
    return (t->ne[0] == n0 && t->ne[1] == n1 && t->ne[2] == n2 && t->ne[3] == n3) ||
           bd.fail("%s %s must be [%lld, %lld, %lld, %lld]", what, describe(t).c_str(), static_cast<long long>(n0),
                   static_cast<long long>(n1), static_cast<long long>(n2), static_cast<long long>(n3));
}

gk_tensor * hc_pre(gk_context * ctx, gk_tensor * x, gk_tensor * w, float scale, bool gated) {
    builder bd(ctx, gated ? "dsv4_hc_pre_gated" : "dsv4_hc_pre");
    if (!bd.inputs(x, w) || !bd.type_is(x, GK_TYPE_F32, "x") || !bd.type_is(w, GK_TYPE_F32, "weights")) {
        return nullptr;
    }
    const int64_t n = x->ne[0], hc = x->ne[1], t = x->ne[2];
    if (x->ne[3] != 1 || hc < 1) {
        bd.fail("x %s must be [n_embd, hc, n_tokens]", describe(x).c_str());
        return nullptr;
    }
    if (!(gated ? shape_is(bd, w, n, hc, t, 1, "gate") : shape_is(bd, w, hc, t, 1, 1, "weights"))) {
        return nullptr;
    }
    const int64_t ne[4] = {n, t, 1, 1};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_DSV4_HC_PRE, x, w);
    if (r) {
        gk::set_op_param_f32(r, 0, scale);
        gk::set_op_param_i32(r, 1, gated ? 1 : 0);
    }
    return r;
}

} // namespace

extern "C" {

gk_tensor * gk_lightning_indexer(gk_context * ctx, gk_tensor * q, gk_tensor * k, gk_tensor * weights,
                                 gk_tensor * mask) {
    builder bd(ctx, "lightning_indexer");
    if (!bd.inputs(q, k, weights, mask) || !bd.type_is(q, GK_TYPE_F32, "q") || !bd.decodable(k, "k") ||
        !bd.type_is(weights, GK_TYPE_F32, "weights") || !bd.type_is(mask, GK_TYPE_F16, "mask")) {
        return nullptr;
    }
    const bool ok = q->ne[0] == k->ne[0] && k->ne[1] == 1 && q->ne[1] == weights->ne[0] && q->ne[2] == weights->ne[1] &&
                    weights->ne[2] == 1 && mask->ne[0] == k->ne[2] && mask->ne[1] == q->ne[2] && mask->ne[2] == 1 &&
                    q->ne[3] == k->ne[3] && k->ne[3] == weights->ne[3] && mask->ne[3] > 0 &&
                    weights->ne[3] % mask->ne[3] == 0;
    if (!ok) {
        bd.fail(
            "q %s, k %s, weights %s and mask %s do not match (q [d, H, T, B], k [d, 1, n_kv, B], weights [H, T, "
            "1, B], mask [n_kv, T, 1, B'])",
            describe(q).c_str(), describe(k).c_str(), describe(weights).c_str(), describe(mask).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {k->ne[2], q->ne[2], 1, q->ne[3]};
    return bd.result(GK_TYPE_F32, ne, GK_OP_LIGHTNING_INDEXER, q, k, weights, mask);
}

gk_tensor * gk_dsv4_hc_comb(gk_context * ctx, gk_tensor * mixes, gk_tensor * scale, gk_tensor * base, float eps,
                            int32_t n_iter) {
    builder bd(ctx, "dsv4_hc_comb");
    if (!bd.inputs(mixes, scale, base) || !bd.type_is(mixes, GK_TYPE_F32, "mixes") ||
        !bd.type_is(scale, GK_TYPE_F32, "scale") || !bd.type_is(base, GK_TYPE_F32, "base")) {
        return nullptr;
    }
    const int64_t mix_dim = mixes->ne[0];
    const int64_t hc      = hc_of_mix_dim(mix_dim);
    if (n_iter <= 0 || hc != 4 || mixes->ne[2] != 1 || mixes->ne[3] != 1) {
        bd.fail("mixes %s must be [(2 + 4) * 4, n_tokens] and n_iter = %d positive", describe(mixes).c_str(), n_iter);
        return nullptr;
    }
    if (scale->ne[0] < 3) {
        bd.fail("scale %s needs at least 3 values", describe(scale).c_str());
        return nullptr;
    }
    if (!shape_is(bd, scale, scale->ne[0], 1, 1, 1, "scale") || !shape_is(bd, base, mix_dim, 1, 1, 1, "base")) {
        return nullptr;
    }
    const int64_t ne[4] = {hc, hc, mixes->ne[1], 1};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_DSV4_HC_COMB, mixes, scale, base);
    if (r) {
        gk::set_op_param_f32(r, 0, eps);
        gk::set_op_param_i32(r, 1, n_iter);
    }
    return r;
}

gk_tensor * gk_dsv4_hc_pre(gk_context * ctx, gk_tensor * x, gk_tensor * weights) {
    return hc_pre(ctx, x, weights, 1.0f, false);
}

gk_tensor * gk_dsv4_hc_pre_gated(gk_context * ctx, gk_tensor * x, gk_tensor * gate, float scale) {
    return hc_pre(ctx, x, gate, scale, true);
}

gk_tensor * gk_dsv4_hc_post(gk_context * ctx, gk_tensor * x, gk_tensor * residual, gk_tensor * post, gk_tensor * comb) {
    builder bd(ctx, "dsv4_hc_post");
    if (!bd.inputs(x, residual, post) || !bd.type_is(x, GK_TYPE_F32, "x") ||
        !bd.type_is(residual, GK_TYPE_F32, "residual") || !bd.type_is(post, GK_TYPE_F32, "post") ||
        (comb && !bd.type_is(comb, GK_TYPE_F32, "comb"))) {
        return nullptr;
    }
    const int64_t n = x->ne[0], t = x->ne[1], hc = residual->ne[1];
    if (hc < 1) {
        bd.fail("residual %s has no hyper-connections", describe(residual).c_str());
        return nullptr;
    }
    if (!shape_is(bd, x, n, t, 1, 1, "x") || !shape_is(bd, residual, n, hc, t, 1, "residual") ||
        !shape_is(bd, post, hc, t, 1, 1, "post") || (comb && !shape_is(bd, comb, hc, hc, t, 1, "comb"))) {
        return nullptr;
    }
    const int64_t ne[4] = {n, hc, t, 1};
    return bd.result(GK_TYPE_F32, ne, GK_OP_DSV4_HC_POST, x, residual, post, comb);
}

} // extern "C"
