// ops_attention.cpp - builders of the attention building blocks: soft_max (mask,
// ALiBi, sinks), diag_mask_inf / diag_mask_zero, rope (and its gradient, rope_back),
// flash_attn_ext.
#include "internal.h"

#include <cmath>

using gk::builder;
using gk::describe;

namespace gk {
namespace {

gk_tensor * soft_max(gk_context * ctx, gk_tensor * a, gk_tensor * mask, float scale, float max_bias, bool inplace) {
    builder bd(ctx, "soft_max");
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    if (mask) {
        if (mask->type != GK_TYPE_F32 && mask->type != GK_TYPE_F16) {
            bd.fail("mask must be f32 or f16, got %s", gk_type_name(mask->type));
            return nullptr;
        }
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 ||
            a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0) {
            bd.fail("mask %s does not fit a %s (ne0 equal, ne1 >=, ne2/ne3 dividing a's)", describe(mask).c_str(),
                    describe(a).c_str());
            return nullptr;
        }
    }
    if (max_bias > 0.0f && !mask) {
        bd.fail("max_bias > 0 (ALiBi) needs a mask");
        return nullptr;
    }
    if (!std::isfinite(scale) || !std::isfinite(max_bias)) {
        bd.fail("scale %g and max_bias %g must be finite", static_cast<double>(scale), static_cast<double>(max_bias));
        return nullptr;
    }
    gk_tensor * r = inplace ? bd.alias(a, GK_OP_SOFT_MAX, a, mask) : bd.result(a->type, a->ne, GK_OP_SOFT_MAX, a, mask);
    if (r) {
        set_op_param_f32(r, 0, scale);
        set_op_param_f32(r, 1, max_bias);
    }
    return r;
}

gk_tensor * diag_mask(gk_context * ctx, gk_op op, gk_tensor * a, int n_past, bool inplace) {
    builder bd(ctx, gk_op_symbol(op));
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    gk_tensor * r = inplace ? bd.alias(a, op, a) : bd.result(a->type, a->ne, op, a);
    if (r) {
        set_op_param_i32(r, 0, n_past);
    }
    return r;
}

/// rope_multi's sections: each >= 0, s0 + s1 + s2 > 0, the sum at most ne0 (ggml's limits).
bool sections_ok(builder & bd, const int * s, int64_t ne0) {
    const int64_t sum = static_cast<int64_t>(s[0]) + s[1] + s[2] + s[3];
    if (s[0] < 0 || s[1] < 0 || s[2] < 0 || s[3] < 0 || sum == s[3] || sum > ne0) {
        return bd.fail("sections [%d, %d, %d, %d] must be >= 0, not all of the first three 0, and sum to <= ne0 %lld",
                       s[0], s[1], s[2], s[3], static_cast<long long>(ne0));
    }
    return true;
}

/// rope_ext (sections NULL: mode normal or neox, positions [ne2]) and rope_multi
/// (sections[4]: mode mrope, imrope or vision, positions [4 * ne2]); op GK_OP_ROPE, or
/// GK_OP_ROPE_BACK for their gradients (the same checks and op_params).
gk_tensor * rope(gk_context * ctx, gk_op op, gk_tensor * a, gk_tensor * b, gk_tensor * c, int n_dims,
                 const int * sections, int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                 float attn_factor, float beta_fast, float beta_slow) {
    const bool back = op == GK_OP_ROPE_BACK;
    builder    bd(ctx, sections ? (back ? "rope_multi_back" : "rope_multi") : (back ? "rope_ext_back" : "rope"));
    if (!bd.inputs(a, b) || !bd.float_type(a, "a") || !bd.type_is(b, GK_TYPE_I32, "positions b") ||
        !bd.dims_at_most(b, 1, "positions b")) {
        return nullptr;
    }
    if (!sections && mode != GK_ROPE_TYPE_NORMAL && mode != GK_ROPE_TYPE_NEOX) {
        bd.fail("mode %d is not supported (normal = 0, neox = 2; the multi-section modes are rope_multi's)", mode);
        return nullptr;
    }
    if (sections && mode != GK_ROPE_TYPE_MROPE && mode != GK_ROPE_TYPE_IMROPE && mode != GK_ROPE_TYPE_VISION) {
        bd.fail("mode %d is not a multi-section mode (mrope = 8, vision = 24, imrope = 40)", mode);
        return nullptr;
    }
    const int per_token = sections ? GK_MROPE_SECTIONS : 1;
    if (b->ne[0] != per_token * a->ne[2]) {
        bd.fail("positions b %s must have %d entries per a.ne2 of a %s", describe(b).c_str(), per_token,
                describe(a).c_str());
        return nullptr;
    }
    if (sections && !sections_ok(bd, sections, a->ne[0])) {
        return nullptr;
    }
    if (mode == GK_ROPE_TYPE_VISION && 2 * static_cast<int64_t>(n_dims) != a->ne[0]) {
        bd.fail("vision rope rotates pairs (x[i], x[i + n_dims]): n_dims = %d must be ne0/2 of a %s", n_dims,
                describe(a).c_str());
        return nullptr;
    }
    const int n_pairs = mode == GK_ROPE_TYPE_VISION ? n_dims : n_dims / 2;
    // n_dims = 0 rotates nothing (every element is copied), as in ggml, whose model loaders
    // build such a node to ask a backend whether it takes rope with a tensor's frequency
    // factors (llama.cpp's weight_buft_supported).
    if (n_dims < 0 || n_dims % 2 != 0 || n_dims > a->ne[0]) {
        bd.fail("n_dims = %d must be even and in 0..ne0 = %lld", n_dims, static_cast<long long>(a->ne[0]));
        return nullptr;
    }
    if (c && (c->type != GK_TYPE_F32 || !gk_is_contiguous(c) || gk_nelements(c) < n_pairs)) {
        bd.fail("frequency factors c %s must be contiguous f32 with one entry per rotated pair (%d)",
                describe(c).c_str(), n_pairs);
        return nullptr;
    }
    // The frequencies only shape the rotation: with nothing rotated (n_dims = 0, the loaders'
    // probe passes zeros for all of them) they are not used and not checked.
    if (n_dims > 0 &&
        (!(freq_base > 0.0f) || !(freq_scale > 0.0f) || !std::isfinite(ext_factor) || !std::isfinite(attn_factor))) {
        bd.fail("freq_base %g and freq_scale %g must be > 0, ext_factor and attn_factor finite",
                static_cast<double>(freq_base), static_cast<double>(freq_scale));
        return nullptr;
    }
    gk_tensor * r = bd.result(a->type, a->ne, op, a, b, c);
    if (r) {
        set_op_param_i32(r, 1, n_dims);
        set_op_param_i32(r, 2, mode);
        set_op_param_i32(r, 4, n_ctx_orig);
        set_op_param_f32(r, 5, freq_base);
        set_op_param_f32(r, 6, freq_scale);
        set_op_param_f32(r, 7, ext_factor);
        set_op_param_f32(r, 8, attn_factor);
        set_op_param_f32(r, 9, beta_fast);
        set_op_param_f32(r, 10, beta_slow);
        for (int i = 0; sections && i < GK_MROPE_SECTIONS; ++i) {
            set_op_param_i32(r, 11 + i, sections[i]);
        }
    }
    return r;
}

/// rope with sections, which must not be NULL (rope_multi, rope_multi_back).
gk_tensor * rope_multi(gk_context * ctx, gk_op op, gk_tensor * a, gk_tensor * b, gk_tensor * c, int n_dims,
                       const int * sections, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                       float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    if (!sections) {
        set_error(ctx, "%s: sections is NULL", op == GK_OP_ROPE_BACK ? "rope_multi_back" : "rope_multi");
        return nullptr;
    }
    return rope(ctx, op, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                beta_fast, beta_slow);
}

} // namespace

int64_t flash_attn_back_offset(const gk_tensor * q, const gk_tensor * k, const gk_tensor * v, int part) {
    const int64_t per_align = 16 / static_cast<int64_t>(sizeof(float));  // floats per GGML_MEM_ALIGN
    const auto    padded    = [per_align](int64_t n) { return (n + per_align - 1) / per_align * per_align; };
    const int64_t sizes[3]  = {gk_nelements(q), gk_nelements(k), gk_nelements(v)};
    int64_t       offset    = 0;
    for (int i = 0; i < part; ++i) {
        offset += padded(sizes[i]);
    }
    return offset;
}

} // namespace gk

extern "C" {

gk_tensor * gk_soft_max(gk_context * ctx, gk_tensor * a) { return gk::soft_max(ctx, a, nullptr, 1.0f, 0.0f, false); }

gk_tensor * gk_soft_max_inplace(gk_context * ctx, gk_tensor * a) {
    return gk::soft_max(ctx, a, nullptr, 1.0f, 0.0f, true);
}

gk_tensor * gk_soft_max_ext(gk_context * ctx, gk_tensor * a, gk_tensor * mask, float scale, float max_bias) {
    builder bd(ctx, "soft_max");
    if (!bd.inputs(a)) {  // mask may be NULL
        return nullptr;
    }
    return gk::soft_max(ctx, a, mask, scale, max_bias, false);
}

bool gk_soft_max_add_sinks(gk_tensor * soft_max, gk_tensor * sinks) {
    if (!soft_max || !sinks || soft_max->op != GK_OP_SOFT_MAX || sinks->type != GK_TYPE_F32 ||
        gk_nelements(sinks) != soft_max->ne[2] || !gk_is_contiguous(sinks)) {
        return false;
    }
    soft_max->src[2] = sinks;
    return true;
}

gk_tensor * gk_diag_mask_inf(gk_context * ctx, gk_tensor * a, int n_past) {
    return gk::diag_mask(ctx, GK_OP_DIAG_MASK_INF, a, n_past, false);
}

gk_tensor * gk_diag_mask_inf_inplace(gk_context * ctx, gk_tensor * a, int n_past) {
    return gk::diag_mask(ctx, GK_OP_DIAG_MASK_INF, a, n_past, true);
}

gk_tensor * gk_diag_mask_zero(gk_context * ctx, gk_tensor * a, int n_past) {
    return gk::diag_mask(ctx, GK_OP_DIAG_MASK_ZERO, a, n_past, false);
}

gk_tensor * gk_rope_ext(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c, int n_dims, int mode,
                        int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                        float beta_fast, float beta_slow) {
    return gk::rope(ctx, GK_OP_ROPE, a, b, c, n_dims, nullptr, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                    attn_factor, beta_fast, beta_slow);
}

gk_tensor * gk_rope_multi(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c, int n_dims,
                          int sections[GK_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base, float freq_scale,
                          float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return gk::rope_multi(ctx, GK_OP_ROPE, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                          ext_factor, attn_factor, beta_fast, beta_slow);
}

gk_tensor * gk_rope_ext_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c, int n_dims, int mode,
                             int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                             float beta_fast, float beta_slow) {
    return gk::rope(ctx, GK_OP_ROPE_BACK, a, b, c, n_dims, nullptr, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                    attn_factor, beta_fast, beta_slow);
}

gk_tensor * gk_rope_multi_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c, int n_dims,
                               int sections[GK_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base,
                               float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                               float beta_slow) {
    return gk::rope_multi(ctx, GK_OP_ROPE_BACK, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                          ext_factor, attn_factor, beta_fast, beta_slow);
}

gk_tensor * gk_rope(gk_context * ctx, gk_tensor * a, gk_tensor * b, int n_dims, int mode) {
    return gk_rope_ext(ctx, a, b, nullptr, n_dims, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
}

gk_tensor * gk_flash_attn_ext(gk_context * ctx, gk_tensor * q, gk_tensor * k, gk_tensor * v, gk_tensor * mask,
                              float scale, float max_bias, float logit_softcap) {
    builder bd(ctx, "flash_attn_ext");
    if (!bd.inputs(q, k, v) || !bd.type_is(q, GK_TYPE_F32, "q") || !bd.decodable(v, "v")) {
        return nullptr;
    }
    // A key is scored as a dot of its K row, so rows are whole blocks of K's type; whether
    // a backend has that dot is its supports_op's question.
    if (!gk_row_len_ok(k->type, k->ne[0])) {
        bd.fail("k %s: rows of %lld elements are not whole blocks of %s", describe(k).c_str(),
                static_cast<long long>(k->ne[0]), gk_type_name(k->type));
        return nullptr;
    }
    if (k->ne[0] != q->ne[0] || v->ne[1] != k->ne[1] || v->ne[2] != k->ne[2] || k->ne[2] == 0 ||
        q->ne[2] % k->ne[2] != 0 || q->ne[3] != k->ne[3] || q->ne[3] != v->ne[3]) {
        bd.fail("q %s, k %s, v %s: need q.ne0 == k.ne0, k and v equal in ne1..ne3, q.ne2 a multiple of k.ne2",
                describe(q).c_str(), describe(k).c_str(), describe(v).c_str());
        return nullptr;
    }
    if (mask) {
        if (mask->type != GK_TYPE_F16 && mask->type != GK_TYPE_F32) {
            bd.fail("mask must be f16 or f32, got %s", gk_type_name(mask->type));
            return nullptr;
        }
        if (mask->ne[0] != k->ne[1] || mask->ne[1] < q->ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 ||
            q->ne[2] % mask->ne[2] != 0 || q->ne[3] % mask->ne[3] != 0) {
            bd.fail("mask %s does not fit q %s and k %s", describe(mask).c_str(), describe(q).c_str(),
                    describe(k).c_str());
            return nullptr;
        }
    }
    if (max_bias > 0.0f && !mask) {
        bd.fail("max_bias > 0 (ALiBi) needs a mask");
        return nullptr;
    }
    if (!std::isfinite(scale) || !std::isfinite(max_bias) || !(logit_softcap >= 0.0f)) {
        bd.fail("scale and max_bias must be finite and logit_softcap >= 0");
        return nullptr;
    }
    const int64_t ne[4] = {v->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_FLASH_ATTN_EXT, q, k, v, mask);
    if (r) {
        gk::set_op_param_f32(r, 0, scale);
        gk::set_op_param_f32(r, 1, max_bias);
        gk::set_op_param_f32(r, 2, logit_softcap);
    }
    return r;
}

gk_tensor * gk_flash_attn_back(gk_context * ctx, gk_tensor * q, gk_tensor * k, gk_tensor * v, gk_tensor * d,
                               bool masked) {
    builder bd(ctx, "flash_attn_back");
    if (!bd.inputs(q, k, v, d) || !bd.type_is(q, GK_TYPE_F32, "q") || !bd.type_is(k, GK_TYPE_F32, "k") ||
        !bd.type_is(v, GK_TYPE_F32, "v") || !bd.type_is(d, GK_TYPE_F32, "d") || !bd.dense_rows(q, "q") ||
        !bd.dense_rows(k, "k") || !bd.dense_rows(v, "v") || !bd.dense_rows(d, "d")) {
        return nullptr;
    }
    const int64_t D = q->ne[0];
    const int64_t N = q->ne[1];
    const int64_t M = k->ne[1];
    if (k->ne[0] != D || v->ne[0] != M || v->ne[1] != D || M < N || k->ne[2] == 0 || q->ne[2] % k->ne[2] != 0 ||
        v->ne[2] != k->ne[2] || k->ne[3] != q->ne[3] || v->ne[3] != q->ne[3] || !gk_are_same_shape(d, q)) {
        bd.fail("q %s, k %s, v %s, d %s: need k [D, M, Hk, S], v [M, D, Hk, S], d the shape of q [D, N, H, S], "
                "M >= N, H a multiple of Hk",
                describe(q).c_str(), describe(k).c_str(), describe(v).c_str(), describe(d).c_str());
        return nullptr;
    }
    const int64_t n     = gk::flash_attn_back_offset(q, k, v, 3);
    const int64_t ne[4] = {n, 1, 1, 1};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_FLASH_ATTN_BACK, q, k, v, d);
    if (r) {
        gk::set_op_param_i32(r, 0, masked ? 1 : 0);
    }
    return r;
}

bool gk_flash_attn_ext_add_sinks(gk_tensor * attn, gk_tensor * sinks) {
    if (!attn || !sinks || attn->op != GK_OP_FLASH_ATTN_EXT || sinks->type != GK_TYPE_F32 ||
        gk_nelements(sinks) != attn->src[0]->ne[2] || !gk_is_contiguous(sinks)) {
        return false;
    }
    attn->src[4] = sinks;
    return true;
}


bool gk_rope_set_offset(gk_tensor * rope, int n_offs) {
    if (!rope || (rope->op != GK_OP_ROPE && rope->op != GK_OP_ROPE_BACK)) {
        return false;
    }
    const int n_dims = gk_get_op_params_i32(rope, 1);
    const int mode   = gk_get_op_params_i32(rope, 2);
    if (mode == GK_ROPE_TYPE_VISION || n_offs < 0 || n_offs % 2 != 0 || n_offs + n_dims > rope->ne[0]) {
        return false;
    }
    gk::set_op_param_i32(rope, 15, n_offs);
    return true;
}

} // extern "C"
