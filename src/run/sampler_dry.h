// sampler_dry.h - DRY ("don't repeat yourself"), the repetition penalty of llama.cpp's
// --dry-* options (after koboldcpp's; see docs/gk-run.md "Sampling").
//
// If the text so far ends with a run of tokens that also occurs earlier in the window,
// the token that followed the earlier occurrence would make the repeat one longer. Such a
// token, when the run is at least allowed_length long, loses
//     multiplier * base ^ (run length - allowed_length)
// from its logit (the longest run decides when several earlier occurrences end with it).
// Runs never reach back across a sequence breaker (a newline, ":", ... given as text and
// matched to token sequences through the vocabulary), and a token that is a breaker on
// its own is never penalised.
#pragma once

#include "tokenizer.h"

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace gk::run {

/** One breaker as tokens: the head token, then the tokens that must follow it. */
struct dry_breaker {
    token_id              head;
    std::vector<token_id> tail;

    bool operator==(const dry_breaker &) const = default;
};

/** The token sequences that spell each of `breakers` (text; one longer than 40 bytes is
 *  cut to 40, an empty one skipped), as llama.cpp finds them: every token whose piece
 *  contains the breaker is a breaker alone; a token whose piece ends with the start of the
 *  breaker is a head, its tail the encoding of the rest of the breaker (at most 20 tokens).
 *  Scans the whole vocabulary once. */
std::vector<dry_breaker> dry_breakers_from_text(const Tokenizer & tok, const std::vector<std::string> & breakers);

class DryPenalty {
public:
    /** `window`: how many of the last tokens are looked at (> 0). Off when multiplier is 0
     *  or base < 1 (llama.cpp's rule). */
    DryPenalty(float multiplier, float base, int32_t allowed_length, int64_t window, std::vector<dry_breaker> breakers);

    bool enabled() const { return enabled_; }
    /** Record a token of the text (prompt and generated). */
    void accept(token_id id);
    /** The penalty for each token that would extend a repeat, as (id, amount to subtract).
     *  Empty when nothing repeats. Deterministic: ids in increasing order. */
    const std::vector<std::pair<token_id, float>> & penalties();

private:
    float                                   multiplier_, base_;
    int32_t                                 allowed_length_;
    size_t                                  window_;
    bool                                    enabled_;
    std::vector<dry_breaker>                breakers_;
    std::deque<token_id>                    last_;  // oldest first
    std::vector<token_id>                   rev_;   // the window, newest first
    std::vector<int32_t>                    z_;     // z-function of rev_
    std::unordered_map<token_id, int32_t>   longest_;
    std::vector<std::pair<token_id, float>> out_;
};

}  // namespace gk::run
