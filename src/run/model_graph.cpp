// model_graph.cpp - the forward graph of llama, gemma3 and qwen3 (one builder: the three
// differ only in the switches of hparams).
//
// Per block:  x += [post_norm](attn(norm(x)));  x += [post_norm](ffn(norm(x)))
// attn: q, k, v projections (+ bias), [q/k RMS norm per head], rope at the token
// positions, [q * q_scale], k and v written to the cache, then fused attention of the
// queries over cells [0, n_kv) with the causal (or sliding-window) mask.
// ffn:  down(act(gate(x)) * up(x)), act = silu (llama, qwen3) or gelu-tanh (gemma3).
// Only the last token's hidden state goes through the output norm and projection. A
// graph without logits (a micro-batch before the last) stops at the last layer's cache
// writes: its attention and feed-forward would feed only the logits.
#include "model_session.h"

#include <algorithm>
#include <cmath>

namespace gk::run {

namespace {

constexpr size_t k_nodes_per_layer = 64;

// YaRN parameters in llama.cpp's defaults; with ext_factor 0 they change nothing.
constexpr float k_ext_factor  = 0.0f;
constexpr float k_attn_factor = 1.0f;
constexpr float k_beta_fast   = 32.0f;
constexpr float k_beta_slow   = 1.0f;

struct graph_builder {
    gk_context *      ctx;
    gk_cgraph *       graph;
    const Model &     model;
    const hparams &   hp;
    const KvCache &   kv;
    int64_t           n_tokens;
    int64_t           n_kv;
    bool              want_logits;
    forward_tensors & io;

    gk_tensor * norm(gk_tensor * x, gk_tensor * weight) const {
        return gk_mul(ctx, gk_rms_norm(ctx, x, hp.rms_eps), weight);
    }

    /** w x (+ b) */
    gk_tensor * linear(gk_tensor * w, gk_tensor * x, gk_tensor * b) const {
        gk_tensor * y = gk_mul_mat(ctx, w, x);
        return b ? gk_add(ctx, y, b) : y;
    }

    gk_tensor * rope(gk_tensor * x, int64_t il) const {
        const bool  swa   = hp.swa_layer[il];
        const float base  = swa ? hp.rope_base_swa : hp.rope_base;
        const float scale = swa ? 1.0f : hp.rope_freq_scale;
        return gk_rope_ext(ctx, x, io.pos, model.weights().rope_freqs, static_cast<int>(hp.n_rot), hp.rope_mode,
                           static_cast<int>(hp.n_ctx_train), base, scale, k_ext_factor, k_attn_factor, k_beta_fast,
                           k_beta_slow);
    }

    /** Layer il's k and v of the normalised input x [n_embd, T], written to the cache
     *  cells of the tokens: expanded into the graph, so that they come before the
     *  attention that reads the cells. false on a builder error. */
    bool store_kv(gk_tensor * x, int64_t il) const {
        const layer_weights & l = model.weights().layers[il];
        gk_tensor * k = gk_reshape_3d(ctx, linear(l.wk, x, l.bk), hp.head_dim_k, hp.n_head_kv, n_tokens);
        gk_tensor * v = gk_reshape_3d(ctx, linear(l.wv, x, l.bv), hp.head_dim_v, hp.n_head_kv, n_tokens);
        if (hp.qk_norm) k = norm(k, l.k_norm);
        k = rope(k, il);
        gk_tensor * store_k = kv.store_k(ctx, il, k, io.pos);
        gk_tensor * store_v = kv.store_v(ctx, il, v, io.pos);
        return store_k && store_v && gk_build_forward_expand(graph, store_k) == GK_STATUS_SUCCESS &&
               gk_build_forward_expand(graph, store_v) == GK_STATUS_SUCCESS;
    }

    /** The attention block of layer il on the normalised input x [n_embd, T]. */
    gk_tensor * attention(gk_tensor * x, int64_t il) const {
        const layer_weights & l = model.weights().layers[il];
        if (!store_kv(x, il)) return nullptr;
        gk_tensor * q = gk_reshape_3d(ctx, linear(l.wq, x, l.bq), hp.head_dim_k, hp.n_head, n_tokens);
        if (hp.qk_norm) q = norm(q, l.q_norm);
        q = rope(q, il);
        if (hp.q_scale != 1.0f) q = gk_scale(ctx, q, hp.q_scale);
        gk_tensor * mask = hp.swa_layer[il] ? io.mask_swa : io.mask;
        gk_tensor * out  = gk_flash_attn_ext(ctx, gk_permute(ctx, q, 0, 2, 1, 3), kv.view_k(ctx, il, n_kv),
                                             kv.view_v(ctx, il, n_kv), mask, hp.kq_scale, 0.0f, 0.0f);
        out = gk_reshape_2d(ctx, out, hp.head_dim_v * hp.n_head, n_tokens);  // [Dv, H, T] -> [Dv*H, T]
        return linear(l.wo, out, l.bo);
    }

    gk_tensor * feed_forward(gk_tensor * x, int64_t il) const {
        const layer_weights & l = model.weights().layers[il];
        gk_tensor * h = gk_glu_split(ctx, gk_mul_mat(ctx, l.ffn_gate, x), gk_mul_mat(ctx, l.ffn_up, x), hp.ffn_glu);
        return gk_mul_mat(ctx, l.ffn_down, h);
    }

    /** An input tensor of ne0 (ne1 == 0) or ne0 x ne1 elements. */
    gk_tensor * input(enum gk_type type, int64_t ne0, int64_t ne1, const char * name) const {
        gk_tensor * t = ne1 == 0 ? gk_new_tensor_1d(ctx, type, ne0) : gk_new_tensor_2d(ctx, type, ne0, ne1);
        if (t) {
            gk_set_name(t, name);
            gk_set_input(t);
        }
        return t;
    }

    /** The graph; false on a builder error. */
    bool build() const {
        const model_weights & w = model.weights();
        // Layers whose attention is in the graph: without logits the last one only writes
        // its cache cells.
        const int64_t n_attn = want_logits ? hp.n_layer : hp.n_layer - 1;
        io.tokens = input(GK_TYPE_I32, n_tokens, 0, "inp_tokens");
        io.pos    = input(GK_TYPE_I32, n_tokens, 0, "inp_pos");
        // A mask only where some layer reads it (an input outside the graph gets no memory).
        const auto n_swa = std::count(hp.swa_layer.begin(), hp.swa_layer.begin() + n_attn, true);
        if (n_swa < n_attn) io.mask = input(GK_TYPE_F16, n_kv, n_tokens, "kq_mask");
        if (n_swa > 0) io.mask_swa = input(GK_TYPE_F16, n_kv, n_tokens, "kq_mask_swa");

        gk_tensor * x = gk_get_rows(ctx, w.tok_embd, io.tokens);  // [n_embd, T]
        if (hp.embd_scale != 1.0f) x = gk_scale(ctx, x, hp.embd_scale);
        for (int64_t il = 0; il < n_attn && x; ++il) {
            const layer_weights & l = w.layers[il];
            gk_tensor * cur = attention(norm(x, l.attn_norm), il);
            if (hp.post_norms) cur = norm(cur, l.attn_post_norm);
            x   = gk_add(ctx, cur, x);
            cur = feed_forward(norm(x, l.ffn_norm), il);
            if (hp.post_norms) cur = norm(cur, l.ffn_post_norm);
            x = gk_add(ctx, cur, x);
        }
        if (!x) return false;
        if (!want_logits) return store_kv(norm(x, w.layers[n_attn].attn_norm), n_attn);
        gk_tensor * last   = gk_view_2d(ctx, x, hp.n_embd, 1, x->nb[1], (n_tokens - 1) * x->nb[1]);
        gk_tensor * logits = gk_mul_mat(ctx, w.output, norm(last, w.output_norm));
        if (hp.logit_softcap > 0.0f) {
            logits = gk_scale(ctx, gk_tanh(ctx, gk_scale(ctx, logits, 1.0f / hp.logit_softcap)), hp.logit_softcap);
        }
        if (!logits) return false;
        gk_set_name(logits, "logits");
        gk_set_output(logits);
        io.logits = logits;
        return gk_build_forward_expand(graph, logits) == GK_STATUS_SUCCESS;
    }
};

} // namespace

size_t forward_graph_size(const hparams & hp) { return k_nodes_per_layer * static_cast<size_t>(hp.n_layer + 1); }

bool build_forward(gk_context * ctx, gk_cgraph * graph, const Model & model, const KvCache & kv, int64_t n_tokens,
                   int64_t n_kv, bool logits, forward_tensors & t) {
    t = forward_tensors{};
    const graph_builder b{ctx, graph, model, model.hp(), kv, n_tokens, n_kv, logits, t};
    return b.build();
}

} // namespace gk::run
