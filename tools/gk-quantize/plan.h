// plan.h - which tensors gk-quantize re-encodes and to which type: llama-quantize's
// per-tensor rules (llama.cpp src/llama-quant.cpp, llama_tensor_get_type and the
// tensor selection of llama_model_quantize_impl), restated, and the fallback when a
// row is not a whole number of blocks.
#pragma once

#include "mixture.h"

#include "gk/gguf.h"
#include "gk/gk-type.h"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gk_quantize {

/// What the rules read from the model's metadata.
struct model_info {
    std::string arch;                // general.architecture
    int64_t     n_layer    = 0;      // {arch}.block_count
    int64_t     n_gqa      = 0;      // head_count / head_count_kv of layer 0; 0 when either is 0 or missing
    int64_t     n_expert   = 0;      // {arch}.expert_count; 0 when missing
    bool        has_output = false;  // output.weight exists (else token_embd doubles as the output)
    bool        is_70b     = false;  // llama.cpp's LLM_TYPE_70B: llama, 80 layers, n_head != n_head_kv
};

/// The rules' view of `ctx`. Throws std::invalid_argument naming the key when block_count
/// is missing or not an integer.
model_info read_model_info(const gk_gguf * ctx);

struct settings {
    ftype   id              = FTYPE_Q8_0;     // the mixture
    gk_type base            = GK_TYPE_Q8_0;   // its default matrix type
    bool    copy            = false;          // COPY: nothing re-encoded
    bool    pure            = false;          // --pure: every matrix `base` (no per-tensor rules)
    bool    has_imatrix     = false;          // --imatrix given
    bool    leave_output    = false;          // --leave-output-tensor: output.weight copied as stored
    gk_type output_type     = GK_TYPE_COUNT;  // --output-tensor-type; GK_TYPE_COUNT: the rules decide
    gk_type token_embd_type = GK_TYPE_COUNT;  // --token-embedding-type; likewise
};

/// One tensor as the rules see it.
struct tensor_desc {
    std::string name;
    uint32_t    n_dims = 0;
    int64_t     ne[4]  = {1, 1, 1, 1};
    gk_type     type   = GK_TYPE_F32;  // as stored
};

struct decision {
    bool        matrix   = false;        // chosen by the rules (not a norm, 1-D or kept tensor)
    bool        quantize = false;        // re-encoded to `type` (else copied as stored, type == stored type)
    gk_type     wanted   = GK_TYPE_F32;  // what the rules chose, before the fallback
    gk_type     type     = GK_TYPE_F32;  // what is written
    std::string why;                     // why not re-encoded, or why `type` differs from `wanted`; "" otherwise
    bool        fallback() const { return matrix && type != wanted; }
};

/// The type of every tensor of `tensors` (result in the same order). The rules count
/// attn_v / ffn_down / ffn_gate / ffn_up tensors in llama.cpp's order (by layer number,
/// then name), as llama-quantize does. A matrix whose rows are not whole blocks of the
/// chosen type falls back as llama.cpp does (q4_K -> q5_0, q5_K -> q5_1, q6_K -> q8_0,
/// tq1_0/tq2_0 -> q4_0, the other low-bit and i-quant types -> iq4_nl), then to f16; a
/// type llama.cpp has no fallback for (q8_0 with rows of 172) goes to f16 where llama.cpp
/// stops. Throws std::invalid_argument when an expert tensor's name has no layer number.
std::vector<decision> plan(const settings & s, const model_info & m, const std::vector<tensor_desc> & tensors);

/// A type llama-quantize refuses to write without importance weights: in every mixture,
/// or only in `only_in` (>= 0), but for the tensors named in `except` (nullptr: none).
struct imatrix_need {
    gk_type      type;
    int          only_in;
    const char * except[2];
};

/// Every such type (iq2_xxs, iq2_xs, iq2_s, iq1_s; iq1_m but for token_embd and output;
/// q2_K in Q2_K_S but for token_embd), the one table of the rules below.
std::span<const imatrix_need> imatrix_needs();

/// True when llama-quantize refuses to write `type` for tensor `name` of mixture `id`
/// without importance weights (a row of imatrix_needs()).
bool needs_imatrix(gk_type type, const std::string & name, ftype id);

/// imatrix_needs() in words for --help: "iq2_xxs, ..., iq1_m (but token_embd, output), ...".
std::string imatrix_needs_text();

/// True when mixture `m` gives some matrix of a dense llama (rows of 4096, no fallback) a
/// type that needs importance weights (IQ3_XXS does, through its iq2_s attn_q/attn_k).
bool mixture_needs_imatrix(const mixture & m);

/// The file type to record (-1 for COPY, which keeps the input's): the mixture's, as
/// llama-quantize records it, when at least one matrix is written in the mixture's default
/// type; else (every matrix fell back or was overridden: a K- or IQ-type on rows that are
/// not multiples of 256) the file type of the type most matrices were written in.
int recorded_file_type(const settings & s, const std::vector<decision> & d);

/// True when `type` may be the type of a model's matrix: not an activation type (q8_1,
/// q8_K) and not an integer or f64 type.
bool is_weight_type(gk_type type);

/// True when the codec can encode `type`.
bool has_encoder(gk_type type);

}  // namespace gk_quantize
