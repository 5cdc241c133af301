// request.h - the JSON of a completion or chat completion request, checked and turned
// into a completion (run/completion.h). Each wrong field is an api_error (400) naming it.
#pragma once

#include "api_error.h"

#include "run/chat.h"
#include "run/completion.h"
#include "run/tokenizer.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gk_server {

using json = nlohmann::json;

/** A request ready to run. */
struct generation_request {
    gk::run::completion_params params;
    bool                       stream        = false;
    bool                       include_usage = false;  // stream_options.include_usage
};

/** The sampling and stopping fields shared by both endpoints (temperature, top_p, top_k,
 *  min_p, typical_p, repeat_penalty, repeat_last_n, frequency_penalty, presence_penalty,
 *  seed, logit_bias, max_tokens / max_completion_tokens / n_predict, stop, stream,
 *  stream_options, ignore_eos, n) into `req`; the first wrong one as an error. Fields
 *  gk-server cannot honour (n > 1, echo, logprobs, suffix, tools) are refused by name;
 *  other unknown fields are ignored, as OpenAI's clients send extras. */
std::optional<api_error> parse_generation(const json & body, const gk::run::Tokenizer & tok, generation_request & req);

/** /v1/completions' prompt as tokens: a string (tokenized as gk-run does, BOS in front;
 *  empty: BOS alone), an array of one string, or an array of token ids. Sets
 *  req.params.prompt and continues_text. */
std::optional<api_error> parse_prompt(const json & body, const gk::run::Tokenizer & tok, generation_request & req);

/** /v1/chat/completions' messages (roles system, developer, user, assistant; content a
 *  string or text parts) formatted in `tmpl` with the assistant's reply opened, then
 *  tokenized as gk-run's chat mode does (BOS, control tokens parsed). */
std::optional<api_error> parse_messages(const json & body, const gk::run::Tokenizer & tok,
                                        gk::run::chat_template tmpl, generation_request & req);

/** A /v1/embeddings request: the inputs as tokens and how to send the vectors. */
struct embedding_request {
    std::vector<std::vector<gk::run::token_id>> inputs;
    bool                                        base64 = false;  // encoding_format "base64":
                                                                 // little-endian f32 bytes
};

/** /v1/embeddings' fields: 'input' a string, an array of strings, an array of token ids or
 *  an array of arrays of token ids (strings tokenized as llama-server does: BOS and EOS
 *  as the vocabulary asks, control tokens parsed); 'encoding_format' "float" (default) or
 *  "base64"; 'dimensions', when given, must be the model's n_embd (nothing is truncated).
 *  An empty input or an array with none is an error. */
std::optional<api_error> parse_embedding(const json & body, const gk::run::Tokenizer & tok, int64_t n_embd,
                                         embedding_request & req);

/** The object of a JSON body, or an error (not JSON, or not an object). */
std::optional<api_error> parse_body(const std::string & text, json & body);

} // namespace gk_server
