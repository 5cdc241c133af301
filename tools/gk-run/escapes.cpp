// escapes.cpp - see escapes.h.
#include "escapes.h"

namespace gk_run_tool {

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

} // namespace

std::string process_escapes(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\' || i + 1 == text.size()) {
            out += text[i];
            continue;
        }
        const char c = text[i + 1];
        char       e = 0;
        switch (c) {
        case 'n': e = '\n'; break;
        case 'r': e = '\r'; break;
        case 't': e = '\t'; break;
        case '\'': e = '\''; break;
        case '"': e = '"'; break;
        case '\\': e = '\\'; break;
        case 'x':
            if (i + 3 < text.size() && hex_digit(text[i + 2]) >= 0 && hex_digit(text[i + 3]) >= 0) {
                out += static_cast<char>(hex_digit(text[i + 2]) * 16 + hex_digit(text[i + 3]));
                i += 3;
                continue;
            }
            break;
        default: break;
        }
        if (e == 0) {
            out += '\\';  // not an escape: the backslash stays, the next character is read as usual
            continue;
        }
        out += e;
        ++i;
    }
    return out;
}

} // namespace gk_run_tool
