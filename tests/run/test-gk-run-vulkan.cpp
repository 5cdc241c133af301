// test-gk-run-vulkan: gk-run with the weights on a Vulkan device (in CI Mesa's lavapipe,
// listed because the test sets GK_VULKAN_SOFTWARE=1 for itself and its gk-run children):
// stories260K greedy with --device Vulkan0 -ngl 99 (and a partial -ngl, and -nkvo) gives
// the CPU run's tokens and text, with attention and the KV cache on the device (it
// refuses no op of the model), as for q8_0 llama, gemma3 and qwen3 models (gemma2's
// softcapped attention runs on the CPU over the device's cache); and bad input: a
// device that does not exist is a one-line error listing the devices, an allocation
// larger than the device's memory is a clear error at the gk API level, after which the
// CPU still computes in the same process. Block-format weights: qwen3's random model
// re-encoded by gk-quantize (q5_0 and q8_0 matrices, a q4_1 output layer, an iq4_nl
// embedding table) gives the CPU's tokens with no op left to the CPU, and so does gemma3-270m Q4_K_M (q5_0, q4_K, q6_K,
// q8_0; its blocks on the device) when GK_LONG_TESTS=1 and the model is there (ctest -L long). Skipped
// ("GK-SKIP") without a Vulkan device, except the unknown-device case, which needs none.
#include "gk_run_exec.h"

#include "gk/gk-alloc.h"
#include "gk/gk-backend.h"
#include "gk/gk.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::run_gk_run;
using gk_run_test::run_result;

namespace {

const fs::path k_stories = fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf";

/** Vulkan0, or nullptr; lavapipe counts (set before the registry's first call). */
gk_backend_dev_t vulkan0() {
    setenv("GK_VULKAN_SOFTWARE", "1", 1);
    return gk_backend_dev_by_name("Vulkan0");
}

#define NEED_VULKAN(dev)              \
    gk_backend_dev_t dev = vulkan0(); \
    if (!dev) GTEST_SKIP() << "GK-SKIP: no Vulkan device (a build without GK_VULKAN, or no driver)"

/** stories260K, greedy, 40 tokens, -v, then `extra`. */
std::vector<std::string> story(std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"-m", k_stories.string(), "-p", "Once upon a time", "-n", "40", "--temp", "0", "-v"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

/** The "generated tokens:" line of -v. */
std::string generated(const run_result & r) {
    std::smatch m;
    return std::regex_search(r.err, m, std::regex("gk-run: generated tokens:[ 0-9]*")) ? m.str() : "";
}

TEST(GkRunVulkan, TheDeviceGivesTheCpuTokensAndText) {
    NEED_VULKAN(dev);
    const run_result cpu = run_gk_run(story());
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    ASSERT_NE(generated(cpu), "");
    const std::vector<std::vector<std::string>> runs = {{"-ngl", "99"}, {"-ngl", "2"}, {"-ngl", "99", "-nkvo"}};
    for (const std::vector<std::string> & args : runs) {
        const bool  all  = args[1] == "99";
        const bool  nkvo = args.size() > 2;
        std::string what;
        for (const std::string & a : args) what += " " + a;
        SCOPED_TRACE(what);
        std::vector<std::string> extra{"--device", "Vulkan0"};
        extra.insert(extra.end(), args.begin(), args.end());
        const run_result vk = run_gk_run(story(extra));
        ASSERT_EQ(vk.exit_code, 0) << vk.err;
        EXPECT_EQ(vk.out, cpu.out);
        EXPECT_EQ(generated(vk), generated(cpu));
        const std::string layers = all ? "5 of 5 layers and the output layer" : "2 of 5 layers";
        EXPECT_NE(vk.err.find("gk-run: Vulkan0 ("), std::string::npos) << vk.err;
        EXPECT_NE(vk.err.find(layers), std::string::npos) << vk.err;
        // The KV cache of the device's blocks is in its memory (5 or 2 of 5 layers' of
        // 1.2 MiB), so attention runs there too: the device refuses no op of the model.
        // -nkvo keeps the cache in host memory, and attention on the CPU, by placement.
        const std::string cache = nkvo ? "0.0 MiB of KV cache" : all ? "1.2 MiB of KV cache" : "0.5 MiB of KV cache";
        EXPECT_NE(vk.err.find(cache), std::string::npos) << vk.err;
        EXPECT_EQ(vk.err.find("runs on the CPU: Vulkan0 does not support it"), std::string::npos) << vk.err;
    }
}

TEST(GkRunVulkan, ACacheTypeTheDeviceCannotWriteStaysInHostMemory) {
    // The device writes f32 and f16 caches only. A q8_0 or bf16 cache with -ngl ended the
    // run after loading with the scheduler's "lives in Vulkan0 memory, and no backend that
    // can address it supports op SET_ROWS"; now it stays in host memory, as with -nkvo,
    // with a warning, and gives the CPU's tokens. (q8_0 needs heads of 32: qwen3-random.)
    NEED_VULKAN(dev);
    const fs::path qwen3 = fs::path(GK_TEST_DATA) / "models" / "qwen3-random.gguf";
    for (const auto & [model, type] : {std::pair{qwen3, "q8_0"}, std::pair{k_stories, "bf16"}}) {
        SCOPED_TRACE(type);
        std::vector<std::string> args = story({"-ctk", type, "-ctv", type});
        args[1]                       = model.string();
        const run_result cpu          = run_gk_run(args);
        ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
        args.insert(args.end(), {"--device", "Vulkan0", "-ngl", "99"});
        const run_result vk = run_gk_run(args);
        ASSERT_EQ(vk.exit_code, 0) << vk.err;
        EXPECT_EQ(vk.out, cpu.out);
        EXPECT_EQ(generated(vk), generated(cpu));
        EXPECT_NE(vk.err.find(std::string("gk-run: warning: the KV cache stays in host memory (as with -nkvo): "
                                          "Vulkan0 cannot write a ") +
                              type + "/" + type + " cache"),
                  std::string::npos)
            << vk.err;
        EXPECT_NE(vk.err.find("0.0 MiB of KV cache"), std::string::npos) << vk.err;
    }
    // A type it writes stays in its memory, without a warning.
    const run_result f16 = run_gk_run(story({"-ctk", "f16", "--device", "Vulkan0", "-ngl", "99"}));
    EXPECT_EQ(f16.exit_code, 0) << f16.err;
    EXPECT_EQ(f16.err.find("stays in host memory"), std::string::npos) << f16.err;
}

TEST(GkRunVulkan, QuantizedAndOtherArchitecturesGiveTheCpuTokens) {
    NEED_VULKAN(dev);
    // q8_0 weights (llama), gemma3's GELU and q / k norms, qwen3: every op on the device;
    // gemma2's logit softcaps (tanh, libm's) leave attention and tanh to the CPU, which
    // reads the KV cache from the device's memory (staged).
    for (const char * model :
         {"llama-random-q8_0.gguf", "gemma3-random.gguf", "qwen3-random.gguf", "gemma2-random.gguf"}) {
        const bool softcap = std::string(model).rfind("gemma2", 0) == 0;
        SCOPED_TRACE(model);
        const std::vector<std::string> args{"-m",     (fs::path(GK_TEST_DATA) / "models" / model).string(),
                                            "-p",     "Once upon a time",
                                            "-n",     "12",
                                            "--temp", "0",
                                            "-v"};
        const run_result               cpu = run_gk_run(args);
        ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
        std::vector<std::string> on = args;
        on.insert(on.end(), {"--device", "Vulkan0", "-ngl", "99"});
        const run_result vk = run_gk_run(on);
        ASSERT_EQ(vk.exit_code, 0) << vk.err;
        ASSERT_NE(generated(cpu), "");
        EXPECT_EQ(generated(vk), generated(cpu));
        EXPECT_EQ(vk.out, cpu.out);
        if (softcap) {
            EXPECT_NE(vk.err.find("gk-run: FLASH_ATTN_EXT runs on the CPU: Vulkan0 does not support it"),
                      std::string::npos)
                << vk.err;
        } else {
            EXPECT_EQ(vk.err.find("runs on the CPU: Vulkan0 does not support it"), std::string::npos) << vk.err;
        }
    }
}

/** The CPU's and Vulkan0's (-ngl `ngl`) greedy runs of `model`: the same tokens and text,
 *  no op of the model left to the CPU. */
void expect_device_tokens(const fs::path & model, int n_predict, const std::string & ngl) {
    const std::vector<std::string> args{
        "-m", model.string(), "-p", "Once upon a time", "-n", std::to_string(n_predict), "--temp", "0", "-v"};
    const run_result cpu = run_gk_run(args);
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    std::vector<std::string> on = args;
    on.insert(on.end(), {"--device", "Vulkan0", "-ngl", ngl});
    const run_result vk = run_gk_run(on);
    ASSERT_EQ(vk.exit_code, 0) << vk.err;
    ASSERT_NE(generated(cpu), "");
    EXPECT_EQ(generated(vk), generated(cpu));
    EXPECT_EQ(vk.out, cpu.out);
    EXPECT_EQ(vk.err.find("runs on the CPU: Vulkan0 does not support it"), std::string::npos) << vk.err;
}

TEST(GkRunVulkan, BlockFormatWeightsGiveTheCpuTokens) {
    NEED_VULKAN(dev);
    // Q4_K_M: rows of 64 and 96 are no whole K-quant blocks, so gk-quantize takes
    // llama.cpp's other types (q5_0, q8_0)
    const fs::path   model = gk_run_test::scratch_dir("test-gk-run-vulkan") / "qwen3-q4_k_m.gguf";
    const run_result q     = gk_run_test::run_program(
            GK_QUANTIZE_EXE, {(fs::path(GK_TEST_DATA) / "models" / "qwen3-random.gguf").string(), model.string(), "Q4_K_M",
                              "--output-tensor-type", "q4_1", "--token-embedding-type", "iq4_nl"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    expect_device_tokens(model, 12, "99");
}

TEST(GkRunVulkan, Gemma3_270M) {
    NEED_VULKAN(dev);
    // (its skips say no "GK-SKIP": the program's other cases ran; ctest -L long reports it)
    const char * long_tests = std::getenv("GK_LONG_TESTS");
    if (!long_tests || std::string(long_tests) != "1") GTEST_SKIP() << "set GK_LONG_TESTS=1 to run";
    const fs::path model = gk_run_test::gemma3_270m_path();
    if (!fs::exists(model)) GTEST_SKIP() << model << " is missing (scripts/get-model gemma3-270m)";
    // Its 18 blocks: the output layer (the tied q8_0 embedding, 170 MiB) exceeds the
    // largest buffer lavapipe gives (128 MiB), so it stays on the CPU.
    expect_device_tokens(model, 8, "18");
}

TEST(GkRunVulkan, ListDevicesNamesTheDeviceAndTheCpu) {
    NEED_VULKAN(dev);
    const run_result r = run_gk_run({"--list-devices"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("Available devices:\n", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("  Vulkan0: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  CPU: "), std::string::npos) << r.out;
}

TEST(GkRunVulkan, AnUnknownDeviceIsAnErrorListingTheDevices) {
    vulkan0();
    for (const char * name : {"Vulkan7", "CPU", "Vulkan0,Vulkan7"}) {
        SCOPED_TRACE(name);
        const run_result r = run_gk_run(story({"--device", name}));
        gk_run_test::expect_one_line_error(r, {"no such device", "available: ", "none"}, true);
    }
}

TEST(GkRunVulkan, AnAllocationLargerThanTheDeviceFailsCleanlyAndTheCpuGoesOn) {
    NEED_VULKAN(dev);
    size_t free = 0, total = 0;
    gk_backend_dev_memory(dev, &free, &total);
    gk_backend_buffer_t big = gk_backend_buft_alloc_buffer(gk_backend_dev_buffer_type(dev), total + (size_t{1} << 20));
    EXPECT_EQ(big, nullptr);
    // Refused before the driver is asked (by the buffer type's largest buffer or the
    // device's memory, whichever is smaller), with a message naming the device.
    EXPECT_NE(std::string(gk_backend_last_error()).find("Vulkan0"), std::string::npos) << gk_backend_last_error();
    gk_backend_buffer_free(big);

    // The CPU path in the same process: 2 + 3 on the CPU backend.
    gk_init_params p{};
    p.mem_size       = 8 * gk_tensor_overhead() + gk_graph_overhead();
    p.no_alloc       = true;
    gk_context * ctx = gk_init(p);
    ASSERT_NE(ctx, nullptr);
    gk_tensor * a   = gk_new_tensor_1d(ctx, GK_TYPE_F32, 4);
    gk_tensor * b   = gk_new_tensor_1d(ctx, GK_TYPE_F32, 4);
    gk_tensor * sum = gk_add(ctx, a, b);
    gk_cgraph * g   = gk_new_graph(ctx);
    ASSERT_EQ(gk_build_forward_expand(g, sum), GK_STATUS_SUCCESS);
    gk_backend_t        cpu = gk_backend_cpu_init();
    gk_backend_buffer_t buf = gk_backend_alloc_ctx_tensors(ctx, cpu);
    ASSERT_NE(buf, nullptr) << gk_backend_last_error();
    const float two[4] = {2, 2, 2, 2}, three[4] = {3, 3, 3, 3};
    gk_backend_tensor_set(a, two, 0, sizeof two);
    gk_backend_tensor_set(b, three, 0, sizeof three);
    EXPECT_EQ(gk_backend_graph_compute(cpu, g), GK_STATUS_SUCCESS);
    float out[4] = {};
    gk_backend_tensor_get(sum, out, 0, sizeof out);
    for (float v : out) EXPECT_EQ(v, 5.0f);
    gk_backend_buffer_free(buf);
    gk_backend_free(cpu);
    gk_free(ctx);
}

} // namespace
