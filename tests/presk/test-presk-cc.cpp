// The cc backend: every kernel the conformance cases launch, printed as C (kernel/c_print.h),
// compiled by the system compiler (kernel/cc.h) and run, equals the kernel interpreter bit for
// bit in f64, f32 and bf16, on normal inputs and on inputs with NaN, infinities and -0; its
// failures (an index out of range, an overflow, a division by zero) are the interpreter's; a
// split loop run in pieces equals the whole. Then the cache and the compiler's failures: a hit,
// a missing compiler, a compiler that fails, a corrupt entry, an unwritable folder, several
// threads sharing one entry. Skipped when there is no C compiler.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <map>
#include <thread>

#include "kernel/c_print.h"
#include "kernel/cc.h"
#include "native_harness.h"

namespace presk::kernel {
namespace {

namespace fs = std::filesystem;

/// A folder for one test, removed after it.
struct TempFolder {
    fs::path path;
    TempFolder() {
        std::string t = (fs::temp_directory_path() / "presk-cc-test-XXXXXX").string();
        if (mkdtemp(t.data())) path = t;
    }
    ~TempFolder() {
        std::error_code ec;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path, ec);
    }
};

bool have_cc() {
    static const bool yes = [] {
        try {
            Kernel k;
            k.name = "probe";
            k.output = {DType::F32, {}};
            k.body = {store(0, {}, real(1))};
            TempFolder f;
            compile_cc(k, {"cc", (f.path / "cache").string()});
            return true;
        } catch (const Error&) {
            return false;
        }
    }();
    return yes;
}

#define NEED_CC() \
    if (!have_cc()) GTEST_SKIP() << "GK-SKIP: no C compiler `cc`"

/// The cache of the test program: one folder for all the conformance kernels.
const CcOptions& shared() {
    static TempFolder folder;
    static const CcOptions o{"cc", (folder.path / "cache").string()};
    return o;
}

/// The distinct kernels (by text) the conformance cases launch in realization `r`.
std::vector<Kernel> kernels_of(const std::string& r) {
    std::vector<realize::Case> cases = realize::primitive_cases();
    for (realize::Case& c : realize::example_cases(PRESK_SOURCE_DIR "/examples")) cases.push_back(std::move(c));
    std::map<std::string, Kernel> distinct;
    for (Kernel& k : test::launched_kernels(cases, r)) distinct.emplace(to_string(k), std::move(k));
    std::vector<Kernel> out;
    for (auto& [text, k] : distinct) out.push_back(std::move(k));
    return out;
}

using test::differs;
using test::Ran;
using test::run_compiled;

void conformance(const std::string& r) {
    const std::vector<Kernel> ks = kernels_of(r);
    ASSERT_GT(ks.size(), 20u);
    std::vector<const Kernel*> ptrs;
    for (const Kernel& k : ks) ptrs.push_back(&k);
    const std::vector<NativeCode> codes = compile_cc(ptrs, shared());  // one compiler run
    ASSERT_EQ(codes.size(), ks.size());
    int split = 0;
    int64_t nans = 0;
    for (size_t i = 0; i < ks.size(); ++i) {
        const Kernel& k = ks[i];
        const NativeCode& code = codes[i];
        for (bool specials : {false, true}) {
            const std::vector<Data> in = test::draw_inputs(k, 1000 + i, specials);
            EXPECT_EQ(test::compare_with_interpreter(k, code, in, &nans), "") << (specials ? "with specials\n" : "") << to_string(k);
        }
        if (const std::optional<Split> sp = split_loop(k)) {  // [lo, m), [m, m), [m, hi) into one output
            ++split;
            const std::vector<Data> in = test::draw_inputs(k, 2000 + i);
            std::vector<const Data*> ptrs;
            for (const Data& d : in) ptrs.push_back(&d);
            Data want;
            run(k, ptrs, want);
            const int64_t m = sp->lo + (sp->hi - sp->lo + 1) / 3;
            const Ran got = run_compiled(k, code, in, {sp->lo, m, m, sp->hi});
            EXPECT_EQ(got.status, PRESK_OK);
            EXPECT_EQ(differs(k, test::bytes_of(want), got.out, &nans), "") << "split at " << m << "\n"
                                                                                << to_string(k);
        }
    }
    EXPECT_GT(split, 5);
    std::cout << r << ": " << ks.size() << " kernels, " << split << " split; " << nans
              << " elements NaN in both with other bits\n";
}

TEST(CcConformance, F64) {
    NEED_CC();
    conformance("f64");
}

TEST(CcConformance, F32) {
    NEED_CC();
    conformance("f32");
}

TEST(CcConformance, BF16) {
    NEED_CC();
    conformance("bf16");
}

ExprP i(int v) { return loop_var(v); }

// out[t, j] = table[ids[t], j]: the gather of embed, whose index is a loaded value.
Kernel gather(DType t) {
    Kernel k;
    k.name = "gather";
    k.dtype = t;
    k.inputs = {{t, {{"", 4}, {"", 2}}}, {DType::I64, {{"T", 3}}}};
    k.output = {t, {{"T", 3}, {"", 2}}};
    k.body = {for_loop(0, 0, 3, {for_loop(1, 0, 2, {store(2, {i(0), i(1)}, load(0, {load(1, {i(0)}, true), i(1)}))})})};
    k.n_loops = 2;
    return k;
}

std::string interpreter_error(const Kernel& k, const std::vector<Data>& in) {
    std::vector<const Data*> ptrs;
    for (const Data& d : in) ptrs.push_back(&d);
    Data out;
    try {
        run(k, ptrs, out);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(CcFailures, OutOfRangeGatherAsTheInterpreter) {
    NEED_CC();
    for (DType t : {DType::F64, DType::F32, DType::BF16}) {
        const Kernel k = gather(t);
        const NativeCode code = compile_cc(k, shared());
        std::vector<Data> in = test::draw_inputs(k, 5);
        in[1] = Data::from_ints(std::vector<int64_t>{1, 3, 0});
        EXPECT_EQ(test::compare_with_interpreter(k, code, in), "");
        in[1] = Data::from_ints(std::vector<int64_t>{1, 7, 0});
        const Ran r = run_compiled(k, code, in);
        ASSERT_EQ(r.status, PRESK_INDEX_OUT_OF_RANGE);
        EXPECT_EQ(r.err, (std::vector<int64_t>{1, 0, 7}));  // access 1 (the table's load, after ids'), axis 0
        // The interpreter's words, less the full index it prints: "%0[7, 0] index 7 ...".
        std::string want = interpreter_error(k, in);
        want.erase(want.find("[7, 0]"), 6);
        EXPECT_EQ(status_message(k, r.status, r.err.data()), want);
        in[1] = Data::from_ints(std::vector<int64_t>{-1, 0, 0});
        EXPECT_EQ(run_compiled(k, code, in).err, (std::vector<int64_t>{1, 0, -1}));
    }
}

TEST(CcFailures, IntegerOverflowAndDivisionByZero) {
    NEED_CC();
    // out[t] = ids[t] * 2^62 + 2^62 / ids[t] % 3: overflows for ids >= 2 (the product) and -2 (the
    // sum: the product is INT64_MIN), divides by zero for 0.
    Kernel k;
    k.name = "ints";
    k.dtype = DType::F64;
    k.inputs = {{DType::I64, {{"T", 2}}}};
    k.output = {DType::I64, {{"T", 2}}};
    const ExprP id = load(0, {i(0)}, true);
    const ExprP big = integer(int64_t(1) << 62);
    k.body = {for_loop(
        0, 0, 2,
        {store(1, {i(0)}, binary("add", binary("mul", id, big), binary("mod", binary("div", big, id), integer(3))))})};
    k.n_loops = 1;
    const NativeCode code = compile_cc(k, shared());
    std::vector<Data> in = test::draw_inputs(k, 1);
    for (auto [ids, status] : std::vector<std::pair<std::vector<int64_t>, int>>{{{1, -1}, PRESK_OK},
                                                                                {{1, 2}, PRESK_INT_OVERFLOW},
                                                                                {{1, 0}, PRESK_DIV_BY_ZERO},
                                                                                {{-2, 1}, PRESK_INT_OVERFLOW}}) {
        in[0] = Data::from_ints(ids);
        EXPECT_EQ(test::compare_with_interpreter(k, code, in), "");
        const Ran r = run_compiled(k, code, in);
        EXPECT_EQ(r.status, status);
        if (r.status != PRESK_OK) {
            EXPECT_EQ(status_message(k, r.status, r.err.data()), interpreter_error(k, in));
        }
    }
}

// Vectors, selects, comparisons, integer arithmetic, constants that are NaN, infinite or -0,
// a bf16 input of an f64 kernel and an f32 output: the printer's less travelled paths.
TEST(CcConformance, VectorsSelectsAndConstants) {
    NEED_CC();
    for (DType t : {DType::F64, DType::F32}) {
        Kernel k;
        k.name = "mix";
        k.dtype = t;
        k.inputs = {{t, {{"", 3}, {"", 8}}}, {DType::BF16, {{"", 8}}}, {DType::I64, {{"", 3}}}};
        k.output = {t == DType::F64 ? DType::F32 : DType::F64, {{"", 3}, {"", 8}}};
        const ExprP n0 = scalar_var(0, true);
        const ExprP v0 = vector_var(0, 4);
        k.body = {for_loop(
            0, 0, 3,
            {assign(0,
                    binary("sub", binary("max", load(2, {i(0)}, true), integer(0)), binary("div", i(0), integer(2)))),
             assign(1, select(compare("ge", load(0, {i(0), integer(0)}), real(0.0 / 0.0)), real(-0.0), real(1e300))),
             for_loop(1, 0, 2,
                      {assign(0, binary("min", vload(0, {i(0), binary("mul", i(1), integer(4))}, 4),
                                        splat(binary("pow", scalar_var(1), real(-1.0 / 0.0)), 4))),
                       vstore(3, {i(0), binary("mul", i(1), integer(4))},
                              select(compare("ne", n0, integer(0)),
                                     binary("add", v0, vload(1, {binary("mul", i(1), integer(4))}, 4)),
                                     binary("mul", v0, splat(to_real(n0), 4))))}),
             if_else(compare("lt", scalar_var(1), real(0.1)),
                     {store(3, {i(0), integer(7)}, unary("sqrt", unary("neg", scalar_var(1))))})})};
        k.n_loops = 2;
        k.n_scalars = 2;
        k.n_vectors = 1;
        const NativeCode code = compile_cc(k, shared());
        for (uint64_t seed = 0; seed < 20; ++seed) {
            std::vector<Data> in = test::draw_inputs(k, seed, seed % 2);
            in[2] = Data::from_ints(std::vector<int64_t>{(int64_t)seed % 3, 0, -5});
            EXPECT_EQ(test::compare_with_interpreter(k, code, in), "") << seed;
        }
    }
}

TEST(CcPrint, ConstantsExact) {
    Kernel k;
    k.name = "c";
    k.dtype = DType::F32;
    k.output = {DType::F32, {{"", 4}}};
    k.body = {store(0, {integer(0)}, real(0.1)), store(0, {integer(1)}, real(-0.0)),
              store(0, {integer(2)}, real(1e-40)), store(0, {integer(3)}, real(1.0 / 0.0))};
    const std::string c = print_c(k, "f");
    EXPECT_NE(c.find("b0[o0] = 0x1.99999ap-4f;"), std::string::npos) << c;  // 0.1 rounded once to float
    EXPECT_NE(c.find("= (-0x0p+0f);"), std::string::npos) << c;
    EXPECT_NE(c.find("= 0x1.16c2p-133f;"), std::string::npos) << c;  // a float subnormal, exactly
    EXPECT_EQ(std::strtof("0x1.16c2p-133", nullptr), (float)1e-40);
    EXPECT_NE(c.find("= presk_f32_bits(UINT32_C(0x7f800000));"), std::string::npos) << c;
    EXPECT_EQ(c.find("err[0]"), std::string::npos) << "constant indices in range are not checked\n" << c;
    EXPECT_THROW(print_c(k, "not an identifier"), Error);
    k.body = {store(0, {integer(4)}, real(1))};
    EXPECT_NE(print_c(k, "f").find("err[0] = INT64_C(0);"), std::string::npos);  // out of range: checked
}

// ---- the cache and the compiler's failures ----

std::vector<std::string> entries(const fs::path& cache) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(cache)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

fs::path kernel_entry(const fs::path& cache) {
    for (const std::string& n : entries(cache))
        if (n.rfind("kernel-", 0) == 0) return cache / n;
    return {};
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A shell script `name` in `dir` with body `sh`; returns its path.
std::string script(const fs::path& dir, const std::string& name, const std::string& sh) {
    const fs::path p = dir / name;
    std::ofstream(p) << "#!/bin/sh\n" << sh;
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
}

std::string expect_error(const Kernel& k, const CcOptions& o) {
    try {
        compile_cc(k, o);
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "compile_cc did not fail";
    return "";
}

TEST(CcCache, HitUsesTheEntryAndItsText) {
    NEED_CC();
    TempFolder f;
    const CcOptions o{"cc", (f.path / "cache").string()};
    const Kernel k = gather(DType::F32);
    std::string note;
    const NativeCode a = compile_cc(k, o, &note);
    EXPECT_EQ(note, "");
    EXPECT_EQ(a.text, print_c(k, "presk_kernel0"));
    const std::vector<std::string> names = entries(o.cache);
    ASSERT_EQ(names.size(), 2u);  // pmath-<hash>, kernel-<hash>: no temporary folder left
    EXPECT_EQ(names[0].rfind("kernel-", 0), 0u);
    EXPECT_EQ(names[1].rfind("pmath-", 0), 0u);
    const fs::path e = kernel_entry(o.cache);
    const std::string stored = slurp(e / "kernel.c");
    EXPECT_EQ(stored.rfind("// presk cc: ", 0), 0u);
    EXPECT_EQ(stored.substr(stored.find('\n') + 1), a.text);
    const auto when = fs::last_write_time(e / "kernel.so");
    const NativeCode b = compile_cc(k, o, &note);
    EXPECT_EQ(note, "");
    EXPECT_EQ(fs::last_write_time(e / "kernel.so"), when);  // not recompiled
    EXPECT_EQ(entries(o.cache), names);
    EXPECT_EQ(test::compare_with_interpreter(k, b, test::draw_inputs(k, 3)), "");
}

TEST(CcCache, MissingCompiler) {
    TempFolder f;
    const Kernel k = gather(DType::F32);
    EXPECT_EQ(expect_error(k, {"/nonexistent/presk-cc", (f.path / "cache").string()}),
              "--backend cc: the C compiler `/nonexistent/presk-cc` was not found (set PRESK_CC)");
    EXPECT_EQ(expect_error(k, {"presk-no-such-compiler", (f.path / "cache").string()}),
              "--backend cc: the C compiler `presk-no-such-compiler` was not found (set PRESK_CC)");
}

TEST(CcCache, CompilerThatFails) {
    NEED_CC();
    TempFolder f;
    const Kernel k = gather(DType::F32);
    // Fails on everything: the first question, its version, reports it.
    const std::string broken = script(f.path, "broken-cc", "echo 'broken-cc: cannot run' >&2\nexit 3\n");
    const std::string e1 = expect_error(k, {broken, (f.path / "cache").string()});
    EXPECT_EQ(
        e1, "--backend cc: the compiler's version: `" + broken + " --version` failed (exit 3):\nbroken-cc: cannot run");
    // The real compiler for everything but the kernel's text: the kernel fails to compile.
    const std::string picky =
        script(f.path, "picky-cc",
               "for a in \"$@\"; do case \"$a\" in *kernel.c) echo \"$a:1:1: error: refused\" >&2; "
               "exit 1;; esac; done\nexec cc \"$@\"\n");
    const std::string e2 = expect_error(k, {picky, (f.path / "cache2").string()});
    EXPECT_EQ(e2.rfind("--backend cc: kernel gather: `" + picky + " -std=c11 -O3 -march=native", 0), 0u) << e2;
    EXPECT_NE(e2.find("failed (exit 1):\n"), std::string::npos) << e2;
    EXPECT_NE(e2.find("kernel.c:1:1: error: refused"), std::string::npos) << e2;
    for (const std::string& n : entries(f.path / "cache2"))
        EXPECT_EQ(n.rfind("pmath-", 0), 0u) << n;  // nothing half-built left
}

TEST(CcCache, CorruptEntryIsRecompiled) {
    NEED_CC();
    TempFolder f;
    const CcOptions o{"cc", (f.path / "cache").string()};
    const Kernel k = gather(DType::F64);
    compile_cc(k, o);
    const fs::path e = kernel_entry(o.cache);
    const std::string good = slurp(e / "kernel.c");
    std::ofstream(e / "kernel.c", std::ios::app) << "/* edited */\n";
    std::string note;
    NativeCode c = compile_cc(k, o, &note);
    EXPECT_EQ(note, "--backend cc: the cache entry " + e.string() +
                        " is corrupt (its kernel.c differs from the text compiled); recompiled\n");
    EXPECT_EQ(slurp(e / "kernel.c"), good);
    EXPECT_EQ(test::compare_with_interpreter(k, c, test::draw_inputs(k, 4)), "");
    // A library that does not load (truncated; unloaded first) under the right text.
    c = NativeCode{};
    fs::resize_file(e / "kernel.so", 100);
    note.clear();
    c = compile_cc(k, o, &note);
    EXPECT_NE(note.find("is corrupt (its kernel.so does not load: "), std::string::npos) << note;
    EXPECT_GT(fs::file_size(e / "kernel.so"), 100u);
    EXPECT_EQ(test::compare_with_interpreter(k, c, test::draw_inputs(k, 4)), "");
    EXPECT_EQ(entries(o.cache).size(), 2u);
}

TEST(CcCache, UnwritableFolderFallsBackToAPrivateOne) {
    NEED_CC();
    TempFolder f;
    const Kernel k = gather(DType::F32);
    std::ofstream(f.path / "file") << "not a folder\n";
    const std::string under_file = (f.path / "file" / "cache").string();
    std::string note;
    NativeCode c = compile_cc(k, {"cc", under_file}, &note);
    EXPECT_EQ(note.rfind("--backend cc: the cache folder " + under_file +
                             " cannot be written (Not a directory); what it lacks is "
                             "compiled in the private folder ",
                         0),
              0u)
        << note;
    EXPECT_EQ(test::compare_with_interpreter(k, c, test::draw_inputs(k, 6)), "");
    note.clear();
    c = compile_cc(k, {"cc", under_file}, &note);
    EXPECT_EQ(note, "");  // said once
    EXPECT_EQ(test::compare_with_interpreter(k, c, test::draw_inputs(k, 7)), "");
    if (geteuid() != 0) {  // permissions bind only other users than root
        const fs::path ro = f.path / "read-only";
        fs::create_directories(ro);
        fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
        note.clear();
        c = compile_cc(k, {"cc", ro.string()}, &note);
        EXPECT_NE(note.find("cannot be written (Permission denied)"), std::string::npos) << note;
        EXPECT_EQ(test::compare_with_interpreter(k, c, test::draw_inputs(k, 6)), "");
    }
}

TEST(CcCache, ThreadsShareOneEntry) {
    NEED_CC();
    TempFolder f;
    const CcOptions o{"cc", (f.path / "cache").string()};
    const Kernel k = gather(DType::BF16);
    std::vector<NativeCode> codes(4);
    std::vector<std::string> errors(4);
    std::vector<std::thread> ts;
    for (size_t t = 0; t < codes.size(); ++t)
        ts.emplace_back([&, t] {
            try {
                codes[t] = compile_cc(k, o);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    for (std::thread& t : ts) t.join();
    for (size_t t = 0; t < codes.size(); ++t) {
        EXPECT_EQ(errors[t], "");
        ASSERT_TRUE(codes[t].fn);
        EXPECT_EQ(test::compare_with_interpreter(k, codes[t], test::draw_inputs(k, t)), "");
    }
    EXPECT_EQ(entries(o.cache).size(), 2u);
}

TEST(CcCache, OptionsFromTheEnvironment) {
    auto with = [](std::map<std::string, const char*> env) {
        std::map<std::string, std::string> saved;
        for (const char* n : {"PRESK_CC", "PRESK_CACHE", "XDG_CACHE_HOME", "HOME"}) {
            if (const char* v = std::getenv(n)) saved[n] = v;
            if (env.count(n) && env[n]) setenv(n, env[n], 1);
            else unsetenv(n);
        }
        const CcOptions o = CcOptions::from_env();
        for (const char* n : {"PRESK_CC", "PRESK_CACHE", "XDG_CACHE_HOME", "HOME"}) {
            if (saved.count(n)) setenv(n, saved[n].c_str(), 1);
            else unsetenv(n);
        }
        return o.compiler + " | " + o.cache;
    };
    EXPECT_EQ(with({{"HOME", "/h"}}), "cc | /h/.cache/presk");
    EXPECT_EQ(with({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}}), "cc | /x/presk");
    EXPECT_EQ(with({{"HOME", "/h"}, {"XDG_CACHE_HOME", "relative"}}), "cc | /h/.cache/presk");
    EXPECT_EQ(with({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}, {"PRESK_CACHE", "/p"}, {"PRESK_CC", "clang"}}),
              "clang | /p");
    EXPECT_EQ(with({}), "cc | ");
}

} // namespace
} // namespace presk::kernel
