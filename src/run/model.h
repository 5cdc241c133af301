// model.h - a GGUF language model for gk-run: hyperparameters, weights, tokenizer.
//
// Supported architectures (general.architecture):
//   llama   Llama 2/3, Mistral, TinyLlama, tinystories: RMS norm, rope on adjacent pairs
//           (optional rope_freqs factors), SwiGLU feed-forward, optional biases;
//   gemma3  Gemma 3: embeddings scaled by sqrt(n_embd), q/k RMS norms, norms after
//           attention and feed-forward, GELU(tanh) GLU, sliding-window layers with their
//           own rope base (every sliding_window_pattern-th layer is global), neox rope;
//   qwen3   Qwen 3 dense: q/k RMS norms, grouped-query attention, SwiGLU, neox rope;
//   qwen2   Qwen 2 / 2.5: llama with q/k/v biases and neox rope (optional output bias);
//   phi3    Phi-3 / 3.5: fused attn_qkv, fused ffn_up (gate | up), neox rope, q scaled
//           before attention, LongRoPE factors (rope_factors_long / _short) when present;
//   gemma2  Gemma 2: gemma3 without q/k norms, with attention logit softcapping, final
//           logit softcapping and the sliding window on every other layer.
// Any architecture takes a fused attn_qkv in place of attn_q/k/v, as llama.cpp does.
// Hyperparameters come from the `{arch}.*` keys (llama.cpp's names and defaults); each
// weight is checked against the shape its role needs before anything is computed.
//
// Weights are not copied: their tensors point into the memory-mapped file, which the
// Model keeps open.
#pragma once

#include "tokenizer.h"

#include "gk/gguf.h"
#include "gk/gk-backend.h"
#include "gk/gk.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gk::run {

enum class arch_kind { llama, gemma3, qwen3, qwen2, phi3, gemma2 };

/** "llama, gemma3, qwen3, qwen2, phi3, gemma2": the architectures this runtime implements. */
const char * supported_architectures();

/** What a forward pass needs to know about the network. Sizes are element counts. */
struct hparams {
    arch_kind   arch = arch_kind::llama;
    std::string arch_name;          // general.architecture as written
    int64_t     n_vocab   = 0;
    int64_t     n_embd    = 0;
    int64_t     n_layer   = 0;
    int64_t     n_head    = 0;
    int64_t     n_head_kv = 0;
    int64_t     n_ff      = 0;
    int64_t     head_dim_k = 0;     // attention.key_length, else n_embd / n_head
    int64_t     head_dim_v = 0;     // attention.value_length, else n_embd / n_head
    int64_t     n_rot      = 0;     // rope.dimension_count, else head_dim_k
    int64_t     n_ctx_train = 0;    // context_length
    int64_t     n_ctx_orig  = 0;    // rope.scaling.original_context_length, else n_ctx_train
    float       rms_eps     = 0.0f;

    int   rope_mode       = 0;      // GK_ROPE_TYPE_NORMAL (llama) or _NEOX
    float rope_base       = 10000.0f;
    float rope_freq_scale = 1.0f;   // 1 / rope.scaling.factor (linear scaling)
    float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor: scales rope's output (LongRoPE)
    float rope_base_swa   = 10000.0f;  // sliding-window layers (gemma3: own key; gemma2: rope_base)
    float rope_freq_scale_swa = 1.0f;  // sliding-window layers (gemma2: rope_freq_scale)

    int64_t           n_swa = 0;    // sliding window in tokens; 0 = none
    std::vector<bool> swa_layer;    // per layer: uses the sliding window

    float q_scale       = 1.0f;     // gemma3 multiplies q by this before attention
    float kq_scale      = 1.0f;     // scale of q.k inside attention
    float embd_scale    = 1.0f;     // gemma3: sqrt(n_embd)
    float logit_softcap = 0.0f;     // final_logit_softcapping; 0 = off
    float attn_softcap  = 0.0f;     // attn_logit_softcapping of the q.k scores (gemma2); 0 = off
    bool  qk_norm       = false;    // q/k RMS norms (gemma3, qwen3)
    bool  post_norms    = false;    // norms after attention and feed-forward (gemma3, gemma2)
    bool  ffn_fused_up  = false;    // ffn_up holds gate | up (2 n_ff rows) and there is no ffn_gate (phi3)
    enum gk_glu_op ffn_glu = GK_GLU_OP_SWIGLU;
    int64_t pooling_type  = -1;     // pooling_type as llama.cpp numbers it (0 none, 1 mean,
                                    // 2 cls, 3 last, 4 rank); -1 when the file has no such key

    int64_t n_embd_q() const { return head_dim_k * n_head; }
    int64_t n_embd_k_gqa() const { return head_dim_k * n_head_kv; }
    int64_t n_embd_v_gqa() const { return head_dim_v * n_head_kv; }
};

/** The weights of one block; optional ones are nullptr when absent. */
struct layer_weights {
    gk_tensor * attn_norm = nullptr;
    gk_tensor * wq = nullptr, * wk = nullptr, * wv = nullptr, * wo = nullptr;
    gk_tensor * bq = nullptr, * bk = nullptr, * bv = nullptr, * bo = nullptr;
    gk_tensor * wqkv = nullptr, * bqkv = nullptr;  // fused q | k | v rows, in place of wq, wk, wv
    gk_tensor * q_norm = nullptr, * k_norm = nullptr;
    gk_tensor * attn_post_norm = nullptr;
    gk_tensor * ffn_norm = nullptr;
    gk_tensor * ffn_gate = nullptr, * ffn_up = nullptr, * ffn_down = nullptr;
    gk_tensor * ffn_post_norm = nullptr;
};

struct model_weights {
    gk_tensor *                tok_embd    = nullptr;
    gk_tensor *                output_norm = nullptr;
    gk_tensor *                output      = nullptr;  // tok_embd when the file ties them
    gk_tensor *                output_b    = nullptr;  // qwen2's optional output bias
    gk_tensor *                rope_freqs  = nullptr;  // llama 3.1 frequency factors
    gk_tensor *                rope_long   = nullptr;  // phi3 LongRoPE factors, for contexts
    gk_tensor *                rope_short  = nullptr;  // above / up to n_ctx_orig
    std::vector<layer_weights> layers;
};

/** Progress of loading: bytes done out of bytes in all. */
using load_progress = std::function<void(uint64_t done, uint64_t total)>;

class Model {
public:
    /** Open `path`, read its hyperparameters and tokenizer, bind and check every weight,
     *  and touch the weight pages (reporting `progress`, may be empty). Returns nullptr
     *  and one line in `*error` on a missing or unreadable file, an unsupported
     *  architecture, a missing key or tensor, or a tensor whose shape does not fit. */
    static std::unique_ptr<Model> load(const std::string & path, const load_progress & progress, std::string * error);

    /** The same for a file already open: `gguf` is owned by the Model from here on (freed
     *  on failure too); `name` (the path) begins the messages. Also refused: metadata the
     *  tensors contradict (blocks past block_count), a weight that gk's matrix product or
     *  row lookup cannot read (an f64 or integer matrix), naming the file and the tensor. */
    static std::unique_ptr<Model> load(gk_gguf * gguf, const std::string & name, const load_progress & progress,
                                       std::string * error);

    ~Model();
    Model(const Model &) = delete;
    Model & operator=(const Model &) = delete;

    const hparams &       hp() const { return hp_; }
    const model_weights & weights() const { return w_; }
    const Tokenizer &     tokenizer() const { return *tok_; }
    const gk_gguf *       gguf() const { return gguf_; }
    /** Bytes of all weight tensors. */
    uint64_t              weight_bytes() const { return weight_bytes_; }
    /** What loading accepted but found wrong (the tokenizer's warnings, tensors the
     *  architecture does not use), one line each. */
    const std::vector<std::string> & warnings() const { return warnings_; }

    /** Put the weights of the last `n_gpu_layers` blocks (all when negative or above
     *  n_layer) in the memory of device `dev`, one buffer per block, as llama.cpp's -ngl
     *  counts them; when n_gpu_layers is negative or above n_layer, the output layer too
     *  (output_norm and output; an output tied to tok_embd gets a copy of its own, the
     *  embeddings stay in host memory). A scheduler then computes their matrix products
     *  on the device (gk-sched.h, rule 2). Returns the number of blocks placed (0 for
     *  n_gpu_layers 0); -1 and a message naming the block and the device when a buffer
     *  cannot be allocated (more than the device's memory) or written - the blocks
     *  placed before stay on the device, so a caller should give up the model. Call it
     *  once, before any Session is made. */
    int64_t offload(gk_backend_dev_t dev, int64_t n_gpu_layers, std::string * error);
    /** Bytes of weights placed on a device by offload(). */
    uint64_t device_bytes() const { return device_bytes_; }
    /** The blocks offload() placed (the last ones) and the buffer type of their device
     *  (nullptr before any): where a session keeps those layers' KV cache. */
    int64_t                  device_layers() const { return device_layers_; }
    gk_backend_buffer_type_t device_buffer_type() const { return device_buft_; }

private:
    Model() = default;

    gk_gguf *                  gguf_ = nullptr;
    gk_context *               ctx_  = nullptr;  // tensor structs of the weights (no data)
    hparams                    hp_;
    model_weights              w_;
    std::unique_ptr<Tokenizer> tok_;
    uint64_t                   weight_bytes_ = 0;
    std::vector<std::string>   warnings_;
    gk_context *                     offload_ctx_ = nullptr;  // the output's copy when tied
    std::vector<gk_backend_buffer_t> device_buffers_;        // offload()'s, one per block
    uint64_t                         device_bytes_ = 0;
    int64_t                          device_layers_ = 0;
    gk_backend_buffer_type_t         device_buft_   = nullptr;

    friend class model_loader;
};

/** Read the hyperparameters of `gguf` (n_vocab from `n_vocab`). false and a message
 *  naming the key when one is missing, mistyped or out of range. */
bool read_hparams(const gk_gguf * gguf, int64_t n_vocab, hparams & hp, std::string * error);

} // namespace gk::run
