// Realizations: the three uniform spellings and the JSON object of the seed ("The realization").
// Every malformed input is refused with a presk::Error that names where it came from (the
// file, or the command-line spelling), the key and the value.
#include "realize/realization.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "lang/source.h"
#include "realize/json_strict.h"

namespace presk::realize {
namespace {

using nlohmann::json;
using detail::is_site;
using detail::parse_strict;
using detail::shown;

[[noreturn]] void fail(const std::string& origin, const std::string& msg) { throw Error({}, origin + ": " + msg); }

/// A storage or accumulation type name; `where` is the key path for messages.
kernel::DType type_name(const json& v, const std::string& origin, const std::string& where) {
    if (!v.is_string()) fail(origin, where + ": " + shown(v) + " is not a type name (f64, f32 or bf16)");
    const std::string s = v.get<std::string>();
    if (s == "f64") return kernel::DType::F64;
    if (s == "f32") return kernel::DType::F32;
    if (s == "bf16") return kernel::DType::BF16;
    if (s == "f16") fail(origin, where + ": \"f16\": there is no f16 (the types are f64, f32 and bf16)");
    fail(origin, where + ": unknown type " + shown(v) + " (the types are f64, f32 and bf16)");
}

/// A parameter path: fields joined by '.', none empty.
bool is_path(const std::string& s) {
    if (s.empty() || s.front() == '.' || s.back() == '.') return false;
    return s.find("..") == std::string::npos && s.find_first_of(" \t\n/%") == std::string::npos;
}

/// A site -> type map (storage, accum).
std::map<std::string, kernel::DType> site_map(const json& v, const std::string& origin, const std::string& key) {
    if (!v.is_object()) fail(origin, "\"" + key + "\": " + shown(v) + " is not an object of sites");
    std::map<std::string, kernel::DType> m;
    for (const auto& [site, t] : v.items()) {
        std::string where = "\"" + key + "\".\"" + site + "\"";
        if (!is_site(site)) fail(origin, where + ": \"" + site + "\" is not a site (\"<function>/%<let>\", as dump --stage core numbers the lets)");
        m[site] = type_name(t, origin, where);
    }
    return m;
}

int64_t positive(const json& o, const char* field, const std::string& origin, const std::string& kind) {
    std::string where = "\"order\".\"" + std::string(field) + "\"";
    if (!o.contains(field)) fail(origin, "\"order\": " + kind + " needs \"" + field + "\", a positive integer");
    const json& v = o.at(field);
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (int64_t(1) << 30))
        fail(origin, where + ": " + shown(v) + " is not a positive integer");
    return v.get<int64_t>();
}

Order order_of(const json& v, const std::string& origin) {
    if (!v.is_object())
        fail(origin, "\"order\": " + shown(v) + " is not an object ({\"kind\": \"sequential\"}, {\"kind\": \"blocked\", "
                     "\"width\": W} or {\"kind\": \"interleaved\", \"partials\": P})");
    if (!v.contains("kind")) fail(origin, "\"order\": " + shown(v) + " has no \"kind\"");
    const json& k = v.at("kind");
    Order o;
    std::string extra;
    if (k == "sequential") {
        o.kind = Order::Sequential;
    } else if (k == "blocked") {
        o.kind = Order::Blocked;
        o.width = positive(v, "width", origin, "blocked");
        extra = "width";
    } else if (k == "interleaved") {
        o.kind = Order::Interleaved;
        o.width = positive(v, "partials", origin, "interleaved");
        extra = "partials";
    } else {
        fail(origin, "\"order\".\"kind\": " + shown(k) + " is not sequential, blocked or interleaved");
    }
    for (const auto& [key, val] : v.items())
        if (key != "kind" && key != extra)
            fail(origin, "\"order\".\"" + key + "\": unknown key for order " + shown(k) + " (" + shown(val) + ")");
    return o;
}

} // namespace

kernel::DType Realization::storage_of(const std::string& site) const {
    auto it = storage.find(site);
    return it == storage.end() ? default_type : it->second;
}

Realization parse_realization_json(const std::string& text, const std::string& origin) {
    json v = parse_strict(text, origin);
    if (!v.is_object()) fail(origin, "a realization is a JSON object, found " + shown(v));
    Realization r;
    r.spelling = origin;
    for (const auto& [key, val] : v.items()) {
        if (key == "default") r.default_type = type_name(val, origin, "\"default\"");
        else if (key == "storage") r.storage = site_map(val, origin, key);
        else if (key == "accum") r.accum = site_map(val, origin, key);
        else if (key == "order") r.order = order_of(val, origin);
        else if (key == "envelope") {
            if (!val.is_string() || val.get<std::string>().empty())
                fail(origin, "\"envelope\": " + shown(val) + " is not a file name");
            r.envelope = val.get<std::string>();
        } else if (key == "params") {
            if (!val.is_object()) fail(origin, "\"params\": " + shown(val) + " is not an object of parameter paths");
            for (const auto& [path, t] : val.items()) {
                std::string where = "\"params\".\"" + path + "\"";
                if (!is_path(path)) fail(origin, where + ": \"" + path + "\" is not a parameter path (fields joined by '.')");
                kernel::DType d = type_name(t, origin, where);
                if (d == kernel::DType::F64)
                    fail(origin, where + ": \"f64\": a parameter's own type is f32 or bf16 (a wider one is the default's business)");
                r.params[path] = d;
            }
        } else if (key == "quant") {
            if (!val.is_object()) fail(origin, "\"quant\": " + shown(val) + " is not an object of parameter paths");
            for (const auto& [path, t] : val.items()) {
                std::string where = "\"quant\".\"" + path + "\"";
                if (!is_path(path)) fail(origin, where + ": \"" + path + "\" is not a parameter path (fields joined by '.')");
                if (t != "int8" && t != "int4") fail(origin, where + ": " + shown(t) + " is not int8 or int4");
                r.quant[path] = t == "int8" ? kernel::DType::I8 : kernel::DType::I4;
            }
        } else {
            fail(origin, "unknown key \"" + key + "\" (" + shown(val) +
                             "); a realization has default, storage, accum, order, envelope, params and quant");
        }
    }
    for (const auto& [path, t] : r.quant)
        if (r.params.count(path)) fail(origin, "\"" + path + "\" is in both \"params\" and \"quant\" (one type at rest)");
    return r;
}

Realization parse_realization(const std::string& arg) {
    const std::string origin = "--realize " + arg;
    if (arg.empty()) fail("--realize", "an empty realization (f64, f32, bf16 or @FILE)");
    if (arg[0] != '@') {
        Realization r;
        if (arg == "f64") r.default_type = kernel::DType::F64;
        else if (arg == "f32") r.default_type = kernel::DType::F32;
        else if (arg == "bf16") r.default_type = kernel::DType::BF16;
        else if (arg == "f16") fail(origin, "there is no f16 (the types are f64, f32 and bf16)");
        else fail(origin, "unknown realization \"" + arg + "\" (f64, f32, bf16 or @FILE)");
        r.spelling = arg;
        return r;
    }
    const std::string path = arg.substr(1);
    if (path.empty()) fail(origin, "no file name after '@'");
    Realization r = parse_realization_json(detail::read_text(path, "the realization file"), path);
    r.spelling = arg;
    return r;
}

namespace detail {

std::string read_text(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail(path, "cannot read " + what + ": it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "cannot read " + what);
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) fail(path, "cannot read " + what);
    return ss.str();
}

/// A JSON value as it appears in the text, for messages; cut after 80 characters. parse_strict
/// refuses the deep nests whose dump would recurse past the stack.
std::string shown(const json& v) {
    std::string s = v.dump();
    return s.size() <= 80 ? s : s.substr(0, 77) + "...";
}

/// Nesting deeper than this is refused: a realization needs three levels, and the JSON
/// library's dump, which messages use, recurses once per level.
constexpr int kMaxDepth = 32;

/// "<function>/%<k>": a function name, then "/%" and a let number.
bool is_site(const std::string& s) {
    size_t at = s.rfind("/%");
    if (at == std::string::npos || at == 0 || at + 2 == s.size()) return false;
    for (size_t i = at + 2; i < s.size(); ++i)
        if (s[i] < '0' || s[i] > '9') return false;
    return s.size() - at - 2 <= 9;
}

/// Parses `text`, refusing malformed JSON and an object that repeats a key (the JSON library
/// would keep the last one silently).
json parse_strict(const std::string& text, const std::string& origin) {
    std::vector<std::set<std::string>> keys;
    std::string repeated;
    bool deep = false;
    json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) {
        if (depth > kMaxDepth) {
            deep = true;
            return false;  // dropped: the value is refused below
        }
        if (ev == json::parse_event_t::object_start) keys.emplace_back();
        else if (ev == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
        else if (ev == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
                 repeated.empty())
            repeated = parsed.get<std::string>();
        return true;
    };
    if (const size_t nul = text.find('\0'); nul != std::string::npos)  // the JSON library would stop there
        fail(origin, "malformed JSON: a NUL byte at offset " + std::to_string(nul));
    json v;
    try {
        v = json::parse(text, cb);
    } catch (const json::exception& e) {
        fail(origin, std::string("malformed JSON: ") + e.what());
    }
    if (deep) fail(origin, "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (!repeated.empty()) fail(origin, "the key \"" + repeated + "\" appears twice in one object");
    return v;
}

} // namespace detail

} // namespace presk::realize
