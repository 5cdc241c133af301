// model_session.cpp - see model_session.h.
#include "model_session.h"

#include "gk/gk-mpi.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gk::run {

namespace {

constexpr uint16_t k_f16_zero     = 0x0000;
constexpr uint16_t k_f16_neg_inf  = 0xFC00;
constexpr int64_t  k_max_ctx      = int64_t(1) << 24;

/** Causal mask of `n_tokens` tokens at positions pos0 .. pos0 + n_tokens - 1 over cells
 *  [0, n_kv) (cell j holds position j; the cells past a token's position are hidden);
 *  with n_swa > 0 a cell more than n_swa - 1 positions back is hidden as well
 *  (llama.cpp's standard sliding window). */
std::vector<uint16_t> causal_mask(int64_t n_tokens, int64_t n_kv, int64_t pos0, int64_t n_swa) {
    std::vector<uint16_t> m(static_cast<size_t>(n_kv * n_tokens));
    for (int64_t i = 0; i < n_tokens; ++i) {
        const int64_t p = pos0 + i;
        for (int64_t j = 0; j < n_kv; ++j) {
            const bool visible = j <= p && (n_swa <= 0 || p - j < n_swa);
            m[static_cast<size_t>(i * n_kv + j)] = visible ? k_f16_zero : k_f16_neg_inf;
        }
    }
    return m;
}

/** The cells a step's graph reads: the tokens' last position + 1 rounded up to a multiple
 *  of this (at most the cache's size). Consecutive decode steps then have graphs of one
 *  shape, so that the graph is built and placed once per k_kv_pad tokens
 *  (Batcher::run_step). The cells past a token's position are masked, and the CPU's
 *  attention skips them (cpu/ops/attention.cpp), so this changes no bit. A device's
 *  shader does visit them: llama.cpp's 256 would make a decode at position 20 cost 256
 *  cells there, and would pass lavapipe's loop budget (vulkan/ops.cpp) at small contexts. */
constexpr int64_t k_kv_pad = 32;

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

/** "" when every hidden state is finite, else where the first that is not lies. */
std::string non_finite_hidden(const std::vector<float> & embd) {
    for (size_t i = 0; i < embd.size(); ++i) {
        if (!std::isfinite(embd[i])) return "the hidden states are not finite (value " + std::to_string(i) + ")";
    }
    return "";
}

/** Why `tokens` cannot be evaluated on a session at n_past of n_ctx cells, or "". */
std::string check_tokens(std::span<const token_id> tokens, int64_t n_past, int64_t n_ctx, int64_t n_vocab) {
    const auto n_tokens = static_cast<int64_t>(tokens.size());
    if (n_tokens == 0) return "nothing to evaluate (no tokens)";
    if (n_past + n_tokens > n_ctx) {
        return "context full: " + std::to_string(n_past) + " + " + std::to_string(n_tokens) +
               " tokens exceed the context size of " + std::to_string(n_ctx) + " (raise -c)";
    }
    for (token_id t : tokens) {
        if (t < 0 || t >= n_vocab) {
            return "token id " + std::to_string(t) + " is outside the vocabulary (0.." + std::to_string(n_vocab - 1) +
                   ")";
        }
    }
    return "";
}

/** How long a step waits for every participant to queue a request. A decode step of a
 *  small model takes a fraction of this; a participant busy elsewhere (sending text to
 *  a slow client) costs the others at most this much per step. */
constexpr auto k_linger = std::chrono::milliseconds(2);

} // namespace

// ---- Batcher ---------------------------------------------------------------------------

/** A request's share of one step: tokens [at, at + n) of it. */
struct Batcher::part {
    request * r;
    int64_t   at;
    int64_t   n;
    bool      last;  // its last tokens: the step gives its logits
};

std::unique_ptr<Batcher> Batcher::create(const Model & model, const session_params & params, int n_seq_max,
                                         std::string * error) {
    if (params.n_ubatch < 1) {
        if (error) *error = "micro-batch size " + std::to_string(params.n_ubatch) + " must be at least 1";
        return nullptr;
    }
    if (n_seq_max < 1) {
        if (error) *error = "a batcher needs room for at least one session (got " + std::to_string(n_seq_max) + ")";
        return nullptr;
    }
    std::unique_ptr<Batcher> b(new Batcher());
    b->model_     = &model;
    b->params_    = params;
    b->n_seq_max_ = n_seq_max;
    const size_t   graph_size = forward_graph_size(model.hp(), static_cast<size_t>(n_seq_max));
    gk_init_params gp{};
    gp.mem_size   = gk_graph_overhead_custom(graph_size, false) + gk_tensor_overhead();
    gp.no_alloc   = true;
    b->graph_ctx_ = gk_init(gp);
    b->graph_     = b->graph_ctx_ ? gk_new_graph_custom(b->graph_ctx_, graph_size, false) : nullptr;
    b->cpu_       = gk_backend_cpu_init();
    if (!b->graph_ || !b->cpu_) {
        if (error) *error = "out of memory for the compute graph";
        return nullptr;
    }
    // The scheduler's backends in order of preference: the device (when given), the CPU,
    // then a pipeline's neighbours (their memory only holds what passes between ranks).
    std::vector<gk_backend_t> backends;
    if (params.device) {
        b->device_ = gk_backend_dev_init(params.device, nullptr);
        if (!b->device_) {
            if (error) *error = std::string("cannot start ") + gk_backend_dev_name(params.device) + ": " +
                                gk_backend_last_error();
            return nullptr;
        }
        backends.push_back(b->device_);
    }
    backends.push_back(b->cpu_);
    if (params.pipeline_ranks > 1) {
        const int rank = params.pipeline_rank;
        if (!pipeline_layers(model.hp().n_layer, rank, params.pipeline_ranks, b->layers_, error)) return nullptr;
        for (auto [peer, backend] : {std::pair{rank - 1, &b->prev_}, std::pair{rank + 1, &b->next_}}) {
            if (peer < 0 || peer == params.pipeline_ranks) continue;
            *backend = gk_backend_mpi_init(peer);
            if (!*backend) {
                if (error) *error = std::string("the pipeline: ") + gk_backend_last_error();
                return nullptr;
            }
            backends.push_back(*backend);
        }
    }
    b->sched_ = gk_sched_new(backends.data(), static_cast<int>(backends.size()));
    if (!b->sched_) {
        if (error) *error = std::string("the scheduler: ") + gk_backend_last_error();
        return nullptr;
    }
    b->arena_.resize(graph_size * gk_tensor_overhead());
    return b;
}

Batcher::~Batcher() {
    gk_sched_free(sched_);
    gk_backend_free(device_);
    gk_backend_free(next_);
    gk_backend_free(prev_);
    gk_backend_free(cpu_);
    gk_free(step_ctx_);
    gk_free(graph_ctx_);
}

size_t Batcher::compute_bytes() const {
    return gk_sched_get_buffer_size(sched_, cpu_) + (device_ ? gk_sched_get_buffer_size(sched_, device_) : 0);
}

std::vector<std::string> Batcher::fallback_ops() {
    std::lock_guard<std::mutex> lock(mutex_);
    return fallbacks_;
}

void Batcher::note_fallbacks() {
    if (!device_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < gk_graph_n_nodes(graph_); ++i) {
        const gk_tensor * n = gk_graph_node(graph_, i);
        const char *      op = gk_op_name(n->op);
        if (gk_sched_get_tensor_backend(sched_, n) == cpu_ && !gk_backend_supports_op(device_, n) &&
            std::find(fallbacks_.begin(), fallbacks_.end(), op) == fallbacks_.end()) {
            fallbacks_.emplace_back(op);
        }
    }
}

void Batcher::join() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++participants_;
}

void Batcher::leave() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        --participants_;
    }
    changed_.notify_all();
}

bool Batcher::eval(Session & session, std::span<const token_id> tokens, std::vector<float> * logits,
                   std::vector<float> * embd, std::string * error) {
    request r;
    r.session = &session;
    r.tokens  = tokens;
    r.logits  = logits;
    r.embd    = embd;
    std::unique_lock<std::mutex> lock(mutex_);
    queue_.push_back(&r);
    changed_.notify_all();
    // Until a step has done r: run one when none is running (r is then still queued),
    // else wait for the running one.
    while (!r.done) {
        if (running_) {
            changed_.wait(lock);
            continue;
        }
        running_            = true;
        const auto deadline = std::chrono::steady_clock::now() + k_linger;
        while (static_cast<int>(queue_.size()) < participants_ &&
               changed_.wait_until(lock, deadline) != std::cv_status::timeout) {
        }
        std::vector<request *> step;
        step.swap(queue_);
        lock.unlock();
        run_requests(step);
        lock.lock();
        for (request * q : step) q->done = true;
        running_ = false;
        changed_.notify_all();
    }
    if (!r.ok && error) *error = r.error;
    return r.ok;
}

void Batcher::eval_all(std::span<request *> requests) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !running_; });
    running_ = true;
    lock.unlock();
    run_requests(requests);
    lock.lock();
    running_ = false;
    changed_.notify_all();
}

Batcher::step_stats Batcher::stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

void Batcher::run_requests(std::span<request *> requests) {
    const int64_t          n_vocab = model_->hp().n_vocab;
    std::vector<request *> live;
    std::vector<int64_t>   n_past0;  // per live request: its session's n_past() before
    std::vector<int64_t>   done;     // per live request: tokens evaluated so far
    for (request * r : requests) {
        r->ok    = false;
        r->error = r->session->batcher_ != this ? "the session was not made on this batcher"
                   : std::count_if(requests.begin(), requests.end(),
                                   [&](const request * o) { return o->session == r->session; }) > 1
                       ? "the session has two requests in one batch"
                       : check_tokens(r->tokens, r->session->n_past_, r->session->n_ctx(), n_vocab);
        if (!r->error.empty()) continue;
        if (r->embd) r->embd->clear();
        live.push_back(r);
        n_past0.push_back(r->session->n_past_);
        done.push_back(0);
    }
    std::vector<bool> failed(live.size(), false);
    for (;;) {
        // The next step: the requests with the fewest tokens left first, at most
        // n_seq_max of them and n_ubatch tokens in all.
        std::vector<size_t> order;
        for (size_t i = 0; i < live.size(); ++i) {
            if (!failed[i] && done[i] < static_cast<int64_t>(live[i]->tokens.size())) order.push_back(i);
        }
        if (order.empty()) break;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return static_cast<int64_t>(live[a]->tokens.size()) - done[a] <
                   static_cast<int64_t>(live[b]->tokens.size()) - done[b];
        });
        std::vector<part>   parts;
        std::vector<size_t> index;
        int64_t             budget = params_.n_ubatch;
        for (size_t i : order) {
            if (budget == 0 || static_cast<int>(parts.size()) == n_seq_max_) break;
            const int64_t left = static_cast<int64_t>(live[i]->tokens.size()) - done[i];
            const int64_t n    = std::min(left, budget);
            parts.push_back({live[i], done[i], n, n == left});
            index.push_back(i);
            budget -= n;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++stats_.steps;
            stats_.sequences += static_cast<int64_t>(parts.size());
            stats_.most = std::max(stats_.most, static_cast<int64_t>(parts.size()));
        }
        std::string error;
        if (!run_step(parts, &error)) {
            for (size_t i : index) {
                failed[i]           = true;
                live[i]->error      = error;
                live[i]->session->n_past_ = n_past0[i];
            }
            continue;
        }
        for (size_t k = 0; k < parts.size(); ++k) done[index[k]] += parts[k].n;
    }
    for (size_t i = 0; i < live.size(); ++i) {
        request * r = live[i];
        Session & s = *r->session;
        if (failed[i]) continue;
        std::string bad = r->logits ? non_finite_logits(*r->logits) : "";
        if (bad.empty() && r->embd) bad = non_finite_hidden(*r->embd);
        if (!bad.empty()) {
            r->error  = bad;
            s.n_past_ = n_past0[i];
            continue;
        }
        s.tokens_.resize(static_cast<size_t>(n_past0[i]));
        s.tokens_.insert(s.tokens_.end(), r->tokens.begin(), r->tokens.end());
        r->ok = true;
    }
}

bool Batcher::run_step(std::span<const part> parts, std::string * error) {
    const hparams &          hp = model_->hp();
    std::vector<forward_seq> seqs;
    int64_t                  n_tokens = 0;
    for (const part & p : parts) {
        const Session & s    = *p.r->session;
        const int64_t   n_kv = std::min((s.n_past_ + p.n + k_kv_pad - 1) / k_kv_pad * k_kv_pad, s.n_ctx());
        seqs.push_back({s.kv_.get(), p.n, n_kv, p.last && p.r->logits, p.r->embd != nullptr});
        n_tokens += p.n;
    }
    // The previous step's graph, still placed, serves when its shape is this step's.
    bool ok = step_ctx_ && seqs == step_seqs_;
    if (!ok) ok = build_step(seqs, error);
    forward_tensors & ft = step_ft_;
    if (ok) {
        std::vector<int32_t> tokens, pos;
        for (const part & p : parts) {
            const Session & s = *p.r->session;
            for (int64_t i = 0; i < p.n; ++i) {
                tokens.push_back(p.r->tokens[static_cast<size_t>(p.at + i)]);
                pos.push_back(static_cast<int32_t>(s.n_past_ + i));
            }
        }
        ok = set_input(ft.tokens, tokens.data(), tokens.size() * sizeof(int32_t), error) &&
             set_input(ft.pos, pos.data(), pos.size() * sizeof(int32_t), error);
        for (size_t k = 0; ok && k < seqs.size(); ++k) {
            const int64_t pos0 = parts[k].r->session->n_past_;
            if (ft.mask[k]) {
                const std::vector<uint16_t> mask = causal_mask(seqs[k].n_tokens, seqs[k].n_kv, pos0, 0);
                ok = set_input(ft.mask[k], mask.data(), mask.size() * sizeof(uint16_t), error);
            }
            if (ok && ft.mask_swa[k]) {
                const std::vector<uint16_t> mask = causal_mask(seqs[k].n_tokens, seqs[k].n_kv, pos0, hp.n_swa);
                ok = set_input(ft.mask_swa[k], mask.data(), mask.size() * sizeof(uint16_t), error);
            }
        }
    }
    if (ok) {
        const bool batch = n_tokens > 1 && params_.n_threads_batch > 0;
        const int  nth   = std::max(1, batch ? params_.n_threads_batch : params_.n_threads);
        ok = gk_backend_cpu_set_n_threads(cpu_, nth) == GK_STATUS_SUCCESS &&
             gk_sched_graph_compute(sched_, graph_) == GK_STATUS_SUCCESS;
        if (!ok && error) *error = std::string("compute: ") + gk_backend_last_error();
    }
    // The logits: column j of ft.logits is the j-th part that asked.
    const size_t row = static_cast<size_t>(hp.n_vocab) * sizeof(float);
    size_t       col = 0;
    for (size_t k = 0; ok && k < parts.size(); ++k) {
        if (!seqs[k].logits) continue;
        std::vector<float> & logits = *parts[k].r->logits;
        logits.resize(static_cast<size_t>(hp.n_vocab));
        // In a pipeline the last rank has them, and every rank gets them from it.
        const bool here = ft.logits != nullptr;
        if ((here && gk_backend_tensor_get(ft.logits, logits.data(), col * row, row) != GK_STATUS_SUCCESS) ||
            (params_.pipeline_ranks > 1 &&
             gk_mpi_bcast(logits.data(), row, params_.pipeline_ranks - 1) != GK_STATUS_SUCCESS)) {
            ok = false;
            if (error) *error = std::string("reading the logits: ") + gk_backend_last_error();
        }
        ++col;
    }
    // The hidden states: the parts that asked, each part's tokens in order, appended to
    // what its request's earlier steps gave.
    const size_t embd_row = static_cast<size_t>(hp.n_embd);
    size_t       at       = 0;
    for (size_t k = 0; ok && k < parts.size(); ++k) {
        if (!seqs[k].embd) continue;
        std::vector<float> & embd  = *parts[k].r->embd;
        const size_t         have  = embd.size();
        const size_t         count = static_cast<size_t>(parts[k].n) * embd_row;
        embd.resize(have + count);
        if (gk_backend_tensor_get(ft.embd, embd.data() + have, at * sizeof(float), count * sizeof(float)) !=
            GK_STATUS_SUCCESS) {
            ok = false;
            if (error) *error = std::string("reading the hidden states: ") + gk_backend_last_error();
        }
        at += count;
    }
    if (ok) {
        for (const part & p : parts) p.r->session->n_past_ += p.n;
    } else {
        drop_step();  // built again next time, whatever failed
    }
    return ok;
}

bool Batcher::build_step(std::span<const forward_seq> seqs, std::string * error) {
    drop_step();
    gk_init_params ip{};
    ip.mem_size   = arena_.size();
    ip.mem_buffer = arena_.data();
    ip.no_alloc   = true;
    step_ctx_     = gk_init(ip);
    if (!step_ctx_) {
        if (error) *error = "cannot create the graph context";
        return false;
    }
    gk_graph_clear(graph_);
    bool ok = build_forward(step_ctx_, graph_, *model_, seqs, step_ft_, layers_);
    if (!ok && error) *error = std::string("building the graph: ") + gk_last_error(step_ctx_);
    // A pipeline stage's hidden state comes from the previous rank's memory and goes to the
    // next rank's: the scheduler's staging copies in and out of them are the transfers.
    gk_sched_reset(sched_);
    if (ok && ((step_ft_.inp_embd && !gk_sched_set_tensor_backend(sched_, step_ft_.inp_embd, prev_)) ||
               (step_ft_.out_embd && !gk_sched_set_tensor_backend(sched_, step_ft_.out_embd, next_)))) {
        ok = false;
        if (error) *error = std::string("placing the hidden state: ") + gk_backend_last_error();
    }
    if (ok && gk_sched_alloc_graph(sched_, graph_) != GK_STATUS_SUCCESS) {
        ok = false;
        if (error) *error = std::string("allocating the graph: ") + gk_backend_last_error();
    }
    if (!ok) return false;
    note_fallbacks();
    step_seqs_.assign(seqs.begin(), seqs.end());
    return true;
}

void Batcher::drop_step() {
    gk_sched_reset(sched_);
    gk_free(step_ctx_);
    step_ctx_ = nullptr;
    step_seqs_.clear();
}

// ---- Session ---------------------------------------------------------------------------

std::unique_ptr<Session> Session::create(const Model & model, const session_params & params, std::string * error) {
    auto batcher = Batcher::create(model, params, 1, error);
    if (!batcher) return nullptr;
    auto s = create(*batcher, error);
    if (s) s->own_batcher_ = std::move(batcher);
    return s;
}

std::unique_ptr<Session> Session::create(Batcher & batcher, std::string * error) {
    const session_params & params = batcher.params();
    if (params.n_ctx < 1 || params.n_ctx > k_max_ctx) {
        if (error) *error = "context size " + std::to_string(params.n_ctx) + " is out of range (1.." +
                            std::to_string(k_max_ctx) + ")";
        return nullptr;
    }
    std::unique_ptr<Session> s(new Session());
    s->batcher_ = &batcher;
    // The cache of the blocks on the device is in its memory (llama.cpp's default, --kv-offload).
    // A device that cannot write the cache's type (Vulkan: f32 and f16 only) leaves it in
    // host memory, as -nkvo would, and says so (cache_note).
    const Model &   m  = batcher.model();
    const hparams & hp = m.hp();
    bool            on = params.kv_offload && params.device && m.device_buffer_type() &&
              gk_backend_buft_get_device(m.device_buffer_type()) == params.device && m.device_layers() > 0;
    if (on && !(KvCache::device_can_store(params.device, params.type_k, hp.n_embd_k_gqa()) &&
                KvCache::device_can_store(params.device, params.type_v, hp.n_embd_v_gqa()))) {
        on             = false;
        s->cache_note_ = std::string("the KV cache stays in host memory (as with -nkvo): ") +
                         gk_backend_dev_name(params.device) + " cannot write a " + gk_type_name(params.type_k) + "/" +
                         gk_type_name(params.type_v) + " cache";
    }
    s->kv_ = KvCache::create(hp, params.n_ctx, params.type_k, params.type_v, error,
                             on ? m.device_buffer_type() : nullptr, on ? m.device_layers() : 0);
    if (!s->kv_) return nullptr;
    return s;
}

Session::~Session() = default;

bool Session::eval(std::span<const token_id> tokens, std::vector<float> & logits, std::string * error) {
    return batcher_->eval(*this, tokens, &logits, nullptr, error);
}

bool Session::embed(std::span<const token_id> tokens, std::vector<float> & embd, std::string * error) {
    return batcher_->eval(*this, tokens, nullptr, &embd, error);
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

} // namespace gk::run
