// presk: the command line of the PSK language (docs/presk.md).
//   presk check FILE [--entry E] [--dim k=v]... [--const k=v]...
//   presk dump FILE --stage core|kernel --entry E [--dim k=v]... [--const k=v]... [--realize R]
//             [--plan @P.json] [--seed S] [--input k=v]...
//   presk run FILE --entry E [--dim k=v]... [--const k=v]... [--seed S]
//             [--backend interp|kernel|native|cc] [--threads N] [--lanes N]
//             [--realize R] [--plan @P.json] [--bits N] [--input k=v]... [--digits D] [--train]
//             [--out FILE.json]
//   presk bench FILE --entry E [--dim k=v]... [--const k=v]... [--realize R] [--plan @P.json] [--repeat N]
//             [--backend B] [--threads N] [--lanes N] [--bits N] [--seed S] [--input k=v]...
//   presk export FILE --entry E [--dim k=v]... [--const k=v]... [--realize R] [--plan @P.json] [--seed S]
//             [--input k=v]... [--digits D] [--train] --target c -o DIR
//   presk plan FILE --entry E [--dim k=v]... [--const k=v]... [--realize R] [--threads N] -o PLAN.json
//   presk params FILE --entry E [--dim k=v]... [--const k=v]... [--realize R] [--seed S] [--params F.gguf] -o OUT.gguf
//   (run, dump, bench, export also take --params FILE.gguf: the parameters read, not drawn)
//   presk explain FILE --entry E [--dim k=v]... [--const k=v]... [--realize R] [--plan @P.json] [--seed S]
//             [--threads N] [--lanes N] [--input k=v]... [--params F.gguf] [--format text|json|html]
//   presk train FILE [--entry E] --backend native|kernel|interp|cc [--realize R] --steps N --seed S
//             [--batch B] [--data FILE] [--lr X] [--warmup W] [--checkpoint DIR] [--save-every K]
//             [--resume DIR] [--threads N] [--plan @P.json] [--log-every K] [--bits N] [--dim k=v]...
//             [--const k=v]...
//   presk conformance [--backend kernel|native|cc] [--realize R]... [--examples DIR] [--zeros-drawn]
//             [--only primitives|examples] [--seed S] [--bits N]
#include <CLI/CLI.hpp>
#include <mpfr.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "kernel/cost.h"
#include "kernel/ir.h"
#include "kernel/llvm_jit.h"
#include "kernel/pool.h"
#include "lang/checker.h"
#include "lang/parser.h"
#include "lang/stack.h"
#include "realize/conformance.h"
#include "realize/executor.h"
#include "realize/explain.h"
#include "realize/export_c.h"
#include "realize/params_gguf.h"
#include "realize/planner.h"
#include "realize/realization.h"
#include "ref/interp.h"
#include "train/trainer.h"

namespace {

struct Args {
    std::string file, entry, stage = "core", backend = "interp", out, realize = "f64", target, dir;
    std::vector<std::string> dims, consts, inputs;
    uint64_t seed = 0;
    long bits = 256;
    int digits = 17, repeat = 5;
    int threads = 0;  // 0: the machine's cores (kernel::default_threads)
    int lanes = 0;    // 0: each kernel at its type's width on native and cc (kernel::lower's lanes)
    bool train = false;
    std::string plan_arg;          // --plan @FILE
    std::string params_file;       // --params FILE.gguf
    std::string format = "text";   // presk explain --format
    presk::realize::Plan plan;     // what it names (realize/plan.h)
};

/// The executor's options for kernel backend `backend` (kernel, native or cc) from the command
/// line; the compilers' notes go to stderr.
presk::realize::ExecOptions exec_options(const Args& a, const std::string& backend) {
    presk::realize::ExecOptions o;
    o.seed = a.seed;
    o.train = a.train;
    o.backend = presk::realize::parse_backend(backend);
    o.threads = a.threads > 0 ? a.threads : presk::kernel::default_threads();
    o.lanes = a.lanes;
    o.plan = a.plan;
    o.log_launches = false;  // run and bench never read launches()
    o.on_note = [](const std::string& note) { std::cerr << "presk: " << note << "\n"; };
    return o;
}

std::pair<std::string, std::string> split_kv(const std::string& s, const char* flag) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw presk::Error({}, std::string(flag) + " expects k=v, given '" + s + "'");
    return {s.substr(0, eq), s.substr(eq + 1)};
}

presk::CheckOptions options(const Args& a) {
    presk::CheckOptions o;
    o.strict = true;
    for (const auto& d : a.dims) {
        auto [k, v] = split_kv(d, "--dim");
        char* end = nullptr;
        errno = 0;
        long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 1 || errno == ERANGE)
            throw presk::Error({}, "--dim " + d + ": the size must be a positive integer");
        if (!o.dims.emplace(k, n).second) throw presk::Error({}, "--dim " + k + " is given twice");
    }
    for (const auto& c : a.consts) {
        auto [k, v] = split_kv(c, "--const");
        if (!o.consts.emplace(k, v).second) throw presk::Error({}, "--const " + k + " is given twice");
    }
    return o;
}

/// `presk check FILE` without --entry: checks every entry of the file, each named axis and dim
/// that --dim does not give sized 2, and prints `ok E` or the error of each; false when one fails.
bool check_all(const presk::Source& src, const presk::ast::File& file, const Args& a) {
    presk::CheckOptions given = options(a);
    for (const auto& [k, v] : given.consts)
        if (std::none_of(file.consts.begin(), file.consts.end(),
                         [&](const presk::ast::Const& c) { return c.name == k; }))
            throw presk::Error({}, "--const " + k + "=" + v + ": the file declares no constant '" + k + "'");
    presk::CheckOptions o;
    o.consts = given.consts;
    for (size_t i = 0; i < src.text.size();) {  // every identifier of the text, as a size 2
        const unsigned char c = (unsigned char)src.text[i];
        if (!std::isalpha(c) && c != '_') {  // a number's digits and exponent are skipped whole
            ++i;
            while (std::isdigit(c) && i < src.text.size() && std::isalnum((unsigned char)src.text[i])) ++i;
            continue;
        }
        size_t j = i;
        while (j < src.text.size() && (std::isalnum((unsigned char)src.text[j]) || src.text[j] == '_')) ++j;
        o.dims.emplace(src.text.substr(i, j - i), 2);
        i = j;
    }
    for (const auto& [k, v] : given.dims) o.dims[k] = v;
    // The functions in list_entries' order: an entry whose parameters use `...` is checked
    // where it is called, not as an entry.
    std::vector<const presk::ast::Fn*> fns;
    for (const auto& f : file.fns) fns.push_back(&f);
    for (const auto& m : file.modules)
        for (const auto& f : m.fns) fns.push_back(&f);
    std::vector<std::string> failed;
    const std::vector<std::string> entries = presk::list_entries(file);
    for (size_t i = 0; i < entries.size(); ++i) {
        const std::string& e = entries[i];
        if (std::any_of(fns[i]->params.begin(), fns[i]->params.end(), [](const presk::ast::Param& p) {
                return p.type->kind == presk::ast::Type::Tensor && p.type->ellipsis;
            })) {
            std::cout << "not an entry " << e << ": its parameters use '...' (checked where it is called)\n";
            continue;
        }
        try {
            presk::check(file, e, o);
            std::cout << "ok " << e << "\n";
        } catch (const presk::Error& err) {
            std::cerr << presk::format_error(src, err) << "\n";
            failed.push_back(e);
        }
    }
    if (entries.empty()) std::cout << "no entries\n";
    if (failed.empty()) return true;
    std::string names;
    for (const auto& e : failed) names += (names.empty() ? "" : ", ") + e;
    std::cerr << a.file << ": " << failed.size() << " of " << entries.size()
              << " entries do not check (every size not given by --dim is 2): " << names << "\n";
    return false;
}

/// The components of an entry's result (a tuple's items, or the value itself).
template <class V>
std::vector<V> components(const V& out) {
    return out.type->kind == presk::Type::Tuple ? out.items : std::vector{out};
}

/// --out: the entry, the backend, the parameters and inputs it ran on and its outputs. V is
/// the backend's value (presk::ref::Value or presk::realize::Value), whose write_json is found
/// by its namespace.
template <class V>
void write_out(const Args& a, const presk::core::Program& prog, const std::vector<V>& args, const std::vector<V>& outs) {
    using presk::ref::json_escape;
    std::ofstream o(a.out);
    o << "{\"entry\": \"" << json_escape(prog.entry) << "\", \"backend\": \"" << json_escape(a.backend) << "\", ";
    if (a.backend == "kernel") o << "\"realization\": \"" << json_escape(a.realize) << "\", ";
    o << "\"bits\": " << a.bits << ", \"seed\": " << a.seed << ", \"params\": ";
    if (prog.params_type) write_json(o, args[0], a.digits);
    else o << "null";
    o << ", \"inputs\": {";
    const presk::core::Function* f = prog.find(prog.entry);
    const size_t first = prog.params_type ? 1 : 0;
    for (size_t i = first; i < args.size(); ++i) {
        o << (i > first ? ", " : "") << "\"" << json_escape(f->param_names[i]) << "\": ";
        write_json(o, args[i], a.digits);
    }
    o << "}, \"outputs\": [";
    for (size_t i = 0; i < outs.size(); ++i) {
        o << (i ? ", " : "");
        write_json(o, outs[i], a.digits);
    }
    o << "]}\n";
    if (!o) throw presk::Error({}, "cannot write " + a.out);
}

/// Prints each output component of an entry run on `args` (and writes --out), from the
/// backend's own values: the kernel backend's doubles are never copied into MPFR numbers.
template <class V>
void print_outputs(const Args& a, const presk::core::Program& prog, const std::vector<V>& args, const V& out) {
    const auto outs = components(out);
    for (size_t i = 0; i < outs.size(); ++i) {
        std::cout << "out" << i << " : ";
        write_text(std::cout, outs[i], a.digits);
        std::cout << "\n";
    }
    if (!a.out.empty()) write_out(a, prog, args, outs);
}

/// The entry's parameters and inputs as the reference synthesises them, the parameters read
/// from --params FILE.gguf when given (its quantised tensors' blocks into `blocks`).
std::vector<presk::ref::Value> entry_args(const presk::core::Program& prog, presk::ref::Interp& interp, const Args& a,
                                          std::map<std::string, presk::kernel::Data>* blocks = nullptr) {
    std::map<std::string, std::string> given;
    for (const auto& kv : a.inputs) given.insert(split_kv(kv, "--input"));
    std::vector<presk::ref::Value> args = interp.entry_args(given);
    if (!a.params_file.empty()) {
        if (!prog.params_type) throw presk::Error({}, "--params " + a.params_file + ": the entry " + prog.entry + " has no parameters");
        presk::realize::GgufParams g = presk::realize::read_params_gguf(prog, a.params_file, a.bits);
        args[0] = std::move(g.params);
        if (blocks) *blocks = std::move(g.blocks);
    }
    return args;
}

/// The arguments the reference runs on under realization `r`: the parameters it quantises
/// hold their blocks' values (what the kernels read; `blocks` as stored).
std::vector<presk::ref::Value> reference_args(std::vector<presk::ref::Value> args, const presk::core::Program& prog,
                                              const presk::realize::Realization& r, const Args& a,
                                              const std::map<std::string, presk::kernel::Data>& blocks) {
    if (prog.params_type) args[0] = presk::realize::quantised_values(args[0], r.quant, a.bits, blocks);
    return args;
}

/// `presk params -o FILE.gguf`: the entry's parameters (drawn, or --params) written as GGUF,
/// each parameter the realization quantises in q8_0 / q4_0 (realize/params_gguf.h).
void write_params(const presk::core::Program& prog, const Args& a) {
    presk::realize::Realization r = presk::realize::parse_realization(a.realize);
    presk::ref::Interp interp(prog, {a.bits, a.seed, a.train});
    if (!prog.params_type) throw presk::Error({}, "the entry " + prog.entry + " has no parameters");
    presk::realize::Executor(prog, r, {});  // checks the realization's quant against the parameters
    presk::realize::write_params_gguf(prog, entry_args(prog, interp, a)[0], r.quant, a.dir);
    std::cout << "wrote " << a.dir << ": " << prog.params.size() << " parameters of " << prog.entry << "\n";
}

/// `presk dump --stage kernel`: runs the entry and prints the counts and every distinct kernel.
void dump_kernels(const presk::core::Program& prog, const Args& a) {
    presk::realize::Realization r = presk::realize::parse_realization(a.realize);
    presk::ref::Interp interp(prog, {a.bits, a.seed, a.train});
    presk::realize::ExecOptions o{a.seed, a.train, true};
    const auto args = entry_args(prog, interp, a, &o.blocks);
    o.plan = a.plan;
    presk::realize::Executor ex(prog, r, o);
    ex.call(prog.entry, args);
    const auto ks = ex.kernels();
    const int64_t launched = (int64_t)ex.launches().size(), unfused = ex.unfused_launches(), saved = unfused - launched;
    std::cout << "-- " << ks.size() << " kernel" << (ks.size() == 1 ? "" : "s") << ", " << launched << " launch"
              << (launched == 1 ? "" : "es") << ", " << r.spelling << "\n";
    std::cout << "-- fusion: " << unfused << " launch" << (unfused == 1 ? "" : "es") << " without it, " << saved << " saved ("
              << (unfused ? (saved * 100 + unfused / 2) / unfused : 0) << "%)\n";
    for (const presk::kernel::Kernel* k : ks) std::cout << presk::kernel::to_string(*k);
}

/// `presk explain`: runs the entry natively and prints each kernel it launched with its machine
/// code, each instruction beside its kernel line (realize/explain.h), in --format.
void explain_kernels(const presk::core::Program& prog, const Args& a) {
    presk::realize::Realization r = presk::realize::parse_realization(a.realize);
    presk::ref::Interp interp(prog, {a.bits, a.seed, a.train});
    presk::realize::ExecOptions o = exec_options(a, "native");
    const auto args = entry_args(prog, interp, a, &o.blocks);
    presk::realize::Executor ex(prog, r, o);
    ex.call(prog.entry, args);
    std::cout << presk::realize::explain(ex.kernels(), a.format);
}

/// `presk run`: the entry on the chosen backend, each output component printed.
void run_entry(const presk::core::Program& prog, const Args& a) {
    presk::realize::Realization r = presk::realize::parse_realization(a.realize);  // checked; interp ignores it
    presk::ref::Interp interp(prog, {a.bits, a.seed, a.train});
    std::map<std::string, presk::kernel::Data> blocks;
    std::vector<presk::ref::Value> args = entry_args(prog, interp, a, &blocks);
    if (a.backend == "interp") {
        args = reference_args(std::move(args), prog, r, a, blocks);
        print_outputs(a, prog, args, interp.call(prog.entry, args));
        return;
    }
    presk::realize::ExecOptions o = exec_options(a, a.backend);
    o.blocks = std::move(blocks);
    presk::realize::Executor ex(prog, r, o);
    const std::vector<presk::realize::Value> in = ex.convert_args(prog.entry, args);  // what the kernels read
    args.clear();
    print_outputs(a, prog, in, ex.call_values(prog.entry, in));
}

/// `presk plan`: a point per nest by the cost model (realize/planner.h), written to -o as the
/// plan --plan reads; a line per nest on stdout (the point, and the model's cycles and loads
/// per multiply-add against the default's).
void plan_program(const presk::core::Program& prog, const Args& a) {
    presk::realize::Realization r = presk::realize::parse_realization(a.realize);
    const int threads = a.threads > 0 ? a.threads : presk::kernel::default_threads();
    const auto choices = presk::realize::choose_plan(prog, r, threads, presk::kernel::host_registers(), presk::kernel::register_lanes);
    std::ofstream out(a.dir, std::ios::binary);
    out << presk::realize::plan_json(choices, r.spelling);
    out.close();
    if (!out) throw presk::Error({}, a.dir + ": cannot write the plan");
    for (const auto& c : choices)
        std::printf("%s: %s (%.3g cycles, %.3g loads per multiply-add; the default %.3g, %.3g)\n", c.site.c_str(),
                    presk::kernel::to_string(c.point).c_str(), c.cost.cycles, c.cost.loads_per_multiply_add(),
                    c.default_cost.cycles, c.default_cost.loads_per_multiply_add());
}

/// `presk export --target c`: the entry as a C program in DIR (realize/export_c.h).
void export_program(const presk::core::Program& prog, const Args& a) {
    if (a.target != "c") throw presk::Error({}, "--target " + a.target + ": the only target is c");
    presk::realize::Realization r = presk::realize::parse_realization(a.realize);
    presk::ref::Interp interp(prog, {a.bits, a.seed, a.train});
    presk::realize::ExecOptions o{a.seed, a.train, true};
    o.plan = a.plan;
    const presk::realize::CExport x = presk::realize::export_c(prog, r, entry_args(prog, interp, a, &o.blocks), o, prog.entry, a.digits);
    std::error_code ec;
    std::filesystem::create_directories(a.dir, ec);
    for (const auto& [name, text] : x.files) {
        const std::string path = (std::filesystem::path(a.dir) / name).string();
        std::ofstream o(path, std::ios::binary);
        o << text;
        if (!o) throw presk::Error({}, "cannot write " + path);
    }
    std::cout << "wrote " << a.dir << ": " << x.kernels << " kernel" << (x.kernels == 1 ? "" : "s") << ", " << x.launches
              << " launch" << (x.launches == 1 ? "" : "es") << "; make -C " << a.dir << " builds "
              << (std::filesystem::path(a.dir) / x.name).string() << "\n";
}

/// The median time of `repeat` calls, in microseconds.
template <class F>
double median_us(int repeat, F call) {
    std::vector<double> us;
    for (int i = 0; i < repeat; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        call();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    return us.size() % 2 ? us[us.size() / 2] : (us[us.size() / 2 - 1] + us[us.size() / 2]) / 2;
}

/// `presk bench`: the median of --repeat calls of the entry on the reference (unless --backend
/// names one kernel backend) and on each kernel backend (kernel, native, cc, or the one
/// --backend names) in each realization (f64, f32, bf16, or the one --realize names), a row
/// named `native f32`; the inputs are prepared and the kernels compiled by one untimed call
/// beforehand.
void bench(const presk::core::Program& prog, const Args& a, bool realize_given, bool backend_given) {
    if (a.repeat < 1 || a.repeat > 100000) throw presk::Error({}, "--repeat must be in 1..100000");
    std::vector<std::string> rs = realize_given ? std::vector{a.realize} : std::vector<std::string>{"f64", "f32", "bf16"};
    std::vector<std::string> backends = {"kernel", "native", "cc"};
    if (backend_given) {
        if (a.backend != "interp") presk::realize::parse_backend(a.backend);  // checked
        backends = a.backend == "interp" ? std::vector<std::string>{} : std::vector{a.backend};
    }
    std::vector<presk::realize::Realization> parsed;
    for (const auto& s : rs) parsed.push_back(presk::realize::parse_realization(s));
    presk::ref::Interp interp(prog, {a.bits, a.seed, a.train});
    std::map<std::string, presk::kernel::Data> blocks;
    const auto args = entry_args(prog, interp, a, &blocks);
    const auto ref_args = reference_args(args, prog, parsed.front(), a, blocks);
    struct Row {
        std::string name;
        double us;
    };
    std::vector<Row> rows;
    if (!backend_given || a.backend == "interp")
        rows.push_back({"interp, " + std::to_string(a.bits) + " bits", median_us(a.repeat, [&] { interp.call(prog.entry, ref_args); })});
    for (const auto& b : backends) {
        for (const auto& r : parsed) {
            presk::realize::ExecOptions o = exec_options(a, b);
            o.blocks = blocks;
            presk::realize::Executor ex(prog, r, o);
            const auto in = ex.convert_args(prog.entry, args);
            try {
                ex.call_values(prog.entry, in);
            } catch (const presk::Error& e) {
                if (backend_given) throw;
                std::cerr << "presk bench: no " << b << " " << r.spelling << " row: " << e.what() << "\n";
                continue;  // a backend this build lacks (native without LLVM, cc without a compiler)
            }
            rows.push_back({b + " " + r.spelling, median_us(a.repeat, [&] { ex.call_values(prog.entry, in); })});
        }
    }
    if (rows.empty()) throw presk::Error({}, "presk bench: nothing ran");
    const int threads = a.threads > 0 ? a.threads : presk::kernel::default_threads();
    std::printf("%s, median of %d, %d thread%s\n", prog.entry.c_str(), a.repeat, threads, threads == 1 ? "" : "s");
    std::printf("%-24s %12s %10s (over %s)\n", "backend", "median us", "speed-up", rows[0].name.c_str());
    for (const Row& row : rows) std::printf("%-24s %12.2f %9.1fx\n", row.name.c_str(), row.us, rows[0].us / std::max(row.us, 1e-9));
}

/// `presk train`: the options the command line shares with the others (the file, --dim,
/// --const, --seed, --realize, --bits, --threads) into train's own.
void train_model(presk::Source& src, const Args& a, presk::train::TrainOptions t) {
    t.entry = a.entry;
    t.seed = a.seed;
    t.realize = a.realize;
    t.bits = a.bits;
    t.threads = a.threads > 0 ? a.threads : presk::kernel::default_threads();
    t.plan = a.plan;
    presk::train::train(src, t, options(a), std::cout);
}

struct SuiteArgs {
    std::string backend = "kernel", examples = PRESK_EXAMPLES_DIR, only;
    std::vector<std::string> realize;
    bool zeros_drawn = false;
    uint64_t seed = 7;  // the test's seed
};

/// `presk conformance`: the suite's tables (primitives, examples) and the asserted results
/// outside their bands; exit status 1 when there is one.
int conformance(const Args& a, const SuiteArgs& s) {
    try {
        if (!s.only.empty() && s.only != "primitives" && s.only != "examples")
            throw presk::Error({}, "--only " + s.only + ": primitives or examples");
        if (a.bits < 32 || a.bits > 100000) throw presk::Error({}, "--bits must be in 32..100000");
        presk::realize::SuiteOptions o;
        o.backend = presk::realize::parse_backend(s.backend);
        o.bits = a.bits;
        o.seed = s.seed;
        o.zeros_drawn = s.zeros_drawn;
        int failed = 0;
        auto suite = [&](const char* title, const std::vector<presk::realize::Case>& cases, std::vector<std::string> names) {
            if (!s.realize.empty()) names = s.realize;
            std::vector<presk::realize::Realization> rs;
            for (const auto& n : names) rs.push_back(presk::realize::parse_realization(n));
            std::vector<presk::realize::Result> all;
            std::string notes;
            for (const auto& c : cases)
                for (const auto& r : presk::realize::run_case(c, rs, o)) {
                    all.push_back(r);
                    if (r.pass()) continue;
                    bool fail = !r.error.empty() || presk::realize::asserted(c, r, s.zeros_drawn);
                    failed += fail;
                    std::ostringstream m;
                    m << (fail ? "FAIL " : "reported ") << r.name << " in " << r.realization << ": ";
                    if (!r.error.empty()) m << r.error;
                    else
                        m << r.outside << " of " << r.compared << " outside the band (" << r.cancelling
                          << " sums that cancel), up to " << r.worst_factor << " times it at " << r.worst_leaf << " (exact "
                          << r.worst_exact << ", computed " << r.worst_got << ")" << (r.int_mismatch ? ", integers differ" : "");
                    if (r.bits_differ) m << ", " << r.bits_differ << " elements differ from the kernel interpreter's bits";
                    notes += m.str() + "\n";
                }
            std::cout << "## " << title << (s.zeros_drawn ? ", zeros drawn" : "") << ": worst |x - x^| / (|x| + a)\n\n"
                      << presk::realize::table(all) << "\n" << notes << (notes.empty() ? "" : "\n");
        };
        if (s.only != "examples") suite("primitives", presk::realize::primitive_cases(), {"f64", "f32"});
        if (s.only != "primitives") suite("examples", presk::realize::example_cases(s.examples), {"f64", "f32", "bf16"});
        std::cout << (failed ? std::to_string(failed) + " asserted result(s) outside their bands\n" : "every asserted result within its band\n");
        return failed ? 1 : 0;
    } catch (const presk::Error& e) {
        std::cerr << "presk conformance: " << e.what() << "\n";
        return 1;
    }
}

/// Whether two realization arguments name the same realization: the same text, or two
/// @FILEs that are one file (`@r.json` and `@./r.json`).
bool same_realization(const std::string& x, const std::string& y) {
    if (x == y) return true;
    std::error_code ec;
    return x.size() > 1 && y.size() > 1 && x[0] == '@' && y[0] == '@' &&
           std::filesystem::equivalent(x.substr(1), y.substr(1), ec);
}

/// --plan's file read into a.plan; its realization is the run's unless --realize names another.
void read_plan(Args& a, bool& realize_given) {
    if (a.plan_arg.empty()) return;
    a.plan = presk::realize::parse_plan(a.plan_arg);
    const std::string& r = a.plan.realization;
    if (r.empty()) return;
    if (realize_given && !same_realization(r, a.realize))
        throw presk::Error({}, "E7002: plan " + a.plan_arg + ": made for realization " + r + ", run with --realize " + a.realize);
    a.realize = r;
    realize_given = true;
}

int run(const std::string& cmd, Args a, bool realize_given, bool backend_given, const presk::train::TrainOptions& t) {
    presk::Source src;
    src.path = a.file;
    std::error_code ec;
    if (std::filesystem::is_directory(a.file, ec)) {
        std::cerr << "presk: cannot read " << a.file << ": it is a directory\n";
        return 1;
    }
    std::ifstream in(a.file, std::ios::binary);
    if (!in) {
        std::cerr << "presk: cannot read " << a.file << "\n";
        return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        std::cerr << "presk: cannot read " << a.file << "\n";
        return 1;
    }
    src.text = ss.str();
    try {
        if (cmd == "dump" && a.stage != "core" && a.stage != "kernel")
            throw presk::Error({}, "--stage " + a.stage + ": the stages are core and kernel");
        if (cmd == "run" && a.backend != "interp" && a.backend != "kernel" && a.backend != "native" && a.backend != "cc")
            throw presk::Error({}, "--backend " + a.backend + ": the backends are interp, kernel, native and cc");
        if (a.bits < 32 || a.bits > 100000) throw presk::Error({}, "--bits must be in 32..100000");
        read_plan(a, realize_given);
        const bool interp_only = (cmd == "run" || (cmd == "bench" && backend_given)) && a.backend == "interp";
        if (!a.plan_arg.empty() && (interp_only || (cmd == "dump" && a.stage == "core")))
            throw presk::Error({}, "--plan " + a.plan_arg + ": a plan lays out kernels, and " +
                                       (interp_only ? "--backend interp runs" : "--stage core shows") + " none");
        if (cmd == "train") {
            train_model(src, a, t);
            return 0;
        }
        presk::ast::File file = presk::parse(src);
        presk::CheckOptions opts = options(a);
        if (cmd == "check" && a.entry.empty()) return check_all(src, file, a) ? 0 : 1;
        presk::core::Program prog = presk::check(file, a.entry, opts);
        if (cmd == "check") std::cout << "ok " << prog.entry << "\n";
        else if (cmd == "dump" && a.stage == "core") std::cout << presk::core::to_string(prog);
        else if (cmd == "dump") dump_kernels(prog, a);
        else if (cmd == "bench") bench(prog, a, realize_given, backend_given);
        else if (cmd == "export") export_program(prog, a);
        else if (cmd == "plan") plan_program(prog, a);
        else if (cmd == "params") write_params(prog, a);
        else if (cmd == "explain") explain_kernels(prog, a);
        else run_entry(prog, a);
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
    // --seed is a natural number: CLI11 would read -1 as 2^64 - 1.
    auto natural = CLI::Validator(
        [](std::string& v) {
            if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) return std::string();
            return "must be a natural number, found '" + v + "'";
        },
        "NATURAL");
    auto nonempty = CLI::Validator(
        [](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); }, "PATH");
    auto inputs = [&](CLI::App* s) {
        s->add_option("--seed", a.seed, "the random seed")->check(natural);
        s->add_option("--input", a.inputs, "k=v: a real scalar input's value (others are synthesised)");
        s->add_option("--params", a.params_file, "FILE.gguf: the parameters (presk params writes them), not drawn")
            ->check(nonempty);
    };
    std::vector<CLI::Option*> realize_opts;
    auto realize = [&](CLI::App* s) {
        realize_opts.push_back(
            s->add_option("--realize", a.realize, "f64 | f32 | bf16 | @FILE.json (the kernel backend's machine types)"));
        return realize_opts.back();
    };
    auto plan = [&](CLI::App* s) {
        s->add_option("--plan", a.plan_arg, "@FILE.json: a layout point per site (docs/presk.md, \"Plans\")")->check(nonempty);
    };
    auto* check = app.add_subcommand("check", "type-check an entry (or list the entries)");
    common(check, false);
    auto* dump = app.add_subcommand("dump", "print a stage of an entry (kernel: run it and print its kernels)");
    common(dump, true);
    dump->add_option("--stage", a.stage, "core | kernel");
    inputs(dump);
    realize(dump);
    plan(dump);
    auto* runc = app.add_subcommand("run", "run an entry");
    common(runc, true);
    inputs(runc);
    runc->add_option("--backend", a.backend, "interp | kernel | native | cc");
    auto machine = [&](CLI::App* s) {
        s->add_option("--threads", a.threads, "workers of native and cc kernels (default: the machine's cores)")
            ->check(CLI::Range(1, 1024));
        s->add_option("--lanes", a.lanes, "vector lanes of native and cc kernels (default: each type's width)")
            ->check(CLI::Range(1, 64));
    };
    machine(runc);
    realize(runc);
    plan(runc);
    runc->add_option("--bits", a.bits, "MPFR precision of the interpreter (default 256)");
    runc->add_option("--digits", a.digits, "significant digits printed (default 17)")->check(CLI::Range(1, 10000));
    runc->add_flag("--train", a.train, "draw dropout masks");
    runc->add_option("--out", a.out, "write the outputs as JSON")->check(nonempty);
    auto* benchc = app.add_subcommand("bench", "time an entry on the interpreter and the kernel backends");
    common(benchc, true);
    inputs(benchc);
    realize(benchc);
    plan(benchc);
    benchc->add_option("--repeat", a.repeat, "calls timed per backend (default 5); the median is printed");
    benchc->add_option("--bits", a.bits, "MPFR precision of the interpreter (default 256)");
    auto* bench_backend = benchc->add_option("--backend", a.backend, "interp | kernel | native | cc: time that one only");
    machine(benchc);
    auto* exportc = app.add_subcommand("export", "write an entry as a standalone C program (its kernels, its launches)");
    common(exportc, true);
    inputs(exportc);
    realize(exportc);
    plan(exportc);
    exportc->add_option("--target", a.target, "c")->required();
    exportc->add_option("-o", a.dir, "the folder written (make -C DIR builds the program)")
        ->required()
        ->check(nonempty);
    exportc->add_option("--digits", a.digits, "significant digits printed (default 17)")->check(CLI::Range(1, 10000));
    exportc->add_flag("--train", a.train, "draw dropout masks");
    auto* planc = app.add_subcommand("plan", "choose a layout point per nest by the cost model and write the plan");
    common(planc, true);
    realize(planc);
    planc->add_option("--threads", a.threads, "the workers the plan splits over (default: the machine's cores)")
        ->check(CLI::Range(1, 1024));
    planc->add_option("-o", a.dir, "the plan file written (PLAN.json)")->required()->check(nonempty);
    auto* explainc = app.add_subcommand("explain", "run the entry natively and print each kernel's machine code by its lines");
    common(explainc, true);
    inputs(explainc);
    realize(explainc);
    plan(explainc);
    machine(explainc);
    explainc->add_option("--format", a.format, "text | json | html (default text)");
    auto* paramsc = app.add_subcommand("params", "write the entry's parameters as GGUF (quantised as the realization says)");
    common(paramsc, true);
    inputs(paramsc);
    realize(paramsc);
    paramsc->add_option("-o", a.dir, "the GGUF file written")->required()->check(nonempty);
    presk::train::TrainOptions train;
    auto* trainc = app.add_subcommand("train", "train a module's parameters with AdamW (its gradient entry on a backend)");
    common(trainc, false);
    trainc->add_option("--seed", a.seed, "the random seed: parameters, batches")->check(natural);
    trainc->add_option("--backend", train.backend, "interp | kernel | native | cc")->required();
    realize(trainc);
    trainc->add_option("--steps", train.steps, "the steps of the run (and of the schedule)")->required();
    trainc->add_option("--batch", train.batch, "the size of the inputs' first (named) axis")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    trainc->add_option("--data", train.data, "a token file: whitespace-separated naturals below V")->check(nonempty);
    trainc->add_option("--lr", train.lr, "the peak learning rate (default 0.001)");
    trainc->add_option("--warmup", train.warmup, "steps of linear warm-up (default 0)");
    trainc->add_option("--log-every", train.log_every, "a log line every K steps and at the last (default 1)");
    trainc->add_option("--checkpoint", train.checkpoint, "save checkpoints into DIR/step-N")->check(nonempty);
    trainc->add_option("--save-every", train.save_every, "a checkpoint every K steps (default: the last step only)");
    trainc->add_option("--resume", train.resume, "continue from the checkpoint folder DIR")->check(nonempty);
    trainc->add_option("--bits", a.bits, "MPFR precision of the interpreter and of the draw of the parameters (default 256)");
    trainc->add_option("--threads", a.threads, "workers of native and cc kernels (default: the machine's cores)")
        ->check(CLI::Range(1, 1024));
    plan(trainc);
    SuiteArgs suite;
    auto* conf = app.add_subcommand("conformance", "the kernel backend against the reference, per case and realization");
    conf->add_option("--backend", suite.backend,
                     "kernel | native | cc (the backend measured; native and cc also against the interpreter's bits)");
    conf->add_option("--realize", suite.realize, "a realization (repeatable; default f64 f32 for primitives, f64 f32 bf16 for examples)");
    conf->add_option("--examples", suite.examples, "the examples folder (default: the source tree's)");
    conf->add_flag("--zeros-drawn", suite.zeros_drawn, "draw every parameter initialised to zeros");
    conf->add_option("--only", suite.only, "primitives | examples");
    conf->add_option("--seed", suite.seed, "the random seed (default 7)")->check(natural);
    conf->add_option("--bits", a.bits, "MPFR precision of the reference (default 256)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help
        std::fprintf(stderr, "presk: %s (see --help)\n", e.what());
        return 1;
    }
    // The work runs on a thread with a large stack (docs/presk.md, "Limits"): the deepest input
    // the limits allow is checked, differentiated and run there, with the sanitizers' frames too.
    int rc = 1;
    presk::run_with_stack(presk::kLargeStack, [&] {
        struct FreeCache {  // MPFR's constants are cached per thread: freed before this one ends
            ~FreeCache() { mpfr_free_cache(); }
        } free_cache;
        if (conf->parsed()) {
            rc = conformance(a, suite);
            return;
        }
        for (auto* s : {check, dump, runc, benchc, exportc, planc, paramsc, explainc, trainc})
            if (s->parsed()) {
                const bool realize_given = std::any_of(realize_opts.begin(), realize_opts.end(),
                                                       [](const CLI::Option* o) { return o->count() > 0; });
                rc = run(s->get_name(), a, realize_given, bench_backend->count() > 0, train);
            }
    });
    return rc;
}
