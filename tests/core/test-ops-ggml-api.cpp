// test-ops-ggml-api - the ops added for ggml's API (issue 14: what test-backend-ops and
// llama.cpp's graphs build): add_id, add_cast, fill, tri, diag, roll, count_equal,
// solve_tri, xielu, swiglu_clamp, the swapped GLUs, rope at an offset, DeepSeek-V4's
// hyper-connection ops and lightning indexer, against references computed here; their
// bad input; and the graph edits (add_node, cpy, dup).
#include "op_check.h"

#include <cmath>

namespace {

using namespace gk_test;

TEST(OpsGgmlApi, PlacementAndMatrices) {
    env         e;
    gk_tensor * a = e.f32(5, 5, 2);
    const auto  va = values(a);

    gk_tensor * lo = gk_tri(e.ctx, a, GK_TRI_TYPE_LOWER_DIAG);
    gk_tensor * up = gk_tri(e.ctx, a, GK_TRI_TYPE_UPPER);
    ASSERT_TRUE(compute(e.ctx, lo) && compute(e.ctx, up));
    std::vector<double> rlo, rup;
    for (int64_t k = 0; k < 2; ++k)
        for (int64_t r = 0; r < 5; ++r)
            for (int64_t c = 0; c < 5; ++c) {
                rlo.push_back(c <= r ? va[flat(a->ne, c, r, k)] : 0.0);
                rup.push_back(c > r ? va[flat(a->ne, c, r, k)] : 0.0);
            }
    expect_close(lo, rlo, 0, 0, "tri lower_diag");
    expect_close(up, rup, 0, 0, "tri upper");

    gk_tensor * row = e.f32(4, 1, 3);
    gk_tensor * d   = gk_diag(e.ctx, row);
    ASSERT_TRUE(compute(e.ctx, d));
    std::vector<double> rd;
    for (int64_t k = 0; k < 3; ++k)
        for (int64_t r = 0; r < 4; ++r)
            for (int64_t c = 0; c < 4; ++c) rd.push_back(c == r ? values(row)[flat(row->ne, c, 0, k)] : 0.0);
    expect_close(d, rd, 0, 0, "diag");

    gk_tensor * rl = gk_roll(e.ctx, a, 2, -1, 1, 0);
    ASSERT_TRUE(compute(e.ctx, rl));
    std::vector<double> rr;
    for (int64_t k = 0; k < 2; ++k)
        for (int64_t r = 0; r < 5; ++r)
            for (int64_t c = 0; c < 5; ++c) rr.push_back(va[flat(a->ne, (c + 3) % 5, (r + 1) % 5, (k + 1) % 2)]);
    expect_close(rl, rr, 0, 0, "roll (2, -1, 1)");

    gk_tensor * f = gk_fill(e.ctx, e.rand(GK_TYPE_F16, 7, 3), 0.5f);
    ASSERT_TRUE(compute(e.ctx, f));
    expect_close(f, std::vector<double>(21, 0.5), 0, 0, "fill f16");

    // A X = B by forward substitution; check A X against B.
    gk_tensor * A = e.positive(6, 6, 2);
    gk_tensor * B = e.f32(3, 6, 2);
    gk_tensor * X = gk_solve_tri(e.ctx, A, B, true, true, false);
    ASSERT_TRUE(compute(e.ctx, X));
    const auto vA = values(A), vB = values(B), vX = values(X);
    for (int64_t k = 0; k < 2; ++k)
        for (int64_t i = 0; i < 6; ++i)
            for (int64_t c = 0; c < 3; ++c) {
                double s = 0;
                for (int64_t t = 0; t <= i; ++t) s += vA[flat(A->ne, t, i, k)] * vX[flat(X->ne, c, t, k)];
                EXPECT_NEAR(s, vB[flat(B->ne, c, i, k)], 1e-4 * (1 + std::fabs(s))) << "row " << i << " col " << c;
            }
}

TEST(OpsGgmlApi, ArithmeticAndActivations) {
    env         e;
    gk_tensor * a   = e.f32(6, 3, 2);
    gk_tensor * b   = e.f32(6, 4);
    gk_tensor * ids = e.indices(4, 3, 2);
    gk_tensor * s   = gk_add_id(e.ctx, a, b, ids);
    ASSERT_TRUE(compute(e.ctx, s));
    const auto          va = values(a), vb = values(b), vi = values(ids);
    std::vector<double> ref;
    for (int64_t t = 0; t < 2; ++t)
        for (int64_t u = 0; u < 3; ++u)
            for (int64_t i = 0; i < 6; ++i) {
                const auto id = static_cast<int64_t>(vi[flat(ids->ne, u, t)]);
                ref.push_back(static_cast<float>(va[flat(a->ne, i, u, t)] + vb[flat(b->ne, i, id)]));
            }
    expect_close(s, ref, 0, 0, "add_id");

    gk_tensor * h    = e.rand(GK_TYPE_F16, 8, 3);
    gk_tensor * bias = e.f32(8);
    gk_tensor * c    = gk_add_cast(e.ctx, h, bias, GK_TYPE_F32);
    ASSERT_TRUE(c && c->type == GK_TYPE_F32);
    ASSERT_TRUE(compute(e.ctx, c));
    std::vector<double> rc;
    for (int64_t r = 0; r < 3; ++r)
        for (int64_t i = 0; i < 8; ++i) rc.push_back(static_cast<float>(values(h)[r * 8 + i] + values(bias)[i]));
    expect_close(c, rc, 0, 0, "add_cast f16 + f32 -> f32");

    gk_tensor * p  = e.indices(3, 40, 5);
    gk_tensor * q  = e.indices(3, 40, 5);
    gk_tensor * eq = gk_count_equal(e.ctx, p, q);
    ASSERT_TRUE(compute(e.ctx, eq));
    ASSERT_EQ(eq->type, GK_TYPE_I64);
    int64_t n_equal = 0;
    for (size_t i = 0; i < 200; ++i) n_equal += values(p)[i] == values(q)[i];
    EXPECT_EQ(*static_cast<const int64_t *>(eq->data), n_equal);

    gk_tensor * x = e.rand(GK_TYPE_F32, 9, 4, 1, 1, -8, 8);

    const float an = 0.8f, ap = 0.8f, beta = 0.5f, eps = -1e-6f;
    gk_tensor * xi = gk_xielu(e.ctx, x, an, ap, beta, eps);
    ASSERT_TRUE(compute(e.ctx, xi));
    const auto          vx = values(x);
    std::vector<double> rx;
    const float         spn = std::log(1.0f + std::exp(an)) + beta, spp = std::log(1.0f + std::exp(ap));
    for (double v : vx) {
        const float f = static_cast<float>(v);
        rx.push_back(f > 0 ? spp * f * f + beta * f : (std::expm1(std::fmin(f, eps)) - f) * spn + beta * f);
    }
    expect_close(xi, rx, 1e-6, 1e-6, "xielu");

    gk_tensor * g = gk_swiglu_clamp(e.ctx, e.rand(GK_TYPE_F32, 10, 3, 1, 1, -9, 9), nullptr, 2.5f);
    ASSERT_TRUE(compute(e.ctx, g));
    const auto          vg = values(g->src[0]);
    std::vector<double> rg;
    for (int64_t r = 0; r < 3; ++r)
        for (int64_t i = 0; i < 5; ++i) {
            const double xv = std::min(vg[r * 10 + i], 2.5), gv = std::clamp(vg[r * 10 + 5 + i], -2.5, 2.5);
            rg.push_back(xv / (1 + std::exp(-xv)) * gv);
        }
    expect_close(g, rg, 1e-6, 1e-5, "swiglu_clamp");

    gk_tensor * sw = gk_swiglu_swapped(e.ctx, e.f32(9, 2));  // odd row: the last element is not read
    gk_tensor * ss = gk_swiglu_split(e.ctx, gk_view_2d(e.ctx, sw->src[0], 4, 2, sw->src[0]->nb[1], 4 * sizeof(float)),
                                     gk_view_2d(e.ctx, sw->src[0], 4, 2, sw->src[0]->nb[1], 0));
    ASSERT_TRUE(compute(e.ctx, sw) && compute(e.ctx, ss));
    expect_close(sw, values(ss), 0, 0, "swiglu_swapped is swiglu_split(second half, first half)");
}

TEST(OpsGgmlApi, HyperConnectionsAndIndexer) {
    env         e;
    gk_tensor * x   = e.f32(5, 4, 3);
    gk_tensor * w   = e.f32(4, 3);
    gk_tensor * pre = gk_dsv4_hc_pre(e.ctx, x, w);
    ASSERT_TRUE(compute(e.ctx, pre));
    const auto          vx = values(x), vw = values(w);
    std::vector<double> ref;
    for (int64_t t = 0; t < 3; ++t)
        for (int64_t i = 0; i < 5; ++i) {
            float s = 0;
            for (int64_t h = 0; h < 4; ++h) s += static_cast<float>(vx[flat(x->ne, i, h, t)] * vw[flat(w->ne, h, t)]);
            ref.push_back(s);
        }
    expect_close(pre, ref, 1e-6, 1e-5, "dsv4_hc_pre");

    gk_tensor * comb = gk_dsv4_hc_comb(e.ctx, e.f32(24, 3), e.positive(3), e.f32(24), 1e-6f, 4);
    ASSERT_TRUE(compute(e.ctx, comb));
    const auto vc = values(comb);
    for (int64_t t = 0; t < 3; ++t)
        for (int64_t d = 0; d < 4; ++d) {
            double col = 0;  // after the last column normalisation each column sums to about 1
            for (int64_t s = 0; s < 4; ++s) col += vc[flat(comb->ne, d, s, t)];
            EXPECT_NEAR(col, 1.0, 1e-4) << "token " << t << " column " << d;
        }

    gk_tensor * post = gk_dsv4_hc_post(e.ctx, e.f32(5, 3), x, e.f32(4, 3), nullptr);
    ASSERT_TRUE(compute(e.ctx, post));
    EXPECT_EQ(post->ne[0], 5);
    EXPECT_EQ(post->ne[1], 4);

    gk_tensor * li = gk_lightning_indexer(e.ctx, e.f32(8, 2, 3), e.f32(8, 1, 6), e.f32(2, 3),
                                          e.rand(GK_TYPE_F16, 6, 3, 1, 1, -1, 0));
    ASSERT_TRUE(compute(e.ctx, li));
    const auto vq = values(li->src[0]), vk = values(li->src[1]), vwi = values(li->src[2]), vm = values(li->src[3]);
    std::vector<double> rl;
    for (int64_t t = 0; t < 3; ++t)
        for (int64_t ik = 0; ik < 6; ++ik) {
            double score = 0;
            for (int64_t h = 0; h < 2; ++h) {
                double qk = 0;
                for (int64_t i = 0; i < 8; ++i) qk += vq[(t * 2 + h) * 8 + i] * vk[ik * 8 + i];
                score += std::max(qk, 0.0) * vwi[t * 2 + h];
            }
            rl.push_back(score + vm[t * 6 + ik]);
        }
    expect_close(li, rl, 1e-5, 1e-5, "lightning_indexer");
}

TEST(OpsGgmlApi, RopeOffsetAndGraphEdits) {
    env         e;
    gk_tensor * r = gk_rope(e.ctx, e.f32(16, 2, 3), e.indices(50, 3), 8, GK_ROPE_TYPE_NEOX);
    EXPECT_FALSE(gk_rope_set_offset(r, 3));   // odd
    EXPECT_FALSE(gk_rope_set_offset(r, 10));  // 10 + 8 > 16
    EXPECT_FALSE(gk_rope_set_offset(e.f32(4), 0));
    EXPECT_TRUE(gk_rope_set_offset(r, 8));
    EXPECT_EQ(gk_get_op_params_i32(r, 15), 8);

    gk_tensor * a = e.f32(4);
    gk_tensor * n = gk_neg(e.ctx, a);
    gk_cgraph * g = gk_new_graph_custom(e.ctx, 2, false);
    ASSERT_EQ(gk_build_forward_expand(g, n), GK_STATUS_SUCCESS);
    gk_tensor * s = gk_sqr(e.ctx, a);
    EXPECT_TRUE(gk_graph_add_node(g, s));
    EXPECT_FALSE(gk_graph_add_node(g, s));  // full: size 2
    EXPECT_EQ(gk_graph_n_nodes(g), 2);
    gk_cgraph * big = gk_new_graph_custom(e.ctx, 8, false);
    EXPECT_EQ(gk_graph_cpy(g, big), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_graph_cpy(big, gk_new_graph_custom(e.ctx, 1, false)), GK_STATUS_INVALID_ARGUMENT);  // too small
    EXPECT_EQ(gk_graph_node(big, 1), s);
    EXPECT_EQ(gk_build_forward_expand(big, n), GK_STATUS_SUCCESS);  // visited: not added again
    EXPECT_EQ(gk_graph_n_nodes(big), 2);
    gk_cgraph * dup = gk_graph_dup(e.ctx, g, false);
    ASSERT_NE(dup, nullptr);
    EXPECT_EQ(gk_graph_size(dup), 2);
    EXPECT_EQ(gk_graph_leaf(dup, 0), a);
}

TEST(OpsGgmlApi, BadInputIsRefused) {
    env        e;
    const auto bad = [&](gk_tensor * r, const char * what, const char * expect) {
        expect_refused(e.ctx, r, what, expect);
    };
    bad(gk_add_id(e.ctx, e.f32(6, 3, 2), e.f32(5, 4), e.indices(4, 3, 2)), "add_id row length", "do not match");
    bad(gk_add_id(e.ctx, e.f32(6, 3, 2), e.f32(6, 4), e.f32(3, 2)), "add_id ids type", "ids must be i32");
    bad(gk_add_cast(e.ctx, e.f32(6, 3), e.f32(5), GK_TYPE_F16), "add_cast rows", "cannot be broadcast");
    bad(gk_add_cast(e.ctx, e.f32(6, 3), e.f32(6), GK_TYPE_COUNT), "add_cast type", "no row encoder");
    bad(gk_fill(e.ctx, e.indices(3, 4), 1.0f), "fill i32", "must be f32, f16 or bf16");
    bad(gk_tri(e.ctx, e.f32(4, 5), GK_TRI_TYPE_LOWER), "tri not square", "square");
    bad(gk_tri(e.ctx, e.f32(4, 4), static_cast<gk_tri_type>(7)), "tri type", "unknown triangle type 7");
    bad(gk_diag(e.ctx, e.f32(4, 2)), "diag ne1", "ne1 == 1");
    bad(gk_roll(e.ctx, e.f32(4, 3), 4, 0, 0, 0), "roll shift", "shift0 = 4");
    bad(gk_count_equal(e.ctx, e.indices(3, 4), e.indices(3, 5)), "count_equal shapes", "shapes differ");
    bad(gk_count_equal(e.ctx, e.f32(4), e.f32(4)), "count_equal f32", "must be i32");
    bad(gk_solve_tri(e.ctx, e.f32(4, 4), e.f32(2, 4), true, false, false), "solve_tri upper", "only left, lower");
    bad(gk_solve_tri(e.ctx, e.f32(4, 4), e.f32(2, 5), true, true, false), "solve_tri rows", "[k, n, C, D]");
    bad(gk_xielu(e.ctx, e.indices(3, 4), 1, 1, 1, 1), "xielu i32", "must be f32, f16 or bf16");
    bad(gk_glu(e.ctx, e.f32(8), GK_GLU_OP_SWIGLU_CLAMP, false), "glu swiglu_clamp", "use gk_swiglu_clamp");
    bad(gk_dsv4_hc_comb(e.ctx, e.f32(20, 3), e.f32(3), e.f32(20), 1e-6f, 2), "hc_comb mix dim", "(2 + 4) * 4");
    bad(gk_dsv4_hc_comb(e.ctx, e.f32(24, 3), e.f32(2), e.f32(24), 1e-6f, 2), "hc_comb scale", "at least 3");
    bad(gk_dsv4_hc_pre(e.ctx, e.f32(5, 4, 3), e.f32(4, 2)), "hc_pre weights", "must be [4, 3, 1, 1]");
    bad(gk_dsv4_hc_post(e.ctx, e.f32(5, 3), e.f32(5, 4, 3), e.f32(4, 3), e.f32(4, 3, 3)), "hc_post comb",
        "comb [4, 3, 3, 1] f32 must be [4, 4, 3, 1]");
    bad(gk_lightning_indexer(e.ctx, e.f32(8, 2, 3), e.f32(7, 1, 6), e.f32(2, 3), e.rand(GK_TYPE_F16, 6, 3)),
        "lightning_indexer d", "do not match");
}

} // namespace
