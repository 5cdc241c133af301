// backend_util.h - what the backend and allocator tests share: owning handles, filling
// and reading tensors through the backend API, the bytes a separate allocation costs,
// and a small transformer (weights in their own buffer, graph built in any context).
#pragma once

#include "gk/gk-alloc.h"
#include "gk/gk-backend.h"
#include "gk/gk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace gktest {

struct ctx_deleter {
    void operator()(gk_context * c) const { gk_free(c); }
};
struct buffer_deleter {
    void operator()(gk_backend_buffer * b) const { gk_backend_buffer_free(b); }
};
struct gallocr_deleter {
    void operator()(gk_gallocr * g) const { gk_gallocr_free(g); }
};
struct backend_deleter {
    void operator()(gk_backend * b) const { gk_backend_free(b); }
};
using ctx_ptr     = std::unique_ptr<gk_context, ctx_deleter>;
using buffer_ptr  = std::unique_ptr<gk_backend_buffer, buffer_deleter>;
using gallocr_ptr = std::unique_ptr<gk_gallocr, gallocr_deleter>;
using backend_ptr = std::unique_ptr<gk_backend, backend_deleter>;

inline ctx_ptr make_ctx(size_t bytes, bool no_alloc) { return ctx_ptr(gk_init({bytes, nullptr, no_alloc})); }

/// Deterministic values in [-scale, scale) (a 32-bit LCG; the same seed gives the same values).
inline std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
    std::vector<float> v(n);
    uint32_t           s = seed * 2654435761u + 1;
    for (float & x : v) {
        s = s * 1664525u + 1013904223u;
        x = (static_cast<float>(s >> 8) / 8388608.0f - 1.0f) * scale;
    }
    return v;
}

/// Fill an F32 tensor with random_values through gk_backend_tensor_set.
inline void fill_random(gk_tensor * t, uint32_t seed, float scale) {
    ASSERT_EQ(t->type, GK_TYPE_F32);
    const auto v = random_values(static_cast<size_t>(gk_nelements(t)), seed, scale);
    ASSERT_EQ(gk_backend_tensor_set(t, v.data(), 0, v.size() * sizeof(float)), GK_STATUS_SUCCESS)
        << gk_backend_last_error();
}

/// All bytes of a tensor, read through gk_backend_tensor_get.
inline std::vector<unsigned char> bytes_of(const gk_tensor * t) {
    std::vector<unsigned char> b(gk_nbytes(t));
    EXPECT_EQ(gk_backend_tensor_get(t, b.data(), 0, b.size()), GK_STATUS_SUCCESS) << gk_backend_last_error();
    return b;
}

/// Bytes the tensors of ctx with storage of their own (not views) take when each is
/// allocated separately at GK_MEM_ALIGN alignment.
inline size_t separate_bytes(gk_context * ctx) {
    size_t total = 0;
    for (gk_tensor * t = gk_get_first_tensor(ctx); t; t = gk_get_next_tensor(ctx, t)) {
        if (!t->view_src) {
            total += (gk_nbytes(t) + GK_MEM_ALIGN - 1) / GK_MEM_ALIGN * GK_MEM_ALIGN;
        }
    }
    return total;
}

// ---- a llama-like transformer ----------------------------------------------------------

struct transformer_dims {
    int n_layer  = 12;
    int n_embd   = 64;
    int n_head   = 4;
    int n_ff     = 256;
    int n_tokens = 16;
    int head_dim() const { return n_embd / n_head; }
};

struct layer_weights {
    gk_tensor * attn_norm;
    gk_tensor * wq;
    gk_tensor * wk;
    gk_tensor * wv;
    gk_tensor * wo;
    gk_tensor * ffn_norm;
    gk_tensor * w_gate;
    gk_tensor * w_up;
    gk_tensor * w_down;
};

/// Weights in a no_alloc context, placed in one buffer of buft (the CPU's by default) by
/// gk_backend_alloc_ctx_tensors_from_buft.
struct transformer_weights {
    ctx_ptr                    ctx;
    buffer_ptr                 buffer;
    std::vector<layer_weights> layers;
    gk_tensor *                out_norm = nullptr;

    explicit transformer_weights(const transformer_dims &     d,
                                 gk_backend_buffer_type_t buft = gk_backend_cpu_buffer_type()) {
        const int n_per_layer = 9;
        ctx = make_ctx(static_cast<size_t>(d.n_layer * n_per_layer + 1) * gk_tensor_overhead(), true);
        uint32_t   seed = 1;
        const auto mat  = [&](int k, int m) {
            gk_tensor * t = gk_new_tensor_2d(ctx.get(), GK_TYPE_F32, k, m);
            EXPECT_NE(t, nullptr) << gk_last_error(ctx.get());
            return t;
        };
        const auto vec = [&](int n) { return gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, n); };
        for (int l = 0; l < d.n_layer; ++l) {
            layers.push_back({vec(d.n_embd), mat(d.n_embd, d.n_embd), mat(d.n_embd, d.n_embd), mat(d.n_embd, d.n_embd),
                              mat(d.n_embd, d.n_embd), vec(d.n_embd), mat(d.n_embd, d.n_ff), mat(d.n_embd, d.n_ff),
                              mat(d.n_ff, d.n_embd)});
        }
        out_norm = vec(d.n_embd);
        buffer.reset(gk_backend_alloc_ctx_tensors_from_buft(ctx.get(), buft));
        EXPECT_NE(buffer, nullptr) << gk_backend_last_error();
        gk_backend_buffer_set_usage(buffer.get(), GK_BACKEND_BUFFER_USAGE_WEIGHTS);
        for (gk_tensor * t = gk_get_first_tensor(ctx.get()); t; t = gk_get_next_tensor(ctx.get(), t)) {
            const bool norm = t->ne[1] == 1;
            fill_random(t, seed++, norm ? 1.0f : 1.0f / std::sqrt(static_cast<float>(t->ne[0])));
        }
    }
};

/// The graph's inputs and output.
struct transformer_graph {
    gk_cgraph * graph = nullptr;
    gk_tensor * x     = nullptr;  // F32 [n_embd, n_tokens]
    gk_tensor * pos   = nullptr;  // I32 [n_tokens]
    gk_tensor * mask  = nullptr;  // F32 [n_tokens, n_tokens], causal
    gk_tensor * out   = nullptr;  // F32 [n_embd, n_tokens]
};

/// Build the forward graph in ctx (allocating or not): per layer rms_norm, q/k/v
/// projections, neox rope, masked soft_max attention, output projection, residual,
/// rms_norm, SiLU-gated feed-forward, residual.
inline transformer_graph build_transformer(gk_context * ctx, const transformer_weights & w, const transformer_dims & d) {
    transformer_graph r;
    const int         T  = d.n_tokens;
    const int         hd = d.head_dim();
    r.x                  = gk_new_tensor_2d(ctx, GK_TYPE_F32, d.n_embd, T);
    r.pos                = gk_new_tensor_1d(ctx, GK_TYPE_I32, T);
    r.mask               = gk_new_tensor_2d(ctx, GK_TYPE_F32, T, T);
    gk_set_name(r.x, "x");
    gk_set_name(r.pos, "pos");
    gk_set_name(r.mask, "mask");
    gk_set_input(r.x);
    gk_set_input(r.pos);
    gk_set_input(r.mask);
    gk_tensor * cur = r.x;
    for (const layer_weights & lw : w.layers) {
        gk_tensor * h    = gk_mul(ctx, gk_rms_norm(ctx, cur, 1e-5f), lw.attn_norm);
        const auto  head = [&](gk_tensor * wt, bool rope) {
            gk_tensor * t = gk_reshape_3d(ctx, gk_mul_mat(ctx, wt, h), hd, d.n_head, T);
            return rope ? gk_rope(ctx, t, r.pos, hd, GK_ROPE_TYPE_NEOX) : t;
        };
        gk_tensor * q   = gk_permute(ctx, head(lw.wq, true), 0, 2, 1, 3);         // [hd, T, H]
        gk_tensor * k   = gk_permute(ctx, head(lw.wk, true), 0, 2, 1, 3);         // [hd, T, H]
        gk_tensor * vt  = gk_cont(ctx, gk_permute(ctx, head(lw.wv, false), 1, 2, 0, 3));  // [T, hd, H]
        gk_tensor * kq  = gk_soft_max_ext(ctx, gk_mul_mat(ctx, k, q), r.mask, 1.0f / std::sqrt(float(hd)), 0.0f);
        gk_tensor * kqv = gk_mul_mat(ctx, vt, kq);                                 // [hd, T, H]
        gk_tensor * o   = gk_cont_2d(ctx, gk_permute(ctx, kqv, 0, 2, 1, 3), d.n_embd, T);
        cur             = gk_add(ctx, cur, gk_mul_mat(ctx, lw.wo, o));
        h               = gk_mul(ctx, gk_rms_norm(ctx, cur, 1e-5f), lw.ffn_norm);
        gk_tensor * g   = gk_mul(ctx, gk_silu(ctx, gk_mul_mat(ctx, lw.w_gate, h)), gk_mul_mat(ctx, lw.w_up, h));
        cur             = gk_add(ctx, cur, gk_mul_mat(ctx, lw.w_down, g));
    }
    r.out = gk_mul(ctx, gk_rms_norm(ctx, cur, 1e-5f), w.out_norm);
    EXPECT_NE(r.out, nullptr) << gk_last_error(ctx);
    gk_set_name(r.out, "out");
    gk_set_output(r.out);
    r.graph = gk_new_graph_custom(ctx, 4096, false);
    EXPECT_EQ(gk_build_forward_expand(r.graph, r.out), GK_STATUS_SUCCESS) << gk_last_error(ctx);
    return r;
}

/// Set the inputs: random x, positions 0..T-1 (+ offset), a causal mask.
inline void set_transformer_inputs(const transformer_graph & g, uint32_t seed) {
    fill_random(g.x, seed, 1.0f);
    const int64_t        T = g.pos->ne[0];
    std::vector<int32_t> pos(static_cast<size_t>(T));
    std::vector<float>   mask(static_cast<size_t>(T * T));
    for (int64_t i = 0; i < T; ++i) {
        pos[static_cast<size_t>(i)] = static_cast<int32_t>(i);
        for (int64_t j = 0; j < T; ++j) {
            mask[static_cast<size_t>(i * T + j)] = j <= i ? 0.0f : -INFINITY;
        }
    }
    ASSERT_EQ(gk_backend_tensor_set(g.pos, pos.data(), 0, pos.size() * sizeof(int32_t)), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_backend_tensor_set(g.mask, mask.data(), 0, mask.size() * sizeof(float)), GK_STATUS_SUCCESS);
}

/// Context bytes for a graph of this many tensors (structs only, or with data).
inline size_t graph_ctx_bytes(const transformer_dims & d, bool with_data) {
    const size_t n_tensors = static_cast<size_t>(d.n_layer) * 40 + 16;
    size_t       bytes     = n_tensors * gk_tensor_overhead() + gk_graph_overhead_custom(4096, false);
    if (with_data) {
        const size_t big = std::max({static_cast<size_t>(d.n_ff) * d.n_tokens, static_cast<size_t>(d.n_embd) * d.n_tokens,
                                     static_cast<size_t>(d.n_tokens) * d.n_tokens * d.n_head});
        bytes += n_tensors * (big * sizeof(float) + GK_MEM_ALIGN);
    }
    return bytes;
}

/// The output of the transformer computed with every tensor in its own storage (an
/// allocating context): the reference the allocator's runs must equal bit for bit.
/// *separate receives the bytes that separate allocation used.
inline std::vector<unsigned char> transformer_reference(const transformer_weights & w, const transformer_dims & d,
                                                        uint32_t seed, size_t * separate) {
    ctx_ptr                 ctx = make_ctx(graph_ctx_bytes(d, true), false);
    const transformer_graph g   = build_transformer(ctx.get(), w, d);
    set_transformer_inputs(g, seed);
    EXPECT_EQ(gk_graph_compute(g.graph, 1), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
    if (separate) {
        *separate = separate_bytes(ctx.get());
    }
    return bytes_of(g.out);
}

} // namespace gktest
