// ops_conv.cpp - builders of the convolutions: im2col and its gradient, the direct and
// transposed convolution ops, and ggml's compositions of im2col and mul_mat (conv_1d,
// conv_2d, their depthwise forms), which build the same graph ggml builds so that the
// result is the same computation.
#include "internal.h"

#include <cstdint>

namespace gk {
namespace {

/// ggml's convolution output size: (in + 2p - d(k - 1) - 1) / s + 1.
int64_t conv_out_size(int64_t in, int64_t k, int s, int p, int d) {
    return (in + 2 * static_cast<int64_t>(p) - static_cast<int64_t>(d) * (k - 1) - 1) / s + 1;
}

/// (in - 1)*s + k, a transposed convolution's output size, into *out; false on overflow.
bool transposed_size(int64_t in, int64_t k, int s, int64_t * out) {
    return !__builtin_mul_overflow(in - 1, static_cast<int64_t>(s), out) && !__builtin_add_overflow(*out, k, out);
}

/// Strides and dilations >= 1 (dimension 1 only for a 2-D op).
bool steps_ok(builder & bd, int s0, int s1, int d0, int d1, bool is_2d) {
    if (s0 < 1 || d0 < 1 || (is_2d && (s1 < 1 || d1 < 1))) {
        return bd.fail("strides (%d, %d) and dilations (%d, %d) must be >= 1", s0, s1, d0, d1);
    }
    return true;
}

/// The element type im2col produces for a conv kernel of `type` (ggml: F32 for BF16, else F16).
gk_type im2col_type(gk_type kernel_type) { return kernel_type == GK_TYPE_BF16 ? GK_TYPE_F32 : GK_TYPE_F16; }

/// The op node of a convolution: op_params s0, s1, p0, p1, d0, d1 (and is_2D when >= 0).
gk_tensor * conv_node(builder & bd, gk_type type, const int64_t ne[4], gk_op op, gk_tensor * a, gk_tensor * b,
                      const int32_t (&params)[6], int is_2d = -1) {
    gk_tensor * r = bd.result(type, ne, op, a, b);
    if (r) {
        for (int i = 0; i < 6; ++i) {
            set_op_param_i32(r, i, params[i]);
        }
        if (is_2d >= 0) {
            set_op_param_i32(r, 6, is_2d);
        }
    }
    return r;
}

/// Checks of the direct 2-D convolutions: a, b float, steps valid, output >= 1x1.
bool direct_ok(builder & bd, const gk_tensor * a, const gk_tensor * b, int s0, int s1, int p0, int p1, int d0, int d1,
               int64_t * ow, int64_t * oh) {
    if (!bd.float_type(a, "kernel a") || !bd.float_type(b, "input b") || !steps_ok(bd, s0, s1, d0, d1, true)) {
        return false;
    }
    *ow = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    *oh = conv_out_size(b->ne[1], a->ne[1], s1, p1, d1);
    if (*ow < 1 || *oh < 1) {
        return bd.fail("input b %s is too small for kernel a %s (output %lld x %lld)", describe(b).c_str(),
                       describe(a).c_str(), static_cast<long long>(*ow), static_cast<long long>(*oh));
    }
    return true;
}

/// Checks of the 3-D ops: strides and dilations >= 1, ic >= 1 dividing a.ne3 and b.ne3,
/// every output size >= 1 (into out[3]). w: s0, s1, s2, p0, p1, p2, d0, d1, d2.
bool window_3d_ok(builder & bd, const gk_tensor * a, const gk_tensor * b, int64_t ic, const int32_t (&w)[9],
                  int64_t out[3]) {
    if (w[0] < 1 || w[1] < 1 || w[2] < 1 || w[6] < 1 || w[7] < 1 || w[8] < 1) {
        return bd.fail("strides (%d, %d, %d) and dilations (%d, %d, %d) must be >= 1", w[0], w[1], w[2], w[6], w[7],
                       w[8]);
    }
    if (ic < 1 || ic > INT32_MAX) {  // ne3 of a and b: the callers' checks (ggml's im2col_3d has none)
        return bd.fail("channels %lld must be >= 1 (kernel a %s, input b %s)", static_cast<long long>(ic),
                       describe(a).c_str(), describe(b).c_str());
    }
    for (int i = 0; i < 3; ++i) {
        out[i] = conv_out_size(b->ne[i], a->ne[i], w[i], w[3 + i], w[6 + i]);
        if (out[i] < 1) {
            return bd.fail("input b %s is too small for kernel a %s in dim %d", describe(b).c_str(),
                           describe(a).c_str(), i);
        }
    }
    return true;
}

void set_window_3d_params(gk_tensor * r, const int32_t (&w)[9]) {
    for (int i = 0; i < 9; ++i) {
        set_op_param_i32(r, i, w[i]);
    }
}

}  // namespace
}  // namespace gk

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_im2col(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int s1, int p0, int p1, int d0, int d1,
                      bool is_2D, gk_type dst_type) {
    builder bd(ctx, "im2col");
    if (!bd.inputs(a, b) || !bd.float_type(b, "b") || !gk::steps_ok(bd, s0, s1, d0, d1, is_2D)) {
        return nullptr;
    }
    if (dst_type != GK_TYPE_F32 && dst_type != GK_TYPE_F16) {
        bd.fail("dst_type must be f32 or f16, got %s", gk_type_name(dst_type));
        return nullptr;
    }
    if (is_2D ? a->ne[2] != b->ne[2] : (a->ne[1] != b->ne[1] || b->ne[3] != 1)) {
        bd.fail("kernel a %s and input b %s: need a.ne%d == b.ne%d (channels)%s", describe(a).c_str(),
                describe(b).c_str(), is_2D ? 2 : 1, is_2D ? 2 : 1, is_2D ? "" : " and b.ne3 == 1");
        return nullptr;
    }
    const int64_t oh = is_2D ? gk::conv_out_size(b->ne[1], a->ne[1], s1, p1, d1) : 1;
    const int64_t ow = gk::conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    if (ow < 1 || oh < 1) {
        bd.fail("input b %s is too small for kernel a %s", describe(b).c_str(), describe(a).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {is_2D ? a->ne[2] * a->ne[1] * a->ne[0] : a->ne[1] * a->ne[0], ow, is_2D ? oh : b->ne[2],
                           is_2D ? b->ne[3] : 1};
    return gk::conv_node(bd, dst_type, ne, GK_OP_IM2COL, a, b, {s0, s1, p0, p1, d0, d1}, is_2D ? 1 : 0);
}

gk_tensor * gk_im2col_back(gk_context * ctx, gk_tensor * a, gk_tensor * b, int64_t * ne, int s0, int s1, int p0, int p1,
                           int d0, int d1, bool is_2D) {
    builder bd(ctx, "im2col_back");
    if (!bd.inputs(a, b) || !bd.float_type(a, "a") || !gk::steps_ok(bd, s0, s1, d0, d1, is_2D)) {
        return nullptr;
    }
    if (!ne) {
        bd.fail("ne is NULL");
        return nullptr;
    }
    // Image [IW, IH, IC, N] (2-D) or [IW, IC, N] (1-D); a holds one row of IC*KH*KW per output position.
    const int64_t ic = is_2D ? ne[2] : ne[1];
    const int64_t n  = is_2D ? ne[3] : ne[2];
    const int64_t kh = is_2D ? b->ne[1] : 1;
    if (ne[0] < 1 || ne[1] < 1 || ne[2] < 1 || ne[3] < 1 || (!is_2D && ne[3] != 1) || a->ne[0] != ic * kh * b->ne[0] ||
        a->ne[is_2D ? 3 : 2] != n || (!is_2D && a->ne[3] != 1)) {
        bd.fail("gradient a %s does not match im2col of kernel b %s over [%lld, %lld, %lld, %lld]", describe(a).c_str(),
                describe(b).c_str(), static_cast<long long>(ne[0]), static_cast<long long>(ne[1]),
                static_cast<long long>(ne[2]), static_cast<long long>(ne[3]));
        return nullptr;
    }
    return gk::conv_node(bd, GK_TYPE_F32, ne, GK_OP_IM2COL_BACK, a, b, {s0, s1, p0, p1, d0, d1}, is_2D ? 1 : 0);
}

gk_tensor * gk_col2im_1d(gk_context * ctx, gk_tensor * a, int s0, int oc, int p0) {
    builder bd(ctx, "col2im_1d");
    if (!bd.inputs(a) || !bd.float_type(a, "a") || !bd.dims_at_most(a, 2, "a")) {
        return nullptr;
    }
    if (s0 < 1 || oc < 1 || p0 < 0 || a->ne[0] % oc != 0) {
        bd.fail("s0 = %d and oc = %d must be >= 1, p0 = %d >= 0, and oc must divide ne0 of a %s", s0, oc, p0,
                describe(a).c_str());
        return nullptr;
    }
    const int64_t k     = a->ne[0] / oc;
    const int64_t t_out = (a->ne[1] - 1) * s0 + k - 2 * static_cast<int64_t>(p0);
    if (k < 1 || t_out < 1) {
        bd.fail("a %s with s0 = %d, oc = %d, p0 = %d gives no output", describe(a).c_str(), s0, oc, p0);
        return nullptr;
    }
    const int64_t ne[4] = {t_out, oc, 1, 1};
    gk_tensor *   r     = bd.result(a->type, ne, GK_OP_COL2IM_1D, a);
    if (r) {
        gk::set_op_param_i32(r, 0, s0);
        gk::set_op_param_i32(r, 1, oc);
        gk::set_op_param_i32(r, 2, p0);
    }
    return r;
}

gk_tensor * gk_conv_1d(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int p0, int d0) {
    if (!builder(ctx, "conv_1d").inputs(a, b)) {
        return nullptr;
    }
    gk_tensor * cols = gk_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false, gk::im2col_type(a->type));  // [IC*K, OL, N]
    if (!cols) {
        return nullptr;
    }
    gk_tensor * r = gk_mul_mat(ctx, gk_reshape_2d(ctx, cols, cols->ne[0], cols->ne[2] * cols->ne[1]),
                               gk_reshape_2d(ctx, a, a->ne[0] * a->ne[1], a->ne[2]));  // [N*OL, OC]
    return r ? gk_reshape_3d(ctx, r, cols->ne[1], a->ne[2], cols->ne[2]) : nullptr;    // [OL, OC, N]
}

gk_tensor * gk_conv_1d_ph(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s, int d) {
    return gk_conv_1d(ctx, a, b, s, a ? static_cast<int>(a->ne[0] / 2) : 0, d);
}

gk_tensor * gk_conv_1d_dw(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int p0, int d0) {
    if (!builder(ctx, "conv_1d_dw").inputs(a, b)) {
        return nullptr;
    }
    gk_tensor * cols = gk_im2col(ctx, a, gk_reshape_4d(ctx, b, b->ne[0], 1, b->ne[1], b->ne[2]), s0, 0, p0, 0, d0, 0,
                                 false, gk::im2col_type(a->type));
    gk_tensor * r    = gk_mul_mat(ctx, cols, a);
    return r ? gk_reshape_3d(ctx, r, r->ne[0], r->ne[2], 1) : nullptr;
}

gk_tensor * gk_conv_1d_dw_ph(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int d0) {
    return gk_conv_1d_dw(ctx, a, b, s0, a ? static_cast<int>(a->ne[0] / 2) : 0, d0);
}

gk_tensor * gk_conv_2d(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int s1, int p0, int p1, int d0, int d1) {
    if (!builder(ctx, "conv_2d").inputs(a, b)) {
        return nullptr;
    }
    gk_tensor * cols = gk_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true,
                                 gk::im2col_type(a->type));  // [IC*KH*KW, OW, OH, N]
    if (!cols) {
        return nullptr;
    }
    gk_tensor * r = gk_mul_mat(ctx, gk_reshape_2d(ctx, cols, cols->ne[0], cols->ne[3] * cols->ne[2] * cols->ne[1]),
                               gk_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2], a->ne[3]));  // [N*OH*OW, OC]
    r = r ? gk_reshape_4d(ctx, r, cols->ne[1], cols->ne[2], cols->ne[3], a->ne[3]) : nullptr;     // [OW, OH, N, OC]
    return r ? gk_cont(ctx, gk_permute(ctx, r, 0, 1, 3, 2)) : nullptr;                            // [OW, OH, OC, N]
}

gk_tensor * gk_conv_2d_sk_p0(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    const int k0 = a ? static_cast<int>(a->ne[0]) : 1;
    const int k1 = a ? static_cast<int>(a->ne[1]) : 1;
    return gk_conv_2d(ctx, a, b, k0, k1, 0, 0, 1, 1);
}

gk_tensor * gk_conv_2d_s1_ph(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    const int p0 = a ? static_cast<int>(a->ne[0] / 2) : 0;
    const int p1 = a ? static_cast<int>(a->ne[1] / 2) : 0;
    return gk_conv_2d(ctx, a, b, 1, 1, p0, p1, 1, 1);
}

gk_tensor * gk_conv_2d_direct(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int s1, int p0, int p1, int d0,
                              int d1) {
    builder bd(ctx, "conv_2d_direct");
    int64_t ow = 0, oh = 0;
    if (!bd.inputs(a, b) || !gk::direct_ok(bd, a, b, s0, s1, p0, p1, d0, d1, &ow, &oh)) {
        return nullptr;
    }
    if (a->ne[2] != b->ne[2]) {
        bd.fail("kernel a %s and input b %s differ in channels (ne2)", describe(a).c_str(), describe(b).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {ow, oh, a->ne[3], b->ne[3]};
    return gk::conv_node(bd, b->type, ne, GK_OP_CONV_2D, a, b, {s0, s1, p0, p1, d0, d1});
}

gk_tensor * gk_conv_2d_dw(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int s1, int p0, int p1, int d0,
                          int d1) {
    if (!builder(ctx, "conv_2d_dw").inputs(a, b)) {
        return nullptr;
    }
    gk_tensor * ka   = gk_reshape_4d(ctx, a, a->ne[0], a->ne[1], 1, a->ne[2] * a->ne[3]);
    gk_tensor * cols = gk_im2col(ctx, ka, gk_reshape_4d(ctx, b, b->ne[0], b->ne[1], 1, b->ne[2] * b->ne[3]), s0, s1, p0,
                                 p1, d0, d1, true, gk::im2col_type(a->type));  // [KH*KW, OW, OH, N*C]
    if (!cols) {
        return nullptr;
    }
    gk_tensor * rows = gk_reshape_4d(ctx, cols, cols->ne[0], cols->ne[2] * cols->ne[1], b->ne[2], b->ne[3]);
    gk_tensor * r    = gk_mul_mat(ctx, gk_reshape_4d(ctx, ka, ka->ne[0] * ka->ne[1], ka->ne[2], ka->ne[3], 1), rows);
    return r ? gk_reshape_4d(ctx, r, cols->ne[1], cols->ne[2], b->ne[2], b->ne[3]) : nullptr;
}

gk_tensor * gk_conv_2d_dw_direct(gk_context * ctx, gk_tensor * a, gk_tensor * b, int stride0, int stride1, int pad0,
                                 int pad1, int dilation0, int dilation1) {
    builder bd(ctx, "conv_2d_dw_direct");
    int64_t ow = 0, oh = 0;
    if (!bd.inputs(a, b) || !gk::direct_ok(bd, a, b, stride0, stride1, pad0, pad1, dilation0, dilation1, &ow, &oh)) {
        return nullptr;
    }
    if (a->ne[2] != 1 || a->ne[3] != b->ne[2]) {
        bd.fail("kernel a %s must be [KW, KH, 1, C] with C = b.ne2 of input b %s", describe(a).c_str(),
                describe(b).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {ow, oh, b->ne[2], b->ne[3]};
    gk_tensor *   r     = gk::conv_node(bd, b->type, ne, GK_OP_CONV_2D_DW, a, b,
                                        {stride0, stride1, pad0, pad1, dilation0, dilation1});
    const size_t  ts    = gk_type_size(b->type);
    if (r && b->nb[2] == ts && b->nb[0] > b->nb[2] && b->nb[1] > b->nb[0]) {
        // b is a permuted [C, W, H, N] image (ggml's contiguous channels): so is the result.
        r->nb[0] = static_cast<size_t>(r->ne[2]) * ts;
        r->nb[1] = static_cast<size_t>(r->ne[0]) * r->nb[0];
        r->nb[2] = ts;
    }
    return r;
}

gk_tensor * gk_im2col_3d(gk_context * ctx, gk_tensor * a, gk_tensor * b, int64_t IC, int s0, int s1, int s2, int p0,
                         int p1, int p2, int d0, int d1, int d2, gk_type dst_type) {
    builder bd(ctx, "im2col_3d");
    int64_t out[3];
    if (!bd.inputs(a, b) || !bd.float_type(b, "b") ||
        !gk::window_3d_ok(bd, a, b, IC, {s0, s1, s2, p0, p1, p2, d0, d1, d2}, out)) {
        return nullptr;
    }
    if (dst_type != GK_TYPE_F32 && dst_type != GK_TYPE_F16) {
        bd.fail("dst_type must be f32 or f16, got %s", gk_type_name(dst_type));
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0] * a->ne[1] * a->ne[2] * IC, out[0], out[1], out[2] * (b->ne[3] / IC)};
    gk_tensor *   r     = bd.result(dst_type, ne, GK_OP_IM2COL_3D, a, b);
    if (r) {
        gk::set_window_3d_params(r, {s0, s1, s2, p0, p1, p2, d0, d1, d2});
        gk::set_op_param_i32(r, 9, static_cast<int32_t>(IC));
    }
    return r;
}

gk_tensor * gk_conv_3d(gk_context * ctx, gk_tensor * a, gk_tensor * b, int64_t IC, int s0, int s1, int s2, int p0,
                       int p1, int p2, int d0, int d1, int d2) {
    builder bd(ctx, "conv_3d");
    if (!bd.inputs(a, b)) {
        return nullptr;
    }
    if (IC < 1 || a->ne[3] < IC || b->ne[3] < IC || a->ne[3] % IC != 0 || b->ne[3] % IC != 0) {
        bd.fail("channels %lld must be >= 1 and divide ne3 (>= 1 times it) of kernel a %s and input b %s",
                static_cast<long long>(IC), describe(a).c_str(), describe(b).c_str());
        return nullptr;
    }
    gk_tensor * cols = gk_im2col_3d(ctx, a, b, IC, s0, s1, s2, p0, p1, p2, d0, d1, d2,
                                    gk::im2col_type(a->type));  // [IC*KD*KH*KW, OW, OH, N*OD]
    if (!cols) {
        return nullptr;
    }
    const int64_t oc = a->ne[3] / IC, n = b->ne[3] / IC, od = cols->ne[3] / n;
    gk_tensor *   r = gk_mul_mat(ctx, gk_reshape_2d(ctx, cols, cols->ne[0], cols->ne[3] * cols->ne[2] * cols->ne[1]),
                                 gk_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2] * IC, oc));  // [N*OD*OH*OW, OC]
    r               = r ? gk_reshape_4d(ctx, r, cols->ne[1] * cols->ne[2], od, n, oc) : nullptr;   // [OH*OW, OD, N, OC]
    r               = r ? gk_cont(ctx, gk_permute(ctx, r, 0, 1, 3, 2)) : nullptr;                  // [OH*OW, OD, OC, N]
    return r ? gk_reshape_4d(ctx, r, cols->ne[1], cols->ne[2], od, oc * n) : nullptr;              // [OW, OH, OD, OC*N]
}

gk_tensor * gk_conv_3d_direct(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int s1, int s2, int p0, int p1,
                              int p2, int d0, int d1, int d2, int c, int n, int oc) {
    builder bd(ctx, "conv_3d_direct");
    int64_t out[3];
    if (!bd.inputs(a, b) || !bd.float_type(a, "kernel a") || !bd.float_type(b, "input b") ||
        !gk::window_3d_ok(bd, a, b, c, {s0, s1, s2, p0, p1, p2, d0, d1, d2}, out)) {
        return nullptr;
    }
    if (n < 1 || oc < 1 || a->ne[3] != static_cast<int64_t>(c) * oc || b->ne[3] != static_cast<int64_t>(c) * n) {
        bd.fail("kernel a %s and input b %s: need a.ne3 == c*oc and b.ne3 == c*n (c %d, n %d, oc %d)",
                describe(a).c_str(), describe(b).c_str(), c, n, oc);
        return nullptr;
    }
    const int64_t ne[4] = {out[0], out[1], out[2], static_cast<int64_t>(oc) * n};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_CONV_3D, a, b);
    if (r) {
        gk::set_window_3d_params(r, {s0, s1, s2, p0, p1, p2, d0, d1, d2});
        gk::set_op_param_i32(r, 9, c);
        gk::set_op_param_i32(r, 10, n);
        gk::set_op_param_i32(r, 11, oc);
    }
    return r;
}

gk_tensor * gk_conv_transpose_1d(gk_context * ctx, gk_tensor * a, gk_tensor * b, int s0, int p0, int d0) {
    builder bd(ctx, "conv_transpose_1d");
    if (!bd.inputs(a, b) || !bd.type_is(b, GK_TYPE_F32, "input b") || !bd.dims_at_most(b, 2, "input b") ||
        !bd.dims_at_most(a, 3, "kernel a")) {
        return nullptr;
    }
    if (a->type != GK_TYPE_F32 && a->type != GK_TYPE_F16) {
        bd.fail("kernel a must be f32 or f16, got %s", gk_type_name(a->type));
        return nullptr;
    }
    if (s0 < 1 || p0 != 0 || d0 != 1) {
        bd.fail("s0 = %d must be >= 1, p0 = %d must be 0 and d0 = %d must be 1", s0, p0, d0);
        return nullptr;
    }
    if (a->ne[2] != b->ne[1]) {
        bd.fail("kernel a %s and input b %s: need a.ne2 == b.ne1 (input channels)", describe(a).c_str(),
                describe(b).c_str());
        return nullptr;
    }
    int64_t ne[4] = {0, a->ne[1], 1, 1};
    if (!gk::transposed_size(b->ne[0], a->ne[0], s0, &ne[0])) {
        bd.fail("the output size of input b %s at stride %d overflows", describe(b).c_str(), s0);
        return nullptr;
    }
    gk_tensor * r = bd.result(GK_TYPE_F32, ne, GK_OP_CONV_TRANSPOSE_1D, a, b);
    if (r) {
        gk::set_op_param_i32(r, 0, s0);
        gk::set_op_param_i32(r, 1, p0);
        gk::set_op_param_i32(r, 2, d0);
    }
    return r;
}

gk_tensor * gk_conv_transpose_2d_p0(gk_context * ctx, gk_tensor * a, gk_tensor * b, int stride) {
    builder bd(ctx, "conv_transpose_2d_p0");
    if (!bd.inputs(a, b) || !bd.type_is(b, GK_TYPE_F32, "input b")) {
        return nullptr;
    }
    if (a->type != GK_TYPE_F32 && a->type != GK_TYPE_F16) {
        bd.fail("kernel a must be f32 or f16, got %s", gk_type_name(a->type));
        return nullptr;
    }
    if (stride < 1) {
        bd.fail("stride = %d must be >= 1", stride);
        return nullptr;
    }
    if (a->ne[3] != b->ne[2]) {
        bd.fail("kernel a %s and input b %s: need a.ne3 == b.ne2 (input channels)", describe(a).c_str(),
                describe(b).c_str());
        return nullptr;
    }
    int64_t ne[4] = {0, 0, a->ne[2], b->ne[3]};
    if (!gk::transposed_size(b->ne[0], a->ne[0], stride, &ne[0]) ||
        !gk::transposed_size(b->ne[1], a->ne[1], stride, &ne[1])) {
        bd.fail("the output size of input b %s at stride %d overflows", describe(b).c_str(), stride);
        return nullptr;
    }
    gk_tensor * r = bd.result(GK_TYPE_F32, ne, GK_OP_CONV_TRANSPOSE_2D, a, b);
    if (r) {
        gk::set_op_param_i32(r, 0, stride);
    }
    return r;
}

}  // extern "C"
