// kv_cache.h - the key/value cache of a session: per layer one K and one V matrix of
// n_ctx rows (cell i holds position i), written by set_rows and read through views.
#pragma once

#include "model.h"

#include "gk/gk-backend.h"

#include <memory>
#include <string>
#include <vector>

namespace gk::run {

/** The KV cache types gk-run takes, llama.cpp's list for --cache-type-k/-v: "f32, f16,
 *  bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1". */
const char * kv_cache_type_names();

/** True when `type` is one of kv_cache_type_names(). */
bool kv_cache_type_ok(enum gk_type type);

class KvCache {
public:
    /** Cache for `n_ctx` positions of every layer of `hp`, with K and V stored as
     *  type_k / type_v (kv_cache_type_ok). A block type needs head sizes that are a
     *  multiple of its block size (32), as in llama.cpp. nullptr and a message naming the
     *  type when a type is not a cache type or does not fit the heads, or when out of
     *  memory. The cache of the last `n_device_layers` layers (0 to n_layer) is in memory
     *  of `device_buft` (the layers whose weights -ngl put on a device: a scheduler then
     *  writes and reads their cells there), the rest in host memory; a device buffer that
     *  cannot be allocated is an error naming the buffer type. */
    static std::unique_ptr<KvCache> create(const hparams & hp, int64_t n_ctx, enum gk_type type_k, enum gk_type type_v,
                                           std::string * error, gk_backend_buffer_type_t device_buft = nullptr,
                                           int64_t n_device_layers = 0);
    /** Whether device `dev` can write a cache of `type`: set_rows of f32 rows of `row`
     *  elements at I32 cells, as store_k / store_v build it. A cache the device cannot
     *  write cannot live in its memory (no other backend can write there). */
    static bool device_can_store(gk_backend_dev_t dev, enum gk_type type, int64_t row);

    ~KvCache();
    KvCache(const KvCache &) = delete;
    KvCache & operator=(const KvCache &) = delete;

    int64_t n_ctx() const { return n_ctx_; }
    size_t  bytes() const;
    /** Bytes of it in the device's memory (create's device_buft; 0 without). */
    size_t device_bytes() const;

    /** Nodes that write k_cur [head_dim_k, n_head_kv, T] and v_cur [head_dim_v, n_head_kv, T]
     *  of layer `il` into the cells `cells` (I32 [T]). Both must be expanded into the graph
     *  before the attention that reads them. nullptr on a builder error (in ctx). */
    gk_tensor * store_k(gk_context * ctx, int64_t il, gk_tensor * k_cur, gk_tensor * cells) const;
    gk_tensor * store_v(gk_context * ctx, int64_t il, gk_tensor * v_cur, gk_tensor * cells) const;

    /** Views of cells [0, n_kv) of layer `il` as [head_dim, n_kv, n_head_kv]. */
    gk_tensor * view_k(gk_context * ctx, int64_t il, int64_t n_kv) const;
    gk_tensor * view_v(gk_context * ctx, int64_t il, int64_t n_kv) const;

private:
    KvCache() = default;
    gk_tensor * view(gk_context * ctx, gk_tensor * cache, int64_t head_dim, int64_t n_kv) const;

    int64_t                  n_ctx_     = 0;
    int64_t                  n_head_kv_ = 0;
    int64_t                  head_dim_k_ = 0, head_dim_v_ = 0;
    gk_context *                     ctx_[2] = {nullptr, nullptr};  // host layers', device layers'
    std::vector<gk_backend_buffer_t> buffers_;                      // host layers' (if any), device layers' (if any)
    gk_backend_buffer_t              device_buffer_ = nullptr;      // the latter
    std::vector<gk_tensor *>         k_, v_;
};

} // namespace gk::run
