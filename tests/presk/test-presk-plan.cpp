// Realization plans (realize/plan.h) and the executor running them: the seed's pack.json read,
// every malformed plan refused with E7002 naming the problem, every point the executor cannot
// run refused with E7002 naming the site (a site that does not exist or is no kernel launch, a
// point its nest does not admit, lanes other than the register's width natively, a split whose
// loop is not parallel, a worker count other than the machine's or half of it), and
// attention's forward pass under a plan that moves every nest off its default giving the
// default's bits on the kernel interpreter and natively.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kernel/llvm_jit.h"
#include "leaves.h"
#include "presk_test.h"
#include "realize/executor.h"
#include "realize/plan.h"
#include "realize/planner.h"
#include "ref/interp.h"

namespace presk::realize {
namespace {

using test::error_of;
using test::leaves;

TEST(Plan, ReadsTheSeedsPackJson) {
    const Plan p = parse_plan_json(R"({ "realization": "f32",
  "layout": { "scores/%2": { "tile": [2, 4], "lanes": 4, "pack": true,
                             "split": { "depth": 1, "workers": 2 } } } })",
                                   "@pack.json");
    EXPECT_EQ(p.realization, "f32");
    ASSERT_EQ(p.layout.count("scores/%2"), 1u);
    const kernel::Layout& l = p.layout.at("scores/%2");
    EXPECT_EQ(kernel::to_string(l), "tile [2, 4], lanes 4, pack, split at depth 1 over 2 workers");
    EXPECT_EQ(parse_plan_json(R"({"layout": {"f/%1": {"split": "none"}}})", "@p").layout.at("f/%1").split_workers, 1);
    EXPECT_TRUE(parse_plan_json(R"({"layout": {"f/%1": {"tile": [2, 8], "epilogue": "bias"}}})", "@p").layout.at("f/%1").bias);
    EXPECT_FALSE(parse_plan_json(R"({"layout": {"f/%1": {"epilogue": "none"}}})", "@p").layout.at("f/%1").bias);
    EXPECT_EQ(parse_plan_json(R"({"layout": {"f/%1": {"tile": [1, 8]}}})", "@p").layout.at("f/%1").lanes, 0);  // unstated
}

TEST(Plan, RefusesEveryMalformedPlan) {
    const std::pair<const char*, const char*> bad[] = {
        {"[1]", "a plan is a JSON object"},
        {"{\"layout\": {}, \"layout\": {}}", "appears twice"},
        {"{\"layuot\": {}}", "unknown key \"layuot\""},
        {"{\"layout\": []}", "is not an object of sites"},
        {"{\"layout\": {\"scores\": {}}}", "is not a site"},
        {"{\"layout\": {\"f/%1\": 3}}", "is not an object of layout choices"},
        {"{\"layout\": {\"f/%1\": {\"tiles\": [1, 8]}}}", "\"tiles\": unknown key"},
        {"{\"layout\": {\"f/%1\": {\"tile\": [3, 8]}}}", "is not a tile of the space"},
        {"{\"layout\": {\"f/%1\": {\"tile\": [1, 64]}}}", "is not a tile of the space"},
        {"{\"layout\": {\"f/%1\": {\"tile\": 8}}}", "is not [m_i, n_j]"},
        {"{\"layout\": {\"f/%1\": {\"k_block\": 64}}}", "is not a k-block of the space"},
        {"{\"layout\": {\"f/%1\": {\"order\": \"IK\"}}}", "is not IJ or JI"},
        {"{\"layout\": {\"f/%1\": {\"k_block\": 32, \"order\": \"IJ\"}}}", "is not a permutation of IJK"},
        {"{\"layout\": {\"f/%1\": {\"lanes\": 32}}}", "is not 1, 2, 4, 8 or 16 lanes"},
        {"{\"layout\": {\"f/%1\": {\"pack\": 1}}}", "is not true or false"},
        {"{\"layout\": {\"f/%1\": {\"passes\": 1}}}", "is not a softmax's 2 or 3 passes"},
        {"{\"layout\": {\"f/%1\": {\"form\": \"blocked\"}}}", "is not \"tiled\" or \"row-wise\""},
        {"{\"layout\": {\"f/%1\": {\"epilogue\": \"relu\"}}}", "is not \"bias\" or \"none\""},
        {"{\"layout\": {\"f/%1\": {\"epilogue\": true}}}", "is not \"bias\" or \"none\""},
        {"{\"layout\": {\"f/%1\": {\"form\": \"row-wise\", \"tile\": [1, 8]}}}", "the row-wise form has no tile"},
        {"{\"layout\": {\"f/%1\": {\"split\": {\"depth\": 1}}}}", "is not {\"depth\": d, \"workers\": p}"},
        {"{\"layout\": {\"f/%1\": {\"split\": {\"depth\": 1, \"workers\": 0}}}}", "0 workers"},
        {"{\"layout\": {\"f/%1\": {\"split\": {\"depth\": -1, \"workers\": 2}}}}", "is not a loop depth"},
        {"{\"layout\": {\"f/%1\": {\"split\": {\"depth\": 1, \"workers\": 2, \"at\": 0}}}}", "\"at\": unknown key"},
        {"{\"realization\": 3}", "is not a realization"},
        {"{\"layout\": ", "malformed JSON"},
    };
    for (const auto& [text, why] : bad) {
        const std::string e = error_of([&] { parse_plan_json(text, "@p.json"); });
        EXPECT_EQ(e.rfind("E7002: plan @p.json: ", 0), 0u) << text << ": " << e;
        EXPECT_NE(e.find(why), std::string::npos) << text << ": " << e;
    }
    const char nul[] = "{\"layout\": {}}\0{\"layout\": 3}";  // the JSON library alone would stop at the NUL
    const std::string at_nul = error_of([&] { parse_plan_json(std::string(nul, sizeof nul - 1), "@p.json"); });
    EXPECT_NE(at_nul.find("E7002: plan @p.json: malformed JSON: a NUL byte at offset 14"), std::string::npos) << at_nul;
    EXPECT_NE(error_of([] { parse_plan("@/nonexistent/plan.json"); }).find("E7002: plan /nonexistent/plan.json: cannot read"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_plan("plan.json"); }).find("a plan is @FILE.json"), std::string::npos);
}

std::string attention() {
    std::ifstream in(PRESK_SOURCE_DIR "/examples/tutorial/03_attention.psk", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const char* const kEntry = "Attention{8, 2}.apply";
const std::string kSite = "Attention{8,2}.apply/%";

core::Program program() {
    std::string err;
    core::Program p = test::compile(attention(), kEntry, CheckOptions{{{"B", 1}, {"T", 4}}, {}}, &err);
    EXPECT_EQ(err, "");
    return p;
}

/// The message of the executor's refusal of `plan` (JSON) on `b` at `threads` ("" when none).
std::string refusal(const std::string& plan, Backend b = Backend::Kernel, int threads = 1) {
    const core::Program p = program();
    ExecOptions o{7};
    o.backend = b;
    o.threads = threads;
    o.plan = parse_plan_json(plan, "@p.json");
    return error_of([&] { Executor(p, parse_realization("f32"), o); });
}

std::string one(const std::string& site, const std::string& point) {
    return "{\"layout\": {\"" + kSite + site + "\": " + point + "}}";
}

/// The entry's arguments as the reference interpreter draws them (seed 7).
std::vector<ref::Value> entry_args(const core::Program& p) {
    ref::Interp interp(p, {64, 7, false});
    return interp.entry_args({});
}

/// Every leaf's bytes of `p`'s entry run by `ex` on `args`.
std::vector<std::vector<unsigned char>> bits_of(Executor& ex, const core::Program& p, const std::vector<ref::Value>& args) {
    std::vector<std::vector<unsigned char>> out;
    leaves(ex.call(p.entry, args), out);
    return out;
}

/// Calls `f(backend, realization)` on the kernel interpreter and, where LLVM is built, natively,
/// in f64, f32 and bf16.
template <class F> void each_run(F f) {
    for (Backend b : {Backend::Kernel, Backend::Native}) {
        if (b == Backend::Native && !kernel::have_llvm()) continue;
        for (const char* r : {"f64", "f32", "bf16"}) f(b, r);
    }
}

TEST(Plan, TheExecutorRefusesWhatItCannotRun) {
    const std::pair<std::string, const char*> bad[] = {
        {one("99", "{}"), "has no let %99"},
        {"{\"layout\": {\"nowhere/%1\": {}}}", "the program has no function nowhere"},
        {one("2", "{}"), "not a kernel launch"},  // a projection, on the host
        {one("16", "{\"tile\": [1, 4]}"), "an elementwise group: its only choice is a split"},
        {one("11", "{\"tile\": [4, 8]}"), "n_j does not divide the last column axis"},
        {one("11", "{\"tile\": [1, 4], \"lanes\": 4}"), "need a pack"},
        {one("3", "{\"tile\": [1, 8], \"k_block\": 32}"), "does not divide the contracted axis"},
        {one("3", "{\"tile\": [1, 8], \"split\": {\"depth\": 2, \"workers\": 1}}"), ""},  // one worker: no split to check
        {one("18", "{\"split\": {\"depth\": 3, \"workers\": 2}}"), "is not parallel (condition 8)"},
        {one("3", "{\"tile\": [1, 8], \"split\": {\"depth\": 2, \"workers\": 2}}"), "is not parallel (condition 8)"},
    };
    for (const auto& [plan, why] : bad) {
        const std::string e = refusal(plan);
        if (!*why) {
            EXPECT_EQ(e, "") << plan;
            continue;
        }
        EXPECT_EQ(e.rfind("E7002: plan @p.json: ", 0), 0u) << plan << ": " << e;
        EXPECT_NE(e.find(why), std::string::npos) << plan << ": " << e;
    }
    // Condition 5, natively: the machine's count (--threads) or half of it; the interpreter is
    // not held to it.
    const std::string split = one("11", "{\"split\": {\"depth\": 1, \"workers\": 2}}");
    EXPECT_EQ(refusal(split, Backend::Kernel, 3), "");
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM: the native backend's conditions";
    EXPECT_EQ(refusal(split, Backend::Native, 4), "");
    EXPECT_EQ(refusal(split, Backend::Native, 2), "");
    EXPECT_NE(refusal(split, Backend::Native, 3).find("(condition 5)"), std::string::npos);
    if (kernel::native_lanes(kernel::DType::F32) == 4) {
        EXPECT_NE(refusal(one("22", "{\"tile\": [1, 8], \"lanes\": 2}"), Backend::Native, 1).find("register's width"),
                  std::string::npos);
    }
    // The whole register's width (16 f32 lanes with AVX-512) is admitted beside the run's: the
    // [1, 8] tile runs in it up to 8 lanes, and 16 are the builder's refusal, not the executor's.
    const int whole = kernel::register_lanes(kernel::DType::F32);
    const std::string wide = refusal(one("22", "{\"tile\": [1, 8], \"lanes\": " + std::to_string(whole) + "}"), Backend::Native, 1);
    if (whole <= 8) EXPECT_EQ(wide, "");
    else EXPECT_NE(wide.find("lanes 16 across the tile [1, 8]'s columns"), std::string::npos) << wide;
}

TEST(Plan, AttentionUnderAPlanHasTheDefaultsBits) {
    const core::Program p = program();
    const std::vector<ref::Value> args = entry_args(p);
    each_run([&](Backend b, const char* r) {
        const bool bf16 = r == std::string("bf16");
        const int width = kernel::native_lanes(r == std::string("f64") ? kernel::DType::F64 : kernel::DType::F32);
        const std::string lanes = bf16 || width < 4 ? "" : "\"lanes\": " + std::to_string(width) + ", ";
        std::string plan = "{\"layout\": {";
        plan += "\"" + kSite + "11\": {\"tile\": [2, 4], " + lanes +
                "\"pack\": true, \"split\": {\"depth\": 1, \"workers\": 2}}, ";
        plan += "\"" + kSite + "3\": {\"tile\": [2, 8], \"order\": \"JI\", \"split\": {\"depth\": 2, \"workers\": 2}}, ";
        plan += "\"" + kSite + "18\": {" + std::string(bf16 ? "" : "\"passes\": 2, ") +
                "\"split\": {\"depth\": 2, \"workers\": 4}}, ";
        plan += "\"" + kSite + "19\": {" + std::string(bf16 ? "\"tile\": [4, 4]" : "\"form\": \"row-wise\"") + "}, ";
        plan += "\"" + kSite + "22\": {\"tile\": [2, 4]}}}";
        ExecOptions o{7};
        o.backend = b;
        o.threads = 4;
        o.lanes = b == Backend::Native ? 0 : 1;
        Executor plain(p, parse_realization(r), o);
        const auto want = bits_of(plain, p, args);
        o.plan = parse_plan_json(plan, "@p.json");
        Executor planned(p, parse_realization(r), o);
        const auto got = bits_of(planned, p, args);
        EXPECT_EQ(got, want) << backend_name(b) << " " << r;
        int64_t packs = 0;
        for (const kernel::Kernel* k : planned.kernels()) packs += k->name == "pack";
        EXPECT_EQ(packs, 1) << backend_name(b) << " " << r;
    });
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM: the kernel interpreter's half only";
}

// The bias epilogue (docs/presk.md, "The epilogue"): Linear's dot(x, w) + b, and the shapes
// of an add that cannot fold.
const char* const kLinears = R"(
module Linear{n_in, n_out} {
  param w : [n_in, n_out] = normal(0, 1 / sqrt(n_in))
  param b : [n_out]       = normal(0, 1)

  fn apply(x : [..., n_in]) -> [..., n_out] {
    dot(x, w) + b
  }
  fn direct(x : [B, T, n_in]) -> [B, T, n_out] {
    dot(x, w) + b
  }
  fn swapped(x : [B, T, n_in]) -> [B, T, n_out] {
    b + dot(x, w)
  }
  fn twice(x : [B, T, n_in]) -> [B, T, n_out] {
    let y = dot(x, w)
    y + b + y
  }
  fn matrix(x : [B, T, n_in], m : [B, T, n_out]) -> [B, T, n_out] {
    dot(x, w) + m
  }
  fn scalar(x : [B, T, n_in]) -> [B, T, n_out] {
    dot(x, w) + 1.5
  }
  fn activated(x : [B, T, n_in]) -> [B, T, n_out] {
    gelu(dot(x, w) + b)
  }
}

module MLP{D} {
  param up   : Linear{D, 4 * D}
  param down : Linear{4 * D, D}

  fn apply(x : [B, T, D]) -> [B, T, D] {
    down.apply(gelu(up.apply(x)))
  }
}
)";

core::Program linears(const std::string& entry) {
    std::string err;
    core::Program p = test::compile(kLinears, entry, CheckOptions{{{"B", 2}, {"T", 4}}, {}}, &err);
    EXPECT_EQ(err, "") << entry;
    return p;
}

/// The sites of `p`'s contractions, and of those a bias add reads (Executor::nests).
std::pair<std::vector<std::string>, std::vector<std::string>> contractions(const core::Program& p) {
    std::pair<std::vector<std::string>, std::vector<std::string>> out;
    for (const auto& [site, n] : Executor(p, parse_realization("f32")).nests()) {
        out.first.push_back(site);
        if (n.bias_add) out.second.push_back(site);
    }
    return out;
}

// The MLP's two Linears with the bias folded into their dots' stores: one launch (dot+add) at
// each dot's site where there were two, and the default's bits in f64, f32 and bf16 on the
// kernel interpreter and natively, split or not.
TEST(Plan, TheBiasEpilogueFoldsTheLinearsAddIntoItsDot) {
    const core::Program p = linears("MLP{8}.apply");
    const std::vector<std::string> folds = contractions(p).second;
    ASSERT_EQ(folds.size(), 2u);
    std::string plan = "{\"layout\": {\"" + folds[0] + "\": {\"tile\": [4, 8], \"epilogue\": \"bias\"}, \"" + folds[1] +
                       "\": {\"tile\": [2, 8], \"order\": \"JI\", \"pack\": true, \"epilogue\": \"bias\", " +
                       "\"split\": {\"depth\": 0, \"workers\": 2}}}}";
    const std::vector<ref::Value> args = entry_args(p);
    each_run([&](Backend b, const char* r) {
        const std::string what = std::string(backend_name(b)) + " " + r;
        ExecOptions o{7};
        o.backend = b;
        o.threads = 2;
        o.log_launches = true;
        Executor plain(p, parse_realization(r), o);
        const auto want = bits_of(plain, p, args);
        o.plan = parse_plan_json(plan, "@p.json");
        Executor planned(p, parse_realization(r), o);
        const auto got = bits_of(planned, p, args);
        EXPECT_EQ(got, want) << what;
        std::vector<std::string> fused;
        size_t packs = 0;
        for (const Launch& l : planned.launches()) {
            if (l.kernel->name == "dot+add") fused.push_back(l.site);
            packs += l.kernel->name == "pack";
        }
        EXPECT_EQ(packs, 1u) << what;
        EXPECT_EQ(planned.launches().size() - packs + 2, plain.launches().size()) << what;
        std::sort(fused.begin(), fused.end());
        EXPECT_EQ(fused, folds) << what;
        o.fuse = false;  // the dot and the add apart, at their defaults
        Executor unfused(p, parse_realization(r), o);
        const auto apart = bits_of(unfused, p, args);
        EXPECT_EQ(apart, want) << what;
    });
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM: the kernel interpreter's half only";
}

// What cannot fold is refused, naming the site: an add whose first operand is the bias, a
// product read twice, an add of a matrix or of a scalar, a point the builder refuses, an add
// stored in another type than the product, and on bf16 an add fused with other elementwise lets
// by default (that group keeps the sum in f32; the epilogue would round it to bf16).
TEST(Plan, TheExecutorRefusesAnEpilogueThatCannotFold) {
    // `realization`: JSON, where "%add" stands for the site of the entry's last let.
    auto refused = [](const std::string& entry, const std::string& point, std::string realization = "{}") {
        const core::Program p = linears(entry);
        const std::vector<std::string> sites = contractions(p).first;
        EXPECT_EQ(sites.size(), 1u) << entry;
        const std::string& dot = sites.at(0);
        const std::string add = dot.substr(0, dot.rfind("/%") + 2) + std::to_string(p.find(p.entry)->body.back().id);
        if (const size_t k = realization.find("%add"); k != std::string::npos) realization.replace(k, 4, add);
        ExecOptions o{7};
        o.plan = parse_plan_json("{\"layout\": {\"" + dot + "\": " + point + "}}", "@p.json");
        return error_of([&] { Executor(p, parse_realization_json(realization, "r.json"), o); });
    };
    const std::string bias = "{\"tile\": [2, 8], \"epilogue\": \"bias\"}";
    for (const char* entry : {"Linear{8, 8}.swapped", "Linear{8, 8}.twice"}) {
        const std::string e = refused(entry, bias);
        EXPECT_EQ(e.rfind("E7002: plan @p.json: layout names Linear{8,8}.", 0), 0u) << e;
        EXPECT_NE(e.find("an epilogue (bias) needs a dot, matmul or ein whose value only an add reads"), std::string::npos) << e;
    }
    const std::string matrix = refused("Linear{8, 8}.matrix", bias);
    EXPECT_NE(matrix.find("the epilogue's bias is [B: 2, T: 4, 8], not a vector over the product's columns [8]"), std::string::npos)
        << matrix;
    EXPECT_NE(refused("Linear{8, 8}.scalar", bias).find("the epilogue's bias is [], not a vector"), std::string::npos);
    const std::string fused = refused("Linear{8, 8}.activated", bias, R"({"default": "bf16"})");
    EXPECT_NE(fused.find("on bf16 storage the add Linear{8,8}.activated/%5 is fused with 1 other elementwise let(s) into Linear{8,8}.activated/%6"),
              std::string::npos)
        << fused;
    EXPECT_EQ(refused("Linear{8, 8}.activated", bias), "");  // f32: the group's sum is stored as it is
    EXPECT_NE(refused("Linear{8, 8}.direct", "{\"form\": \"row-wise\", \"epilogue\": \"bias\"}").find("row-wise form"),
              std::string::npos);
    EXPECT_EQ(refused("Linear{8, 8}.direct", bias), "");
    const std::string types = refused("Linear{8, 8}.direct", bias, R"({"default": "f32", "storage": {"%add": "bf16"}})");
    EXPECT_NE(types.find("is stored in bf16 and the product in f32: an epilogue computes both in one type"), std::string::npos)
        << types;
    EXPECT_EQ(refused("Linear{8, 8}.direct", bias, R"({"default": "f32", "storage": {"%add": "f32"}})"), "");
    EXPECT_EQ(refused("Linear{8, 8}.direct", "{}", R"({"default": "f32", "storage": {"%add": "bf16"}})"), "");
    EXPECT_EQ(refused("Linear{8, 8}.direct", "{\"epilogue\": \"bias\"}"), "");  // the default's tile
    EXPECT_EQ(refused("Linear{8, 8}.direct", "{\"tile\": [2, 8], \"epilogue\": \"none\"}"), "");
}

int four(kernel::DType t) { return t == kernel::DType::F64 ? 2 : 4; }

// presk plan on the MLP: the model folds each Linear's add into its dot (the add's launch, a
// load and a store of every product saved), writes "epilogue": "bias", and the plan runs with
// the default's bits; it never offers an epilogue the executor would refuse.
TEST(Plan, ThePlannerFoldsTheLinearsAdds) {
    const core::Program p = linears("MLP{8}.apply");
    const std::vector<ref::Value> args = entry_args(p);
    for (const char* r : {"f64", "f32", "bf16"}) {
        const std::vector<Choice> choices = choose_plan(p, parse_realization(r), 1, 16, four);
        ASSERT_EQ(choices.size(), 2u) << r;
        for (const Choice& c : choices) {
            EXPECT_TRUE(c.point.bias) << r << " " << c.site << ": " << kernel::to_string(c.point);
            EXPECT_LT(c.cost.cycles, c.default_cost.cycles) << r << " " << c.site;
        }
        const std::string json = plan_json(choices, r);
        EXPECT_NE(json.find("\"epilogue\": \"bias\""), std::string::npos) << json;
        ExecOptions o{7};
        Executor plain(p, parse_realization(r), o);
        const auto want = bits_of(plain, p, args);
        o.plan = parse_plan_json(json, "@planned.json");
        Executor planned(p, parse_realization(r), o);
        const auto got = bits_of(planned, p, args);
        EXPECT_EQ(got, want) << r;
    }
    auto folds = [](const std::string& entry, const char* r) {
        const std::vector<Choice> c = choose_plan(linears(entry), parse_realization(r), 1, 16, four);
        return c.size() == 1 && c[0].point.bias;
    };
    EXPECT_FALSE(folds("Linear{8, 8}.scalar", "f32"));
    EXPECT_FALSE(folds("Linear{8, 8}.matrix", "f32"));
    EXPECT_FALSE(folds("Linear{8, 8}.activated", "bf16"));
    EXPECT_TRUE(folds("Linear{8, 8}.activated", "f32"));
}

// presk plan: the model's choice for every nest of attention is never predicted slower than
// the default, its plan reads back as written, and runs with the default's bits.
TEST(Plan, ThePlannersPlanRunsWithTheDefaultsBits) {
    const core::Program p = program();
    const std::vector<ref::Value> args = entry_args(p);
    for (const char* r : {"f64", "f32", "bf16"}) {
        const std::vector<Choice> choices = choose_plan(p, parse_realization(r), 2, 16, four);
        EXPECT_EQ(choices.size(), 7u) << r;  // four dots, two eins, a softmax
        int64_t moved = 0;
        for (const Choice& c : choices) {
            EXPECT_LE(c.cost.cycles, c.default_cost.cycles) << c.site;
            moved += c.cost.cycles < c.default_cost.cycles;
        }
        EXPECT_GT(moved, 0) << r;
        const Plan plan = parse_plan_json(plan_json(choices, r), "@planned.json");
        EXPECT_EQ(plan.realization, r);
        ASSERT_EQ(plan.layout.size(), choices.size());
        for (const Choice& c : choices) {
            kernel::Layout read = plan.layout.at(c.site);
            if (read.lanes == 0) read.lanes = c.point.lanes;
            EXPECT_EQ(kernel::to_string(read), kernel::to_string(c.point)) << c.site;
        }
        ExecOptions o{7};
        o.threads = 2;
        Executor plain(p, parse_realization(r), o);
        const auto want = bits_of(plain, p, args);
        o.plan = plan;
        Executor planned(p, parse_realization(r), o);
        const auto got = bits_of(planned, p, args);
        EXPECT_EQ(got, want) << r;
    }
}

} // namespace
} // namespace presk::realize
