#include "lang/source.h"

namespace presk {

std::string Source::line_text(int line) const {
    if (line < 1) return {};
    size_t pos = 0;
    for (int l = 1; l < line; ++l) {
        pos = text.find('\n', pos);
        if (pos == std::string::npos) return {};
        ++pos;
    }
    size_t end = text.find('\n', pos);
    return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

namespace {

/// `s` with every byte that is not printable ASCII (a tab excepted) written as \xNN, so that
/// binary or non-ASCII input never reaches the terminal raw.
std::string escaped(const std::string& s) {
    static const char* const hex = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        if ((c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n') {
            out += (char)c;
            continue;
        }
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
    return out;
}

} // namespace

std::string format_error(const Source& src, const Error& e) {
    if (e.loc.line == 0) return escaped(src.path) + ": error: " + escaped(e.what());
    std::string out = escaped(src.path) + ":" + std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) +
                      ": error: " + escaped(e.what()) + "\n";
    std::string line = src.line_text(e.loc.line);
    int col = e.loc.col;
    if (line.size() > 160) {  // a window of a long line around the column
        const size_t from = col > 100 ? (size_t)col - 100 : 0;
        line = (from ? "..." : "") + line.substr(from, 140) + (from + 140 < line.size() ? "..." : "");
        col -= (int)from - (from ? 3 : 0);
    }
    out += "  " + escaped(line) + "\n  ";
    for (int i = 1; i < col && i <= (int)line.size(); ++i) {
        const char c = line[(size_t)i - 1];
        out += c == '\t' ? "\t" : escaped(std::string(1, c)).size() == 1 ? " " : "    ";
    }
    out += "^";
    return out;
}

} // namespace presk
