// presk explain (kernel/llvm_jit.h's machine_code, realize/explain.h): every kernel MiniGPT's
// forward pass launches natively, in f32 (f64 and bf16 too where PRESK_EXPLAIN_ALL=1), compiled
// with its lines gives the same bytes as the JIT compiles for a run; its disassembly covers
// those bytes instruction by instruction, every instruction's line is a line of the kernel's
// text and the first store's line has instructions; and the three formats carry the listing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "kernel/llvm_jit.h"
#include "presk_test.h"
#include "realize/executor.h"
#include "realize/explain.h"
#include "ref/interp.h"

namespace presk::realize {
namespace {

std::vector<const kernel::Kernel*> minigpt_kernels(Executor& ex, const core::Program& p) {
    ref::Interp interp(p, {64, 7, false});
    ex.call(p.entry, interp.entry_args());
    return ex.kernels();
}

core::Program minigpt() {
    std::ifstream in(std::string(PRESK_SOURCE_DIR) + "/examples/minigpt.psk");
    std::stringstream s;
    s << in.rdbuf();
    CheckOptions o;
    o.dims = {{"B", 1}, {"T", 4}};
    return test::compile(s.str(), "MiniGPT{16, 8, 2, 1}.apply", o);
}

/// Every kernel of MiniGPT's forward pass natively in realization `r`: the same bytes with the
/// lines as a run's, the disassembly covering them, every line a line of the text, the first
/// store's line with code.
void check_kernels(const core::Program& p, const char* r) {
    ExecOptions o;
    o.backend = Backend::Native;
    o.lanes = 0;
    Executor ex(p, parse_realization(r), o);
    const auto ks = minigpt_kernels(ex, p);
    ASSERT_GE(ks.size(), 5u);
    for (const kernel::Kernel* k : ks) {
        const kernel::MachineListing m = kernel::machine_code(*k);
        const std::string text = kernel::to_string(*k);
        const int lines = (int)std::count(text.begin(), text.end(), '\n');
        EXPECT_FALSE(m.bytes.empty()) << k->name;
        EXPECT_EQ(m.bytes, m.run_bytes) << r << " " << text;
        std::vector<uint8_t> joined;
        std::set<int> seen;
        for (const kernel::MachineInstr& mi : m.instrs) {
            joined.insert(joined.end(), mi.bytes.begin(), mi.bytes.end());
            EXPECT_NE(mi.text, "(not an instruction)") << k->name << " at " << mi.offset;
            EXPECT_TRUE(mi.line >= 0 && mi.line <= lines) << mi.line;
            seen.insert(mi.line);
        }
        EXPECT_EQ(joined, m.bytes) << k->name;
        int store = 0;  // the line of the kernel's first store: its code is somewhere
        for (int l = 1, at = 0; l <= lines && !store; ++l) {
            const size_t end = text.find('\n', (size_t)at);
            if (text.substr((size_t)at, end - (size_t)at).find("] = ") != std::string::npos) store = l;
            at = (int)end + 1;
        }
        EXPECT_TRUE(store && seen.count(store)) << r << " line " << store << " of\n" << text;
    }
}

TEST(Explain, TheSameBytesAsARunEachInstructionAtAKernelLine) {
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM: no machine code to explain";
    const core::Program p = minigpt();
    check_kernels(p, "f32");
    if (std::getenv("PRESK_EXPLAIN_ALL")) {  // f64 and bf16 too (about 20 s more under the sanitizers)
        check_kernels(p, "f64");
        check_kernels(p, "bf16");
    }
}

TEST(Explain, TheThreeFormats) {
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM: no machine code to explain";
    const core::Program p = test::compile("fn f(x : [4, 3], w : [3, 2]) -> [4, 2] {\n  dot(x, w)\n}\n", "f", {});
    ExecOptions o;
    o.backend = Backend::Native;
    Executor ex(p, parse_realization("f32"), o);
    ref::Interp interp(p, {64, 7, false});
    ex.call(p.entry, interp.entry_args());
    const auto ks = ex.kernels();
    const std::string text = explain(ks, "text"), json = explain(ks, "json"), html = explain(ks, "html");
    EXPECT_NE(text.find("== kernel 1 of 1: dot, "), std::string::npos) << text;
    EXPECT_NE(text.find("   1  kernel dot ("), std::string::npos) << text;
    EXPECT_NE(text.find("ret"), std::string::npos) << text;
    EXPECT_NE(json.find("\"kernels\": [\n  {\"name\": \"dot\", \"text\": \"kernel dot ("), std::string::npos) << json;
    EXPECT_NE(json.find("\"asm\": \"ret"), std::string::npos) << json;
    EXPECT_NE(html.find("<h2>kernel 1: dot ("), std::string::npos) << html;
    EXPECT_NE(html.find("<a href=\"#k1l"), std::string::npos) << html;
    EXPECT_NE(test::error_of([&] { explain(ks, "pdf"); }).find("--format pdf: the formats are text, json and html"),
              std::string::npos);
}

} // namespace
} // namespace presk::realize
