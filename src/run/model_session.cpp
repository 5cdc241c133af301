// model_session.cpp - see model_session.h.
#include "model_session.h"

#include <algorithm>
#include <cmath>

namespace gk::run {

namespace {

constexpr uint16_t k_f16_zero     = 0x0000;
constexpr uint16_t k_f16_neg_inf  = 0xFC00;
constexpr int64_t  k_max_ctx      = int64_t(1) << 24;

/** Causal mask of `n_tokens` tokens at positions n_kv - n_tokens .. n_kv - 1 over cells
 *  [0, n_kv) (cell j holds position j); with n_swa > 0 a cell more than n_swa - 1
 *  positions back is hidden as well (llama.cpp's standard sliding window). */
std::vector<uint16_t> causal_mask(int64_t n_tokens, int64_t n_kv, int64_t n_swa) {
    std::vector<uint16_t> m(static_cast<size_t>(n_kv * n_tokens));
    for (int64_t i = 0; i < n_tokens; ++i) {
        const int64_t p = n_kv - n_tokens + i;
        for (int64_t j = 0; j < n_kv; ++j) {
            const bool visible = j <= p && (n_swa <= 0 || p - j < n_swa);
            m[static_cast<size_t>(i * n_kv + j)] = visible ? k_f16_zero : k_f16_neg_inf;
        }
    }
    return m;
}

bool set_input(gk_tensor * t, const void * data, size_t bytes, std::string * error) {
    if (!t) return true;
    if (gk_backend_tensor_set(t, data, 0, bytes) != GK_STATUS_SUCCESS) {
        if (error) *error = std::string("setting input ") + gk_get_name(t) + ": " + gk_backend_last_error();
        return false;
    }
    return true;
}

/** "" when `logits` can be sampled, else what is wrong with them: the first NaN or +inf
 *  (a NaN weight makes them all NaN), or every entry -inf. */
std::string non_finite_logits(const std::vector<float> & logits) {
    bool all_neg_inf = true;
    for (size_t i = 0; i < logits.size(); ++i) {
        const float x = logits[i];
        if (std::isnan(x) || x == INFINITY) {
            return std::string("the logits are not finite (") + (std::isnan(x) ? "NaN" : "+inf") + " for token " +
                   std::to_string(i) + ")";
        }
        all_neg_inf = all_neg_inf && x == -INFINITY;
    }
    return all_neg_inf ? "the logits are all -inf" : "";
}

} // namespace

std::unique_ptr<Session> Session::create(const Model & model, const session_params & params, std::string * error) {
    if (params.n_ctx < 1 || params.n_ctx > k_max_ctx) {
        if (error) *error = "context size " + std::to_string(params.n_ctx) + " is out of range (1.." +
                            std::to_string(k_max_ctx) + ")";
        return nullptr;
    }
    if (params.n_ubatch < 1) {
        if (error) *error = "micro-batch size " + std::to_string(params.n_ubatch) + " must be at least 1";
        return nullptr;
    }
    std::unique_ptr<Session> s(new Session());
    s->model_  = &model;
    s->params_ = params;
    s->kv_     = KvCache::create(model.hp(), params.n_ctx, params.type_k, params.type_v, error);
    if (!s->kv_) return nullptr;

    const size_t   graph_size = forward_graph_size(model.hp());
    gk_init_params gp{};
    gp.mem_size    = gk_graph_overhead_custom(graph_size, false) + gk_tensor_overhead();
    gp.no_alloc    = true;
    s->graph_ctx_  = gk_init(gp);
    s->graph_      = s->graph_ctx_ ? gk_new_graph_custom(s->graph_ctx_, graph_size, false) : nullptr;
    s->cpu_        = gk_backend_cpu_init();
    s->sched_      = s->cpu_ ? gk_sched_new(&s->cpu_, 1) : nullptr;
    if (!s->graph_ || !s->sched_) {
        if (error) *error = "out of memory for the compute graph";
        return nullptr;
    }
    s->arena_.resize(graph_size * gk_tensor_overhead());
    return s;
}

Session::~Session() {
    gk_sched_free(sched_);
    gk_backend_free(cpu_);
    gk_free(graph_ctx_);
}

size_t Session::compute_bytes() const { return gk_sched_get_buffer_size(sched_, cpu_); }

bool Session::eval(std::span<const token_id> tokens, std::vector<float> & logits, std::string * error) {
    const hparams & hp       = model_->hp();
    const int64_t   n_tokens = static_cast<int64_t>(tokens.size());
    if (n_tokens == 0) {
        if (error) *error = "nothing to evaluate (no tokens)";
        return false;
    }
    if (n_past_ + n_tokens > n_ctx()) {
        if (error) {
            *error = "context full: " + std::to_string(n_past_) + " + " + std::to_string(n_tokens) +
                     " tokens exceed the context size of " + std::to_string(n_ctx()) + " (raise -c)";
        }
        return false;
    }
    for (token_id t : tokens) {
        if (t < 0 || t >= hp.n_vocab) {
            if (error) *error = "token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                                std::to_string(hp.n_vocab - 1) + ")";
            return false;
        }
    }
    const int64_t n_past0 = n_past_;
    for (int64_t at = 0; at < n_tokens; at += params_.n_ubatch) {
        const int64_t n    = std::min(params_.n_ubatch, n_tokens - at);
        const bool    last = at + n == n_tokens;
        if (!eval_ubatch(tokens.subspan(static_cast<size_t>(at), static_cast<size_t>(n)), last ? &logits : nullptr,
                         error)) {
            n_past_ = n_past0;
            return false;
        }
    }
    if (const std::string bad = non_finite_logits(logits); !bad.empty()) {
        if (error) *error = bad;
        n_past_ = n_past0;
        return false;
    }
    tokens_.resize(static_cast<size_t>(n_past0));
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
    return true;
}

void Session::truncate(int64_t n) {
    n_past_ = std::clamp<int64_t>(n, 0, n_past_);
    tokens_.resize(static_cast<size_t>(n_past_));
}

int64_t Session::context_shift(int64_t n_keep, std::string * error) {
    n_keep                  = std::clamp<int64_t>(n_keep, 0, n_past_);
    const int64_t n_discard = (n_past_ - n_keep) / 2;
    if (n_discard < 1) {
        if (error) {
            *error = "the context is full and --keep " + std::to_string(n_keep) +
                     " leaves nothing to discard (context size " + std::to_string(n_ctx()) + ")";
        }
        return 0;
    }
    std::vector<token_id> kept(tokens_.begin(), tokens_.begin() + n_keep);
    kept.insert(kept.end(), tokens_.begin() + n_keep + n_discard, tokens_.end());
    n_past_ = 0;
    tokens_.clear();
    std::vector<float> logits;
    if (!eval(kept, logits, error)) return 0;
    return n_discard;
}

bool Session::eval_ubatch(std::span<const token_id> tokens, std::vector<float> * logits, std::string * error) {
    const hparams & hp       = model_->hp();
    const int64_t   n_tokens = static_cast<int64_t>(tokens.size());
    const int64_t   n_kv     = n_past_ + n_tokens;

    gk_init_params ip{};
    ip.mem_size   = arena_.size();
    ip.mem_buffer = arena_.data();
    ip.no_alloc   = true;
    gk_context * ctx = gk_init(ip);
    if (!ctx) {
        if (error) *error = "cannot create the graph context";
        return false;
    }
    gk_graph_clear(graph_);
    forward_tensors ft;
    bool            ok = build_forward(ctx, graph_, *model_, *kv_, n_tokens, n_kv, logits != nullptr, ft);
    if (!ok && error) *error = std::string("building the graph: ") + gk_last_error(ctx);
    if (ok && gk_sched_alloc_graph(sched_, graph_) != GK_STATUS_SUCCESS) {
        ok = false;
        if (error) *error = std::string("allocating the graph: ") + gk_backend_last_error();
    }
    if (ok) {
        std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
        for (int64_t i = 0; i < n_tokens; ++i) pos[i] = static_cast<int32_t>(n_past_ + i);
        ok = set_input(ft.tokens, tokens.data(), tokens.size_bytes(), error) &&
             set_input(ft.pos, pos.data(), pos.size() * sizeof(int32_t), error);
        if (ok && ft.mask) {
            const std::vector<uint16_t> mask = causal_mask(n_tokens, n_kv, 0);
            ok = set_input(ft.mask, mask.data(), mask.size() * sizeof(uint16_t), error);
        }
        if (ok && ft.mask_swa) {
            const std::vector<uint16_t> mask_swa = causal_mask(n_tokens, n_kv, hp.n_swa);
            ok = set_input(ft.mask_swa, mask_swa.data(), mask_swa.size() * sizeof(uint16_t), error);
        }
    }
    if (ok) {
        const bool batch = n_tokens > 1 && params_.n_threads_batch > 0;
        const int  nth   = std::max(1, batch ? params_.n_threads_batch : params_.n_threads);
        ok = gk_backend_cpu_set_n_threads(cpu_, nth) == GK_STATUS_SUCCESS &&
             gk_sched_graph_compute(sched_, graph_) == GK_STATUS_SUCCESS;
        if (!ok && error) *error = std::string("compute: ") + gk_backend_last_error();
    }
    if (ok && logits) {
        logits->resize(static_cast<size_t>(hp.n_vocab));
        if (gk_backend_tensor_get(ft.logits, logits->data(), 0, logits->size() * sizeof(float)) != GK_STATUS_SUCCESS) {
            ok = false;
            if (error) *error = std::string("reading the logits: ") + gk_backend_last_error();
        }
    }
    gk_free(ctx);
    if (ok) n_past_ = n_kv;
    return ok;
}

} // namespace gk::run
