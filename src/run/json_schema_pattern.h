// json_schema_pattern.h - a JSON Schema "pattern" (a regular expression) turned into a GBNF
// expression for the characters between the quotes of a JSON string (json_schema.h).
//
// As llama.cpp's converter, the pattern must match the whole string: it starts with ^ and
// ends with $. Supported: literal characters, `.`, classes [a-z] [^...] with \d \w \s
// inside, \d \w \s \D \W \S, the escapes \n \r \t \f \v \xHH \uHHHH and escaped
// punctuation, groups ( ) and (?: ), alternatives |, and the quantifiers * + ? {m} {m,}
// {m,n} (a lazy `?` after one is accepted and means the same here; a repeated group that can
// match the empty string, as (a*)*, repeats its non-empty matches). \uHHHH surrogate pairs
// are one character; a lone surrogate is refused. The text is JSON:
// a quote or backslash in the pattern is written escaped (\" \\), a tab, newline or other
// control character as its JSON escape; classes and `.` match the characters a JSON string
// holds unescaped (not ", \ or controls). Refused with a message: anchors elsewhere,
// back-references, look-arounds, \b, named groups, nesting deeper than 64, counts above
// k_grammar_max_repeat, and any other construct.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gk::run {

/** The GBNF expression (no rules of its own) for the JSON string contents `pattern`
 *  accepts; nullopt and a message in `*error` (may be null) when it is not supported. */
std::optional<std::string> json_pattern_to_gbnf(std::string_view pattern, std::string * error);

} // namespace gk::run
