// test-ops-back - the training ops: every *_back op against central finite differences of
// its forward op computed in double, get_rows_back / repeat_back also exactly (their fixed
// f32 order, and exact sums of dyadic values), cross_entropy_loss against a double
// reference, opt_step_adamw / opt_step_sgd against ggml's update in double over several
// steps (and bit for bit against the same update in f32), and bad input refused.
//
// The gradient checks: for a forward op f, dy a random tensor of f's result shape and
// L(x) = sum(dy * f(x)) computed in double, the op's result must be dL/dx, taken here as
// (L(x + h e_j) - L(x - h e_j)) / 2h with h = 1e-4 in double. That difference is within
// about h^2 |L'''| ~ 1e-8 (plus 1e-16 / h of rounding) of the true derivative, while the
// kernels compute in f32 - a few roundings per element, sums in double - so they are off
// by a few ulp of the row's scale (~1e-6 for values of order 1). The tolerance, 1e-5 +
// 1e-4 |ref|, is well above both and far below what a wrong term or operand order gives
// (errors of order 1). f16 inputs and results round to 2^-11: 2e-3 + 2e-3 |ref| there.
#include "op_check.h"

#include <functional>

namespace {

using namespace gk_test;

using loss_fn = std::function<double(const std::vector<double> &)>;

/// dL/dx_j by central differences in double, step h.
std::vector<double> central_diff(const loss_fn & loss, std::vector<double> x, double h = 1e-4) {
    std::vector<double> g(x.size());
    for (size_t j = 0; j < x.size(); ++j) {
        const double xj = x[j];
        x[j]            = xj + h;
        const double lp = loss(x);
        x[j]            = xj - h;
        const double lm = loss(x);
        x[j]            = xj;
        g[j]            = (lp - lm) / (2 * h);
    }
    return g;
}

double dot(const std::vector<double> & a, const std::vector<double> & b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        s += a[i] * b[i];
    }
    return s;
}

/// Apply f to each row of n elements of x (in place on a copy).
std::vector<double> by_rows(std::vector<double> x, int64_t n, const std::function<void(double *)> & f) {
    for (size_t r = 0; r < x.size() / static_cast<size_t>(n); ++r) {
        f(&x[r * static_cast<size_t>(n)]);
    }
    return x;
}

constexpr double k_atol = 1e-5, k_rtol = 1e-4;

TEST(OpsBack, SiluBack) {
    for (gk_type t : {GK_TYPE_F32, GK_TYPE_F16}) {
        env         e;
        gk_tensor * x  = e.rand(t, 37, 5, 2, 1, -6, 6);
        gk_tensor * dy = e.rand(t, 37, 5, 2);
        gk_tensor * dx = gk_silu_back(e.ctx, dy, x);
        ASSERT_TRUE(compute(e.ctx, dx));
        EXPECT_EQ(dx->type, t);
        const auto    vdy  = values(dy);
        const loss_fn loss = [&](const std::vector<double> & v) {
            double s = 0;
            for (size_t i = 0; i < v.size(); ++i) {
                s += vdy[i] * v[i] / (1 + std::exp(-v[i]));
            }
            return s;
        };
        const bool f16 = t == GK_TYPE_F16;
        expect_close(dx, central_diff(loss, values(x)), f16 ? 2e-3 : k_atol, f16 ? 2e-3 : k_rtol, gk_type_name(t));
    }
}

TEST(OpsBack, RmsNormBack) {
    env           e;
    const int64_t n   = 24;
    const double  eps = 1e-5;
    gk_tensor *   x   = e.rand(GK_TYPE_F32, n, 6, 2, 1, -2, 3);
    gk_tensor *   dy  = e.f32(n, 6, 2);
    gk_tensor *   dx  = gk_rms_norm_back(e.ctx, dy, x, static_cast<float>(eps));
    ASSERT_TRUE(compute(e.ctx, dx));
    const auto    vdy  = values(dy);
    const loss_fn loss = [&](const std::vector<double> & v) {
        return dot(vdy, by_rows(v, n, [&](double * r) {
                       double s2 = 0;
                       for (int64_t i = 0; i < n; ++i) {
                           s2 += r[i] * r[i];
                       }
                       const double scale = 1 / std::sqrt(s2 / static_cast<double>(n) + eps);
                       for (int64_t i = 0; i < n; ++i) {
                           r[i] *= scale;
                       }
                   }));
    };
    expect_close(dx, central_diff(loss, values(x)), k_atol, k_rtol, "rms_norm_back");
}

/// ggml's ALiBi slope of head h of n_head (max_bias 0: 1), in double.
double alibi_slope(double max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0) {
        return 1;
    }
    const auto   m  = static_cast<int64_t>(std::exp2(std::floor(std::log2(static_cast<double>(n_head)))));
    const double m0 = std::exp2(-max_bias / static_cast<double>(m));
    const double m1 = std::exp2(-max_bias / 2 / static_cast<double>(m));
    return h < m ? std::pow(m0, static_cast<double>(h + 1)) : std::pow(m1, static_cast<double>(2 * (h - m) + 1));
}

TEST(OpsBack, SoftMaxExtBack) {
    const struct {
        float        scale, max_bias;
        bool         mask, sinks, inplace;
        const char * what;
    } cases[] = {
        {1.0f, 0.0f, false, false, false, "plain"},
        {0.35f, 0.0f, true, false, false, "scale and causal mask"},
        {0.5f, 8.0f, true, false, false, "ALiBi (the slope does not enter the gradient)"},
        {0.7f, 0.0f, true, true, false, "sinks"},
        {1.3f, 0.0f, false, false, true, "in place"},
    };
    for (const auto & c : cases) {
        env           e;
        const int64_t n = 12, rows = 5, heads = 3;
        gk_tensor *   x     = e.rand(GK_TYPE_F32, n, rows, heads, 1, -3, 3);
        gk_tensor *   mask  = c.mask ? e.causal_mask(GK_TYPE_F32, n, rows) : nullptr;
        gk_tensor *   sinks = c.sinks ? e.f32(heads) : nullptr;
        gk_tensor *   y     = gk_soft_max_ext(e.ctx, x, mask, c.scale, c.max_bias);
        if (sinks) {
            ASSERT_TRUE(gk_soft_max_add_sinks(y, sinks));
        }
        gk_tensor * dy  = e.f32(n, rows, heads);
        gk_tensor * dx  = c.inplace ? gk_soft_max_ext_back_inplace(e.ctx, dy, y, c.scale, c.max_bias)
                                    : gk_soft_max_ext_back(e.ctx, dy, y, c.scale, c.max_bias);
        const auto  vdy = values(dy);  // before an in-place compute overwrites dy
        ASSERT_TRUE(compute(e.ctx, dx)) << c.what;
        const std::vector<double> vm   = mask ? values(mask) : std::vector<double>();
        const std::vector<double> vs   = sinks ? values(sinks) : std::vector<double>();
        const loss_fn             loss = [&](const std::vector<double> & v) {
            std::vector<double> out(v.size());
            for (int64_t h = 0; h < heads; ++h) {
                const double slope = alibi_slope(c.max_bias, heads, h);
                for (int64_t r = 0; r < rows; ++r) {
                    const size_t base = static_cast<size_t>((h * rows + r) * n);
                    double       max  = sinks ? vs[static_cast<size_t>(h)] : -INFINITY;
                    for (int64_t i = 0; i < n; ++i) {
                        const double m = mask ? vm[static_cast<size_t>(r * n + i)] : 0;
                        out[base + i]  = v[base + i] * c.scale + slope * m;
                        max            = std::fmax(max, out[base + i]);
                    }
                    double sum = sinks ? std::exp(vs[static_cast<size_t>(h)] - max) : 0;
                    for (int64_t i = 0; i < n; ++i) {
                        out[base + i] = std::exp(out[base + i] - max);
                        sum += out[base + i];
                    }
                    for (int64_t i = 0; i < n; ++i) {
                        out[base + i] /= sum;
                    }
                }
            }
            return dot(vdy, out);
        };
        expect_close(dx, central_diff(loss, values(x)), k_atol, k_rtol, c.what);
    }
}

/// rope is linear in x, so its central difference at 0 with step 1, (rope(e_j) -
/// rope(-e_j)) / 2 = rope(e_j), is its Jacobian's column j exactly. Heads are the basis
/// vectors: rope of a [D, D, T] tensor whose head h is e_h gives every column of every
/// token's rotation; rope_back(dy) must be the transposed map applied to dy.
struct rope_cfg {
    int          n_dims, mode;
    bool         multi, ff;
    int          sections[4];
    int          n_ctx_orig;
    float        base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    const char * what;
};

gk_tensor * build_rope(env & e, const rope_cfg & c, gk_tensor * a, gk_tensor * pos, gk_tensor * ff, bool back) {
    int s[4] = {c.sections[0], c.sections[1], c.sections[2], c.sections[3]};
    if (c.multi) {
        return (back ? gk_rope_multi_back : gk_rope_multi)(e.ctx, a, pos, ff, c.n_dims, s, c.mode, c.n_ctx_orig, c.base,
                                                           c.freq_scale, c.ext_factor, c.attn_factor, c.beta_fast,
                                                           c.beta_slow);
    }
    return (back ? gk_rope_ext_back : gk_rope_ext)(e.ctx, a, pos, ff, c.n_dims, c.mode, c.n_ctx_orig, c.base,
                                                   c.freq_scale, c.ext_factor, c.attn_factor, c.beta_fast, c.beta_slow);
}

TEST(OpsBack, RopeBackIsTheTransposedRotation) {
    const rope_cfg cfgs[] = {
        {16, GK_ROPE_TYPE_NORMAL, false, false, {}, 0, 10000, 1, 0, 1, 0, 0, "normal"},
        {16, GK_ROPE_TYPE_NEOX, false, false, {}, 0, 10000, 1, 0, 1, 0, 0, "neox"},
        {10, GK_ROPE_TYPE_NEOX, false, true, {}, 0, 500000, 1, 0, 1, 0, 0, "partial, freq factors"},
        {16, GK_ROPE_TYPE_NEOX, false, false, {}, 4096, 10000, 0.25f, 1, 1, 32, 1, "YaRN"},
        {16, GK_ROPE_TYPE_MROPE, true, false, {3, 3, 2, 0}, 0, 1000000, 1, 0, 1, 0, 0, "M-RoPE"},
        {12, GK_ROPE_TYPE_IMROPE, true, false, {2, 2, 2, 0}, 4096, 10000, 0.5f, 1, 1, 32, 1, "interleaved M-RoPE"},
        {8, GK_ROPE_TYPE_VISION, true, true, {4, 4, 0, 0}, 0, 10000, 1, 0, 1, 0, 0, "vision"},
    };
    for (const rope_cfg & c : cfgs) {
        env           e;
        const int64_t d = 16, heads = 3, tokens = 5;
        const int64_t n_pos = (c.multi ? 4 : 1) * tokens;
        gk_tensor *   pos   = e.indices(3000, n_pos);
        gk_tensor *   ff    = c.ff ? e.positive(c.mode == GK_ROPE_TYPE_VISION ? c.n_dims : c.n_dims / 2) : nullptr;
        gk_tensor *   basis = gk_new_tensor_3d(e.ctx, GK_TYPE_F32, d, d, tokens);
        auto *        bv    = static_cast<float *>(basis->data);
        for (int64_t t = 0; t < tokens; ++t) {
            for (int64_t h = 0; h < d; ++h) {
                for (int64_t i = 0; i < d; ++i) {
                    bv[(t * d + h) * d + i] = i == h ? 1.0f : 0.0f;
                }
            }
        }
        gk_tensor * cols = build_rope(e, c, basis, pos, ff, false);
        gk_tensor * dy   = e.f32(d, heads, tokens);
        gk_tensor * dx   = build_rope(e, c, dy, pos, ff, true);
        ASSERT_TRUE(compute(e.ctx, cols)) << c.what;
        ASSERT_TRUE(compute(e.ctx, dx)) << c.what;
        EXPECT_EQ(dx->op, GK_OP_ROPE_BACK);
        const auto          jac = values(cols);  // jac[(t*d + j)*d + i] = d rope_i / d x_j at token t
        const auto          vdy = values(dy);
        std::vector<double> ref;
        for (int64_t t = 0; t < tokens; ++t) {
            for (int64_t h = 0; h < heads; ++h) {
                for (int64_t j = 0; j < d; ++j) {
                    double s = 0;
                    for (int64_t i = 0; i < d; ++i) {
                        s += jac[static_cast<size_t>((t * d + j) * d + i)] *
                             vdy[static_cast<size_t>((t * heads + h) * d + i)];
                    }
                    ref.push_back(s);
                }
            }
        }
        expect_close(dx, ref, 1e-6, 1e-6, c.what);
    }
}

/// Values k / 64 for small integers k: every f32 sum of a few of them is exact, so an f32
/// sum in any order equals the double one.
gk_tensor * dyadic(env & e, int64_t ne0, int64_t ne1, int64_t ne2 = 1, int64_t ne3 = 1) {
    gk_tensor * t = gk_new_tensor_4d(e.ctx, GK_TYPE_F32, ne0, ne1, ne2, ne3);
    auto *      v = static_cast<float *>(t->data);
    for (int64_t i = 0; i < gk_nelements(t); ++i) {
        v[i] = static_cast<float>(static_cast<int>(e.uniform() * 512.0f) - 256) / 64.0f;
    }
    return t;
}

TEST(OpsBack, GetRowsBack) {
    env           e;
    const int64_t c = 7, rows = 9, n = 40;  // more indices than rows: repeats; some rows unused
    gk_tensor *   table = e.f32(c, rows);
    gk_tensor *   idx   = e.indices(rows - 2, n);
    gk_tensor *   dy    = e.f32(c, n);
    gk_tensor *   dx    = gk_get_rows_back(e.ctx, dy, idx, table);
    gk_tensor *   dyd   = dyadic(e, c, n);
    gk_tensor *   dxd   = gk_get_rows_back(e.ctx, dyd, idx, table);
    ASSERT_TRUE(compute(e.ctx, dx));
    ASSERT_TRUE(compute(e.ctx, dxd));
    EXPECT_EQ(dx->ne[0], c);
    EXPECT_EQ(dx->ne[1], rows);
    const auto vidx = values(idx);
    // Central differences of L(x) = sum(dy * get_rows(x)).
    const auto    vdy  = values(dy);
    const loss_fn loss = [&](const std::vector<double> & v) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < c; ++j) {
                s += vdy[static_cast<size_t>(i * c + j)] *
                     v[static_cast<size_t>(static_cast<int64_t>(vidx[i]) * c + j)];
            }
        }
        return s;
    };
    expect_close(dx, central_diff(loss, values(table)), k_atol, k_rtol, "finite differences");
    // Bit for bit: the f32 sums in index order; exact: dyadic terms against double sums.
    std::vector<float>  f32(static_cast<size_t>(c * rows), 0.0f);
    std::vector<double> exact(f32.size(), 0.0);
    const auto *        g   = static_cast<const float *>(dy->data);
    const auto          vdd = values(dyd);
    for (int64_t i = 0; i < n; ++i) {
        const auto r = static_cast<int64_t>(vidx[i]);
        for (int64_t j = 0; j < c; ++j) {
            f32[static_cast<size_t>(r * c + j)] += g[i * c + j];
            exact[static_cast<size_t>(r * c + j)] += vdd[static_cast<size_t>(i * c + j)];
        }
    }
    EXPECT_EQ(std::memcmp(dx->data, f32.data(), f32.size() * sizeof(float)), 0) << "f32 sums in index order";
    expect_close(dxd, exact, 0, 0, "dyadic");
}

TEST(OpsBack, GetRowsBackIndexOutOfRange) {
    env         e;
    gk_tensor * idx                      = e.indices(5, 6);
    static_cast<int32_t *>(idx->data)[4] = 5;
    gk_tensor * dx                       = gk_get_rows_back(e.ctx, e.f32(3, 6), idx, e.f32(3, 5));
    ASSERT_NE(dx, nullptr);
    gk_cgraph * g = gk_new_graph(e.ctx);
    ASSERT_EQ(gk_build_forward_expand(g, dx), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_graph_compute(g, 2), GK_STATUS_OUT_OF_RANGE);
    EXPECT_NE(std::string(gk_last_error(e.ctx)).find("outside [0, 5)"), std::string::npos) << gk_last_error(e.ctx);
}

TEST(OpsBack, RepeatBack) {
    env           e;
    const int64_t ne[4]  = {5, 3, 1, 2};  // b: the forward op's input
    const int64_t rep[4] = {2, 3, 4, 1};  // repetitions per dim
    gk_tensor *   b      = e.f32(ne[0], ne[1], ne[2], ne[3]);
    gk_tensor *   dy     = e.f32(ne[0] * rep[0], ne[1] * rep[1], ne[2] * rep[2], ne[3] * rep[3]);
    gk_tensor *   dyd    = dyadic(e, ne[0] * rep[0], ne[1] * rep[1], ne[2] * rep[2], ne[3] * rep[3]);
    gk_tensor *   dx     = gk_repeat_back(e.ctx, dy, b);
    gk_tensor *   dxd    = gk_repeat_back(e.ctx, dyd, b);
    ASSERT_TRUE(compute(e.ctx, dx));
    ASSERT_TRUE(compute(e.ctx, dxd));
    ASSERT_TRUE(gk_are_same_shape(dx, b));
    // Central differences of L(x) = sum(dy * repeat(x)), repeat through gk's forward op's
    // semantics: element k of the result is x[k mod ne].
    const auto    vdy  = values(dy);
    const loss_fn loss = [&](const std::vector<double> & v) {
        double s = 0;
        for (int64_t k3 = 0; k3 < dy->ne[3]; ++k3) {
            for (int64_t k2 = 0; k2 < dy->ne[2]; ++k2) {
                for (int64_t k1 = 0; k1 < dy->ne[1]; ++k1) {
                    for (int64_t k0 = 0; k0 < dy->ne[0]; ++k0) {
                        s += vdy[flat(dy->ne, k0, k1, k2, k3)] *
                             v[flat(ne, k0 % ne[0], k1 % ne[1], k2 % ne[2], k3 % ne[3])];
                    }
                }
            }
        }
        return s;
    };
    expect_close(dx, central_diff(loss, values(b)), k_atol, k_rtol, "finite differences");
    // Bit for bit: f32 sums over the repetitions (r3, r2, r1, r0) in order; exact on dyadic terms.
    std::vector<float>  f32(static_cast<size_t>(gk_nelements(b)), 0.0f);
    std::vector<double> exact(f32.size(), 0.0);
    const auto *        g   = static_cast<const float *>(dy->data);
    const auto          vdd = values(dyd);
    for (int64_t r3 = 0; r3 < rep[3]; ++r3) {
        for (int64_t r2 = 0; r2 < rep[2]; ++r2) {
            for (int64_t r1 = 0; r1 < rep[1]; ++r1) {
                for (int64_t r0 = 0; r0 < rep[0]; ++r0) {
                    for (size_t k = 0; k < f32.size(); ++k) {
                        const auto    kk = static_cast<int64_t>(k);
                        const int64_t k0 = kk % ne[0], k1 = kk / ne[0] % ne[1], k2 = kk / (ne[0] * ne[1]) % ne[2],
                                      k3 = kk / (ne[0] * ne[1] * ne[2]);
                        const size_t src = flat(dy->ne, r0 * ne[0] + k0, r1 * ne[1] + k1, r2 * ne[2] + k2,
                                                r3 * ne[3] + k3);
                        f32[k] += g[src];
                        exact[k] += vdd[src];
                    }
                }
            }
        }
    }
    EXPECT_EQ(std::memcmp(dx->data, f32.data(), f32.size() * sizeof(float)), 0) << "f32 sums in repetition order";
    expect_close(dxd, exact, 0, 0, "dyadic");
}

/// Cross-entropy of softmax(x) against labels, rows of n, averaged over rows, in double.
double cross_entropy_ref(const std::vector<double> & x, const std::vector<double> & lab, int64_t n) {
    const size_t rows  = x.size() / static_cast<size_t>(n);
    double       total = 0;
    for (size_t r = 0; r < rows; ++r) {
        const double * v   = &x[r * static_cast<size_t>(n)];
        double         max = -INFINITY, sum = 0;
        for (int64_t i = 0; i < n; ++i) {
            max = std::fmax(max, v[i]);
        }
        for (int64_t i = 0; i < n; ++i) {
            sum += std::exp(v[i] - max);
        }
        for (int64_t i = 0; i < n; ++i) {
            total += lab[r * static_cast<size_t>(n) + static_cast<size_t>(i)] * (v[i] - max - std::log(sum));
        }
    }
    return -total / static_cast<double>(rows);
}

TEST(OpsBack, CrossEntropyLoss) {
    env           e;
    const int64_t n = 30, rows = 7, ne2 = 2;
    gk_tensor *   x    = e.rand(GK_TYPE_F32, n, rows, ne2, 1, -5, 5);
    gk_tensor *   lab  = e.distributions(n, rows, ne2);
    gk_tensor *   loss = gk_cross_entropy_loss(e.ctx, x, lab);
    ASSERT_TRUE(compute(e.ctx, loss));
    EXPECT_EQ(gk_nelements(loss), 1);
    // f32 terms summed in double per row, the rows in f32: ~1e-6 relative.
    expect_close(loss, {cross_entropy_ref(values(x), values(lab), n)}, 1e-6, 1e-5, "cross_entropy_loss");
}

TEST(OpsBack, CrossEntropyLossBack) {
    env           e;
    const int64_t n = 30, rows = 7, ne2 = 2;
    gk_tensor *   x                = e.rand(GK_TYPE_F32, n, rows, ne2, 1, -5, 5);
    gk_tensor *   lab              = e.distributions(n, rows, ne2);
    gk_tensor *   d                = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, 1);
    *static_cast<float *>(d->data) = 1.75f;
    gk_tensor * dx                 = gk_cross_entropy_loss_back(e.ctx, d, x, lab);
    ASSERT_TRUE(compute(e.ctx, dx));
    const auto    vlab = values(lab);
    const loss_fn loss = [&](const std::vector<double> & v) { return 1.75 * cross_entropy_ref(v, vlab, n); };
    // The gradient's entries are of order 1/rows: the tolerance is scaled down with them.
    expect_close(dx, central_diff(loss, values(x)), 1e-6, k_rtol, "cross_entropy_loss_back");
}

/// The gradients compose as a training graph composes them (ggml's backward pass: each op
/// given the gradient of its result and its forward operands): the gradient of
/// cross_entropy_loss(rope(silu(rms_norm(x))), labels) with respect to x, built from the
/// *_back ops, against central differences of the whole chain in double (rope through its
/// exact Jacobian, as in RopeBackIsTheTransposedRotation).
TEST(OpsBack, AChainOfGradientsMatchesTheChainsDifferences) {
    env           e;
    const int64_t d = 8, heads = 2, tokens = 3;
    const float   eps  = 1e-6f;
    gk_tensor *   x    = e.rand(GK_TYPE_F32, d, heads, tokens, 1, -2, 2);
    gk_tensor *   lab  = e.distributions(d, heads, tokens);
    gk_tensor *   pos  = e.indices(50, tokens);
    const auto    rope = [&](gk_tensor * a, bool back) {
        return (back ? gk_rope_ext_back : gk_rope_ext)(e.ctx, a, pos, nullptr, static_cast<int>(d), GK_ROPE_TYPE_NEOX,
                                                       0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    };
    gk_tensor * y1                   = gk_rms_norm(e.ctx, x, eps);
    gk_tensor * y3                   = rope(gk_silu(e.ctx, y1), false);
    gk_tensor * loss                 = gk_cross_entropy_loss(e.ctx, y3, lab);
    gk_tensor * one                  = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, 1);
    *static_cast<float *>(one->data) = 1.0f;
    gk_tensor * g3                   = gk_cross_entropy_loss_back(e.ctx, one, y3, lab);
    gk_tensor * gx                   = gk_rms_norm_back(e.ctx, gk_silu_back(e.ctx, rope(g3, true), y1), x, eps);
    gk_tensor * basis                = gk_new_tensor_3d(e.ctx, GK_TYPE_F32, d, d, tokens);
    auto *      bv                   = static_cast<float *>(basis->data);
    for (int64_t i = 0; i < d * d * tokens; ++i) {
        bv[i] = i % d == i / d % d ? 1.0f : 0.0f;
    }
    gk_tensor * cols = rope(basis, false);
    ASSERT_TRUE(compute(e.ctx, loss));
    ASSERT_TRUE(compute(e.ctx, gx));
    ASSERT_TRUE(compute(e.ctx, cols));
    const auto    jac  = values(cols);
    const auto    vlab = values(lab);
    const loss_fn f    = [&](const std::vector<double> & v) {
        std::vector<double> y = by_rows(v, d, [&](double * r) {
            double s2 = 0;
            for (int64_t i = 0; i < d; ++i) {
                s2 += r[i] * r[i];
            }
            const double scale = 1 / std::sqrt(s2 / static_cast<double>(d) + eps);
            for (int64_t i = 0; i < d; ++i) {
                r[i] *= scale;
                r[i] /= 1 + std::exp(-r[i]);
            }
        });
        std::vector<double> z(y.size(), 0.0);
        for (int64_t t = 0; t < tokens; ++t) {
            for (int64_t h = 0; h < heads; ++h) {
                for (int64_t i = 0; i < d; ++i) {
                    for (int64_t j = 0; j < d; ++j) {
                        z[static_cast<size_t>((t * heads + h) * d +
                                              i)] += jac[static_cast<size_t>((t * d + j) * d + i)] *
                                                     y[static_cast<size_t>((t * heads + h) * d + j)];
                    }
                }
            }
        }
        return cross_entropy_ref(z, vlab, d);
    };
    expect_close(loss, {f(values(x))}, 1e-6, 1e-5, "the chain's loss");
    expect_close(gx, central_diff(f, values(x)), 2e-6, k_rtol, "the chain's gradient");
}

struct adamw_cfg {
    float alpha, beta1, beta2, eps, wd;
};

TEST(OpsBack, OptStepAdamwOverSeveralSteps) {
    env             e;
    const adamw_cfg c   = {1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f};
    const int64_t   ne0 = 13, ne1 = 6;
    const int       steps = 5;
    gk_tensor *     w     = e.f32(ne0, ne1);
    gk_tensor *     grad  = e.f32(ne0, ne1);
    gk_tensor *     m     = gk_new_tensor_2d(e.ctx, GK_TYPE_F32, ne0, ne1);
    gk_tensor *     v     = gk_new_tensor_2d(e.ctx, GK_TYPE_F32, ne0, ne1);
    gk_tensor *     prm   = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, 7);
    std::memset(m->data, 0, gk_nbytes(m));
    std::memset(v->data, 0, gk_nbytes(v));
    gk_set_param(w);
    gk_tensor * step = gk_opt_step_adamw(e.ctx, w, grad, m, v, prm);
    ASSERT_NE(step, nullptr) << gk_last_error(e.ctx);
    EXPECT_EQ(step->view_src, w);
    gk_cgraph * g = gk_new_graph(e.ctx);
    ASSERT_EQ(gk_build_forward_expand(g, step), GK_STATUS_SUCCESS);
    const size_t        count = static_cast<size_t>(ne0 * ne1);
    std::vector<double> wd(count), md(count, 0.0), vd(count, 0.0);    // the update in double
    std::vector<float>  wf(count), mf(count, 0.0f), vf(count, 0.0f);  // the same in f32
    for (size_t i = 0; i < count; ++i) {
        wf[i] = static_cast<const float *>(w->data)[i];
        wd[i] = wf[i];
    }
    for (int t = 1; t <= steps; ++t) {
        // A new gradient each step, as training gives.
        auto * gv = static_cast<float *>(grad->data);
        for (size_t i = 0; i < count; ++i) {
            gv[i] = 2.0f * e.uniform() - 1.0f;
        }
        const float beta1h = 1.0f / (1.0f - std::pow(c.beta1, static_cast<float>(t)));
        const float beta2h = 1.0f / (1.0f - std::pow(c.beta2, static_cast<float>(t)));
        const float p[7]   = {c.alpha, c.beta1, c.beta2, c.eps, c.wd, beta1h, beta2h};
        std::memcpy(prm->data, p, sizeof(p));
        ASSERT_EQ(gk_graph_compute(g, 3), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
        const float keep = 1.0f - c.alpha * c.wd;
        for (size_t i = 0; i < count; ++i) {
            const double gd = gv[i];
            md[i]           = md[i] * c.beta1 + gd * (1.0 - c.beta1);
            vd[i]           = vd[i] * c.beta2 + gd * gd * (1.0 - c.beta2);
            wd[i]           = wd[i] * (1.0 - static_cast<double>(c.alpha) * c.wd) -
                    c.alpha * (md[i] * beta1h) / (std::sqrt(vd[i] * beta2h) + c.eps);
            mf[i]          = mf[i] * c.beta1 + gv[i] * (1.0f - c.beta1);
            vf[i]          = vf[i] * c.beta2 + gv[i] * gv[i] * (1.0f - c.beta2);
            const float mh = mf[i] * beta1h;
            const float vh = std::sqrt(vf[i] * beta2h) + c.eps;
            wf[i]          = wf[i] * keep - c.alpha * mh / vh;
        }
        // Against double: f32 rounding of a few operations per step (the parameters
        // themselves are f32 in both), ~1e-7 relative per step.
        expect_close(w, wd, 1e-6, 1e-5, "w");
        expect_close(m, md, 1e-6, 1e-5, "m");
        expect_close(v, vd, 1e-7, 1e-5, "v");
        // Bit for bit against ggml's f32 formula.
        EXPECT_EQ(std::memcmp(w->data, wf.data(), count * sizeof(float)), 0) << "w at step " << t;
        EXPECT_EQ(std::memcmp(m->data, mf.data(), count * sizeof(float)), 0) << "m at step " << t;
        EXPECT_EQ(std::memcmp(v->data, vf.data(), count * sizeof(float)), 0) << "v at step " << t;
    }
}

TEST(OpsBack, OptStepSgdOverSeveralSteps) {
    env           e;
    const float   alpha = 0.05f, wd = 0.2f;
    const int64_t count = 40;
    gk_tensor *   w     = e.f32(count / 4, 4);
    gk_tensor *   grad  = e.f32(count / 4, 4);
    gk_tensor *   prm   = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, 2);
    const float   p[2]  = {alpha, wd};
    std::memcpy(prm->data, p, sizeof(p));
    gk_set_param(w);
    gk_tensor * step = gk_opt_step_sgd(e.ctx, w, grad, prm);
    ASSERT_NE(step, nullptr) << gk_last_error(e.ctx);
    gk_cgraph * g = gk_new_graph(e.ctx);
    ASSERT_EQ(gk_build_forward_expand(g, step), GK_STATUS_SUCCESS);
    std::vector<double> wdv(static_cast<size_t>(count));
    std::vector<float>  wf(static_cast<size_t>(count));
    for (size_t i = 0; i < wf.size(); ++i) {
        wf[i]  = static_cast<const float *>(w->data)[i];
        wdv[i] = wf[i];
    }
    for (int t = 0; t < 4; ++t) {
        auto * gv = static_cast<float *>(grad->data);
        for (size_t i = 0; i < wf.size(); ++i) {
            gv[i] = 2.0f * e.uniform() - 1.0f;
        }
        ASSERT_EQ(gk_graph_compute(g, 2), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
        for (size_t i = 0; i < wf.size(); ++i) {
            wdv[i] = wdv[i] * (1.0 - static_cast<double>(alpha) * wd) - static_cast<double>(alpha) * gv[i];
            wf[i]  = wf[i] * (1.0f - alpha * wd) - alpha * gv[i];
        }
        expect_close(w, wdv, 1e-6, 1e-5, "sgd");
        EXPECT_EQ(std::memcmp(w->data, wf.data(), wf.size() * sizeof(float)), 0) << "step " << t;
    }
}

TEST(OpsBack, BadInputIsRefused) {
    env          e;
    gk_context * ctx = e.ctx;
    gk_tensor *  x   = e.f32(8, 4);
    gk_tensor *  y   = e.f32(8, 5);
    gk_tensor *  idx = e.indices(4, 6);
    expect_refused(ctx, gk_silu_back(ctx, x, y), "silu_back shapes", "shapes differ");
    expect_refused(ctx, gk_silu_back(ctx, x, idx), "silu_back type", "must be f32, f16 or bf16");
    expect_refused(ctx, gk_rms_norm_back(ctx, x, x, -1.0f), "rms_norm_back eps", "eps");
    expect_refused(ctx, gk_rms_norm_back(ctx, x, y, 1e-6f), "rms_norm_back shapes", "shapes differ");
    expect_refused(ctx, gk_soft_max_ext_back(ctx, x, y, 1.0f, 0.0f), "soft_max_ext_back shapes", "shapes differ");
    expect_refused(ctx, gk_soft_max_ext_back(ctx, x, x, INFINITY, 0.0f), "soft_max_ext_back scale", "finite");
    expect_refused(ctx, gk_soft_max_ext_back_inplace(ctx, x, x, 1.0f, NAN), "soft_max_ext_back max_bias", "finite");
    expect_refused(ctx, gk_rope_ext_back(ctx, e.f32(8, 2, 3), e.indices(9, 3), nullptr, 8, 5, 0, 1e4f, 1, 0, 1, 0, 0),
                   "rope_ext_back mode", "rope_ext_back: mode 5");
    expect_refused(ctx, gk_rope_ext_back(ctx, e.f32(8, 2, 3), e.indices(9, 4), nullptr, 8, 0, 0, 1e4f, 1, 0, 1, 0, 0),
                   "rope_ext_back positions", "positions");
    int s[4] = {0, 0, 0, 2};
    expect_refused(ctx,
                   gk_rope_multi_back(ctx, e.f32(8, 2, 3), e.indices(9, 12), nullptr, 8, s, GK_ROPE_TYPE_MROPE, 0, 1e4f,
                                      1, 0, 1, 0, 0),
                   "rope_multi_back sections", "rope_multi_back: sections");
    expect_refused(ctx,
                   gk_rope_multi_back(ctx, e.f32(8, 2, 3), e.indices(9, 12), nullptr, 8, nullptr, GK_ROPE_TYPE_MROPE, 0,
                                      1e4f, 1, 0, 1, 0, 0),
                   "rope_multi_back NULL sections", "sections is NULL");
    expect_refused(ctx, gk_get_rows_back(ctx, e.f32(8, 6), idx, e.f32(7, 4)), "get_rows_back row length", "row length");
    expect_refused(ctx, gk_get_rows_back(ctx, e.f32(8, 5), idx, e.f32(8, 4)), "get_rows_back count",
                   "a row per index");
    expect_refused(ctx, gk_get_rows_back(ctx, e.f32(8, 6), e.f32(6), e.f32(8, 4)), "get_rows_back index type", "i32");
    expect_refused(ctx, gk_get_rows_back(ctx, e.f32(8, 6, 2), e.indices(4, 6), e.f32(8, 4)), "get_rows_back 3-d",
                   "at most 2 dimensions");
    expect_refused(ctx, gk_repeat_back(ctx, e.f32(9, 4), e.f32(2, 4)), "repeat_back tile", "does not tile");
    expect_refused(ctx, gk_cross_entropy_loss(ctx, x, y), "cross_entropy_loss shapes", "shapes differ");
    expect_refused(ctx, gk_cross_entropy_loss(ctx, e.rand(GK_TYPE_F16, 8, 4), x), "cross_entropy_loss type", "f32");
    expect_refused(ctx, gk_cross_entropy_loss_back(ctx, e.f32(2), x, x), "cross_entropy_loss_back scalar", "scalar");
    expect_refused(ctx, gk_cross_entropy_loss_back(ctx, e.f32(1), x, y), "cross_entropy_loss_back shapes",
                   "shapes differ");
    gk_tensor * w  = e.f32(8, 4);
    gk_tensor * p7 = e.f32(7);
    gk_tensor * p2 = e.f32(2);
    expect_refused(ctx, gk_opt_step_adamw(ctx, w, x, e.f32(8, 4), e.f32(8, 4), p7), "adamw not a param",
                   "gk_set_param");
    gk_set_param(w);
    expect_refused(ctx, gk_opt_step_adamw(ctx, w, y, e.f32(8, 4), e.f32(8, 4), p7), "adamw grad", "shapes differ");
    expect_refused(ctx, gk_opt_step_adamw(ctx, w, x, e.f32(8, 5), e.f32(8, 4), p7), "adamw m", "shapes differ");
    expect_refused(ctx, gk_opt_step_adamw(ctx, w, x, e.f32(8, 4), e.f32(8, 4), e.f32(6)), "adamw params", "7 values");
    expect_refused(ctx, gk_opt_step_adamw(ctx, w, x, e.f32(8, 4), e.rand(GK_TYPE_F16, 8, 4), p7), "adamw v type",
                   "must be f32");
    expect_refused(ctx, gk_opt_step_sgd(ctx, w, x, p7), "sgd params", "2 values");
    expect_refused(ctx, gk_opt_step_sgd(ctx, x, x, p2), "sgd not a param", "gk_set_param");
    expect_refused(ctx, gk_opt_step_sgd(ctx, w, nullptr, p2), "sgd NULL grad", "NULL");
}

} // namespace
