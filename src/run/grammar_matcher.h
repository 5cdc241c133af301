// grammar_matcher.h - run a Grammar (grammar.h) over UTF-8 text, byte by byte.
//
// The matcher is a pushdown automaton: its state is a set of parse stacks, each a list of
// positions in the grammar's elements whose top (the back) is a character set still to be
// matched; an empty stack means the text so far is a complete sentence of the grammar.
// A byte that completes a code point advances every stack whose top set holds it, and the
// stacks are expanded again (rule references replaced by their alternatives) until each
// top is a character set. A byte that leaves a UTF-8 sequence unfinished is accepted when
// some stack's top set holds a code point that starts with the bytes so far (so tokens
// that end inside a character are judged as early as possible, as llama.cpp does).
//
// Expansion is iterative and terminates: Grammar::parse refuses left recursion. A grammar
// so ambiguous that one step makes more than k_grammar_max_stacks stacks (or stacks of more
// than k_grammar_max_stack_elements positions together) is reported as
// grammar_step::overflow rather than followed, so a step's cost stays bounded.
#pragma once

#include "grammar.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace gk::run {

inline constexpr size_t k_grammar_max_stacks         = 4096;
inline constexpr size_t k_grammar_max_stack_elements = 1 << 18;  // all stacks of a state together

/** Where the matcher stands after some text. Stacks are sorted and distinct. */
struct grammar_state {
    std::vector<std::vector<uint32_t>> stacks;
    uint32_t                           partial_cp   = 0;  // the bits of an unfinished UTF-8 sequence
    uint8_t                            partial_need = 0;  // its continuation bytes still to come (0: none pending)
    uint8_t                            partial_len  = 0;  // its whole length in bytes

    bool operator==(const grammar_state &) const = default;
};

enum class grammar_step {
    ok,        // the byte is accepted
    rejected,  // no continuation of the text with this byte is in the grammar (or invalid UTF-8)
    overflow,  // more than k_grammar_max_stacks parse stacks
};

class GrammarMatcher {
public:
    /** The grammar must outlive the matcher. */
    explicit GrammarMatcher(const Grammar & g) : g_(g) {}

    /** The state before any text (root expanded); overflow for a hopelessly ambiguous root. */
    grammar_step initial(grammar_state & out) const;
    /** `out`: the state after `in` and one more byte (only valid when ok is returned). */
    grammar_step step(const grammar_state & in, uint8_t byte, grammar_state & out) const;
    /** `state` advanced over all of `bytes`, in place; stops at the first byte not ok. */
    grammar_step advance(grammar_state & state, std::string_view bytes) const;

    /** The text so far is a sentence of the grammar (no UTF-8 sequence pending). */
    static bool is_complete(const grammar_state & s);
    /** More text can follow. */
    static bool can_continue(const grammar_state & s);

    /** Whether all of `text` is a sentence of the grammar. */
    bool matches(std::string_view text) const;

private:
    bool expand(std::vector<uint32_t> stack, std::vector<std::vector<uint32_t>> & out) const;
    bool set_contains(uint32_t pos, uint32_t cp, uint32_t & after) const;
    bool set_meets(uint32_t pos, uint32_t lo, uint32_t hi) const;

    const Grammar & g_;
};

} // namespace gk::run
