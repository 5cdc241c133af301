// model_graph.cpp - the forward graph of every architecture of model.h (one builder: they
// differ only in the switches of hparams and the weights present), over one or several
// sequences at once.
//
// Per block:  x += [post_norm](attn(norm(x)));  x += [post_norm](ffn(norm(x)))
// attn: q, k, v projections (+ bias; separate, or views of one fused q|k|v product),
// [q/k RMS norm per head], rope at the token positions (with frequency factors: llama's
// rope_freqs, phi3's LongRoPE long or short ones), [q * q_scale], k and v written to the
// cache, then fused attention of the queries over cells [0, n_kv) with the causal (or
// sliding-window) mask, the scores softcapped where attn_softcap > 0 (gemma2).
// ffn:  down(act(gate(x)) * up(x)), act = silu (llama, qwen, phi3) or gelu-tanh (gemma);
// phi3's gate and up are the two halves of one product.
// Several sequences (continuous batching): their tokens lie side by side in the columns
// of x, so the projections, norms and feed-forward read each weight once for all of
// them; only the cache writes and the attention are per sequence, each over its own
// cache and mask, their outputs concatenated back in column order. Every op computes a
// column from that column's inputs alone (batch invariance, model_session.h), so a
// sequence's values do not depend on what shares its graph.
// Only the last token's hidden state of a sequence that asks for logits goes through
// the output norm and projection; a sequence that asks for its hidden states (embeddings)
// gets every token's through the output norm (llama.cpp's t_embd). A graph where none
// asks for either stops at the last layer's cache writes: its attention and feed-forward
// would feed only those outputs.
// A pipeline stage (pipeline.h) builds its layers only, from and to the hidden state.
#include "model_session.h"

#include <algorithm>
#include <cmath>

namespace gk::run {

namespace {

constexpr size_t k_nodes_per_layer = 64;
constexpr size_t k_nodes_per_seq   = 16;  // per layer: views, cache writes, attention, concat

// YaRN parameters in llama.cpp's defaults; with ext_factor 0 they change nothing.
constexpr float k_ext_factor = 0.0f;
constexpr float k_beta_fast  = 32.0f;
constexpr float k_beta_slow  = 1.0f;

struct graph_builder {
    gk_context *      ctx;
    gk_cgraph *       graph;
    const Model &     model;
    const hparams &   hp;
    std::span<const forward_seq> seqs;
    int64_t           n_tokens;     // all sequences' tokens
    bool              want_logits;  // some sequence asks for logits
    bool              want_embd;    // some sequence asks for its hidden states
    forward_tensors & io;
    int64_t           first;        // the layers of the graph: [first, end)
    int64_t           end;

    gk_tensor * norm(gk_tensor * x, gk_tensor * weight) const {
        return gk_mul(ctx, gk_rms_norm(ctx, x, hp.rms_eps), weight);
    }

    /** w x (+ b) */
    gk_tensor * linear(gk_tensor * w, gk_tensor * x, gk_tensor * b) const {
        gk_tensor * y = gk_mul_mat(ctx, w, x);
        return b ? gk_add(ctx, y, b) : y;
    }

    /** The rope frequency factors: llama's, or phi3's LongRoPE long ones when the
     *  context (every sequence's cache has the batcher's size) is longer than the
     *  original one, else the short ones (llama.cpp's choice); nullptr when none. */
    gk_tensor * rope_factors() const {
        const model_weights & w = model.weights();
        if (w.rope_freqs) return w.rope_freqs;
        return seqs.front().kv->n_ctx() > hp.n_ctx_orig ? w.rope_long : w.rope_short;
    }

    gk_tensor * rope(gk_tensor * x, int64_t il) const {
        const bool  swa   = hp.swa_layer[il];
        const float base  = swa ? hp.rope_base_swa : hp.rope_base;
        const float scale = swa ? hp.rope_freq_scale_swa : hp.rope_freq_scale;
        return gk_rope_ext(ctx, x, io.pos, rope_factors(), static_cast<int>(hp.n_rot), hp.rope_mode,
                           static_cast<int>(hp.n_ctx_orig), base, scale, k_ext_factor, hp.rope_attn_factor, k_beta_fast,
                           k_beta_slow);
    }

    struct qkv_heads {
        gk_tensor * q = nullptr, * k = nullptr, * v = nullptr;  // [head_dim, heads, T]
    };

    /** Layer il's k, v (and q when `with_q`) of the normalised input x [n_embd, T], before
     *  norms and rope: from the separate projections, or as views of the rows of the
     *  fused q|k|v product. Members are nullptr on a builder error. */
    qkv_heads project(gk_tensor * x, int64_t il, bool with_q) const {
        const layer_weights & l = model.weights().layers[il];
        qkv_heads             h;
        if (!l.wqkv) {
            if (with_q) h.q = gk_reshape_3d(ctx, linear(l.wq, x, l.bq), hp.head_dim_k, hp.n_head, n_tokens);
            h.k = gk_reshape_3d(ctx, linear(l.wk, x, l.bk), hp.head_dim_k, hp.n_head_kv, n_tokens);
            h.v = gk_reshape_3d(ctx, linear(l.wv, x, l.bv), hp.head_dim_v, hp.n_head_kv, n_tokens);
            return h;
        }
        gk_tensor * y = linear(l.wqkv, x, l.bqkv);
        if (!y) return h;
        const auto part = [&](int64_t head_dim, int64_t heads, int64_t row_offset) {
            return gk_view_3d(ctx, y, head_dim, heads, n_tokens, static_cast<size_t>(head_dim) * y->nb[0], y->nb[1],
                              static_cast<size_t>(row_offset) * y->nb[0]);
        };
        if (with_q) h.q = part(hp.head_dim_k, hp.n_head, 0);
        h.k = part(hp.head_dim_k, hp.n_head_kv, hp.n_embd_q());
        // v goes to the cache as it is (k through rope, which writes a new tensor): made dense.
        h.v = gk_cont(ctx, part(hp.head_dim_v, hp.n_head_kv, hp.n_embd_q() + hp.n_embd_k_gqa()));
        return h;
    }

    /** Tokens [col0, col0 + n) of x [ne0, ne1, T]: a view, or x itself when that is all
     *  of it (one sequence). */
    gk_tensor * columns(gk_tensor * x, int64_t col0, int64_t n) const {
        if (col0 == 0 && n == x->ne[2]) return x;
        return gk_view_3d(ctx, x, x->ne[0], x->ne[1], n, x->nb[1], x->nb[2], static_cast<size_t>(col0) * x->nb[2]);
    }

    /** Layer il's k and v (project()'s), normed and roped, written to the cache cells of
     *  each sequence's tokens: expanded into the graph, so that they come before the
     *  attention that reads the cells. false on a builder error. */
    bool store_kv(const qkv_heads & h, int64_t il) const {
        const layer_weights & l = model.weights().layers[il];
        gk_tensor * k = h.k;
        gk_tensor * v = h.v;
        if (!k || !v) return false;
        if (hp.qk_norm) k = norm(k, l.k_norm);
        k = rope(k, il);
        if (!k || !v) return false;
        int64_t col0 = 0;  // the sequence's first column
        for (const forward_seq & sq : seqs) {
            gk_tensor * cells   = sq.n_tokens == n_tokens ? io.pos
                                  : gk_view_1d(ctx, io.pos, sq.n_tokens, static_cast<size_t>(col0) * io.pos->nb[0]);
            gk_tensor * store_k = sq.kv->store_k(ctx, il, columns(k, col0, sq.n_tokens), cells);
            gk_tensor * store_v = sq.kv->store_v(ctx, il, columns(v, col0, sq.n_tokens), cells);
            if (!store_k || !store_v || gk_build_forward_expand(graph, store_k) != GK_STATUS_SUCCESS ||
                gk_build_forward_expand(graph, store_v) != GK_STATUS_SUCCESS) {
                return false;
            }
            col0 += sq.n_tokens;
        }
        return true;
    }

    /** The attention block of layer il on the normalised input x [n_embd, T]: each
     *  sequence's queries over its own cache, the outputs side by side again. */
    gk_tensor * attention(gk_tensor * x, int64_t il) const {
        const layer_weights & l = model.weights().layers[il];
        const qkv_heads       h = project(x, il, true);
        if (!store_kv(h, il)) return nullptr;
        gk_tensor * q = h.q;
        if (hp.qk_norm) q = norm(q, l.q_norm);
        q = rope(q, il);
        if (hp.q_scale != 1.0f) q = gk_scale(ctx, q, hp.q_scale);
        if (!q) return nullptr;
        gk_tensor * out   = nullptr;
        int64_t     col0 = 0;  // the sequence's first column
        for (size_t s = 0; s < seqs.size(); ++s) {
            const forward_seq & sq   = seqs[s];
            gk_tensor *         mask = hp.swa_layer[il] ? io.mask_swa[s] : io.mask[s];
            gk_tensor *         qs   = columns(q, col0, sq.n_tokens);
            gk_tensor *         o    = gk_flash_attn_ext(ctx, gk_permute(ctx, qs, 0, 2, 1, 3),
                                                         sq.kv->view_k(ctx, il, sq.n_kv),
                                                         sq.kv->view_v(ctx, il, sq.n_kv),
                                                         mask, hp.kq_scale, 0.0f, hp.attn_softcap);
            o   = gk_reshape_2d(ctx, o, hp.head_dim_v * hp.n_head, sq.n_tokens);  // [Dv, H, T] -> [Dv*H, T]
            out = out ? gk_concat(ctx, out, o, 1) : o;
            col0 += sq.n_tokens;
        }
        return linear(l.wo, out, l.bo);
    }

    gk_tensor * feed_forward(gk_tensor * x, int64_t il) const {
        const layer_weights & l = model.weights().layers[il];
        gk_tensor * h = l.ffn_gate ? gk_glu_split(ctx, gk_mul_mat(ctx, l.ffn_gate, x), gk_mul_mat(ctx, l.ffn_up, x),
                                                  hp.ffn_glu)
                                   : gk_glu(ctx, gk_mul_mat(ctx, l.ffn_up, x), hp.ffn_glu, false);
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
        // Layers whose attention is in the graph: without logits or hidden states the last
        // one only writes its cache cells.
        const bool    to_end = end == hp.n_layer;
        const int64_t n_attn = want_logits || want_embd || !to_end ? end : end - 1;
        io.pos               = input(GK_TYPE_I32, n_tokens, 0, "inp_pos");
        if (!io.pos) return false;
        // A mask only where some layer reads it (an input outside the graph gets no memory).
        const auto n_swa = std::count(hp.swa_layer.begin() + first, hp.swa_layer.begin() + n_attn, true);
        io.mask.assign(seqs.size(), nullptr);
        io.mask_swa.assign(seqs.size(), nullptr);
        for (size_t s = 0; s < seqs.size(); ++s) {
            if (n_swa < n_attn - first) io.mask[s] = input(GK_TYPE_F16, seqs[s].n_kv, seqs[s].n_tokens, "kq_mask");
            if (n_swa > 0) io.mask_swa[s] = input(GK_TYPE_F16, seqs[s].n_kv, seqs[s].n_tokens, "kq_mask_swa");
        }

        gk_tensor * x = nullptr;  // [n_embd, T]
        if (first == 0) {
            io.tokens = input(GK_TYPE_I32, n_tokens, 0, "inp_tokens");
            x         = io.tokens ? gk_get_rows(ctx, w.tok_embd, io.tokens) : nullptr;
            if (hp.embd_scale != 1.0f) x = gk_scale(ctx, x, hp.embd_scale);
        } else {
            x = io.inp_embd = input(GK_TYPE_F32, hp.n_embd, n_tokens, "inp_embd");
        }
        for (int64_t il = first; il < n_attn && x; ++il) {
            const layer_weights & l = w.layers[il];
            gk_tensor * cur = attention(norm(x, l.attn_norm), il);
            if (hp.post_norms) cur = norm(cur, l.attn_post_norm);
            x   = gk_add(ctx, cur, x);
            cur = feed_forward(norm(x, l.ffn_norm), il);
            if (hp.post_norms) cur = norm(cur, l.ffn_post_norm);
            x = gk_add(ctx, cur, x);
        }
        if (!x) return false;
        if (!to_end) {  // a pipeline stage before the last: the hidden state goes on
            io.out_embd = input(GK_TYPE_F32, hp.n_embd, n_tokens, "out_embd");
            gk_tensor * out = io.out_embd ? gk_cpy(ctx, x, io.out_embd) : nullptr;
            return out && gk_build_forward_expand(graph, out) == GK_STATUS_SUCCESS;
        }
        if (!want_logits && !want_embd) {
            return store_kv(project(norm(x, w.layers[n_attn].attn_norm), n_attn, false), n_attn);
        }
        // The columns wanted, side by side: every token of each sequence that asks for its
        // hidden states; the last token of each that asks for logits.
        gk_tensor * last  = nullptr;
        gk_tensor * every = nullptr;
        int64_t     col0  = 0;  // the sequence's first column
        for (const forward_seq & sq : seqs) {
            if (sq.embd) {
                gk_tensor * cols = gk_view_2d(ctx, x, hp.n_embd, sq.n_tokens, x->nb[1],
                                              static_cast<size_t>(col0) * x->nb[1]);
                every            = every ? gk_concat(ctx, every, cols, 1) : cols;
            }
            col0 += sq.n_tokens;
            if (!sq.logits) continue;
            gk_tensor * col = gk_view_2d(ctx, x, hp.n_embd, 1, x->nb[1], static_cast<size_t>(col0 - 1) * x->nb[1]);
            last            = last ? gk_concat(ctx, last, col, 1) : col;
        }
        if (every) {
            gk_tensor * embd = norm(every, w.output_norm);
            if (!embd) return false;
            gk_set_name(embd, "embd");
            gk_set_output(embd);
            io.embd = embd;
            if (gk_build_forward_expand(graph, embd) != GK_STATUS_SUCCESS) return false;
        }
        if (!last) return true;
        gk_tensor * logits = linear(w.output, norm(last, w.output_norm), w.output_b);
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

size_t forward_graph_size(const hparams & hp, size_t n_seq) {
    return (k_nodes_per_layer + k_nodes_per_seq * n_seq) * static_cast<size_t>(hp.n_layer + 1);
}

bool build_forward(gk_context * ctx, gk_cgraph * graph, const Model & model, std::span<const forward_seq> seqs,
                   forward_tensors & t, layer_range layers) {
    t                 = forward_tensors{};
    int64_t n_tokens  = 0;
    bool    logits    = false;
    bool    embd      = false;
    for (const forward_seq & sq : seqs) {
        n_tokens += sq.n_tokens;
        logits = logits || sq.logits;
        embd   = embd || sq.embd;
    }
    const int64_t end   = std::min(layers.end, model.hp().n_layer);
    const int64_t first = std::clamp<int64_t>(layers.first, 0, end - 1);  // at least one layer
    const graph_builder b{ctx, graph, model, model.hp(), seqs, n_tokens, logits, embd, t, first, end};
    return b.build();
}

} // namespace gk::run
