// plan.cpp - llama-quantize's per-tensor type rules (plan.h), written from the
// behaviour of llama.cpp's llama_tensor_get_type: a tensor's role is found from its
// name, and each role has its own short list of mixture-dependent exceptions to the
// mixture's default type.
#include "plan.h"

#include "quant/codec.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>

namespace gk_quantize {
namespace {

bool has(const std::string & s, const char * part) { return s.find(part) != std::string::npos; }

bool ends_with(const std::string & s, const std::string & tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

template <typename... T>
bool one_of(ftype f, T... ids) {
    return ((f == ids) || ...);
}

// llama.cpp's "use more bits" layers: the first and last eighth, and every third between.
bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// "blk.N." -> N; -1 without a layer number.
int64_t layer_of(const std::string & name) {
    long long n = -1;
    return std::sscanf(name.c_str(), "blk.%lld.", &n) == 1 ? n : -1;
}

// Why llama-quantize would leave a tensor as stored; nullptr when it re-encodes it.
const char * kept_because(const tensor_desc & t, bool leave_output) {
    static const char * const k_small[] = {
        "ffn_gate_inp.weight",
        "altup",
        "laurel",
        "per_layer_model_proj",
        "ssm_conv1d.weight",
        "shortconv.conv.weight",
        "time_mix_first.weight",
        "time_mix_w0.weight",
        "time_mix_w1.weight",
        "time_mix_w2.weight",
        "time_mix_v0.weight",
        "time_mix_v1.weight",
        "time_mix_v2.weight",
        "time_mix_a0.weight",
        "time_mix_a1.weight",
        "time_mix_a2.weight",
        "time_mix_g1.weight",
        "time_mix_g2.weight",
        "time_mix_decay_w1.weight",
        "time_mix_decay_w2.weight",
        "time_mix_lerp_fused.weight",
        "attn_rel_b.weight",
    };
    if (t.type == GK_TYPE_I8 || t.type == GK_TYPE_I16 || t.type == GK_TYPE_I32 || t.type == GK_TYPE_I64) {
        return "integer";
    }
    if (!ends_with(t.name, "weight")) {
        return "not a weight";
    }
    if (t.n_dims < 2) {
        return "1-D";
    }
    if (has(t.name, "_norm.weight")) {
        return "a norm";
    }
    if (leave_output && t.name == "output.weight") {
        return "--leave-output-tensor";
    }
    if (t.name == "position_embd.weight" || t.name == "token_types.weight") {
        return "an embedding llama-quantize keeps";
    }
    for (const char * part : k_small) {
        if (has(t.name, part)) {
            return "a small tensor llama-quantize keeps";
        }
    }
    return nullptr;
}

// The running counts of llama_tensor_get_type.
struct counters {
    int64_t n_attn_v = 0, i_attn_v = 0, i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
};

class rules {
public:
    rules(const settings & s, const model_info & m, int64_t n_attn_v) : s_(s), m_(m) { c_.n_attn_v = n_attn_v; }

    // The type of a re-encoded matrix before any fallback.
    gk_type choose(const tensor_desc & t) {
        const std::string & name = t.name;
        const ftype         f    = s_.id;
        gk_type             ty   = s_.base;
        if (name == "output.weight" || (!m_.has_output && name == "token_embd.weight")) {
            return output(t);
        }
        if (f == FTYPE_MXFP4_MOE) {
            return t.ne[2] > 1 ? GK_TYPE_MXFP4 : GK_TYPE_Q8_0;
        }
        if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") {
            return token_embd();
        }
        if (one_of(f, FTYPE_IQ2_XXS, FTYPE_IQ2_XS, FTYPE_IQ1_S, FTYPE_IQ2_S, FTYPE_IQ2_M, FTYPE_IQ1_M)) {
            return very_low_bit(name, ty);
        }
        if (has(name, "attn_v.weight")) {
            return attn_v(ty);
        }
        if (has(name, "attn_k.weight")) {
            return m_.n_expert == 8     ? GK_TYPE_Q8_0
                   : f == FTYPE_IQ3_XS  ? GK_TYPE_IQ3_XXS
                   : f == FTYPE_IQ3_XXS ? GK_TYPE_IQ2_S
                                        : ty;
        }
        if (has(name, "attn_q.weight")) {
            return f == FTYPE_IQ3_XS ? GK_TYPE_IQ3_XXS : f == FTYPE_IQ3_XXS ? GK_TYPE_IQ2_S : ty;
        }
        if (has(name, "ffn_down")) {
            return ffn_down(name, ty);
        }
        if (has(name, "attn_output.weight")) {
            return attn_output(ty);
        }
        if (has(name, "attn_qkv.weight")) {
            if (one_of(f, FTYPE_Q3_K_M, FTYPE_Q3_K_L, FTYPE_IQ3_M)) return GK_TYPE_Q4_K;
            if (f == FTYPE_Q4_K_M) return GK_TYPE_Q5_K;
            if (f == FTYPE_Q5_K_M) return GK_TYPE_Q6_K;
            return ty;
        }
        if (has(name, "ffn_gate") || has(name, "ffn_up")) {
            int64_t &     counter = has(name, "ffn_gate") ? c_.i_ffn_gate : c_.i_ffn_up;
            const int64_t i       = layer(name, counter++);
            const int64_t n       = m_.n_layer;
            return f == FTYPE_IQ3_XS && i >= n / 8 && i < 7 * n / 8 ? GK_TYPE_IQ3_XXS : ty;
        }
        return ty;
    }

private:
    bool falcon() const { return m_.arch == "falcon"; }

    // The layer of a per-layer tensor: its place in the visit for a dense model, the
    // number in its name for a mixture of experts (whose tensors need not come in order).
    int64_t layer(const std::string & name, int64_t counter) const {
        if (m_.n_expert <= 1) {
            return counter;
        }
        const int64_t i = layer_of(name);
        if (i < 0 || i >= m_.n_layer) {
            throw std::invalid_argument(name + ": no layer number in [0, " + std::to_string(m_.n_layer) +
                                        ") in the name of an expert model's tensor");
        }
        return i;
    }

    gk_type output(const tensor_desc & t) const {
        if (s_.output_type != GK_TYPE_COUNT) {
            return s_.output_type;
        }
        const ftype f = s_.id;
        if (f == FTYPE_MXFP4_MOE || falcon() || t.ne[0] % gk_blck_size(s_.base) != 0) {
            return GK_TYPE_Q8_0;
        }
        if (one_of(f, FTYPE_IQ2_XXS, FTYPE_IQ2_XS, FTYPE_IQ3_XXS, FTYPE_IQ1_S, FTYPE_IQ2_S, FTYPE_IQ2_M, FTYPE_IQ1_M)) {
            return GK_TYPE_Q5_K;
        }
        return s_.base == GK_TYPE_Q8_0 ? GK_TYPE_Q8_0 : GK_TYPE_Q6_K;
    }

    gk_type token_embd() const {
        if (s_.token_embd_type != GK_TYPE_COUNT) {
            return s_.token_embd_type;
        }
        const ftype f = s_.id;
        if (one_of(f, FTYPE_IQ2_XXS, FTYPE_IQ2_XS, FTYPE_IQ1_S, FTYPE_IQ1_M)) return GK_TYPE_Q2_K;
        if (one_of(f, FTYPE_IQ2_S, FTYPE_IQ2_M, FTYPE_IQ3_XXS)) return GK_TYPE_IQ3_S;
        if (one_of(f, FTYPE_TQ1_0, FTYPE_TQ2_0)) return GK_TYPE_Q4_K;
        return s_.base;
    }

    // IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M.
    gk_type very_low_bit(const std::string & name, gk_type ty) {
        const ftype   f       = s_.id;
        const bool    iq2_s_m = one_of(f, FTYPE_IQ2_S, FTYPE_IQ2_M);
        const gk_type bigger  = iq2_s_m ? GK_TYPE_IQ3_S : GK_TYPE_Q2_K;
        if (has(name, "attn_v.weight")) {
            ++c_.i_attn_v;
            return m_.n_gqa >= 4 || m_.n_expert >= 4 ? GK_TYPE_Q4_K : bigger;
        }
        if (m_.n_expert == 8 && has(name, "attn_k.weight")) {
            return GK_TYPE_Q4_K;
        }
        if (has(name, "ffn_down")) {
            return c_.i_ffn_down++ < m_.n_layer / 8 ? bigger : ty;
        }
        if (has(name, "attn_output.weight")) {
            if (m_.n_expert == 8) return GK_TYPE_Q5_K;
            if (one_of(f, FTYPE_IQ1_S, FTYPE_IQ1_M)) return GK_TYPE_IQ2_XXS;
            if (iq2_s_m) return GK_TYPE_IQ3_S;
        }
        return ty;
    }

    gk_type attn_v(gk_type ty) {
        const ftype   f    = s_.id;
        const bool    gqa4 = m_.n_gqa >= 4;
        const int64_t i    = c_.i_attn_v++;
        if (f == FTYPE_Q2_K) {
            ty = gqa4 ? GK_TYPE_Q4_K : GK_TYPE_Q3_K;
        } else if (f == FTYPE_Q2_K_S && gqa4) {
            ty = GK_TYPE_Q4_K;
        } else if (f == FTYPE_IQ3_XXS) {
            ty = gqa4 ? GK_TYPE_Q4_K : s_.has_imatrix ? GK_TYPE_IQ3_XXS : GK_TYPE_IQ3_S;
        } else if (one_of(f, FTYPE_IQ3_XS, FTYPE_IQ3_S) && gqa4) {
            ty = GK_TYPE_Q4_K;
        } else if (f == FTYPE_IQ3_M) {
            ty = GK_TYPE_Q4_K;
        } else if (f == FTYPE_Q3_K_M) {
            ty = i < 2 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K;
        } else if (f == FTYPE_Q3_K_L) {
            ty = GK_TYPE_Q5_K;
        } else if (one_of(f, FTYPE_IQ4_NL, FTYPE_IQ4_XS) && gqa4) {
            ty = GK_TYPE_Q5_K;
        } else if (one_of(f, FTYPE_Q4_K_M, FTYPE_Q5_K_M) && use_more_bits(i, c_.n_attn_v)) {
            ty = GK_TYPE_Q6_K;
        } else if (f == FTYPE_Q4_K_S && i < 4) {
            ty = GK_TYPE_Q5_K;
        }
        if (m_.is_70b && (ty == GK_TYPE_Q3_K || ty == GK_TYPE_Q4_K)) {
            ty = GK_TYPE_Q5_K;  // 8 heads share attn_v: more bits cost little
        }
        return m_.n_expert == 8 ? GK_TYPE_Q8_0 : ty;
    }

    gk_type ffn_down(const std::string & name, gk_type ty) {
        const ftype   f    = s_.id;
        const int64_t i    = layer(name, c_.i_ffn_down++);
        const int64_t n    = m_.n_layer;
        const bool    more = use_more_bits(i, n);
        if (f == FTYPE_Q2_K) return GK_TYPE_Q3_K;
        if (f == FTYPE_Q2_K_S) return i < n / 8 ? GK_TYPE_Q4_K : ty;
        if (f == FTYPE_IQ3_XXS && !s_.has_imatrix) return i < n / 8 ? GK_TYPE_Q4_K : GK_TYPE_Q3_K;
        if (f == FTYPE_Q3_K_M) {
            return i < n / 16 ? GK_TYPE_Q5_K : !falcon() || more ? GK_TYPE_Q4_K : GK_TYPE_Q3_K;
        }
        if (f == FTYPE_IQ3_M && (i < n / 8 || (m_.n_expert == 8 && more))) return GK_TYPE_Q4_K;
        if (f == FTYPE_Q3_K_L) return falcon() ? GK_TYPE_Q4_K : GK_TYPE_Q5_K;
        if (f == FTYPE_Q4_K_M) {
            if (falcon()) return i < n / 16 ? GK_TYPE_Q6_K : more ? GK_TYPE_Q5_K : GK_TYPE_Q4_K;
            return more ? GK_TYPE_Q6_K : ty;
        }
        if (i < n / 8 && one_of(f, FTYPE_IQ4_NL, FTYPE_IQ4_XS) && !s_.has_imatrix) return GK_TYPE_Q5_K;
        if (f == FTYPE_Q5_K_M && more) return GK_TYPE_Q6_K;
        if (f == FTYPE_Q4_K_S && !falcon() && i < n / 8) return GK_TYPE_Q5_K;
        if (one_of(f, FTYPE_Q4_0, FTYPE_Q5_0) && s_.has_imatrix && i < n / 8) {
            return f == FTYPE_Q4_0 ? GK_TYPE_Q4_1 : GK_TYPE_Q5_1;
        }
        return ty;
    }

    gk_type attn_output(gk_type ty) const {
        const ftype f = s_.id;
        if (falcon()) {
            return f == FTYPE_Q3_K_L ? GK_TYPE_Q4_K : ty;
        }
        if (m_.n_expert == 8) {
            return one_of(f, FTYPE_Q2_K, FTYPE_IQ3_XS, FTYPE_IQ3_XXS, FTYPE_Q3_K_S, FTYPE_Q3_K_M, FTYPE_IQ4_NL,
                          FTYPE_Q4_K_S, FTYPE_Q4_K_M, FTYPE_IQ3_S, FTYPE_IQ3_M, FTYPE_IQ4_XS)
                       ? GK_TYPE_Q5_K
                       : ty;
        }
        switch (f) {
        case FTYPE_Q2_K: return GK_TYPE_Q3_K;
        case FTYPE_IQ3_XXS: return GK_TYPE_IQ3_S;
        case FTYPE_Q3_K_M:
        case FTYPE_IQ3_M: return GK_TYPE_Q4_K;
        case FTYPE_Q3_K_L: return GK_TYPE_Q5_K;
        default: return ty;
        }
    }

    const settings &   s_;
    const model_info & m_;
    counters           c_;
};

// llama.cpp's type for a row its first choice cannot hold; f16 where it has none.
gk_type shorter_block(gk_type t) {
    switch (t) {
    case GK_TYPE_TQ1_0:
    case GK_TYPE_TQ2_0: return GK_TYPE_Q4_0;
    case GK_TYPE_IQ2_XXS:
    case GK_TYPE_IQ2_XS:
    case GK_TYPE_IQ2_S:
    case GK_TYPE_IQ3_XXS:
    case GK_TYPE_IQ3_S:
    case GK_TYPE_IQ1_S:
    case GK_TYPE_IQ1_M:
    case GK_TYPE_Q2_K:
    case GK_TYPE_Q3_K:
    case GK_TYPE_IQ4_XS: return GK_TYPE_IQ4_NL;
    case GK_TYPE_Q4_K: return GK_TYPE_Q5_0;
    case GK_TYPE_Q5_K: return GK_TYPE_Q5_1;
    case GK_TYPE_Q6_K: return GK_TYPE_Q8_0;
    case GK_TYPE_NVFP4: return GK_TYPE_MXFP4;
    default: return GK_TYPE_F16;
    }
}

std::string blocks_of(gk_type t) {
    return std::string(gk_type_name(t)) + " blocks of " + std::to_string(gk_blck_size(t));
}

// `wanted`, or its fallback when a row of `ne0` is not a whole number of its blocks.
gk_type fit(gk_type wanted, int64_t ne0, std::string & why) {
    if (gk_row_len_ok(wanted, ne0)) {
        return wanted;
    }
    why = "wanted " + std::string(gk_type_name(wanted)) + ": rows of " + std::to_string(ne0) + " are not whole " +
          blocks_of(wanted);
    const gk_type next = shorter_block(wanted);
    if (next != GK_TYPE_F16 && gk_row_len_ok(next, ne0)) {
        why += ": " + std::string(gk_type_name(next)) + " instead";
        return next;
    }
    if (next != GK_TYPE_F16) {
        why += " nor " + blocks_of(next);
    }
    why += ": f16 instead";
    return GK_TYPE_F16;
}

// An unsigned or non-negative integer of `type` at `p` (unaligned); false for another type.
bool integer_at(gk_gguf_type type, const void * p, int64_t & out) {
    const auto get = [p](auto x) {
        std::memcpy(&x, p, sizeof x);
        return x;
    };
    switch (type) {
    case GK_GGUF_TYPE_UINT8: out = get(uint8_t{}); return true;
    case GK_GGUF_TYPE_UINT16: out = get(uint16_t{}); return true;
    case GK_GGUF_TYPE_UINT32: out = get(uint32_t{}); return true;
    case GK_GGUF_TYPE_INT8: out = get(int8_t{}); return out >= 0;
    case GK_GGUF_TYPE_INT16: out = get(int16_t{}); return out >= 0;
    case GK_GGUF_TYPE_INT32: out = get(int32_t{}); return out >= 0;
    case GK_GGUF_TYPE_INT64: out = get(int64_t{}); return out >= 0;
    case GK_GGUF_TYPE_UINT64: {
        const uint64_t u = get(uint64_t{});
        out              = static_cast<int64_t>(u);
        return u <= static_cast<uint64_t>(INT64_MAX);
    }
    default: return false;
    }
}

// The integer `key` (layer 0's when it is a per-layer array); false when absent. Throws
// std::invalid_argument naming the key when it is not a non-negative integer.
bool find_int(const gk_gguf * ctx, const std::string & key, int64_t & out) {
    const gk_gguf_value * v = gk_gguf_get(ctx, key.c_str());
    if (!v) {
        return false;
    }
    bool ok = false;
    if (gk_gguf_value_type(v) == GK_GGUF_TYPE_ARRAY) {
        if (gk_gguf_array_len(v) == 0) {
            throw std::invalid_argument(key + " is an empty array");
        }
        ok = integer_at(gk_gguf_array_type(v), gk_gguf_array_data(v), out);
    } else {
        ok = integer_at(gk_gguf_value_type(v), gk_gguf_value_data(v), out);
    }
    if (!ok) {
        throw std::invalid_argument(key + " is not a non-negative integer");
    }
    return true;
}

}  // namespace

model_info read_model_info(const gk_gguf * ctx) {
    model_info            m;
    const gk_gguf_value * a   = gk_gguf_get(ctx, "general.architecture");
    size_t                len = 0;
    const char *          s = a && gk_gguf_value_type(a) == GK_GGUF_TYPE_STRING ? gk_gguf_value_str(a, &len) : nullptr;
    if (!s) {
        throw std::invalid_argument(a ? "general.architecture is not a string" : "no general.architecture");
    }
    m.arch = std::string(s, len);
    if (!find_int(ctx, m.arch + ".block_count", m.n_layer)) {
        throw std::invalid_argument("no " + m.arch + ".block_count");
    }
    int64_t n_head = 0, n_head_kv = 0;
    find_int(ctx, m.arch + ".attention.head_count", n_head);
    if (!find_int(ctx, m.arch + ".attention.head_count_kv", n_head_kv)) {
        n_head_kv = n_head;  // llama.cpp's default: no grouping
    }
    m.n_gqa = n_head > 0 && n_head_kv > 0 ? n_head / n_head_kv : 0;
    find_int(ctx, m.arch + ".expert_count", m.n_expert);
    m.has_output = gk_gguf_find_tensor(ctx, "output.weight") >= 0;
    m.is_70b     = m.arch == "llama" && m.n_layer == 80 && n_head != n_head_kv;
    return m;
}

std::vector<decision> plan(const settings & s, const model_info & m, const std::vector<tensor_desc> & tensors) {
    std::vector<size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const int64_t la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
        return la != lb ? la < lb : tensors[a].name < tensors[b].name;
    });
    int64_t n_attn_v = 0;
    for (const tensor_desc & t : tensors) {
        n_attn_v += has(t.name, "attn_v.weight") || has(t.name, "attn_qkv.weight") || has(t.name, "attn_kv_b.weight");
    }
    rules                 r(s, m, n_attn_v);
    std::vector<decision> out(tensors.size());
    for (size_t k : order) {
        const tensor_desc & t = tensors[k];
        decision &          d = out[k];
        d.wanted = d.type = t.type;
        if (s.copy) {
            d.why = "COPY";
            continue;
        }
        if (const char * why = kept_because(t, s.leave_output)) {
            d.why = std::string("kept: ") + why;
            continue;
        }
        gk_type ty = s.base;
        if (!s.pure && gk_is_quantized(s.base)) {
            ty = r.choose(t);
        }
        if (s.token_embd_type != GK_TYPE_COUNT && t.name == "token_embd.weight") {
            ty = s.token_embd_type;
        }
        if (s.output_type != GK_TYPE_COUNT && t.name == "output.weight") {
            ty = s.output_type;
        }
        d.matrix   = true;
        d.wanted   = ty;
        d.type     = fit(ty, t.ne[0], d.why);
        d.quantize = d.type != t.type;
        if (!d.quantize && d.why.empty()) {
            d.why = "already " + std::string(gk_type_name(t.type));
        }
    }
    return out;
}

namespace {

// The one table of what llama-quantize refuses to write without importance weights
// (llama-quant.cpp's check before each tensor): needs_imatrix, --help and the refusal read it.
constexpr imatrix_need k_imatrix_needs[] = {
    {GK_TYPE_IQ2_XXS, -1, {nullptr, nullptr}},
    {GK_TYPE_IQ2_XS, -1, {nullptr, nullptr}},
    {GK_TYPE_IQ2_S, -1, {nullptr, nullptr}},
    {GK_TYPE_IQ1_S, -1, {nullptr, nullptr}},
    {GK_TYPE_IQ1_M, -1, {"token_embd.weight", "output.weight"}},
    {GK_TYPE_Q2_K, FTYPE_Q2_K_S, {"token_embd.weight", nullptr}},
};

}  // namespace

std::span<const imatrix_need> imatrix_needs() { return k_imatrix_needs; }

bool needs_imatrix(gk_type type, const std::string & name, ftype id) {
    for (const imatrix_need & n : k_imatrix_needs) {
        if (n.type != type || (n.only_in >= 0 && n.only_in != id)) {
            continue;
        }
        for (const char * x : n.except) {
            if (x && name == x) {
                return false;
            }
        }
        return true;
    }
    return false;
}

std::string imatrix_needs_text() {
    std::string text;
    for (const imatrix_need & n : k_imatrix_needs) {
        text += (text.empty() ? "" : ", ") + std::string(gk_type_name(n.type));
        if (n.only_in >= 0) {
            text += std::string(" under ") + file_type_name(n.only_in);
        }
        std::string but;
        for (const char * x : n.except) {
            if (x) {
                but += (but.empty() ? "" : ", ") + std::string(x, std::strlen(x) - std::strlen(".weight"));
            }
        }
        if (!but.empty()) {
            text += " (but " + but + ")";
        }
    }
    return text;
}

bool mixture_needs_imatrix(const mixture & m) {
    if (m.copy || !gk_is_quantized(m.base)) {
        return false;
    }
    // A dense llama of 8 layers whose rows are whole blocks of every type (no fallback).
    const int64_t            embd = 4096, ff = 11008, vocab = 32000;
    std::vector<tensor_desc> t;
    const auto               add = [&](const std::string & name, int64_t ne0, int64_t ne1) {
        tensor_desc d;
        d.name   = name;
        d.n_dims = 2;
        d.ne[0]  = ne0;
        d.ne[1]  = ne1;
        t.push_back(d);
    };
    add("token_embd.weight", embd, vocab);
    add("output.weight", embd, vocab);
    model_info info;
    info.arch       = "llama";
    info.n_layer    = 8;
    info.has_output = true;
    for (int64_t l = 0; l < info.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        for (const char * x : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
            add(b + x + ".weight", embd, embd);
        }
        add(b + "ffn_gate.weight", embd, ff);
        add(b + "ffn_up.weight", embd, ff);
        add(b + "ffn_down.weight", ff, embd);
    }
    settings s;
    s.id                          = m.id;
    s.base                        = m.base;
    const std::vector<decision> d = plan(s, info, t);
    for (size_t k = 0; k < t.size(); ++k) {
        if (d[k].quantize && needs_imatrix(d[k].type, t[k].name, m.id)) {
            return true;
        }
    }
    return false;
}

int recorded_file_type(const settings & s, const std::vector<decision> & d) {
    if (s.copy) {
        return -1;
    }
    std::map<gk_type, size_t> by_type;
    for (const decision & x : d) {
        if (x.matrix) {
            ++by_type[x.type];
        }
    }
    if (by_type.empty() || by_type.count(s.base)) {
        return s.id;
    }
    const auto most = std::max_element(by_type.begin(), by_type.end(),
                                       [](const auto & a, const auto & b) { return a.second < b.second; });
    const int  f    = file_type_of(most->first);
    return f >= 0 ? f : s.id;
}

bool is_weight_type(gk_type type) {
    switch (type) {
    case GK_TYPE_Q8_1:
    case GK_TYPE_Q8_K:
    case GK_TYPE_I8:
    case GK_TYPE_I16:
    case GK_TYPE_I32:
    case GK_TYPE_I64:
    case GK_TYPE_F64: return false;
    default: return gk_type_is_valid(type);
    }
}

bool has_encoder(gk_type type) {
    const gk::quant::type_traits * tt = gk::quant::get_type_traits(type);
    return tt && tt->from_float;
}

}  // namespace gk_quantize
