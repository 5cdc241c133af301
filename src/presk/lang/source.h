// Source text, positions and the one error type of the front end.
#pragma once
#include <stdexcept>
#include <string>

namespace presk {

/// A position in a source file, 1-based; line 0 means "no position".
struct Loc {
    int line = 0;
    int col = 0;
};

/// A file's name and text, kept so that errors can show the offending line.
struct Source {
    std::string path;
    std::string text;
    /// The text of line `line` (1-based) without its newline; empty if out of range.
    std::string line_text(int line) const;
};

/// A diagnostic raised by the lexer, parser, checker, transforms or interpreter.
/// `loc` may be empty (runtime errors name a site in the message instead).
struct Error : std::runtime_error {
    Loc loc;
    Error(Loc l, const std::string& msg) : std::runtime_error(msg), loc(l) {}
};

/// "file:line:col: error: msg", then the source line and a caret under the column.
std::string format_error(const Source& src, const Error& e);

} // namespace presk
