// test-sched - the scheduler (gk-sched.h) with backend doubles (backend_double.h):
//   - a double that computes on host memory but refuses one op: that op runs on the CPU,
//     results bit identical to the CPU alone;
//   - a double with "device" memory (host memory that says it is not): every value that
//     crosses between it and the CPU is staged, results bit identical to the CPU alone;
//   - smoothing never moves a pinned node (a matmul stays with its weight), and does
//     move a lone node that is not pinned;
//   - the allocator's per-memory accounting, to the byte;
//   - bad input gives a status and a message.
#include "../backend/backend_util.h"
#include "backend_double.h"

#include "gk/gk-sched.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace gktest;

struct sched_deleter {
    void operator()(gk_sched * s) const { gk_sched_free(s); }
};
using sched_ptr = std::unique_ptr<gk_sched, sched_deleter>;

/// A backend double first, the CPU backend second, and a scheduler over both in that
/// priority order.
struct double_then_cpu {
    backend_double dev;
    backend_ptr    cpu{gk_backend_cpu_init()};
    sched_ptr      s;

    double_then_cpu(const char * name, gk_op refused, bool device_memory) : dev(name, refused, device_memory) {
        gk_backend_t list[] = {dev.backend(), cpu.get()};
        s.reset(gk_sched_new(list, 2));
    }
};

bool error_has(const char * what) { return std::string(gk_backend_last_error()).find(what) != std::string::npos; }

ctx_ptr graph_ctx() { return make_ctx(4096 * gk_tensor_overhead() + gk_graph_overhead_custom(4096, false), true); }

transformer_dims small_dims() {
    transformer_dims d;
    d.n_layer = 3;
    return d;
}

/// The transformer's output on the CPU backend alone (one gallocr buffer, no scheduler).
std::vector<unsigned char> cpu_reference(const transformer_dims & d) {
    transformer_weights w(d);
    auto                ctx = graph_ctx();
    transformer_graph   g   = build_transformer(ctx.get(), w, d);
    gallocr_ptr         ga(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    EXPECT_TRUE(gk_gallocr_alloc_graph(ga.get(), g.graph)) << gk_backend_last_error();
    set_transformer_inputs(g, 7);
    backend_ptr cpu(gk_backend_cpu_init());
    EXPECT_EQ(gk_backend_graph_compute(cpu.get(), g.graph), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
    return bytes_of(g.out);
}

/// The splits of the last allocation, as (backend, first, n, copies) quadruples.
std::vector<int> split_list(gk_sched_t s) {
    std::vector<int> v;
    gk_sched_split   sp;
    for (int i = 0; gk_sched_get_split(s, i, &sp); ++i) {
        v.insert(v.end(), {sp.backend, sp.first_node, sp.n_nodes, sp.n_copies});
    }
    return v;
}

/// Every matmul whose weight is a weight of w is pinned to `to`; every node of op
/// `refused` runs on `cpu`.
void expect_assignment(gk_sched_t s, const transformer_graph & g, const transformer_weights & w, gk_backend_t to,
                       gk_op refused, gk_backend_t cpu) {
    int n_pinned = 0;
    for (int i = 0; i < gk_graph_n_nodes(g.graph); ++i) {
        const gk_tensor * n = gk_graph_node(g.graph, i);
        if (n->op == GK_OP_MUL_MAT && n->src[0]->buffer == w.buffer.get()) {
            EXPECT_EQ(gk_sched_get_tensor_backend(s, n), to) << n->name;
            EXPECT_TRUE(gk_sched_is_pinned(s, n)) << n->name;
            n_pinned++;
        }
        if (n->op == refused) {
            EXPECT_EQ(gk_sched_get_tensor_backend(s, n), cpu) << n->name;
        }
    }
    EXPECT_EQ(n_pinned, 7 * static_cast<int>(w.layers.size()));
}

TEST(Sched, OneCpuBackendIsOneSplitAndTheSameBits) {
    const transformer_dims d   = small_dims();
    const auto             ref = cpu_reference(d);
    transformer_weights    w(d);
    auto                   ctx = graph_ctx();
    transformer_graph      g   = build_transformer(ctx.get(), w, d);
    backend_ptr            cpu(gk_backend_cpu_init());
    gk_backend_t           list[] = {cpu.get()};
    sched_ptr              s(gk_sched_new(list, 1));
    ASSERT_NE(s, nullptr) << gk_backend_last_error();
    ASSERT_EQ(gk_sched_alloc_graph(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_get_n_splits(s.get()), 1);
    EXPECT_EQ(gk_sched_get_n_copies(s.get()), 0);
    set_transformer_inputs(g, 7);
    ASSERT_EQ(gk_sched_graph_compute(s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(bytes_of(g.out), ref);
}

TEST(Sched, ARefusedOpRunsOnTheCpuWithTheSameBits) {
    const transformer_dims d   = small_dims();
    const auto             ref = cpu_reference(d);
    double_then_cpu        two("REFUSER", GK_OP_ROPE, false);
    transformer_weights    w(d);
    auto                   ctx = graph_ctx();
    transformer_graph      g   = build_transformer(ctx.get(), w, d);
    ASSERT_NE(two.s, nullptr) << gk_backend_last_error();
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    expect_assignment(two.s.get(), g, w, two.dev.backend(), GK_OP_ROPE, two.cpu.get());
    EXPECT_GT(gk_sched_get_n_splits(two.s.get()), 2);
    EXPECT_EQ(gk_sched_get_n_copies(two.s.get()), 0);  // one memory: nothing to stage
    EXPECT_EQ(gk_sched_get_buffer_size(two.s.get(), two.dev.backend()),
              gk_sched_get_buffer_size(two.s.get(), two.cpu.get()));
    for (int nth : {1, 3}) {  // threads never change a bit, across backends either
        two.dev.set_n_threads(nth);
        gk_backend_cpu_set_n_threads(two.cpu.get(), nth);
        set_transformer_inputs(g, 7);
        ASSERT_EQ(gk_sched_graph_compute(two.s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
        EXPECT_EQ(bytes_of(g.out), ref) << nth << " threads";
    }
    EXPECT_EQ(two.dev.problem, "");
    EXPECT_GT(two.dev.computes, 0);
}

/// The transformer with its weights in a device double's memory, the double refusing
/// `refused`: results bit identical to the CPU alone, twice, with the same splits.
void check_device_memory(gk_op refused, const std::vector<unsigned char> & ref) {
    SCOPED_TRACE(gk_op_name(refused));
    const transformer_dims d = small_dims();
    double_then_cpu        two("FAKEDEV", refused, true);
    transformer_weights    w(d, two.dev.buft());  // the weights live in "device" memory
    auto                   ctx = graph_ctx();
    transformer_graph      g   = build_transformer(ctx.get(), w, d);
    ASSERT_NE(two.s, nullptr) << gk_backend_last_error();
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    expect_assignment(two.s.get(), g, w, two.dev.backend(), refused, two.cpu.get());
    const std::vector<int> splits = split_list(two.s.get());
    EXPECT_GT(gk_sched_get_n_splits(two.s.get()), 2);
    EXPECT_GT(gk_sched_get_n_copies(two.s.get()), 0);
    EXPECT_GT(gk_sched_get_buffer_size(two.s.get(), two.dev.backend()), 0u);
    EXPECT_GT(gk_sched_get_buffer_size(two.s.get(), two.cpu.get()), 0u);
    EXPECT_EQ(gk_backend_buffer_get_type(g.out->buffer),
              gk_backend_get_default_buffer_type(gk_sched_get_tensor_backend(two.s.get(), g.out)));
    set_transformer_inputs(g, 7);
    ASSERT_EQ(gk_sched_graph_compute(two.s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(bytes_of(g.out), ref);
    EXPECT_EQ(two.dev.problem, "");
    EXPECT_GT(two.dev.computes, 0);

    // The same graph again: the same splits, the same bits.
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(split_list(two.s.get()), splits);
    set_transformer_inputs(g, 7);
    ASSERT_EQ(gk_sched_graph_compute(two.s.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(bytes_of(g.out), ref);
    EXPECT_EQ(two.dev.problem, "");
}

TEST(Sched, DeviceMemoryIsStagedWithTheSameBits) {
    const auto ref = cpu_reference(small_dims());
    check_device_memory(GK_OP_SOFT_MAX, ref);  // activations cross both ways
    check_device_memory(GK_OP_ROPE, ref);      // rope reads a view (reshape) of device memory
    check_device_memory(GK_OP_MUL, ref);       // the norm weights are staged to the CPU
}

/// x [32, 5] input, a = x + x, m = w a (w [32, 32] in `wbuft`), out = a + m; returns out.
struct pin_graph {
    ctx_ptr     wctx = make_ctx(2 * gk_tensor_overhead(), true);
    buffer_ptr  wbuf;
    ctx_ptr     ctx = graph_ctx();
    gk_tensor * x = nullptr, *a = nullptr, *m = nullptr, *out = nullptr;
    gk_cgraph * graph = nullptr;

    explicit pin_graph(gk_backend_buffer_type_t wbuft) {
        gk_tensor * w = gk_new_tensor_2d(wctx.get(), GK_TYPE_F32, 32, 32);
        wbuf.reset(gk_backend_alloc_ctx_tensors_from_buft(wctx.get(), wbuft));
        fill_random(w, 3, 0.25f);
        x = gk_set_name(gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 32, 5), "x");
        gk_set_input(x);
        a   = gk_set_name(gk_add(ctx.get(), x, x), "a");
        m   = gk_set_name(gk_mul_mat(ctx.get(), w, a), "m");
        out = gk_set_name(gk_add(ctx.get(), a, m), "out");
        gk_set_output(a);
        gk_set_output(m);
        gk_set_output(out);
        graph = gk_new_graph(ctx.get());
        EXPECT_EQ(gk_build_forward_expand(graph, out), GK_STATUS_SUCCESS);
    }
};

size_t aligned(gk_backend_buffer_type_t buft, const gk_tensor * t) {
    const size_t al = gk_backend_buft_get_alignment(buft);
    return (gk_nbytes(t) + al - 1) / al * al;
}

TEST(Sched, SmoothingNeverUndoesAPin) {
    // The device refuses add, so a and out run on the CPU and the matmul between them is
    // a lone node - which smoothing would move to the CPU (moving the weight instead)
    // were it not pinned to its weight's memory.
    double_then_cpu two("FAKEDEV", GK_OP_ADD, true);
    pin_graph       p(two.dev.buft());
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), p.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_get_tensor_backend(two.s.get(), p.m), two.dev.backend());
    EXPECT_TRUE(gk_sched_is_pinned(two.s.get(), p.m));
    EXPECT_FALSE(gk_sched_is_pinned(two.s.get(), p.a));
    EXPECT_EQ(split_list(two.s.get()), (std::vector<int>{1, 0, 1, 0, 0, 1, 1, 1, 1, 2, 1, 1}));

    // The CPU alone, the weight in host memory: the same bits.
    pin_graph   q(gk_backend_cpu_buffer_type());
    gallocr_ptr ga(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    ASSERT_TRUE(gk_gallocr_alloc_graph(ga.get(), q.graph));
    fill_random(q.x, 5, 1.0f);
    ASSERT_EQ(gk_backend_graph_compute(two.cpu.get(), q.graph), GK_STATUS_SUCCESS);
    fill_random(p.x, 5, 1.0f);
    ASSERT_EQ(gk_sched_graph_compute(two.s.get(), p.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(bytes_of(p.out), bytes_of(q.out));
    EXPECT_EQ(two.dev.problem, "");
}

TEST(Sched, SmoothingMovesALoneNodeThatIsNotPinned) {
    // t = y^2 has no placed source, so rule 4 gives it the device (first in priority);
    // between a and c (CPU: the device refuses add) it is alone, and moves to the CPU.
    double_then_cpu two("FAKEDEV", GK_OP_ADD, true);
    auto            ctx = graph_ctx();
    gk_tensor *     x   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 64);
    gk_tensor *     y   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 64);
    gk_tensor *     a   = gk_add(ctx.get(), x, x);
    gk_tensor *     t   = gk_sqr(ctx.get(), y);
    gk_tensor *     c   = gk_add(ctx.get(), a, t);
    gk_cgraph *     g   = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, c), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_graph_node(g, 1), t);
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_get_tensor_backend(two.s.get(), t), two.cpu.get());
    EXPECT_FALSE(gk_sched_is_pinned(two.s.get(), t));
    EXPECT_EQ(gk_sched_get_n_splits(two.s.get()), 1);
    fill_random(x, 1, 1.0f);
    fill_random(y, 2, 1.0f);
    ASSERT_EQ(gk_sched_graph_compute(two.s.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    const auto         xs = random_values(64, 1, 1.0f);
    const auto         ys = random_values(64, 2, 1.0f);
    std::vector<float> out(64);
    ASSERT_EQ(gk_backend_tensor_get(c, out.data(), 0, sizeof(float) * 64), GK_STATUS_SUCCESS);
    for (size_t i = 0; i < 64; ++i) {
        EXPECT_EQ(out[i], (xs[i] + xs[i]) + ys[i] * ys[i]) << i;
    }
}

TEST(Sched, AViewOfDeviceMemoryIsReadThroughAViewOfItsCopy) {
    // v, row 3 of a weight in device memory, is a view pinned with its storage (rule 1);
    // y = v + x runs on the CPU (the device refuses add), which reads v through a view
    // of the staged copy of the whole weight, at v's offset.
    double_then_cpu two("FAKEDEV", GK_OP_ADD, true);
    auto            wctx = make_ctx(gk_tensor_overhead(), true);
    gk_tensor *     w    = gk_new_tensor_2d(wctx.get(), GK_TYPE_F32, 32, 8);
    buffer_ptr      wbuf(gk_backend_alloc_ctx_tensors_from_buft(wctx.get(), two.dev.buft()));
    ASSERT_NE(wbuf, nullptr) << gk_backend_last_error();
    fill_random(w, 9, 1.0f);
    auto        ctx = graph_ctx();
    gk_tensor * x   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 32);
    gk_tensor * v   = gk_view_1d(ctx.get(), w, 32, 3 * w->nb[1]);
    gk_tensor * y   = gk_add(ctx.get(), v, x);
    gk_cgraph * g   = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, y), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_get_tensor_backend(two.s.get(), v), two.dev.backend());
    EXPECT_TRUE(gk_sched_is_pinned(two.s.get(), v));
    EXPECT_EQ(gk_sched_get_tensor_backend(two.s.get(), y), two.cpu.get());
    EXPECT_EQ(gk_sched_get_n_copies(two.s.get()), 1);
    EXPECT_EQ(gk_sched_get_buffer_size(two.s.get(), two.cpu.get()), aligned(gk_backend_cpu_buffer_type(), x) +
                                                                        aligned(gk_backend_cpu_buffer_type(), w) +
                                                                        aligned(gk_backend_cpu_buffer_type(), y));
    fill_random(x, 4, 1.0f);
    ASSERT_EQ(gk_sched_graph_compute(two.s.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    const auto         ws = random_values(32 * 8, 9, 1.0f);
    const auto         xs = random_values(32, 4, 1.0f);
    std::vector<float> out(32);
    ASSERT_EQ(gk_backend_tensor_get(y, out.data(), 0, sizeof(float) * 32), GK_STATUS_SUCCESS);
    for (size_t i = 0; i < 32; ++i) {
        EXPECT_EQ(out[i], ws[3 * 32 + i] + xs[i]) << i;
    }
    EXPECT_EQ(two.dev.problem, "");
}

TEST(Sched, ATransposedViewOfDeviceMemoryKeepsItsStrides) {
    // The regression: the view of the staged copy took the element size as nb[0], so a
    // transposed (or permuted) view read the copy's elements in the wrong order.
    double_then_cpu two("FAKEDEV", GK_OP_ADD, true);
    auto            wctx = make_ctx(gk_tensor_overhead(), true);
    gk_tensor *     w    = gk_new_tensor_2d(wctx.get(), GK_TYPE_F32, 8, 32);
    buffer_ptr      wbuf(gk_backend_alloc_ctx_tensors_from_buft(wctx.get(), two.dev.buft()));
    ASSERT_NE(wbuf, nullptr) << gk_backend_last_error();
    fill_random(w, 9, 1.0f);
    auto        ctx = graph_ctx();
    gk_tensor * x   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 32, 8);
    gk_tensor * t   = gk_transpose(ctx.get(), w);  // [32, 8], nb[0] = 32 bytes
    gk_tensor * y   = gk_add(ctx.get(), t, x);
    gk_cgraph * g   = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, y), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    fill_random(x, 4, 1.0f);
    ASSERT_EQ(gk_sched_graph_compute(two.s.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    const auto         ws = random_values(8 * 32, 9, 1.0f);
    const auto         xs = random_values(32 * 8, 4, 1.0f);
    std::vector<float> out(32 * 8);
    ASSERT_EQ(gk_backend_tensor_get(y, out.data(), 0, sizeof(float) * out.size()), GK_STATUS_SUCCESS);
    for (size_t j = 0; j < 8; ++j) {
        for (size_t i = 0; i < 32; ++i) {
            EXPECT_EQ(out[j * 32 + i], ws[i * 8 + j] + xs[j * 32 + i]) << i << ", " << j;
        }
    }
}

TEST(Sched, EachMemoryIsAccountedToTheByte) {
    // The scheduler: the pin graph (every value held) puts x, a, out and the staged copy
    // of m in host memory, and m and the staged copy of a in the device's.
    double_then_cpu two("FAKEDEV", GK_OP_ADD, true);
    pin_graph       p(two.dev.buft());
    ASSERT_EQ(gk_sched_alloc_graph(two.s.get(), p.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
    const gk_backend_buffer_type_t host = gk_backend_cpu_buffer_type();
    EXPECT_EQ(gk_sched_get_buffer_size(two.s.get(), two.cpu.get()),
              aligned(host, p.x) + aligned(host, p.a) + aligned(host, p.m) + aligned(host, p.out));
    EXPECT_EQ(gk_sched_get_buffer_size(two.s.get(), two.dev.backend()),
              aligned(two.dev.buft(), p.a) + aligned(two.dev.buft(), p.m));
    EXPECT_EQ(gk_backend_buffer_get_type(p.m->buffer), two.dev.buft());
    EXPECT_EQ(gk_backend_buffer_get_type(p.out->buffer), host);
    EXPECT_EQ(gk_sched_get_buffer_size(two.s.get(), nullptr), 0u);

    // The allocator alone, two memories by buffer id: x (host), a = concat(x, x) and
    // b = a^2 (device), c = sum(b) (host). b may take a's storage (the device's in-place
    // policy, asked through its device) unless reuse is off.
    auto        ctx = graph_ctx();
    gk_tensor * x   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 1000);
    gk_tensor * a   = gk_concat(ctx.get(), x, x, 0);
    gk_tensor * b   = gk_sqr(ctx.get(), a);
    gk_tensor * c   = gk_sum(ctx.get(), b);
    gk_set_output(c);
    gk_cgraph * g = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, c), GK_STATUS_SUCCESS);
    gk_backend_buffer_type_t bufts[2] = {host, two.dev.buft()};
    gallocr_ptr              ga(gk_gallocr_new_n(bufts, 2));
    const int                node_ids[3] = {1, 1, 0};
    const int                leaf_ids[1] = {0};
    ASSERT_TRUE(gk_gallocr_reserve_n(ga.get(), g, node_ids, leaf_ids)) << gk_backend_last_error();
    ASSERT_TRUE(gk_gallocr_alloc_graph(ga.get(), g)) << gk_backend_last_error();
    const bool reuse = std::getenv("GK_ALLOC_NO_REUSE") == nullptr;
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 0), aligned(host, x) + aligned(host, c));
    EXPECT_EQ(gk_gallocr_get_buffer_size(ga.get(), 1), aligned(two.dev.buft(), a) * (reuse ? 1 : 2));
    EXPECT_EQ(b->data == a->data, reuse);
    EXPECT_EQ(gk_backend_buffer_get_type(a->buffer), two.dev.buft());
    EXPECT_EQ(gk_backend_buffer_get_type(c->buffer), host);
}

TEST(Sched, BadInputGivesAStatusAndAMessage) {
    backend_ptr  cpu(gk_backend_cpu_init());
    gk_backend_t none[] = {nullptr};
    EXPECT_EQ(gk_sched_new(nullptr, 1), nullptr);
    EXPECT_TRUE(error_has("need at least one backend")) << gk_backend_last_error();
    gk_backend_t one[] = {cpu.get()};
    EXPECT_EQ(gk_sched_new(one, 0), nullptr);
    EXPECT_TRUE(error_has("need at least one backend")) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_new(none, 1), nullptr);
    EXPECT_TRUE(error_has("backend 0 is NULL")) << gk_backend_last_error();
    gk_backend_t twice[] = {cpu.get(), cpu.get()};
    EXPECT_EQ(gk_sched_new(twice, 2), nullptr);
    EXPECT_TRUE(error_has("listed twice")) << gk_backend_last_error();

    sched_ptr s(gk_sched_new(one, 1));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(gk_sched_alloc_graph(s.get(), nullptr), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(error_has("graph is NULL")) << gk_backend_last_error();
    auto        ctx = graph_ctx();
    gk_cgraph * g   = gk_new_graph(ctx.get());
    EXPECT_EQ(gk_sched_graph_compute(nullptr, g), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(error_has("scheduler is NULL")) << gk_backend_last_error();
    gk_sched_split sp;
    EXPECT_FALSE(gk_sched_get_split(s.get(), 0, &sp));
    EXPECT_EQ(gk_sched_get_tensor_backend(s.get(), nullptr), nullptr);

    // An op no backend supports: the message names the node and the op.
    gk_tensor * w = gk_new_tensor_2d(ctx.get(), GK_TYPE_I32, 16, 4);  // the CPU has no i32 dot
    gk_tensor * m = gk_set_name(gk_mul_mat(ctx.get(), w, gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 16, 2)), "scores");
    ASSERT_NE(m, nullptr) << gk_last_error(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, m), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_sched_alloc_graph(s.get(), g), GK_STATUS_UNSUPPORTED);
    EXPECT_TRUE(error_has("node 0 'scores': no backend supports op MUL_MAT (backends: CPU)"))
        << gk_backend_last_error();
    EXPECT_EQ(gk_sched_graph_compute(s.get(), g), GK_STATUS_UNSUPPORTED);
    EXPECT_EQ(gk_sched_get_n_splits(s.get()), 0);

    backend_double dbl("REFUSER", GK_OP_MUL, false);  // alone, without a CPU to fall back on
    gk_backend_t   only[] = {dbl.backend()};
    sched_ptr      s2(gk_sched_new(only, 1));
    gk_tensor *    x  = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 8);
    gk_cgraph *    g2 = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g2, gk_set_name(gk_mul(ctx.get(), x, x), "prod")), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_sched_alloc_graph(s2.get(), g2), GK_STATUS_UNSUPPORTED);
    EXPECT_TRUE(error_has("'prod': no backend supports op MUL (backends: REFUSER)")) << gk_backend_last_error();
}

}  // namespace
