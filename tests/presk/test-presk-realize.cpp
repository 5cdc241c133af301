// Realizations and the kernel backend's executor: --realize parsing (good spellings and every
// malformed input, with its message), the refusals of a realization before anything runs
// (E7002 and the others), the seed's dump of Linear.apply, fusion groups and their counts, the
// kernel cache, values crossing the seam (two roundings to bf16), sample and dropout drawing
// the reference's numbers, and the examples within the seed's bands of the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernel/eval.h"
#include "presk_test.h"
#include "realize/conformance.h"
#include "seed_kernels.h"
#include "realize/executor.h"
#include "realize/realization.h"
#include "ref/interp.h"

namespace presk {
namespace {

using kernel::DType;
using realize::Executor;
using realize::parse_realization;
using realize::parse_realization_json;
using realize::Realization;

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string example(const std::string& name) { return read(std::string(PRESK_SOURCE_DIR) + "/examples/" + name); }

core::Program program(const std::string& text, const std::string& entry, std::map<std::string, int64_t> dims = {}) {
    std::string err;
    core::Program p = test::compile(text, entry, CheckOptions{std::move(dims), {}}, &err);
    EXPECT_EQ(err, "");
    return p;
}

using test::error_of;

// ---- realizations ----

TEST(Realization, UniformSpellings) {
    for (auto [s, t] : {std::pair{"f64", DType::F64}, {"f32", DType::F32}, {"bf16", DType::BF16}}) {
        Realization r = parse_realization(s);
        EXPECT_EQ(r.default_type, t);
        EXPECT_EQ(r.spelling, s);
        EXPECT_TRUE(r.storage.empty() && r.accum.empty() && r.params.empty());
        EXPECT_EQ(r.order.kind, realize::Order::Sequential);
        EXPECT_EQ(r.storage_of("f/%3"), t);
    }
}

TEST(Realization, TheSeedsObject) {
    Realization r = parse_realization_json(R"({
      "default": "f32",
      "storage": { "loss/%17": "bf16", "loss/%23": "f64" },
      "accum":   { "loss/%17": "f32" },
      "order":   { "kind": "interleaved", "partials": 8 },
      "envelope": "out/envelope.json",
      "params": { "blocks.ff.up.w": "bf16" }
    })", "r.json");
    EXPECT_EQ(r.default_type, DType::F32);
    EXPECT_EQ(r.storage_of("loss/%17"), DType::BF16);
    EXPECT_EQ(r.storage_of("loss/%23"), DType::F64);
    EXPECT_EQ(r.storage_of("loss/%5"), DType::F32);
    EXPECT_EQ(r.accum.at("loss/%17"), DType::F32);
    EXPECT_EQ(r.order.kind, realize::Order::Interleaved);
    EXPECT_EQ(r.order.width, 8);
    EXPECT_EQ(r.envelope, "out/envelope.json");
    EXPECT_EQ(r.params.at("blocks.ff.up.w"), DType::BF16);
    Realization b = parse_realization_json(R"({"order": {"kind": "blocked", "width": 8}})", "b.json");
    EXPECT_EQ(b.default_type, DType::F64);  // absent: f64, as --realize f64
    EXPECT_EQ(b.order.kind, realize::Order::Blocked);
    EXPECT_EQ(b.order.width, 8);
    // A site's function may hold braces, commas and dots.
    EXPECT_EQ(parse_realization_json(R"({"storage": {"Linear{3,2}.apply/%3": "bf16"}})", "x").storage.size(), 1u);
}

TEST(Realization, FromAFile) {
    const auto dir = std::filesystem::temp_directory_path() / ("presk-realize-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "r.json").string();
    std::ofstream(path) << R"({"default": "bf16"})";
    Realization r = parse_realization("@" + path);
    EXPECT_EQ(r.default_type, DType::BF16);
    EXPECT_EQ(r.spelling, "@" + path);
    std::ofstream(path) << R"({"default": "f16"})";
    EXPECT_EQ(error_of([&] { parse_realization("@" + path); }),
              path + ": \"default\": \"f16\": there is no f16 (the types are f64, f32 and bf16)");
    std::ofstream(path) << "";
    EXPECT_NE(error_of([&] { parse_realization("@" + path); }).find(path + ": malformed JSON"), std::string::npos);
    EXPECT_EQ(error_of([&] { parse_realization("@" + dir.string()); }),
              dir.string() + ": cannot read the realization file: it is a directory");
    EXPECT_EQ(error_of([&] { parse_realization("@" + path + ".missing"); }), path + ".missing: cannot read the realization file");
    std::filesystem::remove_all(dir);
}

TEST(Realization, MalformedInputsAreRefusedWithTheirKeyAndValue) {
    EXPECT_EQ(error_of([] { parse_realization("f16"); }), "--realize f16: there is no f16 (the types are f64, f32 and bf16)");
    EXPECT_EQ(error_of([] { parse_realization("F32"); }), "--realize F32: unknown realization \"F32\" (f64, f32, bf16 or @FILE)");
    EXPECT_EQ(error_of([] { parse_realization(""); }), "--realize: an empty realization (f64, f32, bf16 or @FILE)");
    EXPECT_EQ(error_of([] { parse_realization("@"); }), "--realize @: no file name after '@'");
    const std::pair<const char*, const char*> bad[] = {
        {R"([1, 2])", "r.json: a realization is a JSON object, found [1,2]"},
        {R"({"default": "f32", "bogus": 1})",
         "r.json: unknown key \"bogus\" (1); a realization has default, storage, accum, order, envelope, params and quant"},
        {R"({"default": "f8"})", "r.json: \"default\": unknown type \"f8\" (the types are f64, f32 and bf16)"},
        {R"({"default": 32})", "r.json: \"default\": 32 is not a type name (f64, f32 or bf16)"},
        {R"({"storage": {"loss/%17": "f16"}})",
         "r.json: \"storage\".\"loss/%17\": \"f16\": there is no f16 (the types are f64, f32 and bf16)"},
        {R"({"storage": {"loss/%17": "i64"}})",
         "r.json: \"storage\".\"loss/%17\": unknown type \"i64\" (the types are f64, f32 and bf16)"},
        {R"({"storage": {"loss%17": "f32"}})",
         "r.json: \"storage\".\"loss%17\": \"loss%17\" is not a site (\"<function>/%<let>\", as dump --stage core numbers the lets)"},
        {R"({"storage": {"loss/%x": "f32"}})",
         "r.json: \"storage\".\"loss/%x\": \"loss/%x\" is not a site (\"<function>/%<let>\", as dump --stage core numbers the lets)"},
        {R"({"storage": ["loss/%1"]})", "r.json: \"storage\": [\"loss/%1\"] is not an object of sites"},
        {R"({"accum": {"loss/%17": "f16"}})",
         "r.json: \"accum\".\"loss/%17\": \"f16\": there is no f16 (the types are f64, f32 and bf16)"},
        {R"({"order": {"kind": "blocked"}})", "r.json: \"order\": blocked needs \"width\", a positive integer"},
        {R"({"order": {"kind": "interleaved"}})", "r.json: \"order\": interleaved needs \"partials\", a positive integer"},
        {R"({"order": {"kind": "blocked", "width": 0}})", "r.json: \"order\".\"width\": 0 is not a positive integer"},
        {R"({"order": {"kind": "blocked", "width": 8.5}})", "r.json: \"order\".\"width\": 8.5 is not a positive integer"},
        {R"({"order": {"kind": "sequential", "width": 8}})",
         "r.json: \"order\".\"width\": unknown key for order \"sequential\" (8)"},
        {R"({"order": {"kind": "shuffled"}})", "r.json: \"order\".\"kind\": \"shuffled\" is not sequential, blocked or interleaved"},
        {R"({"order": {"width": 8}})", "r.json: \"order\": {\"width\":8} has no \"kind\""},
        {R"({"order": "sequential"})",
         "r.json: \"order\": \"sequential\" is not an object ({\"kind\": \"sequential\"}, {\"kind\": \"blocked\", \"width\": W} "
         "or {\"kind\": \"interleaved\", \"partials\": P})"},
        {R"({"envelope": 3})", "r.json: \"envelope\": 3 is not a file name"},
        {R"({"params": {"w": "f64"}})",
         "r.json: \"params\".\"w\": \"f64\": a parameter's own type is f32 or bf16 (a wider one is the default's business)"},
        {R"({"params": {"a..b": "bf16"}})", "r.json: \"params\".\"a..b\": \"a..b\" is not a parameter path (fields joined by '.')"},
        {R"({"default": "f32", "default": "bf16"})", "r.json: the key \"default\" appears twice in one object"},
        {R"({"storage": {"f/%1": "f32", "f/%1": "bf16"}})", "r.json: the key \"f/%1\" appears twice in one object"},
    };
    for (const auto& [text, msg] : bad) EXPECT_EQ(error_of([&] { parse_realization_json(text, "r.json"); }), msg) << text;
    EXPECT_NE(error_of([] { parse_realization_json("{\"default\": ", "r.json"); }).find("r.json: malformed JSON: "),
              std::string::npos);
    // A deep nest is refused before a message would print it (the printing recursed once per
    // level and overflowed the stack); a long value is cut in messages.
    for (int n : {33, 200000}) {
        const std::string deep = "{\"default\": " + std::string((size_t)n, '[') + std::string((size_t)n, ']') + "}";
        EXPECT_EQ(error_of([&] { parse_realization_json(deep, "r.json"); }), "r.json: JSON nested deeper than 32 levels") << n;
    }
    const std::string nest31 = "{\"default\": " + std::string(31, '[') + std::string(31, ']') + "}";
    EXPECT_EQ(error_of([&] { parse_realization_json(nest31, "r.json"); }),
              "r.json: \"default\": " + std::string(31, '[') + std::string(31, ']') + " is not a type name (f64, f32 or bf16)");
    const std::string longer = "{\"default\": \"" + std::string(100, 'f') + "\"}";
    EXPECT_EQ(error_of([&] { parse_realization_json(longer, "r.json"); }),
              "r.json: \"default\": unknown type \"" + std::string(76, 'f') + "... (the types are f64, f32 and bf16)");
}

// ---- refusals before anything runs ----

const char* kTwoFunctions = R"(
fn helper(x : [batch, 4]) -> [batch, 4] {
  exp(x)
}

fn unused(x : [batch, 4]) -> [batch, 4] {
  x * x
}

fn loss(x : [batch, 4], w : [4, 4]) -> [] {
  let h = helper(dot(x, w))
  sum(h * h + 1)
}
)";

std::string refusal(const core::Program& p, const std::string& json) {
    return error_of([&] { Executor ex(p, parse_realization_json(json, "r.json")); });
}

TEST(Executor, RefusesAccumulationOtherThanTheStoragesArithmetic) {
    core::Program p = program(kTwoFunctions, "loss", {{"batch", 3}});
    // %2 = dot, %3 = call, %4 = mul, %5 = 1, %6 = add, %7 = sum (the group of %4 and %6 roots at %6).
    ASSERT_NE(core::to_string(*p.find("loss")).find("%7 = sum(%6)"), std::string::npos) << core::to_string(p);
    EXPECT_EQ(refusal(p, R"({"default": "f32", "accum": {"loss/%2": "f64"}})"),
              "E7002: the kernel backend refuses realization r.json: site loss/%2 declares accumulation in f64 over f32 "
              "storage (kernels sum in their storage's arithmetic type, f32)");
    EXPECT_EQ(refusal(p, R"({"default": "bf16", "accum": {"loss/%7": "bf16"}})"),
              "E7002: the kernel backend refuses realization r.json: site loss/%7 declares accumulation in bf16 over bf16 "
              "storage (kernels sum in their storage's arithmetic type, f32)");
    EXPECT_EQ(refusal(p, R"({"default": "f64", "accum": {"loss/%2": "f32"}})"),
              "E7002: the kernel backend refuses realization r.json: site loss/%2 declares accumulation in f32 over f64 "
              "storage (kernels sum in their storage's arithmetic type, f64)");
    // The site's own storage counts, not the default's.
    EXPECT_EQ(refusal(p, R"({"default": "f64", "storage": {"loss/%2": "f32"}, "accum": {"loss/%2": "f64"}})"),
              "E7002: the kernel backend refuses realization r.json: site loss/%2 declares accumulation in f64 over f32 "
              "storage (kernels sum in their storage's arithmetic type, f32)");
    // Declaring what the kernels do is fine.
    EXPECT_EQ(refusal(p, R"({"default": "bf16", "accum": {"loss/%2": "f32", "loss/%7": "f32"}})"), "");
    EXPECT_EQ(refusal(p, R"({"default": "f32", "accum": {"loss/%2": "f32"}})"), "");
    EXPECT_EQ(refusal(p, R"({"default": "f64", "accum": {"loss/%7": "f64"}})"), "");
}

TEST(Executor, RefusesAnInterleavedOrder) {
    core::Program p = program(kTwoFunctions, "loss", {{"batch", 3}});
    EXPECT_EQ(refusal(p, R"({"order": {"kind": "interleaved", "partials": 8}})"),
              "E7002: the kernel backend refuses realization r.json: order interleaved(8) reassociates the contractions' "
              "sums, and the kernel backend has no such kernels");
    EXPECT_EQ(refusal(p, R"({"order": {"kind": "blocked", "width": 8}})"), "");  // bit-identical to sequential
}

TEST(Executor, RefusesSitesTheProgramDoesNotLaunch) {
    core::Program p = program(kTwoFunctions, "loss", {{"batch", 3}});
    const std::string pre = "E7002: the kernel backend refuses realization r.json: ";
    EXPECT_EQ(refusal(p, R"({"storage": {"nothing/%2": "f32"}})"), pre + "storage names nothing/%2, but the program has no function nothing");
    EXPECT_EQ(refusal(p, R"({"storage": {"unused/%1": "f32"}})"),  // the checker keeps what the entry reaches
              pre + "storage names unused/%1, but the program has no function unused");
    core::Function orphan = *p.find("helper");
    orphan.name = "orphan";
    p.add(orphan);
    EXPECT_EQ(refusal(p, R"({"storage": {"orphan/%1": "f32"}})"),
              pre + "storage names orphan/%1, but orphan is not reachable from the entry loss");
    EXPECT_EQ(refusal(p, R"({"storage": {"loss/%99": "f32"}})"), pre + "storage names loss/%99, but loss has no let %99");
    EXPECT_EQ(refusal(p, R"({"storage": {"loss/%0": "f32"}})"), pre + "storage names loss/%0, but loss has no let %0");
    EXPECT_EQ(refusal(p, R"({"storage": {"loss/%4": "bf16"}})"),
              pre + "storage names loss/%4, which is fused into the group rooted at loss/%6 (a realization types a fusion "
                    "group by its root)");
    EXPECT_EQ(refusal(p, R"({"storage": {"loss/%3": "bf16"}})"),
              pre + "storage names loss/%3, a call evaluated on the host, not a kernel launch");
    EXPECT_EQ(refusal(p, R"({"storage": {"loss/%5": "bf16"}})"),
              pre + "storage names loss/%5, a literal evaluated on the host, not a kernel launch");
    EXPECT_EQ(refusal(p, R"({"accum": {"loss/%6": "f64"}})"), pre + "accum names loss/%6, an add that sums nothing");
    // Every problem is named, in one message.
    EXPECT_EQ(refusal(p, R"({"storage": {"loss/%99": "f32", "helper/%2": "bf16", "nothing/%1": "f32"}})"),
              pre + "storage names helper/%2, but helper has no let %2; storage names loss/%99, but loss has no let %99; "
                    "storage names nothing/%1, but the program has no function nothing");
    // Sites of callees reachable from the entry are sites.
    EXPECT_EQ(refusal(p, R"({"storage": {"helper/%1": "bf16", "loss/%6": "f64", "loss/%7": "f32"}})"), "");
}

TEST(Executor, RefusesParamsThatAreNotParameters) {
    core::Program lin = program(example("tutorial/01_linear.psk"), "Linear{3, 2}.apply", {{"batch", 4}});
    const std::string pre = "E7002: the kernel backend refuses realization r.json: ";
    EXPECT_EQ(refusal(lin, R"({"params": {"v": "bf16"}})"), pre + "params names v, which is not a parameter of Linear{3,2}.apply");
    EXPECT_EQ(refusal(lin, R"({"params": {"w": "bf16", "b": "f32"}})"), "");
    core::Program gpt = program(example("minigpt.psk"), "MiniGPT{16, 8, 2, 2}.apply", {{"B", 1}, {"T", 4}});
    EXPECT_EQ(refusal(gpt, R"({"params": {"blocks.up": "bf16"}})"),
              pre + "params names blocks.up, a subtree (blocks.up.b, ...); it keys leaves");
    EXPECT_EQ(refusal(gpt, R"({"params": {"blocks.up.w": "bf16"}})"), "");
    core::Program fn = program(kTwoFunctions, "loss", {{"batch", 3}});
    EXPECT_EQ(refusal(fn, R"({"params": {"w": "bf16"}})"), pre + "params names w, but the entry loss has no parameters");
}

// ---- the seed's dump ----

TEST(Executor, LinearDumpIsTheSeeds) {
    core::Program p = program(example("tutorial/01_linear.psk"), "Linear{3, 2}.apply", {{"batch", 4}});
    ref::Interp interp(p, {256, 0, false});
    Executor ex(p, parse_realization("f32"));
    ex.call(p.entry, interp.entry_args());
    ASSERT_EQ(ex.kernels().size(), 2u);
    EXPECT_EQ(ex.launches().size(), 2u);
    EXPECT_EQ(ex.unfused_launches(), 2);
    EXPECT_EQ(ex.launches()[0].site, "Linear{3,2}.apply/%3");
    EXPECT_EQ(ex.launches()[1].site, "Linear{3,2}.apply/%5");
    EXPECT_EQ(kernel::to_string(*ex.kernels()[0]) + kernel::to_string(*ex.kernels()[1]),
              std::string(test::kSeedDot) + test::kSeedAdd);
}

TEST(Executor, AttentionScoresLaunchTheEin) {
    core::Program p = program(example("tutorial/03_attention.psk"), "scores", {{"B", 1}, {"T", 4}});
    ref::Interp interp(p, {256, 0, false});
    Executor ex(p, parse_realization("f32"));
    ex.call(p.entry, interp.entry_args());
    ASSERT_EQ(ex.kernels().size(), 2u);
    EXPECT_EQ(kernel::to_string(*ex.kernels()[0]).rfind("kernel ein[B, 2, T, T] (%0 : f32[B: 1, 2, T: 4, 4], ", 0), 0u);
    EXPECT_EQ(ex.kernels()[1]->name, "sqrt+div");  // sqrt(Dh) read only by the division: one group
    EXPECT_EQ(ex.unfused_launches(), 3);
}

// ---- fusion groups ----

/// Runs `entry` of `text` on the reference's inputs with and without fusion; returns the two
/// executors' outputs and checks the counts.
struct Fused {
    int64_t launches = 0, unfused = 0, kernels = 0;
    std::vector<std::string> names;
    realize::Value out, out_unfused;
};

Fused run_fused(const std::string& text, const std::string& entry, const char* r, std::map<std::string, int64_t> dims = {{"batch", 3}}) {
    core::Program p = program(text, entry, std::move(dims));
    ref::Interp interp(p, {256, 1, false});
    const auto args = interp.entry_args();
    Fused f;
    Executor a(p, parse_realization(r));
    f.out = a.call(p.entry, args);
    f.launches = (int64_t)a.launches().size();
    f.unfused = a.unfused_launches();
    f.kernels = (int64_t)a.kernels().size();
    for (const auto* k : a.kernels()) f.names.push_back(k->name);
    Executor b(p, parse_realization(r), {1, false, false});
    f.out_unfused = b.call(p.entry, args);
    EXPECT_EQ((int64_t)b.launches().size(), f.unfused);
    EXPECT_EQ(b.unfused_launches(), f.unfused);
    return f;
}

TEST(Fusion, AChainIsOneLaunch) {
    Fused f = run_fused("fn f(x : [batch, 5], y : [batch, 5]) -> [batch, 5] {\n  tanh(exp(x * y) + y)\n}\n", "f", "f32");
    EXPECT_EQ(f.launches, 1);
    EXPECT_EQ(f.unfused, 4);
    EXPECT_EQ(f.names, std::vector<std::string>{"mul+exp+add+tanh"});
    // In f32 every intermediate is an f32 either way: fusion changes no bit.
    EXPECT_EQ(f.out.t->reals(), f.out_unfused.t->reals());
}

TEST(Fusion, AValueReadTwiceEndsAGroup) {
    // a = x * y is read by the add and the exp: it roots its own group; exp joins the add's.
    Fused f = run_fused("fn f(x : [batch, 5], y : [batch, 5]) -> [batch, 5] {\n  let a = x * y\n  a + exp(a)\n}\n", "f", "f64");
    EXPECT_EQ(f.launches, 2);
    EXPECT_EQ(f.unfused, 3);
    EXPECT_EQ(f.names, (std::vector<std::string>{"mul", "exp+add"}));
    EXPECT_EQ(f.out.t->reals(), f.out_unfused.t->reals());
}

TEST(Fusion, AReductionOrACallEndsAGroup) {
    // exp(x) is read by sum (not elementwise): a group of its own; the mean and the division by
    // the call's result are separate launches.
    const char* text = "fn g(x : [batch, 5]) -> [batch, 5] {\n  x * 2\n}\n"
                       "fn f(x : [batch, 5]) -> [batch] {\n  sum(exp(x), -1) / sum(g(x), -1)\n}\n";
    Fused f = run_fused(text, "f", "f32");
    EXPECT_EQ(f.launches, 5);  // exp, sum, mul (in g), sum, div
    EXPECT_EQ(f.unfused, 5);
}

TEST(Fusion, Bf16GroupsKeepTheirInteriorInF32) {
    // In bf16 an unfused chain rounds every intermediate to bf16 and a fused one does not, so
    // the bits may differ; both stay within the bf16 band of each other.
    Fused f = run_fused("fn f(x : [batch, 5], y : [batch, 5]) -> [batch, 5] {\n  tanh(exp(x * y) + y)\n}\n", "f", "bf16");
    EXPECT_EQ(f.launches, 1);
    for (size_t i = 0; i < (size_t)f.out.t->size(); ++i) {
        EXPECT_EQ(kernel::round_to(DType::BF16, f.out.t->real(i)), f.out.t->real(i));
        EXPECT_NEAR(f.out.t->real(i), f.out_unfused.t->real(i), 0.0625 * (std::fabs(f.out.t->real(i)) + 0.03125));
    }
}

TEST(Fusion, MixedSitesConvertAtTheKernelsEdge) {
    core::Program p = program(kTwoFunctions, "loss", {{"batch", 3}});
    ref::Interp interp(p, {256, 0, false});
    Executor ex(p, parse_realization_json(R"({"default": "f32", "storage": {"loss/%2": "bf16", "loss/%7": "f64"}})", "mixed"));
    realize::Value out = ex.call(p.entry, interp.entry_args());
    std::map<std::string, DType> by_site;
    for (const auto& l : ex.launches()) by_site[l.site] = l.kernel->dtype;
    EXPECT_EQ(by_site.at("loss/%2"), DType::BF16);
    EXPECT_EQ(by_site.at("helper/%1"), DType::F32);
    EXPECT_EQ(by_site.at("loss/%6"), DType::F32);
    EXPECT_EQ(by_site.at("loss/%7"), DType::F64);
    EXPECT_EQ(out.t->dtype(), DType::F64);
    // A narrower buffer is read in its own type (exactly, no copy), a wider one converted to
    // the kernel's storage type at its edge; a literal is read in the arithmetic type.
    std::map<std::string, std::string> inputs;
    for (const auto& l : ex.launches()) {
        std::string s;
        for (const auto& b : l.kernel->inputs) s += std::string(s.empty() ? "" : " ") + kernel::dtype_name(b.dtype);
        inputs[l.site] = s;
    }
    EXPECT_EQ(inputs.at("loss/%2"), "bf16 bf16");  // x and w, f32 arguments rounded at the edge
    EXPECT_EQ(inputs.at("helper/%1"), "bf16");     // the bf16 product read by an f32 exp
    EXPECT_EQ(inputs.at("loss/%6"), "f32 f32");     // h (read twice by the mul) and the literal
    EXPECT_EQ(inputs.at("loss/%7"), "f32");        // an f32 sum read by an f64 kernel
    Executor bf(p, parse_realization_json(R"({"default": "bf16"})", "bf"));
    bf.call(p.entry, interp.entry_args());
    for (const auto& l : bf.launches()) {
        if (l.site == "loss/%6") {
            EXPECT_EQ(kernel::to_string(*l.kernel).rfind("kernel mul+add (%0 : bf16[batch: 3, 4], %1 : f32[]) -> %2 : bf16[batch: 3, 4] {", 0), 0u);
        }
    }
}

TEST(Executor, KernelsAreCachedBySignature) {
    core::Program p = program(example("minigpt.psk"), "MiniGPT{16, 8, 2, 2}.apply", {{"B", 1}, {"T", 4}});
    ref::Interp interp(p, {256, 0, false});
    const auto args = interp.entry_args();
    Executor ex(p, parse_realization("f32"));
    ex.call(p.entry, args);
    const size_t k = ex.kernels().size(), n = ex.launches().size();
    EXPECT_LT(k, n);  // the two layers and the four projections share kernels
    ex.call(p.entry, args);
    EXPECT_EQ(ex.kernels().size(), k);
    EXPECT_EQ(ex.launches().size(), 2 * n);
}

// ---- values at the seam ----

TEST(Values, F64ReachesBf16ThroughF32) {
    // 1 + 2^-8 + 2^-30: rounded to f32 it is 1 + 2^-8, a tie in bf16 that goes to even (1);
    // rounded directly it would be 1 + 2^-7.
    const double x = 1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
    ref::Tensor t;
    t.type = tensor_type(Elem::Real, {{"", 2}});
    t.re.emplace_back(256);
    t.re.emplace_back(256);
    mpfr_set_d(t.re[0].get(), x, MPFR_RNDN);
    mpfr_set_d(t.re[1].get(), -x, MPFR_RNDN);
    realize::Value v = realize::from_ref(ref::make_tensor(t), DType::BF16);
    EXPECT_EQ(v.t->dtype(), DType::BF16);
    EXPECT_EQ(v.t->reals(), (std::vector<double>{1.0, -1.0}));
    EXPECT_EQ(realize::from_ref(ref::make_tensor(t), DType::F32).t->real(0), 1 + std::ldexp(1.0, -8));
    EXPECT_EQ(realize::from_ref(ref::make_tensor(t), DType::F64).t->real(0), x);
    // And back, exactly.
    ref::Value back = realize::to_ref(v);
    EXPECT_EQ(back.t->re[1].to_double(), -1.0);
}

TEST(Values, ParamsInTheirOwnType) {
    core::Program p = program(example("tutorial/01_linear.psk"), "Linear{3, 2}.apply", {{"batch", 4}});
    ref::Interp interp(p, {256, 0, false});
    const auto args = interp.entry_args();
    Executor ex(p, parse_realization_json(R"({"default": "f32", "params": {"w": "bf16"}})", "p"));
    const auto in = ex.convert_args(p.entry, args);
    EXPECT_EQ(in[0].items[0].t->dtype(), DType::BF16);  // w
    EXPECT_EQ(in[0].items[1].t->dtype(), DType::F32);   // b
    EXPECT_EQ(in[1].t->dtype(), DType::F32);            // x
    realize::Value out = ex.call_values(p.entry, in);
    ASSERT_EQ(ex.kernels().size(), 2u);
    EXPECT_EQ(kernel::to_string(*ex.kernels()[0]).rfind("kernel dot (%0 : f32[batch: 4, 3], %1 : bf16[3, 2]) -> %2 : f32[batch: 4, 2] {\n", 0), 0u);
    // The same as an f32 run on w rounded to bf16 (exact in f32 at the dot's edge).
    Executor plain(p, parse_realization("f32"));
    auto in2 = plain.convert_args(p.entry, args);
    kernel::Data w = *in2[0].items[0].t;
    for (int64_t e = 0; e < w.size(); ++e) w.set_real(e, kernel::round_to(DType::BF16, w.real(e)));
    in2[0].items[0].t = w;
    EXPECT_EQ(plain.call_values(p.entry, in2).t->reals(), out.t->reals());
}

TEST(Executor, ArgumentsOfTheWrongTypeAreRefused) {
    core::Program p = program(example("tutorial/01_linear.psk"), "Linear{3, 2}.apply", {{"batch", 4}});
    ref::Interp interp(p, {256, 0, false});
    auto args = interp.entry_args();
    Executor ex(p, parse_realization("f64"));
    EXPECT_EQ(error_of([&] { ex.call(p.entry, {args[0]}); }), "Linear{3,2}.apply takes 2 arguments, given 1");
    EXPECT_EQ(error_of([&] { ex.call(p.entry, {args[0], args[0]}); }),
              "Linear{3,2}.apply: argument x is {w: [3, 2], b: [2]}, expected [batch: 4, 3]");
    EXPECT_EQ(error_of([&] { ex.call("nope", {}); }), "no function 'nope'");
}

TEST(Executor, RuntimeErrorsNameTheSite) {
    core::Program p = program("fn f(t : [6, 3], ids : int<6>[batch]) -> [batch, 3] {\n  embed(t, ids)\n}\n", "f", {{"batch", 2}});
    ref::Interp interp(p, {256, 0, false});
    auto args = interp.entry_args();
    ref::Tensor ids = *args[1].t;
    ids.in[1] = 9;
    args[1] = ref::make_tensor(ids);
    Executor ex(p, parse_realization("f32"));
    const std::string msg = error_of([&] { ex.call("f", args); });
    EXPECT_EQ(msg.rfind("f/%2: ", 0), 0u) << msg;
}

// ---- the backend seam ----

TEST(Backend, NamesAndOptions) {
    for (auto b : {realize::Backend::Kernel, realize::Backend::Native, realize::Backend::Cc})
        EXPECT_EQ(realize::parse_backend(realize::backend_name(b)), b);
    EXPECT_EQ(error_of([] { realize::parse_backend("interp"); }),
              "--backend interp: the kernel backends are kernel, native and cc");
    core::Program p = program(example("tutorial/01_linear.psk"), "Linear{3, 2}.apply", {{"batch", 4}});
    realize::ExecOptions o;
    o.threads = 0;
    EXPECT_EQ(error_of([&] { Executor(p, parse_realization("f32"), o); }), "threads must be at least 1, not 0");
    o.threads = 1;
    o.lanes = -1;
    EXPECT_EQ(error_of([&] { Executor(p, parse_realization("f32"), o); }), "lanes must be 0 (each type's width) or more, not -1");
    // A lane count the machine type does not have is refused when a kernel is lowered.
    o.lanes = 3;
    o.backend = realize::Backend::Native;
    Executor ex(p, parse_realization("f32"), o);
    ref::Interp interp(p, {64, 7, false});
    const std::string err = error_of([&] { ex.call(p.entry, interp.entry_args()); });
    EXPECT_NE(err.find("--lanes 3"), std::string::npos) << err;
}

// native and cc compile each kernel to machine code on first use (compile_native): until a
// compiler is connected there, a launch fails cleanly, naming the site and the kernel; once it
// is, every output has the kernel interpreter's bits, at one lane and at four.
TEST(Backend, MachineCodeGivesTheInterpretersBitsOrSaysItIsNotBuilt) {
    core::Program p = program(example("minigpt.psk"), "MiniGPT{16, 8, 2, 2}.apply", {{"B", 2}, {"T", 4}});
    ref::Interp interp(p, {256, 7, false});
    const auto args = interp.entry_args();
    for (const char* r : {"f64", "f32", "bf16"}) {
        Executor kernel(p, parse_realization(r), {7});
        std::ostringstream want;
        realize::write_text(want, kernel.call(p.entry, args), 17);
        for (auto b : {realize::Backend::Native, realize::Backend::Cc})
            for (int lanes : {1, 4}) {
                realize::ExecOptions o{7};
                o.backend = b;
                o.lanes = lanes;
                Executor ex(p, parse_realization(r), o);
                std::ostringstream got;
                const std::string err = error_of([&] { realize::write_text(got, ex.call(p.entry, args), 17); });
                const std::string what =
                    std::string(r) + " " + realize::backend_name(b) + " lanes " + std::to_string(lanes);
                if (!err.empty()) {
                    EXPECT_NE(err.find(": kernel "), std::string::npos) << what << ": " << err;
                    const std::string not_built = std::string(": the ") + realize::backend_name(b) + " backend is not built";
                    EXPECT_NE(err.find(not_built), std::string::npos) << what << ": " << err;
                    continue;
                }
                EXPECT_EQ(got.str(), want.str()) << what;
            }
    }
}

// ---- randomness on the host ----

TEST(Host, SamplePicksTheReferencesTokens) {
    const char* text = "fn f(x : [batch, 7]) -> int<7>[batch] {\n  sample(x * 3)\n}\n";
    core::Program p = program(text, "f", {{"batch", 64}});
    for (uint64_t seed : {1u, 2u, 3u}) {
        ref::Interp interp(p, {256, seed, false});
        const auto args = interp.entry_args();
        const ref::Value want = interp.call("f", args);
        for (const char* r : {"f64", "f32"}) {
            Executor ex(p, parse_realization(r), {seed, false, true});
            EXPECT_EQ(ex.call("f", args).t->ints(), want.t->in) << r << " seed " << seed;
        }
    }
}

TEST(Host, SampleOverAnEmptyAxisIsRefusedByBothBackends) {
    core::Program p = program("fn f(x : [batch, 0]) -> int<0>[batch] {\n  sample(x)\n}\n", "f", {{"batch", 2}});
    ref::Interp interp(p, {256, 1, false});
    const auto args = interp.entry_args();
    // The reference read row 0's element 0 of an empty buffer to get there.
    EXPECT_EQ(error_of([&] { interp.call("f", args); }), "f/%1: sample: sampling needs a non-empty last axis");
    Executor ex(p, parse_realization("f32"));
    EXPECT_EQ(error_of([&] { ex.call("f", args); }), "f/%1: sample: sampling needs a non-empty last axis");
}

TEST(Host, DropoutDrawsTheReferencesMask) {
    const char* text = "fn f(x : [batch, 8]) -> [batch, 8] {\n  dropout(x, 0.25)\n}\n";
    core::Program p = program(text, "f", {{"batch", 4}});
    ref::Interp interp(p, {256, 5, true});
    const auto args = interp.entry_args();
    const ref::Value want = interp.call("f", args);
    // In every realization (the rate is converted to the site's arithmetic type first: an f32
    // or bf16 site once read it through a converted buffer that was already freed).
    for (DType t : {DType::F64, DType::F32, DType::BF16}) {
        Executor ex(p, parse_realization(kernel::dtype_name(t)), {5, true, true});
        const realize::Value got = ex.call("f", args);
        const realize::Band b = realize::band_of(t);
        int zeros = 0;
        for (size_t i = 0; i < (size_t)got.t->size(); ++i) {
            const double x = want.t->re[i].to_double();
            EXPECT_EQ(got.t->real(i) == 0, mpfr_zero_p(want.t->re[i].get()) != 0) << kernel::dtype_name(t) << " " << i;
            EXPECT_LE(std::fabs(got.t->real(i) - x), b.eps * (std::fabs(x) + b.a)) << kernel::dtype_name(t) << " " << i;
            zeros += got.t->real(i) == 0;
        }
        EXPECT_GT(zeros, 0) << kernel::dtype_name(t);
    }
    // Outside training it is the identity.
    Executor eval(p, parse_realization("f64"), {5, false, true});
    EXPECT_EQ(eval.call("f", args).t->reals(), realize::from_ref(args[0], DType::F64).t->reals());
}

// ---- the examples within the seed's bands ----

/// Every real element within |x - x̂| <= eps (|x| + a) of the reference, integers equal.
void expect_within(const ref::Value& want, const realize::Value& got, realize::Band b, const std::string& what) {
    if (want.t) {
        ASSERT_TRUE(got.t) << what;
        if (want.t->type->elem != Elem::Real) {
            EXPECT_EQ(got.t->ints(), want.t->in) << what;
            return;
        }
        ASSERT_EQ((size_t)got.t->size(), want.t->re.size()) << what;
        for (size_t i = 0; i < (size_t)got.t->size(); ++i) {
            const double x = want.t->re[i].to_double();
            EXPECT_LE(std::fabs(x - got.t->real(i)), b.eps * (std::fabs(x) + b.a)) << what << " element " << i;
        }
        return;
    }
    ASSERT_EQ(got.items.size(), want.items.size()) << what;
    for (size_t i = 0; i < want.items.size(); ++i) expect_within(want.items[i], got.items[i], b, what);
}

struct ExampleCase {
    const char* file;
    const char* entry;
    std::map<std::string, int64_t> dims;
    std::map<std::string, std::string> given;
};

TEST(Examples, WithinTheSeedsBands) {
    const ExampleCase cases[] = {
        {"tutorial/01_linear.psk", "Linear{3, 2}.apply", {{"batch", 4}}, {}},
        {"tutorial/02_mlp_regression.psk", "MLP{2, 4, 1}.loss_grad", {{"batch", 3}}, {}},
        {"norms.psk", "LayerNorm{8}.apply", {{"N", 3}}, {}},
        {"mse.psk", "mse_grad", {{"batch", 4}, {"n", 3}}, {}},
        {"minigpt.psk", "MiniGPT{16, 8, 2, 2}.loss", {{"B", 2}, {"T", 4}}, {}},
        {"minigpt.psk", "MiniGPT{16, 8, 2, 2}.next_token", {{"B", 2}, {"T", 4}}, {}},
        {"adamw.psk", "adamw.step", {}, {{"t", "3"}}},
    };
    for (const ExampleCase& c : cases) {
        core::Program p = program(example(c.file), c.entry, c.dims);
        ref::Interp interp(p, {256, 7, false});
        const auto args = interp.entry_args(c.given);
        const ref::Value want = interp.call(p.entry, args);
        for (DType t : {DType::F64, DType::F32, DType::BF16}) {
            Executor ex(p, parse_realization(kernel::dtype_name(t)), {7, false, true});
            expect_within(want, ex.call(p.entry, args), realize::band_of(t), std::string(c.entry) + " " + kernel::dtype_name(t));
        }
    }
}

} // namespace
} // namespace presk
