// model_offload.cpp - Model::offload: the last blocks' weights in a device's memory
// (llama.cpp's -ngl: blocks n_layer - n .. n_layer - 1, and the output layer when n
// exceeds n_layer). The token embeddings stay in host memory, as in llama.cpp: their
// lookup reads one row per token.
#include "model.h"

#include <algorithm>
#include <vector>

namespace gk::run {

namespace {

/// The weights of block `l` that the file has.
std::vector<gk_tensor *> block_tensors(const layer_weights & l) {
    std::vector<gk_tensor *> out;
    for (gk_tensor * t : {l.attn_norm, l.wq, l.wk, l.wv, l.wo, l.bq, l.bk, l.bv, l.bo, l.wqkv, l.bqkv, l.q_norm,
                          l.k_norm, l.attn_post_norm, l.ffn_norm, l.ffn_gate, l.ffn_up, l.ffn_down, l.ffn_post_norm}) {
        if (t) out.push_back(t);
    }
    return out;
}

/// Move `tensors` (their data in host memory) into one new buffer of `buft`: nullptr
/// and the backend's message when the buffer cannot be allocated or written.
gk_backend_buffer_t place(gk_backend_buffer_type_t buft, const std::vector<gk_tensor *> & tensors, std::string * why) {
    const size_t align = gk_backend_buft_get_alignment(buft);
    size_t       size  = 0;
    for (const gk_tensor * t : tensors) {
        size += (gk_backend_buft_get_alloc_size(buft, t) + align - 1) / align * align;
    }
    gk_backend_buffer_t buf = gk_backend_buft_alloc_buffer(buft, std::max<size_t>(size, 1));
    if (!buf) {
        *why = gk_backend_last_error();
        return nullptr;
    }
    gk_backend_buffer_set_usage(buf, GK_BACKEND_BUFFER_USAGE_WEIGHTS);
    auto * at = static_cast<char *>(gk_backend_buffer_get_base(buf));
    for (gk_tensor * t : tensors) {
        void * host = t->data;
        t->data     = nullptr;
        if (gk_backend_tensor_alloc(buf, t, at) != GK_STATUS_SUCCESS ||
            gk_backend_tensor_set(t, host, 0, gk_nbytes(t)) != GK_STATUS_SUCCESS) {
            *why      = gk_backend_last_error();
            t->data   = host;  // the tensor stays readable where it was
            t->buffer = nullptr;
            gk_backend_buffer_free(buf);
            return nullptr;
        }
        at += (gk_backend_buft_get_alloc_size(buft, t) + align - 1) / align * align;
    }
    return buf;
}

} // namespace

int64_t Model::offload(gk_backend_dev_t dev, int64_t n_gpu_layers, std::string * error) {
    const int64_t                  n_layer = hp_.n_layer;
    const bool                     output  = n_gpu_layers < 0 || n_gpu_layers > n_layer;
    const int64_t                  n       = n_gpu_layers < 0 ? n_layer : std::min(n_gpu_layers, n_layer);
    const gk_backend_buffer_type_t buft    = gk_backend_dev_buffer_type(dev);
    std::vector<std::pair<std::string, std::vector<gk_tensor *>>> groups;
    for (int64_t il = n_layer - n; il < n_layer; ++il) {
        groups.emplace_back("block " + std::to_string(il), block_tensors(w_.layers[static_cast<size_t>(il)]));
    }
    if (output) {
        if (w_.output == w_.tok_embd) {  // tied: the output layer gets a copy of the embeddings
            gk_init_params p{};
            p.mem_size       = gk_tensor_overhead();
            p.no_alloc       = true;
            offload_ctx_     = gk_init(p);
            gk_tensor * copy = offload_ctx_ ? gk_new_tensor(offload_ctx_, w_.tok_embd->type, 2, w_.tok_embd->ne)
                                            : nullptr;
            if (!copy) {
                if (error) *error = "out of memory for the output layer's tensor";
                return -1;
            }
            gk_set_name(copy, "output.weight");
            copy->data = w_.tok_embd->data;
            w_.output  = copy;
        }
        std::vector<gk_tensor *> out;
        for (gk_tensor * t : {w_.output_norm, w_.output, w_.output_b}) {
            if (t) out.push_back(t);
        }
        groups.emplace_back("the output layer", out);
    }
    for (const auto & [what, tensors] : groups) {
        std::string         why;
        gk_backend_buffer_t buf = place(buft, tensors, &why);
        if (!buf) {
            if (error) *error = "cannot put " + what + "'s weights on " + gk_backend_dev_name(dev) + ": " + why;
            return -1;
        }
        device_buffers_.push_back(buf);
        device_bytes_ += gk_backend_buffer_get_size(buf);
    }
    device_layers_ = n;
    device_buft_   = n > 0 ? buft : nullptr;
    return n;
}

} // namespace gk::run
