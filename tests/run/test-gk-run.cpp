// test-gk-run: the gk-run program on bad input (each a one-line error and exit status 1,
// never a crash), the context limit, --tokenize on a vocabulary-only file, chat, sampled
// text that does not depend on the thread count, and logits that do not depend on the
// micro-batch size.
#include "gk_run_exec.h"
#include "model_rewrite.h"

#include "gk/cpu/kernel_set.h"
#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::expect_one_line_error;
using gk_run_test::run_gk_run;
using gk_run_test::run_result;

namespace {

const fs::path k_models  = fs::path(GK_TEST_DATA) / "models";
const fs::path k_stories = k_models / "stories260K.gguf";


const fs::path & scratch() {
    static const fs::path d = gk_run_test::scratch_dir("test-gk-run");
    return d;
}

/** A copy of stories260K with `edit` applied to a context that is then written to
 *  `name`. `keep(tensor name)` may drop tensors; `shape(name, ne)` may change one's
 *  shape (its data is then zeros of the new size). */
fs::path edited_model(const std::string & name, const std::function<void(gk_gguf *)> & edit_kv,
                      const std::function<bool(const std::string &, int64_t *)> & edit_tensor = {}) {
    const fs::path path = scratch() / name;
    gk_run_test::rewrite_model(k_stories, path, edit_kv, [&](gk_run_test::tensor_edit & t) {
        if (!edit_tensor) return true;
        const uint64_t size = t.data.size();
        if (!edit_tensor(t.name, t.ne)) return false;  // dropped
        const uint64_t new_size = gk_row_size(t.type, t.ne[0]) * t.ne[1] * t.ne[2] * t.ne[3];
        if (new_size != size) {
            t.data.assign(new_size, 0);
            t.n_dims = t.ne[1] > 1 ? 2 : 1;
        }
        return true;
    });
    return path;
}

std::vector<std::string> greedy(const fs::path & model, const std::string & prompt, int n) {
    return {"-m", model.string(), "-p", prompt, "-n", std::to_string(n), "--temp", "0"};
}

} // namespace

// ---- bad input ------------------------------------------------------------------------

TEST(GkRun, MissingFile) {
    expect_one_line_error(run_gk_run(greedy(scratch() / "no-such-model.gguf", "x", 4)), "cannot load model");
}

TEST(GkRun, NotGguf) {
    const fs::path p = scratch() / "not-a-model.gguf";
    std::ofstream(p) << "this is a text file, not a GGUF model\n";
    expect_one_line_error(run_gk_run(greedy(p, "x", 4)), "cannot load model");
}

TEST(GkRun, TruncatedModel) {
    const std::string bytes = gk_run_test::read_all(k_stories);
    for (size_t keep : {size_t(16), bytes.size() / 3, bytes.size() - 100}) {
        const fs::path p = scratch() / ("truncated-" + std::to_string(keep) + ".gguf");
        std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
        SCOPED_TRACE(keep);
        expect_one_line_error(run_gk_run(greedy(p, "x", 4)), "cannot load model");
    }
}

TEST(GkRun, UnknownArchitecture) {
    const fs::path p = edited_model("mamba.gguf", [](gk_gguf * g) {
        gk_gguf_error err{};
        gk_gguf_set_str(g, "general.architecture", "mamba", 5, &err);
    });
    expect_one_line_error(run_gk_run(greedy(p, "x", 4)),
                          "unsupported architecture 'mamba' (supported: llama, gemma3, qwen3, qwen2, phi3, gemma2)");
}

TEST(GkRun, MissingKey) {
    const fs::path p = edited_model("no-block-count.gguf", [](gk_gguf * g) {
        gk_gguf_error err{};
        gk_gguf_remove_key(g, "llama.block_count", &err);
    });
    expect_one_line_error(run_gk_run(greedy(p, "x", 4)), "missing key llama.block_count");
}

TEST(GkRun, HugeBlockCount) {
    const fs::path p = edited_model("huge-block-count.gguf", [](gk_gguf * g) {
        gk_gguf_error err{};
        gk_gguf_set_u32(g, "llama.block_count", 10000000, &err);
    });
    expect_one_line_error(run_gk_run(greedy(p, "x", 4)), "llama.block_count = 10000000 but the file has only 48 tensors");
}

TEST(GkRun, MissingTensor) {
    const fs::path p = edited_model("no-ffn-up.gguf", {},
                                    [](const std::string & n, int64_t *) { return n != "blk.3.ffn_up.weight"; });
    expect_one_line_error(run_gk_run(greedy(p, "x", 4)), "missing tensor blk.3.ffn_up.weight");
}

TEST(GkRun, WrongTensorShape) {
    // attn_k of stories260K is [64, 32] (4 kv heads of 8); make it [64, 64].
    const fs::path p = edited_model("wrong-shape.gguf", {}, [](const std::string & n, int64_t * ne) {
        if (n == "blk.1.attn_k.weight") ne[1] = 64;
        return true;
    });
    expect_one_line_error(run_gk_run(greedy(p, "x", 4)),
                          "tensor blk.1.attn_k.weight (attention key) has shape [64, 64, 1, 1], expected [64, 32]");
}

TEST(GkRun, WrongHeadCount) {
    const fs::path p = edited_model("bad-heads.gguf", [](gk_gguf * g) {
        gk_gguf_error err{};
        gk_gguf_set_u32(g, "llama.attention.head_count_kv", 3, &err);
    });
    expect_one_line_error(run_gk_run(greedy(p, "x", 4)), "not a multiple of head_count_kv 3");
}

TEST(GkRun, BadOption) {
    const run_result r = run_gk_run({"-m", k_stories.string(), "-n", "many"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    expect_one_line_error(run_gk_run({"-m", k_stories.string(), "-p", "x", "-ub", "0"}), "-ub must be >= 1");
}

// ---- context limit --------------------------------------------------------------------

TEST(GkRun, PromptLongerThanContext) {
    auto args = greedy(k_stories, "Once upon a time there was a little girl who lived in a big house", 4);
    args.insert(args.end(), {"-c", "8"});
    expect_one_line_error(run_gk_run(args), "but the context holds 8 (raise -c)");
}

TEST(GkRun, GenerationPastFullContext) {
    auto args = greedy(k_stories, "Once upon a time", 64);
    args.insert(args.end(), {"-c", "16", "--ignore-eos", "--no-context-shift"});
    expect_one_line_error(run_gk_run(args), "context full after 12 of 64 tokens");
}

TEST(GkRun, UnlimitedGenerationStopsAtFullContext) {
    auto args = greedy(k_stories, "Once upon a time", -1);
    args.insert(args.end(), {"-c", "16", "--ignore-eos", "--no-context-shift"});
    const run_result r = run_gk_run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("context full (16 tokens); stopping"), std::string::npos) << r.err;
}

// ---- modes ----------------------------------------------------------------------------

TEST(GkRun, TokenizeVocabOnlyFile) {
    // A file with the stories260K vocabulary and no tensors.
    const fs::path   vocab = fs::path(GK_TEST_DATA) / ".." / "gguf" / "corpus" / "stories260K-metadata.gguf";
    const run_result r     = run_gk_run({"-m", vocab.string(), "-p", "Once upon a time", "--tokenize"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "1 403 407 261 378\n");
    const run_result nobos = run_gk_run({"-m", vocab.string(), "-p", "Once upon a time", "--tokenize", "--no-bos"});
    EXPECT_EQ(nobos.out, "403 407 261 378\n");
}

TEST(GkRun, GreedyStory) {
    const run_result r = run_gk_run(greedy(k_stories, "Once upon a time", 32));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("Once upon a time, there was a little girl named Lily.", 0), 0u) << r.out;
    EXPECT_NE(r.err.find("tokens/s"), std::string::npos);
    EXPECT_NE(r.err.find("peak memory"), std::string::npos);
}

// The generated text continues the prompt: on a SentencePiece model the first generated
// piece ("\u2581was") keeps its space; only a text's very first piece loses it.
TEST(GkRun, FirstGeneratedWordKeepsItsSpace) {
    const run_result r = run_gk_run(greedy(k_stories, "The little dog", 8));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("The little dog was ", 0), 0u) << r.out;
    // With no prompt text (BOS only) the story starts at its first letter.
    const run_result e = run_gk_run(greedy(k_stories, "", 8));
    EXPECT_EQ(e.exit_code, 0) << e.err;
    ASSERT_FALSE(e.out.empty());
    EXPECT_NE(e.out.front(), ' ') << e.out;
}

TEST(GkRun, SameTextAtOneAndTwoThreads) {
    std::string text[2];
    for (int t = 1; t <= 2; ++t) {
        const run_result r = run_gk_run({"-m", k_stories.string(), "-p", "One day", "-n", "48", "--seed", "42", "--temp",
                                         "0.9", "--top-k", "50", "--top-p", "0.9", "--min-p", "0.02",
                                         "--repeat-penalty", "1.1", "-t", std::to_string(t)});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        text[t - 1] = r.out;
    }
    EXPECT_EQ(text[0], text[1]);
    EXPECT_GT(text[0].size(), std::string("One day").size() + 20);
    // Another seed gives another story.
    const run_result other = run_gk_run({"-m", k_stories.string(), "-p", "One day", "-n", "48", "--seed", "7",
                                         "--temp", "0.9", "--top-k", "50", "--top-p", "0.9", "--min-p", "0.02",
                                         "--repeat-penalty", "1.1", "-t", "2"});
    EXPECT_NE(other.out, text[0]);
}

TEST(GkRun, DumpLogits) {
    const fs::path dump = scratch() / "logits.f32";
    auto           args = greedy(k_stories, "Once upon a time", 5);
    args.insert(args.end(), {"--dump-logits", dump.string()});
    const run_result r = run_gk_run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(fs::file_size(dump), 5u * 512u * sizeof(float));  // 5 steps of the 512-token vocabulary
}

// Batch invariance: the logits of every step (the prompt's last token, then each
// generated one) have the same bits whatever the micro-batch size and thread count. The
// prompt (147 tokens) spans several micro-batches of 7 and 64 and, on gemma3-random,
// many sliding windows of 8 (gemma2-random: the same on every other layer).
TEST(GkRun, LogitsDoNotDependOnTheMicroBatchSize) {
    const std::string prompt = [] {
        std::string p;
        for (int i = 0; i < 5; ++i) p += "The quick brown fox jumps over the lazy dog. ";
        return p;
    }();
    for (const char * model : {"stories260K.gguf", "llama-random-q8_0.gguf", "gemma3-random.gguf", "qwen3-random.gguf",
                               "qwen2-random.gguf", "phi3-random.gguf", "gemma2-random.gguf"}) {
        SCOPED_TRACE(model);
        std::string first;
        for (const auto & [ub, threads] : {std::pair{"512", "2"}, {"1", "1"}, {"7", "2"}, {"64", "3"}}) {
            SCOPED_TRACE(std::string("-ub ") + ub + " -t " + threads);
            const fs::path dump = scratch() / (std::string("ub-") + model + "-" + ub + ".f32");
            auto           args = greedy(k_models / model, prompt, 4);
            args.insert(args.end(), {"-ub", ub, "-t", threads, "--dump-logits", dump.string()});
            const run_result r = run_gk_run(args);
            ASSERT_EQ(r.exit_code, 0) << r.err;
            const std::string logits = gk_run_test::read_all(dump);
            ASSERT_EQ(logits.size(), 4u * 512u * sizeof(float));  // 4 steps of the 512-token vocabulary
            if (first.empty()) {
                first = logits;
            } else {
                EXPECT_TRUE(logits == first) << "the logits differ from those of -ub 512";
            }
        }
    }
}

// The kernel sets with FMA give the same bits (kernel_set.h): gk-run's logits on the q8_0
// and f32 models are byte-identical whichever set GK_CPU_LEVEL picks. Skips where the
// host runs only one such set.
TEST(GkRun, LogitsDoNotDependOnTheKernelSet) {
    std::vector<std::string> levels;
    for (const gk::cpu::kernel_set * ks : gk::cpu::runnable_kernel_sets()) {
        if (ks->compiled.fma) levels.emplace_back(ks->name);
    }
    if (levels.size() < 2) GTEST_SKIP() << "this host runs fewer than two kernel sets with FMA";
    for (const char * model : {"stories260K.gguf", "llama-random-q8_0.gguf"}) {
        SCOPED_TRACE(model);
        std::string first;
        for (const std::string & level : levels) {
            SCOPED_TRACE(level);
            const fs::path dump = scratch() / ("set-" + level + "-" + model + ".f32");
            auto           args = greedy(k_models / model, "Once upon a time there was", 4);
            args.insert(args.end(), {"--dump-logits", dump.string()});
            ::setenv("GK_CPU_LEVEL", level.c_str(), 1);  // inherited by the gk-run child
            const run_result r = run_gk_run(args);
            ::unsetenv("GK_CPU_LEVEL");
            ASSERT_EQ(r.exit_code, 0) << r.err;
            const std::string logits = gk_run_test::read_all(dump);
            ASSERT_EQ(logits.size(), 4u * 512u * sizeof(float));
            if (first.empty()) {
                first = logits;
            } else {
                EXPECT_TRUE(logits == first) << "the logits differ from those of kernel set " << levels.front();
            }
        }
    }
}

TEST(GkRun, ChatTurns) {
    // Two user messages on standard input after the first from -p; ChatML markup.
    const fs::path in = scratch() / "chat-input.txt";
    std::ofstream(in) << "Hello\n\nAnd then?\n";
    const run_result r = run_gk_run({"-m", (k_models / "qwen3-random.gguf").string(), "--chat", "--chat-template",
                                     "chatml", "-p", "Hi", "-n", "6", "--temp", "0", "-v"},
                                    in.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // Three turns were fed (three prompt-token lines).
    size_t turns = 0;
    for (size_t at = 0; (at = r.err.find("gk-run: prompt tokens:", at)) != std::string::npos; ++at) ++turns;
    EXPECT_EQ(turns, 3u) << r.err;
}

TEST(GkRun, ChatNeedsATemplate) {
    expect_one_line_error(run_gk_run({"-m", k_stories.string(), "--chat", "-p", "Hi"}), "--chat-template");
}
