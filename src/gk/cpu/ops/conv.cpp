// conv.cpp - im2col, im2col_back, col2im_1d, the direct 2-D convolutions (conv_2d, conv_2d_dw) and
// the transposed convolutions (conv_transpose_1d, conv_transpose_2d).
//
// Every kernel splits by destination row and computes each output element whole, in the
// order its builder documents (gk.h), so the thread count never changes a bit. The
// transposed convolutions gather rather than scatter: an output element adds, in input
// order, the channel dot products of the input positions that reach it - the terms and
// the order in which ggml's scattering kernel adds them to that element. Each thread
// keeps its own channel-major copies of the input batch and of the kernel slice it is on.
#include "../dispatch.h"
#include "../rows.h"
#include "../vec_dot.h"
#include "windows.h"

#include <cstring>

namespace gk::cpu {
namespace {

/// op_params of im2col, im2col_back and the direct convolutions.
struct conv_params {
    int32_t s0, s1, p0, p1, d0, d1;
    bool    is_2d;
};

conv_params get_conv_params(const gk_tensor * dst) {
    return {gk_get_op_params_i32(dst, 0),     gk_get_op_params_i32(dst, 1), gk_get_op_params_i32(dst, 2),
            gk_get_op_params_i32(dst, 3),     gk_get_op_params_i32(dst, 4), gk_get_op_params_i32(dst, 5),
            gk_get_op_params_i32(dst, 6) == 1};
}

/// Row (ow, oh, n) of dst [IC*KH*KW, OW, OH, N] (2-D) or (ow, n) of [IC*K, OW, N] (1-D).
void im2col(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a  = dst->src[0];
    const gk_tensor * b  = dst->src[1];
    const conv_params c  = get_conv_params(dst);
    const int64_t     kw = a->ne[0];
    const int64_t     kh = c.is_2d ? a->ne[1] : 1;
    const int64_t     ic = c.is_2d ? b->ne[2] : b->ne[1];
    const int64_t     iw = b->ne[0];
    const int64_t     ih = c.is_2d ? b->ne[1] : 1;
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int64_t oh = c.is_2d ? i2 : 0;
        const int64_t n  = c.is_2d ? i3 : i2;
        float *       y  = out_row(dst, i1, i2, i3, yb);
        for (int64_t ch = 0; ch < ic; ++ch) {
            for (int64_t ky = 0; ky < kh; ++ky) {
                const int64_t y_in = oh * c.s1 + ky * c.d1 - c.p1;
                for (int64_t kx = 0; kx < kw; ++kx) {
                    const int64_t x_in = i1 * c.s0 + kx * c.d0 - c.p0;
                    const bool    in   = x_in >= 0 && x_in < iw && y_in >= 0 && y_in < ih;
                    float         v    = 0.0f;
                    if (in) {
                        v = c.is_2d ? read_element(b, x_in, y_in, ch, n) : read_element(b, x_in, ch, n, 0);
                    }
                    y[(ch * kh + ky) * kw + kx] = v;
                }
            }
        }
        store_row(dst, i1, i2, i3, y);
    });
}

/// Row (y, ic, n) of the image gradient [IW, IH, IC, N] (2-D) or (ic, n) of [IW, IC, N].
void im2col_back(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * g  = dst->src[0];  // im2col's output gradient
    const gk_tensor * k  = dst->src[1];
    const conv_params c  = get_conv_params(dst);
    const int64_t     kw = k->ne[0];
    const int64_t     kh = c.is_2d ? k->ne[1] : 1;
    const int64_t     ow = g->ne[1];
    const int64_t     oh = c.is_2d ? g->ne[2] : 1;
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int64_t y_in = c.is_2d ? i1 : 0;
        const int64_t ch   = c.is_2d ? i2 : i1;
        const int64_t n    = c.is_2d ? i3 : i2;
        float *       y    = out_row(dst, i1, i2, i3, yb);
        for (int64_t x_in = 0; x_in < dst->ne[0]; ++x_in) {
            float sum = 0.0f;
            for (int64_t ky = 0; ky < kh; ++ky) {
                const int64_t ty = y_in + c.p1 - ky * c.d1;
                if (c.is_2d && ty % c.s1 != 0) {
                    continue;
                }
                const int64_t oy = c.is_2d ? ty / c.s1 : 0;
                for (int64_t kx = 0; kx < kw; ++kx) {
                    const int64_t tx = x_in + c.p0 - kx * c.d0;
                    const int64_t ox = tx / c.s0;
                    if (tx % c.s0 != 0 || ox < 0 || ox >= ow || oy < 0 || oy >= oh) {
                        continue;
                    }
                    const int64_t col = (ch * kh + ky) * kw + kx;
                    sum += c.is_2d ? read_element(g, col, ox, oy, n) : read_element(g, col, ox, n, 0);
                }
            }
            y[x_in] = sum;
        }
        store_row(dst, i1, i2, i3, y);
    });
}

/// Row oc of col2im_1d's [T_out, OC]: output t sums, for the columns t_in (ascending) whose
/// window [t_in*s, t_in*s + K) holds t + p, element (oc*K + t + p - t_in*s, t_in) of a.
void col2im_1d(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a  = dst->src[0];
    const int64_t     s  = gk_get_op_params_i32(dst, 0);
    const int64_t     pd = gk_get_op_params_i32(dst, 2);
    const int64_t     k  = a->ne[0] / dst->ne[1];
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t oc, int64_t, int64_t) {
        float * y = out_row(dst, oc, 0, 0, yb);
        for (int64_t t = 0; t < dst->ne[0]; ++t) {
            const row_range r   = windows_holding(t + pd, k, s, a->ne[1]);
            float           sum = 0.0f;
            for (int64_t t_in = r.begin; t_in < r.end; ++t_in) {
                sum += read_element(a, oc * k + t + pd - t_in * s, t_in, 0, 0);
            }
            y[t] = sum;
        }
        store_row(dst, oc, 0, 0, y);
    });
}

/// Row (oh, oc, n) of a direct 2-D convolution [OW, OH, OC, N]: every output accumulates
/// kernel * input over ic, ky, kx in that order (Depthwise: ic is the output channel and
/// the kernel's ne2 is 1).
template <bool Depthwise>
void conv_2d_rows(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a   = dst->src[0];
    const gk_tensor * b   = dst->src[1];
    const conv_params c   = get_conv_params(dst);
    scratch           w   = p.work();
    float *           yb  = w.floats(dst->ne[0]);
    float *           kb  = w.floats(a->ne[0]);
    float *           xb  = w.floats(b->ne[0]);
    const int64_t     n_c = Depthwise ? 1 : a->ne[2];
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        float * y = out_row(dst, i1, i2, i3, yb);
        std::memset(y, 0, static_cast<size_t>(dst->ne[0]) * sizeof(float));
        for (int64_t j = 0; j < n_c; ++j) {
            const int64_t ch = Depthwise ? i2 : j;
            for (int64_t ky = 0; ky < a->ne[1]; ++ky) {
                const int64_t y_in = i1 * c.s1 + ky * c.d1 - c.p1;
                if (y_in < 0 || y_in >= b->ne[1]) {
                    continue;
                }
                const float * kr = read_row(a, ky, Depthwise ? 0 : ch, i2, kb);
                const float * xr = read_row(b, y_in, ch, i3, xb);
                for (int64_t ox = 0; ox < dst->ne[0]; ++ox) {
                    float acc = y[ox];
                    for (int64_t kx = 0; kx < a->ne[0]; ++kx) {
                        const int64_t x_in = ox * c.s0 + kx * c.d0 - c.p0;
                        if (x_in >= 0 && x_in < b->ne[0]) {
                            acc += kr[kx] * xr[x_in];
                        }
                    }
                    y[ox] = acc;
                }
            }
        }
        store_row(dst, i1, i2, i3, y);
    });
}

/// The channel-major copies a transposed convolution dots: ker holds the kernel slice of
/// one output channel as [positions][IC] in the kernel's type, src one input batch as
/// [positions][IC] in the dot's activation type (equal to the kernel's for f32 and f16).
struct transpose_scratch {
    const vec_dot_traits * dot;
    size_t                 row_bytes;  // IC elements of the kernel's type
    char *                 ker;
    char *                 src;
    float *                tmp;  // IC floats
    int64_t                ker_oc = -1;
    int64_t                src_n  = -1;
};

/// Bytes of scratch for kernel positions nk, input positions ni, ic channels, type t.
size_t transpose_work(gk_type t, int64_t nk, int64_t ni, int64_t ic) {
    const size_t row = gk_type_size(t) * static_cast<size_t>(ic);
    return scratch_bytes(row * static_cast<size_t>(nk)) + scratch_bytes(row * static_cast<size_t>(ni)) +
           scratch_bytes(static_cast<size_t>(ic) * sizeof(float));
}

transpose_scratch take_transpose_scratch(scratch & w, gk_type t, int64_t nk, int64_t ni, int64_t ic) {
    transpose_scratch s{get_vec_dot_traits(t), gk_type_size(t) * static_cast<size_t>(ic), nullptr, nullptr, nullptr};
    s.ker = static_cast<char *>(w.take(s.row_bytes * static_cast<size_t>(nk)));
    s.src = static_cast<char *>(w.take(s.row_bytes * static_cast<size_t>(ni)));
    s.tmp = w.floats(ic);
    return s;
}

/// Fill row `pos` of buf with get(ic) for every channel, encoded for the dot.
template <class F>
void put_channels(transpose_scratch & s, char * buf, int64_t pos, int64_t ic, F && get) {
    for (int64_t ch = 0; ch < ic; ++ch) {
        s.tmp[ch] = get(ch);
    }
    s.dot->from_float(s.tmp, buf + static_cast<size_t>(pos) * s.row_bytes, ic);
}

float dot_at(const transpose_scratch & s, int64_t ic, int64_t kpos, int64_t ipos) {
    float v = 0.0f;
    s.dot->vec_dot(ic, &v, s.ker + static_cast<size_t>(kpos) * s.row_bytes,
                   s.src + static_cast<size_t>(ipos) * s.row_bytes);
    return v;
}

/// a [K, OC, IC], b [L, IC] -> [(L-1)*s + K, OC]; row oc.
void conv_transpose_1d(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a  = dst->src[0];
    const gk_tensor * b  = dst->src[1];
    const int64_t     s  = gk_get_op_params_i32(dst, 0);
    const int64_t     k  = a->ne[0];
    const int64_t     ic = a->ne[2];
    scratch           w  = p.work();
    transpose_scratch t  = take_transpose_scratch(w, a->type, k, b->ne[0], ic);
    for_each_row(p, dst, [&](int64_t oc, int64_t, int64_t) {
        if (t.src_n < 0) {
            for (int64_t l = 0; l < b->ne[0]; ++l) {
                put_channels(t, t.src, l, ic, [&](int64_t ch) { return read_element(b, l, ch, 0, 0); });
            }
            t.src_n = 0;
        }
        for (int64_t kk = 0; kk < k; ++kk) {
            put_channels(t, t.ker, kk, ic, [&](int64_t ch) { return read_element(a, kk, oc, ch, 0); });
        }
        auto * y = reinterpret_cast<float *>(element_ptr(dst, 0, oc, 0, 0));
        for (int64_t o = 0; o < dst->ne[0]; ++o) {
            const row_range r   = windows_holding(o, k, s, b->ne[0]);
            float           acc = 0.0f;
            for (int64_t l = r.begin; l < r.end; ++l) {
                acc += dot_at(t, ic, o - l * s, l);
            }
            y[o] = acc;
        }
    });
}

/// a [KW, KH, OC, IC], b [W, H, IC, N] -> [(W-1)*s + KW, (H-1)*s + KH, OC, N]; row (y, oc, n).
void conv_transpose_2d(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a  = dst->src[0];
    const gk_tensor * b  = dst->src[1];
    const int64_t     s  = gk_get_op_params_i32(dst, 0);
    const int64_t     kw = a->ne[0], kh = a->ne[1], ic = a->ne[3];
    const int64_t     iw = b->ne[0], ih = b->ne[1];
    scratch           w = p.work();
    transpose_scratch t = take_transpose_scratch(w, a->type, kw * kh, iw * ih, ic);
    for_each_row(p, dst, [&](int64_t oy, int64_t oc, int64_t n) {
        if (t.src_n != n) {
            for (int64_t pos = 0; pos < iw * ih; ++pos) {
                put_channels(t, t.src, pos, ic, [&](int64_t ch) { return read_element(b, pos % iw, pos / iw, ch, n); });
            }
            t.src_n = n;
        }
        if (t.ker_oc != oc) {
            for (int64_t pos = 0; pos < kw * kh; ++pos) {
                put_channels(t, t.ker, pos, ic,
                             [&](int64_t ch) { return read_element(a, pos % kw, pos / kw, oc, ch); });
            }
            t.ker_oc = oc;
        }
        auto *          y  = reinterpret_cast<float *>(element_ptr(dst, 0, oy, oc, n));
        const row_range ry = windows_holding(oy, kh, s, ih);
        for (int64_t ox = 0; ox < dst->ne[0]; ++ox) {
            const row_range rx  = windows_holding(ox, kw, s, iw);
            float           acc = 0.0f;
            for (int64_t yi = ry.begin; yi < ry.end; ++yi) {
                for (int64_t xi = rx.begin; xi < rx.end; ++xi) {
                    acc += dot_at(t, ic, (oy - yi * s) * kw + (ox - xi * s), yi * iw + xi);
                }
            }
            y[ox] = acc;
        }
    });
}

size_t conv_transpose_1d_work(const gk_tensor * dst) {
    return transpose_work(dst->src[0]->type, dst->src[0]->ne[0], dst->src[1]->ne[0], dst->src[0]->ne[2]);
}

size_t conv_transpose_2d_work(const gk_tensor * dst) {
    const gk_tensor * a = dst->src[0];
    const gk_tensor * b = dst->src[1];
    return transpose_work(a->type, a->ne[0] * a->ne[1], b->ne[0] * b->ne[1], a->ne[3]);
}

}  // namespace

void register_conv(kernel_table & t) {
    t.ops[GK_OP_IM2COL]            = {im2col, nullptr};
    t.ops[GK_OP_IM2COL_BACK]       = {im2col_back, nullptr};
    t.ops[GK_OP_COL2IM_1D]         = {col2im_1d, nullptr};
    t.ops[GK_OP_CONV_2D]           = {conv_2d_rows<false>, nullptr};
    t.ops[GK_OP_CONV_2D_DW]        = {conv_2d_rows<true>, nullptr};
    t.ops[GK_OP_CONV_TRANSPOSE_1D] = {conv_transpose_1d, conv_transpose_1d_work};
    t.ops[GK_OP_CONV_TRANSPOSE_2D] = {conv_transpose_2d, conv_transpose_2d_work};
}

}  // namespace gk::cpu
