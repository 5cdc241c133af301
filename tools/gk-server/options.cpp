// options.cpp - see options.h.
#include "options.h"

#include "run/chat.h"
#include "run/kv_cache.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <thread>

namespace gk_server {

namespace {

/** A whole number in base 10 within [lo, hi], or nullopt. */
std::optional<int64_t> parse_int(const std::string & s, int64_t lo, int64_t hi) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    const size_t sign = s[0] == '-' || s[0] == '+' ? 1 : 0;
    if (s.size() == sign || !std::all_of(s.begin() + static_cast<std::ptrdiff_t>(sign), s.end(),
                                         [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    errno              = 0;
    const long long v  = std::strtoll(s.c_str(), nullptr, 10);
    if (errno != 0 || v < lo || v > hi) return std::nullopt;
    return v;
}

/** The keys of --api-key-file: one a line, blank lines and surrounding white space ignored. */
bool read_key_file(const std::string & path, std::vector<std::string> & keys, std::string & error) {
    std::ifstream f(path);
    if (!f) {
        error = "--api-key-file: cannot read '" + path + "'";
        return false;
    }
    size_t n = 0;
    for (std::string line; std::getline(f, line);) {
        const size_t a = line.find_first_not_of(" \t\r");
        if (a == std::string::npos) continue;
        const size_t b = line.find_last_not_of(" \t\r");
        keys.push_back(line.substr(a, b - a + 1));
        ++n;
    }
    if (f.bad()) {
        error = "--api-key-file: cannot read '" + path + "'";
        return false;
    }
    if (n == 0) {
        error = "--api-key-file: '" + path + "' holds no key";
        return false;
    }
    return true;
}

/** A KV cache type by its name (kv_cache.h's list). */
bool cache_type(const std::string & option, const std::string & name, enum gk_type & out, std::string & error) {
    enum gk_type t;
    if (gk_type_from_name(name.c_str(), &t) && gk::run::kv_cache_type_ok(t)) {
        out = t;
        return true;
    }
    error = option + ": unknown KV cache type '" + name + "' (use " + gk::run::kv_cache_type_names() + ")";
    return false;
}

const char * k_usage =
    "Usage: gk-server -m MODEL.gguf [OPTIONS]\n"
    "An OpenAI-compatible HTTP server (see docs/gk-server.md).\n"
    "  -m, --model FILE        GGUF model (required)\n"
    "  -a, --alias NAME        model id reported by /v1/models (default: the file name)\n"
    "  --host HOST             address to listen on (default 127.0.0.1)\n"
    "  --port PORT             port (default 8080; 0 = any free port, printed at start)\n"
    "  -c, --ctx-size N        context of each slot in tokens (default 4096, at most the model's; 0 = the model's)\n"
    "  -ub, --ubatch-size N    most prompt tokens evaluated at once (default 512)\n"
    "  -t, --threads N         compute threads of a step (default: all hardware threads)\n"
    "  -tb, --threads-batch N  compute threads of a step with several tokens (default: -t)\n"
    "  -np, --parallel N       requests served at once, each in a slot of its own (default 1)\n"
    "  --api-key KEY           require 'Authorization: Bearer KEY' (comma-separated keys allowed)\n"
    "  --api-key-file FILE     the same, keys read from FILE (one a line)\n"
    "  --max-body BYTES        largest request body (default 1048576); larger ones get 413\n"
    "  -ctk, --cache-type-k T  KV cache type of K (default f16): f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1\n"
    "  -ctv, --cache-type-v T  the same for V\n"
    "  --chat-template NAME    chat template by name (default: the model's)\n"
    "  --embedding, --embeddings  serve /v1/embeddings\n"
    "  --pooling TYPE          embeddings' pooling: mean, cls or last (default: the model's, else mean)\n"
    "  -v, --verbose           one line per request on stderr\n"
    "  -h, --help              this help\n";

} // namespace

std::optional<int> parse_options(int argc, char ** argv, server_options & opt) {
    std::string error;
    const auto  fail = [](const std::string & msg) {
        std::fprintf(stderr, "gk-server: error: %s\n", msg.c_str());
        return 1;
    };
    // The option's names and what it does with its value (nullptr: a flag).
    struct option {
        std::vector<std::string_view>                      names;
        bool                                               value;
        std::function<bool(const std::string &, const std::string &)> take;  // (name, value) -> ok
    };
    const auto number = [&](int64_t lo, int64_t hi, auto setter, const char * what) {
        return [&error, lo, hi, setter, what](const std::string & name, const std::string & v) {
            const auto n = parse_int(v, lo, hi);
            if (!n) {
                error = "option " + name + " takes " + what + ", got '" + v + "'";
                return false;
            }
            setter(*n);
            return true;
        };
    };
    const std::vector<option> table = {
        {{"-m", "--model"}, true, [&](const std::string &, const std::string & v) { opt.model = v; return true; }},
        {{"-a", "--alias"}, true, [&](const std::string &, const std::string & v) { opt.alias = v; return true; }},
        {{"--host"}, true, [&](const std::string &, const std::string & v) { opt.host = v; return true; }},
        {{"--port"}, true, number(0, 65535, [&](int64_t n) { opt.port = static_cast<int>(n); }, "a port 0..65535")},
        {{"-c", "--ctx-size"}, true,
         number(0, int64_t(1) << 24, [&](int64_t n) { opt.n_ctx = n; opt.n_ctx_given = true; }, "0..16777216")},
        {{"-ub", "--ubatch-size"}, true,
         number(1, int64_t(1) << 24, [&](int64_t n) { opt.n_ubatch = n; }, "a count >= 1")},
        {{"-t", "--threads"}, true,
         number(-1, 4096, [&](int64_t n) { opt.n_threads = static_cast<int>(n); }, "-1, 0 or a count 1..4096")},
        {{"-tb", "--threads-batch"}, true,
         number(-1, 4096, [&](int64_t n) { opt.n_threads_batch = static_cast<int>(n); }, "-1, 0 or a count 1..4096")},
        {{"-np", "--parallel"}, true,
         number(1, 256, [&](int64_t n) { opt.n_parallel = static_cast<int>(n); }, "a count 1..256")},
        {{"--max-body"}, true,
         number(1, int64_t(1) << 40, [&](int64_t n) { opt.max_body = static_cast<size_t>(n); }, "a byte count >= 1")},
        {{"--api-key"}, true,
         [&](const std::string &, const std::string & v) {
             std::stringstream ss(v);
             for (std::string k; std::getline(ss, k, ',');) {
                 if (!k.empty()) opt.api_keys.push_back(k);
             }
             if (opt.api_keys.empty()) error = "--api-key: an empty key";
             return !opt.api_keys.empty();
         }},
        {{"--api-key-file"}, true,
         [&](const std::string &, const std::string & v) { return read_key_file(v, opt.api_keys, error); }},
        {{"--chat-template"}, true,
         [&](const std::string &, const std::string & v) {
             if (gk::run::chat_template_from_name(v)) {
                 opt.chat_template = v;
                 return true;
             }
             error = "unknown chat template '" + v + "' (--chat-template takes: " + gk::run::chat_template_names() +
                     ")";
             return false;
         }},
        {{"-ctk", "--cache-type-k"}, true,
         [&](const std::string & name, const std::string & v) { return cache_type(name, v, opt.type_k, error); }},
        {{"-ctv", "--cache-type-v"}, true,
         [&](const std::string & name, const std::string & v) { return cache_type(name, v, opt.type_v, error); }},
        {{"--embedding", "--embeddings"}, false,
         [&](const std::string &, const std::string &) { return opt.embeddings = true; }},
        {{"--pooling"}, true,
         [&](const std::string &, const std::string & v) {
             const auto p = gk::run::pooling_from_name(v);
             if (p && (*p == gk::run::pooling::mean || *p == gk::run::pooling::cls || *p == gk::run::pooling::last)) {
                 opt.pooling = *p;
                 return true;
             }
             error = p ? "--pooling " + v + " is not supported (gk-server pools with mean, cls or last)"
                       : "unknown pooling type '" + v + "' (--pooling takes mean, cls or last)";
             return false;
         }},
        {{"-v", "--verbose"}, false, [&](const std::string &, const std::string &) { return opt.verbose = true; }},
    };
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "-h" || arg == "--help" || arg == "--usage") {
            std::fputs(k_usage, stdout);
            return 0;
        }
        if (arg.size() < 2 || arg[0] != '-') {
            return fail("unexpected argument '" + arg + "' (gk-server takes only options)");
        }
        std::string name = arg, value;
        bool        has_value = false;
        if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            name      = arg.substr(0, eq);
            value     = arg.substr(eq + 1);
            has_value = true;
        }
        const auto it = std::find_if(table.begin(), table.end(), [&](const option & o) {
            return std::find(o.names.begin(), o.names.end(), name) != o.names.end();
        });
        if (it == table.end()) return fail("unknown option " + name + " (gk-server --help lists the options)");
        if (it->value && !has_value) {
            if (i + 1 == argc) return fail("option " + name + " needs a value");
            value = argv[++i];
        } else if (!it->value && has_value) {
            return fail("option " + name + " takes no value");
        }
        if (!it->take(name, value)) return fail(error);
    }
    if (opt.model.empty()) return fail("-m/--model is required (gk-server --help lists the options)");
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (opt.n_threads <= 0) opt.n_threads = hw;
    if (opt.n_threads_batch <= 0) opt.n_threads_batch = opt.n_threads;
    return std::nullopt;
}

} // namespace gk_server
