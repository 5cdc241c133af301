// pooling.h - one embedding from a sequence's hidden states, as llama.cpp pools them.
//
// The hidden states are the output-normed states of every token (Session::embed). The
// pooling types carry llama.cpp's numbers (the GGUF key {arch}.pooling_type and
// llama-server's --pooling): mean averages the tokens, cls takes the first, last the
// last; none keeps every token's state. rank (a reranker's score head) needs a
// classification head gk-run does not load.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace gk::run {

enum class pooling : int { none = 0, mean = 1, cls = 2, last = 3, rank = 4 };

/** The pooling type named `name` ("none", "mean", "cls", "last", "rank"), or nullopt. */
std::optional<pooling> pooling_from_name(std::string_view name);
/** The name of `p` ("mean", ...). */
const char * pooling_name(pooling p);

/** Pool `hidden` (n_tokens states of n_embd floats, token after token; n_tokens >= 1) with
 *  mean, cls or last, then scale to unit Euclidean length when `normalize` (llama-server's
 *  default for /v1/embeddings; an all-zero vector stays zero). The mean sums the tokens in
 *  order in double and rounds once. Returns n_embd floats; empty for none or rank, for an
 *  empty input or one whose size is not a multiple of n_embd. */
std::vector<float> pool_hidden(std::span<const float> hidden, int64_t n_embd, pooling p, bool normalize);

}  // namespace gk::run
