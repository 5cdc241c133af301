// test-gk-run-cli: gk-run's command line read as llama.cpp reads it (every row of the
// llama.cpp option table taken, accepted as a no-op or refused by its own name; no
// combined letters; values that look like options; the last of a repeated option), the
// option values it refuses, its text inputs (-f, -sysf, stdin in chat), the context
// checks (past the training context, a KV cache larger than the memory), the timing
// summary's token count, and logits that are not finite.
#include "gk_run_exec.h"
#include "model_rewrite.h"

#include "escapes.h"
#include "llama_options.h"

#include "gk/gguf.h"
#include "gk/gk-backend.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::run_gk_run;
using gk_run_test::run_result;
using gk_run_tool::llama_option;
using gk_run_tool::llama_option_use;

namespace {

/** The run was refused before it started: one error line, nothing on stdout. */
void expect_refused(const run_result & r, const std::string & what) {
    gk_run_test::expect_one_line_error(r, what, true);
}

const fs::path k_models  = fs::path(GK_TEST_DATA) / "models";
const fs::path k_stories = k_models / "stories260K.gguf";
const fs::path k_qwen3   = k_models / "qwen3-random.gguf";

const fs::path & scratch() {
    static const fs::path d = gk_run_test::scratch_dir("test-gk-run-cli");
    return d;
}

/** stories260K, greedy, `n` tokens from "Once upon a time", then `extra`. */
std::vector<std::string> story(int n, std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"-m", k_stories.string(), "-p",     "Once upon a time",
                               "-n", std::to_string(n),  "--temp", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

/** The token count of the summary's generation line, or -1. */
int generated_count(const std::string & err) {
    std::smatch m;
    if (!std::regex_search(err, m, std::regex("gk-run: generation +[0-9.]+ ms / +([0-9]+) tokens"))) return -1;
    return std::stoi(m[1]);
}

using gk_run_test::tensor_edit;

/** stories260K written to `name` after `edit_kv` on its metadata and `edit_tensor` on
 *  each tensor. */
fs::path rewritten_stories(const std::string & name, const std::function<void(gk_gguf *)> & edit_kv,
                           const std::function<void(tensor_edit &)> & edit_tensor) {
    const fs::path path = scratch() / name;
    gk_run_test::rewrite_model(k_stories, path, edit_kv, [&](tensor_edit & t) {
        if (edit_tensor) edit_tensor(t);
        return true;
    });
    return path;
}

/** Set f32 entries [from, to) of tensor data to `v`. */
void fill_f32(std::vector<uint8_t> & data, size_t from, size_t to, float v) {
    for (size_t i = from; i < to; ++i) std::memcpy(data.data() + i * sizeof(float), &v, sizeof v);
}

int hardware_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

} // namespace

// ---- llama.cpp's option spellings -------------------------------------------------------

// Each spelling of every row of the table: refused rows by their own name in one line;
// taken ones reach a registered option (checked with --help, which ends the run before
// the options act); no-op rows with a value refused with another value.
TEST(GkRunCli, EveryLlamaOptionIsTakenOrRefusedByName) {
    for (const llama_option & row : gk_run_tool::llama_options()) {
        for (std::string_view spelled : gk_run_tool::llama_option_names(row)) {
            const std::string name(spelled);
            SCOPED_TRACE(name);
            if (row.use == llama_option_use::no_op && !row.value) continue;  // accepted: NoOpsAreAccepted...
            std::vector<std::string> args{"-m", k_stories.string(), name};
            // A value no no-op accepts; for a taken option one that converts to its type
            // (CLI11 converts the values before it answers --help).
            if (row.value) args.push_back(row.use == llama_option_use::no_op ? "x" : "1");
            const bool refused = row.use == llama_option_use::refused || row.use == llama_option_use::no_op;
            if (refused) {
                expect_refused(run_gk_run(args), "option " + name + " (" + row.what + ") is not supported: ");
                continue;
            }
            args.push_back("--help");
            const run_result r = run_gk_run(args);
            EXPECT_EQ(r.exit_code, 0) << r.err;
            EXPECT_NE(r.out.find("Usage: gk-run"), std::string::npos) << r.out;
        }
    }
}

TEST(GkRunCli, NoOpsAreAcceptedOnlyWithTheirValues) {
    int n_rows = 0;
    for (const llama_option & row : gk_run_tool::llama_options()) {
        if (row.use != llama_option_use::no_op) continue;
        ++n_rows;
        const std::string name(gk_run_tool::llama_option_names(row).front());
        SCOPED_TRACE(name);
        std::vector<std::string> values{""};
        if (row.value) {
            values.clear();
            std::string list = row.accepted;
            for (size_t at = 0; at <= list.size();) {
                const size_t comma = std::min(list.find(',', at), list.size());
                values.push_back(list.substr(at, comma - at));
                at = comma + 1;
            }
        }
        const run_result plain = run_gk_run(story(4));
        for (const std::string & v : values) {
            SCOPED_TRACE(v);
            std::vector<std::string> extra{name};
            if (row.value) extra.push_back(v);
            const run_result r = run_gk_run(story(4, extra));
            EXPECT_EQ(r.exit_code, 0) << r.err;
            EXPECT_EQ(r.out, plain.out);  // a no-op
        }
    }
    EXPECT_GE(n_rows, 10);
}

// docs/gk-run.md lists every spelling of every row the table takes, accepts or refuses.
TEST(GkRunCli, DocsListEveryLlamaOption) {
    const std::string docs = gk_run_test::read_all(fs::path(GK_TEST_DATA) / ".." / ".." / "docs" / "gk-run.md");
    ASSERT_FALSE(docs.empty());
    for (const llama_option & row : gk_run_tool::llama_options()) {
        for (std::string_view spelled : gk_run_tool::llama_option_names(row)) {
            const std::string name(spelled);
            const bool        listed = docs.find("`" + name + "`") != std::string::npos ||
                                docs.find("`" + name + ",") != std::string::npos ||
                                docs.find("`" + name + " ") != std::string::npos ||  // with its value: `--x N`
                                docs.find(", " + name + ",") != std::string::npos ||
                                docs.find(", " + name + " ") != std::string::npos ||
                                docs.find(", " + name + "`") != std::string::npos;
            EXPECT_TRUE(listed) << name << " is not in docs/gk-run.md";
        }
    }
}

// The cases of the issue: -fa read as -f a, -ngl 99 as -n gl 99, -co / -st as values of
// -c / -s, -hf as help.
TEST(GkRunCli, MultiLetterOptionsDoNotCombineLetters) {
    const run_result plain = run_gk_run(story(4));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    for (const auto & extra :
         std::vector<std::vector<std::string>>{{"-fa"}, {"-fa", "on"}, {"-fa", "auto"}, {"-ngl", "0"}}) {
        SCOPED_TRACE(extra.front());
        const run_result r = run_gk_run(story(4, extra));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, plain.out);
    }
    expect_refused(run_gk_run(story(4, {"-fa", "off"})), "option -fa (flash attention) is not supported");
    // -ngl 99 with no device (lavapipe is listed only with GK_VULKAN_SOFTWARE=1): llama.cpp's
    // warning, and the run on the CPU.
    for (const char * spelled : {"-ngl", "--n-gpu-layers", "--gpu-layers"}) {
        const run_result r = run_gk_run(story(4, {spelled, "99"}));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, plain.out);
        if (gk_backend_dev_count() == 1) {  // a machine with a GPU runs the layers there
            EXPECT_NE(r.err.find("warning: no usable GPU found"), std::string::npos) << r.err;
        }
    }
    expect_refused(run_gk_run(story(4, {"-ngl", "some"})), "-ngl takes a number of layers");
    expect_refused(run_gk_run(story(4, {"-co", "on"})), "option -co (coloured output) is not supported");
    expect_refused(run_gk_run({"-hf", "ggml-org/gemma-3-270m-GGUF"}), "option -hf (Hugging Face repository)");
    expect_refused(run_gk_run({"-m", k_stories.string(), "-hf"}), "option -hf (Hugging Face repository)");
    // -st is llama.cpp's --single-turn, never a seed: one reply, then exit, though stdin
    // holds more messages (-cnv would print its prompt marker and answer them).
    const fs::path more = scratch() / "more-messages.txt";
    std::ofstream(more) << "and then?\nwhat next?\n";
    const std::vector<std::string> chat = {"-m", k_qwen3.string(), "--chat-template", "chatml", "-p", "hi",
                                           "-n", "3", "--temp", "0"};
    std::vector<std::string> single = chat;
    single.push_back("-st");
    const run_result st = run_gk_run(single, more.string());
    EXPECT_EQ(st.exit_code, 0) << st.err;
    EXPECT_EQ(st.out.find("> "), std::string::npos) << st.out;
    std::vector<std::string> conversation = chat;
    conversation.push_back("-cnv");
    const run_result cnv = run_gk_run(conversation, more.string());
    EXPECT_EQ(cnv.exit_code, 0) << cnv.err;
    EXPECT_NE(cnv.out.find("> "), std::string::npos) << cnv.out;
    // Letters that are no option together are not split into options.
    expect_refused(run_gk_run(story(4, {"-pn", "3"})), "unknown option -pn");
    expect_refused(run_gk_run(story(4, {"--no-such-option"})), "unknown option --no-such-option");
}

TEST(GkRunCli, ValuesThatLookLikeOptionsStayValues) {
    // The prompt "-fa" (a value, not the option).
    const run_result r   = run_gk_run({"-m", k_stories.string(), "-p", "-fa", "--tokenize"});
    const run_result ref = run_gk_run({"-m", k_stories.string(), "--prompt=-fa", "--tokenize"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, ref.out);
    EXPECT_GT(r.out.size(), 2u);
    // -s -1: a random seed (printed by -v), not an error.
    const run_result seeded = run_gk_run(story(4, {"-s", "-1", "-v"}));
    EXPECT_EQ(seeded.exit_code, 0) << seeded.err;
    EXPECT_NE(seeded.err.find(", seed "), std::string::npos) << seeded.err;
    expect_refused(run_gk_run(story(4, {"-s", "-2"})), "-s must be -1 (random) or 0..4294967295");
    // An empty value is a value: the prompt is BOS only.
    for (const auto & a : std::vector<std::vector<std::string>>{{"-p", ""}, {"--prompt="}, {"--prompt", ""}}) {
        std::vector<std::string> args{"-m", k_stories.string()};
        args.insert(args.end(), a.begin(), a.end());
        args.push_back("--tokenize");
        const run_result e = run_gk_run(args);
        EXPECT_EQ(e.exit_code, 0) << e.err;
        EXPECT_EQ(e.out, "1\n");
    }
    // A value missing from the end is an error.
    expect_refused(run_gk_run(story(4, {"-n"})), "option -n needs a value");
}

TEST(GkRunCli, RepeatedOptionKeepsTheLastValue) {
    const run_result r = run_gk_run(story(3, {"-n", "6", "--ignore-eos"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(generated_count(r.err), 6) << r.err;
    const run_result p = run_gk_run({"-m", k_stories.string(), "-p", "A", "-p", "Once", "--tokenize"});
    EXPECT_EQ(p.out, "1 403\n");
    // llama.cpp's spellings of one option count as one: --predict after -n.
    const run_result alias = run_gk_run(story(3, {"--predict", "5", "--ignore-eos"}));
    EXPECT_EQ(generated_count(alias.err), 5) << alias.err;
    // llama.cpp reads --n_predict as --n-predict.
    const run_result underscore = run_gk_run(story(3, {"--n_predict", "2", "--ignore-eos"}));
    EXPECT_EQ(generated_count(underscore.err), 2) << underscore.err;
}

TEST(GkRunCli, IgnoreEosNeverSamplesTheEndOfText) {
    // As llama.cpp's --ignore-eos (a logit bias of -inf on every end-of-generation token):
    // with EOS (2) pushed to the top, the story still goes on. gk-run used to sample EOS,
    // print nothing for it and feed it back.
    const run_result r = run_gk_run(story(5, {"--ignore-eos", "-l", "2+100"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(generated_count(r.err), 5) << r.err;
    EXPECT_GT(r.out.size(), std::string("Once upon a time").size() + 5) << r.out;
    // Without it EOS ends the text at once.
    const run_result stop = run_gk_run(story(5, {"-l", "2+100"}));
    EXPECT_EQ(stop.out, "Once upon a time\n") << stop.out;
}

TEST(GkRunCli, ThePromptIsEchoedPastANulByte) {
    // -e turns \x00 into a NUL byte, which is tokenized; the echo stopped there (fputs).
    const run_result r = run_gk_run({"-m", k_stories.string(), "-p", "a\\x00bc", "-e", "-n", "1", "--temp", "0"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, 4), std::string("a\0bc", 4));
}

TEST(GkRunCli, MinusTwoGeneratesUntilTheContextIsFull) {
    // llama.cpp's -n -2: no context shift; the text stops where the context is full.
    const run_result r = run_gk_run(story(0, {"-n", "-2", "-c", "32", "--ignore-eos", "-v"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // BOS and 4 prompt tokens, 27 generated ones in the cache, and the last one printed
    EXPECT_EQ(generated_count(r.err), 32 - 4) << r.err;
    EXPECT_NE(r.err.find("context full (32 tokens); stopping"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("context shift"), std::string::npos) << r.err;
}

TEST(GkRunCli, HelpNamesTheProgramAndErrorsAreOneLine) {
    for (const char * h : {"-h", "--help", "--usage"}) {
        const run_result r = run_gk_run({h});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out.rfind("gk-run: ", 0), 0u) << r.out;
        EXPECT_NE(r.out.find("Usage: gk-run [OPTIONS]"), std::string::npos) << r.out;
    }
    expect_refused(run_gk_run({"-p", "x"}), "--model is required");
    expect_refused(run_gk_run(story(4, {"-n", "many"})), "many");
    expect_refused(run_gk_run(story(4, {"stray"})), "unexpected argument 'stray'");
}

// -e (on by default) turns llama.cpp's escapes of the prompt into characters; --no-escape
// keeps them.
TEST(GkRunCli, EscapesOfThePrompt) {
    using gk_run_tool::process_escapes;
    EXPECT_EQ(process_escapes("a\\nb\\tc\\rd"), "a\nb\tc\rd");
    EXPECT_EQ(process_escapes("\\'\\\"\\\\"), "'\"\\");
    EXPECT_EQ(process_escapes("\\x41\\x7a\\x4"), "Az\\x4");
    EXPECT_EQ(process_escapes("\\q\\"), "\\q\\");  // not escapes: kept
    EXPECT_EQ(process_escapes("\\\\n"), "\\n");    // an escaped backslash, then n
    const auto tokens = [](std::vector<std::string> extra) {
        std::vector<std::string> a{"-m", k_stories.string(), "--tokenize"};
        a.insert(a.end(), extra.begin(), extra.end());
        const run_result r = run_gk_run(a);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    };
    const std::string newline = tokens({"-p", "Once\nupon"});
    EXPECT_EQ(tokens({"-p", "Once\\nupon"}), newline);
    EXPECT_EQ(tokens({"-p", "Once\\nupon", "-e"}), newline);
    EXPECT_NE(tokens({"-p", "Once\\nupon", "--no-escape"}), newline);
    EXPECT_EQ(tokens({"-p", "Once\\nupon", "--no-escape"}), tokens({"-p", "Once\\\\nupon"}));
    const fs::path f = scratch() / "escaped-prompt.txt";
    std::ofstream(f) << "Once\\nupon\n";
    EXPECT_EQ(tokens({"-f", f.string()}), newline);
}

// ---- option values ----------------------------------------------------------------------

TEST(GkRunCli, OptionValuesAreChecked) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--temp", "nan"}, "--temp must be a finite number"},
        {{"--temp", "inf"}, "--temp must be a finite number"},
        {{"--repeat-penalty", "nan"}, "--repeat-penalty must be a finite number > 0"},
        {{"--repeat-penalty", "0"}, "--repeat-penalty must be a finite number > 0"},
        {{"--mpi-start-timeout", "nan"}, "--mpi-start-timeout must be a number of seconds > 0"},
        {{"--mpi-start-timeout", "0"}, "--mpi-start-timeout must be a number of seconds > 0"},
        {{"--mpi-start-timeout", "1e300"}, "--mpi-start-timeout must be a number of seconds > 0"},
        {{"--top-p", "2"}, "--top-p must be between 0 and 1"},
        {{"--top-p", "-1"}, "--top-p must be between 0 and 1"},
        {{"--top-p", "nan"}, "--top-p must be between 0 and 1"},
        {{"--min-p", "2"}, "--min-p must be between 0 and 1"},
        {{"--min-p", "nan"}, "--min-p must be between 0 and 1"},
        {{"--top-k", "-5"}, "--top-k must be >= 0"},
        {{"--repeat-last-n", "-2"}, "--repeat-last-n must be >= -1"},
        {{"-n", "-3"}, "-n must be >= -2"},
        {{"-c", "-1"}, "-c must be >= 0"},
        {{"-b", "0"}, "-b must be >= 1"},
        {{"-ub", "0"}, "-ub must be >= 1"},
        {{"-t", "-2"}, "-t must be >= 1"},
        {{"-tb", "-2"}, "-tb must be >= 1"},
    };
    for (const auto & [extra, what] : cases) {
        SCOPED_TRACE(extra.front() + " " + extra.back());
        expect_refused(run_gk_run(story(4, extra)), what);
    }
}

// --repeat-last-n -1 is llama.cpp's "the context size".
TEST(GkRunCli, RepeatLastNMinusOneIsTheContextSize) {
    const auto text = [](const char * last_n) {
        const run_result r = run_gk_run(story(40, {"-c", "64", "--repeat-penalty", "1.5", "--repeat-last-n", last_n}));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    };
    EXPECT_EQ(text("-1"), text("64"));
    EXPECT_NE(text("-1"), text("0"));  // the penalty does act
}

// -t past the hardware's threads is capped at them, with a warning (more threads than
// cores only wait on each other).
TEST(GkRunCli, ThreadsAreCappedAtTheHardware) {
    const int        hw = hardware_threads();
    const run_result r  = run_gk_run(story(4, {"-t", "1000", "-tb", "999", "-v"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gk-run: warning: -t 1000 is more than the " + std::to_string(hw) +
                         " hardware threads; using " + std::to_string(hw)),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("gk-run: warning: -tb 999 is more than"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(", " + std::to_string(hw) + " threads, seed"), std::string::npos) << r.err;
}

// -tb and -b change how the prompt is computed, never what comes out.
TEST(GkRunCli, BatchThreadsAndBatchSizeKeepTheText) {
    const run_result plain = run_gk_run(story(8));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const run_result r = run_gk_run(story(8, {"-t", "1", "-tb", "2", "-b", "2", "-ub", "8", "-v"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out);
    if (hardware_threads() >= 2) {
        EXPECT_NE(r.err.find("gk-run: 2 threads for the prompt"), std::string::npos) << r.err;
    }
}

// ---- text inputs --------------------------------------------------------------------------

TEST(GkRunCli, PromptFileMustBeAFile) {
    const auto from_file = [](const std::string & path) {
        return run_gk_run({"-m", k_stories.string(), "-f", path, "-n", "4", "--temp", "0"});
    };
    expect_refused(from_file(scratch().string()),
                   "cannot read prompt file '" + scratch().string() + "': it is a directory");
    expect_refused(from_file((scratch() / "missing.txt").string()), "cannot read prompt file");
    // A stream without end is cut at the cap instead of filling the memory.
    expect_refused(from_file("/dev/zero"), "cannot read prompt file '/dev/zero': more than");
    expect_refused(run_gk_run(story(4, {"-sysf", scratch().string()})), "cannot read system prompt file");
    const fs::path p = scratch() / "prompt.txt";
    std::ofstream(p) << "Once upon a time\n";
    const run_result f = run_gk_run({"-m", k_stories.string(), "-f", p.string(), "--tokenize"});
    EXPECT_EQ(f.out, "1 403 407 261 378\n");
}

TEST(GkRunCli, SystemPromptFileIsTheSystemMessage) {
    const fs::path sys = scratch() / "system.txt";
    std::ofstream(sys) << "Be brief.\n";
    const auto prompt_tokens = [](const std::vector<std::string> & extra) {
        std::vector<std::string> a{
            "-m", k_qwen3.string(), "--chat", "--chat-template", "chatml", "-p", "Hi", "-n", "2", "--temp", "0", "-v"};
        a.insert(a.end(), extra.begin(), extra.end());
        const run_result r = run_gk_run(a);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::smatch m;
        return std::regex_search(r.err, m, std::regex("gk-run: prompt tokens:[^\n]*")) ? m.str() : "";
    };
    const std::string from_file = prompt_tokens({"-sysf", sys.string()});
    EXPECT_FALSE(from_file.empty());
    EXPECT_EQ(from_file, prompt_tokens({"-sys", "Be brief."}));
    EXPECT_NE(from_file, prompt_tokens({}));
}

TEST(GkRunCli, ChatRefusesADirectoryOnStdin) {
    expect_refused(
        run_gk_run({"-m", k_qwen3.string(), "--chat", "--chat-template", "chatml", "-n", "2"}, scratch().string()),
        "cannot read standard input: it is a directory");
}

// ---- the context --------------------------------------------------------------------------

TEST(GkRunCli, ContextPastTheTrainingContextWarns) {
    const run_result r = run_gk_run(story(4, {"-c", "4096"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gk-run: warning: the context of 4096 tokens is larger than the model's training context "
                         "(2048)"),
              std::string::npos)
        << r.err;
    const run_result within = run_gk_run(story(4, {"-c", "2048"}));
    EXPECT_EQ(within.err.find("warning"), std::string::npos) << within.err;
}

TEST(GkRunCli, ALayerCountThatIsAnArrayIsNamed) {
    // block_count is the count per-layer arrays are checked against; as an array it was
    // read as one and reported "has 2 entries for 0 layers".
    const fs::path model = rewritten_stories("array-block-count.gguf",
                                             [](gk_gguf * g) {
                                                 gk_gguf_error  err{};
                                                 const uint32_t five[2] = {5, 5};
                                                 gk_gguf_set_array(g, "llama.block_count", GK_GGUF_TYPE_UINT32, five, 2,
                                                                   &err);
                                             },
                                             {});
    expect_refused(run_gk_run({"-m", model.string(), "-p", "hi", "-n", "1"}),
                   "key llama.block_count is an array, expected an integer");
}

// A KV cache that cannot fit in the memory is refused before it is allocated. The model
// is stories260K with 8 KV heads of 64 (its q/k/v/o weights resized, zeros): 20 KiB of
// f32 cache per position, 320 GiB for the largest context gk-run takes (2^24).
TEST(GkRunCli, KvCacheLargerThanTheMemoryIsRefused) {
    const fs::path model = rewritten_stories(
        "wide-kv.gguf",
        [](gk_gguf * g) {
            gk_gguf_error err{};
            gk_gguf_set_u32(g, "llama.attention.head_count_kv", 8, &err);
            gk_gguf_set_u32(g, "llama.attention.key_length", 64, &err);
            gk_gguf_set_u32(g, "llama.attention.value_length", 64, &err);
            gk_gguf_set_u32(g, "llama.rope.dimension_count", 64, &err);
        },
        [](tensor_edit & t) {
            const bool qkv = t.name.find("attn_q.") != std::string::npos ||
                             t.name.find("attn_k.") != std::string::npos || t.name.find("attn_v.") != std::string::npos;
            if (qkv) t.ne[1] = 512;
            if (t.name.find("attn_output.") != std::string::npos) t.ne[0] = 512;
            if (qkv || t.name.find("attn_output.") != std::string::npos) t.data.assign(64 * 512 * sizeof(float), 0);
        });
    const double need = 5.0 * 2 * 512 * sizeof(float) * double(1 << 24);
    const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    if (need <= have) GTEST_SKIP() << "this machine has more than " << need / 1073741824.0 << " GiB of memory";
    // The model itself runs.
    const run_result ok = run_gk_run({"-m", model.string(), "-p", "Once", "-n", "2", "--temp", "0"});
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    const run_result r = run_gk_run(
        {"-m", model.string(), "-p", "Once", "-n", "2", "-c", "16777216", "-ctk", "f32", "-ctv", "f32"});
    EXPECT_EQ(r.exit_code, 1);
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 2u) << r.err;  // the warning past the training context, then the error
    EXPECT_NE(lines[0].find("gk-run: warning: the context of 16777216 tokens"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[1].rfind("gk-run: error: the KV cache of a 16777216-token context needs 320.0 GiB (f32/f32) but "
                             "only ",
                             0),
              0u)
        << lines[1];
    EXPECT_NE(lines[1].find("GiB of memory is available; lower -c"), std::string::npos) << lines[1];
}

// ---- the summary --------------------------------------------------------------------------

TEST(GkRunCli, SummaryCountsEveryGeneratedToken) {
    for (int n : {1, 2, 8}) {
        SCOPED_TRACE(n);
        const run_result r = run_gk_run(story(n, {"--ignore-eos"}));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(generated_count(r.err), n) << r.err;
    }
    const run_result quiet = run_gk_run(story(2, {"--no-show-timings"}));
    EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.err, "");
}

// ---- logits that are not finite -------------------------------------------------------------

// A NaN in output_norm.weight makes every logit of every step NaN: the prompt's step fails.
TEST(GkRunCli, NanLogitsOfThePromptStopTheRun) {
    const fs::path model = rewritten_stories("nan-output-norm.gguf", {}, [](tensor_edit & t) {
        if (t.name == "output_norm.weight") fill_f32(t.data, 0, 1, std::numeric_limits<float>::quiet_NaN());
    });
    for (const char * temp : {"0", "0.8"}) {
        SCOPED_TRACE(temp);
        const run_result r = run_gk_run({"-m", model.string(), "-p", "Once", "-n", "4", "--temp", temp});
        EXPECT_EQ(r.exit_code, 1) << r.err;
        const auto lines = r.err_lines();
        ASSERT_EQ(lines.size(), 1u) << r.err;
        EXPECT_EQ(lines[0], "gk-run: error: evaluating the prompt: the logits are not finite (NaN for token 0)");
    }
}

// A NaN in the embedding of " upon" (id 407), the first token stories260K generates
// after "Once": the prompt's logits are fine, those after generated token 1 are not.
TEST(GkRunCli, NanLogitsOfAGeneratedTokenStopTheRun) {
    const run_result clean = run_gk_run({"-m", k_stories.string(), "-p", "Once", "-n", "1", "--temp", "0", "-v"});
    ASSERT_NE(clean.err.find("gk-run: generated tokens: 407\n"), std::string::npos) << clean.err;
    const fs::path   model = rewritten_stories("nan-embedding.gguf", {}, [](tensor_edit & t) {
        if (t.name == "token_embd.weight")
            fill_f32(t.data, 407 * 64, 408 * 64, std::numeric_limits<float>::quiet_NaN());
    });
    const run_result r     = run_gk_run({"-m", model.string(), "-p", "Once", "-n", "4", "--temp", "0"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "Once upon");  // the token was sampled and printed before its evaluation failed
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0], "gk-run: error: evaluating generated token 1: the logits are not finite (NaN for token 0)");
}

// An infinite weight in the output rows of tokens 5 (+inf) and 6 (-inf), the rest of
// those rows zero: one of the two logits is +inf, whatever the sign of the hidden state.
TEST(GkRunCli, InfiniteLogitStopsTheRun) {
    const fs::path   model = rewritten_stories("inf-output.gguf", {}, [](tensor_edit & t) {
        if (t.name != "output.weight") return;
        fill_f32(t.data, 5 * 64, 7 * 64, 0.0f);
        fill_f32(t.data, 5 * 64, 5 * 64 + 1, std::numeric_limits<float>::infinity());
        fill_f32(t.data, 6 * 64, 6 * 64 + 1, -std::numeric_limits<float>::infinity());
    });
    const run_result r     = run_gk_run({"-m", model.string(), "-p", "Once", "-n", "4", "--temp", "0"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_TRUE(lines[0] == "gk-run: error: evaluating the prompt: the logits are not finite (+inf for token 5)" ||
                lines[0] == "gk-run: error: evaluating the prompt: the logits are not finite (+inf for token 6)")
        << lines[0];
}

// ---- found by a fresh user after the parts were merged -------------------------------------

TEST(GkRunCli, DumpLogitsOntoTheModelIsRefused) {
    // Writing the logits over the model file truncated the mapped model (SIGBUS) and lost it.
    const fs::path model = scratch() / "self.gguf", link = scratch() / "self-link.gguf";
    fs::copy_file(k_stories, model, fs::copy_options::overwrite_existing);
    fs::remove(link);
    fs::create_hard_link(model, link);
    const auto size = fs::file_size(model);
    for (const fs::path & dump : {model, link}) {
        expect_refused(run_gk_run({"-m", model.string(), "-n", "2", "--dump-logits", dump.string()}),
                       "is the model file");
        EXPECT_EQ(fs::file_size(model), size);
    }
}

TEST(GkRunCli, StdoutThatCannotBeWrittenIsAnError) {
    // Text that never arrived (a full disk, /dev/full) is a failure, not exit 0.
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
    const fs::path err  = scratch() / "full.err";
    const auto     exit = [&](const std::string & args) {
        const std::string cmd = std::string(GK_RUN_EXE) + " " + args + " > /dev/full 2> '" + err.string() + "'";
        const int         st  = std::system(cmd.c_str());
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    };
    const std::string m = "-m '" + k_stories.string() + "'";
    EXPECT_EQ(exit(m + " -p Once -n 20 --temp 0"), 1);
    EXPECT_NE(gk_run_test::read_all(err).find("gk-run: error: writing standard output failed"), std::string::npos);
    EXPECT_EQ(exit(m + " -p Once --tokenize"), 1);
    EXPECT_EQ(exit("--help"), 1);
}

TEST(GkRunCli, LogitsThatCannotBeWrittenAreAnError) {
    // --dump-logits wrote through stdio and closed without a check: the last buffer's
    // failed flush was lost, a short file was left and the exit was 0 (-n 2 is 4 KiB of
    // logits, less than the buffer).
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
    for (const char * n : {"2", "3"}) {
        const run_result r = run_gk_run(story(0, {"-n", n, "--dump-logits", "/dev/full"}));
        EXPECT_EQ(r.exit_code, 1) << "-n " << n;
        EXPECT_NE(r.err.find("gk-run: error: writing '/dev/full' failed"), std::string::npos) << r.err;
    }
}

TEST(GkRunCli, NumbersAreReadInBase10) {
    // llama.cpp reads numbers with std::stoi: 010 is ten, 0x10 is not a number; CLI11 alone
    // read octal and hexadecimal, and an empty value as 0.
    const run_result ten = run_gk_run(story(10)), octal = run_gk_run(story(4, {"-n", "010"}));
    EXPECT_EQ(octal.exit_code, 0) << octal.err;
    EXPECT_EQ(octal.out, ten.out);
    EXPECT_EQ(run_gk_run(story(4, {"-s", "08", "--temp", "1"})).out,
              run_gk_run(story(4, {"-s", "8", "--temp", "1"})).out);
    expect_refused(run_gk_run(story(4, {"-n", "0x10"})), "option -n takes a whole number in base 10, got '0x10'");
    expect_refused(run_gk_run(story(4, {"-s", "1e3"})), "option -s takes a whole number");
    for (const char * o : {"-n", "-c", "-s", "--temp", "--top-k"}) {
        expect_refused(run_gk_run(story(4, {o, ""})),
                       std::string("option ") + o + " needs a number, got an empty value");
    }
}

TEST(GkRunCli, TinyTemperatureIsAlmostGreedy) {
    // The best logit / 1e-38 overflowed: inf and NaN probabilities drew garbage. The
    // distribution is then all but greedy, so the text is the greedy one.
    const run_result greedy = run_gk_run(story(12));
    for (const char * t : {"1e-38", "1e-45"}) {
        const run_result r = run_gk_run(story(12, {"--temp", t, "-s", "1"}));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, greedy.out) << t;
    }
}

TEST(GkRunCli, PromptAndPromptFileAreNotBothTaken) {
    const fs::path f = scratch() / "both.txt";
    std::ofstream(f) << "Once upon a time\n";
    expect_refused(run_gk_run(story(4, {"-f", f.string()})), "give the prompt with -p or with -f, not both");
    // A system prompt outside a conversation does nothing: said, not silently dropped.
    const run_result r = run_gk_run(story(4, {"-sys", "Be brief."}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gk-run: warning: -sys / -sysf have no effect without -cnv"), std::string::npos) << r.err;
}

TEST(GkRunCli, EmptyPromptWithoutBosIsRefused) {
    expect_refused(run_gk_run({"-m", k_stories.string(), "-p", "", "--no-bos", "-n", "2"}),
                   "the prompt is empty and --no-bos leaves nothing to evaluate");
}

TEST(GkRunCli, EndlessStandardInputIsCapped) {
    // A chat fed from a stream without line ends read it until memory ran out.
    const run_result r =
        run_gk_run({"-m", k_qwen3.string(), "-cnv", "--chat-template", "chatml", "-n", "2"}, "/dev/zero");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("gk-run: error: standard input: an input of more than 64 MiB"), std::string::npos) << r.err;
}
