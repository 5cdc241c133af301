// tiny_model.h - a complete, very small llama model (vocabulary of 16 tokens,
// SentencePiece unless asked otherwise, n_embd 8, 2 heads of 4 with 1 KV head, n_ff 16, f32 weights) built with the
// GGUF C API, for tests that spoil one thing in it (a key, a tensor's type or shape, an
// extra block) and for the seeds of the model-loading fuzz target.
#pragma once

#include "gk/gguf.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tiny_model {

struct gguf_closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};
using gguf_ptr = std::unique_ptr<gk_gguf, gguf_closer>;

struct spec {
    std::string arch      = "llama";  // llama, qwen3 or gemma3 (the last two add the q/k norms, gemma3 the post norms)
    int64_t     n_layer   = 2;        // blocks of tensors written
    int64_t     n_embd    = 8;
    int64_t     n_head    = 2;
    int64_t     n_head_kv = 1;
    int64_t     n_ff      = 16;
    bool        tied      = false;    // no output.weight: the embeddings are the output projection
    std::string tokenizer = "llama";  // tokenizer.ggml.model: llama (SentencePiece), gpt2 (byte-level BPE) or bert
    /// Tensor name -> type to write it in instead of f32 (f16, f64, i32, ...).
    std::map<std::string, enum gk_type> types;
};

/** The 16 tokens of each tokenizer family (SentencePiece by default). */
inline const std::vector<std::string> & vocab(const std::string & tokenizer = "llama") {
    static const std::vector<std::string> spm = {
        "<unk>", "<s>", "</s>", "\xE2\x96\x81", "\xE2\x96\x81" "a", "\xE2\x96\x81" "b", "a", "b",
        "c", "d", "e", "\xE2\x96\x81" "ab", "ab", "cd", "\xE2\x96\x81" "cd", "."};
    static const std::vector<std::string> bpe = {
        "<|endoftext|>", "<|im_start|>", "<|im_end|>", "a", "b", "c", "d", ".", "\xC4\xA0", "\xC4\xA0" "a",
        "\xC4\xA0" "b", "ab", "cd", "\xC4\xA0" "ab", "<", ">"};
    static const std::vector<std::string> wpm = {
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", ".", "##a", "##b", "ab", "cd", "##cd", "<"};
    return tokenizer == "gpt2" ? bpe : tokenizer == "bert" ? wpm : spm;
}

/** Deterministic values in [-0.5, 0.5) scaled by `scale`. */
inline std::vector<float> values(size_t n, uint32_t seed, float scale) {
    std::vector<float> out(n);
    uint32_t           x = seed * 2654435761u + 1u;
    for (float & f : out) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        f = (static_cast<float>(x % 1000u) / 1000.0f - 0.5f) * scale;
    }
    return out;
}

/** Add tensor `name` of shape ne (1 or 2 dims) filled from `values`, in the type the spec asks. */
inline void add(gk_gguf * g, const spec & s, const std::string & name, std::vector<int64_t> ne, float scale,
                uint32_t seed) {
    size_t n = 1;
    for (int64_t d : ne) n *= static_cast<size_t>(d);
    const std::vector<float> f = values(n, seed, scale);
    const auto it = s.types.find(name);
    const enum gk_type type = it == s.types.end() ? GK_TYPE_F32 : it->second;
    std::vector<uint8_t> bytes;
    switch (type) {
        case GK_TYPE_F64:
            for (float x : f) {
                const double d = x;
                bytes.insert(bytes.end(), reinterpret_cast<const uint8_t *>(&d), reinterpret_cast<const uint8_t *>(&d) + 8);
            }
            break;
        case GK_TYPE_I32:
            for (float x : f) {
                const int32_t i = static_cast<int32_t>(x * 100);
                bytes.insert(bytes.end(), reinterpret_cast<const uint8_t *>(&i), reinterpret_cast<const uint8_t *>(&i) + 4);
            }
            break;
        default:  // f32
            bytes.resize(n * 4);
            std::memcpy(bytes.data(), f.data(), n * 4);
            break;
    }
    gk_gguf_add_tensor(g, name.c_str(), type, static_cast<uint32_t>(ne.size()), ne.data(), bytes.data(), bytes.size(),
                       nullptr);
}

/** The model of `s`: every key and tensor its architecture needs. */
inline gguf_ptr build(const spec & s = {}) {
    gguf_ptr g(gk_gguf_create());
    gk_gguf * c = g.get();
    const std::string a = s.arch + ".";
    gk_gguf_set_str(c, "general.architecture", s.arch.c_str(), s.arch.size(), nullptr);
    gk_gguf_set_u32(c, (a + "context_length").c_str(), 64, nullptr);
    gk_gguf_set_u32(c, (a + "embedding_length").c_str(), static_cast<uint32_t>(s.n_embd), nullptr);
    gk_gguf_set_u32(c, (a + "block_count").c_str(), static_cast<uint32_t>(s.n_layer), nullptr);
    gk_gguf_set_u32(c, (a + "feed_forward_length").c_str(), static_cast<uint32_t>(s.n_ff), nullptr);
    gk_gguf_set_u32(c, (a + "attention.head_count").c_str(), static_cast<uint32_t>(s.n_head), nullptr);
    gk_gguf_set_u32(c, (a + "attention.head_count_kv").c_str(), static_cast<uint32_t>(s.n_head_kv), nullptr);
    gk_gguf_set_f32(c, (a + "attention.layer_norm_rms_epsilon").c_str(), 1e-5f, nullptr);

    const std::vector<std::string> & v = vocab(s.tokenizer);
    std::vector<const char *>        texts;
    std::vector<float>               scores;
    std::vector<int32_t>             types;
    const int32_t                    n_special = s.tokenizer == "gpt2" ? 3 : s.tokenizer == "bert" ? 5 : 3;
    for (size_t i = 0; i < v.size(); ++i) {
        texts.push_back(v[i].c_str());
        scores.push_back(-static_cast<float>(i));
        types.push_back(static_cast<int32_t>(i) >= n_special ? 1 : s.tokenizer == "llama" && i == 0 ? 2 : 3);
    }
    gk_gguf_set_str(c, "tokenizer.ggml.model", s.tokenizer.c_str(), s.tokenizer.size(), nullptr);
    gk_gguf_set_array_str(c, "tokenizer.ggml.tokens", texts.data(), nullptr, texts.size(), nullptr);
    gk_gguf_set_array(c, "tokenizer.ggml.scores", GK_GGUF_TYPE_FLOAT32, scores.data(), scores.size(), nullptr);
    gk_gguf_set_array(c, "tokenizer.ggml.token_type", GK_GGUF_TYPE_INT32, types.data(), types.size(), nullptr);
    if (s.tokenizer == "gpt2") {
        const char * merges[] = {"\xC4\xA0 a", "a b", "c d", "\xC4\xA0 b", "\xC4\xA0" "a b"};
        gk_gguf_set_str(c, "tokenizer.ggml.pre", "qwen2", 5, nullptr);
        gk_gguf_set_array_str(c, "tokenizer.ggml.merges", merges, nullptr, 5, nullptr);
        gk_gguf_set_u32(c, "tokenizer.ggml.bos_token_id", 0, nullptr);
        gk_gguf_set_u32(c, "tokenizer.ggml.eos_token_id", 2, nullptr);
    } else if (s.tokenizer == "bert") {
        gk_gguf_set_u32(c, "tokenizer.ggml.cls_token_id", 2, nullptr);
        gk_gguf_set_u32(c, "tokenizer.ggml.seperator_token_id", 3, nullptr);
        gk_gguf_set_u32(c, "tokenizer.ggml.unknown_token_id", 1, nullptr);
        gk_gguf_set_u32(c, "tokenizer.ggml.padding_token_id", 0, nullptr);
    } else {
        gk_gguf_set_u32(c, "tokenizer.ggml.bos_token_id", 1, nullptr);
        gk_gguf_set_u32(c, "tokenizer.ggml.eos_token_id", 2, nullptr);
        gk_gguf_set_u32(c, "tokenizer.ggml.unknown_token_id", 0, nullptr);
    }

    const int64_t e = s.n_embd, hd = s.n_embd / s.n_head, n_v = static_cast<int64_t>(v.size());
    uint32_t      seed = 1;
    add(c, s, "token_embd.weight", {e, n_v}, 2.0f, seed++);
    add(c, s, "output_norm.weight", {e}, 0.2f, seed++);
    if (!s.tied) add(c, s, "output.weight", {e, n_v}, 2.0f, seed++);
    const bool qk_norm = s.arch != "llama", post = s.arch == "gemma3";
    for (int64_t il = 0; il < s.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        add(c, s, b + "attn_norm.weight", {e}, 0.2f, seed++);
        add(c, s, b + "attn_q.weight", {e, hd * s.n_head}, 1.0f, seed++);
        add(c, s, b + "attn_k.weight", {e, hd * s.n_head_kv}, 1.0f, seed++);
        add(c, s, b + "attn_v.weight", {e, hd * s.n_head_kv}, 1.0f, seed++);
        add(c, s, b + "attn_output.weight", {hd * s.n_head, e}, 1.0f, seed++);
        if (qk_norm) {
            add(c, s, b + "attn_q_norm.weight", {hd}, 0.2f, seed++);
            add(c, s, b + "attn_k_norm.weight", {hd}, 0.2f, seed++);
        }
        add(c, s, b + "ffn_norm.weight", {e}, 0.2f, seed++);
        add(c, s, b + "ffn_gate.weight", {e, s.n_ff}, 1.0f, seed++);
        add(c, s, b + "ffn_up.weight", {e, s.n_ff}, 1.0f, seed++);
        add(c, s, b + "ffn_down.weight", {s.n_ff, e}, 1.0f, seed++);
        if (post) {
            add(c, s, b + "post_attention_norm.weight", {e}, 0.2f, seed++);
            add(c, s, b + "post_ffw_norm.weight", {e}, 0.2f, seed++);
        }
    }
    return g;
}

/** Write `g` to `path`; false on failure. */
inline bool write(const gk_gguf * g, const std::string & path) {
    return gk_gguf_write(g, path.c_str(), nullptr) == GK_GGUF_OK;
}

} // namespace tiny_model
