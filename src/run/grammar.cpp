// grammar.cpp - see grammar.h.
#include "grammar.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <utility>

namespace gk::run {

namespace {

constexpr uint32_t k_unbounded = UINT32_MAX;

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

} // namespace

/** Recursive-descent GBNF parser; the recursion is bounded by k_grammar_max_depth. */
class grammar_parser {
public:
    explicit grammar_parser(std::string_view src) : src_(src) {}

    std::unique_ptr<Grammar> run(std::string * error) {
        const bool ok = parse_all() && check_defined() && check_left_recursion();
        if (!ok) {
            if (error) *error = where(err_pos_) + ": " + err_;
            return nullptr;
        }
        std::unique_ptr<Grammar> g(new Grammar());
        for (size_t r = 0; r < rules_.size(); ++r) {
            g->rule_start_.push_back(static_cast<uint32_t>(g->elements_.size()));
            g->elements_.insert(g->elements_.end(), rules_[r].begin(), rules_[r].end());
        }
        g->names_ = names_;
        g->root_  = ids_.at("root");
        return g;
    }

private:
    using rule_body = std::vector<grammar_element>;

    std::string_view                          src_;
    size_t                                    pos_ = 0;
    std::vector<rule_body>                    rules_;
    std::vector<std::string>                  names_;
    std::vector<bool>                         defined_;
    std::vector<bool>                         generated_;  // made for a group or repetition
    std::vector<size_t>                       at_;         // where the rule was defined, else first referenced
    std::unordered_map<std::string, uint32_t> ids_;
    std::unordered_map<std::string, uint32_t> n_generated_;     // per parent name
    size_t                                    n_elements_ = 0;  // in finished rule bodies
    std::string                               err_;
    size_t                                    err_pos_ = 0;

    bool fail(size_t at, std::string msg) {
        if (err_.empty()) {
            err_     = std::move(msg);
            err_pos_ = at;
        }
        return false;
    }

    std::string where(size_t at) const {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at && i < src_.size(); ++i) {
            if (src_[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        return std::to_string(line) + ":" + std::to_string(col);
    }

    bool eof() const { return pos_ >= src_.size(); }
    char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

    std::string describe_here() const {
        if (eof()) return "the end of the grammar";
        const char c = peek();
        if (c == '\n') return "end of line";
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7F) return "a control character";
        if (static_cast<unsigned char>(c) >= 0x80) return "a non-ASCII character";
        return std::string("'") + c + "'";
    }

    uint32_t add_rule(std::string name, size_t at) {
        const auto id = static_cast<uint32_t>(rules_.size());
        rules_.emplace_back();
        names_.push_back(name);
        defined_.push_back(false);
        generated_.push_back(false);
        at_.push_back(at);
        ids_.emplace(std::move(name), id);
        return id;
    }

    /** The rule the grammar calls `name`. A rule made for a group that took the name
     *  first (a grammar may name its own rules parent-N) is renamed. */
    uint32_t symbol(const std::string & name, size_t at) {
        auto it = ids_.find(name);
        if (it == ids_.end()) return add_rule(name, at);
        const uint32_t id = it->second;
        if (!generated_[id]) return id;
        ids_.erase(it);
        names_[id] = fresh_name(name.substr(0, name.rfind('-')));
        ids_.emplace(names_[id], id);
        return add_rule(name, at);
    }

    std::string fresh_name(const std::string & parent) {
        for (;;) {
            std::string name = parent + "-" + std::to_string(++n_generated_[parent]);
            if (!ids_.count(name)) return name;
        }
    }

    /** A rule for a group or repetition inside rule `parent`, named parent-N. */
    uint32_t generated_rule(const std::string & parent, size_t at) {
        const uint32_t id = add_rule(fresh_name(parent), at);
        defined_[id]      = true;
        generated_[id]    = true;
        return id;
    }

    void finish_rule(uint32_t id, rule_body && body) {
        n_elements_ += body.size();
        rules_[id] = std::move(body);
    }

    void skip_space(bool newline_ok) {
        while (!eof()) {
            const char c = peek();
            if (c == ' ' || c == '\t') {
                ++pos_;
            } else if (c == '#') {
                while (!eof() && peek() != '\n') ++pos_;
            } else if ((c == '\n' || c == '\r') && newline_ok) {
                ++pos_;
            } else {
                break;
            }
        }
    }

    std::string parse_name() {
        const size_t start = pos_;
        while (!eof() && is_word_char(peek())) ++pos_;
        return std::string(src_.substr(start, pos_ - start));
    }

    /** One code point of a literal or class: an escape or a UTF-8 sequence. */
    bool parse_char(uint32_t & cp) {
        const size_t start = pos_;
        const auto   c     = static_cast<unsigned char>(peek());
        if (c == '\\') {
            ++pos_;
            if (eof()) return fail(start, "unfinished escape at the end of the grammar");
            const char e = peek();
            ++pos_;
            int digits = 0;
            switch (e) {
            case 'n': cp = '\n'; return true;
            case 'r': cp = '\r'; return true;
            case 't': cp = '\t'; return true;
            case '\\':
            case '"':
            case '\'':
            case '[':
            case ']':
            case '-':
            case '^':
            case '/': cp = static_cast<unsigned char>(e); return true;
            case 'x': digits = 2; break;
            case 'u': digits = 4; break;
            case 'U': digits = 8; break;
            default: break;
            }
            if (digits == 0) {
                const auto u = static_cast<unsigned char>(e);
                if (u > 0x20 && u < 0x7F) return fail(start, std::string("unknown escape '\\") + e + "'");
                char buf[40];
                std::snprintf(buf, sizeof buf, "a backslash before the byte 0x%02X", u);
                return fail(start, buf);
            }
            cp = 0;
            for (int i = 0; i < digits; ++i) {
                const int v = hex_value(peek());
                if (v < 0) {
                    return fail(start, std::string("escape '\\") + e + "' needs " + std::to_string(digits) +
                                           " hexadecimal digits");
                }
                cp = cp * 16 + static_cast<uint32_t>(v);
                ++pos_;
            }
            if (cp > 0x10FFFF) return fail(start, "escape beyond U+10FFFF");
            if (cp >= 0xD800 && cp <= 0xDFFF) {
                return fail(start, "escape of a UTF-16 surrogate (U+D800 to U+DFFF is not a character)");
            }
            return true;
        }
        int len = c < 0x80                   ? 1
                  : (c >= 0xC2 && c <= 0xDF) ? 2
                  : (c >= 0xE0 && c <= 0xEF) ? 3
                  : (c >= 0xF0 && c <= 0xF4) ? 4
                                             : 0;
        if (len == 0) return fail(start, "invalid UTF-8");
        cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
        ++pos_;
        for (int i = 1; i < len; ++i) {
            const auto b = static_cast<unsigned char>(peek());
            if (eof() || (b & 0xC0) != 0x80) return fail(start, "invalid UTF-8");
            cp = (cp << 6) | (b & 0x3Fu);
            ++pos_;
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            return fail(start, "invalid UTF-8");
        }
        return true;
    }

    bool parse_count(uint32_t & v) {
        const size_t start = pos_;
        uint64_t     x     = 0;
        if (!(peek() >= '0' && peek() <= '9')) {
            return fail(pos_, "expected a number in {...}, found " + describe_here());
        }
        while (peek() >= '0' && peek() <= '9') {
            x = x * 10 + static_cast<uint64_t>(peek() - '0');
            if (x > k_grammar_max_repeat) {
                return fail(start, "repetition count above " + std::to_string(k_grammar_max_repeat));
            }
            ++pos_;
        }
        v = static_cast<uint32_t>(x);
        return true;
    }

    /** Replace the symbol out[sym_start..] by `min_n` to `max_n` repetitions of it. */
    bool repeat(const std::string & rule_name, rule_body & out, size_t sym_start, uint32_t min_n, uint32_t max_n,
                size_t at) {
        rule_body sym(out.begin() + static_cast<std::ptrdiff_t>(sym_start), out.end());
        out.resize(sym_start);
        const uint64_t n_copies = static_cast<uint64_t>(min_n) + (max_n == k_unbounded ? 1 : max_n - min_n);
        if (sym.size() > 1 && n_copies > 1) {  // repeat a reference to it, not its elements
            const uint32_t s = generated_rule(rule_name, at);
            sym.push_back({grammar_op::end, 0});
            finish_rule(s, std::move(sym));
            sym = {{grammar_op::rule_ref, s}};
        }
        if (n_elements_ + out.size() + n_copies * (sym.size() + 4) > k_grammar_max_elements) {
            return fail(at, "the grammar expands to more than " + std::to_string(k_grammar_max_elements) +
                                " elements (repetition counts too large)");
        }
        for (uint32_t i = 0; i < min_n; ++i) out.insert(out.end(), sym.begin(), sym.end());
        if (max_n == k_unbounded) {  // R ::= sym R |
            const uint32_t r = generated_rule(rule_name, at);
            rule_body      body(sym);
            body.push_back({grammar_op::rule_ref, r});
            body.push_back({grammar_op::alt, 0});
            body.push_back({grammar_op::end, 0});
            finish_rule(r, std::move(body));
            out.push_back({grammar_op::rule_ref, r});
        } else if (max_n > min_n) {  // R1 ::= sym | ;  Rk ::= sym R(k-1) |
            uint32_t prev = 0;
            for (uint32_t k = 1; k <= max_n - min_n; ++k) {
                const uint32_t r = generated_rule(rule_name, at);
                rule_body      body(sym);
                if (k > 1) body.push_back({grammar_op::rule_ref, prev});
                body.push_back({grammar_op::alt, 0});
                body.push_back({grammar_op::end, 0});
                finish_rule(r, std::move(body));
                prev = r;
            }
            out.push_back({grammar_op::rule_ref, prev});
        }
        return true;
    }

    bool parse_sequence(const std::string & rule_name, rule_body & out, int depth) {
        const bool nested    = depth > 0;
        size_t     sym_start = out.size();
        while (!eof()) {
            const size_t at = pos_;
            const char   c  = peek();
            if (c == '"') {
                sym_start = out.size();
                ++pos_;
                while (peek() != '"') {
                    if (eof()) return fail(at, "unterminated literal");
                    uint32_t cp = 0;
                    if (!parse_char(cp)) return false;
                    out.push_back({grammar_op::chr, cp});
                }
                ++pos_;
            } else if (c == '[') {
                sym_start = out.size();
                ++pos_;
                grammar_op op = grammar_op::chr;
                if (peek() == '^') {
                    op = grammar_op::chr_not;
                    ++pos_;
                }
                bool first = true;
                while (peek() != ']') {
                    if (eof()) return fail(at, "unterminated character class");
                    uint32_t lo = 0;
                    if (!parse_char(lo)) return false;
                    out.push_back({first ? op : grammar_op::chr_alt, lo});
                    first = false;
                    if (peek() == '-' && peek(1) != ']' && pos_ + 1 < src_.size()) {
                        ++pos_;
                        const size_t hi_at = pos_;
                        uint32_t     hi    = 0;
                        if (!parse_char(hi)) return false;
                        if (hi < lo) return fail(hi_at, "character range ends before it starts");
                        out.push_back({grammar_op::chr_range_upper, hi});
                    }
                }
                if (first) return fail(at, "empty character class");
                ++pos_;
            } else if (is_word_char(c)) {
                sym_start              = out.size();
                const std::string name = parse_name();
                out.push_back({grammar_op::rule_ref, symbol(name, at)});
            } else if (c == '(') {
                sym_start = out.size();
                ++pos_;
                skip_space(true);
                const uint32_t sub = generated_rule(rule_name, at);
                rule_body      body;
                if (!parse_alternates(rule_name, body, depth + 1)) return false;
                if (peek() != ')') {
                    return fail(pos_, "expected ')' to close the '(' at " + where(at) + ", found " + describe_here());
                }
                ++pos_;
                finish_rule(sub, std::move(body));
                out.push_back({grammar_op::rule_ref, sub});
            } else if (c == '.') {
                sym_start = out.size();
                ++pos_;
                out.push_back({grammar_op::chr_any, 0});
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                if (sym_start == out.size()) return fail(at, std::string("'") + c + "' repeats nothing");
                ++pos_;
                uint32_t min_n = 0, max_n = k_unbounded;
                if (c == '+') min_n = 1;
                if (c == '?') max_n = 1;
                if (c == '{') {
                    skip_space(false);
                    if (!parse_count(min_n)) return false;
                    skip_space(false);
                    max_n = min_n;
                    if (peek() == ',') {
                        ++pos_;
                        skip_space(false);
                        max_n = k_unbounded;
                        if (peek() != '}' && !parse_count(max_n)) return false;
                        skip_space(false);
                    }
                    if (peek() != '}') {
                        return fail(pos_,
                                    "expected '}' to close the '{' at " + where(at) + ", found " + describe_here());
                    }
                    ++pos_;
                    if (max_n < min_n) return fail(at, "repetition {m,n} with n < m");
                }
                if (!repeat(rule_name, out, sym_start, min_n, max_n, at)) return false;
                sym_start = out.size();  // a repetition is not repeated again: (x*)* is written so
            } else if (c == '<') {
                return fail(at, "token-level elements (<...>) are not supported");
            } else {
                break;
            }
            skip_space(nested);
        }
        return true;
    }

    bool parse_alternates(const std::string & rule_name, rule_body & out, int depth) {
        if (depth > k_grammar_max_depth) {
            return fail(pos_, "parentheses nested deeper than " + std::to_string(k_grammar_max_depth));
        }
        if (!parse_sequence(rule_name, out, depth)) return false;
        while (peek() == '|') {
            out.push_back({grammar_op::alt, 0});
            ++pos_;
            skip_space(true);
            if (!parse_sequence(rule_name, out, depth)) return false;
        }
        out.push_back({grammar_op::end, 0});
        return true;
    }

    bool parse_all() {
        skip_space(true);
        while (!eof()) {
            const size_t at   = pos_;
            std::string  name = parse_name();
            if (name.empty()) return fail(at, "expected a rule name, found " + describe_here());
            skip_space(false);
            if (src_.substr(pos_, 3) != "::=") {
                return fail(pos_, "expected '::=' after rule name '" + name + "', found " + describe_here());
            }
            pos_ += 3;
            skip_space(true);
            const uint32_t id = symbol(name, at);
            if (defined_[id]) return fail(at, "rule '" + name + "' is defined twice");
            defined_[id] = true;
            at_[id]      = at;
            rule_body body;
            if (!parse_alternates(name, body, 0)) return false;
            finish_rule(id, std::move(body));
            if (n_elements_ > k_grammar_max_elements) {
                return fail(at,
                            "the grammar expands to more than " + std::to_string(k_grammar_max_elements) + " elements");
            }
            if (peek() == '\r') ++pos_;
            if (!eof()) {
                if (peek() != '\n') return fail(pos_, "expected the end of the line, found " + describe_here());
                ++pos_;
            }
            skip_space(true);
        }
        return true;
    }

    bool check_defined() {
        for (size_t r = 0; r < rules_.size(); ++r) {
            if (!defined_[r]) return fail(at_[r], "undefined rule '" + names_[r] + "'");
        }
        if (rules_.empty()) return fail(0, "the grammar is empty (it has no 'root' rule)");
        if (!ids_.count("root")) return fail(0, "the grammar has no 'root' rule");
        return true;
    }

    /** Refuse a rule that reaches itself through leftmost references to rules that can
     *  match the empty string: its expansion would never consume a character. */
    bool check_left_recursion() {
        const size_t      n = rules_.size();
        std::vector<bool> nullable(n, false);
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t r = 0; r < n; ++r) {
                if (nullable[r]) continue;
                bool alt_nullable = true;
                for (const grammar_element & e : rules_[r]) {
                    if (e.op == grammar_op::end || e.op == grammar_op::alt) {
                        if (alt_nullable) {
                            nullable[r] = true;
                            changed     = true;
                            break;
                        }
                        alt_nullable = true;
                    } else if (e.op == grammar_op::rule_ref) {
                        alt_nullable = alt_nullable && nullable[e.value];
                    } else {
                        alt_nullable = false;
                    }
                }
            }
        }
        std::vector<std::vector<uint32_t>> left(n);  // rules reachable at the start of r
        for (size_t r = 0; r < n; ++r) {
            bool at_left = true;
            for (const grammar_element & e : rules_[r]) {
                if (e.op == grammar_op::end || e.op == grammar_op::alt) {
                    at_left = true;
                } else if (!at_left) {
                    continue;
                } else if (e.op == grammar_op::rule_ref) {
                    left[r].push_back(e.value);
                    at_left = nullable[e.value];
                } else {
                    at_left = false;
                }
            }
        }
        // Iterative depth-first search; a back edge closes a cycle.
        std::vector<uint8_t> colour(n, 0);  // 0 unseen, 1 on the path, 2 done
        for (uint32_t start = 0; start < n; ++start) {
            if (colour[start]) continue;
            std::vector<std::pair<uint32_t, size_t>> path{{start, 0}};
            colour[start] = 1;
            while (!path.empty()) {
                auto & [r, next] = path.back();
                if (next == left[r].size()) {
                    colour[r] = 2;
                    path.pop_back();
                    continue;
                }
                const uint32_t t = left[r][next++];
                if (colour[t] == 1) {
                    std::string cycle;
                    bool        on = false;
                    for (const auto & [p, unused] : path) {
                        on = on || p == t;
                        if (on) cycle += names_[p] + " -> ";
                    }
                    cycle += names_[t];
                    return fail(at_[t],
                                "left recursion: " + cycle + " can expand forever without matching a character");
                }
                if (colour[t] == 0) {
                    colour[t] = 1;
                    path.emplace_back(t, 0);
                }
            }
        }
        return true;
    }
};

std::unique_ptr<Grammar> Grammar::parse(std::string_view text, std::string * error) {
    grammar_parser p(text);
    return p.run(error);
}

} // namespace gk::run
