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

std::string format_error(const Source& src, const Error& e) {
    if (e.loc.line == 0) return src.path + ": error: " + e.what();
    std::string out = src.path + ":" + std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) +
                      ": error: " + e.what() + "\n";
    std::string line = src.line_text(e.loc.line);
    out += "  " + line + "\n  ";
    for (int i = 1; i < e.loc.col && i <= (int)line.size(); ++i) out += line[i - 1] == '\t' ? '\t' : ' ';
    out += "^";
    return out;
}

} // namespace presk
