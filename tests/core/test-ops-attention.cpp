// test-ops-attention - soft_max (scale, f16/f32 mask, ALiBi, sinks), diag_mask_inf/zero,
// rope (normal, neox, partial, frequency factors, YaRN) and flash_attn_ext (grouped
// heads, mask, ALiBi, softcap, sinks, f16 K/V) against double references.
#include "op_check.h"

#include <numbers>

namespace {

using namespace gk_test;

double alibi(double max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0) {
        return 1;
    }
    const int64_t m = int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(n_head))));
    return h < m ? std::pow(2.0, -max_bias / m * static_cast<double>(h + 1))
                 : std::pow(2.0, -max_bias / (2.0 * m) * static_cast<double>(2 * (h - m) + 1));
}

/// Softmax of w (plus an optional sink logit in the normaliser); all -inf gives zeros.
void softmax_ref(std::vector<double> & w, const double * sink) {
    double mx = sink ? *sink : -INFINITY;
    for (double x : w) mx = std::max(mx, x);
    if (mx == -INFINITY) {
        std::fill(w.begin(), w.end(), 0.0);
        return;
    }
    double s = sink ? std::exp(*sink - mx) : 0;
    for (double & x : w) s += (x = std::exp(x - mx));
    for (double & x : w) x /= s;
}

void check_soft_max(gk_type mask_type, float scale, float max_bias, bool sinks) {
    env           e;
    const int64_t n = 24, rows = 5, heads = 6, seqs = 2;
    gk_tensor *   a = e.rand(GK_TYPE_F32, n, rows, heads, seqs, -3, 3);
    gk_tensor *   m = mask_type == GK_TYPE_COUNT ? nullptr : e.causal_mask(mask_type, n, rows + 2);
    gk_tensor *   s = sinks ? e.f32(heads) : nullptr;
    gk_tensor *   y = gk_soft_max_ext(e.ctx, a, m, scale, max_bias);
    ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
    if (s) {
        ASSERT_TRUE(gk_soft_max_add_sinks(y, s));
    }
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          va = values(a);
    const auto          vm = m ? values(m) : std::vector<double>{};
    const auto          vs = s ? values(s) : std::vector<double>{};
    std::vector<double> ref;
    for (int64_t i3 = 0; i3 < seqs; ++i3)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t r = 0; r < rows; ++r) {
                std::vector<double> w(n);
                for (int64_t i = 0; i < n; ++i) {
                    w[i] = va[flat(a->ne, i, r, h, i3)] * scale +
                           (m ? alibi(max_bias, heads, h) * vm[flat(m->ne, i, r)] : 0.0);
                }
                softmax_ref(w, s ? &vs[h] : nullptr);
                ref.insert(ref.end(), w.begin(), w.end());
            }
    expect_close(y, ref, 1e-7, 1e-5, "soft_max");
}

TEST(OpsAttention, SoftMax) {
    check_soft_max(GK_TYPE_COUNT, 1.0f, 0.0f, false);
    check_soft_max(GK_TYPE_F16, 0.125f, 0.0f, false);
    check_soft_max(GK_TYPE_F32, 0.5f, 8.0f, false);
    check_soft_max(GK_TYPE_F16, 0.3f, 0.0f, true);
}

TEST(OpsAttention, FullyMaskedRowIsZero) {
    env         e;
    gk_tensor * a = e.f32(4, 2);
    gk_tensor * y = gk_soft_max(e.ctx, gk_diag_mask_inf(e.ctx, gk_scale(e.ctx, a, 1.0f), -1));
    ASSERT_TRUE(compute(e.ctx, y));
    const auto v = values(y);
    EXPECT_EQ(v[0] + v[1] + v[2] + v[3], 0.0);  // row 0: every column is past n_past + 0
    EXPECT_NEAR(v[4], 1.0, 1e-7);               // row 1: only column 0 visible
}

TEST(OpsAttention, DiagMask) {
    env         e;
    gk_tensor * a  = e.f32(7, 5, 2);
    gk_tensor * mi = gk_diag_mask_inf(e.ctx, a, 2);
    gk_tensor * mz = gk_diag_mask_zero(e.ctx, a, 0);
    ASSERT_TRUE(compute(e.ctx, mi));
    ASSERT_TRUE(compute(e.ctx, mz));
    const auto          va = values(a);
    std::vector<double> ri, rz;
    for (int64_t i2 = 0; i2 < 2; ++i2)
        for (int64_t j = 0; j < 5; ++j)
            for (int64_t i = 0; i < 7; ++i) {
                const double x = va[flat(a->ne, i, j, i2)];
                ri.push_back(i > 2 + j ? -INFINITY : x);
                rz.push_back(i > j ? 0.0 : x);
            }
    expect_close(mi, ri, 0, 0, "diag_mask_inf");
    expect_close(mz, rz, 0, 0, "diag_mask_zero");
}

struct rope_cfg {
    int   n_dims, mode, n_ctx_orig;
    float base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    bool  freq_factors;
    int   max_pos;
};

void check_rope(const rope_cfg & c, const char * what) {
    env           e;
    const int64_t D = 32, H = 3, T = 7;
    gk_tensor *   a   = e.f32(D, H, T);
    gk_tensor *   pos = e.indices(c.max_pos, T);
    gk_tensor *   ff  = c.freq_factors ? e.positive(c.n_dims / 2) : nullptr;
    gk_tensor *   y   = gk_rope_ext(e.ctx, a, pos, ff, c.n_dims, c.mode, c.n_ctx_orig, c.base, c.freq_scale,
                                    c.ext_factor, c.attn_factor, c.beta_fast, c.beta_slow);
    ASSERT_TRUE(compute(e.ctx, y)) << what;
    const auto   va = values(a), vp = values(pos);
    const auto   vf = ff ? values(ff) : std::vector<double>{};
    const auto   corr = [&](double beta) {
        return c.n_dims * std::log(c.n_ctx_orig / (beta * 2 * std::numbers::pi)) / (2 * std::log(static_cast<double>(c.base)));
    };
    const double low  = std::max(0.0, std::floor(corr(c.beta_fast)));
    const double high = std::min(c.n_dims - 1.0, std::ceil(corr(c.beta_slow)));
    std::vector<double> ref(va.size());
    for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < H; ++h) {
            for (int64_t i = c.n_dims; i < D; ++i) ref[flat(a->ne, i, h, t)] = va[flat(a->ne, i, h, t)];
            for (int64_t i = 0; i < c.n_dims / 2; ++i) {
                const double extrap = vp[t] * std::pow(static_cast<double>(c.base), -2.0 * i / c.n_dims) / (ff ? vf[i] : 1.0);
                const double interp = c.freq_scale * extrap;
                double       theta = interp, mscale = c.attn_factor;
                if (c.ext_factor != 0) {
                    const double ramp = (1 - std::min(1.0, std::max(0.0, (i - low) / std::max(0.001, high - low)))) * c.ext_factor;
                    theta             = interp * (1 - ramp) + extrap * ramp;
                    mscale *= 1 + 0.1 * std::log(1.0 / c.freq_scale);
                }
                const int64_t j0 = c.mode == GK_ROPE_TYPE_NEOX ? i : 2 * i;
                const int64_t j1 = c.mode == GK_ROPE_TYPE_NEOX ? i + c.n_dims / 2 : 2 * i + 1;
                const double  x0 = va[flat(a->ne, j0, h, t)], x1 = va[flat(a->ne, j1, h, t)];
                ref[flat(a->ne, j0, h, t)] = (x0 * std::cos(theta) - x1 * std::sin(theta)) * mscale;
                ref[flat(a->ne, j1, h, t)] = (x0 * std::sin(theta) + x1 * std::cos(theta)) * mscale;
            }
        }
    // theta is built by repeated f32 multiplication: its relative error grows with the
    // pair index, so the bound scales with the largest position.
    expect_close(y, ref, 4e-6 * c.max_pos, 1e-5, what);
}

TEST(OpsAttention, Rope) {
    check_rope({32, GK_ROPE_TYPE_NORMAL, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "normal");
    check_rope({32, GK_ROPE_TYPE_NEOX, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "neox");
    check_rope({12, GK_ROPE_TYPE_NEOX, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "partial neox");
    check_rope({20, GK_ROPE_TYPE_NORMAL, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "partial normal");
    check_rope({32, GK_ROPE_TYPE_NORMAL, 0, 500000, 1, 0, 1, 0, 0, true, 100}, "freq factors");
    check_rope({32, GK_ROPE_TYPE_NEOX, 4096, 10000, 0.25f, 0, 1, 32, 1, false, 100}, "linear scaling");
    check_rope({32, GK_ROPE_TYPE_NEOX, 4096, 10000, 0.25f, 1, 1, 32, 1, false, 100}, "yarn");
    check_rope({32, GK_ROPE_TYPE_NORMAL, 2048, 10000, 0.5f, 0.5f, 0.8f, 32, 1, false, 100}, "yarn partial mix");
}

void check_flash(gk_type kv_type, bool masked, float max_bias, float softcap, bool sinks) {
    env           e;
    const int64_t blocks = gk_blck_size(kv_type) > 1;  // a block type needs rows of 32
    const int64_t D = blocks ? 32 : 16, Dv = blocks ? 32 : 8, Nq = 5, Nkv = 9, H = 4, Hk = 2, S = 2;
    gk_tensor *   q = e.f32(D, Nq, H, S);
    gk_tensor *   k = e.rand(kv_type, D, Nkv, Hk, S);
    gk_tensor *   v = e.rand(kv_type, Dv, Nkv, Hk, S);
    gk_tensor *   m = masked ? e.causal_mask(GK_TYPE_F16, Nkv, Nq) : nullptr;
    gk_tensor *   s = sinks ? e.f32(H) : nullptr;
    const float   scale = 0.25f;
    gk_tensor *   y = gk_flash_attn_ext(e.ctx, q, k, v, m, scale, max_bias, softcap);
    ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
    if (s) {
        ASSERT_TRUE(gk_flash_attn_ext_add_sinks(y, s));
    }
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          vq = values(q), vk = values(k), vv = values(v);
    const auto          vm = m ? values(m) : std::vector<double>{};
    const auto          vs = s ? values(s) : std::vector<double>{};
    std::vector<double> ref;
    for (int64_t sq = 0; sq < S; ++sq)
        for (int64_t iq = 0; iq < Nq; ++iq)
            for (int64_t h = 0; h < H; ++h) {
                const int64_t       hk = h / (H / Hk);
                std::vector<double> w(Nkv);
                for (int64_t j = 0; j < Nkv; ++j) {
                    double d = 0;
                    for (int64_t i = 0; i < D; ++i) d += vq[flat(q->ne, i, iq, h, sq)] * vk[flat(k->ne, i, j, hk, sq)];
                    d *= scale;
                    if (softcap > 0) d = softcap * std::tanh(d / softcap);
                    w[j] = d + (m ? alibi(max_bias, H, h) * vm[flat(m->ne, j, iq)] : 0.0);
                }
                softmax_ref(w, s ? &vs[h] : nullptr);
                for (int64_t i = 0; i < Dv; ++i) {
                    double o = 0;
                    for (int64_t j = 0; j < Nkv; ++j) o += w[j] * vv[flat(v->ne, i, j, hk, sq)];
                    ref.push_back(o);
                }
            }
    expect_close(y, ref, 1e-6, 1e-5, gk_type_name(kv_type));
}

TEST(OpsAttention, FlashAttnExt) {
    check_flash(GK_TYPE_F32, false, 0, 0, false);
    check_flash(GK_TYPE_F32, true, 0, 0, false);
    check_flash(GK_TYPE_F16, true, 4.0f, 0, false);
    check_flash(GK_TYPE_F16, true, 0, 2.0f, true);
    check_flash(GK_TYPE_Q8_0, true, 0, 0, false);
}

} // namespace
