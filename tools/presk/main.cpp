// presk: the command line of the PSK language (docs/presk.md).
//   presk check FILE [--entry E] [--dim k=v]... [--const k=v]...
//   presk dump FILE --stage core --entry E [--dim k=v]... [--const k=v]...
//   presk run FILE --entry E [--dim k=v]... [--const k=v]... [--seed S] --backend interp [--bits N]
//             [--input k=v]... [--digits D] [--train] [--out FILE.json]
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "lang/checker.h"
#include "lang/parser.h"
#include "ref/interp.h"

namespace {

struct Args {
    std::string file, entry, stage = "core", backend = "interp", out;
    std::vector<std::string> dims, consts, inputs;
    uint64_t seed = 0;
    long bits = 256;
    int digits = 17;
    bool train = false;
};

std::pair<std::string, std::string> split_kv(const std::string& s, const char* flag) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw presk::Error({}, std::string(flag) + " expects k=v, given '" + s + "'");
    return {s.substr(0, eq), s.substr(eq + 1)};
}

presk::CheckOptions options(const Args& a) {
    presk::CheckOptions o;
    for (const auto& d : a.dims) {
        auto [k, v] = split_kv(d, "--dim");
        char* end = nullptr;
        long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 1) throw presk::Error({}, "--dim " + d + ": the size must be a positive integer");
        o.dims[k] = n;
    }
    for (const auto& c : a.consts) {
        auto [k, v] = split_kv(c, "--const");
        o.consts[k] = v;
    }
    return o;
}

int run(const std::string& cmd, const Args& a) {
    presk::Source src;
    src.path = a.file;
    std::ifstream in(a.file, std::ios::binary);
    if (!in) {
        std::cerr << "presk: cannot read " << a.file << "\n";
        return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    src.text = ss.str();
    try {
        presk::ast::File file = presk::parse(src);
        presk::CheckOptions opts = options(a);
        if (cmd == "check" && a.entry.empty()) {
            for (const auto& e : presk::list_entries(file)) std::cout << e << "\n";
            return 0;
        }
        presk::core::Program prog = presk::check(file, a.entry, opts);
        if (cmd == "check") {
            std::cout << "ok " << prog.entry << "\n";
            return 0;
        }
        if (cmd == "dump") {
            if (a.stage != "core") throw presk::Error({}, "--stage " + a.stage + " is not built yet (core is)");
            std::cout << presk::core::to_string(prog);
            return 0;
        }
        if (a.backend != "interp") throw presk::Error({}, "--backend " + a.backend + " is not built yet (interp is)");
        if (a.bits < 32 || a.bits > 100000) throw presk::Error({}, "--bits must be in 32..100000");
        presk::ref::Interp interp(prog, {a.bits, a.seed, a.train});
        std::map<std::string, std::string> given;
        for (const auto& kv : a.inputs) given.insert(split_kv(kv, "--input"));
        const std::vector<presk::ref::Value> args = interp.entry_args(given);
        presk::ref::Value out = interp.call(prog.entry, args);
        std::vector<presk::ref::Value> outs = out.type->kind == presk::Type::Tuple ? out.items : std::vector{out};
        for (size_t i = 0; i < outs.size(); ++i)
            std::cout << "out" << i << " : " << presk::ref::to_text(outs[i], a.digits) << "\n";
        if (!a.out.empty()) {
            std::ofstream o(a.out);
            o << "{\"entry\": \"" << prog.entry << "\", \"bits\": " << a.bits << ", \"seed\": " << a.seed
              << ", \"params\": " << (prog.params_type ? presk::ref::to_json(args[0], a.digits) : "null")
              << ", \"inputs\": {";
            const presk::core::Function* f = prog.find(prog.entry);
            const size_t first = prog.params_type ? 1 : 0;
            for (size_t i = first; i < args.size(); ++i)
                o << (i > first ? ", " : "") << "\"" << f->param_names[i] << "\": " << presk::ref::to_json(args[i], a.digits);
            o << "}, \"outputs\": [";
            for (size_t i = 0; i < outs.size(); ++i) o << (i ? ", " : "") << presk::ref::to_json(outs[i], a.digits);
            o << "]}\n";
            if (!o) throw presk::Error({}, "cannot write " + a.out);
        }
        return 0;
    } catch (const presk::Error& e) {
        std::cerr << presk::format_error(src, e) << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << a.file << ": internal error: " << e.what() << "\n";
        return 2;
    }
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"presk: the PSK language"};
    app.require_subcommand(1);
    Args a;
    auto common = [&](CLI::App* s, bool entry_required) {
        s->add_option("file", a.file, "a .psk file")->required();
        auto* e = s->add_option("--entry", a.entry, "Module{dims}.fn or fn");
        if (entry_required) e->required();
        s->add_option("--dim", a.dims, "k=v: a named axis' size or a dim of the entry");
        s->add_option("--const", a.consts, "k=v: override a const");
    };
    auto* check = app.add_subcommand("check", "type-check an entry (or list the entries)");
    common(check, false);
    auto* dump = app.add_subcommand("dump", "print a stage of an entry");
    common(dump, true);
    dump->add_option("--stage", a.stage, "core");
    auto* runc = app.add_subcommand("run", "run an entry");
    common(runc, true);
    runc->add_option("--seed", a.seed, "the random seed");
    runc->add_option("--input", a.inputs, "k=v: a real scalar input's value (others are synthesised)");
    runc->add_option("--backend", a.backend, "interp");
    runc->add_option("--bits", a.bits, "MPFR precision of the interpreter (default 256)");
    runc->add_option("--digits", a.digits, "significant digits printed (default 17)");
    runc->add_flag("--train", a.train, "draw dropout masks");
    runc->add_option("--out", a.out, "write the outputs as JSON");
    CLI11_PARSE(app, argc, argv);
    for (auto* s : {check, dump, runc})
        if (s->parsed()) return run(s->get_name(), a);
    return 1;
}
