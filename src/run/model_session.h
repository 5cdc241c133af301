// model_session.h - running a Model: a KV cache, the forward graph, logits.
//
// Session::eval takes a batch of tokens (the whole prompt, or one sampled token) and
// evaluates it in micro-batches of at most n_ubatch tokens, in order: for each it builds
// the forward graph (mul_mat with n = micro-batch size), places its tensors and computes
// it with a scheduler (gk-sched.h) over the session's CPU backend; the logits of the batch's last token come
// from the last micro-batch. Position p is kept in cache cell p; a batch that would pass
// n_ctx is refused with an error before anything is computed. context_shift() makes room
// (llama.cpp's context shift) by re-evaluating the tokens it keeps from position 0.
//
// Batch invariance: a token's logits have the same bits whatever the micro-batch size
// (and thread count). Every op computes a token's values from that token's inputs alone
// (mul_mat: one vec_dot per element), and attention gives a query the same bits whatever
// masked cells it is shown (cpu/ops/attention.cpp) - a query of a larger micro-batch
// sees the cells of the later tokens, all masked.
#pragma once

#include "kv_cache.h"
#include "model.h"

#include "gk/gk-sched.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gk::run {

struct session_params {
    int64_t      n_ctx     = 4096;          // positions the cache holds
    int64_t      n_ubatch  = 512;           // most tokens per forward graph (micro-batch)
    int          n_threads = 1;
    int          n_threads_batch = 0;       // for micro-batches of several tokens (a prompt); 0: n_threads
    enum gk_type type_k    = GK_TYPE_F16;   // KV cache element types (kv_cache_type_ok)
    enum gk_type type_v    = GK_TYPE_F16;
};

/** The inputs of one forward graph (filled by Session::eval after allocation) and its
 *  output. */
struct forward_tensors {
    gk_tensor * tokens   = nullptr;  // I32 [T]
    gk_tensor * pos      = nullptr;  // I32 [T]: positions, also the cache cells written
    gk_tensor * mask     = nullptr;  // F16 [n_kv, T]: 0 where visible, -inf elsewhere (nullptr
                                     // when no layer of the graph reads it)
    gk_tensor * mask_swa = nullptr;  // same for the sliding-window layers, or nullptr
    gk_tensor * logits   = nullptr;  // F32 [n_vocab, 1] of the last token, when asked for
};

/** Build the forward graph of `n_tokens` tokens whose first is at position n_kv - n_tokens,
 *  attending to cache cells [0, n_kv): creates the inputs and expands the cache writes
 *  into `graph`, and with `logits` the logits of the last token. Without, the graph ends
 *  at the last layer's cache writes (that layer's attention and feed-forward feed only
 *  the logits). false with the builder's message in gk_last_error(ctx) on an error. */
bool build_forward(gk_context * ctx, gk_cgraph * graph, const Model & model, const KvCache & kv, int64_t n_tokens,
                   int64_t n_kv, bool logits, forward_tensors & t);

/** Upper bound of the node count of build_forward's graph for `hp`. */
size_t forward_graph_size(const hparams & hp);

class Session {
public:
    /** nullptr and a message when n_ctx is out of range (1 .. 2^24), n_ubatch < 1, or
     *  memory runs out. */
    static std::unique_ptr<Session> create(const Model & model, const session_params & params, std::string * error);
    ~Session();
    Session(const Session &) = delete;
    Session & operator=(const Session &) = delete;

    /** Evaluate `tokens` (at least one) at positions n_past() onwards and put the logits
     *  of the last one in `logits` (n_vocab floats). false and a message when the batch
     *  does not fit in the context, a token id is out of range, computing fails, or the
     *  logits are not finite (a NaN or +inf, or all -inf: a weight or activation went
     *  bad, and sampling them would be meaningless); then n_past() is unchanged (cells
     *  written past it are rewritten before they are read). */
    bool eval(std::span<const token_id> tokens, std::vector<float> & logits, std::string * error);

    /** llama.cpp's context shift: keep the first `n_keep` tokens of the cache, drop half
     *  of the rest (n_discard = (n_past - n_keep) / 2, the oldest after the kept ones) and
     *  move the remainder up. Done by re-evaluating the kept tokens from position 0, so the
     *  cache then holds exactly what a fresh run on the kept tokens gives (llama.cpp
     *  instead re-ropes the cached K, which keeps what the dropped tokens contributed).
     *  Returns the number of tokens dropped; 0 and a message when nothing can be dropped
     *  (n_keep covers all but one token) or the re-evaluation fails (the cache is then
     *  empty: n_past() == 0). */
    int64_t context_shift(int64_t n_keep, std::string * error);
    /** Forget the cache cells from `n` on (n_past() becomes min(n, n_past()); n < 0 counts
     *  as 0), keeping what the first cells hold: the next eval() continues at position n,
     *  and its logits are those of evaluating all the tokens at once (batch invariance).
     *  A server reuses a prompt's common prefix this way. */
    void truncate(int64_t n);
    /** The tokens in the cache, cell by cell (n_past() of them). */
    std::span<const token_id> tokens() const { return tokens_; }

    int64_t n_past() const { return n_past_; }
    int64_t n_ctx() const { return kv_->n_ctx(); }
    /** Bytes of the KV cache and of the compute buffer (its largest size so far). */
    size_t  cache_bytes() const { return kv_->bytes(); }
    size_t  compute_bytes() const;

private:
    Session() = default;
    /** One micro-batch at positions n_past() onwards; the logits of its last token into
     *  *logits unless logits is nullptr. Advances n_past() on success. */
    bool eval_ubatch(std::span<const token_id> tokens, std::vector<float> * logits, std::string * error);

    const Model *            model_ = nullptr;
    session_params           params_;
    std::unique_ptr<KvCache> kv_;
    gk_context *             graph_ctx_ = nullptr;  // holds the graph
    gk_cgraph *              graph_     = nullptr;
    std::vector<uint8_t>     arena_;                // tensor structs of each step's graph
    gk_backend_t             cpu_    = nullptr;  // the session's CPU backend (and its thread pool)
    gk_sched_t               sched_  = nullptr;  // over cpu_ alone: one split, one buffer
    int64_t                  n_past_ = 0;
    std::vector<token_id>    tokens_;               // the token of each cell below n_past_
};

} // namespace gk::run
