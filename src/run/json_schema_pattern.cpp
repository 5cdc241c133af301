// json_schema_pattern.cpp - see json_schema_pattern.h.
#include "json_schema_pattern.h"

#include "grammar.h"
#include "tokenizer_utf8.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

namespace gk::run {

namespace {

constexpr int    k_max_pattern_depth = 64;
constexpr size_t k_max_pattern_gbnf  = 1 << 20;  // bytes of GBNF

using range = std::pair<uint32_t, uint32_t>;

/** A set of code points: `ranges`, or all but them when `negated`. */
struct char_set {
    std::vector<range> ranges;
    bool               negated = false;

    bool contains(uint32_t cp) const {
        bool in = false;
        for (const auto & [a, b] : ranges) in = in || (cp >= a && cp <= b);
        return in != negated;
    }
};

std::string hex_escape(uint32_t cp) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\U%08X", cp);
    return buf;
}

/** The JSON text of a character a JSON string cannot hold as itself ("" for one it can). */
std::string json_escape(uint32_t cp) {
    switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
    }
    if (cp < 0x20 || cp == 0x7F) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        return buf;
    }
    return "";
}

/** `text` as a GBNF literal. */
std::string gbnf_literal(const std::string & text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// The characters a JSON string holds as themselves (json_schema.cpp's `char` rule).
constexpr range k_safe[] = {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7E}, {0x80, 0x10FFFF}};
// The characters written escaped that a negated set or `.` may produce.
constexpr uint32_t k_common_escaped[] = {'"', '\\', '\t', '\n', '\r'};

/** A part of the pattern as GBNF: `text` (one unit: it takes a quantifier, after parentheses
 *  where it ends in one), whether it matches the empty string, and a unit for its non-empty
 *  matches (nullopt when it has none). An unbounded repetition of a part that matches the
 *  empty string repeats `nonempty` instead: (a*)* is written (a+)*, which the GBNF parser
 *  accepts (it refuses a repeated group that can be empty as left recursion). */
struct piece {
    std::string                text;
    bool                       nullable = false;
    std::optional<std::string> nonempty;
};

piece solid(std::string text) {
    piece p;
    p.nonempty = text;
    p.text     = std::move(text);
    return p;
}

/** `unit` with the quantifier `q`, in parentheses where it ends in a quantifier already. */
std::string quantified(const std::string & unit, const std::string & q) {
    const char last = unit.empty() ? ' ' : unit.back();
    if (last == '*' || last == '+' || last == '?' || last == '}') return "(" + unit + ")" + q;
    return unit + q;
}

/** `atom` repeated from `lo` to `hi` times (`hi` nullopt: unbounded); `suffix` as written. */
piece repeat_piece(const piece & atom, uint32_t lo, std::optional<uint32_t> hi, const std::string & suffix) {
    piece p;
    if (atom.nullable) {  // any number up to hi of its non-empty matches
        p.nullable = true;
        if (!atom.nonempty || hi == 0u) {
            p.text = "\"\"";
            return p;
        }
        const std::string & ne = *atom.nonempty;
        if (!hi) {
            p.text     = quantified(ne, "*");
            p.nonempty = quantified(ne, "+");
        } else {
            p.text     = quantified(atom.text, suffix);
            p.nonempty = *hi == 1 ? ne : quantified(ne, "{1," + std::to_string(*hi) + "}");
        }
        return p;
    }
    p.text     = quantified(atom.text, suffix);
    p.nullable = lo == 0;
    if (!p.nullable) {
        p.nonempty = p.text;
    } else if (!hi) {
        p.nonempty = quantified(atom.text, "+");
    } else if (*hi > 0) {
        p.nonempty = *hi == 1 ? atom.text : quantified(atom.text, "{1," + std::to_string(*hi) + "}");
    }
    return p;
}

class pattern_parser {
public:
    explicit pattern_parser(std::vector<uint32_t> cps) : p_(std::move(cps)) {}

    std::optional<std::string> run(std::string * error) {
        piece out;
        if (parse_alternatives(0, out) && pos_ != p_.size()) fail("unbalanced ')'");
        if (err_.empty() && out.text.size() > k_max_pattern_gbnf) fail("the pattern expands to too large a grammar");
        if (!err_.empty()) {
            if (error) *error = "pattern: " + err_;
            return std::nullopt;
        }
        return out.text;
    }

private:
    std::vector<uint32_t> p_;
    size_t                pos_ = 0;
    size_t                at_  = 0;  // where the construct being read starts, for messages
    std::string           err_;

    bool fail(std::string msg) {
        if (err_.empty()) err_ = std::move(msg) + " (at character " + std::to_string(at_ + 1) + " after the ^)";
        return false;
    }

    bool     at_end() const { return pos_ >= p_.size(); }
    uint32_t peek() const { return at_end() ? 0 : p_[pos_]; }

    /** GBNF for the JSON text of one character of `s`. */
    bool emit_set(const char_set & s, std::string & out) {
        std::vector<std::string> alts;
        std::string              cls;
        if (!s.negated) {
            for (const auto & [a, b] : s.ranges) {
                for (const auto & [sa, sb] : k_safe) {
                    const uint32_t lo = std::max(a, sa), hi = std::min(b, sb);
                    if (lo > hi) continue;
                    cls += hex_escape(lo);
                    if (hi > lo) cls.append("-").append(hex_escape(hi));
                }
                for (uint32_t cp = a; cp <= b && cp <= 0x7F; ++cp) {
                    const std::string e = json_escape(cp);
                    if (!e.empty()) alts.push_back(gbnf_literal(e));
                }
            }
            if (!cls.empty()) alts.insert(alts.begin(), "[" + cls + "]");
        } else {
            cls = "[^\"\\\\\\x00-\\x1F\\x7F";
            for (const auto & [a, b] : s.ranges) {
                cls += hex_escape(a);
                if (b > a) cls.append("-").append(hex_escape(b));
            }
            alts.push_back(cls + "]");
            for (uint32_t cp : k_common_escaped) {
                if (s.contains(cp)) alts.push_back(gbnf_literal(json_escape(cp)));
            }
        }
        if (alts.empty()) return fail("a character class that matches no character a JSON string can hold");
        std::string expr(1, '(');
        for (size_t i = 0; i < alts.size(); ++i) {
            if (i) expr += " | ";
            expr += alts[i];
        }
        out = std::move(expr) + ")";
        return true;
    }

    bool hex_digits(int n, uint32_t & cp) {
        cp = 0;
        for (int i = 0; i < n; ++i) {
            const uint32_t c = peek();
            int            v = -1;
            if (c >= '0' && c <= '9') v = static_cast<int>(c - '0');
            if (c >= 'a' && c <= 'f') v = static_cast<int>(c - 'a' + 10);
            if (c >= 'A' && c <= 'F') v = static_cast<int>(c - 'A' + 10);
            if (v < 0) return fail("\\x needs 2 and \\u 4 hexadecimal digits");
            cp = cp * 16 + static_cast<uint32_t>(v);
            ++pos_;
        }
        return true;
    }

    /** After \\u: four hexadecimal digits; a UTF-16 surrogate pair (\\uD83D\\uDE00) is one
     *  code point, a lone surrogate is refused. */
    bool parse_u_escape(uint32_t & cp) {
        if (!hex_digits(4, cp)) return false;
        if (cp < 0xD800 || cp > 0xDFFF) return true;
        if (cp <= 0xDBFF && pos_ + 6 <= p_.size() && p_[pos_] == '\\' && p_[pos_ + 1] == 'u') {
            const size_t back = pos_;
            uint32_t     low  = 0;
            pos_ += 2;
            if (hex_digits(4, low) && low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                return true;
            }
            pos_ = back;
            if (!err_.empty()) return false;
        }
        return fail("a lone UTF-16 surrogate \\u" + std::string(1, "0123456789ABCDEF"[(cp >> 12) & 15]) +
                    "0123456789ABCDEF"[(cp >> 8) & 15] + "0123456789ABCDEF"[(cp >> 4) & 15] +
                    "0123456789ABCDEF"[cp & 15] + " is not a character");
    }

    /** After a backslash: a class escape (\d \w \s and negations) into `set`, or one code
     *  point into `cp` (then `set` stays empty). */
    bool parse_escape(char_set & set, uint32_t & cp, bool in_class) {
        if (at_end()) return fail("a pattern cannot end with a backslash");
        const uint32_t e   = p_[pos_++];
        const auto     cls = [&](std::vector<range> r, bool neg) {
            set.ranges  = std::move(r);
            set.negated = neg;
            return true;
        };
        switch (e) {
        case 'd': return cls({{'0', '9'}}, false);
        case 'D': return cls({{'0', '9'}}, true);
        case 'w': return cls({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}, false);
        case 'W': return cls({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}, true);
        case 's': return cls({{'\t', '\r'}, {' ', ' '}}, false);
        case 'S': return cls({{'\t', '\r'}, {' ', ' '}}, true);
        case 'n': cp = '\n'; return true;
        case 'r': cp = '\r'; return true;
        case 't': cp = '\t'; return true;
        case 'f': cp = '\f'; return true;
        case 'v': cp = '\v'; return true;
        case 'x': return hex_digits(2, cp);
        case 'u': return parse_u_escape(cp);
        case 'b':
            if (in_class) {
                cp = '\b';
                return true;
            }
            return fail("word boundaries (\\b) are not supported");
        default: break;
        }
        if ((e >= '0' && e <= '9') || e == 'k') return fail("back-references are not supported");
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
            return fail(std::string("unknown escape \\") + static_cast<char>(e));
        }
        cp = e;  // escaped punctuation stands for itself
        return true;
    }

    bool parse_class(std::string & out) {
        char_set set;
        if (peek() == '^') {
            set.negated = true;
            ++pos_;
        }
        bool first = true;
        while (first || peek() != ']') {
            if (at_end()) return fail("unterminated character class");
            at_         = pos_;
            first       = false;
            uint32_t lo = p_[pos_++];
            if (lo == '\\') {
                char_set inner;
                if (!parse_escape(inner, lo, true)) return false;
                if (!inner.ranges.empty()) {
                    if (inner.negated) return fail("\\D, \\W and \\S inside a class are not supported");
                    set.ranges.insert(set.ranges.end(), inner.ranges.begin(), inner.ranges.end());
                    continue;
                }
            }
            uint32_t hi = lo;
            if (peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
                ++pos_;
                hi = p_[pos_++];
                if (hi == '\\') {
                    char_set inner;
                    if (!parse_escape(inner, hi, true)) return false;
                    if (!inner.ranges.empty()) return fail("a class escape cannot end a range");
                }
                if (hi < lo) return fail("a character range ends before it starts");
            }
            set.ranges.emplace_back(lo, hi);
        }
        ++pos_;  // ']'
        return emit_set(set, out);
    }

    bool parse_count(uint32_t & v) {
        uint64_t x = 0;
        if (!(peek() >= '0' && peek() <= '9')) return fail("expected a number in {...}");
        while (peek() >= '0' && peek() <= '9') {
            x = x * 10 + (peek() - '0');
            if (x > k_grammar_max_repeat) {
                return fail("a repetition count above " + std::to_string(k_grammar_max_repeat));
            }
            ++pos_;
        }
        v = static_cast<uint32_t>(x);
        return true;
    }

    bool parse_atom(int depth, piece & result) {
        std::string out;
        if (!parse_atom_text(depth, out, result)) return false;
        if (!out.empty()) result = solid(std::move(out));
        return true;
    }

    /** One atom: a character set into `out`, or a group into `group` (then `out` stays empty). */
    bool parse_atom_text(int depth, std::string & out, piece & group) {
        at_              = pos_;
        const uint32_t c = p_[pos_++];
        if (c == '(') {
            if (peek() == '?') {
                if (pos_ + 1 < p_.size() && p_[pos_ + 1] == ':') {
                    pos_ += 2;
                } else {
                    return fail("look-arounds and named groups are not supported");
                }
            }
            piece inner;
            if (!parse_alternatives(depth + 1, inner)) return false;
            if (peek() != ')') return fail("unclosed '('");
            ++pos_;
            group.text     = "(" + inner.text + ")";
            group.nullable = inner.nullable;
            group.nonempty = inner.nonempty;
            return true;
        }
        if (c == '[') return parse_class(out);
        if (c == '.') return emit_set({{{'\n', '\n'}}, true}, out);
        if (c == '^' || c == '$') return fail("the anchors ^ and $ are supported only at the ends of the pattern");
        if (c == '*' || c == '+' || c == '?' || c == '{') return fail("a quantifier with nothing to repeat");
        uint32_t cp = c;
        if (c == '\\') {
            char_set set;
            if (!parse_escape(set, cp, false)) return false;
            if (!set.ranges.empty()) return emit_set(set, out);
        }
        return emit_set({{{cp, cp}}, false}, out);
    }

    bool parse_sequence(int depth, piece & out) {
        std::vector<piece> items;
        while (!at_end() && peek() != '|' && peek() != ')') {
            piece atom;
            if (!parse_atom(depth, atom)) return false;
            at_              = pos_;
            const uint32_t q = peek();
            if (q == '*' || q == '+' || q == '?') {
                ++pos_;
                atom = repeat_piece(atom, q == '+' ? 1 : 0, q == '?' ? std::optional<uint32_t>(1) : std::nullopt,
                                    std::string(1, static_cast<char>(q)));
            } else if (q == '{') {
                ++pos_;
                uint32_t lo = 0, hi = 0;
                bool     bounded = true;
                if (!parse_count(lo)) return false;
                std::string suffix = std::string("{").append(std::to_string(lo));
                hi                 = lo;
                if (peek() == ',') {
                    ++pos_;
                    suffix += ",";
                    bounded = peek() != '}';
                    if (bounded) {
                        if (!parse_count(hi)) return false;
                        if (hi < lo) return fail("a repetition {m,n} with n < m");
                        suffix += std::to_string(hi);
                    }
                }
                if (peek() != '}') return fail("expected '}'");
                ++pos_;
                atom = repeat_piece(atom, lo, bounded ? std::optional<uint32_t>(hi) : std::nullopt, suffix + "}");
            } else {
                items.push_back(std::move(atom));
                continue;
            }
            if (peek() == '?') ++pos_;  // lazy: the same set of strings
            at_ = pos_;
            if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') {
                return fail("a quantifier after a quantifier");
            }
            items.push_back(std::move(atom));
        }
        // The non-empty matches of an all-nullable sequence: the first non-empty part is
        // item i's, the rest as they are.
        out.nullable = true;
        for (const piece & p : items) {
            out.text += (out.text.empty() ? "" : " ") + p.text;
            out.nullable = out.nullable && p.nullable;
        }
        if (!out.nullable) {
            out.nonempty = items.size() == 1 ? out.text : "(" + out.text + ")";
            return true;
        }
        std::vector<std::string> alts;
        for (size_t i = 0; i < items.size(); ++i) {
            if (!items[i].nonempty) continue;
            std::string alt = *items[i].nonempty;
            for (size_t k = i + 1; k < items.size(); ++k) alt += " " + items[k].text;
            alts.push_back(std::move(alt));
            if (alts.back().size() > k_max_pattern_gbnf) return fail("the pattern expands to too large a grammar");
        }
        if (alts.size() == 1 && alts[0] == *items.back().nonempty) {
            out.nonempty = alts[0];
        } else if (!alts.empty()) {
            std::string ne;
            for (size_t i = 0; i < alts.size(); ++i) ne += (i ? " | " : "") + alts[i];
            out.nonempty = "(" + ne + ")";
        }
        return true;
    }

    bool parse_alternatives(int depth, piece & out) {
        if (depth > k_max_pattern_depth) {
            return fail("groups nested deeper than " + std::to_string(k_max_pattern_depth));
        }
        std::vector<piece> alts(1);
        if (!parse_sequence(depth, alts.back())) return false;
        while (peek() == '|') {
            ++pos_;
            alts.emplace_back();
            if (!parse_sequence(depth, alts.back())) return false;
        }
        std::vector<std::string> ne;
        for (size_t i = 0; i < alts.size(); ++i) {
            out.text += (i ? " | " : "") + (alts[i].text.empty() ? "\"\"" : alts[i].text);
            out.nullable = out.nullable || alts[i].nullable;
            if (alts[i].nonempty) ne.push_back(*alts[i].nonempty);
        }
        if (alts.size() > 1) out.text = "(" + out.text + ")";
        if (!out.nullable) {
            out.nonempty = out.text;
        } else if (ne.size() == 1) {
            out.nonempty = ne[0];
        } else if (!ne.empty()) {
            std::string e;
            for (size_t i = 0; i < ne.size(); ++i) e += (i ? " | " : "") + ne[i];
            out.nonempty = "(" + e + ")";
        }
        return true;
    }
};

} // namespace

std::optional<std::string> json_pattern_to_gbnf(std::string_view pattern, std::string * error) {
    std::vector<uint32_t> cps;
    for (size_t i = 0; i < pattern.size();) cps.push_back(utf8::next(pattern, i));
    const bool escaped_end = cps.size() >= 2 && cps[cps.size() - 2] == '\\';
    if (cps.size() < 2 || cps.front() != '^' || cps.back() != '$' || escaped_end) {
        if (error) *error = "pattern: only patterns that match the whole string (^...$) are supported";
        return std::nullopt;
    }
    cps.pop_back();
    cps.erase(cps.begin());
    return pattern_parser(std::move(cps)).run(error);
}

} // namespace gk::run
