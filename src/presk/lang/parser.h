// The PSK parser: tokens to ast::File. The grammar is in docs/language.md.
#pragma once
#include "lang/ast.h"
#include "lang/source.h"

namespace presk {

/// Parses a whole file. Throws Error (with position) on the first syntax error.
ast::File parse(const Source& src);

} // namespace presk
