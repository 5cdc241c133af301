#include "lang/lexer.h"

#include <cctype>

namespace presk {

std::vector<Token> lex(const Source& src) {
    const std::string& s = src.text;
    std::vector<Token> out;
    int line = 1, col = 1;
    size_t i = 0;
    auto advance = [&](size_t n) {
        for (size_t k = 0; k < n && i < s.size(); ++k, ++i) {
            if (s[i] == '\n') { ++line; col = 1; } else { ++col; }
        }
    };
    while (i < s.size()) {
        unsigned char c = (unsigned char)s[i];
        if (std::isspace(c)) { advance(1); continue; }
        if (c == '#') { while (i < s.size() && s[i] != '\n') advance(1); continue; }
        Loc loc{line, col};
        if (std::isalpha(c) || c == '_') {
            size_t j = i;
            while (j < s.size() && (std::isalnum((unsigned char)s[j]) || s[j] == '_')) ++j;
            out.push_back({Tok::Ident, s.substr(i, j - i), loc});
            advance(j - i);
        } else if (std::isdigit(c)) {
            size_t j = i;
            while (j < s.size() && std::isdigit((unsigned char)s[j])) ++j;
            // After '.', a tuple's item index: digits alone, so that `t.0.1` is two projections.
            const bool item = !out.empty() && out.back().kind == Tok::Punct && out.back().text == ".";
            if (item && j < s.size() && (std::isalpha((unsigned char)s[j]) || s[j] == '_')) {
                size_t k = j;
                while (k < s.size() && (std::isalnum((unsigned char)s[k]) || s[k] == '_')) ++k;
                throw Error(loc, "'." + s.substr(i, k - i) + "' is neither a field nor a tuple's item (t.0, t.1, ...)");
            }
            if (!item && j + 1 < s.size() && s[j] == '.' && std::isdigit((unsigned char)s[j + 1])) {
                ++j;
                while (j < s.size() && std::isdigit((unsigned char)s[j])) ++j;
            } else if (!item && j < s.size() && s[j] == '.' && (j + 1 == s.size() || s[j + 1] != '.')) {
                const std::string n = s.substr(i, j - i);
                throw Error(loc, "'" + n + ".' is not a number: write " + n + ".0 (or " + n + " for an integer)");
            }
            if (!item && j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
                size_t k = j + 1;
                if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
                if (k < s.size() && std::isdigit((unsigned char)s[k])) {
                    while (k < s.size() && std::isdigit((unsigned char)s[k])) ++k;
                    j = k;
                }
            }
            out.push_back({Tok::Number, s.substr(i, j - i), loc});
            advance(j - i);
        } else if (c == '"') {
            size_t j = i + 1;
            while (j < s.size() && s[j] != '"' && s[j] != '\n') ++j;
            if (j >= s.size() || s[j] != '"') throw Error(loc, "unterminated string");
            out.push_back({Tok::String, s.substr(i + 1, j - i - 1), loc});
            advance(j + 1 - i);
        } else {
            std::string p;
            if (s.compare(i, 3, "...") == 0) p = "...";
            else if (s.compare(i, 2, "->") == 0) p = "->";
            else if (s.compare(i, 2, "..") == 0) p = "..";
            else if (std::string("{}()[],:;.=+-*/<>").find((char)c) != std::string::npos) p = std::string(1, (char)c);
            else throw Error(loc, std::string("unexpected character '") + (char)c + "'");
            out.push_back({Tok::Punct, p, loc});
            advance(p.size());
        }
    }
    out.push_back({Tok::End, "", Loc{line, col}});
    return out;
}

} // namespace presk
