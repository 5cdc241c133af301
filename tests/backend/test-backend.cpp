// test-backend - the backend and buffer interface with the CPU backend, the device
// registry, whole-context allocation, and the graph allocator on a 12-layer
// transformer: at least 20x less memory than separate allocation, outputs bit identical
// to the separately allocated run (which is what catches a lifetime computed too short:
// that returns wrong numbers, not a crash), again after a second allocation of the same
// graph and after a different graph has grown the buffer.
#include "backend_util.h"

#include "gk/debug.h"

#include <cstring>
#include <string>

namespace {

using namespace gktest;

bool error_has(const char * part) { return std::strstr(gk_backend_last_error(), part) != nullptr; }

// ---- buffer types and buffers -----------------------------------------------------------

TEST(Buffer, CpuBufferType) {
    gk_backend_buffer_type_t buft = gk_backend_cpu_buffer_type();
    EXPECT_STREQ(gk_backend_buft_name(buft), "CPU");
    EXPECT_EQ(gk_backend_buft_get_alignment(buft), size_t{GK_MEM_ALIGN});
    EXPECT_EQ(gk_backend_buft_get_max_size(buft), SIZE_MAX);
    EXPECT_TRUE(gk_backend_buft_is_host(buft));
    EXPECT_EQ(gk_backend_buft_get_device(buft), gk_backend_dev_by_type(GK_BACKEND_DEVICE_TYPE_CPU));

    buffer_ptr buf(gk_backend_buft_alloc_buffer(buft, 1000));
    ASSERT_NE(buf, nullptr) << gk_backend_last_error();
    EXPECT_EQ(gk_backend_buffer_get_size(buf.get()), 1000u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(gk_backend_buffer_get_base(buf.get())) % GK_MEM_ALIGN, 0u);
    EXPECT_EQ(gk_backend_buffer_get_type(buf.get()), buft);
    EXPECT_TRUE(gk_backend_buffer_is_host(buf.get()));
    EXPECT_EQ(gk_backend_buffer_get_usage(buf.get()), GK_BACKEND_BUFFER_USAGE_ANY);
    gk_backend_buffer_set_usage(buf.get(), GK_BACKEND_BUFFER_USAGE_WEIGHTS);
    EXPECT_EQ(gk_backend_buffer_get_usage(buf.get()), GK_BACKEND_BUFFER_USAGE_WEIGHTS);
    gk_backend_buffer_clear(buf.get(), 0x5A);
    const auto * base = static_cast<const unsigned char *>(gk_backend_buffer_get_base(buf.get()));
    for (size_t i = 0; i < 1000; ++i) {
        ASSERT_EQ(base[i], 0x5A) << i;
    }

    buffer_ptr empty(gk_backend_buft_alloc_buffer(buft, 0));
    ASSERT_NE(empty, nullptr);
    EXPECT_EQ(gk_backend_buffer_get_size(empty.get()), 0u);
    EXPECT_NE(gk_backend_buffer_get_base(empty.get()), nullptr);
}

TEST(Buffer, TensorAllocSetGetAndBounds) {
    auto       ctx = make_ctx(8 * gk_tensor_overhead(), true);
    gk_tensor * a   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 8, 4);  // 128 bytes
    gk_tensor * v   = gk_view_1d(ctx.get(), a, 8, 2 * a->nb[1]);      // row 2
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->data, nullptr);

    float out[8];
    EXPECT_EQ(gk_backend_tensor_get(a, out, 0, sizeof(out)), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(error_has("has no data")) << gk_backend_last_error();

    buffer_ptr buf(gk_backend_buft_alloc_buffer(gk_backend_cpu_buffer_type(), 256));
    char *     base = static_cast<char *>(gk_backend_buffer_get_base(buf.get()));
    EXPECT_EQ(gk_backend_tensor_alloc(buf.get(), a, base + 192), GK_STATUS_INVALID_ARGUMENT);  // 128 > 64 left
    EXPECT_TRUE(error_has("does not fit")) << gk_backend_last_error();
    EXPECT_EQ(gk_backend_tensor_alloc(buf.get(), a, base + 1), GK_STATUS_INVALID_ARGUMENT);  // misaligned f32
    EXPECT_TRUE(error_has("not aligned to the 4 bytes f32 needs")) << gk_backend_last_error();
    EXPECT_EQ(a->data, nullptr);
    EXPECT_EQ(gk_backend_view_init(v), GK_STATUS_INVALID_ARGUMENT);  // source not placed yet
    ASSERT_EQ(gk_backend_tensor_alloc(buf.get(), a, base + 64), GK_STATUS_SUCCESS);
    EXPECT_EQ(a->buffer, buf.get());
    EXPECT_EQ(a->data, base + 64);
    ASSERT_EQ(gk_backend_view_init(v), GK_STATUS_SUCCESS);
    EXPECT_EQ(v->data, base + 64 + 2 * a->nb[1]);
    EXPECT_EQ(v->buffer, buf.get());

    const auto vals = random_values(32, 7, 1.0f);
    ASSERT_EQ(gk_backend_tensor_set(a, vals.data(), 0, 128), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_backend_tensor_get(v, out, 0, sizeof(out)), GK_STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(out, vals.data() + 16, sizeof(out)), 0);
    ASSERT_EQ(gk_backend_tensor_memset(v, 0, 4, 8), GK_STATUS_SUCCESS);  // elements 1, 2 of row 2
    ASSERT_EQ(gk_backend_tensor_get(a, out, 2 * a->nb[1], sizeof(out)), GK_STATUS_SUCCESS);
    EXPECT_EQ(out[0], vals[16]);
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_EQ(out[3], vals[19]);

    // Out of range: refused with a message, nothing copied.
    EXPECT_EQ(gk_backend_tensor_set(a, vals.data(), 4, 128), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(error_has("outside its 128 bytes")) << gk_backend_last_error();
    EXPECT_EQ(gk_backend_tensor_get(v, out, 0, 33), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(gk_backend_tensor_set(a, vals.data(), SIZE_MAX, 2), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(gk_backend_tensor_memset(a, 0, 120, 9), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(gk_backend_tensor_set(nullptr, vals.data(), 0, 4), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(gk_backend_tensor_set(a, nullptr, 0, 4), GK_STATUS_INVALID_ARGUMENT);
    ASSERT_EQ(gk_backend_tensor_get(a, out, 0, sizeof(out)), GK_STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(out, vals.data(), sizeof(out)), 0);
}

TEST(Buffer, ContextMemoryAndCopy) {
    auto        host = make_ctx(1 << 16, false);  // allocating: data, no buffer
    gk_tensor * a    = gk_new_tensor_1d(host.get(), GK_TYPE_F32, 16);
    ASSERT_EQ(a->buffer, nullptr);
    fill_random(a, 3, 2.0f);

    auto        ctx = make_ctx(4 * gk_tensor_overhead(), true);
    gk_tensor * b   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 16);
    gk_tensor * c   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 4, 4);
    buffer_ptr  buf(gk_backend_alloc_ctx_tensors_from_buft(ctx.get(), gk_backend_cpu_buffer_type()));
    ASSERT_NE(buf, nullptr) << gk_backend_last_error();
    ASSERT_EQ(gk_backend_tensor_copy(a, b), GK_STATUS_SUCCESS) << gk_backend_last_error();
    ASSERT_EQ(gk_backend_tensor_copy(b, c), GK_STATUS_SUCCESS) << gk_backend_last_error();
    EXPECT_EQ(bytes_of(c), bytes_of(a));

    gk_tensor * small = gk_new_tensor_1d(host.get(), GK_TYPE_F32, 15);
    EXPECT_EQ(gk_backend_tensor_copy(a, small), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(error_has("equal byte counts")) << gk_backend_last_error();
}

TEST(Buffer, FromHostPointer) {
    alignas(GK_MEM_ALIGN) static float mem[64];
    buffer_ptr buf(gk_backend_cpu_buffer_from_ptr(mem, sizeof(mem)));
    ASSERT_NE(buf, nullptr) << gk_backend_last_error();
    EXPECT_EQ(gk_backend_buffer_get_base(buf.get()), mem);
    EXPECT_EQ(gk_backend_buffer_get_size(buf.get()), sizeof(mem));
    EXPECT_EQ(gk_backend_cpu_buffer_from_ptr(reinterpret_cast<char *>(mem) + 4, 16), nullptr);
    EXPECT_TRUE(error_has("not aligned")) << gk_backend_last_error();
    buf.reset();  // leaves mem alone (ASan would report a bad free)
    mem[0] = 1.0f;
}

TEST(Buffer, AllocCtxTensors) {
    auto        ctx = make_ctx(8 * gk_tensor_overhead(), true);
    gk_tensor * a   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 10);  // 40 -> 64 bytes
    gk_tensor * b   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F16, 32, 3);
    gk_tensor * v   = gk_view_1d(ctx.get(), b, 32, b->nb[1]);
    const size_t need = gk_backend_alloc_ctx_tensors_from_buft_size(ctx.get(), gk_backend_cpu_buffer_type());
    EXPECT_EQ(need, 64u + 192u);
    backend_ptr cpu(gk_backend_cpu_init());
    buffer_ptr  buf(gk_backend_alloc_ctx_tensors(ctx.get(), cpu.get()));
    ASSERT_NE(buf, nullptr) << gk_backend_last_error();
    EXPECT_EQ(gk_backend_buffer_get_size(buf.get()), need);
    const char * base = static_cast<const char *>(gk_backend_buffer_get_base(buf.get()));
    EXPECT_EQ(a->data, base);
    EXPECT_EQ(b->data, base + 64);
    EXPECT_EQ(v->data, base + 64 + b->nb[1]);
    EXPECT_EQ(a->buffer, buf.get());
    EXPECT_EQ(v->buffer, buf.get());
    // Everything placed: nothing to do, NULL with no error.
    EXPECT_EQ(gk_backend_alloc_ctx_tensors(ctx.get(), cpu.get()), nullptr);
    EXPECT_STREQ(gk_backend_last_error(), "");

    // A view whose source lives outside the context without data: refused, nothing placed.
    auto        other = make_ctx(4 * gk_tensor_overhead(), true);
    gk_tensor * src   = gk_new_tensor_1d(other.get(), GK_TYPE_F32, 16);
    auto        ctx2  = make_ctx(4 * gk_tensor_overhead(), true);
    gk_tensor * own   = gk_new_tensor_1d(ctx2.get(), GK_TYPE_F32, 16);
    gk_tensor * bad   = gk_view_1d(ctx2.get(), src, 4, 0);
    ASSERT_NE(bad, nullptr);
    EXPECT_EQ(gk_backend_alloc_ctx_tensors(ctx2.get(), cpu.get()), nullptr);
    EXPECT_TRUE(error_has("has no data")) << gk_backend_last_error();
    EXPECT_EQ(own->data, nullptr);
    EXPECT_EQ(own->buffer, nullptr);
}

// ---- backend and registry -----------------------------------------------------------------

TEST(Backend, CpuBackendComputesAGraph) {
    backend_ptr cpu(gk_backend_cpu_init());
    ASSERT_NE(cpu, nullptr);
    EXPECT_STREQ(gk_backend_name(cpu.get()), "CPU");
    EXPECT_TRUE(gk_backend_is_cpu(cpu.get()));
    EXPECT_EQ(gk_backend_get_default_buffer_type(cpu.get()), gk_backend_cpu_buffer_type());
    EXPECT_EQ(gk_backend_get_alignment(cpu.get()), size_t{GK_MEM_ALIGN});
    EXPECT_TRUE(gk_backend_supports_buft(cpu.get(), gk_backend_cpu_buffer_type()));
    EXPECT_EQ(gk_backend_cpu_set_n_threads(cpu.get(), 0), GK_STATUS_INVALID_ARGUMENT);
    ASSERT_EQ(gk_backend_cpu_set_n_threads(cpu.get(), 3), GK_STATUS_SUCCESS);

    auto        ctx = make_ctx(16 * gk_tensor_overhead() + gk_graph_overhead(), true);
    gk_tensor * a   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 8, 3);
    gk_tensor * b   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 8, 3);
    gk_tensor * s   = gk_add(ctx.get(), a, b);
    EXPECT_TRUE(gk_backend_supports_op(cpu.get(), s));
    // The in-place policy the graph allocator asks of a buffer type's device.
    gk_backend_dev_t dev = gk_backend_get_device(cpu.get());
    EXPECT_TRUE(gk_backend_dev_can_run_in_place(dev, s));
    EXPECT_FALSE(gk_backend_dev_can_run_in_place(dev, gk_mul_mat(ctx.get(), a, b)));
    EXPECT_FALSE(gk_backend_dev_can_run_in_place(nullptr, s));
    EXPECT_FALSE(gk_backend_dev_can_run_in_place(dev, nullptr));
    // supports_op asks for a dot product of the weight's type, which the builder does not.
    gk_tensor * wi = gk_new_tensor_2d(ctx.get(), GK_TYPE_I32, 8, 3);
    gk_tensor * mi = gk_mul_mat(ctx.get(), wi, a);
    ASSERT_NE(mi, nullptr) << gk_last_error(ctx.get());
    EXPECT_FALSE(gk_backend_supports_op(cpu.get(), mi));
    gk_cgraph * g = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, s), GK_STATUS_SUCCESS);
    buffer_ptr buf(gk_backend_alloc_ctx_tensors(ctx.get(), cpu.get()));
    ASSERT_NE(buf, nullptr);
    const auto va = random_values(24, 1, 1.0f);
    const auto vb = random_values(24, 2, 1.0f);
    gk_backend_tensor_set(a, va.data(), 0, 96);
    gk_backend_tensor_set(b, vb.data(), 0, 96);
    ASSERT_EQ(gk_backend_graph_compute(cpu.get(), g), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
    gk_backend_synchronize(cpu.get());
    float out[24];
    gk_backend_tensor_get(s, out, 0, sizeof(out));
    for (int i = 0; i < 24; ++i) {
        EXPECT_EQ(out[i], va[static_cast<size_t>(i)] + vb[static_cast<size_t>(i)]) << i;
    }
    EXPECT_EQ(gk_backend_graph_compute(nullptr, g), GK_STATUS_INVALID_ARGUMENT);
}

TEST(Backend, ComputeRefusesTensorsWithoutData) {
    backend_ptr cpu(gk_backend_cpu_init());
    auto        ctx = make_ctx(8 * gk_tensor_overhead() + gk_graph_overhead(), true);
    gk_tensor * s   = gk_sqr(ctx.get(), gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 4));
    gk_cgraph * g   = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, s), GK_STATUS_SUCCESS);
    EXPECT_NE(gk_backend_graph_compute(cpu.get(), g), GK_STATUS_SUCCESS);
    EXPECT_NE(std::strstr(gk_last_error(ctx.get()), "has no data"), nullptr) << gk_last_error(ctx.get());
}

TEST(Registry, OneCpuDevice) {
    ASSERT_GE(gk_backend_dev_count(), 1u);
    gk_backend_dev_t dev = gk_backend_dev_get(0);
    ASSERT_NE(dev, nullptr);
    EXPECT_STREQ(gk_backend_dev_name(dev), "CPU");
    EXPECT_STREQ(gk_backend_dev_description(dev), "gk CPU backend");
    EXPECT_EQ(gk_backend_dev_type(dev), GK_BACKEND_DEVICE_TYPE_CPU);
    EXPECT_EQ(gk_backend_dev_get(gk_backend_dev_count()), nullptr);
    EXPECT_EQ(gk_backend_dev_by_name("cpu"), dev);
    EXPECT_EQ(gk_backend_dev_by_name("CUDA7"), nullptr);
    EXPECT_EQ(gk_backend_dev_buffer_type(dev), gk_backend_cpu_buffer_type());
    size_t free = 0, total = 0;
    gk_backend_dev_memory(dev, &free, &total);
    EXPECT_GT(total, 0u);
    EXPECT_LE(free, total);

    std::string features;
    for (const gk_backend_feature * f = gk_backend_dev_features(dev); f->name; ++f) {
        features += std::string(f->name) + "=" + f->value + " ";
    }
    EXPECT_NE(features.find("SIMD="), std::string::npos) << features;
    EXPECT_NE(features.find("AVX2="), std::string::npos) << features;
    EXPECT_NE(features.find("FMA="), std::string::npos) << features;
    EXPECT_NE(features.find("HOST_AMX="), std::string::npos) << features;
    EXPECT_NE(features.find("BF16_DOT="), std::string::npos) << features;
    std::printf("cpu features: %s\n", features.c_str());

    backend_ptr b1(gk_backend_dev_init(dev, nullptr));
    backend_ptr b2(gk_backend_init_by_name("CPU", nullptr));
    backend_ptr b3(gk_backend_init_best());
    ASSERT_TRUE(b1 && b2 && b3);
    EXPECT_EQ(gk_backend_get_device(b1.get()), dev);
    EXPECT_TRUE(gk_backend_is_cpu(b3.get()));
    EXPECT_EQ(gk_backend_init_by_name("nope", nullptr), nullptr);
    EXPECT_TRUE(error_has("no device named 'nope'")) << gk_backend_last_error();
}

// ---- the graph allocator on a transformer -----------------------------------------------------

TEST(Gallocr, TransformerUsesFarLessMemoryAndComputesBitIdentical) {
    const transformer_dims    d;
    const transformer_weights w(d);
    size_t                    separate = 0;
    const auto                expected = transformer_reference(w, d, 11, &separate);

    backend_ptr cpu(gk_backend_cpu_init());
    ASSERT_EQ(gk_backend_cpu_set_n_threads(cpu.get(), 3), GK_STATUS_SUCCESS);
    gallocr_ptr galloc(gk_gallocr_new(gk_backend_get_default_buffer_type(cpu.get())));
    auto        ctx = make_ctx(graph_ctx_bytes(d, false), true);
    const auto  g   = build_transformer(ctx.get(), w, d);
    ASSERT_TRUE(gk_gallocr_alloc_graph(galloc.get(), g.graph)) << gk_backend_last_error();
    const size_t used = gk_gallocr_get_buffer_size(galloc.get(), 0);
    set_transformer_inputs(g, 11);
    ASSERT_EQ(gk_backend_graph_compute(cpu.get(), g.graph), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
    EXPECT_EQ(bytes_of(g.out), expected);

    const double ratio = static_cast<double>(separate) / static_cast<double>(used);
    std::printf("separate allocation %zu bytes, gallocr %zu bytes: %.1fx less (%d nodes)\n", separate, used, ratio,
                gk_graph_n_nodes(g.graph));
    if (gk::debug().alloc_no_reuse) {
        EXPECT_EQ(used, separate);  // every tensor its own storage
    } else {
        EXPECT_GE(ratio, 20.0);
    }

    // The same graph allocated again: the same buffer, the same output.
    ASSERT_TRUE(gk_gallocr_alloc_graph(galloc.get(), g.graph)) << gk_backend_last_error();
    EXPECT_EQ(gk_gallocr_get_buffer_size(galloc.get(), 0), used);
    set_transformer_inputs(g, 11);
    ASSERT_EQ(gk_backend_graph_compute(cpu.get(), g.graph), GK_STATUS_SUCCESS);
    EXPECT_EQ(bytes_of(g.out), expected);

    // A different, larger graph (more tokens) grows the buffer and is right too.
    transformer_dims d2 = d;
    d2.n_tokens         = 40;
    const auto expected2 = transformer_reference(w, d2, 12, nullptr);
    auto       ctx2      = make_ctx(graph_ctx_bytes(d2, false), true);
    const auto g2        = build_transformer(ctx2.get(), w, d2);
    ASSERT_TRUE(gk_gallocr_alloc_graph(galloc.get(), g2.graph)) << gk_backend_last_error();
    EXPECT_GT(gk_gallocr_get_buffer_size(galloc.get(), 0), used);
    set_transformer_inputs(g2, 12);
    ASSERT_EQ(gk_backend_graph_compute(cpu.get(), g2.graph), GK_STATUS_SUCCESS);
    EXPECT_EQ(bytes_of(g2.out), expected2);

    // The first graph again, now inside the grown buffer.
    ASSERT_TRUE(gk_gallocr_alloc_graph(galloc.get(), g.graph)) << gk_backend_last_error();
    set_transformer_inputs(g, 11);
    ASSERT_EQ(gk_backend_graph_compute(cpu.get(), g.graph), GK_STATUS_SUCCESS);
    EXPECT_EQ(bytes_of(g.out), expected);
}

TEST(Gallocr, TransformerPlacesTheFusableOpsInPlace) {
    if (gk::debug().alloc_no_reuse) {
        GTEST_SKIP() << "GK_ALLOC_NO_REUSE is set";
    }
    transformer_dims d;
    d.n_layer = 2;
    const transformer_weights w(d);
    gallocr_ptr               galloc(gk_gallocr_new(gk_backend_cpu_buffer_type()));
    auto                      ctx = make_ctx(graph_ctx_bytes(d, false), true);
    const auto                g   = build_transformer(ctx.get(), w, d);
    ASSERT_TRUE(gk_gallocr_alloc_graph(galloc.get(), g.graph)) << gk_backend_last_error();
    int n_in_place = 0;
    for (int i = 0; i < gk_graph_n_nodes(g.graph); ++i) {
        const gk_tensor * n = gk_graph_node(g.graph, i);
        if (n->view_src || !n->src[0]) {
            continue;
        }
        const bool shared = n->data == n->src[0]->data;
        if (n->op == GK_OP_MUL_MAT || n->op == GK_OP_CONT) {
            EXPECT_FALSE(shared) << i << " " << gk_op_name(n->op);
        }
        if (n->op == GK_OP_SOFT_MAX || n->op == GK_OP_ROPE || n->op == GK_OP_UNARY) {
            EXPECT_TRUE(shared) << i << " " << gk_op_name(n->op);  // sole consumer of a fresh node
        }
        if (n->src[0] == g.x) {
            EXPECT_FALSE(shared) << "an input was overwritten by node " << i;
        }
        n_in_place += shared;
    }
    EXPECT_GE(n_in_place, 2 * 7);  // mul, rope x2, soft_max, add, mul, silu, mul per layer (x is an input)
}

} // namespace
