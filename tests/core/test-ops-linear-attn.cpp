// test-ops-linear-attn - rwkv_wkv6, gated_linear_attn, rwkv_wkv7 and gated_delta_net
// (scalar gate and KDA, broadcast q/k heads, snapshot slots) against references computed
// here in double, and bad input.
#include "op_check.h"

#include <cmath>
#include <functional>

namespace {

using namespace gk_test;

/// The rwkv / gla recurrences in double. Token tensors [S, H, T] are read at (i, h, t);
/// step(st, t, h, y) advances the S x S state of head h (st[i*S + j]) by token t.
using wkv_step = std::function<void(std::vector<double> & st, int64_t t, int64_t h, double * y)>;

std::vector<double> wkv_reference(int64_t S, int64_t H, int64_t T, const gk_tensor * state, const wkv_step & step) {
    const int64_t       n_seqs = state->ne[1];
    const auto          vs     = values(state);
    std::vector<double> y(static_cast<size_t>(S * H * T));
    std::vector<double> out_state(vs.size());
    for (int64_t seq = 0; seq < n_seqs; ++seq) {
        for (int64_t h = 0; h < H; ++h) {
            const size_t        off = static_cast<size_t>((seq * H + h) * S * S);
            std::vector<double> st(vs.begin() + off, vs.begin() + off + S * S);
            for (int64_t t = seq * (T / n_seqs); t < (seq + 1) * (T / n_seqs); ++t) {
                step(st, t, h, &y[static_cast<size_t>((t * H + h) * S)]);
            }
            std::copy(st.begin(), st.end(), out_state.begin() + off);
        }
    }
    y.insert(y.end(), out_state.begin(), out_state.end());
    return y;
}

constexpr int64_t S = 8, H = 3, T = 6, n_seqs = 2;

TEST(OpsLinearAttn, RwkvWkv6) {
    env         e;
    gk_tensor * k  = e.f32(S, H, T);
    gk_tensor * v  = e.f32(S, H, T);
    gk_tensor * r  = e.f32(S, H, T);
    gk_tensor * tf = e.f32(S, H);
    gk_tensor * td = e.rand(GK_TYPE_F32, S, H, T, 1, 0.2f, 1.0f);
    gk_tensor * st = e.f32(S * S * H, n_seqs);
    gk_tensor * y  = gk_rwkv_wkv6(e.ctx, k, v, r, tf, td, st);
    ASSERT_TRUE(compute(e.ctx, y, 4));
    ASSERT_EQ(y->ne[0], S * H);
    ASSERT_EQ(y->ne[1], T + S * n_seqs);
    const auto vk = values(k), vv = values(v), vr = values(r), vtf = values(tf), vtd = values(td);
    const auto ref = wkv_reference(S, H, T, st, [&](std::vector<double> & s, int64_t t, int64_t h, double * out) {
        for (int64_t j = 0; j < S; ++j) {
            double sum = 0;
            for (int64_t i = 0; i < S; ++i) {
                const double kv = vk[flat(k->ne, i, h, t)] * vv[flat(v->ne, j, h, t)];
                sum += vr[flat(r->ne, i, h, t)] * (vtf[flat(tf->ne, i, h)] * kv + s[i * S + j]);
                s[i * S + j] = s[i * S + j] * vtd[flat(td->ne, i, h, t)] + kv;
            }
            out[j] = sum;
        }
    });
    expect_close(y, ref, 1e-5, 1e-4, "rwkv_wkv6");
}

TEST(OpsLinearAttn, GatedLinearAttn) {
    env         e;
    gk_tensor * k     = e.f32(S, H, T);
    gk_tensor * v     = e.f32(S, H, T);
    gk_tensor * q     = e.f32(S, H, T);
    gk_tensor * g     = e.rand(GK_TYPE_F32, S, H, T, 1, 0.2f, 1.0f);
    gk_tensor * st    = e.f32(S * S * H, n_seqs);
    const float scale = 0.35f;
    gk_tensor * y     = gk_gated_linear_attn(e.ctx, k, v, q, g, st, scale);
    ASSERT_TRUE(compute(e.ctx, y, 3));
    const auto vk = values(k), vv = values(v), vq = values(q), vg = values(g);
    const auto ref = wkv_reference(S, H, T, st, [&](std::vector<double> & s, int64_t t, int64_t h, double * out) {
        for (int64_t j = 0; j < S; ++j) {
            double sum = 0;
            for (int64_t i = 0; i < S; ++i) {
                s[i * S + j] = s[i * S + j] * vg[flat(g->ne, i, h, t)] +
                               vk[flat(k->ne, i, h, t)] * vv[flat(v->ne, j, h, t)];
                sum += s[i * S + j] * vq[flat(q->ne, i, h, t)] * scale;
            }
            out[j] = sum;
        }
    });
    expect_close(y, ref, 1e-5, 1e-4, "gated_linear_attn");
}

TEST(OpsLinearAttn, RwkvWkv7) {
    env         e;
    gk_tensor * r  = e.f32(S, H, T);
    gk_tensor * w  = e.rand(GK_TYPE_F32, S, H, T, 1, 0.2f, 1.0f);
    gk_tensor * k  = e.f32(S, H, T);
    gk_tensor * v  = e.f32(S, H, T);
    gk_tensor * a  = e.rand(GK_TYPE_F32, S, H, T, 1, -0.5f, 0.0f);
    gk_tensor * b  = e.rand(GK_TYPE_F32, S, H, T, 1, 0.0f, 0.5f);
    gk_tensor * st = e.f32(S * S * H, n_seqs);
    gk_tensor * y  = gk_rwkv_wkv7(e.ctx, r, w, k, v, a, b, st);
    ASSERT_TRUE(compute(e.ctx, y, 5));
    const auto vr = values(r), vw = values(w), vk = values(k), vv = values(v), va = values(a), vb = values(b);
    const auto ref = wkv_reference(S, H, T, st, [&](std::vector<double> & s, int64_t t, int64_t h, double * out) {
        for (int64_t i = 0; i < S; ++i) {
            double sa = 0;
            for (int64_t j = 0; j < S; ++j) {
                sa += va[flat(a->ne, j, h, t)] * s[i * S + j];
            }
            double sum = 0;
            for (int64_t j = 0; j < S; ++j) {
                double & x = s[i * S + j];
                x          = x * vw[flat(w->ne, j, h, t)] + vv[flat(v->ne, i, h, t)] * vk[flat(k->ne, j, h, t)] +
                    sa * vb[flat(b->ne, j, h, t)];
                sum += x * vr[flat(r->ne, j, h, t)];
            }
            out[i] = sum;
        }
    });
    expect_close(y, ref, 1e-5, 1e-4, "rwkv_wkv7");
}

/// gated_delta_net in double: y [S, H, T, n_seqs], then K slots of [S, S, H, n_seqs].
std::vector<double> delta_net_reference(const gk_tensor * q, const gk_tensor * k, const gk_tensor * v,
                                        const gk_tensor * g, const gk_tensor * beta, const gk_tensor * state,
                                        int64_t K) {
    const auto    vq = values(q), vk = values(k), vv = values(v), vg = values(g), vb = values(beta), vs = values(state);
    const int64_t s = v->ne[0], h_n = v->ne[1], t_n = v->ne[2], seq_n = v->ne[3];
    std::vector<double> y(static_cast<size_t>(s * h_n * t_n * seq_n));
    std::vector<double> slots(static_cast<size_t>(K * s * s * h_n * seq_n));
    for (int64_t seq = 0; seq < seq_n; ++seq) {
        for (int64_t h = 0; h < h_n; ++h) {
            const int64_t       qh = h % q->ne[1], kh = h % k->ne[1];
            const int64_t       qs = seq / (seq_n / q->ne[3]), ks = seq / (seq_n / k->ne[3]);
            const size_t        off = static_cast<size_t>((seq * h_n + h) * s * s);
            std::vector<double> st(vs.begin() + off, vs.begin() + off + s * s);  // st[j*s + i] = S[i][j]
            const auto          save = [&](int64_t slot) {
                std::copy(st.begin(), st.end(), slots.begin() + static_cast<int64_t>(slot * s * s * h_n * seq_n + off));
            };
            for (int64_t slot = t_n; slot < K; ++slot) {
                save(slot);
            }
            for (int64_t t = 0; t < t_n; ++t) {
                const double b = vb[flat(beta->ne, 0, h, t, seq)];
                for (int64_t j = 0; j < s; ++j) {
                    for (int64_t i = 0; i < s; ++i) {
                        st[j * s + i] *= std::exp(vg[flat(g->ne, g->ne[0] == 1 ? 0 : i, h, t, seq)]);
                    }
                }
                std::vector<double> delta(static_cast<size_t>(s));
                for (int64_t j = 0; j < s; ++j) {
                    double sum = 0;
                    for (int64_t i = 0; i < s; ++i) {
                        sum += st[j * s + i] * vk[flat(k->ne, i, kh, t, ks)];
                    }
                    delta[j] = (vv[flat(v->ne, j, h, t, seq)] - sum) * b;
                }
                for (int64_t j = 0; j < s; ++j) {
                    double sum = 0;
                    for (int64_t i = 0; i < s; ++i) {
                        st[j * s + i] += vk[flat(k->ne, i, kh, t, ks)] * delta[j];
                        sum += st[j * s + i] * vq[flat(q->ne, i, qh, t, qs)];
                    }
                    y[flat(v->ne, j, h, t, seq)] = sum / std::sqrt(static_cast<double>(s));
                }
                if (t_n - 1 - t < K) {
                    save(t_n - 1 - t);
                }
            }
        }
    }
    y.insert(y.end(), slots.begin(), slots.end());
    return y;
}

TEST(OpsLinearAttn, GatedDeltaNet) {
    struct dn_case {
        const char * name;
        int64_t      hq, sq, T, K;
        bool         kda;
    };
    const dn_case cases[] = {
        {"scalar gate", 3, 2, 5, 1, false},
        {"kda", 3, 2, 5, 1, true},
        {"broadcast q/k heads and sequences", 1, 1, 4, 1, false},
        {"snapshots", 3, 2, 4, 3, true},
        {"snapshots past the tokens", 3, 2, 2, 4, false},
    };
    for (const dn_case & c : cases) {
        env           e;
        const int64_t hv = 3, nseq = 2;
        gk_tensor *   q  = e.f32(S, c.hq, c.T, c.sq);
        gk_tensor *   k  = e.rand(GK_TYPE_F32, S, c.hq, c.T, c.sq, -0.3f, 0.3f);
        gk_tensor *   v  = e.f32(S, hv, c.T, nseq);
        gk_tensor *   g  = e.rand(GK_TYPE_F32, c.kda ? S : 1, hv, c.T, nseq, -1.0f, 0.0f);
        gk_tensor *   bt = e.rand(GK_TYPE_F32, 1, hv, c.T, nseq, 0.0f, 1.0f);
        gk_tensor *   st = e.f32(S, S, hv, nseq);
        gk_tensor *   y  = gk_gated_delta_net(e.ctx, q, k, v, g, bt, st, c.K);
        ASSERT_TRUE(compute(e.ctx, y, 3)) << c.name;
        ASSERT_EQ(y->ne[0], S * hv) << c.name;
        ASSERT_EQ(y->ne[1], c.T * nseq + c.K * S * nseq) << c.name;
        expect_close(y, delta_net_reference(q, k, v, g, bt, st, c.K), 1e-5, 1e-4, c.name);
    }
}

TEST(OpsLinearAttn, EmptyShapes) {
    env         e;
    gk_tensor * st = e.f32(S * S * H, n_seqs);
    gk_tensor * x0 = e.f32(S, H, 0);  // no tokens: the result is the state
    gk_tensor * y  = gk_rwkv_wkv6(e.ctx, x0, x0, x0, e.f32(S, H), x0, st);
    ASSERT_TRUE(compute(e.ctx, y, 3));
    expect_close(y, values(st), 0, 0, "rwkv_wkv6 without tokens");
    gk_tensor * none = e.f32(S, 0, T);  // no heads: an empty result
    gk_tensor * g    = gk_gated_linear_attn(e.ctx, none, none, none, none, e.f32(0, n_seqs), 1.0f);
    ASSERT_TRUE(compute(e.ctx, g, 3));
    EXPECT_EQ(gk_nelements(g), 0);
    gk_tensor * v  = e.f32(S, H, 0, n_seqs);
    gk_tensor * s4 = e.f32(S, S, H, n_seqs);
    gk_tensor * dn = gk_gated_delta_net(e.ctx, v, v, v, e.f32(1, H, 0, n_seqs), e.f32(1, H, 0, n_seqs), s4, 2);
    ASSERT_TRUE(compute(e.ctx, dn, 3));
    auto       ref = values(s4);  // two slots, both the initial state
    const auto vs  = values(s4);
    ref.insert(ref.end(), vs.begin(), vs.end());
    expect_close(dn, ref, 0, 0, "gated_delta_net without tokens");
}

TEST(OpsLinearAttn, BadInputIsRefused) {
    env         e;
    gk_tensor * x   = e.f32(S, H, T);
    gk_tensor * st  = e.f32(S * S * H, n_seqs);
    const auto  bad = [&](gk_tensor * r, const char * what, const char * expect) {
        expect_refused(e.ctx, r, what, expect);
    };
    bad(gk_rwkv_wkv6(e.ctx, x, x, x, e.f32(S, H + 1), x, st), "tf size", "tf");
    bad(gk_rwkv_wkv6(e.ctx, x, e.f32(S, H, T + 1), x, e.f32(S, H), x, st), "token count", "token tensor");
    bad(gk_rwkv_wkv6(e.ctx, x, x, x, e.f32(S, H), x, e.f32(S * S * H, 4)), "sequences do not divide tokens", "n_seqs");
    bad(gk_gated_linear_attn(e.ctx, x, x, gk_transpose(e.ctx, e.f32(H, S)), x, st, 1.0f), "strided q", "contiguous");
    bad(gk_rwkv_wkv7(e.ctx, x, x, x, x, x, e.rand(GK_TYPE_F16, S, H, T), st), "f16 b", "must be f32");
    bad(gk_rwkv_wkv7(e.ctx, x, x, x, x, x, x, e.f32(S * S, n_seqs)), "state size", "state");

    gk_tensor * q  = e.f32(S, 2, T, 1);
    gk_tensor * v  = e.f32(S, 4, T, 2);
    gk_tensor * g  = e.f32(1, 4, T, 2);
    gk_tensor * bt = e.f32(1, 4, T, 2);
    gk_tensor * s4 = e.f32(S, S, 4, 2);
    ASSERT_NE(gk_gated_delta_net(e.ctx, q, q, v, g, bt, s4, 1), nullptr) << gk_last_error(e.ctx);
    bad(gk_gated_delta_net(e.ctx, e.f32(S, 3, T, 1), q, v, g, bt, s4, 1), "q heads do not divide", "q and k");
    bad(gk_gated_delta_net(e.ctx, q, e.f32(S + 1, 2, T, 1), v, g, bt, s4, 1), "k size", "q and k");
    bad(gk_gated_delta_net(e.ctx, q, q, v, e.f32(3, 4, T, 2), bt, s4, 1), "gate size", "g ");
    bad(gk_gated_delta_net(e.ctx, q, q, v, g, e.f32(2, 4, T, 2), s4, 1), "beta size", "beta");
    bad(gk_gated_delta_net(e.ctx, q, q, v, g, bt, e.f32(S, S, 4, 1), 1), "state size", "state");
    bad(gk_gated_delta_net(e.ctx, q, q, v, g, bt, s4, 0), "K = 0", "K = 0");
}

} // namespace
