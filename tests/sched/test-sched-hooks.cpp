// test-sched-hooks - what ggml_backend_sched's users call besides alloc and compute:
//   - the eval callback: every node is offered in graph order, each observed node shows
//     the value it has when the whole graph is computed with every tensor in its own
//     storage, and the output keeps its bits; returning false cancels (ABORTED);
//   - gk_sched_reserve grows the buffers and places nothing; a later allocation of the
//     same graph does not grow them; gk_sched_split_graph assigns only, a compute places;
//   - gk_sched_set_tensor_backend pins a node to a backend until gk_sched_reset; a backend
//     that is not the scheduler's, or does not support the op, is refused.
#include "../backend/backend_util.h"
#include "backend_double.h"

#include "gk/gk-sched.h"

#include <string>
#include <vector>

namespace {

using namespace gktest;

struct sched_deleter {
    void operator()(gk_sched * s) const { gk_sched_free(s); }
};
using sched_ptr = std::unique_ptr<gk_sched, sched_deleter>;

bool error_has(const char * what) { return std::string(gk_backend_last_error()).find(what) != std::string::npos; }

transformer_dims small_dims() {
    transformer_dims d;
    d.n_layer = 2;
    return d;
}

ctx_ptr graph_ctx() { return make_ctx(4096 * gk_tensor_overhead() + gk_graph_overhead_custom(4096, false), true); }

/// The transformer's graph (tensors without storage) and a scheduler over the CPU backend
/// alone, or over a double that refuses rope ("FIRST") and then the CPU.
struct scheduled {
    transformer_dims    d = small_dims();
    transformer_weights w{d};
    ctx_ptr             ctx = graph_ctx();
    transformer_graph   g   = build_transformer(ctx.get(), w, d);
    backend_double      dev{"FIRST", GK_OP_ROPE, false};
    backend_ptr         cpu{gk_backend_cpu_init()};
    sched_ptr           s;

    explicit scheduled(bool with_double) {
        std::vector<gk_backend_t> list{cpu.get()};
        if (with_double) {
            list.insert(list.begin(), dev.backend());
        }
        s.reset(gk_sched_new(list.data(), static_cast<int>(list.size())));
        EXPECT_NE(s, nullptr) << gk_backend_last_error();
    }
};

/// What the eval callback saw: the nodes offered, the values of those observed.
struct observer {
    const gk_cgraph *                       graph = nullptr;
    gk_op                                   watch = GK_OP_MUL_MAT;
    int                                     stop_after = -1;  // cancel at this observation
    std::vector<int>                        asked;            // node indices, in order
    std::vector<int>                        seen;
    std::vector<std::vector<unsigned char>> values;

    int index_of(const gk_tensor * t) const {
        for (int i = 0; i < gk_graph_n_nodes(graph); ++i) {
            if (gk_graph_node(graph, i) == t) {
                return i;
            }
        }
        return -1;
    }

    static bool callback(gk_tensor * t, bool ask, void * user) {
        auto * o = static_cast<observer *>(user);
        if (ask) {
            o->asked.push_back(o->index_of(t));
            return t->op == o->watch;
        }
        o->seen.push_back(o->index_of(t));
        o->values.push_back(bytes_of(t));
        return static_cast<int>(o->seen.size()) != o->stop_after;
    }
};

TEST(SchedHooks, EvalCallbackSeesEachAskedNodeInOrderWithItsValue) {
    scheduled                 t(false);
    const transformer_dims &  d = t.d;
    const transformer_graph & g = t.g;
    sched_ptr &               s = t.s;
    // The reference: every tensor in its own storage, so each node keeps its value.
    ctx_ptr                 rctx = make_ctx(graph_ctx_bytes(d, true), false);
    const transformer_graph ref  = build_transformer(rctx.get(), t.w, d);
    set_transformer_inputs(ref, 3);
    ASSERT_EQ(gk_graph_compute(ref.graph, 1), GK_STATUS_SUCCESS) << gk_last_error(rctx.get());

    observer o;
    o.graph = g.graph;
    gk_sched_set_eval_callback(s.get(), observer::callback, &o);
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    set_transformer_inputs(g, 3);
    ASSERT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();

    const int n = gk_graph_n_nodes(g.graph);
    ASSERT_EQ(static_cast<int>(o.asked.size()), n);
    std::vector<int> watched;
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(o.asked[static_cast<size_t>(i)], i);
        if (gk_graph_node(g.graph, i)->op == GK_OP_MUL_MAT) {
            watched.push_back(i);
        }
    }
    EXPECT_EQ(o.seen, watched);
    EXPECT_EQ(static_cast<int>(watched.size()), 7 * d.n_layer + 2 * d.n_layer);
    for (size_t j = 0; j < o.seen.size(); ++j) {
        EXPECT_EQ(o.values[j], bytes_of(gk_graph_node(ref.graph, o.seen[j]))) << "node " << o.seen[j];
    }
    EXPECT_EQ(bytes_of(g.out), bytes_of(ref.out));

    // Cleared: one compute, nothing offered.
    gk_sched_set_eval_callback(s.get(), nullptr, nullptr);
    o.asked.clear();
    ASSERT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_SUCCESS);
    EXPECT_TRUE(o.asked.empty());
}

TEST(SchedHooks, ReturningFalseCancelsTheCompute) {
    scheduled                 t(false);
    const transformer_graph & g = t.g;
    sched_ptr &               s = t.s;
    observer                  o;
    o.graph      = g.graph;
    o.stop_after = 2;
    gk_sched_set_eval_callback(s.get(), observer::callback, &o);
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS);
    set_transformer_inputs(g, 3);
    EXPECT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_ABORTED);
    ASSERT_EQ(o.seen.size(), 2u);
    EXPECT_EQ(o.asked.back(), o.seen.back());  // nothing offered after the cancel
}

TEST(SchedHooks, ReservePlacesNothingAndLaterAllocationsFit) {
    scheduled                 t(false);
    const transformer_graph & g   = t.g;
    sched_ptr &               s   = t.s;
    backend_ptr &             cpu = t.cpu;
    ASSERT_EQ(gk_sched_reserve(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    const size_t reserved = gk_sched_get_buffer_size(s.get(), cpu.get());
    EXPECT_GT(reserved, 0u);
    EXPECT_EQ(g.out->data, nullptr);
    EXPECT_EQ(g.x->data, nullptr);
    EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), g.out), cpu.get());  // assigned, not placed
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS);
    EXPECT_NE(g.out->data, nullptr);
    EXPECT_EQ(gk_sched_get_buffer_size(s.get(), cpu.get()), reserved);
    EXPECT_EQ(gk_sched_reserve(s.get(), nullptr), GK_STATUS_INVALID_ARGUMENT);
}

TEST(SchedHooks, SplitGraphAssignsAndAComputeThenPlaces) {
    scheduled                 t(true);
    const transformer_graph & g   = t.g;
    sched_ptr &               s   = t.s;
    backend_ptr &             cpu = t.cpu;
    backend_double &          dev = t.dev;
    ASSERT_EQ(gk_sched_split_graph(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(g.out->data, nullptr);
    EXPECT_EQ(gk_sched_get_buffer_size(s.get(), cpu.get()), 0u);
    EXPECT_GT(gk_sched_get_n_splits(s.get()), 2);
    EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), g.out), dev.backend());
    for (int i = 0; i < gk_graph_n_nodes(g.graph); ++i) {
        const gk_tensor * n = gk_graph_node(g.graph, i);
        if (n->op == GK_OP_ROPE) {
            EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), n), cpu.get());
        }
    }
    // Inputs are set after placing; a compute of a graph only split places it first.
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS);
    set_transformer_inputs(g, 5);
    ASSERT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    ASSERT_EQ(gk_sched_split_graph(s.get(), g.graph), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_NE(g.out->data, nullptr);
    EXPECT_EQ(gk_sched_split_graph(nullptr, g.graph), GK_STATUS_INVALID_ARGUMENT);
}

TEST(SchedHooks, ASetBackendPinsTheNodeUntilReset) {
    scheduled                 t(true);
    const transformer_graph & g   = t.g;
    sched_ptr &               s   = t.s;
    backend_ptr &             cpu = t.cpu;
    backend_double &          dev = t.dev;
    // The final rms_norm would go to the first backend (rule 3: its source's backend).
    gk_tensor * norm = g.out->src[0];
    ASSERT_EQ(norm->op, GK_OP_RMS_NORM);
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), norm), dev.backend());
    const auto ref = [&] {
        set_transformer_inputs(g, 5);
        EXPECT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
        return bytes_of(g.out);
    }();

    ASSERT_TRUE(gk_sched_set_tensor_backend(s.get(), norm, cpu.get()));
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), norm), cpu.get());
    EXPECT_TRUE(gk_sched_is_pinned(s.get(), norm));
    set_transformer_inputs(g, 5);
    ASSERT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(bytes_of(g.out), ref);

    gk_sched_reset(s.get());
    EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), norm), nullptr);
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), norm), dev.backend());  // the setting is gone

    // A rope set to the backend that refuses rope fails the allocation, naming the node.
    gk_tensor * rope = nullptr;
    for (int i = 0; i < gk_graph_n_nodes(g.graph) && !rope; ++i) {
        rope = gk_graph_node(g.graph, i)->op == GK_OP_ROPE ? gk_graph_node(g.graph, i) : nullptr;
    }
    ASSERT_NE(rope, nullptr);
    ASSERT_TRUE(gk_sched_set_tensor_backend(s.get(), rope, dev.backend()));
    EXPECT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_UNSUPPORTED);
    EXPECT_TRUE(error_has("does not support op ROPE")) << gk_backend_last_error();
    gk_sched_reset(s.get());

    backend_ptr other(gk_backend_cpu_init());
    EXPECT_FALSE(gk_sched_set_tensor_backend(s.get(), norm, other.get()));
    EXPECT_TRUE(error_has("not one of the scheduler's")) << gk_backend_last_error();
    EXPECT_FALSE(gk_sched_set_tensor_backend(s.get(), nullptr, cpu.get()));
    EXPECT_FALSE(gk_sched_set_tensor_backend(nullptr, norm, cpu.get()));
}

} // namespace
