// test-foundation - the invariants the rest of gk assumes: block geometry of tensors,
// default strides, view collapsing, arena exhaustion (an error, never an abort), the
// graph walk's topological order (including a 100 000-node chain, deep enough to
// overflow a recursive walk) and build-time errors that name the problem.
#include "gk/gk.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct ctx_deleter {
    void operator()(gk_context * c) const { gk_free(c); }
};
using ctx_ptr = std::unique_ptr<gk_context, ctx_deleter>;

ctx_ptr make_ctx(size_t bytes, bool no_alloc = false) { return ctx_ptr(gk_init({bytes, nullptr, no_alloc})); }

bool error_has(gk_context * ctx, const char * part) { return std::strstr(gk_last_error(ctx), part) != nullptr; }

TEST(Foundation, BlockGeometryOfEveryType) {
    auto ctx = make_ctx(1 << 20);
    for (int id = 0; id < GK_TYPE_COUNT; ++id) {
        if (!gk_type_is_valid(id)) {
            continue;
        }
        const auto    type = static_cast<gk_type>(id);
        const int64_t blck = gk_blck_size(type);
        const size_t  ts   = gk_type_size(type);
        gk_tensor *   t    = gk_new_tensor_3d(ctx.get(), type, 3 * blck, 2, 5);
        ASSERT_NE(t, nullptr) << gk_type_name(type) << ": " << gk_last_error(ctx.get());
        EXPECT_EQ(t->nb[0], ts) << gk_type_name(type);
        EXPECT_EQ(t->nb[1], 3 * ts) << gk_type_name(type);
        EXPECT_EQ(t->nb[2], 6 * ts) << gk_type_name(type);
        EXPECT_EQ(t->nb[3], 30 * ts) << gk_type_name(type);
        EXPECT_EQ(gk_nbytes(t), 30 * ts) << gk_type_name(type);
        EXPECT_EQ(gk_row_size(type, t->ne[0]), t->nb[1]);
        EXPECT_TRUE(gk_is_contiguous(t));
        if (blck > 1) {
            gk_clear_error(ctx.get());
            EXPECT_EQ(gk_new_tensor_1d(ctx.get(), type, blck + 1), nullptr) << gk_type_name(type);
            EXPECT_TRUE(error_has(ctx.get(), "whole number")) << gk_last_error(ctx.get());
        }
    }
}

TEST(Foundation, DefaultStridesAndQueries) {
    auto        ctx = make_ctx(1 << 20);
    gk_tensor * t   = gk_new_tensor_4d(ctx.get(), GK_TYPE_F32, 3, 4, 5, 6);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->nb[0], 4u);
    EXPECT_EQ(t->nb[1], 12u);
    EXPECT_EQ(t->nb[2], 48u);
    EXPECT_EQ(t->nb[3], 240u);
    EXPECT_EQ(gk_nelements(t), 360);
    EXPECT_EQ(gk_nrows(t), 120);
    EXPECT_EQ(gk_n_dims(t), 4);
    EXPECT_EQ(gk_nbytes(t), 1440u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % GK_MEM_ALIGN, 0u);
    gk_tensor * v = gk_new_tensor_2d(ctx.get(), GK_TYPE_F16, 7, 1);
    EXPECT_EQ(gk_n_dims(v), 1);
    EXPECT_EQ(t->op, GK_OP_NONE);
    EXPECT_EQ(gk_get_data_f32(v), nullptr);

    gk_set_name(t, "weights");
    gk_set_input(t);
    gk_set_output(t);
    EXPECT_EQ(t->flags, GK_TENSOR_FLAG_INPUT | GK_TENSOR_FLAG_OUTPUT);
    EXPECT_EQ(gk_get_tensor(ctx.get(), "weights"), t);
    gk_format_name(v, "blk.%d.%s", 3, "attn");
    EXPECT_STREQ(gk_get_name(v), "blk.3.attn");
    std::string long_name(200, 'x');
    gk_set_name(v, long_name.c_str());
    EXPECT_EQ(std::strlen(v->name), GK_MAX_NAME - 1u);

    int count = 0;
    for (gk_tensor * it = gk_get_first_tensor(ctx.get()); it; it = gk_get_next_tensor(ctx.get(), it)) {
        ++count;
    }
    EXPECT_EQ(count, 2);

    EXPECT_EQ(gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 3, -1), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "negative"));
    EXPECT_EQ(gk_new_tensor(ctx.get(), GK_TYPE_F32, 5, t->ne), nullptr);
    EXPECT_EQ(gk_new_tensor_1d(ctx.get(), static_cast<gk_type>(4), 8), nullptr);  // removed id
    EXPECT_EQ(gk_new_tensor_4d(ctx.get(), GK_TYPE_Q1_0, int64_t{1} << 40, int64_t{1} << 30, 1, 1), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "overflows"));
    // One row of 2^64 bytes: its size used to wrap to 0, and the tensor was made with no
    // data and zero strides, so writes to it ran past the arena.
    EXPECT_EQ(gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, int64_t{1} << 62), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "has more than 2^63 - 1 bytes")) << gk_last_error(ctx.get());
    EXPECT_EQ(gk_new_tensor_1d(ctx.get(), GK_TYPE_F64, int64_t{1} << 61), nullptr);
    EXPECT_FALSE(gk_row_len_ok(GK_TYPE_F32, int64_t{1} << 62));
    EXPECT_EQ(gk_row_size(GK_TYPE_F32, int64_t{1} << 62), 0u);
    EXPECT_EQ(gk_row_size(GK_TYPE_F32, (int64_t{1} << 61) - 1), ((size_t{1} << 61) - 1) * 4);
}

TEST(Foundation, ViewsCollapseToTheOwner) {
    auto        ctx  = make_ctx(1 << 20);
    gk_tensor * base = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 16, 8);
    gk_tensor * v1   = gk_view_2d(ctx.get(), base, 8, 4, base->nb[1], 2 * base->nb[1]);
    ASSERT_NE(v1, nullptr);
    gk_tensor * v2 = gk_view_1d(ctx.get(), v1, 4, 3 * sizeof(float));
    ASSERT_NE(v2, nullptr);
    EXPECT_EQ(v1->view_src, base);
    EXPECT_EQ(v2->view_src, base);  // not v1
    EXPECT_EQ(v2->view_offs, 2 * base->nb[1] + 3 * sizeof(float));
    EXPECT_EQ(v2->data, static_cast<char *>(base->data) + v2->view_offs);
    EXPECT_EQ(v2->src[0], v1);
    EXPECT_EQ(v1->op, GK_OP_VIEW);
    EXPECT_TRUE(gk_is_view(v2));

    gk_tensor * p = gk_permute(ctx.get(), gk_reshape_3d(ctx.get(), base, 4, 4, 8), 2, 0, 1, 3);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->view_src, base);
    EXPECT_EQ(p->ne[2], 4);
    EXPECT_EQ(p->ne[0], 4);
    EXPECT_EQ(p->ne[1], 8);
    EXPECT_EQ(p->nb[2], 4u);
    EXPECT_TRUE(gk_is_permuted(p));
    EXPECT_FALSE(gk_is_contiguous(p));
    gk_tensor * t = gk_transpose(ctx.get(), base);
    EXPECT_EQ(t->op, GK_OP_TRANSPOSE);
    EXPECT_TRUE(gk_is_transposed(t));
    EXPECT_EQ(t->ne[0], 8);
    EXPECT_EQ(t->nb[0], base->nb[1]);

    // cont is an alias of a contiguous source, a copy node otherwise.
    gk_tensor * c1 = gk_cont(ctx.get(), base);
    EXPECT_EQ(c1->view_src, base);
    gk_tensor * c2 = gk_cont(ctx.get(), t);
    EXPECT_EQ(c2->op, GK_OP_CONT);
    EXPECT_EQ(c2->view_src, nullptr);
    EXPECT_TRUE(gk_is_contiguous(c2));

    // Out of bounds, bad reshapes and moving a block dimension are build errors.
    EXPECT_EQ(gk_view_1d(ctx.get(), base, 8, 16 * 8 * sizeof(float) - 4 * sizeof(float)), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "reaches past")) << gk_last_error(ctx.get());
    const int64_t big = int64_t{1} << 40;  // spans that overflow size_t must not wrap into range
    EXPECT_EQ(gk_view_4d(ctx.get(), base, 1, big, big, 1, size_t{1} << 40, size_t{1} << 40, 0, 0), nullptr);
    EXPECT_EQ(gk_reshape_4d(ctx.get(), base, big, big, big, 0), nullptr);
    EXPECT_EQ(gk_reshape_2d(ctx.get(), base, 5, 5), nullptr);
    EXPECT_EQ(gk_reshape_2d(ctx.get(), t, 16, 8), nullptr);  // not contiguous
    EXPECT_EQ(gk_permute(ctx.get(), base, 0, 0, 1, 2), nullptr);
    gk_tensor * q = gk_new_tensor_2d(ctx.get(), GK_TYPE_Q8_0, 64, 4);
    EXPECT_EQ(gk_transpose(ctx.get(), q), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "cannot be moved"));
    EXPECT_NE(gk_permute(ctx.get(), gk_reshape_3d(ctx.get(), q, 64, 2, 2), 0, 2, 1, 3), nullptr);
    EXPECT_EQ(gk_view_1d(ctx.get(), q, 48, 0), nullptr);  // half a block

    // Offsets and strides in whole elements / blocks: a misaligned view used to be
    // accepted and then loaded misaligned floats and block structs at compute time.
    EXPECT_EQ(gk_view_2d(ctx.get(), base, 4, 4, 17, 0), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "nb[1] = 17 is not a multiple of 4")) << gk_last_error(ctx.get());
    EXPECT_EQ(gk_view_1d(ctx.get(), base, 4, 1), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "byte offset 1 is not a multiple of 4")) << gk_last_error(ctx.get());
    gk_tensor * inner = gk_view_1d(ctx.get(), base, 8, 8);
    ASSERT_NE(inner, nullptr);
    EXPECT_EQ(gk_view_1d(ctx.get(), inner, 4, 2), nullptr);  // collapsed offset 10
    EXPECT_EQ(gk_view_1d(ctx.get(), q, 32, 3), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "the bytes of one q8_0 block")) << gk_last_error(ctx.get());
    EXPECT_EQ(gk_view_2d(ctx.get(), q, 32, 2, gk_row_size(GK_TYPE_Q8_0, 64) + 1, 0), nullptr);
    EXPECT_NE(gk_view_2d(ctx.get(), q, 32, 2, gk_row_size(GK_TYPE_Q8_0, 64), gk_type_size(GK_TYPE_Q8_0)), nullptr);
}

TEST(Foundation, ArenaExhaustionIsAnError) {
    constexpr size_t bytes = 16 * 1024;
    auto             ctx   = make_ctx(bytes);
    int              made  = 0;
    gk_tensor *      t     = nullptr;
    while ((t = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 100)) != nullptr) {
        ++made;
        ASSERT_LT(made, 1000);
    }
    EXPECT_GT(made, 3);
    EXPECT_TRUE(error_has(ctx.get(), "arena exhausted")) << gk_last_error(ctx.get());
    EXPECT_LE(gk_used_mem(ctx.get()), bytes);
    // A builder given the failed tensor keeps the root cause.
    EXPECT_EQ(gk_add(ctx.get(), t, t), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "arena exhausted"));
    // A caller-owned, unaligned buffer works and is respected too.
    std::vector<unsigned char> mem(4096 + 3);
    gk_context *               c2 = gk_init({4096, mem.data() + 3, false});
    ASSERT_NE(c2, nullptr);
    EXPECT_NE(gk_new_tensor_1d(c2, GK_TYPE_F32, 16), nullptr);
    EXPECT_EQ(gk_new_tensor_1d(c2, GK_TYPE_F32, 4096), nullptr);
    EXPECT_LE(gk_used_mem(c2), 4096u);
    gk_free(c2);
    EXPECT_EQ(gk_init({0, nullptr, false}), nullptr);
}

TEST(Foundation, ArenaObjectsRawBuffersAndReset) {
    auto ctx = make_ctx(16 * 1024);
    EXPECT_EQ(gk_get_first_object(ctx.get()), nullptr);
    gk_tensor * t   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 10);  // a tensor and its data
    void *      raw = gk_new_buffer(ctx.get(), 100);
    ASSERT_TRUE(t && raw);
    const auto * base = static_cast<unsigned char *>(gk_get_mem_buffer(ctx.get()));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(raw) % GK_MEM_ALIGN, 0u);
    const gk_object_kind kinds[3] = {GK_OBJECT_TENSOR, GK_OBJECT_DATA, GK_OBJECT_DATA};
    const void *         at[3]    = {t, t->data, raw};
    const size_t         sizes[2] = {40, 100};  // the data objects' sizes
    int                  n        = 0;
    for (const gk_object * o = gk_get_first_object(ctx.get()); o; o = gk_object_get_info(o).next, ++n) {
        ASSERT_LT(n, 3);
        const gk_object_info info = gk_object_get_info(o);
        EXPECT_EQ(info.kind, kinds[n]);
        EXPECT_EQ(base + info.offs, at[n]) << n;
        EXPECT_TRUE(n == 0 || info.size == sizes[n - 1]) << n;
    }
    EXPECT_EQ(n, 3);
    EXPECT_EQ(gk_new_buffer(ctx.get(), 1 << 20), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "arena exhausted"));
    // The bytes needed are the request's, not a sum that wrapped.
    EXPECT_EQ(gk_new_buffer(ctx.get(), SIZE_MAX - 100), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), ("exhausted: " + std::to_string(SIZE_MAX - 100) + " bytes needed").c_str()))
        << gk_last_error(ctx.get());
    EXPECT_EQ(gk_new_buffer(nullptr, 8), nullptr);
    gk_reset(ctx.get());
    EXPECT_EQ(gk_used_mem(ctx.get()), 0u);
    EXPECT_EQ(gk_get_first_object(ctx.get()), nullptr);
    EXPECT_EQ(gk_get_first_tensor(ctx.get()), nullptr);
    EXPECT_EQ(gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 10), t);  // the arena is reused
    gk_reset(nullptr);
}

TEST(Foundation, ArenaSizesNearSizeMaxDoNotWrap) {
    // Rounding mem_size up to the alignment used to wrap to 0 bytes, so the context
    // believed it had SIZE_MAX bytes and handed out memory past a tiny allocation.
    for (size_t mem_size : {SIZE_MAX, SIZE_MAX - 5, SIZE_MAX - GK_MEM_ALIGN + 1}) {
        EXPECT_EQ(gk_init({mem_size, nullptr, false}), nullptr) << mem_size;
    }
}

TEST(Foundation, NoAllocCreatesStructsOnly) {
    auto        ctx = make_ctx(1 << 16, true);
    gk_tensor * t   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 1024, 1024);  // 4 MiB: only fits unallocated
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->data, nullptr);
    EXPECT_EQ(gk_nbytes(t), 4u << 20);
}

/// True when every source of every node comes earlier (as a node or a leaf).
bool topologically_ordered(const gk_cgraph * g) {
    std::vector<const gk_tensor *> seen;
    for (int i = 0; i < gk_graph_n_leafs(g); ++i) {
        seen.push_back(gk_graph_leaf(g, i));
    }
    const auto known = [&](const gk_tensor * t) {
        for (const gk_tensor * s : seen) {
            if (s == t) {
                return true;
            }
        }
        return false;
    };
    for (int i = 0; i < gk_graph_n_nodes(g); ++i) {
        const gk_tensor * n = gk_graph_node(g, i);
        for (const gk_tensor * s : n->src) {
            if (s && !known(s)) {
                return false;
            }
        }
        seen.push_back(n);
    }
    return true;
}

TEST(Foundation, GraphOrderLeafsAndNodes) {
    auto        ctx = make_ctx(1 << 20);
    gk_tensor * x   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 8, 4);
    gk_tensor * w   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 8, 8);
    gk_tensor * h   = gk_mul_mat(ctx.get(), w, x);
    gk_tensor * a   = gk_silu(ctx.get(), h);
    gk_tensor * b   = gk_add(ctx.get(), h, a);  // diamond: h feeds a and b
    gk_tensor * out = gk_mul(ctx.get(), b, gk_scale(ctx.get(), a, 0.5f));
    gk_cgraph * g   = gk_new_graph(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_graph_n_leafs(g), 2);
    EXPECT_EQ(gk_graph_n_nodes(g), 5);
    EXPECT_EQ(gk_graph_leaf(g, 0), w);  // src[0] first
    EXPECT_EQ(gk_graph_node(g, 0), h);
    EXPECT_EQ(gk_graph_node(g, -1), out);
    EXPECT_EQ(gk_graph_node(g, 5), nullptr);
    EXPECT_TRUE(topologically_ordered(g));
    // Expanding again adds nothing; params are nodes even without an op.
    ASSERT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_graph_n_nodes(g), 5);
    gk_set_name(a, "act");
    EXPECT_EQ(gk_graph_get_tensor(g, "act"), a);
    gk_tensor * p = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 4);
    gk_set_param(p);
    gk_cgraph * g2 = gk_new_graph(ctx.get());
    gk_build_forward_expand(g2, p);
    EXPECT_EQ(gk_graph_n_nodes(g2), 1);
    EXPECT_EQ(gk_graph_n_leafs(g2), 0);
    gk_graph_clear(g);
    EXPECT_EQ(gk_graph_n_nodes(g), 0);
    ASSERT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_graph_n_nodes(g), 5);
}

TEST(Foundation, GraphOverheadOfASizeOutOfRange) {
    // 4 * size wrapped: 2^62 nodes cost 320 bytes, and above 2^61 the sizing loop never ended.
    EXPECT_EQ(gk_graph_overhead_custom((size_t{1} << 61) + 1, false), SIZE_MAX);
    EXPECT_EQ(gk_graph_overhead_custom(size_t{1} << 62, true), SIZE_MAX);
    EXPECT_EQ(gk_graph_overhead_custom(INT_MAX / 4 + size_t{1}, false), SIZE_MAX);
    EXPECT_GT(gk_graph_overhead_custom(INT_MAX / 4, true), size_t{INT_MAX} / 4 * 2 * sizeof(void *));
    EXPECT_EQ(gk_graph_overhead(), gk_graph_overhead_custom(GK_DEFAULT_GRAPH_SIZE, false));
}

TEST(Foundation, GraphTooSmallLeavesItUnchanged) {
    auto        ctx = make_ctx(1 << 20);
    gk_tensor * x   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 4);
    gk_tensor * y   = gk_neg(ctx.get(), x);
    gk_cgraph * g   = gk_new_graph_custom(ctx.get(), 4, false);
    ASSERT_EQ(gk_build_forward_expand(g, y), GK_STATUS_SUCCESS);
    gk_tensor * z = y;
    for (int i = 0; i < 10; ++i) {
        z = gk_neg(ctx.get(), z);
    }
    EXPECT_EQ(gk_build_forward_expand(g, z), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(error_has(ctx.get(), "too small"));
    EXPECT_EQ(gk_graph_n_nodes(g), 1);
    EXPECT_EQ(gk_graph_n_leafs(g), 1);
    // The visited set was restored: a tensor that fits can still be added.
    ASSERT_EQ(gk_build_forward_expand(g, gk_neg(ctx.get(), y)), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_graph_n_nodes(g), 2);
    // graphs with gradients are made too (gk_build_backward_expand, test-backward)
    EXPECT_NE(gk_new_graph_custom(ctx.get(), 4, true), nullptr);
}

TEST(Foundation, TopologicalOrderOfA100000NodeChain) {
    constexpr int n   = 100000;
    const size_t  mem = static_cast<size_t>(n + 8) * gk_tensor_overhead() + gk_graph_overhead_custom(n, false);
    auto          ctx = make_ctx(mem, true);
    ASSERT_NE(ctx, nullptr);
    gk_tensor * x = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 4);
    gk_tensor * t = x;
    for (int i = 0; i < n; ++i) {
        t = gk_neg(ctx.get(), t);
        ASSERT_NE(t, nullptr) << gk_last_error(ctx.get());
    }
    gk_cgraph * g = gk_new_graph_custom(ctx.get(), n, false);
    ASSERT_NE(g, nullptr) << gk_last_error(ctx.get());
    ASSERT_EQ(gk_build_forward_expand(g, t), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
    ASSERT_EQ(gk_graph_n_nodes(g), n);
    ASSERT_EQ(gk_graph_n_leafs(g), 1);
    EXPECT_EQ(gk_graph_leaf(g, 0), x);
    EXPECT_EQ(gk_graph_node(g, 0)->src[0], x);
    for (int i = 1; i < n; ++i) {
        ASSERT_EQ(gk_graph_node(g, i)->src[0], gk_graph_node(g, i - 1)) << i;
    }
    EXPECT_EQ(gk_graph_node(g, -1), t);
}

TEST(Foundation, BuildErrorsNameTheProblem) {
    auto        ctx = make_ctx(1 << 20);
    gk_tensor * a   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 8, 3);
    gk_tensor * b   = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 5, 3);
    gk_tensor * i32 = gk_new_tensor_1d(ctx.get(), GK_TYPE_I32, 2);
    EXPECT_EQ(gk_add(ctx.get(), a, b), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "add: b [5, 3, 1, 1] f32 cannot be broadcast")) << gk_last_error(ctx.get());
    EXPECT_EQ(gk_mul_mat(ctx.get(), a, b), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "mul_mat:"));
    EXPECT_EQ(gk_get_rows(ctx.get(), a, b), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "get_rows: b must be i32"));
    EXPECT_EQ(gk_sqrt(ctx.get(), i32), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "must be f32, f16 or bf16"));
    EXPECT_EQ(gk_rope(ctx.get(), a, i32, 3, GK_ROPE_TYPE_NEOX), nullptr);
    EXPECT_EQ(gk_unary(ctx.get(), a, GK_UNARY_OP_XIELU), nullptr);
    EXPECT_EQ(gk_glu(ctx.get(), b, GK_GLU_OP_SWIGLU_CLAMP, false), nullptr);  // needs a limit: gk_swiglu_clamp
    EXPECT_EQ(gk_soft_max_ext(ctx.get(), a, nullptr, 1.0f, 8.0f), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "needs a mask"));
    EXPECT_EQ(gk_top_k(ctx.get(), a, 9), nullptr);
    EXPECT_EQ(gk_concat(ctx.get(), a, b, 1), nullptr);
    EXPECT_EQ(gk_group_norm(ctx.get(), a, 2, 1e-5f), nullptr);
    EXPECT_EQ(gk_cpy(ctx.get(), a, b), nullptr);
    EXPECT_EQ(gk_arange(ctx.get(), 0.0f, 1.0f, 0.0f), nullptr);
    EXPECT_EQ(gk_silu(ctx.get(), nullptr), nullptr);  // message kept, not overwritten
    EXPECT_TRUE(error_has(ctx.get(), "arange:"));
    gk_clear_error(ctx.get());
    EXPECT_EQ(gk_silu(ctx.get(), nullptr), nullptr);
    EXPECT_TRUE(error_has(ctx.get(), "NULL"));
}

TEST(Foundation, ComputeStatusAndIndexErrors) {
    auto        ctx = make_ctx(1 << 20);
    gk_cgraph * g0  = gk_new_graph(ctx.get());
    EXPECT_EQ(gk_graph_compute(g0, 4), GK_STATUS_SUCCESS);  // no nodes

    gk_tensor * table = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, 4, 3);
    gk_tensor * idx   = gk_new_tensor_1d(ctx.get(), GK_TYPE_I32, 2);
    for (int i = 0; i < 12; ++i) {
        static_cast<float *>(table->data)[i] = static_cast<float>(i);
    }
    auto * ix = static_cast<int32_t *>(idx->data);
    ix[0]     = 2;
    ix[1]     = 0;
    gk_tensor * rows = gk_get_rows(ctx.get(), table, idx);
    gk_cgraph * g    = gk_new_graph(ctx.get());
    gk_build_forward_expand(g, rows);
    ASSERT_EQ(gk_graph_compute(g, 2), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
    EXPECT_EQ(static_cast<float *>(rows->data)[0], 8.0f);
    EXPECT_EQ(static_cast<float *>(rows->data)[4], 0.0f);
    ix[1] = 3;
    EXPECT_EQ(gk_graph_compute(g, 2), GK_STATUS_OUT_OF_RANGE);
    EXPECT_TRUE(error_has(ctx.get(), "row index 3")) << gk_last_error(ctx.get());
    ix[1] = -1;
    EXPECT_EQ(gk_graph_compute(g, 1), GK_STATUS_OUT_OF_RANGE);

    auto        nctx = make_ctx(1 << 20, true);
    gk_tensor * u    = gk_neg(nctx.get(), gk_new_tensor_1d(nctx.get(), GK_TYPE_F32, 4));
    gk_cgraph * gu   = gk_new_graph(nctx.get());
    gk_build_forward_expand(gu, u);
    EXPECT_EQ(gk_graph_compute(gu, 1), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(error_has(nctx.get(), "no data"));
}

TEST(Foundation, OpNamesMatchTheEnum) {
    EXPECT_STREQ(gk_op_name(GK_OP_MUL_MAT), "MUL_MAT");
    EXPECT_STREQ(gk_op_symbol(GK_OP_FLASH_ATTN_EXT), "flash_attn_ext");
    EXPECT_STREQ(gk_op_name(GK_OP_GLU), "GLU");
    EXPECT_STREQ(gk_unary_op_name(GK_UNARY_OP_TRUNC), "TRUNC");
    EXPECT_STREQ(gk_glu_op_name(GK_GLU_OP_SWIGLU_CLAMP), "SWIGLU_CLAMP");
    EXPECT_STREQ(gk_op_name(static_cast<gk_op>(GK_OP_COUNT)), "?");
    EXPECT_EQ(sizeof(gk_tensor), 336u);  // ggml_tensor on LP64
}

} // namespace
