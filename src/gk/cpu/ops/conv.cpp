// conv.cpp - im2col (1-, 2- and 3-D), im2col_back, col2im_1d, the direct convolutions
// (conv_2d, conv_2d_dw, conv_3d) and the transposed convolutions (conv_transpose_1d,
// conv_transpose_2d).
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
#include "quant/fp16.h"
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

/// The windows of a convolution over up to three dims (x, y, z; an unused dim has k = in
/// = 1): kernel size, input size, stride, padding, dilation.
struct window3 {
    int64_t k[3], in[3], s[3], p[3], d[3];

    /// Input coordinate of kernel tap t of output o in dim i.
    int64_t at(int i, int64_t o, int64_t t) const { return o * s[i] + t * d[i] - p[i]; }
    bool    inside(int i, int64_t c) const { return c >= 0 && c < in[i]; }
};

/// im2col's row for output position o: element ((ch*KZ + kz)*KY + ky)*KX + kx is
/// read(x, y, z, ch) at the tap's input coordinates, 0 outside the input.
template <class Read>
void unfold(const window3 & g, int64_t n_ch, const int64_t o[3], float * row, Read && read) {
    int64_t j = 0;
    for (int64_t ch = 0; ch < n_ch; ++ch) {
        for (int64_t kz = 0; kz < g.k[2]; ++kz) {
            const int64_t z = g.at(2, o[2], kz);
            for (int64_t ky = 0; ky < g.k[1]; ++ky) {
                const int64_t y = g.at(1, o[1], ky);
                for (int64_t kx = 0; kx < g.k[0]; ++kx, ++j) {
                    const int64_t x = g.at(0, o[0], kx);
                    row[j]          = g.inside(0, x) && g.inside(1, y) && g.inside(2, z) ? read(x, y, z, ch) : 0.0f;
                }
            }
        }
    }
}

/// Row (ow, oh, n) of dst [IC*KH*KW, OW, OH, N] (2-D) or (ow, n) of [IC*K, OW, N] (1-D).
void im2col(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a = dst->src[0];
    const gk_tensor * b = dst->src[1];
    const conv_params c = get_conv_params(dst);
    const window3     g{{a->ne[0], c.is_2d ? a->ne[1] : 1, 1},
                    {b->ne[0], c.is_2d ? b->ne[1] : 1, 1},
                    {c.s0, c.s1, 1},
                    {c.p0, c.p1, 0},
                    {c.d0, c.d1, 1}};
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int64_t o[3] = {i1, c.is_2d ? i2 : 0, 0};
        const int64_t n    = c.is_2d ? i3 : i2;
        float *       y    = out_row(dst, i1, i2, i3, yb);
        unfold(g, c.is_2d ? b->ne[2] : b->ne[1], o, y, [&](int64_t x, int64_t yy, int64_t, int64_t ch) {
            return c.is_2d ? read_element(b, x, yy, ch, n) : read_element(b, x, ch, n, 0);
        });
        store_row(dst, i1, i2, i3, y);
    });
}

/// op_params of im2col_3d and conv_3d: i32 s0, s1, s2, p0, p1, p2, d0, d1, d2, then the
/// channel count(s).
window3 get_window3(const gk_tensor * dst, const gk_tensor * a, const gk_tensor * b) {
    window3 g{{a->ne[0], a->ne[1], a->ne[2]}, {b->ne[0], b->ne[1], b->ne[2]}, {}, {}, {}};
    for (int i = 0; i < 3; ++i) {
        g.s[i] = gk_get_op_params_i32(dst, i);
        g.p[i] = gk_get_op_params_i32(dst, 3 + i);
        g.d[i] = gk_get_op_params_i32(dst, 6 + i);
    }
    return g;
}

/// Row (ow, oh, n*OD + od) of dst [IC*KD*KH*KW, OW, OH, OD*N] from b [W, H, D, N*IC].
void im2col_3d(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * b  = dst->src[1];
    const window3     g  = get_window3(dst, dst->src[0], b);
    const int64_t     ic = gk_get_op_params_i32(dst, 9);
    const int64_t     od = dst->ne[3] / (b->ne[3] / ic);
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int64_t o[3] = {i1, i2, i3 % od};
        const int64_t n    = i3 / od;
        float *       y    = out_row(dst, i1, i2, i3, yb);
        unfold(g, ic, o, y,
               [&](int64_t x, int64_t yy, int64_t z, int64_t ch) { return read_element(b, x, yy, z, n * ic + ch); });
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

/// A destination row of a direct convolution: output row oy of depth oz, channel oc, batch n.
struct conv_out {
    int64_t oy, oz, oc, n;
};

/// One destination row of a direct convolution: every output accumulates kernel * input
/// in f32 over its input channels, then kz, ky, kx, in that order; input_to_f16 rounds the
/// input to f16 first (ggml's CPU kernel converts it to an f16 kernel's type). rows(i1, i2, i3) gives
/// {oy, oz, oc, n}; chans(oc) the input channels [begin, end); krow / xrow the rows of a
/// (taps ky, kz of channel ic for oc) and of b (input y, z of channel ic, batch n).
template <class Rows, class Chans, class KRow, class XRow>
void conv_direct(const compute_params & p, gk_tensor * dst, const window3 & g, bool input_to_f16, Rows && rows,
                 Chans && chans, KRow && krow, XRow && xrow) {
    const gk_tensor * a  = dst->src[0];
    const gk_tensor * b  = dst->src[1];
    scratch           w  = p.work();
    float *           yb = w.floats(dst->ne[0]);
    float *           kb = w.floats(a->ne[0]);
    float *           xb = w.floats(b->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const conv_out  o = rows(i1, i2, i3);
        const row_range r = chans(o.oc);
        float *         y = out_row(dst, i1, i2, i3, yb);
        std::memset(y, 0, static_cast<size_t>(dst->ne[0]) * sizeof(float));
        for (int64_t ic = r.begin; ic < r.end; ++ic) {
            for (int64_t kz = 0; kz < g.k[2]; ++kz) {
                const int64_t z = g.at(2, o.oz, kz);
                for (int64_t ky = 0; ky < g.k[1]; ++ky) {
                    const int64_t yy = g.at(1, o.oy, ky);
                    if (!g.inside(2, z) || !g.inside(1, yy)) {
                        continue;
                    }
                    const row_index ki = krow(ky, kz, ic, o.oc);
                    const row_index xi = xrow(yy, z, ic, o.n);
                    const float *   kr = read_row(a, ki.i1, ki.i2, ki.i3, kb);
                    const float *   xr = read_row(b, xi.i1, xi.i2, xi.i3, xb);
                    if (input_to_f16) {
                        for (int64_t i = 0; i < b->ne[0]; ++i) {
                            xb[i] = fp16_to_fp32(fp32_to_fp16(xr[i]));
                        }
                        xr = xb;
                    }
                    for (int64_t ox = 0; ox < dst->ne[0]; ++ox) {
                        float acc = y[ox];
                        for (int64_t kx = 0; kx < g.k[0]; ++kx) {
                            const int64_t x = g.at(0, ox, kx);
                            if (g.inside(0, x)) {
                                acc += kr[kx] * xr[x];
                            }
                        }
                        y[ox] = acc;
                    }
                }
            }
        }
        store_row(dst, i1, i2, i3, y);
    });
}

/// The 2-D window of a direct 2-D convolution (op_params s0, s1, p0, p1, d0, d1).
window3 window_2d(const gk_tensor * dst) {
    const gk_tensor * a = dst->src[0];
    const gk_tensor * b = dst->src[1];
    const conv_params c = get_conv_params(dst);
    return {{a->ne[0], a->ne[1], 1}, {b->ne[0], b->ne[1], 1}, {c.s0, c.s1, 1}, {c.p0, c.p1, 0}, {c.d0, c.d1, 1}};
}

/// a [KW, KH, IC, OC], b [W, H, IC, N] -> [OW, OH, OC, N]; row (oh, oc, n).
void conv_2d(const compute_params & p, gk_tensor * dst) {
    const int64_t n_ic = dst->src[0]->ne[2];
    conv_direct(
        p, dst, window_2d(dst), dst->src[0]->type == GK_TYPE_F16,
        [](int64_t i1, int64_t i2, int64_t i3) {
            return conv_out{i1, 0, i2, i3};
        },
        [n_ic](int64_t) {
            return row_range{0, n_ic};
        },
        [](int64_t ky, int64_t, int64_t ic, int64_t oc) {
            return row_index{ky, ic, oc};
        },
        [](int64_t y, int64_t, int64_t ic, int64_t n) {
            return row_index{y, ic, n};
        });
}

/// a [KW, KH, 1, C], b [W, H, C, N] -> [OW, OH, C, N]; row (oh, c, n) reads channel c only.
void conv_2d_dw(const compute_params & p, gk_tensor * dst) {
    conv_direct(
        p, dst, window_2d(dst), false,
        [](int64_t i1, int64_t i2, int64_t i3) {
            return conv_out{i1, 0, i2, i3};
        },
        [](int64_t c) {
            return row_range{c, c + 1};
        },
        [](int64_t ky, int64_t, int64_t, int64_t c) {
            return row_index{ky, 0, c};
        },
        [](int64_t y, int64_t, int64_t c, int64_t n) {
            return row_index{y, c, n};
        });
}

/// a [KW, KH, KD, OC*IC], b [W, H, D, N*IC] -> [OW, OH, OD, N*OC] (op_params i32 s0..d2, then
/// IC, N, OC); row (oh, od, n*OC + oc).
void conv_3d(const compute_params & p, gk_tensor * dst) {
    const int64_t ic = gk_get_op_params_i32(dst, 9);
    const int64_t oc = gk_get_op_params_i32(dst, 11);
    conv_direct(
        p, dst, get_window3(dst, dst->src[0], dst->src[1]), dst->src[0]->type == GK_TYPE_F16,
        [oc](int64_t i1, int64_t i2, int64_t i3) {
            return conv_out{i1, i2, i3 % oc, i3 / oc};
        },
        [ic](int64_t) {
            return row_range{0, ic};
        },
        [ic](int64_t ky, int64_t kz, int64_t c, int64_t o) {
            return row_index{ky, kz, o * ic + c};
        },
        [ic](int64_t y, int64_t z, int64_t c, int64_t n) {
            return row_index{y, z, n * ic + c};
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
    t.ops[GK_OP_IM2COL_3D]         = {im2col_3d, nullptr};
    t.ops[GK_OP_CONV_2D]           = {conv_2d, nullptr};
    t.ops[GK_OP_CONV_2D_DW]        = {conv_2d_dw, nullptr};
    t.ops[GK_OP_CONV_3D]           = {conv_3d, nullptr};
    t.ops[GK_OP_CONV_TRANSPOSE_1D] = {conv_transpose_1d, conv_transpose_1d_work};
    t.ops[GK_OP_CONV_TRANSPOSE_2D] = {conv_transpose_2d, conv_transpose_2d_work};
}

}  // namespace gk::cpu
