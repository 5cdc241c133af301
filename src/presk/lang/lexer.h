// The PSK lexer: identifiers, numbers, strings and punctuation; `#` comments.
#pragma once
#include <string>
#include <vector>

#include "lang/source.h"

namespace presk {

enum class Tok { Ident, Number, String, Punct, End };

struct Token {
    Tok kind;
    std::string text; // identifier, number text, string contents, or the punctuation itself
    Loc loc;
};

/// Splits `src` into tokens ending with one Tok::End. Throws Error on a stray character
/// or an unterminated string.
std::vector<Token> lex(const Source& src);

} // namespace presk
