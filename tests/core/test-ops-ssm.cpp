// test-ops-ssm - Mamba's ssm_conv and ssm_scan (Mamba-1 and Mamba-2 decay, groups, state
// ids, snapshot slots) against references computed here in double, and bad input.
#include "op_check.h"

#include <cmath>

namespace {

using namespace gk_test;

TEST(OpsSsm, ConvIsASlidingDotProduct) {
    env           e;
    const int64_t d_conv = 4, d_inner = 19, n_t = 6, n_s = 3;
    gk_tensor *   sx = e.f32(d_conv - 1 + n_t, d_inner, n_s);
    gk_tensor *   c  = e.f32(d_conv, d_inner);
    gk_tensor *   y  = gk_ssm_conv(e.ctx, sx, c);
    ASSERT_TRUE(compute(e.ctx, y, 4));
    ASSERT_EQ(y->ne[0], d_inner);
    ASSERT_EQ(y->ne[1], n_t);
    ASSERT_EQ(y->ne[2], n_s);
    const auto          vx = values(sx), vc = values(c);
    std::vector<double> ref;
    for (int64_t s = 0; s < n_s; ++s)
        for (int64_t t = 0; t < n_t; ++t)
            for (int64_t ch = 0; ch < d_inner; ++ch) {
                double sum = 0;
                for (int64_t i = 0; i < d_conv; ++i) {
                    sum += vx[flat(sx->ne, t + i, ch, s)] * vc[flat(c->ne, i, ch)];
                }
                ref.push_back(sum);
            }
    expect_close(y, ref, 1e-6, 1e-5, "ssm_conv");
}

double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

/// ssm_scan in double: y then K slots (slot k = state after token nt-1-k, or the initial
/// state where k >= nt).
std::vector<double> scan_reference(const gk_tensor * s, const gk_tensor * x, const gk_tensor * dt, const gk_tensor * A,
                                   const gk_tensor * B, const gk_tensor * C, const gk_tensor * ids, int64_t K) {
    const auto          vs = values(s), vx = values(x), vdt = values(dt), vA = values(A);
    const auto          vB = values(B), vC = values(C), vid = values(ids);
    const int64_t       nc = s->ne[0], nr = x->ne[0], nh = x->ne[1], nt = x->ne[2], ns = x->ne[3], ng = B->ne[1];
    const int64_t       state_n = nc * nr * nh;
    std::vector<double> y(static_cast<size_t>(gk_nelements(x)));
    std::vector<double> slots(static_cast<size_t>(K * state_n * ns));
    for (int64_t seq = 0; seq < ns; ++seq) {
        const auto          id = static_cast<int64_t>(vid[static_cast<size_t>(seq)]);
        std::vector<double> st(vs.begin() + id * state_n, vs.begin() + (id + 1) * state_n);
        for (int64_t k = 0; k < K; ++k) {
            if (k >= nt) {
                std::copy(st.begin(), st.end(), slots.begin() + (k * ns + seq) * state_n);
            }
        }
        for (int64_t t = 0; t < nt; ++t) {
            for (int64_t h = 0; h < nh; ++h) {
                const double  dts = softplus(vdt[flat(dt->ne, h, t, seq)]);
                const int64_t g   = h / (nh / ng);
                for (int64_t i1 = 0; i1 < nr; ++i1) {
                    double sum = 0;
                    for (int64_t i0 = 0; i0 < nc; ++i0) {
                        const double a  = A->ne[0] == 1 ? vA[flat(A->ne, 0, h)] : vA[flat(A->ne, i0, h)];
                        double &     sv = st[static_cast<size_t>((h * nr + i1) * nc + i0)];
                        sv              = sv * std::exp(dts * a) +
                             vB[flat(B->ne, i0, g, t, seq)] * vx[flat(x->ne, i1, h, t, seq)] * dts;
                        sum += sv * vC[flat(C->ne, i0, g, t, seq)];
                    }
                    y[flat(x->ne, i1, h, t, seq)] = sum;
                }
            }
            const int64_t slot = nt - 1 - t;
            if (slot < K) {
                std::copy(st.begin(), st.end(), slots.begin() + (slot * ns + seq) * state_n);
            }
        }
    }
    y.insert(y.end(), slots.begin(), slots.end());
    return y;
}

struct scan_case {
    const char * name;
    int64_t      d_state, head_dim, n_head, n_group, n_tokens, n_seqs, n_states, K;
    bool         mamba1;
};

TEST(OpsSsm, ScanMatchesTheRecurrence) {
    const scan_case cases[] = {
        {"mamba2", 16, 8, 6, 2, 5, 3, 4, 1, false},
        {"mamba2 snapshots", 8, 4, 4, 1, 4, 2, 2, 3, false},
        {"snapshots past the tokens", 8, 4, 2, 2, 2, 2, 3, 4, false},
        {"mamba1", 16, 5, 3, 1, 4, 2, 2, 1, true},
    };
    for (const scan_case & sc : cases) {
        env         e;
        gk_tensor * s   = e.f32(sc.d_state, sc.head_dim, sc.n_head, sc.n_states);
        gk_tensor * x   = e.f32(sc.head_dim, sc.n_head, sc.n_tokens, sc.n_seqs);
        gk_tensor * dt  = e.rand(GK_TYPE_F32, sc.n_head, sc.n_tokens, sc.n_seqs, 1, -3.0f, 3.0f);
        gk_tensor * A   = e.rand(GK_TYPE_F32, sc.mamba1 ? sc.d_state : 1, sc.n_head, 1, 1, -2.0f, -0.1f);
        gk_tensor * B   = e.f32(sc.d_state, sc.n_group, sc.n_tokens, sc.n_seqs);
        gk_tensor * C   = e.f32(sc.d_state, sc.n_group, sc.n_tokens, sc.n_seqs);
        gk_tensor * ids = e.indices(sc.n_states, sc.n_seqs);
        gk_tensor * y   = gk_ssm_scan(e.ctx, s, x, dt, A, B, C, ids, sc.K);
        ASSERT_TRUE(compute(e.ctx, y, 3)) << sc.name;
        expect_close(y, scan_reference(s, x, dt, A, B, C, ids, sc.K), 1e-5, 1e-4, sc.name);
    }
}

TEST(OpsSsm, BadInputIsRefused) {
    env         e;
    gk_tensor * s   = e.f32(8, 4, 2, 2);
    gk_tensor * x   = e.f32(4, 2, 3, 2);
    gk_tensor * dt  = e.f32(2, 3, 2);
    gk_tensor * A   = e.f32(1, 2);
    gk_tensor * B   = e.f32(8, 1, 3, 2);
    gk_tensor * ids = e.indices(2, 2);
    const auto  bad = [&](gk_tensor * r, const char * what, const char * expect) {
        expect_refused(e.ctx, r, what, expect);
    };
    bad(gk_ssm_conv(e.ctx, e.f32(2, 5, 2), e.f32(4, 5)), "sx shorter than the kernel", "d_conv");
    bad(gk_ssm_conv(e.ctx, e.f32(8, 5, 2), e.f32(4, 6)), "d_inner mismatch", "d_inner");
    bad(gk_ssm_conv(e.ctx, e.rand(GK_TYPE_F16, 8, 5), e.f32(4, 5)), "f16 sx", "must be f32");
    bad(gk_ssm_scan(e.ctx, s, x, dt, A, B, B, ids, 0), "K = 0", "K = 0");
    bad(gk_ssm_scan(e.ctx, s, x, e.f32(2, 4, 2), A, B, B, ids, 1), "dt tokens", "dt");
    bad(gk_ssm_scan(e.ctx, s, x, dt, A, e.f32(8, 3, 3, 2), e.f32(8, 3, 3, 2), ids, 1), "groups", "n_group");
    bad(gk_ssm_scan(e.ctx, s, x, dt, e.f32(8, 2), B, B, ids, 2), "mamba1 with snapshots", "K = 1");
    bad(gk_ssm_scan(e.ctx, s, x, dt, A, B, e.f32(8, 1, 3, 1), ids, 1), "B and C differ", "shapes differ");
    bad(gk_ssm_scan(e.ctx, s, x, dt, A, B, B, e.f32(2), 1), "f32 ids", "must be i32");

    auto * id     = static_cast<int32_t *>(ids->data);
    id[1]         = 2;  // only states 0 and 1
    gk_tensor * y = gk_ssm_scan(e.ctx, s, x, dt, A, B, B, ids, 1);
    ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
    gk_cgraph * g = gk_new_graph(e.ctx);
    gk_build_forward_expand(g, y);
    EXPECT_EQ(gk_graph_compute(g, 2), GK_STATUS_OUT_OF_RANGE);
}

} // namespace
