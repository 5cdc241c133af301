// model_load.cpp - open a GGUF model, bind each weight to its role with a shape check,
// and bring the weight pages into memory.
#include "model.h"

#include <cstdio>
#include <initializer_list>

namespace gk::run {

/** Binds GGUF tensors to gk tensors (structs in a no_alloc context whose data points into
 *  the mapped file), checking names, shapes and types. The first failure is kept. */
class model_loader {
public:
    model_loader(Model & m, std::string * error)
        : m_(m), err_(error), used_(static_cast<size_t>(gk_gguf_tensor_count(m.gguf_)), 0) {}

    bool failed() const { return failed_; }

    void fail(const std::string & msg) {
        if (!failed_ && err_) *err_ = msg;
        failed_ = true;
    }

    /** The tensor `name` with shape `shape` (ne order; missing trailing dims are 1).
     *  nullptr when absent and not `required` (absent and required is an error).
     *  `vector`: a 1-D parameter (norm weight, bias) that must be f32, f16 or bf16. */
    gk_tensor * bind(const std::string & name, std::initializer_list<int64_t> shape, bool required, bool vector,
                     const char * role) {
        if (failed_) return nullptr;
        const int64_t i = gk_gguf_find_tensor(m_.gguf_, name.c_str());
        if (i < 0) {
            if (required) fail("missing tensor " + name + " (" + role + ")");
            return nullptr;
        }
        const int64_t * ne = gk_gguf_tensor_ne(m_.gguf_, i);
        int64_t want[GK_MAX_DIMS] = {1, 1, 1, 1};
        int     d = 0;
        for (int64_t s : shape) want[d++] = s;
        if (ne[0] != want[0] || ne[1] != want[1] || ne[2] != want[2] || ne[3] != want[3]) {
            fail("tensor " + name + " (" + role + ") has shape " + shape_text(ne, GK_MAX_DIMS) + ", expected " +
                 shape_text(want, d));
            return nullptr;
        }
        const enum gk_type type = gk_gguf_tensor_type(m_.gguf_, i);
        if (vector && type != GK_TYPE_F32 && type != GK_TYPE_F16 && type != GK_TYPE_BF16) {
            fail("tensor " + name + " (" + role + ") is " + gk_type_name(type) + ", expected f32, f16 or bf16");
            return nullptr;
        }
        gk_tensor * t = gk_new_tensor(m_.ctx_, type, d, want);
        if (!t) {
            fail("tensor " + name + ": " + gk_last_error(m_.ctx_));
            return nullptr;
        }
        gk_set_name(t, name.c_str());
        t->data = const_cast<void *>(gk_gguf_tensor_data(m_.gguf_, i));
        m_.weight_bytes_ += gk_gguf_tensor_size(m_.gguf_, i);
        bound_.push_back(t);
        used_[static_cast<size_t>(i)] = 1;
        return t;
    }

    /** A weight that multiplies activations (mul_mat); refused when gk's matrix product
     *  cannot read its type (f64, integers) or rows of its length. */
    gk_tensor * matrix(const std::string & name, int64_t ne0, int64_t ne1, const char * role, bool required = true) {
        gk_tensor * t = bind(name, {ne0, ne1}, required, false, role);
        if (t && !readable(t, role, true)) return nullptr;
        return t;
    }

    /** A table whose rows are looked up (get_rows): the token embeddings. */
    gk_tensor * table(const std::string & name, int64_t ne0, int64_t ne1, const char * role) {
        gk_tensor * t = bind(name, {ne0, ne1}, true, false, role);
        if (t && !readable(t, role, false)) return nullptr;
        return t;
    }

    /** Whether `t` can be the weight of a matrix product (`product`) or the table of a row
     *  lookup: the builder of that op is asked, on a throw-away context, and then the CPU
     *  (gk-run's backend) whether it can compute the op (a product needs a CPU dot product
     *  for the weight's type, which the builder does not check). */
    bool readable(gk_tensor * t, const char * role, bool product) {
        gk_init_params ip{};
        ip.mem_size = 4 * gk_tensor_overhead();
        ip.no_alloc = true;
        gk_context * probe = gk_init(ip);
        if (!probe) {
            fail("out of memory");
            return false;
        }
        gk_tensor * x  = product ? gk_new_tensor_2d(probe, GK_TYPE_F32, t->ne[0], 1)
                                 : gk_new_tensor_1d(probe, GK_TYPE_I32, 1);
        gk_tensor * op = x ? (product ? gk_mul_mat(probe, t, x) : gk_get_rows(probe, t, x)) : nullptr;
        const bool  ok = op && gk_cpu_supports_op(op);
        if (!ok) {
            const std::string why = !op       ? std::string(gk_last_error(probe))
                                    : product ? "the CPU has no dot product for its rows of " +
                                                    std::to_string(t->ne[0]) + " elements"
                                              : std::string("the CPU has no kernel for it");
            fail("tensor " + std::string(t->name) + " (" + role + ") is " + gk_type_name(t->type) + ", which gk's " +
                 (product ? "matrix product" : "row lookup") + " cannot read: " + why);
        }
        gk_free(probe);
        return ok;
    }

    /** After binding: a tensor of a block past block_count is an error (the metadata
     *  contradicts the file); any other tensor left unused is a warning. */
    void check_unused(const hparams & hp, std::vector<std::string> & warnings) {
        for (size_t i = 0; i < used_.size() && !failed_; ++i) {
            if (used_[i]) continue;
            const std::string name = gk_gguf_tensor_name(m_.gguf_, static_cast<int64_t>(i));
            long long block = -1;
            int       taken = 0;
            if (std::sscanf(name.c_str(), "blk.%lld.%n", &block, &taken) == 1 && taken > 0 && block >= hp.n_layer) {
                fail("tensor " + name + " is in block " + std::to_string(block) + " but " + hp.arch_name +
                     ".block_count = " + std::to_string(hp.n_layer) + " (blocks 0.." + std::to_string(hp.n_layer - 1) +
                     ")");
                return;
            }
            warnings.push_back("tensor " + name + " is not used by gk-run's " + hp.arch_name + "; ignored");
        }
    }
    gk_tensor * vec(const std::string & name, int64_t ne0, const char * role, bool required = true) {
        return bind(name, {ne0}, required, true, role);
    }

    /** Read every page of the bound weights once, reporting progress in bytes. */
    void touch(const load_progress & progress) const {
        const uint64_t total = m_.weight_bytes_;
        uint64_t       done  = 0;
        unsigned       sink  = 0;
        for (const gk_tensor * t : bound_) {
            const auto * p = static_cast<const volatile unsigned char *>(t->data);
            const size_t n = gk_nbytes(t);
            for (size_t off = 0; off < n; off += 4096) sink += p[off];
            done += n;
            if (progress) progress(done, total);
        }
        static volatile unsigned keep;  // the reads must not be optimised away
        keep = keep + sink;
    }

private:
    static std::string shape_text(const int64_t * ne, int n) {
        std::string s = "[";
        for (int j = 0; j < n; ++j) s += (j ? ", " : "") + std::to_string(ne[j]);
        return s + "]";
    }

    Model &                   m_;
    std::string *             err_;
    bool                      failed_ = false;
    std::vector<gk_tensor *>  bound_;
    std::vector<char>         used_;  // per GGUF tensor: bound to a role
};

namespace {

std::string blk(int64_t il, const char * what) { return "blk." + std::to_string(il) + "." + what; }

void bind_weights(model_loader & ld, const hparams & hp, model_weights & w) {
    const int64_t n_embd = hp.n_embd, n_q = hp.n_embd_q(), n_k = hp.n_embd_k_gqa(), n_v = hp.n_embd_v_gqa();
    w.tok_embd    = ld.table("token_embd.weight", n_embd, hp.n_vocab, "token embeddings");
    w.output_norm = ld.vec("output_norm.weight", n_embd, "output norm");
    w.output      = ld.matrix("output.weight", n_embd, hp.n_vocab, "output projection", false);
    if (!w.output && !ld.failed()) {  // tied embeddings: the table is also the output projection
        w.output = w.tok_embd;
        if (w.output && !ld.readable(w.output, "token embeddings, also the output projection", true)) w.output = nullptr;
    }
    if (hp.arch == arch_kind::llama) {
        w.rope_freqs = ld.vec("rope_freqs.weight", hp.n_rot / 2, "rope frequency factors", false);
    }
    if (hp.arch == arch_kind::qwen2) {
        w.output_b = ld.vec("output.bias", hp.n_vocab, "output bias", false);
    }
    if (hp.arch == arch_kind::phi3) {
        w.rope_long  = ld.vec("rope_factors_long.weight", hp.n_rot / 2, "LongRoPE long factors", false);
        w.rope_short = ld.vec("rope_factors_short.weight", hp.n_rot / 2, "LongRoPE short factors", false);
        if (!w.rope_long != !w.rope_short && !ld.failed()) {
            ld.fail("LongRoPE needs both rope_factors_long.weight and rope_factors_short.weight; the file has one");
        }
    }
    w.layers.resize(hp.n_layer);
    for (int64_t il = 0; il < hp.n_layer && !ld.failed(); ++il) {
        layer_weights & l = w.layers[il];
        l.attn_norm = ld.vec(blk(il, "attn_norm.weight"), n_embd, "attention norm");
        // q, k and v: one fused matrix (rows q | k | v) when the file has it, as llama.cpp takes it.
        l.wqkv = ld.matrix(blk(il, "attn_qkv.weight"), n_embd, n_q + n_k + n_v, "attention query|key|value", false);
        if (l.wqkv) {
            l.bqkv = ld.vec(blk(il, "attn_qkv.bias"), n_q + n_k + n_v, "query|key|value bias", false);
        } else {
            l.wq = ld.matrix(blk(il, "attn_q.weight"), n_embd, n_q, "attention query");
            l.wk = ld.matrix(blk(il, "attn_k.weight"), n_embd, n_k, "attention key");
            l.wv = ld.matrix(blk(il, "attn_v.weight"), n_embd, n_v, "attention value");
            l.bq = ld.vec(blk(il, "attn_q.bias"), n_q, "query bias", false);
            l.bk = ld.vec(blk(il, "attn_k.bias"), n_k, "key bias", false);
            l.bv = ld.vec(blk(il, "attn_v.bias"), n_v, "value bias", false);
        }
        l.wo        = ld.matrix(blk(il, "attn_output.weight"), hp.head_dim_v * hp.n_head, n_embd, "attention output");
        l.bo        = ld.vec(blk(il, "attn_output.bias"), n_embd, "attention output bias", false);
        if (hp.qk_norm) {
            l.q_norm = ld.vec(blk(il, "attn_q_norm.weight"), hp.head_dim_k, "query norm");
            l.k_norm = ld.vec(blk(il, "attn_k_norm.weight"), hp.head_dim_k, "key norm");
        }
        l.ffn_norm = ld.vec(blk(il, "ffn_norm.weight"), n_embd, "feed-forward norm");
        if (hp.ffn_fused_up) {
            l.ffn_up = ld.matrix(blk(il, "ffn_up.weight"), n_embd, 2 * hp.n_ff, "feed-forward gate|up");
        } else {
            l.ffn_gate = ld.matrix(blk(il, "ffn_gate.weight"), n_embd, hp.n_ff, "feed-forward gate");
            l.ffn_up   = ld.matrix(blk(il, "ffn_up.weight"), n_embd, hp.n_ff, "feed-forward up");
        }
        l.ffn_down = ld.matrix(blk(il, "ffn_down.weight"), hp.n_ff, n_embd, "feed-forward down");
        if (hp.post_norms) {
            l.attn_post_norm = ld.vec(blk(il, "post_attention_norm.weight"), n_embd, "post-attention norm");
            l.ffn_post_norm  = ld.vec(blk(il, "post_ffw_norm.weight"), n_embd, "post-feed-forward norm");
        }
    }
}

} // namespace

std::unique_ptr<Model> Model::load(const std::string & path, const load_progress & progress, std::string * error) {
    gk_gguf_error gerr{};
    gk_gguf *     g = gk_gguf_open(path.c_str(), &gerr);
    if (!g) {
        if (error) *error = "cannot load model '" + path + "': " + gerr.message;
        return nullptr;
    }
    return load(g, path, progress, error);
}

std::unique_ptr<Model> Model::load(gk_gguf * gguf, const std::string & path, const load_progress & progress,
                                   std::string * error) {
    std::unique_ptr<Model> m(new Model());
    m->gguf_ = gguf;
    std::string msg;
    m->tok_ = Tokenizer::load(m->gguf_, &msg);
    if (!m->tok_) {
        if (error) *error = path + ": tokenizer: " + msg;
        return nullptr;
    }
    m->warnings_ = m->tok_->warnings();
    if (!read_hparams(m->gguf_, m->tok_->n_tokens(), m->hp_, &msg)) {
        if (error) *error = path + ": " + msg;
        return nullptr;
    }
    const size_t n_tensors = static_cast<size_t>(gk_gguf_tensor_count(m->gguf_));
    if (static_cast<uint64_t>(m->hp_.n_layer) > n_tensors) {
        // Each block has several tensors: a larger count cannot be right (and would size
        // the per-layer tables from an untrusted number).
        if (error) {
            *error = path + ": " + m->hp_.arch_name + ".block_count = " + std::to_string(m->hp_.n_layer) +
                     " but the file has only " + std::to_string(n_tensors) + " tensors";
        }
        return nullptr;
    }
    gk_init_params ip{};
    ip.mem_size = (n_tensors + 16) * gk_tensor_overhead();
    ip.no_alloc = true;
    m->ctx_     = gk_init(ip);
    if (!m->ctx_) {
        if (error) *error = path + ": out of memory for " + std::to_string(n_tensors) + " tensor structs";
        return nullptr;
    }
    model_loader ld(*m, &msg);
    bind_weights(ld, m->hp_, m->w_);
    ld.check_unused(m->hp_, m->warnings_);
    if (ld.failed()) {
        if (error) *error = path + ": " + msg;
        return nullptr;
    }
    ld.touch(progress);
    return m;
}

Model::~Model() {
    for (gk_backend_buffer_t b : device_buffers_) gk_backend_buffer_free(b);
    gk_free(offload_ctx_);
    gk_free(ctx_);
    gk_gguf_free(gguf_);
}

} // namespace gk::run
