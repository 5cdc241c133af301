// The front end: every tests/presk/bad/*.psk fails with its expected message (file:line:col,
// the source line and a caret); the broadcasting rule; Core's text; the ChaCha20 block; and
// mutated examples never make the parser or checker fail other than with an Error.
#include <gtest/gtest.h>

#include <mpfr.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/core.h"
#include "lang/stack.h"
#include "realize/executor.h"
#include "realize/realization.h"
#include "ref/interp.h"
#include "ref/print.h"
#include "presk_test.h"
#include "ref/chacha.h"

namespace presk {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(PreskBad, EachFileFailsWithItsMessage) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(fs::path(PRESK_SOURCE_DIR) / "tests/presk/bad")) {
        if (e.path().extension() != ".psk") continue;
        SCOPED_TRACE(e.path().filename().string());
        std::string text = read(e.path());
        std::string expect, entry;
        CheckOptions o;
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line) && line.rfind("# ", 0) == 0;) {
            if (line.rfind("# expect: ", 0) == 0) expect = line.substr(10);
            if (line.rfind("# entry: ", 0) == 0) entry = line.substr(9);
            if (line.rfind("# dim: ", 0) == 0) {
                std::string kv = line.substr(7);
                o.dims[kv.substr(0, kv.find('='))] = std::stoll(kv.substr(kv.find('=') + 1));
            }
        }
        ASSERT_FALSE(expect.empty());
        std::string err;
        core::Program p = test::compile(text, entry, o, &err);
        EXPECT_NE(err.find("error: " + expect), std::string::npos) << err;
        EXPECT_EQ(err.rfind("test.psk:", 0), 0u) << err;       // file:line:col
        EXPECT_NE(err.find("\n  "), std::string::npos) << err;  // the source line
        EXPECT_EQ(err.back(), '^') << err;                      // the caret
        ++n;
    }
    EXPECT_GE(n, 15);
}

TEST(PreskTypes, Broadcasting) {
    std::vector<Axis> bt{{"batch", 4}, {"", 3}}, b{{"batch", 4}}, three{{"", 3}}, tb{{"T", 2}, {"batch", 4}};
    EXPECT_EQ(*broadcast_axes(bt, three), bt);                           // trailing positions
    EXPECT_EQ(*broadcast_axes(three, bt), bt);
    EXPECT_EQ(*broadcast_axes(bt, b), bt);                               // by name
    EXPECT_EQ(*broadcast_axes(bt, {}), bt);                              // a scalar
    EXPECT_FALSE(broadcast_axes(bt, tb));                                // T is not in bt
    EXPECT_FALSE(broadcast_axes(bt, std::vector<Axis>{{"", 4}}));        // positional 4 vs 3
    EXPECT_EQ(to_string(*tensor_type(Elem::Int, bt, 7)), "int<7>[batch: 4, 3]");
}

TEST(PreskCore, DumpNamesSites) {
    std::string err;
    core::Program p = test::compile(read(fs::path(PRESK_SOURCE_DIR) / "examples/tutorial/01_linear.psk"),
                                    "Linear{3, 2}.apply", {{{"batch", 4}}, {}}, &err);
    ASSERT_EQ(err, "");
    std::string text = core::to_string(p);
    EXPECT_NE(text.find("fn Linear{3,2}.apply(%0 self : {w: [3, 2], b: [2]}, %1 x : [batch: 4, 3]) -> [batch: 4, 2]"),
              std::string::npos) << text;
    EXPECT_NE(text.find("%3 = dot(%1, %2) : [batch: 4, 2]"), std::string::npos) << text;
    EXPECT_NE(text.find("param w : [3, 2] = normal(0, (1 / sqrt(3)))"), std::string::npos) << text;
}

/// The value of `entry` of `text` (dims s = 2, f = 6) on the inputs the interpreter draws from
/// seed 3 (the same for every entry with the same parameter names and types), as text.
std::string value_of(const std::string& text, const std::string& entry, std::string* core_text = nullptr) {
    std::string err;
    core::Program p = test::compile(text, entry, {{{"s", 2}, {"f", 6}}, {}}, &err);
    EXPECT_EQ(err, "") << entry;
    if (!err.empty()) return err;
    if (core_text) *core_text = core::to_string(p);
    ref::Interp in(p, {64, 3, false});
    const core::Function* fn = p.find(p.entry);
    std::vector<ref::Value> args;
    for (int i = 0; i < fn->arity(); ++i) args.push_back(in.synthesize(fn->param_types[i], fn->param_names[i]));
    std::ostringstream os;
    ref::write_value(os, in.call(p.entry, args), false, [](const ref::Value& v, int64_t k, std::string& out) {
        if (v.type->elem == Elem::Real) ref::append_real(out, v.t->re[(size_t)k].get(), 20);
        else out += std::to_string(v.t->in[(size_t)k]);
    });
    return os.str();
}

// split and merge of named axes: their types, their Core, and merge(split(x)) = x element for
// element; softmax, argmax and cross_entropy over an axis by name equal the same primitive over
// the last axis of the transposed operand; a tuple's items `.0` and `.1` (nested: `t.1.0`).
TEST(PreskForms, ReshapesAxesAndItems) {
    const std::string text = R"(
fn id(x : [s, f]) -> [s, f] { x }
fn split_merge(x : [s, f]) -> [s, f] {
  let y = split(x, f -> h: 2, d: f / 2)
  merge(y, h, d -> f)
}
fn split_only(x : [s, f]) -> [s, h: 2, 3] { split(x, -1 -> h: s, 6 / s) }
fn merge_ints(x : [s, f]) -> [sf: 12] { merge(x, 0, 1 -> sf) }
fn sm_axis(x : [s, f]) -> [s, f] { softmax(x, s) }
fn sm_last(x : [s, f]) -> [s, f] { transpose(softmax(transpose(x, s, f)), 0, 1) }
fn am_axis(x : [s, f]) -> int<2>[f] { argmax(x, 0) }
fn am_last(x : [s, f]) -> int<2>[f] { argmax(transpose(x, 0, 1)) }
fn ce_axis(x : [s, f], t : int<2>[f]) -> [f] { cross_entropy(x, t, s) }
fn ce_last(x : [s, f], t : int<2>[f]) -> [f] { cross_entropy(transpose(x, s, f), t) }
fn item(x : [s, f]) -> [s, f] {
  let t = (x, (2 * x, x))
  t.1.0 + t.0 * 0
}
fn twice(x : [s, f]) -> [s, f] { 2 * x + x * 0 }
)";
    std::string core_text;
    EXPECT_EQ(value_of(text, "split_merge", &core_text), value_of(text, "id"));
    EXPECT_NE(core_text.find("= split[1, 2, 3, \"h,d\"](%0) : [s: 2, h: 2, d: 3]"), std::string::npos) << core_text;
    EXPECT_NE(core_text.find("= merge[1, 2, \"f\"](%1) : [s: 2, f: 6]"), std::string::npos) << core_text;
    value_of(text, "split_only", &core_text);
    EXPECT_NE(core_text.find("= split[1, 2, 3, \"h,\"](%0) : [s: 2, h: 2, 3]"), std::string::npos) << core_text;
    EXPECT_NE(value_of(text, "merge_ints").find("[sf: 12] = "), std::string::npos);
    EXPECT_EQ(value_of(text, "sm_axis"), value_of(text, "sm_last"));
    EXPECT_EQ(value_of(text, "am_axis"), value_of(text, "am_last"));
    EXPECT_EQ(value_of(text, "ce_axis"), value_of(text, "ce_last"));
    EXPECT_EQ(value_of(text, "item"), value_of(text, "twice"));
    // The last axis by name or integer is the primitive itself, no ein around it.
    value_of("fn g(x : [s, f]) -> [s, f] { softmax(x, f) + softmax(x, -1) }\n", "g", &core_text);
    EXPECT_EQ(core_text.find("ein"), std::string::npos) << core_text;
}

TEST(PreskChaCha, Rfc8439Block) {
    std::array<uint32_t, 8> key;
    for (int i = 0; i < 8; ++i)
        key[i] = (uint32_t)(4 * i) | (uint32_t)(4 * i + 1) << 8 | (uint32_t)(4 * i + 2) << 16 | (uint32_t)(4 * i + 3) << 24;
    auto b = ref::ChaCha::block(key, 1, {0x09000000, 0x4a000000, 0x00000000});
    EXPECT_EQ(b[0], 0xe4e7f110u);
    EXPECT_EQ(b[1], 0x15593bd1u);
    EXPECT_EQ(b[15], 0x4e3c50a2u);
    ref::ChaCha a(5, "blocks.w"), c(5, "blocks.w"), d(5, "blocks.b");
    uint64_t x = a.next_u64();
    EXPECT_EQ(x, c.next_u64());
    EXPECT_NE(x, d.next_u64());
}

// Deterministic mutations of every example; parse and check each entry: only Error may come out.
TEST(PreskRobust, MutatedExamplesNeverCrashTheChecker) {
    CheckOptions o;
    for (const char* k : {"batch", "B", "T", "N", "n", "n_in", "n_out", "hidden", "V", "D", "H", "L", "heads"}) o.dims[k] = 2;
    o.dims["V"] = 4;
    o.dims["D"] = 4;
    std::vector<std::string> texts;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(PRESK_SOURCE_DIR) / "examples"))
        if (e.path().extension() == ".psk") texts.push_back(read(e.path()));
    ASSERT_FALSE(texts.empty());
    uint64_t s = 0x9e3779b97f4a7c15ull;
    auto rnd = [&](uint64_t n) { s = s * 6364136223846793005ull + 1442695040888963407ull; return (s >> 33) % n; };
    const std::string junk = "{}()[],:;.=+-*/<>#\"0123456789 abxyzT\n";
    int checked = 0;
    for (const std::string& base : texts)
        for (int it = 0; it < 150; ++it) {
            std::string t = base;
            for (int m = 0, k = 1 + (int)rnd(3); m < k && !t.empty(); ++m) {
                size_t at = rnd(t.size()), len = 1 + rnd(12);
                switch (rnd(4)) {
                case 0: t.erase(at, len); break;
                case 1: t.insert(at, t.substr(rnd(t.size()), len)); break;
                case 2: t[at] = junk[rnd(junk.size())]; break;
                case 3: t.resize(at); break;
                }
            }
            Source src{"m.psk", t};
            try {
                ast::File f = parse(src);
                for (const auto& e : list_entries(f)) {
                    try {
                        core::Program p = check(f, e, o);
                        ++checked;
                    } catch (const Error& err) {
                        format_error(src, err);
                    }
                }
            } catch (const Error& err) {
                format_error(src, err);
            }
        }
    EXPECT_GT(checked, 0);
}

/// `head`, then `unit` n times with {i} its number from 1 and {j} the one before, then `tail`.
std::string repeat(const std::string& head, const std::string& unit, int n, const std::string& tail) {
    std::string out = head;
    for (int i = 1; i <= n; ++i) {
        std::string u = unit;
        for (size_t at; (at = u.find("{i}")) != std::string::npos;) u.replace(at, 3, std::to_string(i));
        for (size_t at; (at = u.find("{j}")) != std::string::npos;) u.replace(at, 3, std::to_string(i - 1));
        out += u;
    }
    return out + tail;
}

/// Checks `text` at `entry` (b = 2) and runs it on the interpreter and the kernel backend: the
/// error's message, or "" when every stage succeeded.
std::string all_stages(const std::string& text, const std::string& entry) {
    try {
        core::Program p = check(parse(Source{"deep.psk", text}), entry, {{{"b", 2}}, {}});
        core::to_string(p);
        ref::Interp interp(p, {64, 7, false});
        const auto args = interp.entry_args();
        interp.call(p.entry, args);
        realize::Executor ex(p, realize::parse_realization("f64"));
        ex.call_values(p.entry, ex.convert_args(p.entry, args));
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

// Deep and long programs (docs/presk.md, "Limits"): on the CLI's stack every stage computes
// what the limits allow and refuses the rest by its limit; on a 1 MiB thread the same input
// computes or is refused with an Error, never a crash.
TEST(PreskLimits, DeepInputOnAnyStack) {
    const std::string sum10k = repeat("fn f(x : [b]) -> [b] { ", "x + ", 9999, "x }\n");
    const std::string sum100k = repeat("fn f(x : [b]) -> [b] { ", "x + ", 99999, "x }\n");
    const std::string lets4k =
        repeat("fn f(x : [b]) -> [b] {\n  let y0 = x\n", "  let y{i} = y{j} + x\n", 4000, "  y4000\n}\n");
    const std::string grad10k =
        repeat("fn s(x : [b]) -> [] { sum(", "x * ", 9999, "x) }\nfn g(x : [b]) -> [b] { grad(s, x) }\n");
    const std::string calls = "fn f0(x : [b]) -> [b] { x + x }\n";
    const std::string calls999 = repeat(calls, "fn f{i}(x : [b]) -> [b] { f{j}(x) }\n", 999, "");
    const std::string calls3000 = repeat(calls, "fn f{i}(x : [b]) -> [b] { f{j}(x) }\n", 2999, "");
    std::map<std::string, std::string> large;
    run_with_stack(kLargeStack, [&] {
        large["sum10k"] = all_stages(sum10k, "f");
        large["sum100k"] = all_stages(sum100k, "f");
        large["lets4k"] = all_stages(lets4k, "f");
        large["grad10k"] = all_stages(grad10k, "g");
        large["calls999"] = all_stages(calls999, "f999");
        large["calls3000"] = all_stages(calls3000, "f2999");
        mpfr_free_cache();
    });
    EXPECT_EQ(large["sum10k"], "");
    EXPECT_EQ(large["sum100k"], "expression nested deeper than 20000 levels (each operator of a chain is a level)");
    EXPECT_EQ(large["lets4k"], "");
    EXPECT_EQ(large["grad10k"], "");
    EXPECT_EQ(large["calls999"], "");
    EXPECT_EQ(large["calls3000"], "calls nested deeper than 1000 (the call of f1999)");
    run_with_stack(size_t(1) << 20, [&] {
        const std::vector<std::pair<std::string, std::string>> cases = {
            {sum10k, "f"}, {sum100k, "f"}, {lets4k, "f"}, {grad10k, "g"}, {calls999, "f999"}, {calls3000, "f2999"}};
        for (const auto& [text, entry] : cases) {
            const std::string e = all_stages(text, entry);
            EXPECT_TRUE(e == "" || e.find("nested") != std::string::npos) << e;
        }
        mpfr_free_cache();
    });
}

} // namespace
} // namespace presk
