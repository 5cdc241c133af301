// test-gallocr - the graph allocator case by case: the best-fit free list, storage
// reused after a last consumer, in-place placement (taken only when the compute pass
// marks the op, the layouts agree and nothing else needs the source; refused for
// leafs, inputs, outputs, shared sources, offset views and memory placed elsewhere),
// views of tensors allocated elsewhere left alone, reserve, several buffers, errors.
// Every graph is also computed with separate allocation and must agree bit for bit.
//
// The NoReuse tests run only with GK_ALLOC_NO_REUSE=1 (tests/backend/CMakeLists.txt
// registers that run).
#include "backend_util.h"

#include "gk/alloc/free_list.h"
#include "gk/debug.h"

#include <cstring>

namespace {

using namespace gktest;
using gk::alloc::free_list;

bool error_has(const char * part) { return std::strstr(gk_backend_last_error(), part) != nullptr; }

// ---- free list ---------------------------------------------------------------------------

TEST(FreeList, ExtendsTopWhenNothingFits) {
    free_list fl;
    EXPECT_EQ(fl.take(64), 0u);
    EXPECT_EQ(fl.take(128), 64u);
    EXPECT_EQ(fl.take(64), 192u);
    EXPECT_EQ(fl.top(), 256u);
    EXPECT_EQ(fl.high_water(), 256u);
}

TEST(FreeList, BestFitTakesTheSmallestBlockThatHolds) {
    free_list fl;
    const size_t a = fl.take(128);  // 0
    fl.take(64);                    // 128, kept
    const size_t c = fl.take(64);   // 192
    fl.take(64);                    // 256, kept (so c is below top)
    fl.give_back(a, 128);
    fl.give_back(c, 64);
    EXPECT_EQ(fl.n_free_blocks(), 2u);
    EXPECT_EQ(fl.take(64), c);      // the 64-byte block, not the first one that holds 64
    EXPECT_EQ(fl.take(64), 0u);     // now the 128-byte block, split
    EXPECT_EQ(fl.take(64), 64u);    // its rest
    EXPECT_EQ(fl.n_free_blocks(), 0u);
    EXPECT_EQ(fl.take(64), 320u);   // nothing left below top
    EXPECT_EQ(fl.high_water(), 384u);
}

TEST(FreeList, MergesNeighboursAndLowersTop) {
    free_list fl;
    const size_t r[4] = {fl.take(64), fl.take(64), fl.take(64), fl.take(64)};
    fl.give_back(r[0], 64);
    fl.give_back(r[2], 64);
    EXPECT_EQ(fl.n_free_blocks(), 2u);
    fl.give_back(r[1], 64);  // joins both neighbours
    EXPECT_EQ(fl.n_free_blocks(), 1u);
    EXPECT_EQ(fl.take(192), 0u);
    fl.give_back(0, 192);
    fl.give_back(r[3], 64);  // at the top: everything is free again
    EXPECT_EQ(fl.n_free_blocks(), 0u);
    EXPECT_EQ(fl.top(), 0u);
    EXPECT_EQ(fl.high_water(), 256u);
}

// ---- small graphs -------------------------------------------------------------------------

/// W: F32 [16, 16] in context memory (allocated elsewhere). Each case builds its graph
/// twice from an input x F32 [16, 4]: with separate allocation (the reference), then in
/// a no_alloc context placed by a gallocr, and the output must agree bit for bit.
class Small : public ::testing::Test {
protected:
    void SetUp() override {
        wctx = make_ctx(1 << 16, false);
        W    = gk_new_tensor_2d(wctx.get(), GK_TYPE_F32, 16, 16);
        gk_set_name(W, "W");
        fill_random(W, 5, 0.25f);
        w_before = bytes_of(W);
    }
    void TearDown() override { EXPECT_EQ(bytes_of(W), w_before) << "memory allocated elsewhere was written"; }

    static gk_tensor * input(gk_context * ctx) {
        gk_tensor * x = gk_new_tensor_2d(ctx, GK_TYPE_F32, 16, 4);
        gk_set_name(x, "x");
        gk_set_input(x);
        return x;
    }

    /// Run build(ctx, x) -> output both ways and compare; returns the gallocr graph.
    template <class F>
    gk_cgraph * run(F build) {
        std::vector<unsigned char> expected;
        {
            ctx_ptr     ref = make_ctx(1 << 20, false);
            gk_tensor * x   = input(ref.get());
            gk_tensor * out = build(ref.get(), x);
            EXPECT_NE(out, nullptr) << gk_last_error(ref.get());
            gk_set_output(out);
            gk_cgraph * g = gk_new_graph(ref.get());
            EXPECT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS);
            fill_random(x, 9, 1.0f);
            EXPECT_EQ(gk_graph_compute(g, 1), GK_STATUS_SUCCESS) << gk_last_error(ref.get());
            expected = bytes_of(out);
        }
        ctx                = make_ctx(64 * gk_tensor_overhead() + gk_graph_overhead(), true);
        gk_tensor *   x    = input(ctx.get());
        gk_tensor *   out  = build(ctx.get(), x);
        gk_set_output(out);
        gk_cgraph * g = gk_new_graph(ctx.get());
        EXPECT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS);
        galloc.reset(gk_gallocr_new(gk_backend_cpu_buffer_type()));
        EXPECT_TRUE(gk_gallocr_alloc_graph(galloc.get(), g)) << gk_backend_last_error();
        fill_random(x, 9, 1.0f);
        EXPECT_EQ(gk_graph_compute(g, 2), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
        EXPECT_EQ(bytes_of(out), expected);
        return g;
    }

    size_t buffer_size() const { return gk_gallocr_get_buffer_size(galloc.get(), 0); }

    ctx_ptr                    wctx;
    gk_tensor *                W = nullptr;
    std::vector<unsigned char> w_before;
    ctx_ptr                    ctx;
    gallocr_ptr                galloc;
};

bool reuse() { return !gk::debug().alloc_no_reuse; }

TEST_F(Small, StorageIsReusedAfterTheLastConsumer) {
    if (!reuse()) {
        GTEST_SKIP();
    }
    gk_tensor * y[4] = {};
    run([&](gk_context * c, gk_tensor * x) {
        gk_tensor * cur = x;
        for (gk_tensor *& t : y) {
            t = cur = gk_mul_mat(c, W, cur);  // 256 bytes each; mul_mat never runs in place
        }
        return cur;
    });
    // x is held; y1 and y2 alternate with y3 and y4: x + two live results.
    EXPECT_EQ(buffer_size(), 3 * 256u);
    EXPECT_EQ(y[2]->data, y[0]->data);
    EXPECT_EQ(y[3]->data, y[1]->data);
    EXPECT_NE(y[1]->data, y[0]->data);
    EXPECT_EQ(W->buffer, nullptr);  // left alone
}

TEST_F(Small, InPlaceOverASoleConsumedNode) {
    gk_tensor * a = nullptr;
    gk_tensor * b = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        a = gk_mul_mat(c, W, x);
        b = gk_rms_norm(c, a, 1e-6f);
        return gk_mul_mat(c, W, b);
    });
    EXPECT_EQ(b->data == a->data, reuse());
}

TEST_F(Small, NoInPlaceWhileTheSourceHasAnotherConsumer) {
    gk_tensor * a = nullptr;
    gk_tensor * b = nullptr;
    gk_tensor * s = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        a = gk_mul_mat(c, W, x);
        b = gk_rms_norm(c, a, 1e-6f);
        s = gk_add(c, b, a);  // a is still needed after b
        return gk_mul_mat(c, W, s);
    });
    EXPECT_NE(b->data, a->data);
    EXPECT_EQ(s->data == b->data, reuse());  // s is b's last consumer
}

TEST_F(Small, NoInPlaceOverALeafAnInputOrAnOutput) {
    gk_tensor * x0 = nullptr;
    gk_tensor * a  = nullptr;
    gk_tensor * m  = nullptr;
    gk_tensor * d  = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        x0 = x;
        a  = gk_sqr(c, x);  // x is a leaf and an input, a its sole consumer
        m  = gk_mul_mat(c, W, a);
        gk_set_output(m);
        d = gk_sqr(c, m);  // m is an output (kept, never overwritten), d its sole consumer
        return gk_mul_mat(c, W, d);
    });
    EXPECT_NE(a->data, x0->data);
    EXPECT_NE(d->data, m->data);
}

TEST_F(Small, NoInPlaceForOpsNotMarkedOrOtherLayouts) {
    gk_tensor * a = nullptr;
    gk_tensor * dup = nullptr;
    gk_tensor * t = nullptr;
    gk_tensor * sq = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        a   = gk_mul_mat(c, W, x);
        dup = gk_dup(c, a);  // DUP is not marked
        gk_tensor * m = gk_mul_mat(c, W, dup);
        t  = gk_transpose(c, m);  // [4, 16], strided
        sq = gk_sqr(c, t);        // marked, but its layout differs from t's
        return gk_cont(c, gk_transpose(c, sq));
    });
    EXPECT_NE(dup->data, a->data);
    EXPECT_NE(sq->data, t->data);
}

TEST_F(Small, InPlaceThroughAWholeViewNotAnOffsetOneOrASharedOne) {
    gk_tensor * a = nullptr;
    gk_tensor * b = nullptr;
    gk_tensor * m = nullptr;
    gk_tensor * e = nullptr;
    gk_tensor * s = nullptr;
    gk_tensor * n = nullptr;
    gk_tensor * f = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        a = gk_mul_mat(c, W, x);
        b = gk_rms_norm(c, gk_reshape_2d(c, a, 8, 8), 1e-6f);  // through a view covering a from byte 0
        m = gk_mul_mat(c, W, gk_reshape_2d(c, b, 16, 4));
        e = gk_sqr(c, gk_view_1d(c, m, 32, 32 * sizeof(float)));  // the second half of m: offset view
        s = gk_add(c, gk_view_1d(c, m, 32, 0), e);               // the first half, m's last holder by now
        n = gk_mul_mat(c, W, gk_reshape_2d(c, s, 16, 2));
        f = gk_add(c, gk_view_1d(c, n, 16, 0), gk_view_1d(c, n, 16, 16 * sizeof(float)));  // two views of n
        return f;
    });
    EXPECT_EQ(b->data == a->data, reuse());
    EXPECT_NE(e->data, m->data);
    EXPECT_EQ(s->data == m->data, reuse());
    EXPECT_NE(f->data, n->data);
}

TEST_F(Small, NoInPlaceThroughAnOffsetViewEvenWhenItIsTheLastHolder) {
    gk_tensor * a = nullptr;
    gk_tensor * e = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        a = gk_mul_mat(c, W, x);                                                   // [16, 4]
        e = gk_sqr(c, gk_view_2d(c, a, 16, 3, a->nb[1], a->nb[1]));                 // rows 1..3 of a
        return gk_mul_mat(c, W, e);
    });
    EXPECT_NE(e->data, a->data);  // row r would be written over the row another thread reads
}

TEST_F(Small, NoInPlaceOverALeafWithoutFlags) {
    ctx_ptr     c = make_ctx(8 * gk_tensor_overhead() + gk_graph_overhead(), true);
    gk_tensor * l = gk_new_tensor_2d(c.get(), GK_TYPE_F32, 16, 4);  // a leaf, not marked input
    gk_tensor * b = gk_sqr(c.get(), l);
    gk_tensor * d = gk_mul_mat(c.get(), W, b);
    gk_cgraph * g = gk_new_graph(c.get());
    ASSERT_EQ(gk_build_forward_expand(g, d), GK_STATUS_SUCCESS);
    gallocr_ptr ga(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    ASSERT_TRUE(gk_gallocr_alloc_graph(ga.get(), g)) << gk_backend_last_error();
    EXPECT_NE(b->data, l->data);  // a leaf keeps its values: the graph can run again
    fill_random(l, 8, 1.0f);
    const auto l_before = bytes_of(l);
    ASSERT_EQ(gk_graph_compute(g, 1), GK_STATUS_SUCCESS);
    EXPECT_EQ(bytes_of(l), l_before);
}

TEST_F(Small, ParamsKeepTheirStorage) {
    ctx_ptr     c = make_ctx(8 * gk_tensor_overhead() + gk_graph_overhead(), true);
    gk_tensor * p = gk_new_tensor_2d(c.get(), GK_TYPE_F32, 16, 4);
    gk_set_param(p);  // a node with no op: its values come from outside
    gk_tensor * y1 = gk_mul_mat(c.get(), W, p);
    gk_tensor * y2 = gk_mul_mat(c.get(), W, y1);
    gk_tensor * y3 = gk_mul_mat(c.get(), W, y2);
    gk_cgraph * g  = gk_new_graph(c.get());
    ASSERT_EQ(gk_build_forward_expand(g, y3), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_graph_node(g, 0), p);
    gallocr_ptr ga(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    ASSERT_TRUE(gk_gallocr_alloc_graph(ga.get(), g)) << gk_backend_last_error();
    EXPECT_NE(y2->data, p->data);
    EXPECT_NE(y3->data, p->data);
}

TEST_F(Small, InPlaceBuilderAliasesKeepTheirSourceAlive) {
    gk_tensor * a = nullptr;
    gk_tensor * s = nullptr;
    gk_tensor * m = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        a = gk_mul_mat(c, W, x);
        s = gk_scale_inplace(c, a, 2.0f);  // a view of a, computed over it
        m = gk_mul_mat(c, W, s);
        return gk_add(c, m, gk_sqr(c, x));
    });
    EXPECT_EQ(s->view_src, a);
    EXPECT_EQ(s->data, a->data);
    EXPECT_NE(m->data, a->data);  // a's storage is in use until m has run
}

TEST_F(Small, ViewsOfTensorsAllocatedElsewhereAreLeftAlone) {
    // Weights in their own buffer; one view made before they were placed (no data yet),
    // one after (data already set).
    ctx_ptr     wc  = make_ctx(4 * gk_tensor_overhead(), true);
    gk_tensor * Wt  = gk_new_tensor_2d(wc.get(), GK_TYPE_F32, 16, 16);
    ctx_ptr     cc  = make_ctx(32 * gk_tensor_overhead() + gk_graph_overhead(), true);
    gk_tensor * v1  = gk_view_2d(cc.get(), Wt, 16, 8, Wt->nb[1], 8 * Wt->nb[1]);  // rows 8..15
    buffer_ptr  wb(gk_backend_alloc_ctx_tensors_from_buft(wc.get(), gk_backend_cpu_buffer_type()));
    ASSERT_NE(wb, nullptr) << gk_backend_last_error();
    fill_random(Wt, 21, 0.25f);
    const auto  wt_before = bytes_of(Wt);
    gk_tensor * v2 = gk_view_1d(cc.get(), Wt, 16, 0);  // row 0, has data
    ASSERT_NE(v2->data, nullptr);
    void *      v2_data = v2->data;
    gk_tensor * x  = input(cc.get());
    gk_tensor * y  = gk_mul_mat(cc.get(), v1, x);  // [8, 4]
    gk_tensor * z  = gk_sqr(cc.get(), v2);         // marked in place, but v2 is not ours
    gk_tensor * out = gk_add(cc.get(), gk_reshape_1d(cc.get(), y, 32), gk_repeat(cc.get(), z, gk_new_tensor_1d(cc.get(), GK_TYPE_F32, 32)));
    ASSERT_NE(out, nullptr) << gk_last_error(cc.get());
    gk_cgraph * g = gk_new_graph(cc.get());
    ASSERT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS);

    gallocr_ptr ga(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    ASSERT_TRUE(gk_gallocr_alloc_graph(ga.get(), g)) << gk_backend_last_error();
    EXPECT_EQ(v1->data, static_cast<char *>(Wt->data) + 8 * Wt->nb[1]);
    EXPECT_EQ(v1->buffer, wb.get());
    EXPECT_EQ(v2->data, v2_data);
    EXPECT_EQ(Wt->buffer, wb.get());
    EXPECT_NE(z->data, v2->data);
    EXPECT_NE(z->buffer, wb.get());
    fill_random(x, 4, 1.0f);
    ASSERT_EQ(gk_graph_compute(g, 2), GK_STATUS_SUCCESS) << gk_last_error(cc.get());
    EXPECT_EQ(bytes_of(Wt), wt_before);

    // The values: row 8 + i of Wt dotted with token t of x, plus row 0 squared.
    std::vector<float> w(256), xs(64), o(32);
    gk_backend_tensor_get(Wt, w.data(), 0, 1024);
    gk_backend_tensor_get(x, xs.data(), 0, 256);
    gk_backend_tensor_get(out, o.data(), 0, 128);
    for (int t = 0; t < 4; ++t) {
        for (int i = 0; i < 8; ++i) {
            double dot = 0;
            for (int k = 0; k < 16; ++k) {
                dot += static_cast<double>(w[static_cast<size_t>((8 + i) * 16 + k)]) * xs[static_cast<size_t>(t * 16 + k)];
            }
            const float  r0   = w[static_cast<size_t>((8 * t + i) % 16)];
            const double want = dot + static_cast<double>(r0) * r0;
            EXPECT_NEAR(o[static_cast<size_t>(t * 8 + i)], want, 1e-5) << t << " " << i;
        }
    }
}

TEST_F(Small, ReserveSizesWithoutTouchingTheGraph) {
    ctx_ptr     c  = make_ctx(16 * gk_tensor_overhead() + 2 * gk_graph_overhead(), true);
    gk_tensor * x  = input(c.get());
    gk_tensor * a  = gk_mul_mat(c.get(), W, x);
    gk_tensor * b  = gk_mul_mat(c.get(), W, a);
    gk_cgraph * big = gk_new_graph(c.get());
    ASSERT_EQ(gk_build_forward_expand(big, b), GK_STATUS_SUCCESS);
    gk_cgraph * small = gk_new_graph(c.get());
    ASSERT_EQ(gk_build_forward_expand(small, a), GK_STATUS_SUCCESS);

    gallocr_ptr ga(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 0), 0u);
    ASSERT_TRUE(gk_gallocr_reserve(ga.get(), big));
    const size_t reserved = gk_gallocr_get_buffer_size(ga.get(), 0);
    EXPECT_EQ(reserved, 3 * 256u);  // x, a, b (a is consumed by b, nothing after)
    EXPECT_EQ(x->data, nullptr);
    EXPECT_EQ(a->data, nullptr);
    ASSERT_TRUE(gk_gallocr_alloc_graph(ga.get(), small));
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 0), reserved);  // no growth
    EXPECT_NE(a->data, nullptr);
    EXPECT_EQ(b->data, nullptr);
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 1), 0u);
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), -1), 0u);
}

TEST_F(Small, SeveralBuffers) {
    ctx_ptr     c = make_ctx(16 * gk_tensor_overhead() + 2 * gk_graph_overhead(), true);
    gk_tensor * x = input(c.get());
    gk_tensor * a = gk_mul_mat(c.get(), W, x);
    gk_tensor * b = gk_rms_norm(c.get(), a, 1e-6f);
    gk_tensor * d = gk_mul_mat(c.get(), W, b);
    gk_cgraph * g = gk_new_graph(c.get());
    ASSERT_EQ(gk_build_forward_expand(g, d), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_graph_n_nodes(g), 3);
    ASSERT_EQ(gk_graph_n_leafs(g), 2);  // W and x

    gk_backend_buffer_type_t bufts[2] = {gk_backend_cpu_buffer_type(), gk_backend_cpu_buffer_type()};
    gallocr_ptr              ga(gk_gallocr_new_n(bufts, 2));
    const int                node_ids[3] = {0, 1, 1};
    const int                leaf_ids[2] = {0, 0};
    const int                bad_ids[3]  = {0, 2, 1};
    EXPECT_FALSE(gk_gallocr_reserve_n(ga.get(), g, bad_ids, leaf_ids));
    EXPECT_TRUE(error_has("buffer id 2")) << gk_backend_last_error();
    // reserve_n_size measures what reserve_n allocates, and allocates nothing
    size_t sizes[2] = {1, 1};
    EXPECT_FALSE(gk_gallocr_reserve_n_size(ga.get(), g, bad_ids, leaf_ids, sizes));
    EXPECT_EQ(sizes[0], 1u);
    EXPECT_FALSE(gk_gallocr_reserve_n_size(ga.get(), g, node_ids, leaf_ids, nullptr));
    ASSERT_TRUE(gk_gallocr_reserve_n_size(ga.get(), g, node_ids, leaf_ids, sizes)) << gk_backend_last_error();
    EXPECT_EQ(sizes[0], 2 * 256u);
    EXPECT_EQ(sizes[1], 2 * 256u);
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 0), 0u);
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 1), 0u);
    ASSERT_TRUE(gk_gallocr_reserve_n(ga.get(), g, node_ids, leaf_ids)) << gk_backend_last_error();
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 0), 2 * 256u);  // x, a
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 1), 2 * 256u);  // b (not over a: another buffer), d
    ASSERT_TRUE(gk_gallocr_alloc_graph(ga.get(), g)) << gk_backend_last_error();
    EXPECT_EQ(x->buffer, a->buffer);
    EXPECT_NE(a->buffer, b->buffer);
    EXPECT_EQ(b->buffer, d->buffer);
    EXPECT_EQ(gk_backend_buffer_get_size(b->buffer), gk_gallocr_get_buffer_size(ga.get(), 1));
    fill_random(x, 3, 1.0f);
    ASSERT_EQ(gk_graph_compute(g, 1), GK_STATUS_SUCCESS) << gk_last_error(c.get());
    std::vector<unsigned char> expected;
    {
        ctx_ptr     r  = make_ctx(1 << 18, false);
        gk_tensor * rx = input(r.get());
        gk_tensor * rd = gk_mul_mat(r.get(), W, gk_rms_norm(r.get(), gk_mul_mat(r.get(), W, rx), 1e-6f));
        gk_cgraph * rg = gk_new_graph(r.get());
        ASSERT_EQ(gk_build_forward_expand(rg, rd), GK_STATUS_SUCCESS);
        fill_random(rx, 3, 1.0f);
        ASSERT_EQ(gk_graph_compute(rg, 1), GK_STATUS_SUCCESS);
        expected = bytes_of(rd);
    }
    EXPECT_EQ(bytes_of(d), expected);

    // A graph of another size needs reserve_n first.
    gk_cgraph * g2 = gk_new_graph(c.get());
    ASSERT_EQ(gk_build_forward_expand(g2, a), GK_STATUS_SUCCESS);
    EXPECT_FALSE(gk_gallocr_alloc_graph(ga.get(), g2));
    EXPECT_TRUE(error_has("gk_gallocr_reserve_n")) << gk_backend_last_error();
}

TEST(GallocrErrors, BadArguments) {
    EXPECT_EQ(gk_gallocr_new_n(nullptr, 1), nullptr);
    gk_backend_buffer_type_t none = nullptr;
    EXPECT_EQ(gk_gallocr_new_n(&none, 1), nullptr);
    EXPECT_TRUE(error_has("buffer type 0 is NULL")) << gk_backend_last_error();
    gallocr_ptr ga(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    EXPECT_FALSE(gk_gallocr_alloc_graph(ga.get(), nullptr));
    EXPECT_FALSE(gk_gallocr_reserve(nullptr, nullptr));
    gk_gallocr_free(nullptr);
}

TEST_F(Small, NoReuseGivesEveryTensorItsOwnStorage) {
    if (reuse()) {
        GTEST_SKIP() << "runs with GK_ALLOC_NO_REUSE=1";
    }
    gk_tensor * a = nullptr;
    gk_tensor * b = nullptr;
    run([&](gk_context * c, gk_tensor * x) {
        a               = gk_mul_mat(c, W, x);
        b               = gk_rms_norm(c, a, 1e-6f);
        gk_tensor * cur = b;
        for (int i = 0; i < 4; ++i) {
            cur = gk_mul_mat(c, W, cur);
        }
        return cur;
    });
    EXPECT_NE(b->data, a->data);
    EXPECT_EQ(buffer_size(), 7 * 256u);  // x, a, b and four products
}

} // namespace
