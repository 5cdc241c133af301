// model_session.h - running a Model: a KV cache, the forward graph, logits.
//
// Session::eval takes a batch of tokens (the whole prompt, or one sampled token) and
// evaluates it in micro-batches of at most n_ubatch tokens, in order, through its
// Batcher: for each it builds the forward graph (mul_mat with n = micro-batch size),
// places its tensors and computes it with a scheduler (gk-sched.h) over the batcher's
// CPU backend; the logits of the batch's last token come from the last micro-batch.
// A step whose graph has the previous step's shape (decode: one token per sequence,
// n_kv padded to 32 cells) reuses that graph and its placement, and only sets its inputs.
// In a pipeline over MPI ranks (session_params.pipeline_ranks > 1, pipeline.h, docs/mpi.md)
// every rank evaluates the same batches in lockstep: its graph holds its layers only, the
// scheduler also has the previous and next rank's memory (gk-mpi.h), so that the hidden
// state comes in and goes on as staging copies, and the last rank's logits are broadcast.
// Sessions that share a Batcher (a server's slots) are evaluated together, one graph per
// step for all of them. Position p is kept in cache cell p; a batch that would pass
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
#include "pipeline.h"

#include "gk/gk-sched.h"

#include <condition_variable>
#include <memory>
#include <mutex>
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
    gk_backend_dev_t device = nullptr;     // a device the scheduler puts first (the CPU takes
                                           // what it refuses); nullptr: the CPU alone
    bool kv_offload = true;                 // the KV cache of the blocks whose weights are on
                                            // `device` (Model::offload) in its memory
    int          pipeline_rank  = 0;        // this process's part of the model split over
    int          pipeline_ranks = 1;        // pipeline_ranks MPI ranks (pipeline.h); 1: all of it
};

/** One sequence's part of a forward graph: its tokens follow the previous sequence's. */
struct forward_seq {
    const KvCache * kv       = nullptr;  // the cache its keys and values go to and come from
    int64_t         n_tokens = 0;        // its tokens in the graph
    int64_t         n_kv     = 0;        // its attention reads cells [0, n_kv): at least up
                                         // to its last token's position (the mask hides the
                                         // cells past each token's position)
    bool            logits   = false;    // the logits of its last token are wanted
    bool            embd     = false;    // the output-normed hidden states of all its tokens

    /** Same graph shape (Batcher reuses a graph while its steps' shapes are equal). */
    bool operator==(const forward_seq &) const = default;
};

/** The inputs of one forward graph (filled by the caller after allocation) and its
 *  output. */
struct forward_tensors {
    gk_tensor *              tokens = nullptr;  // I32 [T]: every sequence's tokens, in order
    gk_tensor *              pos    = nullptr;  // I32 [T]: positions, also the cache cells written
    std::vector<gk_tensor *> mask;              // per sequence F16 [n_kv, n_tokens]: 0 where
                                                // visible, -inf elsewhere (nullptr when no
                                                // layer of the graph reads it)
    std::vector<gk_tensor *> mask_swa;          // same for the sliding-window layers
    gk_tensor *              logits = nullptr;  // F32 [n_vocab, n]: the last token of each of
                                                // the n sequences that want logits, in order
    gk_tensor *              embd   = nullptr;  // F32 [n_embd, m]: every token of the sequences
                                                // that want hidden states, in order
    gk_tensor *              inp_embd = nullptr;  // F32 [n_embd, T]: the hidden state the graph
                                                  // starts from, when its layers start past 0
    gk_tensor *              out_embd = nullptr;  // F32 [n_embd, T]: where the graph copies the
                                                  // hidden state, when its layers end before the last
};

/** Build the forward graph of the sequences `seqs` (at least one, each with at least one
 *  token): creates the inputs and expands the cache writes into `graph`, and where some
 *  sequence asks, the logits and the hidden states. Without, the graph ends at the last
 *  layer's cache writes (that layer's attention and feed-forward feed only the outputs).
 *  With `layers` short of the whole model (a pipeline stage), the graph computes those
 *  layers only: from the input t.inp_embd instead of the token embeddings when they start
 *  past layer 0, and, when they end before the last layer, ending with a copy (gk_cpy) of
 *  the hidden state into t.out_embd instead of the outputs. false with the builder's
 *  message in gk_last_error(ctx) on an error. */
bool build_forward(gk_context * ctx, gk_cgraph * graph, const Model & model, std::span<const forward_seq> seqs,
                   forward_tensors & t, layer_range layers = {});

/** Upper bound of the node count of build_forward's graph for `hp` and `n_seq` sequences. */
size_t forward_graph_size(const hparams & hp, size_t n_seq);

class Session;

/** Evaluates the tokens of several sessions in one forward graph per step (continuous
 *  batching, as llama.cpp's server does over its slots): the weights are read once for
 *  every session's tokens, while each session keeps its own KV cache. It holds what a
 *  step needs (graph, CPU backend with its thread pool, scheduler and compute buffer).
 *
 *  eval() may be called from several threads at once, one session each: a caller queues
 *  its request and either waits or, when no step is running, runs one over every queued
 *  request. It first waits up to `linger` for every joined participant (join()) to have
 *  queued one, so that sessions stepping in lockstep share their steps. A step takes at
 *  most n_ubatch tokens: the requests with fewest tokens left first, a longer one cut
 *  into micro-batches over several steps. A session's logits have the same bits whatever
 *  shares its steps (batch invariance), so timing never changes a result. */
class Batcher {
public:
    /** For up to `n_seq_max` sessions of `model` per step, with the micro-batch size and
     *  threads of `params`. nullptr and a message when n_ubatch < 1, n_seq_max < 1 or
     *  memory runs out. */
    static std::unique_ptr<Batcher> create(const Model & model, const session_params & params, int n_seq_max,
                                           std::string * error);
    ~Batcher();
    Batcher(const Batcher &) = delete;
    Batcher & operator=(const Batcher &) = delete;

    /** One session's evaluation (Session::eval's contract). */
    struct request {
        Session *                  session = nullptr;
        std::span<const token_id>  tokens;
        std::vector<float> *       logits  = nullptr;  // n_vocab floats: its last token's
                                                       // (nullptr: not wanted)
        std::vector<float> *       embd    = nullptr;  // n_embd floats per token, every token's
                                                       // output-normed hidden state (nullptr:
                                                       // not wanted)
        bool                       ok      = false;    // set by eval_all
        std::string                error;              // why not, when !ok
        bool                       done    = false;    // eval(): a step has run it
    };

    /** Evaluate every request together on this thread, as soon as no other step runs
     *  (no waiting for company): each request succeeds or fails on its own (bad tokens, a
     *  full context, non-finite logits, a session twice or of another batcher); a failed
     *  one leaves its session's n_past() unchanged. */
    void eval_all(std::span<request *> requests);

    /** Session::eval (logits) or Session::embed (embd) through the queue (see the class
     *  comment); blocks until done. */
    bool eval(Session & session, std::span<const token_id> tokens, std::vector<float> * logits,
              std::vector<float> * embd, std::string * error);

    /** A session that will keep calling eval() (a server slot with a request) joins; it
     *  leaves when it stops. Only changes how long a step waits for company. */
    void join();
    void leave();

    /** What the steps so far held: how many steps, sequences summed over them, and the
     *  most sequences in one step. */
    struct step_stats {
        int64_t steps     = 0;
        int64_t sequences = 0;
        int64_t most      = 0;
    };
    step_stats stats();

    /** Bytes of the compute buffer (its largest size so far). */
    size_t compute_bytes() const;
    /** With a device: the ops of the graphs so far that the device refused (they ran on
     *  the CPU), by name ("FLASH_ATTN_EXT"), each once, in the order first met. */
    std::vector<std::string> fallback_ops();
    const Model & model() const { return *model_; }
    const session_params & params() const { return params_; }

private:
    Batcher() = default;
    struct part;
    /** eval_all's work; the caller holds the step (running_). */
    void run_requests(std::span<request *> requests);
    /** One forward graph over `parts` (at most n_ubatch tokens in all); false with a
     *  message for all of them. */
    bool run_step(std::span<const part> parts, std::string * error);
    /** Build graph_ for `seqs` in step_ctx_ and place it (the scheduler); false with a
     *  message. */
    bool build_step(std::span<const forward_seq> seqs, std::string * error);
    /** Forget the step graph (the next step builds one). */
    void drop_step();
    /** Add the ops of graph_ (just assigned) that the device refused to fallbacks_. */
    void note_fallbacks();

    const Model *        model_     = nullptr;
    session_params       params_;
    int                  n_seq_max_ = 1;
    gk_context *         graph_ctx_ = nullptr;  // holds the graph
    gk_cgraph *          graph_     = nullptr;
    std::vector<uint8_t> arena_;                // tensor structs of each step's graph
    gk_backend_t         cpu_       = nullptr;  // the CPU backend (and its thread pool)
    gk_backend_t         device_    = nullptr;  // params.device's backend, when given
    gk_backend_t         prev_      = nullptr;  // a pipeline's previous and next rank's memory
    gk_backend_t         next_      = nullptr;  // (gk-mpi.h), where there is such a rank
    layer_range          layers_;               // the layers this process computes
    gk_sched_t           sched_     = nullptr;  // over [device_,] cpu_, prev_, next_
    std::vector<std::string> fallbacks_;        // fallback_ops()

    gk_context *             step_ctx_ = nullptr;  // the graph of the last step, still placed by sched_
    std::vector<forward_seq> step_seqs_;           // its shape (empty: none)
    forward_tensors          step_ft_;             // its inputs and outputs

    std::mutex               mutex_;      // guards the queue below
    std::condition_variable  changed_;    // a request queued or finished, a participant left
    std::vector<request *>   queue_;
    bool                     running_      = false;  // a thread is running a step
    int                      participants_ = 0;
    step_stats               stats_;
};

class Session {
public:
    /** A session with a batcher of its own. nullptr and a message when n_ctx is out of
     *  range (1 .. 2^24), n_ubatch < 1, or memory runs out. */
    static std::unique_ptr<Session> create(const Model & model, const session_params & params, std::string * error);
    /** A session whose evaluations go through `batcher` (shared with other sessions; it
     *  must outlive them), with the cache size and types of the batcher's params. */
    static std::unique_ptr<Session> create(Batcher & batcher, std::string * error);
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

    /** As eval(), but instead of logits puts in `embd` the hidden state of every token after
     *  the output norm (llama.cpp's embeddings before pooling): n_embd floats per token, in
     *  token order (tokens.size() * n_embd floats). The output projection is not computed.
     *  Same errors as eval(), with a NaN or infinity in the hidden states in place of the
     *  logits check. */
    bool embed(std::span<const token_id> tokens, std::vector<float> & embd, std::string * error);

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
    /** Bytes of the KV cache in the device's memory (session_params::kv_offload). */
    size_t  cache_device_bytes() const { return kv_->device_bytes(); }
    size_t  compute_bytes() const { return batcher_->compute_bytes(); }
    /** Batcher::fallback_ops of its batcher. */
    std::vector<std::string> fallback_ops() { return batcher_->fallback_ops(); }
    /** Why the KV cache is in host memory though session_params::kv_offload asked for the
     *  device's (the device cannot write its type); "" otherwise. */
    const std::string & cache_note() const { return cache_note_; }

private:
    friend class Batcher;
    Session() = default;

    std::unique_ptr<Batcher> own_batcher_;       // when made without a shared one
    Batcher *                batcher_ = nullptr;
    std::unique_ptr<KvCache> kv_;
    int64_t                  n_past_ = 0;
    std::vector<token_id>    tokens_;            // the token of each cell below n_past_
    std::string              cache_note_;        // cache_note()
};

} // namespace gk::run
