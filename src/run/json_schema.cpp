// json_schema.cpp - see json_schema.h.
#include "json_schema.h"

#include "grammar.h"
#include "json_schema_pattern.h"
#include "tokenizer_utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace gk::run {

namespace {

using json = nlohmann::ordered_json;

constexpr int      k_max_schema_depth = 64;
constexpr uint64_t k_max_uint         = 9999999999999999ull;  // 16 digits, as the integer rule

// The shared rules, defined when first used.
const std::map<std::string, std::string> & primitives() {
    static const std::map<std::string, std::string> p = {
        {"ws", R"(| " " | "\n" [ \t]{0,20})"},
        {"char", R"([^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))"},
        {"string", R"("\"" char* "\"" ws)"},
        {"integer", R"("-"? ("0" | [1-9] [0-9]{0,15}) ws)"},
        {"number", R"("-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? ws)"},
        {"boolean", R"(("true" | "false") ws)"},
        {"null", R"("null" ws)"},
        {"value", R"(object | array | string | number | boolean | null)"},
        {"object", R"("{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}" ws)"},
        {"array", R"("[" ws (value ("," ws value)*)? "]" ws)"},
        // String formats (the text between the quotes), as RFC 3339 and RFC 4122 write them.
        {"format-date", R"([0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]))"},
        {"format-time",
         R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" ([0-5] [0-9] | "60") ("." [0-9]{1,9})? ([Zz] | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))"},
        {"format-date-time", R"(format-date [Tt] format-time)"},
        {"format-uuid",
         R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})"},
    };
    return p;
}

const std::set<std::string> & annotations() {
    static const std::set<std::string> a = {"title",     "description", "default",  "examples",
                                            "$schema",   "$id",         "$comment", "readOnly",
                                            "writeOnly", "deprecated",  "$defs",    "definitions"};
    return a;
}

/** `s` as a GBNF literal (quoted, escaped). */
std::string literal(const std::string & s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string digits_of(uint64_t v) { return std::to_string(v); }

/** Decimal strings of the same length from a to b (a <= b), as a GBNF expression. */
std::string same_length_range(const std::string & a, const std::string & b) {
    size_t i = 0;
    while (i < a.size() && a[i] == b[i]) ++i;
    if (i == a.size()) return literal(a);
    const std::string prefix = i ? literal(a.substr(0, i)) + " " : "";
    const char        x = a[i], y = b[i];
    const std::string ar = a.substr(i + 1), br = b.substr(i + 1);
    const size_t      r   = ar.size();
    const auto any_digits = [](size_t n) { return n == 0 ? std::string() : " [0-9]{" + std::to_string(n) + "}"; };
    if (r == 0) return prefix + "[" + x + "-" + y + "]";
    const bool               start_full = ar.find_first_not_of('0') == std::string::npos;
    const bool               end_full   = br.find_first_not_of('9') == std::string::npos;
    std::vector<std::string> alts;
    if (!start_full) {
        alts.push_back(literal(std::string(1, x)) + " (" + same_length_range(ar, std::string(r, '9')) + ")");
    }
    const char m1 = start_full ? x : static_cast<char>(x + 1), m2 = end_full ? y : static_cast<char>(y - 1);
    if (m1 <= m2) alts.push_back(std::string("[") + m1 + "-" + m2 + "]" + any_digits(r));
    if (!end_full) alts.push_back(literal(std::string(1, y)) + " (" + same_length_range(std::string(r, '0'), br) + ")");
    std::string out;
    for (size_t k = 0; k < alts.size(); ++k) out += (k ? " | " : "") + alts[k];
    return prefix + "(" + out + ")";
}

/** Non-negative integers in [a, b] without leading zeros, as a GBNF expression. */
std::string uint_range(uint64_t a, uint64_t b) {
    const std::string sa = digits_of(a), sb = digits_of(b);
    std::string       out;
    for (size_t len = sa.size(); len <= sb.size(); ++len) {
        const std::string lo = len == sa.size() ? sa : std::string(1, '1').append(len - 1, '0');
        const std::string hi = len == sb.size() ? sb : std::string(len, '9');
        out += (out.empty() ? "" : " | ") + same_length_range(lo, hi);
    }
    return "(" + out + ")";
}

class converter {
public:
    explicit converter(const json & root) : root_(root) {}

    bool run(std::string & out, std::string * error) {
        std::string name;
        if (!visit(root_, "root", "", 0, name)) {
            if (error) *error = err_;
            return false;
        }
        if (name != "root") define("root", name);
        for (const auto & [n, body] : rules_) out += n + " ::= " + body + "\n";
        return true;
    }

private:
    const json &                                     root_;
    std::vector<std::pair<std::string, std::string>> rules_;
    std::set<std::string>                            names_;
    std::map<std::string, std::string>               refs_;  // $ref target -> rule
    std::string                                      err_;

    bool fail(const std::string & where, std::string msg) {
        err_ = "at " + (where.empty() ? std::string("/") : where) + ": " + std::move(msg);
        return false;
    }

    std::string unique_name(const std::string & hint) {
        std::string base;
        for (char c : hint) base += (std::isalnum(static_cast<unsigned char>(c)) ? c : '-');
        if (base.empty()) base = "r";
        std::string name = base;
        for (int i = 2; names_.count(name) || primitives().count(name); ++i) name = base + "-" + std::to_string(i);
        names_.insert(name);
        return name;
    }

    std::string define(const std::string & hint, const std::string & body) {
        const std::string name = unique_name(hint);
        rules_.emplace_back(name, body);
        return name;
    }

    /** The shared rule `name`, with the shared rules it uses. */
    std::string primitive(const std::string & name) {
        if (names_.insert(name).second) {
            rules_.emplace_back(name, primitives().at(name));
            static const std::map<std::string, std::vector<std::string>> uses = {
                {"string", {"char", "ws"}},
                {"integer", {"ws"}},
                {"number", {"ws"}},
                {"boolean", {"ws"}},
                {"null", {"ws"}},
                {"value", {"object", "array", "string", "number", "boolean", "null"}},
                {"object", {"ws", "string", "value"}},
                {"array", {"ws", "value"}},
                {"format-date-time", {"format-date", "format-time"}}};
            auto it = uses.find(name);
            if (it != uses.end()) {
                for (const auto & u : it->second) primitive(u);
            }
        }
        return name;
    }

    bool get_count(const json & s, const char * key, const std::string & where, uint64_t & v) {
        if (!s.contains(key)) return false;
        const json & x = s.at(key);
        if (!x.is_number_unsigned() || x.get<uint64_t>() > k_grammar_max_repeat) {
            return fail(where, std::string("'") + key + "' must be an integer from 0 to " +
                                   std::to_string(k_grammar_max_repeat));
        }
        v = x.get<uint64_t>();
        return true;
    }

    static std::string repeat(const std::string & item, uint64_t min_n, bool bounded, uint64_t max_n) {
        if (bounded && max_n == 0) return "";
        if (!bounded) return item + "{" + std::to_string(min_n) + ",}";
        return item + "{" + std::to_string(min_n) + "," + std::to_string(max_n) + "}";
    }

    bool resolve_ref(const std::string & ref, const std::string & where, int depth, std::string & name) {
        auto it = refs_.find(ref);
        if (it != refs_.end()) {
            name = it->second;
            return true;
        }
        const json * target = nullptr;
        std::string  hint   = "ref";
        if (ref == "#") {
            target = &root_;
        } else {
            for (const char * prefix : {"#/$defs/", "#/definitions/"}) {
                const std::string p = prefix;
                if (ref.rfind(p, 0) != 0) continue;
                const std::string key     = ref.substr(p.size());
                const std::string section = p.substr(2, p.size() - 3);  // "$defs" or "definitions"
                if (root_.contains(section) && root_.at(section).is_object() && root_.at(section).contains(key)) {
                    target = &root_.at(section).at(key);
                }
                hint = key;
            }
        }
        if (!target) {
            return fail(where,
                        "$ref '" + ref + "' is not \"#\", \"#/$defs/NAME\" or \"#/definitions/NAME\" of this schema");
        }
        // The rule is named before its body is made, so a recursive schema refers to it.
        name              = unique_name(hint);
        refs_[ref]        = name;
        const size_t slot = rules_.size();
        rules_.emplace_back(name, "");
        std::string body;
        if (!visit(*target, name + "-body", ref, depth + 1, body)) return false;
        rules_[slot].second = body;
        return true;
    }

    /** `key` as a JSON pointer reference token (RFC 6901: ~ as ~0, / as ~1). */
    static std::string pointer_token(const std::string & key) {
        std::string out;
        for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
        return out;
    }

    /** The JSON type of `v` as `type` names it ("integer" is a number without a fraction). */
    static bool has_type(const json & v, const std::string & type) {
        if (type == "integer") {
            return v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                             std::floor(v.get<double>()) == v.get<double>());
        }
        if (type == "number") return v.is_number();
        if (type == "string") return v.is_string();
        if (type == "boolean") return v.is_boolean();
        if (type == "null") return v.is_null();
        if (type == "object") return v.is_object();
        if (type == "array") return v.is_array();
        return false;
    }

    /** enum / const: the values that the other keywords at this level accept, as literals.
     *  type, the numeric bounds and minLength / maxLength are checked; any other keyword
     *  that applies to one of the values is refused. */
    bool visit_values(const json & s, const std::string & hint, const std::string & where, std::string & name) {
        const std::string what = s.contains("const") ? "const" : "enum";
        std::vector<json> values;
        if (s.contains("enum")) {
            const json & e = s.at("enum");
            if (!e.is_array() || e.empty()) return fail(where, "'enum' must be a non-empty array");
            values.assign(e.begin(), e.end());
        }
        if (s.contains("const")) {
            const json & c = s.at("const");
            if (!s.contains("enum")) values.push_back(c);
            values.erase(std::remove_if(values.begin(), values.end(), [&](const json & v) { return v != c; }),
                         values.end());
        }
        const auto keep = [&](auto pred) {
            values.erase(std::remove_if(values.begin(), values.end(), [&](const json & v) { return !pred(v); }),
                         values.end());
        };
        if (s.contains("type")) {
            const json &             t = s.at("type");
            std::vector<std::string> types;
            if (t.is_string()) types.push_back(t.get<std::string>());
            if (t.is_array()) {
                for (const auto & x : t) types.push_back(x.is_string() ? x.get<std::string>() : "");
            }
            if (types.empty() || std::find(types.begin(), types.end(), "") != types.end()) {
                return fail(where, "'type' must be a string or an array of strings");
            }
            static const std::set<std::string> known = {"object",  "array",   "string", "number",
                                                        "integer", "boolean", "null"};
            for (const auto & type : types) {
                if (!known.count(type)) return fail(where, "unknown type '" + type + "'");
            }
            keep([&](const json & v) {
                return std::any_of(types.begin(), types.end(), [&](const std::string & x) { return has_type(v, x); });
            });
        }
        static const std::map<std::string, std::string> applies_to = {{"minimum", "number"},
                                                                      {"maximum", "number"},
                                                                      {"exclusiveMinimum", "number"},
                                                                      {"exclusiveMaximum", "number"},
                                                                      {"minLength", "string"},
                                                                      {"maxLength", "string"},
                                                                      {"pattern", "string"},
                                                                      {"format", "string"},
                                                                      {"properties", "object"},
                                                                      {"required", "object"},
                                                                      {"additionalProperties", "object"},
                                                                      {"items", "array"},
                                                                      {"prefixItems", "array"},
                                                                      {"minItems", "array"},
                                                                      {"maxItems", "array"}};
        for (const auto & item : s.items()) {
            // Named copies, not structured bindings: lambdas below capture them (clang 14 refuses bindings).
            const std::string key = item.key();
            const json &      x   = item.value();
            if (key == "enum" || key == "const" || key == "type" || annotations().count(key)) continue;
            auto       it       = applies_to.find(key);
            const bool relevant = it == applies_to.end() ||
                                  std::any_of(values.begin(), values.end(),
                                              [&](const json & v) { return has_type(v, it->second); });
            if (!relevant) continue;  // e.g. maxLength beside numbers only
            if (it != applies_to.end() && it->second == "number") {
                if (!x.is_number()) return fail(where, "'" + key + "' must be a number");
                const long double b     = x.get<long double>();
                const bool        lower = key == "minimum" || key == "exclusiveMinimum", strict = key[0] == 'e';
                keep([&](const json & v) {
                    if (!v.is_number()) return true;
                    const long double n = v.is_number_unsigned()  ? static_cast<long double>(v.get<uint64_t>())
                                          : v.is_number_integer() ? static_cast<long double>(v.get<int64_t>())
                                                                  : static_cast<long double>(v.get<double>());
                    return lower ? (strict ? n > b : n >= b) : (strict ? n < b : n <= b);
                });
            } else if (key == "minLength" || key == "maxLength") {
                uint64_t n = 0;
                get_count(s, key.c_str(), where, n);
                if (!err_.empty()) return false;
                keep([&](const json & v) {
                    if (!v.is_string()) return true;
                    uint64_t len = 0;  // code points: the bytes that do not continue one
                    for (char c : v.get_ref<const std::string &>())
                        len += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
                    return key == "minLength" ? len >= n : len <= n;
                });
            } else {
                return fail(where, "'" + what + "' together with '" + key + "' is not supported");
            }
        }
        if (values.empty()) {
            return fail(where, "no value of '" + what + "' satisfies the rest of the schema: it accepts nothing");
        }
        std::string body = "(";
        for (size_t i = 0; i < values.size(); ++i) body += (i ? " | " : "") + literal(values[i].dump());
        name = define(hint, body + ") " + primitive("ws"));
        return true;
    }

    bool visit(const json & s, const std::string & hint, const std::string & where, int depth, std::string & name) {
        if (depth > k_max_schema_depth) {
            return fail(where, "schema nested deeper than " + std::to_string(k_max_schema_depth));
        }
        if (s.is_boolean()) {
            if (!s.get<bool>()) return fail(where, "the schema false accepts nothing");
            name = primitive("value");
            return true;
        }
        if (!s.is_object()) return fail(where, "a schema must be an object or a boolean");
        static const std::set<std::string> known = {"type",
                                                    "properties",
                                                    "required",
                                                    "additionalProperties",
                                                    "items",
                                                    "prefixItems",
                                                    "minItems",
                                                    "maxItems",
                                                    "minLength",
                                                    "maxLength",
                                                    "minimum",
                                                    "maximum",
                                                    "exclusiveMinimum",
                                                    "exclusiveMaximum",
                                                    "enum",
                                                    "const",
                                                    "anyOf",
                                                    "oneOf",
                                                    "$ref",
                                                    "pattern",
                                                    "format"};
        for (const auto & [key, unused] : s.items()) {
            if (!known.count(key) && !annotations().count(key)) {
                return fail(where, "unsupported JSON Schema keyword '" + key + "'");
            }
        }
        if (s.contains("$ref")) {
            if (!s.at("$ref").is_string()) return fail(where, "$ref must be a string");
            return resolve_ref(s.at("$ref").get<std::string>(), where + "/$ref", depth, name);
        }
        if (s.contains("const") || s.contains("enum")) return visit_values(s, hint, where, name);
        for (const char * key : {"anyOf", "oneOf"}) {
            if (!s.contains(key)) continue;
            const json & alts = s.at(key);
            if (!alts.is_array() || alts.empty()) {
                return fail(where, std::string("'") + key + "' must be a non-empty array");
            }
            std::string body;
            for (size_t i = 0; i < alts.size(); ++i) {
                std::string sub;
                if (!visit(alts[i], hint + "-" + std::to_string(i), where + "/" + key + "/" + std::to_string(i),
                           depth + 1, sub)) {
                    return false;
                }
                body += (i ? " | " : "") + sub;
            }
            name = define(hint, body);
            return true;
        }
        std::vector<std::string> types;
        if (s.contains("type")) {
            const json & t = s.at("type");
            if (t.is_string()) {
                types.push_back(t.get<std::string>());
            } else if (t.is_array() && !t.empty()) {
                for (const auto & x : t) {
                    if (!x.is_string()) return fail(where, "'type' must be a string or an array of strings");
                    types.push_back(x.get<std::string>());
                }
            } else {
                return fail(where, "'type' must be a string or an array of strings");
            }
        } else if (s.contains("properties") || s.contains("additionalProperties")) {
            types.push_back("object");
        } else if (s.contains("items") || s.contains("prefixItems")) {
            types.push_back("array");
        } else if (s.contains("pattern") || s.contains("format") || s.contains("minLength") ||
                   s.contains("maxLength")) {
            types.push_back("string");
        } else {
            name = primitive("value");
            return true;
        }
        std::string body;
        for (size_t i = 0; i < types.size(); ++i) {
            std::string sub;
            if (!visit_type(s, types[i], types.size() > 1 ? hint + "-" + types[i] : hint, where, depth, sub)) {
                return false;
            }
            body += (i ? " | " : "") + sub;
        }
        name = types.size() == 1 ? body : define(hint, body);
        return true;
    }

    bool visit_type(const json & s, const std::string & type, const std::string & hint, const std::string & where,
                    int depth, std::string & name) {
        if (type == "object") return visit_object(s, hint, where, depth, name);
        if (type == "array") return visit_array(s, hint, where, depth, name);
        if (type == "string") {
            uint64_t   min_n = 0, max_n = 0;
            const bool has_min = get_count(s, "minLength", where, min_n);
            const bool has_max = get_count(s, "maxLength", where, max_n);
            if (!err_.empty()) return false;
            if (s.contains("pattern") || s.contains("format")) {
                if (has_min || has_max) {
                    return fail(where, "minLength / maxLength with pattern or format are not supported");
                }
                if (s.contains("pattern") && s.contains("format")) {
                    return fail(where, "pattern with format is not supported");
                }
                std::string body;
                if (s.contains("pattern")) {
                    if (!s.at("pattern").is_string()) return fail(where, "'pattern' must be a string");
                    std::string msg;
                    const std::string pattern = s.at("pattern").get<std::string>();
                    const auto        expr    = json_pattern_to_gbnf(pattern, &msg);
                    if (!expr) return fail(where, msg);
                    // The expression must make a grammar of its own (one that is refused is
                    // reported here, with the pattern, not later with the converter's rule names).
                    if (!Grammar::parse("root ::= " + *expr + "\n", &msg)) {
                        return fail(where, "pattern " + json(pattern).dump() + " is not supported" +
                                               (msg.find("expands to more than") != std::string::npos
                                                    ? " (its grammar expands to too many elements)"
                                                    : ""));
                    }
                    body = *expr;
                } else {
                    const json & f = s.at("format");
                    if (!f.is_string() || !primitives().count("format-" + f.get<std::string>())) {
                        return fail(where,
                                    "unsupported format " + f.dump() + " (supported: date, time, date-time, uuid)");
                    }
                    body = primitive("format-" + f.get<std::string>());
                }
                name = define(hint, R"("\"" )" + body + R"( "\"" )" + primitive("ws"));
                return true;
            }
            if (!has_min && !has_max) {
                name = primitive("string");
                return true;
            }
            if (has_max && max_n < min_n) return fail(where, "maxLength is less than minLength");
            primitive("char");
            name = define(hint, R"("\"" )" + repeat("char", min_n, has_max, max_n) + R"( "\"" )" + primitive("ws"));
            return true;
        }
        for (const char * key : {"pattern", "format", "minLength", "maxLength"}) {
            if (s.contains(key) && s.contains("type") && s.at("type").is_string()) {
                return fail(where, std::string("'") + key + "' applies to strings only");
            }
        }
        if (type == "integer") return visit_integer(s, hint, where, name);
        for (const char * key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
            if (s.contains(key)) return fail(where, std::string("'") + key + "' is supported on integers only");
        }
        if (type == "number" || type == "boolean" || type == "null") {
            name = primitive(type);
            return true;
        }
        return fail(where, "unknown type '" + type + "'");
    }

    bool visit_integer(const json & s, const std::string & hint, const std::string & where, std::string & name) {
        bool    has_lo = false, has_hi = false;
        int64_t lo = 0, hi = 0;
        for (const char * key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
            if (!s.contains(key)) continue;
            const json & v = s.at(key);
            if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > k_max_uint) ||
                (!v.is_number_unsigned() && (v.get<int64_t>() < -static_cast<int64_t>(k_max_uint) ||
                                             v.get<int64_t>() > static_cast<int64_t>(k_max_uint)))) {
                return fail(where, std::string("'") + key + "' must be an integer of at most 16 digits");
            }
            const int64_t x         = v.get<int64_t>();
            const bool    exclusive = key[0] == 'e';
            if (key[exclusive ? 10 : 1] == 'i') {  // minimum / exclusiveMinimum
                lo     = has_lo ? std::max(lo, exclusive ? x + 1 : x) : (exclusive ? x + 1 : x);
                has_lo = true;
            } else {
                hi     = has_hi ? std::min(hi, exclusive ? x - 1 : x) : (exclusive ? x - 1 : x);
                has_hi = true;
            }
        }
        if (!has_lo && !has_hi) {
            name = primitive("integer");
            return true;
        }
        const int64_t max_v = static_cast<int64_t>(k_max_uint);
        if (!has_lo) lo = -max_v;
        if (!has_hi) hi = max_v;
        if (lo > hi) return fail(where, "the integer range is empty (minimum above maximum)");
        std::vector<std::string> alts;
        if (lo < 0) {  // "-" and magnitudes from max(1, -hi) to -lo
            const uint64_t m_lo = hi < 0 ? static_cast<uint64_t>(-hi) : 1, m_hi = static_cast<uint64_t>(-lo);
            alts.push_back("\"-\" " + uint_range(m_lo, m_hi));
        }
        if (hi >= 0) alts.push_back(uint_range(lo < 0 ? 0 : static_cast<uint64_t>(lo), static_cast<uint64_t>(hi)));
        std::string body = "(";
        for (size_t i = 0; i < alts.size(); ++i) body += (i ? " | " : "") + alts[i];
        name = define(hint, body + ") " + primitive("ws"));
        return true;
    }

    /** The rule for the values of additional members: `extra` as a schema, or any value. */
    bool extra_value(const json & extra, const std::string & hint, const std::string & where, int depth,
                     std::string & name) {
        if (!extra.is_object()) {
            name = primitive("value");
            return true;
        }
        return visit(extra, hint + "-value", where + "/additionalProperties", depth + 1, name);
    }

    bool visit_object(const json & s, const std::string & hint, const std::string & where, int depth,
                      std::string & name) {
        const std::string ws    = primitive("ws");
        const json        props = s.contains("properties") ? s.at("properties") : json::object();
        if (!props.is_object()) return fail(where, "'properties' must be an object");
        std::set<std::string> required;
        if (s.contains("required")) {
            const json & r = s.at("required");
            if (!r.is_array()) return fail(where, "'required' must be an array of names");
            for (const auto & x : r) {
                if (!x.is_string()) return fail(where, "'required' must be an array of names");
                if (!props.contains(x.get<std::string>())) {
                    return fail(where, "required property '" + x.get<std::string>() + "' is not in 'properties'");
                }
                required.insert(x.get<std::string>());
            }
        }
        const json extra         = s.contains("additionalProperties") ? s.at("additionalProperties") : json();
        const bool extra_allowed = extra.is_object() || (extra.is_boolean() && extra.get<bool>()) ||
                                   (extra.is_null() && props.empty());
        if (!extra.is_null() && !extra.is_boolean() && !extra.is_object()) {
            return fail(where, "'additionalProperties' must be a boolean or a schema");
        }
        if (props.empty()) {
            if (!extra_allowed) {
                name = define(hint, "\"{\" " + ws + " \"}\" " + ws);
                return true;
            }
            std::string value;
            if (!extra_value(extra, hint, where, depth, value)) return false;
            const std::string kv = define(hint + "-kv", primitive("string") + " \":\" " + ws + " " + value);
            name = define(hint, "\"{\" " + ws + " (" + kv + " (\",\" " + ws + " " + kv + ")*)? \"}\" " + ws);
            return true;
        }
        // first_i: the members from i on with none before; rest_i: the same after a member.
        std::vector<std::string> kv, keys;
        std::vector<bool>        req;
        for (const auto & [key, sub] : props.items()) {
            std::string value;
            if (!visit(sub, hint + "-" + key, where + "/properties/" + pointer_token(key), depth + 1, value)) {
                return false;
            }
            kv.push_back(
                define(hint + "-" + key + "-kv", literal(json(key).dump()) + " " + ws + " \":\" " + ws + " " + value));
            req.push_back(required.count(key) > 0);
            keys.push_back(key);
        }
        const size_t             n = kv.size();
        std::vector<std::string> rest(n + 1), first(n + 1);
        if (extra_allowed) {  // after the declared members, any number of members with other names
            std::string value, other_key;
            if (!extra_value(extra, hint, where, depth, value)) return false;
            if (!other_key_rule(keys, hint, where, other_key)) return false;
            const std::string xkv = define(hint + "-extra-kv", other_key + " \":\" " + ws + " " + value);
            rest[n]               = define(hint + "-rest", "(\",\" " + ws + " " + xkv + ")*");
            if (std::none_of(req.begin(), req.end(), [](bool r) { return r; })) {  // else unused
                first[n] = define(hint + "-first", "| " + xkv + " " + rest[n]);
            }
        }
        // first_i is used when the members before i are all optional; rest_0 never.
        size_t n_first = 1;
        while (n_first < n && !req[n_first - 1]) ++n_first;
        for (size_t i = n; i-- > 0;) {
            const std::string next_rest = rest[i + 1].empty() ? "" : " " + rest[i + 1];
            if (i > 0) {
                rest[i] = define(hint + "-rest", req[i] ? "\",\" " + ws + " " + kv[i] + next_rest
                                                        : "(\",\" " + ws + " " + kv[i] + ")?" + next_rest);
            }
            if (i >= n_first) continue;
            const std::string after = kv[i] + next_rest;
            // (An empty alternative goes first: a line ending in '|' would continue on the next.)
            first[i] = define(hint + "-first", req[i]                 ? after
                                               : first[i + 1].empty() ? "| " + after
                                                                      : after + " | " + first[i + 1]);
        }
        name = define(hint, "\"{\" " + ws + " " + first[0] + " \"}\" " + ws);
        return true;
    }

    /** A rule for a JSON string (and the whitespace after it) that is none of `keys`: it
     *  walks a trie of the keys and leaves it with a character no key has there, an escape,
     *  a closing quote where no key ends, or a character past a key's end. */
    bool other_key_rule(const std::vector<std::string> & keys, const std::string & hint, const std::string & where,
                        std::string & name) {
        struct node {
            std::map<uint32_t, size_t> next;
            bool                       terminal = false;
        };
        std::vector<node> trie(1);
        for (const std::string & key : keys) {
            size_t at = 0;
            for (size_t i = 0; i < key.size();) {
                const uint32_t cp = utf8::next(key, i);  // well-formed: nlohmann-json checked it
                if (cp == '"' || cp == '\\' || cp < 0x20 || cp == 0x7F) {
                    return fail(where,
                                "'additionalProperties' next to a property name that needs escapes is not supported");
                }
                auto it = trie[at].next.find(cp);
                if (it == trie[at].next.end()) {
                    trie[at].next.emplace(cp, trie.size());
                    at = trie.size();
                    trie.emplace_back();
                } else {
                    at = it->second;
                }
            }
            trie[at].terminal = true;
        }
        const std::string        char_rule = primitive("char");
        const std::string        tail      = char_rule + "* \"\\\"\"";  // the rest of any string
        std::vector<std::string> rule(trie.size());
        for (size_t i = 0; i < trie.size(); ++i) rule[i] = unique_name(hint + "-other-key");
        for (size_t i = 0; i < trie.size(); ++i) {
            std::string cls = "[^\"\\\\\\x7F\\x00-\\x1F";
            char        buf[16];
            for (const auto & [cp, child] : trie[i].next) {
                std::snprintf(buf, sizeof buf, "\\U%08X", cp);
                cls += buf;
            }
            std::string body = cls + "] " + tail + R"( | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )" + tail;
            for (const auto & [cp, child] : trie[i].next) {
                std::snprintf(buf, sizeof buf, "\\U%08X", cp);
                body += std::string(" | \"") + buf + "\" " + rule[child];
            }
            if (!trie[i].terminal) body += " | \"\\\"\"";
            rules_.emplace_back(rule[i], body);
        }
        name = define(hint + "-key", "\"\\\"\" " + rule[0] + " " + primitive("ws"));
        return true;
    }

    bool visit_array(const json & s, const std::string & hint, const std::string & where, int depth,
                     std::string & name) {
        const std::string ws    = primitive("ws");
        uint64_t          min_n = 0, max_n = 0;
        const bool        has_min = get_count(s, "minItems", where, min_n);
        const bool        has_max = get_count(s, "maxItems", where, max_n);
        if (!err_.empty()) return false;
        if (has_max && max_n < min_n) return fail(where, "maxItems is less than minItems");
        if (s.contains("prefixItems")) {
            const json & p = s.at("prefixItems");
            if (!p.is_array()) return fail(where, "'prefixItems' must be an array of schemas");
            if (has_min || has_max || (s.contains("items") && s.at("items") != json(false))) {
                return fail(where, "'prefixItems' with 'items', 'minItems' or 'maxItems' is not supported");
            }
            std::string body = "\"[\" " + ws;
            for (size_t i = 0; i < p.size(); ++i) {
                std::string sub;
                if (!visit(p[i], hint + "-" + std::to_string(i), where + "/prefixItems/" + std::to_string(i), depth + 1,
                           sub)) {
                    return false;
                }
                body += (i ? " \",\" " + ws + " " : " ") + sub;
            }
            name = define(hint, body + " \"]\" " + ws);
            return true;
        }
        std::string item;
        if (!s.contains("items")) {
            item = primitive("value");
        } else if (!visit(s.at("items"), hint + "-item", where + "/items", depth + 1, item)) {
            return false;
        }
        const std::string more = "(\",\" " + ws + " " + item + ")";
        std::string       list;
        if (has_max && max_n == 0) {
            list = "";
        } else if (min_n == 0) {
            list = "(" + item + " " + repeat(more, 0, has_max, has_max ? max_n - 1 : 0) + ")?";
        } else {
            list = item + " " + repeat(more, min_n - 1, has_max, has_max ? max_n - 1 : 0);
        }
        name = define(hint, "\"[\" " + ws + " " + list + " \"]\" " + ws);
        return true;
    }
};

} // namespace

std::optional<std::string> json_schema_to_grammar(std::string_view schema, std::string * error) {
    if (schema.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        if (error) *error = "the schema is empty (an empty text is not JSON)";
        return std::nullopt;
    }
    json s;
    try {
        s = json::parse(schema);
    } catch (const json::parse_error & e) {
        if (error) *error = std::string("the schema is not JSON: ") + e.what();
        return std::nullopt;
    }
    converter   c(s);
    std::string out;
    if (!c.run(out, error)) return std::nullopt;
    return out;
}

} // namespace gk::run
