// test-gk-run-chat: gk-run's interactive modes driven through standard input on the
// bundled models - chat turns fed with the template's markup, reverse prompts that hand
// control back, a context that shifts instead of ending the chat (and
// --no-context-shift, which stops), the model's template detected or reported - and
// Session::context_shift giving exactly the logits of a fresh run on the kept tokens.
#include "gk_run_exec.h"

#include "run/model.h"
#include "run/model_session.h"

#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::expect_one_line_error;
using gk_run_test::run_gk_run;
using gk_run_test::run_result;

namespace {

const fs::path k_models  = fs::path(GK_TEST_DATA) / "models";
const fs::path k_stories = k_models / "stories260K.gguf";
const fs::path k_qwen3   = k_models / "qwen3-random.gguf";

const fs::path & scratch() {
    static const fs::path d = gk_run_test::scratch_dir("test-gk-run-chat");
    return d;
}

/** A file in the scratch folder holding `text` (standard input for a run). */
std::string input_file(const std::string & name, const std::string & text) {
    const fs::path p = scratch() / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

/** The lines of stderr that start with `prefix`, with the prefix removed. */
std::vector<std::string> lines_after(const run_result & r, const std::string & prefix) {
    std::vector<std::string> v;
    for (const std::string & l : r.err_lines()) {
        const size_t at = l.find(prefix);
        if (at != std::string::npos) v.push_back(l.substr(at + prefix.size()));
    }
    return v;
}

/** The ids gk-run --tokenize gives `text` (no BOS, control-token text parsed), as the
 *  " 1 2 3" list that -v prints after "prompt tokens:". */
std::string token_list(const fs::path & model, const std::string & text) {
    const run_result r = run_gk_run({"-m", model.string(), "--tokenize", "--no-bos", "--parse-special", "-p", text});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string ids = r.out.substr(0, r.out.find('\n'));
    return ids.empty() ? ids : " " + ids;
}

size_t count(const std::string & text, const std::string & part) {
    size_t n = 0;
    for (size_t at = 0; (at = text.find(part, at)) != std::string::npos; at += part.size()) ++n;
    return n;
}

struct closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};
using gguf_ptr = std::unique_ptr<gk_gguf, closer>;

/** stories260K with `edit` applied to its metadata. */
fs::path edited_stories(const std::string & name, const std::function<void(gk_gguf *)> & edit) {
    gk_gguf_error err{};
    gguf_ptr      src(gk_gguf_open(k_stories.c_str(), &err));
    EXPECT_TRUE(src) << err.message;
    gguf_ptr dst(gk_gguf_create());
    for (int64_t i = 0; i < gk_gguf_kv_count(src.get()); ++i) {
        EXPECT_EQ(gk_gguf_set_value(dst.get(), gk_gguf_kv_key(src.get(), i), gk_gguf_kv_value(src.get(), i), &err),
                  GK_GGUF_OK);
    }
    edit(dst.get());
    for (int64_t i = 0; i < gk_gguf_tensor_count(src.get()); ++i) {
        EXPECT_EQ(gk_gguf_add_tensor(dst.get(), gk_gguf_tensor_name(src.get(), i), gk_gguf_tensor_type(src.get(), i),
                                     gk_gguf_tensor_n_dims(src.get(), i), gk_gguf_tensor_ne(src.get(), i),
                                     gk_gguf_tensor_data(src.get(), i), gk_gguf_tensor_size(src.get(), i), &err),
                  GK_GGUF_OK);
    }
    const fs::path out = scratch() / name;
    EXPECT_EQ(gk_gguf_write(dst.get(), out.c_str(), &err), GK_GGUF_OK) << err.message;
    return out;
}

/** stories260K with tokenizer.chat_template set to `jinja`. */
fs::path stories_with_template(const std::string & name, const std::string & jinja) {
    return edited_stories(name, [&](gk_gguf * g) {
        gk_gguf_error err{};
        EXPECT_EQ(gk_gguf_set_str(g, "tokenizer.chat_template", jinja.data(), jinja.size(), &err), GK_GGUF_OK);
    });
}

std::vector<std::string> chat_args(const fs::path & model, std::vector<std::string> more) {
    std::vector<std::string> a = {"-m", model.string(), "-cnv", "--temp", "0", "-v"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

} // namespace

// ---- chat turns -----------------------------------------------------------------------

TEST(GkRunChat, TurnsAreFedInTheTemplatesMarkup) {
    // -p is the first message, then two from stdin; each turn evaluates only its new text:
    // the end of the previous reply, the user's turn, the opening of the assistant's.
    const run_result r = run_gk_run(
        chat_args(k_qwen3, {"--chat-template", "chatml", "-sys", "Be brief.", "-p", "Hi", "-n", "4"}),
        input_file("turns.txt", "Hello\nAnd then?\n"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto fed = lines_after(r, "gk-run: prompt tokens:");
    ASSERT_EQ(fed.size(), 3u) << r.err;
    const std::string bos = " 1";  // qwen3-random's BOS, put in front of the first turn
    EXPECT_EQ(fed[0], bos + token_list(k_qwen3,
                                       "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi"
                                       "<|im_end|>\n<|im_start|>assistant\n"));
    EXPECT_EQ(fed[1], token_list(k_qwen3, "<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"));
    EXPECT_EQ(fed[2],
              token_list(k_qwen3, "<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n"));
    // After each reply the prompt marker hands control to the user.
    EXPECT_EQ(count(r.out, "\n> "), 3u) << r.out;
    EXPECT_EQ(lines_after(r, "gk-run: generated tokens:").size(), 3u) << r.err;  // -n 4 per turn
}

TEST(GkRunChat, TemplateThatWritesBosGetsOne) {
    // gigachat's markup starts with <s>: that is the BOS, the tokenizer adds no second one.
    const std::string text = "<s>user<|role_sep|>Hi<|message_sep|>available functions<|role_sep|>[]<|message_sep|>"
                             "assistant<|role_sep|>";
    const run_result  r    = run_gk_run(chat_args(k_stories, {"--chat-template", "gigachat", "-p", "Hi", "-n", "2"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto fed = lines_after(r, "gk-run: prompt tokens:");
    ASSERT_EQ(fed.size(), 1u) << r.err;
    EXPECT_EQ(fed[0], token_list(k_stories, text));
    EXPECT_EQ(fed[0].rfind(" 1 ", 0), 0u) << fed[0];
    EXPECT_NE(fed[0].rfind(" 1 1 ", 0), 0u) << fed[0];
}

TEST(GkRunChat, MultilineInputIsOneMessage) {
    // -mli: lines accumulate until one ends with '\'; without it a trailing '\' continues.
    const std::string expect = token_list(k_qwen3,
                                          "<|im_start|>user\nfirst\nsecond<|im_end|>\n<|im_start|>assistant\n");
    for (const auto & [flag, text] : std::vector<std::pair<std::string, std::string>>{
             {"-mli", "first\nsecond\\\n"}, {"--in-prefix", "first\\\nsecond\n"}}) {
        std::vector<std::string> more = {"--chat-template", "chatml", "-n", "2", flag};
        if (flag == "--in-prefix") more.push_back("");
        const run_result r = run_gk_run(chat_args(k_qwen3, more), input_file("multi.txt", text));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto fed = lines_after(r, "gk-run: prompt tokens:");
        ASSERT_EQ(fed.size(), 1u) << r.err;
        EXPECT_EQ(fed[0], " 1" + expect) << flag;
    }
}

TEST(GkRunChat, TemplateFromTheModel) {
    const fs::path   llama2 = stories_with_template("llama2-tmpl.gguf",
                                                    "{{ '[INST] ' + message['content'] + ' [/INST]' }}");
    const run_result r      = run_gk_run(chat_args(llama2, {"-p", "Hi", "-n", "2"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gk-run: chat template llama2\n"), std::string::npos) << r.err;
}

TEST(GkRunChat, UnknownTemplateIsReported) {
    const fs::path odd = stories_with_template("odd-tmpl.gguf",
                                               "{% for m in messages %}{{ m['content'] }}{% endfor %}");
    expect_one_line_error(run_gk_run({"-m", odd.string(), "-cnv", "-p", "Hi"}), "matches no chat template");
    expect_one_line_error(run_gk_run({"-m", odd.string(), "-cnv", "-p", "Hi"}),
                          "--chat-template: phi4, smolvlm, chatml, ");
    // Forcing one works.
    const run_result r = run_gk_run(chat_args(odd, {"--chat-template", "zephyr", "-p", "Hi", "-n", "2"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    expect_one_line_error(run_gk_run({"-m", odd.string(), "-cnv", "--chat-template", "alpaca", "-p", "Hi"}),
                          "unknown chat template 'alpaca' (--chat-template takes: ");
}

TEST(GkRunChat, TemplateFromAFile) {
    const std::string gemma = input_file("gemma.jinja", "{{ '<start_of_turn>' + role + '\\n' }}");
    const run_result  r     = run_gk_run(chat_args(k_stories, {"--chat-template-file", gemma, "-p", "Hi", "-n", "2"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gk-run: chat template gemma\n"), std::string::npos) << r.err;
    const std::string odd = input_file("odd.jinja", "{{ messages }}");
    expect_one_line_error(run_gk_run({"-m", k_stories.string(), "-cnv", "--chat-template-file", odd, "-p", "Hi"}),
                          "odd.jinja' matches no chat template");
    expect_one_line_error(run_gk_run({"-m", k_stories.string(), "-cnv", "--chat-template-file", "/nonexistent/t.jinja"}),
                          "cannot read chat template file '/nonexistent/t.jinja'");
}

TEST(GkRunChat, SystemPromptNeedsASystemRole) {
    expect_one_line_error(
        run_gk_run({"-m", k_stories.string(), "-cnv", "--chat-template", "yandex", "-sys", "Be brief.", "-p", "Hi"}),
        "the chat template yandex has no system role");
}

// ---- interactive text and reverse prompts ---------------------------------------------

TEST(GkRunChat, ReversePromptReturnsControl) {
    // stories260K greedy: "Once upon a time, there was a little girl named Lily. ..."
    const std::vector<std::string> base = {"-m", k_stories.string(), "-p", "Once upon a time", "--temp", "0", "-v"};
    auto                           full = base;
    full.insert(full.end(), {"-n", "30"});
    const run_result plain = run_gk_run(full);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const size_t girl = plain.out.find("girl");
    ASSERT_NE(girl, std::string::npos) << plain.out;

    // Completion: generation stops where the text ends with the reverse prompt.
    auto completion = full;
    completion.insert(completion.end(), {"-r", "girl"});
    const run_result c = run_gk_run(completion);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(c.out, plain.out.substr(0, girl + 4) + "\n");

    // -i: control returns at "girl" (8 tokens, before -n 12); the input is fed between
    // --in-prefix and --in-suffix (both shown) and generation goes on, -n 12 per turn.
    auto interactive = base;
    interactive.insert(interactive.end(), {"-i", "-n", "12", "-r", "nothing-like-this", "-r", "girl", "--in-prefix",
                                           "[", "--in-suffix", "]"});
    const run_result i = run_gk_run(interactive, input_file("rp.txt", " and her dog\n"));
    ASSERT_EQ(i.exit_code, 0) << i.err;
    EXPECT_EQ(i.out.rfind(plain.out.substr(0, girl + 4) + "[]", 0), 0u) << i.out;
    const auto fed = lines_after(i, "gk-run: prompt tokens:");
    ASSERT_EQ(fed.size(), 4u) << i.err;  // the prompt, then the prefix, the input, the suffix
    const auto gen = lines_after(i, "gk-run: generated tokens:");
    ASSERT_EQ(gen.size(), 2u) << i.err;
    EXPECT_EQ(count(gen[0], " "), 8u) << gen[0];
    EXPECT_EQ(count(gen[1], " "), 12u) << gen[1];
}

TEST(GkRunChat, EndOfGenerationWritesTheFirstReversePrompt) {
    // As llama-cli: in -i, an end-of-generation token hands control back after writing
    // (and feeding) the first reverse prompt. Here EOS is "," (432), which stories260K
    // writes first after "Once upon a time".
    const fs::path eos_comma = edited_stories("eos-comma.gguf", [](gk_gguf * g) {
        gk_gguf_error err{};
        EXPECT_EQ(gk_gguf_set_u32(g, "tokenizer.ggml.eos_token_id", 432, &err), GK_GGUF_OK);
    });
    const run_result r = run_gk_run({"-m", eos_comma.string(), "-p", "Once upon a time", "--temp", "0", "-n", "3", "-v",
                                     "-i", "-r", "User:", "-r", "Other:"},
                                    input_file("eog.txt", " Hi\n"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("Once upon a timeUser:", 0), 0u) << r.out;
    const auto fed = lines_after(r, "gk-run: prompt tokens:");
    ASSERT_EQ(fed.size(), 3u) << r.err;  // the prompt, "User:", the input
    EXPECT_EQ(fed[1], token_list(eos_comma, "User:"));
    const auto gen = lines_after(r, "gk-run: generated tokens:");
    ASSERT_EQ(gen.size(), 2u) << r.err;
    EXPECT_EQ(gen[0], " 432");
}

TEST(GkRunChat, InteractiveFirstWaitsForInput) {
    // -i generates after the prompt and after each input; -if waits for the first input.
    for (const std::string mode : {"-i", "-if"}) {
        const run_result r = run_gk_run(
            {"-m", k_stories.string(), "-p", "Once upon a time", "--temp", "0", "-n", "4", "-v", mode},
            input_file("first.txt", " there was\n"));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(lines_after(r, "gk-run: prompt tokens:").size(), 2u) << mode << r.err;
        EXPECT_EQ(lines_after(r, "gk-run: generated tokens:").size(), mode == "-i" ? 2u : 1u) << mode << r.err;
    }
}

// ---- the context ----------------------------------------------------------------------

TEST(GkRunChat, ContextShiftContinuesTheChat) {
    // Four turns of -n 12 in a context of 160 (qwen3-random spells the markup in ~40
    // tokens): it shifts, keeping the first prompt (--keep -1), and goes on.
    const run_result r = run_gk_run(chat_args(k_qwen3, {"--chat-template", "chatml", "-c", "160", "--keep", "-1", "-n",
                                                        "12", "--ignore-eos", "-p", "Hi"}),
                                    input_file("shift.txt", "one\ntwo\nthree\n"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto shifts = lines_after(r, "gk-run: context shift: ");
    EXPECT_GE(shifts.size(), 1u) << r.err;
    for (const std::string & s : shifts) EXPECT_NE(s.find("kept 42,"), std::string::npos) << s;  // BOS + first turn
    EXPECT_EQ(lines_after(r, "gk-run: generated tokens:").size(), 4u) << r.err;
}

TEST(GkRunChat, AMessageLongerThanTheContextIsSkippedAndTheChatGoesOn) {
    // A message of ~300 tokens in a context of 160 cannot fit beside what the context
    // keeps. That ended the whole chat with an error (or, with --no-context-shift, with
    // "context full" though the context was not); now it is not evaluated, a warning says
    // so, and the next message gets its reply. As the first message too: the next one is
    // then the first.
    std::string words;
    for (int i = 0; i < 150; ++i) words += "word ";
    for (const char * shift : {"--context-shift", "--no-context-shift"}) {
        for (const bool first : {false, true}) {
            SCOPED_TRACE(std::string(shift) + (first ? ", first message" : ", second message"));
            std::vector<std::string> extra{"--chat-template", "chatml", "-c", "160", "-n", "6", "--ignore-eos", shift};
            if (!first) extra.insert(extra.end(), {"-p", "Hi"});
            const run_result r = run_gk_run(chat_args(k_qwen3, extra), input_file("too-long.txt", words + "\nbye\n"));
            ASSERT_EQ(r.exit_code, 0) << r.err;
            EXPECT_NE(r.err.find("gk-run: warning: the input has "), std::string::npos) << r.err;
            EXPECT_NE(r.err.find("; it was not evaluated"), std::string::npos) << r.err;
            EXPECT_EQ(r.err.find("context full"), std::string::npos) << r.err;
            // the replies to "Hi" (when given) and to "bye"
            EXPECT_EQ(lines_after(r, "gk-run: generated tokens:").size(), first ? 1u : 2u) << r.err;
        }
    }
}

TEST(GkRunChat, ContextShiftInCompletion) {
    // -n 100 in a context of 16: llama.cpp's default shifts and generates all 100.
    const run_result r = run_gk_run({"-m", k_stories.string(), "-p", "Once upon a time", "--temp", "0", "-n", "100",
                                     "-c", "16", "--keep", "2", "--ignore-eos", "-v"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto gen = lines_after(r, "gk-run: generated tokens:");
    ASSERT_EQ(gen.size(), 1u) << r.err;
    EXPECT_EQ(count(gen[0], " "), 100u);
    const auto shifts = lines_after(r, "gk-run: context shift: ");
    ASSERT_FALSE(shifts.empty()) << r.err;
    EXPECT_EQ(shifts[0], "16 tokens, kept 3, discarded 6") << r.err;  // --keep 2 + BOS; (16 - 3) / 2
}

TEST(GkRunChat, NoContextShiftStopsTheChat) {
    const run_result r = run_gk_run(chat_args(k_qwen3, {"--chat-template", "chatml", "-c", "160", "--no-context-shift",
                                                        "-n", "12", "--ignore-eos", "-p", "Hi"}),
                                    input_file("noshift.txt", "one\ntwo\nthree\n"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("context full (160 tokens); stopping"), std::string::npos) << r.err;
    EXPECT_TRUE(lines_after(r, "gk-run: context shift").empty()) << r.err;
    EXPECT_LT(lines_after(r, "gk-run: generated tokens:").size(), 4u) << r.err;
}

TEST(GkRunChat, KeepMustBeAtLeastMinusOne) {
    expect_one_line_error(run_gk_run({"-m", k_stories.string(), "--keep", "-2"}), "--keep");
}

// ---- Session::context_shift -----------------------------------------------------------

TEST(ContextShift, GivesTheLogitsOfAFreshRunOnTheKeptTokens) {
    std::string error;
    auto        model = gk::run::Model::load(k_stories.string(), {}, &error);
    ASSERT_TRUE(model) << error;
    gk::run::session_params sp;
    sp.n_ctx     = 16;
    auto shifted = gk::run::Session::create(*model, sp, &error);
    auto fresh   = gk::run::Session::create(*model, sp, &error);
    ASSERT_TRUE(shifted && fresh) << error;

    std::vector<gk::run::token_id> ids;
    for (int i = 0; i < 16; ++i) ids.push_back(1 + (i * 37) % 500);
    std::vector<float> logits, expect;
    ASSERT_TRUE(shifted->eval(ids, logits, &error)) << error;
    EXPECT_EQ(shifted->n_past(), 16);

    ASSERT_EQ(shifted->context_shift(3, &error), 6) << error;  // (16 - 3) / 2
    std::vector<gk::run::token_id> kept(ids.begin(), ids.begin() + 3);
    kept.insert(kept.end(), ids.begin() + 9, ids.end());
    ASSERT_EQ(shifted->n_past(), 10);
    EXPECT_EQ(std::vector<gk::run::token_id>(shifted->tokens().begin(), shifted->tokens().end()), kept);

    const gk::run::token_id next = 42;
    ASSERT_TRUE(shifted->eval(std::span(&next, 1), logits, &error)) << error;
    kept.push_back(next);
    ASSERT_TRUE(fresh->eval(kept, expect, &error)) << error;
    ASSERT_EQ(logits.size(), expect.size());
    EXPECT_TRUE(logits == expect) << "the logits after the shift differ from a fresh run's";
}

TEST(ContextShift, NothingToDiscardIsAnError) {
    std::string error;
    auto        model = gk::run::Model::load(k_stories.string(), {}, &error);
    ASSERT_TRUE(model) << error;
    gk::run::session_params sp;
    sp.n_ctx     = 8;
    auto session = gk::run::Session::create(*model, sp, &error);
    ASSERT_TRUE(session) << error;
    std::vector<gk::run::token_id> ids = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<float>             logits;
    ASSERT_TRUE(session->eval(ids, logits, &error)) << error;
    EXPECT_EQ(session->context_shift(7, &error), 0);
    EXPECT_NE(error.find("--keep 7 leaves nothing to discard"), std::string::npos) << error;
    EXPECT_EQ(session->n_past(), 8);  // untouched
}
