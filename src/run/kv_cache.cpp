// kv_cache.cpp - see kv_cache.h.
#include "kv_cache.h"

#include "gk/gk-alloc.h"

#include <algorithm>
#include <iterator>

namespace gk::run {

namespace {

// llama.cpp's kv_cache_types (common/arg.cpp), in its order.
constexpr enum gk_type k_cache_types[] = {GK_TYPE_F32,  GK_TYPE_F16,    GK_TYPE_BF16, GK_TYPE_Q8_0, GK_TYPE_Q4_0,
                                          GK_TYPE_Q4_1, GK_TYPE_IQ4_NL, GK_TYPE_Q5_0, GK_TYPE_Q5_1};

/** Empty when `type` can hold the `which` (K or V) rows of `head_dim` elements, else why not. */
std::string cache_type_problem(enum gk_type type, const char * which, int64_t head_dim) {
    if (!kv_cache_type_ok(type)) {
        return std::string("KV cache type ") + gk_type_name(type) + " for " + which + " is not supported (use " +
               kv_cache_type_names() + ")";
    }
    const int64_t block = gk_blck_size(type);
    if (head_dim % block != 0) {
        return std::string("KV cache type ") + gk_type_name(type) + " for " + which + " needs a head size that is a " +
               "multiple of its block size " + std::to_string(block) + "; the model's " + which + " head size is " +
               std::to_string(head_dim);
    }
    return {};
}

} // namespace

const char * kv_cache_type_names() { return "f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"; }

bool kv_cache_type_ok(enum gk_type type) {
    return std::find(std::begin(k_cache_types), std::end(k_cache_types), type) != std::end(k_cache_types);
}

std::unique_ptr<KvCache> KvCache::create(const hparams & hp, int64_t n_ctx, enum gk_type type_k, enum gk_type type_v,
                                         std::string * error, gk_backend_buffer_type_t device_buft,
                                         int64_t n_device_layers) {
    for (const std::string & problem :
         {cache_type_problem(type_k, "K", hp.head_dim_k), cache_type_problem(type_v, "V", hp.head_dim_v)}) {
        if (!problem.empty()) {
            if (error) *error = problem;
            return nullptr;
        }
    }
    const int64_t first_device = device_buft ? hp.n_layer - std::clamp<int64_t>(n_device_layers, 0, hp.n_layer)
                                             : hp.n_layer;
    std::unique_ptr<KvCache> c(new KvCache());
    c->n_ctx_      = n_ctx;
    c->n_head_kv_  = hp.n_head_kv;
    c->head_dim_k_ = hp.head_dim_k;
    c->head_dim_v_ = hp.head_dim_v;
    gk_init_params ip{};
    ip.mem_size = static_cast<size_t>(2 * hp.n_layer + 4) * gk_tensor_overhead();
    ip.no_alloc = true;
    for (gk_context *& ctx : c->ctx_) {
        ctx = gk_init(ip);
        if (!ctx) {
            if (error) *error = "out of memory for the KV cache";
            return nullptr;
        }
    }
    for (int64_t il = 0; il < hp.n_layer; ++il) {
        gk_context * ctx = c->ctx_[il >= first_device ? 1 : 0];
        gk_tensor *  k   = gk_new_tensor_2d(ctx, type_k, hp.n_embd_k_gqa(), n_ctx);
        gk_tensor *  v   = gk_new_tensor_2d(ctx, type_v, hp.n_embd_v_gqa(), n_ctx);
        if (!k || !v) {
            if (error) *error = std::string("KV cache: ") + gk_last_error(ctx);
            return nullptr;
        }
        gk_format_name(k, "cache_k_l%lld", static_cast<long long>(il));
        gk_format_name(v, "cache_v_l%lld", static_cast<long long>(il));
        c->k_.push_back(k);
        c->v_.push_back(v);
    }
    const gk_backend_buffer_type_t bufts[2] = {gk_backend_cpu_buffer_type(), device_buft};
    for (int i = 0; i < 2; ++i) {
        if (!gk_get_first_tensor(c->ctx_[i])) continue;
        gk_backend_buffer_t buf = gk_backend_alloc_ctx_tensors_from_buft(c->ctx_[i], bufts[i]);
        if (!buf) {
            if (error) {
                *error = std::string("cannot allocate the KV cache in ") + gk_backend_buft_name(bufts[i]) + ": " +
                         gk_backend_last_error();
            }
            return nullptr;
        }
        c->buffers_.push_back(buf);
        if (i == 1) c->device_buffer_ = buf;
        // Cells past the filled ones are never read, but start from zero all the same.
        gk_backend_buffer_clear(buf, 0);
    }
    return c;
}

bool KvCache::device_can_store(gk_backend_dev_t dev, enum gk_type type, int64_t row) {
    gk_init_params ip{};
    ip.mem_size      = 4 * gk_tensor_overhead();
    ip.no_alloc      = true;
    gk_context * ctx = gk_init(ip);
    if (!ctx) return false;
    gk_tensor * cache = gk_new_tensor_2d(ctx, type, row, 2);
    gk_tensor * rows  = gk_new_tensor_2d(ctx, GK_TYPE_F32, row, 1);
    gk_tensor * cells = gk_new_tensor_1d(ctx, GK_TYPE_I32, 1);
    gk_tensor * op    = cache && rows && cells ? gk_set_rows(ctx, cache, rows, cells) : nullptr;
    const bool  ok    = op && gk_backend_dev_supports_op(dev, op);
    gk_free(ctx);
    return ok;
}

KvCache::~KvCache() {
    for (gk_backend_buffer_t buf : buffers_) gk_backend_buffer_free(buf);
    for (gk_context * ctx : ctx_) gk_free(ctx);
}

size_t KvCache::bytes() const {
    size_t n = 0;
    for (gk_backend_buffer_t buf : buffers_) n += gk_backend_buffer_get_size(buf);
    return n;
}

size_t KvCache::device_bytes() const { return device_buffer_ ? gk_backend_buffer_get_size(device_buffer_) : 0; }

gk_tensor * KvCache::store_k(gk_context * ctx, int64_t il, gk_tensor * k_cur, gk_tensor * cells) const {
    if (!k_cur) return nullptr;
    return gk_set_rows(ctx, k_[il], gk_reshape_2d(ctx, k_cur, k_[il]->ne[0], k_cur->ne[2]), cells);
}

gk_tensor * KvCache::store_v(gk_context * ctx, int64_t il, gk_tensor * v_cur, gk_tensor * cells) const {
    if (!v_cur) return nullptr;
    return gk_set_rows(ctx, v_[il], gk_reshape_2d(ctx, v_cur, v_[il]->ne[0], v_cur->ne[2]), cells);
}

gk_tensor * KvCache::view(gk_context * ctx, gk_tensor * cache, int64_t head_dim, int64_t n_kv) const {
    // [head_dim, n_head_kv, n_kv] over the rows, then heads outermost for attention.
    gk_tensor * v = gk_view_3d(ctx, cache, head_dim, n_head_kv_, n_kv, gk_row_size(cache->type, head_dim),
                               cache->nb[1], 0);
    return v ? gk_permute(ctx, v, 0, 2, 1, 3) : nullptr;
}

gk_tensor * KvCache::view_k(gk_context * ctx, int64_t il, int64_t n_kv) const {
    return view(ctx, k_[il], head_dim_k_, n_kv);
}

gk_tensor * KvCache::view_v(gk_context * ctx, int64_t il, int64_t n_kv) const {
    return view(ctx, v_[il], head_dim_v_, n_kv);
}

} // namespace gk::run
