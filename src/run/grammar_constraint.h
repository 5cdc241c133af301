// grammar_constraint.h - a grammar enforced on generated tokens (--grammar, --json-schema).
//
// Before each draw, apply() sets the logit of every token whose piece the grammar cannot
// take next to -inf, so the sampler chooses as if those tokens were not in the vocabulary
// (the mask comes first, then penalties, top-k, ..., as in llama.cpp's grammar-first path).
// End-of-generation tokens are allowed only when the text so far is a complete sentence;
// tokens with an empty piece (control tokens) are never allowed. A piece may end inside a
// UTF-8 character (byte tokens): the pending bytes are carried to the next token.
//
// Cost: the pieces are sorted once, so a walk over them shares the work of common
// prefixes (a trie walk) and stops at the first rejected byte of a prefix; the grammar
// state after each byte is interned and its transitions cached across steps, so a step
// over the vocabulary costs about one table look-up per piece byte not shared with the
// piece before (a few ms for a 262 144-token vocabulary).
#pragma once

#include "grammar.h"
#include "grammar_matcher.h"
#include "tokenizer.h"

#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gk::run {

class GrammarConstraint {
public:
    /** `grammar` and `tok` must outlive the constraint. Starts at the grammar's start. */
    GrammarConstraint(const Grammar & grammar, const Tokenizer & tok);

    /** Back to the start of the grammar (a new reply). False with a message on overflow. */
    bool reset(std::string * error);
    /** Mask `logits` (one per model vocabulary entry; entries past the tokenizer's
     *  vocabulary are masked too). False with a message when no token is allowed, or the
     *  grammar is too ambiguous to follow. */
    bool apply(std::span<float> logits, std::string * error);
    /** Advance over token `id`'s piece (an end-of-generation token ends the text). False
     *  with a message when the grammar does not allow the token. */
    bool accept(token_id id, std::string * error);
    /** The text so far is complete and the grammar allows nothing after it. */
    bool finished() const;
    /** The text so far is a complete sentence of the grammar. */
    bool complete() const;

private:
    static constexpr int32_t k_unknown           = -2;
    static constexpr int32_t k_dead              = -1;
    static constexpr int32_t k_overflow          = -3;
    static constexpr size_t  k_max_cached_states = 1 << 14;

    int32_t intern(grammar_state && s);
    int32_t transition(int32_t state, uint8_t byte);
    bool    reset_cache(std::string * error);

    const Tokenizer & tok_;
    GrammarMatcher    matcher_;
    grammar_state     start_;
    bool              start_ok_ = false;
    // The vocabulary's non-empty pieces (not end-of-generation tokens), sorted, their
    // bytes one after another in bytes_ (the walk reads memory in order), each with the
    // length of the prefix it shares with the one before.
    struct piece {
        uint32_t offset;
        uint32_t size;
        uint32_t shared;
        token_id id;
    };
    std::string           bytes_;
    std::vector<piece>    pieces_;
    std::vector<token_id> eog_;
    // Interned states and their transitions (k_unknown until computed).
    std::vector<grammar_state>               states_;
    std::vector<std::array<int32_t, 256>>    trans_;
    std::unordered_map<std::string, int32_t> index_;
    int32_t                                  cur_ = 0;
    std::vector<uint8_t>                     allowed_;  // apply()'s scratch
    std::vector<int32_t>                     path_;     // apply()'s scratch
};

} // namespace gk::run
