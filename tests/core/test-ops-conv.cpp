// test-ops-conv - the convolution, pooling and resampling ops against references computed
// here in double: im2col (f32, f16, 1-D, 2-D) and im2col_back, conv_1d / conv_2d and
// their depthwise forms (ggml's im2col + mul_mat compositions), the direct convolutions,
// the transposed convolutions, pool_1d / pool_2d / pool_2d_back, interpolate in every
// mode, pad_reflect_1d; and the builders' refusals of bad input.
#include "op_check.h"

#include "quant/fp16.h"

#include <algorithm>
#include <cfloat>
#include <cstring>

namespace {

using namespace gk_test;

double round16(double v) { return gk::fp16_to_fp32(gk::fp32_to_fp16(static_cast<float>(v))); }

std::vector<double> rounded16(std::vector<double> v) {
    for (double & x : v) {
        x = round16(x);
    }
    return v;
}

/// A convolution's geometry: strides, paddings, dilations in dims 0 and 1.
struct geom {
    int s0, s1, p0, p1, d0, d1;
};

int64_t conv_out(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

/// out[ox, oy, oc, n] = sum k[kx, ky, ic, oc] x[ox*s0 + kx*d0 - p0, oy*s1 + ky*d1 - p1, ic, n] with
/// kernel shape kn [KW, KH, IC, OC] and input xn [W, H, IC, N]. Depthwise: kn [KW, KH, 1, C],
/// channel oc reads input channel oc only.
std::vector<double> conv_ref(const std::vector<double> & k, const int64_t kn[4], const std::vector<double> & x,
                             const int64_t xn[4], geom g, bool depthwise) {
    const int64_t       ow = conv_out(xn[0], kn[0], g.s0, g.p0, g.d0), oh = conv_out(xn[1], kn[1], g.s1, g.p1, g.d1);
    const int64_t       oc_n = depthwise ? xn[2] : kn[3];
    std::vector<double> out;
    for (int64_t n = 0; n < xn[3]; ++n) {
        for (int64_t oc = 0; oc < oc_n; ++oc) {
            for (int64_t oy = 0; oy < oh; ++oy) {
                for (int64_t ox = 0; ox < ow; ++ox) {
                    double acc = 0;
                    for (int64_t ic = 0; ic < (depthwise ? 1 : kn[2]); ++ic) {
                        const int64_t xc = depthwise ? oc : ic;
                        for (int64_t ky = 0; ky < kn[1]; ++ky) {
                            for (int64_t kx = 0; kx < kn[0]; ++kx) {
                                const int64_t ix = ox * g.s0 + kx * g.d0 - g.p0, iy = oy * g.s1 + ky * g.d1 - g.p1;
                                if (ix >= 0 && ix < xn[0] && iy >= 0 && iy < xn[1]) {
                                    acc += k[flat(kn, kx, ky, ic, oc)] * x[flat(xn, ix, iy, xc, n)];
                                }
                            }
                        }
                    }
                    out.push_back(acc);
                }
            }
        }
    }
    return out;
}

TEST(OpsConv, Im2col2dBothTypes) {
    for (gk_type dt : {GK_TYPE_F32, GK_TYPE_F16}) {
        env         e;
        gk_tensor * a = e.f32(3, 2, 4, 5);  // KW 3, KH 2, IC 4, OC 5
        gk_tensor * b = e.f32(9, 7, 4, 2);
        const geom  g{2, 1, 1, 0, 1, 2};
        gk_tensor * y = gk_im2col(e.ctx, a, b, g.s0, g.s1, g.p0, g.p1, g.d0, g.d1, true, dt);
        ASSERT_TRUE(compute(e.ctx, y));
        const int64_t ow = conv_out(9, 3, 2, 1, 1), oh = conv_out(7, 2, 1, 0, 2);
        ASSERT_EQ(y->ne[0], 24);
        ASSERT_EQ(y->ne[1], ow);
        ASSERT_EQ(y->ne[2], oh);
        ASSERT_EQ(y->ne[3], 2);
        const auto          vb = values(b);
        std::vector<double> ref;
        for (int64_t n = 0; n < 2; ++n) {
            for (int64_t oy = 0; oy < oh; ++oy) {
                for (int64_t ox = 0; ox < ow; ++ox) {
                    for (int64_t ic = 0; ic < 4; ++ic) {
                        for (int64_t ky = 0; ky < 2; ++ky) {
                            for (int64_t kx = 0; kx < 3; ++kx) {
                                const int64_t ix = ox * 2 + kx - 1, iy = oy + ky * 2;
                                const bool    in = ix >= 0 && ix < 9 && iy >= 0 && iy < 7;
                                ref.push_back(in ? vb[flat(b->ne, ix, iy, ic, n)] : 0.0);
                            }
                        }
                    }
                }
            }
        }
        expect_close(y, dt == GK_TYPE_F16 ? rounded16(ref) : ref, 0, 0, gk_type_name(dt));
    }
}

TEST(OpsConv, Im2col1dAndItsGradient) {
    env         e;
    gk_tensor * a = e.f32(4, 3, 2);   // K 4, IC 3, OC 2
    gk_tensor * b = e.f32(11, 3, 2);  // L 11, IC 3, N 2
    gk_tensor * y = gk_im2col(e.ctx, a, b, 2, 0, 2, 0, 1, 0, false, GK_TYPE_F32);
    ASSERT_TRUE(compute(e.ctx, y));
    const int64_t ol = conv_out(11, 4, 2, 2, 1);
    ASSERT_EQ(y->ne[1], ol);
    const auto          vb = values(b);
    std::vector<double> ref;
    for (int64_t n = 0; n < 2; ++n) {
        for (int64_t o = 0; o < ol; ++o) {
            for (int64_t ic = 0; ic < 3; ++ic) {
                for (int64_t k = 0; k < 4; ++k) {
                    const int64_t i = o * 2 + k - 2;
                    ref.push_back(i >= 0 && i < 11 ? vb[flat(b->ne, i, ic, n)] : 0.0);
                }
            }
        }
    }
    expect_close(y, ref, 0, 0, "im2col 1-D");

    // im2col_back of a gradient g: the image element at i gets every g entry im2col copied from i.
    for (bool is_2d : {false, true}) {
        env           f;
        gk_tensor *   k     = is_2d ? f.f32(3, 2, 2, 1) : f.f32(3, 2, 1);
        int64_t       ne[4] = {8, is_2d ? 6 : 2, is_2d ? 2 : 1, 1};
        const geom    g{2, 2, 1, 1, 1, 2};
        const int64_t ow = conv_out(8, 3, g.s0, g.p0, g.d0);
        const int64_t oh = is_2d ? conv_out(6, 2, g.s1, g.p1, g.d1) : 1;
        gk_tensor *   gr = is_2d ? f.f32(12, ow, oh, 1) : f.f32(6, ow, 1);
        gk_tensor *   x  = gk_im2col_back(f.ctx, gr, k, ne, g.s0, g.s1, g.p0, g.p1, g.d0, g.d1, is_2d);
        ASSERT_TRUE(compute(f.ctx, x));
        const auto          vg = values(gr);
        std::vector<double> r(static_cast<size_t>(ne[0] * ne[1] * ne[2] * ne[3]), 0.0);
        const int64_t       kh = is_2d ? 2 : 1, ic_n = is_2d ? ne[2] : ne[1];
        for (int64_t oy = 0; oy < oh; ++oy) {
            for (int64_t ox = 0; ox < ow; ++ox) {
                for (int64_t ic = 0; ic < ic_n; ++ic) {
                    for (int64_t ky = 0; ky < kh; ++ky) {
                        for (int64_t kx = 0; kx < 3; ++kx) {
                            const int64_t ix = ox * g.s0 + kx * g.d0 - g.p0;
                            const int64_t iy = is_2d ? oy * g.s1 + ky * g.d1 - g.p1 : 0;
                            if (ix < 0 || ix >= 8 || iy < 0 || iy >= (is_2d ? 6 : 1)) {
                                continue;
                            }
                            const int64_t col = (ic * kh + ky) * 3 + kx;
                            const double  v   = vg[flat(gr->ne, col, ox, oy, 0)];
                            r[is_2d ? flat(ne, ix, iy, ic, 0) : flat(ne, ix, ic, 0, 0)] += v;
                        }
                    }
                }
            }
        }
        expect_close(x, r, 1e-6, 1e-6, is_2d ? "im2col_back 2-D" : "im2col_back 1-D");
    }
}

TEST(OpsConv, Col2im1dOverlapAdds) {
    for (gk_type t : {GK_TYPE_F32, GK_TYPE_F16}) {
        env         e;
        gk_tensor * a = e.rand(t, 4 * 3, 7);  // K 4, OC 3, T_in 7
        gk_tensor * y = gk_col2im_1d(e.ctx, a, 2, 3, 1);
        ASSERT_TRUE(compute(e.ctx, y));
        ASSERT_EQ(y->ne[0], 6 * 2 + 4 - 2);
        EXPECT_EQ(y->type, t);
        const auto          va = values(a);
        std::vector<double> full(static_cast<size_t>(3 * 16), 0.0);  // uncropped [16, 3]
        for (int64_t ti = 0; ti < 7; ++ti) {
            for (int64_t oc = 0; oc < 3; ++oc) {
                for (int64_t k = 0; k < 4; ++k) {
                    full[static_cast<size_t>(oc * 16 + ti * 2 + k)] += va[flat(a->ne, oc * 4 + k, ti)];
                }
            }
        }
        std::vector<double> ref;
        for (int64_t oc = 0; oc < 3; ++oc) {
            for (int64_t i = 0; i < 14; ++i) {
                ref.push_back(full[static_cast<size_t>(oc * 16 + i + 1)]);
            }
        }
        expect_close(y, t == GK_TYPE_F16 ? rounded16(ref) : ref, 1e-6, t == GK_TYPE_F16 ? 1e-3 : 1e-6, gk_type_name(t));
    }
}

TEST(OpsConv, Conv2dAsGgmlComposesIt) {
    for (gk_type kt : {GK_TYPE_F32, GK_TYPE_F16}) {
        env         e;
        gk_tensor * a = e.rand(kt, 3, 3, 4, 6);
        gk_tensor * b = e.f32(10, 9, 4, 2);
        const geom  g{1, 2, 1, 1, 2, 1};
        gk_tensor * y = gk_conv_2d(e.ctx, a, b, g.s0, g.s1, g.p0, g.p1, g.d0, g.d1);
        ASSERT_TRUE(compute(e.ctx, y));
        EXPECT_EQ(y->type, GK_TYPE_F32);
        // im2col rounds the input to f16 and mul_mat rounds the kernel to f16.
        const auto ref = conv_ref(rounded16(values(a)), a->ne, rounded16(values(b)), b->ne, g, false);
        ASSERT_EQ(y->ne[2], 6);
        expect_close(y, ref, 1e-4, 1e-4, gk_type_name(kt));
    }
    env         e;
    gk_tensor * a  = e.f32(2, 2, 3, 4);
    gk_tensor * b  = e.f32(8, 6, 3, 1);
    gk_tensor * sk = gk_conv_2d_sk_p0(e.ctx, a, b);
    gk_tensor * ph = gk_conv_2d_s1_ph(e.ctx, a, b);
    ASSERT_TRUE(compute(e.ctx, sk));
    ASSERT_TRUE(compute(e.ctx, ph));
    const auto va = rounded16(values(a)), vb = rounded16(values(b));
    expect_close(sk, conv_ref(va, a->ne, vb, b->ne, {2, 2, 0, 0, 1, 1}, false), 1e-4, 1e-4, "conv_2d_sk_p0");
    expect_close(ph, conv_ref(va, a->ne, vb, b->ne, {1, 1, 1, 1, 1, 1}, false), 1e-4, 1e-4, "conv_2d_s1_ph");
}

/// ggml's conv_1d views mul_mat's [N*OL, OC] product as [OL, OC, N] without a permute,
/// so for N > 1 output (ol, oc, n) of the convolution lands at flat index n*OL + ol + oc*N*OL.
std::vector<double> ggml_conv_1d_layout(const std::vector<double> & conv, const int64_t ne[4]) {
    std::vector<double> out(conv.size());
    for (int64_t n = 0; n < ne[2]; ++n) {
        for (int64_t oc = 0; oc < ne[1]; ++oc) {
            for (int64_t ol = 0; ol < ne[0]; ++ol) {
                out[static_cast<size_t>(n * ne[0] + ol + oc * ne[2] * ne[0])] = conv[flat(ne, ol, oc, n)];
            }
        }
    }
    return out;
}

TEST(OpsConv, Conv1dAndDepthwise) {
    env         e;
    gk_tensor * a  = e.f32(5, 3, 4);   // K 5, IC 3, OC 4
    gk_tensor * b  = e.f32(17, 3, 2);  // L 17, IC 3, N 2
    gk_tensor * y  = gk_conv_1d(e.ctx, a, b, 2, 1, 1);
    gk_tensor * ph = gk_conv_1d_ph(e.ctx, a, b, 1, 2);
    ASSERT_TRUE(compute(e.ctx, y));
    ASSERT_TRUE(compute(e.ctx, ph));
    const int64_t kn[4] = {5, 1, 3, 4}, xn[4] = {17, 1, 3, 2};
    const auto    va = rounded16(values(a)), vb = rounded16(values(b));
    expect_close(y, ggml_conv_1d_layout(conv_ref(va, kn, vb, xn, {2, 1, 1, 0, 1, 1}, false), y->ne), 1e-4, 1e-4,
                 "conv_1d");
    expect_close(ph, ggml_conv_1d_layout(conv_ref(va, kn, vb, xn, {1, 1, 2, 0, 2, 1}, false), ph->ne), 1e-4, 1e-4,
                 "conv_1d_ph");

    gk_tensor * ad = e.f32(3, 1, 6);  // K 3, one channel each, C 6
    gk_tensor * bd = e.f32(20, 6);
    gk_tensor * yd = gk_conv_1d_dw(e.ctx, ad, bd, 1, 1, 2);
    ASSERT_TRUE(compute(e.ctx, yd));
    const int64_t kd[4] = {3, 1, 1, 6}, xd[4] = {20, 1, 6, 1};
    expect_close(yd, conv_ref(rounded16(values(ad)), kd, rounded16(values(bd)), xd, {1, 1, 1, 0, 2, 1}, true), 1e-4,
                 1e-4, "conv_1d_dw");

    gk_tensor * a2 = e.f32(3, 3, 1, 5);
    gk_tensor * b2 = e.f32(9, 8, 5, 2);
    gk_tensor * y2 = gk_conv_2d_dw(e.ctx, a2, b2, 2, 1, 1, 1, 1, 1);
    ASSERT_TRUE(compute(e.ctx, y2));
    // Here the kernel is mul_mat's weight (kept f32) and the f16 columns its activations.
    expect_close(y2, conv_ref(values(a2), a2->ne, rounded16(values(b2)), b2->ne, {2, 1, 1, 1, 1, 1}, true), 1e-4, 1e-4,
                 "conv_2d_dw");
}

/// 3-D convolution in ggml's folded layout: kernel [KW, KH, KD, OC*IC] (o*IC + i), input
/// [W, H, D, N*IC] (n*IC + i) -> [OW, OH, OD, N*OC] (n*OC + o).
std::vector<double> conv_3d_ref(const std::vector<double> & k, const int64_t kn[4], const std::vector<double> & x,
                                const int64_t xn[4], int64_t ic_n, const int s[3], const int pd[3], const int d[3]) {
    const int64_t oc_n = kn[3] / ic_n, n_n = xn[3] / ic_n;
    int64_t       o[3];
    for (int i = 0; i < 3; ++i) {
        o[i] = conv_out(xn[i], kn[i], s[i], pd[i], d[i]);
    }
    std::vector<double> out;
    for (int64_t n = 0; n < n_n; ++n) {
        for (int64_t oc = 0; oc < oc_n; ++oc) {
            for (int64_t oz = 0; oz < o[2]; ++oz) {
                for (int64_t oy = 0; oy < o[1]; ++oy) {
                    for (int64_t ox = 0; ox < o[0]; ++ox) {
                        double acc = 0;
                        for (int64_t ic = 0; ic < ic_n; ++ic) {
                            for (int64_t kz = 0; kz < kn[2]; ++kz) {
                                for (int64_t ky = 0; ky < kn[1]; ++ky) {
                                    for (int64_t kx = 0; kx < kn[0]; ++kx) {
                                        const int64_t ix = ox * s[0] + kx * d[0] - pd[0];
                                        const int64_t iy = oy * s[1] + ky * d[1] - pd[1];
                                        const int64_t iz = oz * s[2] + kz * d[2] - pd[2];
                                        if (ix >= 0 && ix < xn[0] && iy >= 0 && iy < xn[1] && iz >= 0 && iz < xn[2]) {
                                            acc += k[flat(kn, kx, ky, kz, oc * ic_n + ic)] *
                                                   x[flat(xn, ix, iy, iz, n * ic_n + ic)];
                                        }
                                    }
                                }
                            }
                        }
                        out.push_back(acc);
                    }
                }
            }
        }
    }
    return out;
}

TEST(OpsConv, ThreeDimensional) {
    env         e;
    const int   s[3] = {1, 2, 1}, pd[3] = {1, 0, 1}, d[3] = {1, 1, 2};
    gk_tensor * a    = e.f32(3, 2, 2, 3 * 2);  // KW 3, KH 2, KD 2, OC 3 * IC 2
    gk_tensor * b    = e.f32(6, 5, 7, 2 * 2);  // W 6, H 5, D 7, N 2 * IC 2
    gk_tensor * cols = gk_im2col_3d(e.ctx, a, b, 2, s[0], s[1], s[2], pd[0], pd[1], pd[2], d[0], d[1], d[2],
                                    GK_TYPE_F32);
    gk_tensor * y    = gk_conv_3d(e.ctx, a, b, 2, s[0], s[1], s[2], pd[0], pd[1], pd[2], d[0], d[1], d[2]);
    gk_tensor * yd   = gk_conv_3d_direct(e.ctx, a, b, s[0], s[1], s[2], pd[0], pd[1], pd[2], d[0], d[1], d[2], 2, 2, 3);
    for (gk_tensor * t : {cols, y, yd}) {
        ASSERT_TRUE(compute(e.ctx, t));
    }
    int64_t o[3];
    for (int i = 0; i < 3; ++i) {
        o[i] = conv_out(b->ne[i], a->ne[i], s[i], pd[i], d[i]);
    }
    ASSERT_EQ(cols->ne[0], 24);
    ASSERT_EQ(cols->ne[3], o[2] * 2);
    const auto          vb = values(b);
    std::vector<double> rc;
    for (int64_t n = 0; n < 2; ++n) {
        for (int64_t oz = 0; oz < o[2]; ++oz) {
            for (int64_t oy = 0; oy < o[1]; ++oy) {
                for (int64_t ox = 0; ox < o[0]; ++ox) {
                    for (int64_t ic = 0; ic < 2; ++ic) {
                        for (int64_t kz = 0; kz < 2; ++kz) {
                            for (int64_t ky = 0; ky < 2; ++ky) {
                                for (int64_t kx = 0; kx < 3; ++kx) {
                                    const int64_t ix = ox * s[0] + kx * d[0] - pd[0];
                                    const int64_t iy = oy * s[1] + ky * d[1] - pd[1];
                                    const int64_t iz = oz * s[2] + kz * d[2] - pd[2];
                                    const bool    in = ix >= 0 && ix < 6 && iy >= 0 && iy < 5 && iz >= 0 && iz < 7;
                                    rc.push_back(in ? vb[flat(b->ne, ix, iy, iz, n * 2 + ic)] : 0.0);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    expect_close(cols, rc, 0, 0, "im2col_3d");
    expect_close(yd, conv_3d_ref(values(a), a->ne, vb, b->ne, 2, s, pd, d), 1e-5, 1e-5, "conv_3d_direct");
    // The composition rounds both to f16 (im2col_3d's columns, mul_mat's activations).
    expect_close(y, conv_3d_ref(rounded16(values(a)), a->ne, rounded16(vb), b->ne, 2, s, pd, d), 1e-4, 1e-4, "conv_3d");
}

TEST(OpsConv, DirectConvolutions) {
    env         e;
    gk_tensor * a = e.f32(3, 2, 4, 5);
    gk_tensor * b = e.f32(11, 7, 4, 2);
    const geom  g{2, 1, 1, 2, 1, 2};
    gk_tensor * y  = gk_conv_2d_direct(e.ctx, a, b, g.s0, g.s1, g.p0, g.p1, g.d0, g.d1);
    gk_tensor * ad = e.f32(3, 3, 1, 4);
    gk_tensor * bd = e.f32(10, 9, 4, 2);
    gk_tensor * yd = gk_conv_2d_dw_direct(e.ctx, ad, bd, 1, 2, 1, 0, 2, 1);
    gk_tensor * bh = e.rand(GK_TYPE_F16, 11, 7, 4, 2);
    gk_tensor * yh = gk_conv_2d_direct(e.ctx, a, bh, g.s0, g.s1, g.p0, g.p1, g.d0, g.d1);
    for (gk_tensor * t : {y, yd, yh}) {
        ASSERT_TRUE(compute(e.ctx, t));
    }
    expect_close(y, conv_ref(values(a), a->ne, values(b), b->ne, g, false), 1e-5, 1e-5, "conv_2d_direct");
    expect_close(yd, conv_ref(values(ad), ad->ne, values(bd), bd->ne, {1, 2, 1, 0, 2, 1}, true), 1e-5, 1e-5,
                 "conv_2d_dw_direct");
    // A channel-innermost input (a permuted [C, W, H, N] tensor) gives a result laid out the same way.
    gk_tensor * cw = gk_permute(e.ctx, e.f32(4, 10, 9, 2), 2, 0, 1, 3);  // [10, 9, 4, 2] viewed
    gk_tensor * yc = gk_conv_2d_dw_direct(e.ctx, ad, cw, 1, 2, 1, 0, 2, 1);
    ASSERT_TRUE(compute(e.ctx, yc));
    EXPECT_EQ(yc->nb[2], sizeof(float));
    EXPECT_EQ(yc->nb[0], 4 * sizeof(float));
    expect_close(yc, conv_ref(values(ad), ad->ne, values(cw), cw->ne, {1, 2, 1, 0, 2, 1}, true), 1e-5, 1e-5,
                 "conv_2d_dw_direct channels innermost");
    // An f16 kernel takes the input rounded to f16 (as ggml's CPU kernel).
    gk_tensor * a16 = e.rand(GK_TYPE_F16, 3, 2, 4, 5);
    gk_tensor * y16 = gk_conv_2d_direct(e.ctx, a16, b, g.s0, g.s1, g.p0, g.p1, g.d0, g.d1);
    ASSERT_TRUE(compute(e.ctx, y16));
    expect_close(y16, conv_ref(values(a16), a16->ne, rounded16(values(b)), b->ne, g, false), 1e-5, 1e-5,
                 "conv_2d_direct f16 kernel");
    EXPECT_EQ(yh->type, GK_TYPE_F16);
    expect_close(yh, conv_ref(values(a), a->ne, values(bh), bh->ne, g, false), 2e-3, 2e-3, "conv_2d_direct f16");
}

TEST(OpsConv, TransposedConvolutions) {
    for (gk_type kt : {GK_TYPE_F32, GK_TYPE_F16}) {
        env         e;
        gk_tensor * a = e.rand(kt, 4, 3, 5);  // K 4, OC 3, IC 5
        gk_tensor * b = e.f32(9, 5);          // L 9, IC 5
        gk_tensor * y = gk_conv_transpose_1d(e.ctx, a, b, 3, 0, 1);
        ASSERT_TRUE(compute(e.ctx, y));
        ASSERT_EQ(y->ne[0], 8 * 3 + 4);
        const auto          va = values(a);
        const auto          vb = kt == GK_TYPE_F16 ? rounded16(values(b)) : values(b);
        std::vector<double> ref(static_cast<size_t>(y->ne[0] * 3), 0.0);
        for (int64_t l = 0; l < 9; ++l) {
            for (int64_t k = 0; k < 4; ++k) {
                for (int64_t oc = 0; oc < 3; ++oc) {
                    for (int64_t ic = 0; ic < 5; ++ic) {
                        ref[static_cast<size_t>(oc * y->ne[0] + l * 3 + k)] += va[flat(a->ne, k, oc, ic)] *
                                                                               vb[flat(b->ne, l, ic)];
                    }
                }
            }
        }
        expect_close(y, ref, 1e-5, 1e-5, gk_type_name(kt));

        gk_tensor * a2 = e.rand(kt, 3, 2, 4, 6);  // KW 3, KH 2, OC 4, IC 6
        gk_tensor * b2 = e.f32(5, 4, 6, 2);
        gk_tensor * y2 = gk_conv_transpose_2d_p0(e.ctx, a2, b2, 2);
        ASSERT_TRUE(compute(e.ctx, y2));
        const auto          va2 = values(a2);
        const auto          vb2 = kt == GK_TYPE_F16 ? rounded16(values(b2)) : values(b2);
        std::vector<double> ref2(static_cast<size_t>(gk_nelements(y2)), 0.0);
        for (int64_t n = 0; n < 2; ++n) {
            for (int64_t iy = 0; iy < 4; ++iy) {
                for (int64_t ix = 0; ix < 5; ++ix) {
                    for (int64_t oc = 0; oc < 4; ++oc) {
                        for (int64_t ky = 0; ky < 2; ++ky) {
                            for (int64_t kx = 0; kx < 3; ++kx) {
                                for (int64_t ic = 0; ic < 6; ++ic) {
                                    ref2[flat(y2->ne, ix * 2 + kx, iy * 2 + ky, oc,
                                              n)] += va2[flat(a2->ne, kx, ky, oc, ic)] *
                                                     vb2[flat(b2->ne, ix, iy, ic, n)];
                                }
                            }
                        }
                    }
                }
            }
        }
        ASSERT_EQ(y2->ne[0], 4 * 2 + 3);
        ASSERT_EQ(y2->ne[1], 3 * 2 + 2);
        expect_close(y2, ref2, 1e-5, 1e-5, gk_type_name(kt));
    }
}

/// pool over the window [o*s - p, o*s - p + k) of each dim, skipping what lies outside.
TEST(OpsConv, Pooling) {
    for (gk_op_pool op : {GK_OP_POOL_MAX, GK_OP_POOL_AVG}) {
        env         e;
        gk_tensor * a  = e.rand(GK_TYPE_F16, 13, 4, 3);
        gk_tensor * y1 = gk_pool_1d(e.ctx, a, op, 3, 2, 1);
        gk_tensor * b  = e.f32(11, 9, 3, 2);
        gk_tensor * y2 = gk_pool_2d(e.ctx, b, op, 3, 2, 2, 2, 1.0f, 1.0f);
        ASSERT_TRUE(compute(e.ctx, y1));
        ASSERT_TRUE(compute(e.ctx, y2));
        const bool          mx = op == GK_OP_POOL_MAX;
        const auto          va = values(a), vb = values(b);
        std::vector<double> r1, r2;
        for (int64_t r = 0; r < 12; ++r) {
            for (int64_t o = 0; o < y1->ne[0]; ++o) {
                double acc = mx ? -FLT_MAX : 0.0;
                int    n   = 0;
                for (int64_t j = o * 2 - 1; j < o * 2 + 2; ++j) {
                    if (j >= 0 && j < 13) {
                        acc = mx ? std::max(acc, va[static_cast<size_t>(r * 13 + j)])
                                 : acc + va[static_cast<size_t>(r * 13 + j)];
                        ++n;
                    }
                }
                r1.push_back(mx ? acc : acc / n);
            }
        }
        ASSERT_EQ(y2->ne[0], 6);
        ASSERT_EQ(y2->ne[1], 5);
        for (int64_t pl = 0; pl < 6; ++pl) {
            for (int64_t oy = 0; oy < 5; ++oy) {
                for (int64_t ox = 0; ox < 6; ++ox) {
                    double acc = mx ? -FLT_MAX : 0.0;
                    for (int64_t ky = 0; ky < 2; ++ky) {
                        for (int64_t kx = 0; kx < 3; ++kx) {
                            const int64_t x = ox * 2 - 1 + kx, y = oy * 2 - 1 + ky;
                            if (x >= 0 && x < 11 && y >= 0 && y < 9) {
                                const double v = vb[static_cast<size_t>((pl * 9 + y) * 11 + x)];
                                acc            = mx ? std::max(acc, v) : acc + v;
                            }
                        }
                    }
                    r2.push_back(mx ? acc : acc / 6);
                }
            }
        }
        expect_close(y1, r1, 1e-6, 1e-6, mx ? "pool_1d max" : "pool_1d avg");
        expect_close(y2, r2, 1e-6, 1e-6, mx ? "pool_2d max" : "pool_2d avg");

        // The gradient: each output's gradient goes to its window's first largest element
        // (max) or is spread over the window in k0*k1 parts (avg).
        gk_tensor * g  = e.f32(6, 5, 3, 2);
        gk_tensor * gb = gk_pool_2d_back(e.ctx, g, b, op, 3, 2, 2, 2, 1.0f, 1.0f);
        ASSERT_TRUE(compute(e.ctx, gb));
        const auto          vg = values(g);
        std::vector<double> rb(vb.size(), 0.0);
        for (int64_t pl = 0; pl < 6; ++pl) {
            for (int64_t oy = 0; oy < 5; ++oy) {
                for (int64_t ox = 0; ox < 6; ++ox) {
                    const double gv   = vg[static_cast<size_t>((pl * 5 + oy) * 6 + ox)];
                    double       best = -FLT_MAX;
                    size_t       at   = SIZE_MAX;
                    for (int64_t ky = 0; ky < 2; ++ky) {
                        for (int64_t kx = 0; kx < 3; ++kx) {
                            const int64_t x = ox * 2 - 1 + kx, y = oy * 2 - 1 + ky;
                            if (x < 0 || x >= 11 || y < 0 || y >= 9) {
                                continue;
                            }
                            const size_t i = static_cast<size_t>((pl * 9 + y) * 11 + x);
                            if (!mx) {
                                rb[i] += gv / 6;
                            } else if (vb[i] > best) {
                                best = vb[i], at = i;
                            }
                        }
                    }
                    if (mx && at != SIZE_MAX) {
                        rb[at] += gv;
                    }
                }
            }
        }
        expect_close(gb, rb, 1e-6, 1e-6, mx ? "pool_2d_back max" : "pool_2d_back avg");
    }
}

/// ggml's sampling in double: bilinear / bicubic / antialiased at (i + off)/sf - off.
double clampi(double v, int64_t n) { return std::max(0.0, std::min(v, static_cast<double>(n - 1))); }

std::vector<double> interpolate_ref(const std::vector<double> & v, const int64_t in[4], const int64_t out[4],
                                    uint32_t mode) {
    const bool align = (mode & GK_SCALE_FLAG_ALIGN_CORNERS) != 0, aa = (mode & GK_SCALE_FLAG_ANTIALIAS) != 0;
    double     sf[2], off                                            = align ? 0.0 : 0.5;
    for (int d = 0; d < 2; ++d) {
        sf[d] = align && out[d] > 1 && in[d] > 1 ? static_cast<double>(out[d] - 1) / (in[d] - 1)
                                                 : static_cast<double>(out[d]) / in[d];
    }
    const auto px = [&](int64_t x, int64_t y, int64_t i2, int64_t i3) {
        return v[flat(in, static_cast<int64_t>(clampi(static_cast<double>(x), in[0])),
                      static_cast<int64_t>(clampi(static_cast<double>(y), in[1])), i2, i3)];
    };
    const auto cubic = [](double p0, double p1, double p2, double p3, double t) {
        const double a  = -0.75;
        const auto   w1 = [a](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
        const auto   w2 = [a](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
        return p0 * w2(t + 1) + p1 * w1(t) + p2 * w1(1 - t) + p3 * w2(2 - t);
    };
    std::vector<double> r;
    for (int64_t i3 = 0; i3 < out[3]; ++i3) {
        for (int64_t i2 = 0; i2 < out[2]; ++i2) {
            const int64_t j2 = i2 * in[2] / out[2], j3 = i3 * in[3] / out[3];
            for (int64_t i1 = 0; i1 < out[1]; ++i1) {
                for (int64_t i0 = 0; i0 < out[0]; ++i0) {
                    const double x = (i0 + off) / sf[0] - (aa ? 0 : off), y = (i1 + off) / sf[1] - (aa ? 0 : off);
                    const auto   x0 = static_cast<int64_t>(std::floor(x)), y0 = static_cast<int64_t>(std::floor(y));
                    switch (mode & 0xFF) {
                    case GK_SCALE_MODE_NEAREST: {  // ggml takes the index in f32: i / (float) sf
                        const auto n0 = static_cast<int64_t>(static_cast<float>(i0) / static_cast<float>(sf[0]));
                        const auto n1 = static_cast<int64_t>(static_cast<float>(i1) / static_cast<float>(sf[1]));
                        r.push_back(px(n0, n1, j2, j3));
                        break;
                    }
                    case GK_SCALE_MODE_BICUBIC: {
                        double rows[4];
                        for (int k = 0; k < 4; ++k) {
                            rows[k] = cubic(px(x0 - 1, y0 - 1 + k, j2, j3), px(x0, y0 - 1 + k, j2, j3),
                                            px(x0 + 1, y0 - 1 + k, j2, j3), px(x0 + 2, y0 - 1 + k, j2, j3), x - x0);
                        }
                        r.push_back(cubic(rows[0], rows[1], rows[2], rows[3], y - y0));
                        break;
                    }
                    default:
                        if (aa) {
                            const double sup0 = std::max(1.0, 1 / sf[0]), sup1 = std::max(1.0, 1 / sf[1]);
                            double       s = 0, tw = 0;
                            for (int64_t sy = 0; sy < in[1]; ++sy) {
                                for (int64_t sx = 0; sx < in[0]; ++sx) {
                                    const double w = std::max(1 - std::fabs((sx - x + off) / sup0), 0.0) *
                                                     std::max(1 - std::fabs((sy - y + off) / sup1), 0.0);
                                    s += w * v[flat(in, sx, sy, j2, j3)];
                                    tw += w;
                                }
                            }
                            r.push_back(tw > 0 ? s / tw : 0);
                        } else {
                            const double cx0 = clampi(static_cast<double>(x0), in[0]),
                                         cy0 = clampi(static_cast<double>(y0), in[1]);
                            const double dx = std::clamp(x - cx0, 0.0, 1.0), dy = std::clamp(y - cy0, 0.0, 1.0);
                            r.push_back(px(x0, y0, j2, j3) * (1 - dx) * (1 - dy) +
                                        px(x0 + 1, y0, j2, j3) * dx * (1 - dy) +
                                        px(x0, y0 + 1, j2, j3) * (1 - dx) * dy + px(x0 + 1, y0 + 1, j2, j3) * dx * dy);
                        }
                    }
                }
            }
        }
    }
    return r;
}

/// mode | flag without C++20's deprecated enum-enum arithmetic.
constexpr uint32_t flagged(gk_scale_mode mode, gk_scale_flag flag) {
    return static_cast<uint32_t>(mode) | static_cast<uint32_t>(flag);
}

TEST(OpsConv, InterpolateEveryMode) {
    const uint32_t modes[]    = {GK_SCALE_MODE_NEAREST,
                                 GK_SCALE_MODE_BILINEAR,
                                 flagged(GK_SCALE_MODE_BILINEAR, GK_SCALE_FLAG_ALIGN_CORNERS),
                                 GK_SCALE_MODE_BICUBIC,
                                 flagged(GK_SCALE_MODE_BICUBIC, GK_SCALE_FLAG_ALIGN_CORNERS),
                                 flagged(GK_SCALE_MODE_BILINEAR, GK_SCALE_FLAG_ANTIALIAS)};
    const int64_t  sizes[][4] = {{16, 12, 3, 2}, {2, 3, 3, 1}, {5, 4, 6, 2}};  // up, down, mixed (and dims 2, 3)
    for (uint32_t mode : modes) {
        for (const auto & out : sizes) {
            env         e;
            gk_tensor * a = e.f32(4, 6, 3, 1);
            gk_tensor * y = gk_interpolate(e.ctx, a, out[0], out[1], out[2], out[3], mode);
            ASSERT_TRUE(compute(e.ctx, y));
            const std::string what = "mode " + std::to_string(mode) + " to " + std::to_string(out[0]) + "x" +
                                     std::to_string(out[1]);
            expect_close(y, interpolate_ref(values(a), a->ne, out, mode), 1e-5, 1e-5, what.c_str());
        }
    }
    env         e;
    gk_tensor * a  = e.f32(3, 2, 2);
    gk_tensor * up = gk_upscale(e.ctx, a, 2, GK_SCALE_MODE_NEAREST);
    ASSERT_TRUE(compute(e.ctx, up));
    const int64_t out[4] = {6, 4, 2, 1};
    expect_close(up, interpolate_ref(values(a), a->ne, out, GK_SCALE_MODE_NEAREST), 0, 0, "upscale");
}

bool refused(gk_context * ctx, const gk_tensor * t, const char * part) {
    if (t != nullptr) {
        ADD_FAILURE() << "built where it should have refused (" << part << ")";
        return false;
    }
    const bool ok = std::strstr(gk_last_error(ctx), part) != nullptr;
    EXPECT_TRUE(ok) << "message '" << gk_last_error(ctx) << "' lacks '" << part << "'";
    return ok;
}

TEST(OpsConv, PadReflect) {
    env         e;
    gk_tensor * a = e.f32(6, 3, 2);
    gk_tensor * y = gk_pad_reflect_1d(e.ctx, a, 5, 3);
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          va = values(a);
    std::vector<double> ref;
    for (int64_t r = 0; r < 6; ++r) {
        for (int64_t i = 0; i < 14; ++i) {
            const int64_t j = std::abs(i - 5);
            ref.push_back(va[static_cast<size_t>(r * 6 + (j < 6 ? j : 10 - j))]);
        }
    }
    expect_close(y, ref, 0, 0, "pad_reflect_1d");

    // Circular padding: element i of each dim is a's element (i - lp) mod ne, even past a whole turn.
    gk_tensor * b = e.f32(4, 3, 2);
    gk_tensor * z = gk_pad_ext_circular(e.ctx, b, 5, 2, 1, 1, 0, 1, 0, 0);
    ASSERT_TRUE(compute(e.ctx, z));
    const auto          vb = values(b);
    std::vector<double> rc;
    for (int64_t i2 = 0; i2 < 3; ++i2) {
        for (int64_t i1 = 0; i1 < 5; ++i1) {
            for (int64_t i0 = 0; i0 < 11; ++i0) {
                rc.push_back(vb[flat(b->ne, (i0 - 5 + 8) % 4, (i1 - 1 + 3) % 3, i2 % 2)]);
            }
        }
    }
    expect_close(z, rc, 0, 0, "pad_ext_circular");
    refused(e.ctx, gk_pad_circular(e.ctx, gk_new_tensor_1d(e.ctx, GK_TYPE_F32, 0), 2, 0, 0, 0), "empty");
}

TEST(OpsConv, BadInputIsRefusedWithAMessage) {
    env          e;
    gk_context * c  = e.ctx;
    gk_tensor *  k  = e.f32(3, 3, 4, 2);
    gk_tensor *  x  = e.f32(8, 8, 4, 1);
    gk_tensor *  x5 = e.f32(8, 8, 5, 1);
    refused(c, gk_im2col(c, k, x5, 1, 1, 0, 0, 1, 1, true, GK_TYPE_F32), "im2col: kernel a");
    refused(c, gk_im2col(c, k, x, 1, 1, 0, 0, 1, 1, true, GK_TYPE_Q8_0), "dst_type");
    refused(c, gk_im2col(c, k, x, 0, 1, 0, 0, 1, 1, true, GK_TYPE_F32), "strides");
    refused(c, gk_im2col(c, k, e.f32(2, 8, 4), 1, 1, 0, 0, 1, 1, true, GK_TYPE_F32), "too small");
    refused(c, gk_im2col(c, k, e.indices(3, 8, 8, 4), 1, 1, 0, 0, 1, 1, true, GK_TYPE_F32), "im2col: b must be");
    int64_t ne[4] = {8, 8, 4, 1};
    refused(c, gk_im2col_back(c, e.f32(35, 6, 6, 1), k, ne, 1, 1, 0, 0, 1, 1, true), "does not match");
    refused(c, gk_im2col_back(c, e.f32(36, 6, 6, 1), k, nullptr, 1, 1, 0, 0, 1, 1, true), "ne is NULL");
    refused(c, gk_conv_2d(c, k, x5, 1, 1, 0, 0, 1, 1), "im2col");
    refused(c, gk_col2im_1d(c, e.f32(12, 7), 2, 5, 0), "oc must divide");
    refused(c, gk_col2im_1d(c, e.f32(12, 7, 2), 2, 3, 0), "at most 2 dimensions");
    refused(c, gk_col2im_1d(c, e.f32(4, 1), 1, 2, 2), "gives no output");
    refused(c, gk_im2col_3d(c, e.f32(2, 2, 2, 6), e.f32(5, 5, 5, 4), 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, GK_TYPE_F32),
            "channels 0");
    refused(c, gk_conv_3d(c, e.f32(2, 2, 2, 6), e.f32(5, 5, 5, 4), 4, 1, 1, 1, 0, 0, 0, 1, 1, 1), "channels 4");
    refused(c, gk_im2col_3d(c, e.f32(2, 2, 2, 4), e.f32(5, 5, 5, 4), 2, 1, 1, 0, 0, 0, 0, 1, 1, 1, GK_TYPE_F32),
            "strides");
    refused(c, gk_conv_3d(c, e.f32(2, 2, 6, 4), e.f32(5, 5, 5, 4), 2, 1, 1, 1, 0, 0, 0, 1, 1, 1), "in dim 2");
    refused(c, gk_conv_3d_direct(c, e.f32(2, 2, 2, 4), e.f32(5, 5, 5, 4), 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 3), "c*oc");
    refused(c, gk_conv_2d_direct(c, k, x5, 1, 1, 0, 0, 1, 1), "channels");
    refused(c, gk_conv_2d_direct(c, k, x, 1, 1, 0, 0, 5, 1), "too small");
    refused(c, gk_conv_2d_dw_direct(c, k, x, 1, 1, 0, 0, 1, 1), "[KW, KH, 1, C]");
    refused(c, gk_conv_transpose_1d(c, e.f32(3, 2, 4), e.f32(9, 4), 1, 1, 1), "p0 = 1 must be 0");
    refused(c, gk_conv_transpose_1d(c, e.f32(3, 2, 4), e.f32(9, 5), 1, 0, 1), "input channels");
    refused(c, gk_conv_transpose_1d(c, e.f32(3, 2, 4), e.rand(GK_TYPE_F16, 9, 4), 1, 0, 1), "input b must be f32");
    refused(c, gk_conv_transpose_1d(c, e.rand(GK_TYPE_BF16, 3, 2, 4), e.f32(9, 4), 1, 0, 1), "f32 or f16");
    refused(c, gk_conv_transpose_2d_p0(c, k, e.f32(5, 5, 2, 1), 0), "stride = 0");
    gk_context * meta = gk_init({1 << 20, nullptr, true});  // shapes only: sizes no memory could hold
    gk_tensor *  huge = gk_new_tensor_2d(meta, GK_TYPE_F32, int64_t{1} << 40, 1);
    refused(meta, gk_conv_transpose_1d(meta, gk_new_tensor_3d(meta, GK_TYPE_F32, 3, 2, 1), huge, 1 << 30, 0, 1),
            "overflows");
    refused(meta, gk_upscale(meta, huge, 1 << 30, GK_SCALE_MODE_NEAREST), "in range");
    gk_free(meta);
    refused(c, gk_conv_transpose_2d_p0(c, k, e.f32(5, 5, 3, 1), 1), "input channels");
    refused(c, gk_pool_1d(c, x, GK_OP_POOL_COUNT, 2, 2, 0), "GK_OP_POOL_MAX");
    refused(c, gk_pool_1d(c, x, GK_OP_POOL_MAX, 0, 2, 0), "kernel (0, 1)");
    refused(c, gk_pool_1d(c, x, GK_OP_POOL_MAX, 20, 1, 0), "too small");
    refused(c, gk_pool_2d(c, x, GK_OP_POOL_AVG, 2, 2, 2, 2, -1.0f, 0.0f), "padding");
    refused(c, gk_pool_2d(c, x, GK_OP_POOL_AVG, 2, 2, 2, 2, NAN, 0.0f), "padding");
    refused(c, gk_pool_2d_back(c, e.f32(3, 4, 4, 1), x, GK_OP_POOL_MAX, 2, 2, 2, 2, 0.0f, 0.0f), "not the shape");
    refused(c, gk_interpolate(c, x, 4, 4, 4, 1, flagged(GK_SCALE_MODE_BICUBIC, GK_SCALE_FLAG_ANTIALIAS)), "antialias");
    refused(c, gk_interpolate(c, x, 4, 4, 4, 1, GK_SCALE_MODE_COUNT), "mode");
    refused(c, gk_interpolate(c, x, 4, 1 << 12, 4, 1, 1u << 10), "mode 0x");
    refused(c, gk_interpolate(c, x, 0, 4, 4, 1, GK_SCALE_MODE_NEAREST), "must be >= 1");
    // An empty source: every output element would read one that is not there.
    for (gk_scale_mode m : {GK_SCALE_MODE_NEAREST, GK_SCALE_MODE_BILINEAR, GK_SCALE_MODE_BICUBIC}) {
        refused(c, gk_interpolate(c, e.f32(4, 3, 0, 1), 4, 3, 1, 1, m), "is empty");
        refused(c, gk_interpolate(c, e.f32(0, 3, 1, 1), 4, 3, 1, 1, m), "is empty");
    }
    refused(c, gk_interpolate(c, e.rand(GK_TYPE_F16, 4, 4), 8, 8, 1, 1, GK_SCALE_MODE_NEAREST), "a must be f32");
    refused(c, gk_upscale(c, x, 1, GK_SCALE_MODE_NEAREST), "scale_factor");
    refused(c, gk_pad_reflect_1d(c, x, 8, 0), "less than ne0");
    refused(c, gk_pad_reflect_1d(c, x, -1, 0), "padding");
    refused(c, gk_pad_reflect_1d(c, gk_transpose(c, x), 1, 1), "contiguous");
}

}  // namespace
