// sampler.h - choosing the next token from logits, with llama.cpp's samplers, order and
// defaults (common_params_sampling, src/llama-sampling.cpp):
//   logit bias, then the stages of `order` (default: penalties -> dry -> top_n_sigma ->
//   top_k -> typ_p -> top_p -> min_p -> xtc -> temperature), then a seeded random draw;
//   or, with mirostat 1 or 2: logit bias -> temperature -> mirostat (which draws).
// A temperature <= 0 keeps only the most likely token (greedy; the lowest id on a tie).
// Stages that are off by their value (top-k 0, top-p 1, ...) do nothing.
//
// Deterministic: the draws use std::mt19937 (24 bits per draw, no std:: distributions,
// whose results differ between standard libraries) and candidates are ordered by logit,
// then id, so the same seed, settings and logits give the same token on every machine.
//
// Cost: with top-k on (the default) or greedy, one pass over the vocabulary (a copy of
// the logits, then a scan that keeps the k best in a heap); only the k survivors are
// sorted. With top-k off every candidate is sorted.
#pragma once

#include "sampler_dry.h"
#include "tokenizer.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gk::run {

/** llama.cpp's LLAMA_DEFAULT_SEED: pick a seed at random. */
inline constexpr uint32_t k_random_seed = 0xFFFFFFFFu;

/** A stage of the sampler chain (llama.cpp's common_sampler_type, without infill and
 *  adaptive_p). */
enum class sampler_stage { penalties, dry, top_n_sigma, top_k, typical_p, top_p, min_p, xtc, temperature };

/** llama.cpp's default order (--samplers "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature"). */
std::vector<sampler_stage> default_sampler_order();

/** The stage called `name`: llama.cpp's names ("top_k", "typ_p", ...) and its alternative
 *  spellings ("top-k", "nucleus", "typical", "temp", ...). nullopt when unknown. */
std::optional<sampler_stage> sampler_stage_from_name(std::string_view name);
/** The stage of --sampling-seq letter `c` (e d s k y p m x t). nullopt when unknown. */
std::optional<sampler_stage> sampler_stage_from_char(char c);
/** llama.cpp's name of `s` ("typ_p", ...). */
const char * sampler_stage_name(sampler_stage s);

/** --logit-bias: `bias` is added to the logit of token `id` (-inf: never that token). */
struct logit_bias {
    token_id id;
    float    bias;
};

struct sampler_params {
    float    temp               = 0.8f;
    int      top_k              = 40;     // <= 0: off
    float    top_p              = 0.95f;  // >= 1: off
    float    min_p              = 0.05f;  // <= 0: off
    float    typical_p          = 1.0f;   // >= 1: off
    float    top_n_sigma        = -1.0f;  // <= 0: off
    float    repeat_penalty     = 1.0f;   // 1: off
    float    frequency_penalty  = 0.0f;   // 0: off; subtracted once per occurrence in the window
    float    presence_penalty   = 0.0f;   // 0: off; subtracted once if present in the window
    int      repeat_last_n      = 64;     // the penalties' look-back; 0: off, -1: the context
    float    xtc_probability    = 0.0f;   // 0: off
    float    xtc_threshold      = 0.1f;   // > 0.5: off
    float    dry_multiplier     = 0.0f;   // 0: off
    float    dry_base           = 1.75f;  // < 1: off
    int      dry_allowed_length = 2;
    int      dry_penalty_last_n = -1;    // 0: off, -1: the context
    int      mirostat           = 0;     // 0: off, 1: Mirostat, 2: Mirostat 2.0
    float    mirostat_eta       = 0.1f;  // --mirostat-lr
    float    mirostat_tau       = 5.0f;  // --mirostat-ent (target surprise, bits)
    float    dynatemp_range     = 0.0f;  // 0: off; the temperature spans temp -/+ range by entropy
    float    dynatemp_exponent  = 1.0f;
    int      min_keep           = 0;  // top-p, min-p, typical and XTC keep at least this many
    uint32_t seed               = k_random_seed;

    std::vector<std::string>   dry_sequence_breakers = {"\n", ":", "\"", "*"};
    std::vector<logit_bias>    logit_biases;
    std::vector<sampler_stage> order = default_sampler_order();

    /** Whether DRY has any effect (its breakers need the vocabulary: dry_breakers_from_text). */
    bool dry_enabled() const { return dry_multiplier != 0.0f && dry_base >= 1.0f && dry_penalty_last_n != 0; }
};

/** What the sampler needs to know about the run beyond its parameters. */
struct sampler_context {
    int64_t n_ctx = 0;                      // the context size: what -1 means for the look-back windows
                                            // (0: -1 keeps every accepted token)
    std::vector<dry_breaker> dry_breakers;  // DRY's breakers as tokens
    std::vector<token_id>    banned;        // never sampled: a logit bias of -inf each (--ignore-eos
                                            // bans the end-of-generation tokens, as llama.cpp's)
};

class Sampler {
public:
    explicit Sampler(const sampler_params & params, sampler_context context = {});

    /** The next token for `logits` (one per vocabulary entry; k_no_token when empty). */
    token_id sample(std::span<const float> logits);
    /** Record a token of the text so far (prompt and generated), for the penalties and DRY. */
    void accept(token_id id);
    /** The seed in use (drawn at construction when params.seed was k_random_seed). */
    uint32_t seed() const { return seed_; }
    /** The chain as llama.cpp prints it: "logits -> penalties -> ... -> temp-ext -> dist"
     *  (every stage of the order, on or off). */
    std::string chain() const;

private:
    struct candidate {
        token_id id;
        float    logit;
        float    p;
    };
    bool   stage_active(sampler_stage s) const;
    size_t min_keep() const;
    void   apply_penalties();
    void   apply_dry();
    void   materialize();
    void   sort_candidates();
    void   stage_top_k();
    void   stage_top_n_sigma();
    void   stage_typical();
    void   stage_top_p();
    void   stage_min_p();
    void   stage_xtc();
    /** The temperature stage, dynamic (--dynatemp-range) when `dynamic`. Returns whether
     *  it was greedy (only the most likely token left). */
    bool     stage_temperature(bool dynamic);
    token_id draw();
    token_id sample_mirostat();

    sampler_params                    params_;
    uint32_t                          seed_;
    std::mt19937                      rng_;                  // the draw (and mirostat's)
    std::mt19937                      xtc_rng_;              // XTC's coin, a stream of its own as in llama.cpp
    std::vector<sampler_stage>        active_;               // the stages of the order that are on
    bool                              greedy_fast_ = false;  // greedy = the argmax after the penalties
    size_t                            window_;               // penalties' look-back (0: all)
    std::deque<token_id>              recent_;
    std::unordered_map<token_id, int> counts_;  // occurrences in recent_
    DryPenalty                        dry_;
    float                             mirostat_mu_;
    std::vector<float>                logits_;  // the step's logits, NaN as -inf, biased, penalised
    std::vector<candidate>            cand_;
    bool                              materialized_ = false;  // cand_ holds the candidates (else logits_ does)
    bool                              sorted_       = false;  // cand_ is ordered by logit, then id
};

}  // namespace gk::run
