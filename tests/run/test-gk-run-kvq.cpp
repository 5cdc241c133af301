// test-gk-run-kvq: gk-run with a quantized KV cache (-ctk / -ctv, llama.cpp's cache types):
// every type runs on the bundled models whose heads fit its blocks, its logits do not depend
// on the micro-batch size or the kernel set and stay close to the f16 cache's, the cache
// takes the bytes its type says, and a type or head size that does not fit is refused by name.
#include "gk_run_exec.h"

#include "run/kv_cache.h"

#include "gk/cpu/kernel_set.h"
#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::expect_one_line_error;
using gk_run_test::run_gk_run;
using gk_run_test::run_result;

namespace {

const fs::path k_models = fs::path(GK_TEST_DATA) / "models";

// Models whose K and V heads have 32 elements (one block of every quantized cache type).
const char * const k_block_models[] = {"qwen3-random.gguf", "gemma3-random.gguf"};

const char * const k_quantized[] = {"q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"};

constexpr int    k_steps  = 4;
constexpr size_t k_vocab  = 512;  // the random models' vocabulary
const char *     k_prompt = "Once upon a time there was a little robot who liked to count";

const fs::path & scratch() {
    static const fs::path d = gk_run_test::scratch_dir("test-gk-run-kvq");
    return d;
}

/** The logits of k_steps greedy steps of `model` with K and V cached as `type`, plus
 *  `extra` options; fails the test (and returns nothing) when gk-run does not exit 0. */
std::vector<float> logits(const std::string & model, const std::string & type, std::vector<std::string> extra = {}) {
    static int               n    = 0;
    const fs::path           dump = scratch() / ("logits-" + std::to_string(n++) + ".f32");
    std::vector<std::string> args{"-m", (k_models / model).string(), "-p", k_prompt, "-n", std::to_string(k_steps)};
    args.insert(args.end(), {"--temp", "0", "-ctk", type, "-ctv", type, "--dump-logits", dump.string()});
    args.insert(args.end(), extra.begin(), extra.end());
    const run_result r = run_gk_run(args);
    EXPECT_EQ(r.exit_code, 0) << model << " " << type << ": " << r.err;
    const std::string bytes = gk_run_test::read_all(dump);
    EXPECT_EQ(bytes.size(), k_steps * k_vocab * sizeof(float)) << model << " " << type;
    std::vector<float> out(bytes.size() / sizeof(float));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
    return out;
}

struct closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};

gk::run::hparams read_hp(const std::string & model) {
    gk_gguf_error                    err{};
    std::unique_ptr<gk_gguf, closer> g(gk_gguf_open((k_models / model).c_str(), &err));
    gk::run::hparams                 hp;
    std::string                      msg;
    EXPECT_TRUE(g) << err.message;
    EXPECT_TRUE(g && gk::run::read_hparams(g.get(), 512, hp, &msg)) << msg;
    return hp;
}

} // namespace

// Each type runs, -v names it, and the prompt is evaluated to the same bits one token at a
// time (-ub 1), seven at a time and all at once (-ub 512), at 1 to 3 threads: K and V rows
// are encoded one by one, and a masked cell changes no bit of attention.
TEST(GkRunKvq, EveryTypeRunsAndIsMicroBatchInvariant) {
    for (const char * model : k_block_models) {
        for (const char * type : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}) {
            SCOPED_TRACE(std::string(model) + " " + type);
            const std::vector<float> whole  = logits(model, type, {"-ub", "512", "-t", "2"});
            const std::vector<float> ones   = logits(model, type, {"-ub", "1", "-t", "1"});
            const std::vector<float> sevens = logits(model, type, {"-ub", "7", "-t", "3"});
            EXPECT_TRUE(whole == ones) << "the logits of -ub 1 differ from those of -ub 512";
            EXPECT_TRUE(whole == sevens) << "the logits of -ub 7 differ from those of -ub 512";
        }
        const run_result r = run_gk_run(
            {"-m", (k_models / model).string(), "-p", "Hi", "-n", "1", "-ctk", "q4_0", "-ctv", "iq4_nl", "-v"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find("KV cache q4_0/iq4_nl"), std::string::npos) << r.err;
    }
}

// A quantized cache changes the logits (the option takes effect), but little: at the first
// step (the prompt's last token; later steps may follow another greedy token) the largest
// difference from the f16 cache's stays within a bound from the format's step: 1% of the
// largest logit for 8 bits, 5% for 5 bits, 8% for 4 bits (about 1.6 to 5 times what the
// bundled models show).
TEST(GkRunKvq, LogitsStayCloseToTheF16Cache) {
    for (const char * model : k_block_models) {
        const std::vector<float> ref  = logits(model, "f16");
        float                    peak = 0.0f;
        for (size_t i = 0; i < k_vocab; ++i) peak = std::max(peak, std::fabs(ref[i]));
        for (const char * type : k_quantized) {
            SCOPED_TRACE(std::string(model) + " " + type);
            const std::vector<float> got = logits(model, type);
            ASSERT_EQ(got.size(), ref.size());
            float worst = 0.0f;
            for (size_t i = 0; i < k_vocab; ++i) worst = std::max(worst, std::fabs(got[i] - ref[i]));
            std::printf("%s %s: largest logit difference %g (largest logit %g)\n", model, type, worst, peak);
            const std::string t     = type;
            const float       bound = (t == "q8_0" ? 0.01f : t == "q5_0" || t == "q5_1" ? 0.05f : 0.08f) * peak;
            EXPECT_GT(worst, 0.0f) << "the logits are those of the f16 cache";
            EXPECT_LE(worst, bound) << "largest logit " << peak;
        }
    }
}

// The kernel sets with FMA give the same bits (kernel_set.h) with a quantized cache too.
// Skips where the host runs fewer than two such sets.
TEST(GkRunKvq, LogitsDoNotDependOnTheKernelSet) {
    std::vector<std::string> levels;
    for (const gk::cpu::kernel_set * ks : gk::cpu::runnable_kernel_sets()) {
        if (ks->compiled.fma) levels.emplace_back(ks->name);
    }
    if (levels.size() < 2) GTEST_SKIP() << "this host runs fewer than two kernel sets with FMA";
    for (const char * type : k_quantized) {
        SCOPED_TRACE(type);
        std::vector<float> first;
        for (const std::string & level : levels) {
            ::setenv("GK_CPU_LEVEL", level.c_str(), 1);  // inherited by the gk-run child
            const std::vector<float> got = logits("qwen3-random.gguf", type);
            ::unsetenv("GK_CPU_LEVEL");
            if (first.empty()) {
                first = got;
            } else {
                EXPECT_TRUE(got == first) << "kernel set " << level << " differs from " << levels.front();
            }
        }
    }
}

// The cache holds n_ctx rows of n_embd_k_gqa (K) and n_embd_v_gqa (V) elements of its types
// per layer, each tensor padded to the buffer's alignment: a q8_0 cache takes 34/64 of an
// f16 one, a q4_0 cache 18/64.
TEST(GkRunKvq, CacheBytesFollowTheType) {
    const gk::run::hparams hp    = read_hp("qwen3-random.gguf");
    const int64_t          n_ctx = 256;
    const size_t           align = gk_backend_buft_get_alignment(gk_backend_cpu_buffer_type());
    const auto             pad   = [&](size_t n) { return (n + align - 1) / align * align; };
    for (enum gk_type t : {GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_BF16, GK_TYPE_Q8_0, GK_TYPE_Q4_0, GK_TYPE_Q4_1,
                           GK_TYPE_IQ4_NL, GK_TYPE_Q5_0, GK_TYPE_Q5_1}) {
        SCOPED_TRACE(gk_type_name(t));
        std::string error;
        const auto  kv = gk::run::KvCache::create(hp, n_ctx, t, GK_TYPE_F16, &error);
        ASSERT_TRUE(kv) << error;
        const size_t k_bytes = gk_row_size(t, hp.n_embd_k_gqa()) * n_ctx;
        const size_t v_bytes = gk_row_size(GK_TYPE_F16, hp.n_embd_v_gqa()) * n_ctx;
        EXPECT_EQ(kv->bytes(), static_cast<size_t>(hp.n_layer) * (pad(k_bytes) + pad(v_bytes)));
    }
    std::string error;
    const auto  f16  = gk::run::KvCache::create(hp, n_ctx, GK_TYPE_F16, GK_TYPE_F16, &error);
    const auto  q8_0 = gk::run::KvCache::create(hp, n_ctx, GK_TYPE_Q8_0, GK_TYPE_Q8_0, &error);
    ASSERT_TRUE(f16 && q8_0) << error;
    EXPECT_EQ(q8_0->bytes() * 64, f16->bytes() * 34);
}

TEST(GkRunKvq, TypesOutsideTheListAreRefused) {
    const std::string qwen = (k_models / "qwen3-random.gguf").string();
    expect_one_line_error(run_gk_run({"-m", qwen, "-p", "Hi", "-n", "1", "-ctk", "q4_K"}), {"q4_K", "not supported"});
    expect_one_line_error(run_gk_run({"-m", qwen, "-p", "Hi", "-n", "1", "-ctv", "q2_K"}), {"q2_K", "for V"});
    expect_one_line_error(run_gk_run({"-m", qwen, "-p", "Hi", "-n", "1", "-ctk", "q9"}), {"--cache-type-k", "'q9'"});
    EXPECT_FALSE(gk::run::kv_cache_type_ok(GK_TYPE_Q8_1));
    EXPECT_TRUE(gk::run::kv_cache_type_ok(GK_TYPE_IQ4_NL));
}

// As in llama.cpp, a block type needs head sizes that are a multiple of its block: the
// random llama model's heads have 16 elements, stories260K's 8.
TEST(GkRunKvq, HeadsThatDoNotFitTheBlockAreRefused) {
    expect_one_line_error(
        run_gk_run({"-m", (k_models / "llama-random-q8_0.gguf").string(), "-p", "Hi", "-n", "1", "-ctk", "q8_0"}),
        {"q8_0", "for K", "block size 32", "head size is 16"});
    expect_one_line_error(
        run_gk_run({"-m", (k_models / "stories260K.gguf").string(), "-p", "Hi", "-n", "1", "-ctv", "iq4_nl"}),
        {"iq4_nl", "for V", "head size is 8"});
    // bf16 has one-element blocks: any head size.
    EXPECT_EQ(
        run_gk_run({"-m", (k_models / "stories260K.gguf").string(), "-p", "Hi", "-n", "1", "-ctk", "bf16"}).exit_code,
        0);
}
