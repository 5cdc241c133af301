// grammar.h - GBNF grammars (llama.cpp's grammar format, grammars/README.md there), parsed
// into flat rules that GrammarMatcher (grammar_matcher.h) runs as a pushdown automaton.
//
// Syntax: `name ::= alternatives`, one rule per line (a rule continues over newlines inside
// parentheses and after `::=` or `|`); `#` starts a comment to the end of the line. Elements:
// "literal" with the escapes \n \r \t \\ \" \' \[ \] \xHH \uHHHH \UHHHHHHHH; character
// classes [a-z0-9_] and negated ones [^"\\]; `.` (any character); rule names
// ([A-Za-z0-9_-]+); grouping ( ... ); repetition * + ? {m} {m,} {m,n} on the element before.
// The start rule is `root`. A grammar matches Unicode code points of UTF-8 text.
//
// Refused, with "LINE:COLUMN: what is wrong": malformed syntax, escapes beyond U+10FFFF or of
// a UTF-16 surrogate (U+D800..U+DFFF), an undefined rule, a missing root (an empty grammar),
// repetition counts above k_grammar_max_repeat, a grammar that expands past
// k_grammar_max_elements, parentheses nested deeper than k_grammar_max_depth, and left
// recursion (a rule that can reach itself without consuming a character, e.g.
// `a ::= a "x"` or `("x"?)*`, which a pushdown automaton would expand forever).
// Token-level elements (<[id]>, <token>) are not supported and are refused by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gk::run {

inline constexpr uint32_t k_grammar_max_repeat   = 10000;    // m and n of {m,n}
inline constexpr size_t   k_grammar_max_elements = 1 << 22;  // all rules, after repetition is expanded
inline constexpr int      k_grammar_max_depth    = 128;      // nested parentheses

/** One element of a rule. A rule is its alternatives, each a sequence of elements, the
 *  alternatives separated by `alt` and the last one closed by `end`. A character set is a
 *  `chr` / `chr_not` / `chr_any` element followed by any number of `chr_range_upper` (the
 *  upper bound of the range opened by the element before) and `chr_alt` (one more code
 *  point or range start) elements. */
enum class grammar_op : uint8_t {
    end,              // end of the rule
    alt,              // start of the next alternative
    rule_ref,         // value: rule index
    chr,              // value: code point (a set of code points follows with chr_alt / chr_range_upper)
    chr_not,          // value: code point; the set is negated
    chr_range_upper,  // value: inclusive upper end of the range started by the element before
    chr_alt,          // value: one more code point of the set
    chr_any,          // any code point
};

struct grammar_element {
    grammar_op op;
    uint32_t   value;
};

class Grammar {
public:
    /** Parse GBNF `text`. Returns nullptr and "LINE:COLUMN: message" (1-based, the column
     *  in bytes) in `*error` (may be null) when the grammar is malformed (see above). */
    static std::unique_ptr<Grammar> parse(std::string_view text, std::string * error);

    /** All rules' elements, one after another. */
    const std::vector<grammar_element> & elements() const { return elements_; }
    /** Index in elements() of rule `rule`'s first element. */
    uint32_t rule_start(uint32_t rule) const { return rule_start_[rule]; }
    size_t   n_rules() const { return rule_start_.size(); }
    /** The rule's name: as written, or "parent-N" for one made for a group or repetition. */
    const std::string & rule_name(uint32_t rule) const { return names_[rule]; }
    uint32_t            root() const { return root_; }

private:
    Grammar() = default;
    friend class grammar_parser;

    std::vector<grammar_element> elements_;
    std::vector<uint32_t>        rule_start_;
    std::vector<std::string>     names_;
    uint32_t                     root_ = 0;
};

} // namespace gk::run
