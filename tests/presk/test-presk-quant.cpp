// Quantised parameters (kernel/quant.h, realize/params_gguf.h): MiniGPT's parameters written to
// GGUF by presk, quantised to q8_0 and q4_0 by gk-quantize, read back and run with a realization
// that quantises every parameter the file holds in blocks: the native backend and the kernel
// interpreter, reading the int8 / int4 blocks in their kernels, give bit for bit the logits the
// same backends give on the blocks' values in f32 (the reference path's substitute); the
// kernels show int8/o[...] inputs; gk's codec lays the blocks out as the kernels read them; and
// a parameter whose last axis is not whole blocks is refused (E7002).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernel/llvm_jit.h"
#include "kernel/quant.h"
#include "presk_test.h"
#include "realize/executor.h"
#include "realize/params_gguf.h"
#include "ref/interp.h"

namespace presk::realize {
namespace {

using kernel::DType;

std::string minigpt() {
    std::ifstream in(std::string(PRESK_SOURCE_DIR) + "/examples/minigpt.psk");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

core::Program program(const std::string& entry) {
    CheckOptions o;
    o.dims = {{"B", 1}, {"T", 4}};
    std::string err;
    core::Program p = test::compile(minigpt(), entry, o, &err);
    EXPECT_EQ(err, "");
    return p;
}

/// Whether the f32 tensors `a` and `b` hold the same bits.
bool same_bits(const Value& a, const Value& b) {
    return a.t && b.t && a.t->dtype() == b.t->dtype() && a.t->size() == b.t->size() &&
           std::memcmp(a.t->raw(), b.t->raw(), kernel::bytes_of(a.t->dtype(), a.t->size())) == 0;
}

TEST(Quant, GksCodecLaysTheBlocksOutAsTheKernelsRead) {
    kernel::check_layout(DType::I8);
    kernel::check_layout(DType::I4);
}

class QuantisedMiniGpt : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantisedMiniGpt, RunsOnTheFilesBlocksBitForBitAsOnTheirValues) {
    const std::string type = GetParam();
    const core::Program p = program("MiniGPT{64, 64, 4, 2}.apply");
    ref::Interp interp(p, {64, 7, false});
    std::vector<ref::Value> args = interp.entry_args();
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("presk-quant-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string f32 = (dir / "f32.gguf").string(), q = (dir / (type + ".gguf")).string();
    write_params_gguf(p, args[0], {}, f32);
    const std::string cmd = std::string("\"") + GK_QUANTIZE + "\" --pure \"" + f32 + "\" \"" + q + "\" " + type + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    GgufParams g = read_params_gguf(p, q, 64);
    std::filesystem::remove_all(dir);
    ASSERT_GE(g.blocks.size(), 19u);  // every matrix, and the stacked vectors
    const DType t = type == "q8_0" ? DType::I8 : DType::I4;
    Realization quant = parse_realization("f32"), plain = quant;
    for (const auto& [path, d] : g.blocks) {
        EXPECT_EQ(d.dtype(), t) << path;
        quant.quant[path] = t;
    }
    args[0] = g.params;
    std::vector<Backend> backends = {Backend::Kernel};
    if (kernel::have_llvm()) backends.push_back(Backend::Native);
    for (Backend b : backends) {
        ExecOptions o;
        o.backend = b;
        o.threads = 2;
        Executor on_values(p, plain, o);
        const Value want = on_values.call(p.entry, args);
        o.blocks = g.blocks;
        Executor on_blocks(p, quant, o);
        const Value got = on_blocks.call(p.entry, args);
        EXPECT_TRUE(same_bits(got, want)) << backend_name(b);
        std::string text;
        for (const kernel::Kernel* k : on_blocks.kernels()) text += kernel::to_string(*k);
        EXPECT_NE(text.find("%0 : " + std::string(kernel::dtype_name(t)) + "/1[64, 64]"), std::string::npos) << text;
    }
    // The reference path's substitute: the values of the blocks, for the stored ones the file's.
    const Value sub = from_ref(quantised_values(g.params, quant.quant, 64, g.blocks), DType::F64);
    const Value was = from_ref(g.params, DType::F64);
    ASSERT_EQ(sub.items.size(), was.items.size());
    for (size_t i = 0; i < sub.items.size(); ++i) {
        if (sub.items[i].t) {
            EXPECT_TRUE(same_bits(sub.items[i], was.items[i])) << i;
        }
    }
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM: the kernel interpreter's half only";
}

INSTANTIATE_TEST_SUITE_P(Types, QuantisedMiniGpt, ::testing::Values("q8_0", "q4_0"));

TEST(Quant, EncodesAParameterItHasNoBlocksFor) {
    const core::Program p = program("MiniGPT{64, 64, 4, 1}.apply");
    ref::Interp interp(p, {64, 7, false});
    std::vector<ref::Value> args = interp.entry_args();
    Realization quant = parse_realization_json(R"({"default": "f32", "quant": {"head": "int8", "blocks.up.w": "int4"}})", "@q");
    Realization plain = parse_realization("f32");
    ExecOptions o;
    Executor on_blocks(p, quant, o);
    const Value got = on_blocks.call(p.entry, args);
    args[0] = quantised_values(args[0], quant.quant, 64);
    Executor on_values(p, plain, o);
    EXPECT_TRUE(same_bits(got, on_values.call(p.entry, args)));
}

TEST(Quant, RefusesAParameterWhoseLastAxisIsNotWholeBlocks) {
    const core::Program p = program("MiniGPT{16, 8, 2, 1}.apply");
    const std::string msg = test::error_of([&] {
        Executor(p, parse_realization_json(R"({"quant": {"head": "int8"}})", "@q"), {});
    });
    EXPECT_NE(msg.find("E7002"), std::string::npos) << msg;
    EXPECT_NE(msg.find("quant names head ([8, 16]), whose last axis is not a multiple of 32"), std::string::npos) << msg;
    EXPECT_NE(test::error_of([] { parse_realization_json(R"({"quant": {"head": "int2"}})", "@q"); }).find("is not int8 or int4"),
              std::string::npos);
}

} // namespace
} // namespace presk::realize
