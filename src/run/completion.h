// completion.h - one completion on a Session: evaluate a prompt (reusing the cells the
// cache already holds for its beginning), then sample, detokenize and stop as gk-run's
// completion mode does, with OpenAI's stop strings on top. What a server runs per request.
//
// At temperature 0 the text is gk-run's (`gk-run -p PROMPT -n N --temp 0`) for the same
// prompt tokens: the same sampler chain, the same detokenizer, and logits with the same
// bits whatever part of the prompt came from the cache (batch invariance, model_session.h).
#pragma once

#include "model.h"
#include "model_session.h"
#include "sampler.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gk::run {

struct completion_params {
    std::vector<token_id>    prompt;                 // the tokens to continue (BOS included if wanted)
    int64_t                  n_predict      = -1;    // -1: until end of generation or a full context
    std::vector<std::string> stop;                   // stop strings (not part of the text returned)
    sampler_params           sampling;
    bool                     ignore_eos     = false;  // never sample end-of-generation tokens (llama.cpp's)
    bool                     continues_text = true;  // the prompt has text: the first piece keeps its space
};

/** Why a completion ended. */
enum class finish_reason {
    stop,       // an end-of-generation token or a stop string
    length,     // n_predict tokens, or the context is full
    cancelled,  // the sink asked to stop
};

struct completion_result {
    std::string   text;             // the generated text (cut in front of a stop string)
    int64_t       n_prompt    = 0;  // prompt tokens
    int64_t       n_cached    = 0;  // of them, found in the cache and not evaluated again
    int64_t       n_generated = 0;  // sampled tokens, an end-of-generation token not counted
    finish_reason finish      = finish_reason::length;
};

/** Called once per generated token with the text that has become safe to send (possibly
 *  empty; text that may still become a stop string is held back), and once more at the
 *  end with the rest. Returns false to end the completion (finish_reason::cancelled). */
using completion_sink = std::function<bool(std::string_view)>;

/** What the sampler needs from a run beyond `s`: the context size n_ctx (what -1 means for
 *  --repeat-last-n and --dry-penalty-last-n), DRY's breakers as tokens of `tok` when DRY is
 *  on, and with `ignore_eos` the end-of-generation tokens banned (llama.cpp's --ignore-eos). */
sampler_context sampling_context(const sampler_params & s, const Tokenizer & tok, int64_t n_ctx, bool ignore_eos);

/** Run `p` on `session` (whose cache may hold an earlier completion: the common beginning
 *  is kept). The prompt must be non-empty and fit in the context (checked: false and a
 *  message otherwise). false and a message when evaluation fails (the logits are not
 *  finite, ...); the session stays usable. */
bool run_completion(Session & session, const Model & model, const completion_params & p, const completion_sink & sink,
                    completion_result & out, std::string * error);

} // namespace gk::run
