// model_hparams.cpp - the {arch}.* keys of a GGUF file as hparams (llama.cpp's key names
// and defaults; see docs/gk-run.md for the list).
#include "model.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

namespace gk::run {

const char * supported_architectures() { return "llama, gemma3, qwen3, qwen2, phi3, gemma2"; }

namespace {

/** Typed reads of keys; a key of another type is an error naming both types. */
class key_reader {
public:
    key_reader(const gk_gguf * g, std::string arch, std::string * error) : g_(g), arch_(std::move(arch)), err_(error) {}

    /** "{arch}.suffix" */
    std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }

    bool failed() const { return failed_; }

    /** The layer count (block_count): a per-layer array must have this many entries. */
    void set_layers(int64_t n) { layers_ = n; }

    /** An integer of any GGUF integer type that fits int64 and is >= 0, or a per-layer
     *  array of one such value (not for the layer count itself: `per_layer` false);
     *  nullopt when absent (an error when `required`). */
    std::optional<int64_t> count(std::string_view suffix, bool required, bool per_layer = true) {
        const std::string k = key(suffix);
        const gk_gguf_value * v = gk_gguf_get(g_, k.c_str());
        if (!v) {
            if (required) fail("missing key " + k);
            return std::nullopt;
        }
        if (gk_gguf_value_type(v) == GK_GGUF_TYPE_ARRAY) {
            if (per_layer) return uniform_array_count(k, v);
            fail("key " + k + " is an array, expected an integer");
            return std::nullopt;
        }
        int64_t out = 0;
        if (!scalar_int(v, out)) {
            fail("key " + k + " is a " + gk_gguf_type_name(gk_gguf_value_type(v)) + ", expected an integer");
            return std::nullopt;
        }
        if (out < 0) {
            fail("key " + k + " = " + std::to_string(out) + " is negative");
            return std::nullopt;
        }
        return out;
    }

    /** A float32 or float64 key; nullopt when absent (an error when `required`). */
    std::optional<float> real(std::string_view suffix, bool required) {
        const std::string k = key(suffix);
        const gk_gguf_value * v = gk_gguf_get(g_, k.c_str());
        if (!v) {
            if (required) fail("missing key " + k);
            return std::nullopt;
        }
        float  f = 0;
        double d = 0;
        if (gk_gguf_value_f32(v, &f)) return f;
        if (gk_gguf_value_f64(v, &d)) return static_cast<float>(d);
        fail("key " + k + " is a " + gk_gguf_type_name(gk_gguf_value_type(v)) + ", expected a float");
        return std::nullopt;
    }

    std::optional<std::string> text(std::string_view suffix) {
        const std::string k = key(suffix);
        const gk_gguf_value * v = gk_gguf_get(g_, k.c_str());
        if (!v) return std::nullopt;
        size_t len = 0;
        const char * s = gk_gguf_value_str(v, &len);
        if (!s) {
            fail("key " + k + " is a " + gk_gguf_type_name(gk_gguf_value_type(v)) + ", expected a string");
            return std::nullopt;
        }
        return std::string(s, len);
    }

    /** A per-layer bool array; nullopt when absent or not an array of bools. */
    std::optional<std::vector<bool>> bool_array(std::string_view suffix) {
        const gk_gguf_value * v = gk_gguf_get(g_, key(suffix).c_str());
        if (!v || gk_gguf_array_type(v) != GK_GGUF_TYPE_BOOL) return std::nullopt;
        const auto * b = static_cast<const uint8_t *>(gk_gguf_array_data(v));
        std::vector<bool> out(gk_gguf_array_len(v));
        for (size_t i = 0; i < out.size(); ++i) out[i] = b[i] != 0;
        return out;
    }

    void fail(const std::string & msg) {
        if (!failed_ && err_) *err_ = msg;
        failed_ = true;
    }

private:
    static bool scalar_int(const gk_gguf_value * v, int64_t & out) {
        uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32; uint64_t u64; int64_t i64;
        if (gk_gguf_value_u8(v, &u8))   { out = u8;  return true; }
        if (gk_gguf_value_i8(v, &i8))   { out = i8;  return true; }
        if (gk_gguf_value_u16(v, &u16)) { out = u16; return true; }
        if (gk_gguf_value_i16(v, &i16)) { out = i16; return true; }
        if (gk_gguf_value_u32(v, &u32)) { out = u32; return true; }
        if (gk_gguf_value_i32(v, &i32)) { out = i32; return true; }
        if (gk_gguf_value_i64(v, &i64)) { out = i64; return true; }
        if (gk_gguf_value_u64(v, &u64)) {
            if (u64 > static_cast<uint64_t>(INT64_MAX)) return false;
            out = static_cast<int64_t>(u64);
            return true;
        }
        return false;
    }

    /** Per-layer arrays (llama.cpp's get_key_or_arr) are accepted when every layer has
     *  the same value: gk-run has no per-layer head counts. */
    std::optional<int64_t> uniform_array_count(const std::string & k, const gk_gguf_value * v) {
        const enum gk_gguf_type t    = gk_gguf_array_type(v);
        const uint64_t          n    = gk_gguf_array_len(v);
        const auto *            data = static_cast<const uint8_t *>(gk_gguf_array_data(v));
        if (t != GK_GGUF_TYPE_UINT32 && t != GK_GGUF_TYPE_INT32) {
            fail("key " + k + " is an array of " + gk_gguf_type_name(t) + ", expected 32-bit integers");
            return std::nullopt;
        }
        if (n == 0 || !data) {
            fail("key " + k + " is an empty array");
            return std::nullopt;
        }
        if (n != static_cast<uint64_t>(layers_)) {
            fail("key " + k + " has " + std::to_string(n) + " entries for " + std::to_string(layers_) + " layers (" +
                 arch_ + ".block_count)");
            return std::nullopt;
        }
        std::optional<int64_t> first;
        for (uint64_t j = 0; j < n; ++j) {
            uint32_t bits = 0;
            std::memcpy(&bits, data + j * 4, 4);
            const int64_t x = t == GK_GGUF_TYPE_UINT32 ? int64_t(bits) : int64_t(static_cast<int32_t>(bits));
            if (first && *first != x) {
                fail("key " + k + " differs between layers (per-layer sizes are not supported)");
                return std::nullopt;
            }
            first = x;
        }
        if (*first < 0) fail("key " + k + " is negative");
        return first;
    }

    const gk_gguf * g_;
    std::string     arch_;
    std::string *   err_;
    bool            failed_ = false;
    int64_t         layers_ = 0;
};

std::optional<arch_kind> parse_arch(std::string_view name) {
    if (name == "llama") return arch_kind::llama;
    if (name == "gemma3") return arch_kind::gemma3;
    if (name == "qwen3") return arch_kind::qwen3;
    if (name == "qwen2") return arch_kind::qwen2;
    if (name == "phi3") return arch_kind::phi3;
    if (name == "gemma2") return arch_kind::gemma2;
    return std::nullopt;
}

} // namespace

bool read_hparams(const gk_gguf * gguf, int64_t n_vocab, hparams & hp, std::string * error) {
    const gk_gguf_value * av = gk_gguf_get(gguf, "general.architecture");
    size_t alen = 0;
    const char * aname = av ? gk_gguf_value_str(av, &alen) : nullptr;
    if (!av) {
        if (error) *error = std::string("missing key general.architecture (supported: ") + supported_architectures() + ")";
        return false;
    }
    if (!aname) {
        if (error) {
            *error = std::string("key general.architecture is a ") + gk_gguf_type_name(gk_gguf_value_type(av)) +
                     ", expected a string (supported: " + supported_architectures() + ")";
        }
        return false;
    }
    hp.arch_name.assign(aname, alen);
    const auto arch = parse_arch(hp.arch_name);
    if (!arch) {
        if (error) {
            *error = "unsupported architecture '" + hp.arch_name + "' (supported: " + supported_architectures() + ")";
        }
        return false;
    }
    hp.arch    = *arch;
    hp.n_vocab = n_vocab;

    key_reader kr(gguf, hp.arch_name, error);
    hp.n_layer = kr.count("block_count", true, false).value_or(0);
    kr.set_layers(hp.n_layer);
    hp.n_ctx_train = kr.count("context_length", true).value_or(0);
    hp.n_embd      = kr.count("embedding_length", true).value_or(0);
    hp.n_ff        = kr.count("feed_forward_length", true).value_or(0);
    hp.n_head      = kr.count("attention.head_count", true).value_or(0);
    hp.n_head_kv   = kr.count("attention.head_count_kv", false).value_or(hp.n_head);
    hp.rms_eps     = kr.real("attention.layer_norm_rms_epsilon", true).value_or(0.0f);
    if (kr.failed()) return false;

    // Sizes: every one must be positive and small enough that products stay in range.
    constexpr int64_t k_max = int64_t(1) << 24;
    const struct { const char * key; int64_t v; } sizes[] = {
        {"embedding_length", hp.n_embd}, {"block_count", hp.n_layer}, {"feed_forward_length", hp.n_ff},
        {"attention.head_count", hp.n_head}, {"attention.head_count_kv", hp.n_head_kv},
        {"context_length", hp.n_ctx_train},
    };
    for (const auto & s : sizes) {
        if (s.v <= 0 || s.v > k_max) {
            kr.fail("key " + kr.key(s.key) + " = " + std::to_string(s.v) + " is out of range (1.." +
                    std::to_string(k_max) + ")");
            return false;
        }
    }
    if (hp.n_head % hp.n_head_kv != 0) {
        kr.fail("attention.head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " +
                std::to_string(hp.n_head_kv));
        return false;
    }
    if (!(hp.rms_eps > 0.0f) || !std::isfinite(hp.rms_eps)) {
        kr.fail("key " + kr.key("attention.layer_norm_rms_epsilon") + " must be a positive number");
        return false;
    }

    if (hp.n_embd % hp.n_head != 0 &&
        (!gk_gguf_get(gguf, kr.key("attention.key_length").c_str()) ||
         !gk_gguf_get(gguf, kr.key("attention.value_length").c_str()))) {
        kr.fail("key " + kr.key("embedding_length") + " = " + std::to_string(hp.n_embd) + " is not a multiple of " +
                kr.key("attention.head_count") + " = " + std::to_string(hp.n_head) +
                ", and the head size (attention.key_length, attention.value_length) is not given");
        return false;
    }
    hp.head_dim_k = kr.count("attention.key_length", false).value_or(hp.n_embd / hp.n_head);
    hp.head_dim_v = kr.count("attention.value_length", false).value_or(hp.n_embd / hp.n_head);
    hp.n_rot      = kr.count("rope.dimension_count", false).value_or(hp.head_dim_k);
    if (kr.failed()) return false;
    if (hp.head_dim_k <= 0 || hp.head_dim_v <= 0 || hp.head_dim_k > k_max || hp.head_dim_v > k_max) {
        kr.fail("attention head size " + std::to_string(hp.head_dim_k) + "/" + std::to_string(hp.head_dim_v) +
                " is out of range");
        return false;
    }
    if (hp.n_rot <= 0 || hp.n_rot > hp.head_dim_k || hp.n_rot % 2 != 0) {
        kr.fail("rope.dimension_count " + std::to_string(hp.n_rot) + " must be even and at most the head size " +
                std::to_string(hp.head_dim_k));
        return false;
    }
    if (hp.arch != arch_kind::gemma3 && hp.arch != arch_kind::phi3 && hp.n_rot != hp.head_dim_k) {
        kr.fail("rope.dimension_count " + std::to_string(hp.n_rot) + " differs from the head size " +
                std::to_string(hp.head_dim_k) + " (partial rope is not supported for " + hp.arch_name + ")");
        return false;
    }

    hp.rope_base = kr.real("rope.freq_base", false).value_or(10000.0f);
    const std::string scaling = kr.text("rope.scaling.type").value_or("linear");
    if (kr.failed()) return false;
    if (scaling != "none" && scaling != "linear") {
        kr.fail("rope scaling '" + scaling + "' (" + kr.key("rope.scaling.type") +
                ") is not supported; gk-run implements none and linear");
        return false;
    }
    float factor = kr.real("rope.scaling.factor", false).value_or(0.0f);
    if (factor == 0.0f) factor = kr.real("rope.scale_linear", false).value_or(0.0f);
    if (kr.failed()) return false;
    hp.rope_freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;
    if (!std::isfinite(hp.rope_base) || hp.rope_base <= 0.0f || !std::isfinite(hp.rope_freq_scale) ||
        hp.rope_freq_scale <= 0.0f) {
        kr.fail("rope.freq_base / rope.scaling.factor must be positive numbers");
        return false;
    }

    hp.rope_attn_factor = kr.real("rope.scaling.attn_factor", false).value_or(1.0f);
    hp.n_ctx_orig       = kr.count("rope.scaling.original_context_length", false).value_or(hp.n_ctx_train);
    if (kr.failed()) return false;
    if (!std::isfinite(hp.rope_attn_factor) || hp.rope_attn_factor <= 0.0f || hp.n_ctx_orig <= 0 ||
        hp.n_ctx_orig > k_max) {
        kr.fail("rope.scaling.attn_factor / rope.scaling.original_context_length out of range");
        return false;
    }

    hp.pooling_type = kr.count("pooling_type", false).value_or(-1);
    if (kr.failed()) return false;
    if (hp.pooling_type > 4) {
        kr.fail("pooling_type " + std::to_string(hp.pooling_type) + " is not one of llama.cpp's (0..4)");
        return false;
    }

    hp.kq_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));
    hp.swa_layer.assign(hp.n_layer, false);
    switch (hp.arch) {
        case arch_kind::llama:
            hp.rope_mode = GK_ROPE_TYPE_NORMAL;
            break;
        case arch_kind::qwen2:
            hp.rope_mode = GK_ROPE_TYPE_NEOX;
            break;
        case arch_kind::qwen3:
            hp.rope_mode = GK_ROPE_TYPE_NEOX;
            hp.qk_norm   = true;
            break;
        case arch_kind::phi3:
            // llama.cpp scales q before attention and ignores phi3's sliding window
            // (attention.sliding_window): every layer attends to the whole context.
            hp.rope_mode    = GK_ROPE_TYPE_NEOX;
            hp.q_scale      = hp.kq_scale;
            hp.kq_scale     = 1.0f;
            hp.ffn_fused_up = true;
            break;
        case arch_kind::gemma2:
        case arch_kind::gemma3: {
            const bool g2 = hp.arch == arch_kind::gemma2;
            hp.rope_mode  = GK_ROPE_TYPE_NEOX;
            hp.qk_norm    = !g2;
            hp.post_norms = true;
            hp.ffn_glu    = GK_GLU_OP_GEGLU;
            hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
            // The largest models (Gemma 2 27B: 46 layers, Gemma 3 27B: 62) scale queries by
            // n_embd / n_head, the others by the head size (query_pre_attn_scalar of the
            // original configurations, which GGUF does not carry).
            hp.q_scale = hp.n_layer == (g2 ? 46 : 62) ? 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head))
                                                      : 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));
            hp.kq_scale      = 1.0f;
            // Gemma 2 softcaps the attention scores and the logits (defaults 50 and 30);
            // Gemma 3 the logits only when the key says so.
            hp.logit_softcap = kr.real("final_logit_softcapping", false).value_or(g2 ? 30.0f : 0.0f);
            hp.attn_softcap  = g2 ? kr.real("attn_logit_softcapping", false).value_or(50.0f) : 0.0f;
            // Gemma 2 always has the window (4096 by default), on every other layer, with
            // the global rope; Gemma 3 when the key gives one, on 5 of 6 layers, with its
            // own rope base.
            hp.n_swa = kr.count("attention.sliding_window", false).value_or(g2 ? 4096 : 0);
            if (hp.n_swa > 0) {
                hp.rope_base_swa       = kr.real("rope.freq_base_swa", false).value_or(g2 ? hp.rope_base : 10000.0f);
                hp.rope_freq_scale_swa = g2 ? hp.rope_freq_scale : 1.0f;
                if (auto pattern = kr.bool_array("attention.sliding_window_pattern")) {
                    if (static_cast<int64_t>(pattern->size()) != hp.n_layer) {
                        kr.fail("key " + kr.key("attention.sliding_window_pattern") + " has " +
                                std::to_string(pattern->size()) + " entries for " + std::to_string(hp.n_layer) +
                                " layers");
                        return false;
                    }
                    hp.swa_layer = *pattern;
                } else {
                    // Every n-th layer is global.
                    const int64_t n = kr.count("attention.sliding_window_pattern", false).value_or(g2 ? 2 : 6);
                    for (int64_t il = 0; il < hp.n_layer; ++il) {
                        hp.swa_layer[il] = n == 0 || il % n < n - 1;
                    }
                }
            }
            if (kr.failed()) return false;
            if (!std::isfinite(hp.logit_softcap) || hp.logit_softcap < 0.0f || !std::isfinite(hp.attn_softcap) ||
                hp.attn_softcap < 0.0f || !std::isfinite(hp.rope_base_swa) || hp.rope_base_swa <= 0.0f) {
                kr.fail("final_logit_softcapping / attn_logit_softcapping / rope.freq_base_swa out of range");
                return false;
            }
            break;
        }
    }
    return !kr.failed();
}

} // namespace gk::run
