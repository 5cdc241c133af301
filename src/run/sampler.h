// sampler.h - choosing the next token from logits, in llama.cpp's order and defaults:
// repeat penalty -> top-k -> top-p -> min-p -> temperature -> a seeded random draw.
// A temperature <= 0 takes the most likely token (greedy; the lowest id on a tie).
//
// Deterministic: the draw uses std::mt19937 and candidates are ordered by logit, then id,
// so the same seed, settings and logits give the same token on every machine.
//
// Cost: with top-k on (the default) or greedy, one pass over the vocabulary (a copy of
// the logits, then a scan that keeps the k best in a heap); only the k survivors are
// sorted. With top-k off every candidate is sorted.
#pragma once

#include "tokenizer.h"

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <vector>

namespace gk::run {

/** llama.cpp's LLAMA_DEFAULT_SEED: pick a seed at random. */
inline constexpr uint32_t k_random_seed = 0xFFFFFFFFu;

struct sampler_params {
    float    temp           = 0.8f;
    int      top_k          = 40;     // <= 0: off
    float    top_p          = 0.95f;  // >= 1: off
    float    min_p          = 0.05f;  // <= 0: off
    float    repeat_penalty = 1.0f;   // 1: off
    int      repeat_last_n  = 64;     // tokens the penalty looks back over
    uint32_t seed           = k_random_seed;
};

class Sampler {
public:
    explicit Sampler(const sampler_params & params);

    /** The next token for `logits` (one per vocabulary entry, at least one). */
    token_id sample(std::span<const float> logits);
    /** Record a token of the text so far (prompt and generated), for the repeat penalty. */
    void accept(token_id id);
    /** The seed in use (drawn at construction when params.seed was k_random_seed). */
    uint32_t seed() const { return seed_; }

private:
    struct candidate {
        token_id id;
        float    logit;
        float    p;
    };
    void apply_penalty(std::vector<float> & logits) const;

    sampler_params         params_;
    uint32_t               seed_;
    std::mt19937           rng_;
    std::deque<token_id>   recent_;
    std::vector<float>     logits_;  // the step's logits, NaN as -inf, penalised
    std::vector<candidate> cand_;
};

} // namespace gk::run
