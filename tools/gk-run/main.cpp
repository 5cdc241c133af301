// gk-run - run a GGUF language model on the CPU, or with some of its layers on a device.
//
//   gk-run -m MODEL.gguf -p "PROMPT" [-n N] [-t THREADS] [-c CTX] [sampling options]
//   gk-run -m MODEL.gguf -cnv [-sys SYSTEM] [-p FIRST_MESSAGE]   (chat; messages from stdin)
//   gk-run -m MODEL.gguf -i -p "PROMPT" [-r "User:"]                (raw text, input from stdin)
//   gk-run -m MODEL.gguf -p "PROMPT" --tokenize         (token ids, one line)
//
// The prompt is evaluated in micro-batches of at most -ub tokens, then tokens are
// generated one at a time with a KV cache and streamed to stdout. A timing summary goes to stderr at the end.
// Exit status: 0 on success; 1 with one line "gk-run: error: ..." on stderr otherwise
// (an unreadable or malformed model, an unsupported architecture, a prompt longer than
// the context, generation asked to run past a full context, ...).
#include "devices.h"
#include "mpi_ranks.h"
#include "options.h"
#include "report.h"
#include "text_input.h"

#include "run/chat.h"
#include "run/chat_input.h"
#include "run/completion.h"
#include "run/context_check.h"
#include "run/grammar_constraint.h"
#include "run/model.h"
#include "run/model_session.h"
#include "run/sampler.h"

#include "gk/gk-mpi.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace {

using namespace gk_run_tool;
using gk::run::token_id;

constexpr uint64_t k_progress_min_bytes = 4u << 20;  // show a bar for files above 4 MiB

/** Write `text` to standard output as it is (a NUL byte included, which fputs would end at). */
void print(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

int fail(const std::string & msg) {
    std::fflush(stdout);
    std::fprintf(stderr, "gk-run: error: %s%s\n", mpi_rank_prefix().c_str(), msg.c_str());
    return 1;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/** --tokenize: only the tokenizer is loaded, so vocabulary-only files work. */
int tokenize_only(const run_options & opt) {
    gk_gguf_error err{};
    gk_gguf *     g = gk_gguf_open(opt.model.c_str(), &err);
    if (!g) return fail("cannot load model '" + opt.model + "': " + err.message);
    std::string msg;
    auto        tok = gk::run::Tokenizer::load(g, &msg);
    gk_gguf_free(g);
    if (!tok) return fail(opt.model + ": tokenizer: " + msg);
    for (const std::string & w : tok->warnings()) {
        std::fprintf(stderr, "gk-run: warning: %s: %s\n", opt.model.c_str(), w.c_str());
    }
    const auto ids = tok->encode(opt.prompt, !opt.no_bos, opt.parse_special);
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%d", i ? " " : "", ids[i]);
    std::printf("\n");
    return 0;
}

/** -n -2 (llama.cpp's): generate until the context is full, without shifting it. */
constexpr int64_t k_until_full = -2;

/** Why generate() returned, or (input_dropped) why feed() evaluated nothing. */
enum class stop_reason { end_of_generation, n_predict, reverse_prompt, context_full, input_dropped };

/** Generation state shared by the completion and interactive modes. */
class runner {
public:
    /** `continues`: more text follows each reply (the interactive modes), so the last
     *  generated token is evaluated too. */
    runner(const run_options & opt, const gk::run::Model & model, gk::run::Session & session, timings & t,
           bool continues = false)
        : opt_(opt),
          model_(model),
          session_(session),
          sampler_(opt.sampling,
                   gk::run::sampling_context(opt.sampling, model.tokenizer(), session.n_ctx(), opt.ignore_eos)),
          t_(t),
          continues_(continues) {
        if (opt.grammar) grammar_ = std::make_unique<gk::run::GrammarConstraint>(*opt.grammar, model.tokenizer());
    }

    ~runner() { close_dump(nullptr); }

    bool open_dump(std::string * error) {
        if (opt_.dump_logits.empty()) return true;
        dump_ = std::fopen(opt_.dump_logits.c_str(), "wb");
        if (!dump_ && error) *error = "cannot write '" + opt_.dump_logits + "'";
        return dump_ != nullptr;
    }

    /** Flush and close --dump-logits' file; false (message in *error) when the last
     *  writes failed (a full disk). */
    bool close_dump(std::string * error) {
        if (!dump_) return true;
        const bool ok     = std::fflush(dump_) == 0 && !std::ferror(dump_);
        const bool closed = std::fclose(dump_) == 0;
        dump_             = nullptr;
        if (!(ok && closed) && error) *error = "writing '" + opt_.dump_logits + "' failed";
        return ok && closed;
    }

    uint32_t seed() const { return sampler_.seed(); }
    std::string sampler_chain() const { return sampler_.chain(); }

    /** Evaluate `text` (tokenized with BOS when `first`). Text that does not fit shifts the
     *  context, or with --no-context-shift in the interactive modes evaluates nothing and
     *  sets stopped() to context_full. A `typed` input (the user's, in the interactive
     *  modes) that cannot fit - longer than the context less what shifting keeps, or with
     *  --no-context-shift longer than the whole context - is not evaluated: a warning,
     *  and stopped() is input_dropped (llama-cli skips what does not fit; the chat goes
     *  on). */
    bool feed(const std::string & text, bool first, bool parse_special, std::string * error, bool typed = false) {
        const auto & tok = model_.tokenizer();
        auto ids = tok.encode(text, first && !opt_.no_bos, parse_special);
        if (ids.empty()) {
            if (!first) return true;
            // An empty prompt (a model that adds no BOS): start from BOS anyway, or there is
            // nothing to condition on; with --no-bos nothing is left (llama.cpp: "input is empty").
            if (opt_.no_bos) {
                if (error) *error = "the prompt is empty and --no-bos leaves nothing to evaluate";
                return false;
            }
            if (tok.special().bos == gk::run::k_no_token) {
                if (error) *error = "the prompt is empty and the model has no BOS token";
                return false;
            }
            ids.push_back(tok.special().bos);
        }
        const int64_t n_new = static_cast<int64_t>(ids.size());
        stop_               = stop_reason::n_predict;
        if (!first && opt_.context_shift) {
            while (session_.n_past() + n_new > session_.n_ctx() && session_.n_past() > n_keep_ + 1) {
                if (!shift(error)) return false;
            }
        }
        const bool over = session_.n_past() + n_new > session_.n_ctx();
        // Room could not be made (the shifts above have run), or the whole context is too small.
        if (over && typed && (opt_.context_shift || n_new > session_.n_ctx())) {
            std::fflush(stdout);
            std::fprintf(stderr,
                         "\ngk-run: warning: the input has %lld tokens, more than the context holds beside the "
                         "%lld in it (%lld); it was not evaluated\n",
                         static_cast<long long>(n_new), static_cast<long long>(session_.n_past()),
                         static_cast<long long>(session_.n_ctx()));
            stop_ = stop_reason::input_dropped;
            return true;
        }
        if (over && !first && continues_ && !opt_.context_shift) {
            std::fflush(stdout);  // --no-context-shift: the chat ends
            std::fprintf(stderr, "\ngk-run: context full (%lld tokens); stopping\n",
                         static_cast<long long>(session_.n_ctx()));
            stop_ = stop_reason::context_full;
            return true;
        }
        if (over) {
            if (error) {
                *error = "the prompt has " + std::to_string(ids.size()) + " tokens" +
                         (session_.n_past() ? " (after " + std::to_string(session_.n_past()) + " in the context)" : "") +
                         " but the context holds " + std::to_string(session_.n_ctx()) + " (raise -c)";
            }
            return false;
        }
        if (opt_.verbose) {
            std::fprintf(stderr, "gk-run: prompt tokens:");
            for (token_id id : ids) std::fprintf(stderr, " %d", id);
            std::fprintf(stderr, "\n");
        }
        for (token_id id : ids) sampler_.accept(id);
        if (!text.empty()) text_before_ = true;
        if (first) {  // --keep counts tokens of the first prompt, BOS included (llama.cpp's n_keep)
            const bool bos = ids[0] == tok.special().bos;
            n_keep_        = opt_.n_keep < 0 || opt_.n_keep > n_new ? n_new : std::min(n_new, opt_.n_keep + bos);
        }
        const auto t0 = std::chrono::steady_clock::now();
        if (!session_.eval(ids, logits_, error)) {
            if (error) *error = "evaluating the prompt: " + *error;
            return false;
        }
        t_.prompt_ms += ms_since(t0);
        t_.n_prompt += static_cast<int64_t>(ids.size());
        return true;
    }

    /** Sample and stream up to opt.n_predict tokens (all, when -1) after a feed().
     *  Stops at an end-of-generation token (unless --ignore-eos) or when the text ends
     *  with a reverse prompt (-r). A full context shifts (--context-shift) or, with
     *  --no-context-shift, ends generation: quietly with -n -1 or in the interactive modes,
     *  with an error when -n N asked for more. */
    bool generate(std::string * error) {
        const auto &          tok = model_.tokenizer();
        // The generated text continues the prompt: its first piece keeps its space. So it
        // does under a grammar, which matched the piece with its space.
        gk::run::Detokenizer  detok(tok, false, text_before_ || grammar_);
        if (grammar_ && !grammar_->reset(error)) return false;  // each reply is one sentence of the grammar
        reply_.clear();
        stop_ = stop_reason::n_predict;
        // Sampling and evaluation both count as generation time (a context shift's
        // re-evaluation counts as prompt time), and every sampled token as generated (the
        // last of -n N is sampled but not always evaluated), on every return.
        struct generation_count {
            timings &                             t;
            double                                prompt_ms0 = t.prompt_ms;
            std::chrono::steady_clock::time_point t0         = std::chrono::steady_clock::now();
            int64_t                               n_sampled  = 0;
            ~generation_count() {
                t.generate_ms += ms_since(t0) - (t.prompt_ms - prompt_ms0);
                t.n_generated += n_sampled;
            }
        } count{t_};
        for (int64_t n = 0; opt_.n_predict < 0 || n < opt_.n_predict; ++n) {
            if (dump_ && std::fwrite(logits_.data(), sizeof(float), logits_.size(), dump_) != logits_.size()) {
                if (error) *error = "writing '" + opt_.dump_logits + "' failed";
                return false;
            }
            if (grammar_ && !grammar_->apply(logits_, error)) {
                if (error) *error = "grammar: at generated token " + std::to_string(n + 1) + ": " + *error;
                return false;
            }
            const token_id id = sampler_.sample(logits_);
            if (grammar_ && !grammar_->accept(id, error)) return false;
            sampler_.accept(id);
            generated_.push_back(id);
            ++count.n_sampled;
            if (!opt_.ignore_eos && tok.is_eog(id)) {
                stop_ = stop_reason::end_of_generation;
                break;
            }
            const std::string piece = detok.push(id);
            print(piece);
            std::fflush(stdout);
            reply_ += piece;
            const bool grammar_done = grammar_ && grammar_->finished();  // the grammar allows nothing more
            const bool reverse      = gk::run::ends_with_reverse_prompt(reply_, opt_.reverse_prompts);
            const bool last         = grammar_done || reverse || (opt_.n_predict >= 0 && n + 1 == opt_.n_predict);
            if (last) {
                stop_ = grammar_done ? stop_reason::end_of_generation
                        : reverse    ? stop_reason::reverse_prompt
                                     : stop_reason::n_predict;
                if (!continues_) break;  // the last token needs no evaluation unless more text follows
            }
            if (session_.n_past() >= session_.n_ctx() && opt_.context_shift && opt_.n_predict != k_until_full) {
                if (!shift(error)) return false;
            }
            if (session_.n_past() >= session_.n_ctx()) {
                print(detok.finish());
                stop_ = stop_reason::context_full;
                if (opt_.n_predict < 0 || continues_) {
                    std::fflush(stdout);
                    std::fprintf(stderr, "\ngk-run: context full (%lld tokens); stopping\n",
                                 static_cast<long long>(session_.n_ctx()));
                    return true;
                }
                if (error) {
                    *error = "context full after " + std::to_string(n + 1) + " of " +
                             std::to_string(opt_.n_predict) + " tokens (context size " +
                             std::to_string(session_.n_ctx()) + "; raise -c)";
                }
                return false;
            }
            if (!session_.eval(std::span<const token_id>(&id, 1), logits_, error)) {
                if (error) *error = "evaluating generated token " + std::to_string(n + 1) + ": " + *error;
                return false;
            }
            if (last) break;
        }
        print(detok.finish());
        std::fflush(stdout);
        return true;
    }

    /** Why the last generate() returned, and the text it generated. */
    stop_reason         stopped() const { return stop_; }
    const std::string & reply() const { return reply_; }

    /** --verbose: the ids sampled since the last call, on one line of stderr. */
    void report_generated() {
        if (!opt_.verbose) return;
        std::fflush(stdout);
        std::fprintf(stderr, "\ngk-run: generated tokens:");
        for (token_id id : generated_) std::fprintf(stderr, " %d", id);
        std::fprintf(stderr, "\n");
        generated_.clear();
    }

private:
    /** A context shift (Session::context_shift), noted on stderr with -v. */
    bool shift(std::string * error) {
        const int64_t n_past = session_.n_past();
        const auto    t0     = std::chrono::steady_clock::now();
        const int64_t n_drop = session_.context_shift(n_keep_, error);
        if (n_drop == 0) return false;
        t_.prompt_ms += ms_since(t0);
        t_.n_prompt += session_.n_past();
        if (opt_.verbose) {
            std::fflush(stdout);
            std::fprintf(stderr, "\ngk-run: context shift: %lld tokens, kept %lld, discarded %lld\n",
                         (long long) n_past, (long long) n_keep_, (long long) n_drop);
        }
        return true;
    }

    const run_options &     opt_;
    const gk::run::Model &  model_;
    gk::run::Session &      session_;
    gk::run::Sampler        sampler_;
    timings &               t_;
    std::vector<float>      logits_;
    std::vector<token_id>   generated_;
    std::FILE *             dump_ = nullptr;
    bool                    text_before_ = false;  // some text was fed before generation
    bool                    continues_;
    int64_t                 n_keep_ = 0;           // tokens a context shift keeps (from --keep)
    stop_reason             stop_   = stop_reason::n_predict;
    std::string             reply_;
    std::unique_ptr<gk::run::GrammarConstraint> grammar_;  // --grammar / --json-schema
};

int run_completion(const run_options & opt, runner & r) {
    std::string error;
    if (!r.feed(opt.prompt, true, opt.parse_special, &error)) return fail(error);
    if (opt.display_prompt) {
        print(opt.prompt);
        std::fflush(stdout);
    }
    if (!r.generate(&error)) return fail(error);
    std::printf("\n");
    r.report_generated();
    return 0;
}

/** The chat template for -cnv: --chat-template, else --chat-template-file's, else the model's. */
std::optional<gk::run::chat_template> chat_template_for(const run_options & opt, const gk::run::Model & model,
                                                        std::string & error) {
    if (!opt.chat_template_file.empty() && opt.chat_template.empty()) {
        auto t = gk::run::chat_template_detect(opt.chat_template_jinja);
        if (!t) {
            error = "the chat template in '" + opt.chat_template_file + "' matches no chat template gk-run knows " +
                    "(there is no Jinja engine); choose one with --chat-template: " + gk::run::chat_template_names();
        }
        return t;
    }
    return gk::run::choose_chat_template(opt.chat_template, model.gguf(), model.tokenizer(), &error);
}

/** -i, -if and -cnv (--chat): generate, then read the user's input from standard input
 *  and go on, until the input ends. -cnv wraps each input in the chat template; -i
 *  feeds it as raw text between --in-prefix and --in-suffix. */
int run_interactive(const run_options & opt, const gk::run::Model & model, runner & r) {
    std::string                           error;
    std::optional<gk::run::chat_history>  chat;
    if (opt.chat) {
        const auto tmpl = chat_template_for(opt, model, error);
        if (!tmpl) return fail(error);
        if (opt.verbose) std::fprintf(stderr, "gk-run: chat template %s\n", gk::run::chat_template_name(*tmpl));
        if (!opt.system_prompt.empty()) {
            if (gk::run::chat_template_system_role(*tmpl) == gk::run::chat_system_role::none) {
                return fail(std::string("the chat template ") + gk::run::chat_template_name(*tmpl) +
                            " has no system role (-sys)");
            }
        }
        chat.emplace(*tmpl);
        if (!opt.system_prompt.empty()) chat->add_system(opt.system_prompt);
    }
    if (!stdin_is_text(&error)) return fail(error);

    // One input of the user; false at the end of the input (or on an error, in `error`).
    const auto read_input = [&](std::string & text) {
        std::printf("%s", chat ? "\n> " : opt.in_prefix.c_str());
        std::fflush(stdout);
        const gk::run::input_status status =
            gk::run::read_user_input(std::cin, opt.multiline_input, k_max_text_input, text);
        if (status == gk::run::input_status::error) error = "cannot read standard input";
        if (status == gk::run::input_status::too_long) {
            error = "standard input: an input of more than " + std::to_string(k_max_text_input >> 20) +
                    " MiB (a stream without line ends?)";
        }
        return status == gk::run::input_status::ok;
    };
    // A chat message: the input without its last newline, between --in-prefix and --in-suffix.
    const auto user_turn = [&](std::string text, bool first) {
        if (!text.empty() && text.back() == '\n') text.pop_back();
        std::string turn = chat->add_user(opt.in_prefix + text + opt.in_suffix);
        // A template that writes BOS itself (gigachat, yandex): the tokenizer's BOS is that one.
        return first ? gk::run::drop_template_bos(std::move(turn), model.tokenizer(), !opt.no_bos) : turn;
    };

    std::string input;
    if (chat) {
        input = opt.prompt;
        // No -p: the first message comes from the user; one that cannot fit is skipped and
        // the next one is the first.
        for (;;) {
            while (input.empty()) {
                if (!read_input(input)) return error.empty() ? 0 : fail(error);
                if (input == "\n") input.clear();
            }
            if (!r.feed(user_turn(input, true), true, true, &error, opt.prompt.empty())) return fail(error);
            if (r.stopped() != stop_reason::input_dropped) break;
            chat->drop_last_user();
            input.clear();
        }
    } else {
        if (!r.feed(opt.prompt, true, opt.parse_special, &error)) return fail(error);
        if (opt.display_prompt) print(opt.prompt);
    }
    bool generate = !opt.interactive_first || chat;
    for (;;) {
        if (generate) {
            if (!r.generate(&error)) return fail(error);
            if (r.stopped() == stop_reason::context_full) break;  // --no-context-shift
            if (chat) chat->add_assistant(r.reply());
            if (!chat && r.stopped() == stop_reason::end_of_generation && !opt.reverse_prompts.empty()) {
                // As llama-cli: the first reverse prompt is written for the user to answer.
                print(opt.reverse_prompts[0]);
                if (!r.feed(opt.reverse_prompts[0], false, false, &error)) return fail(error);
            }
            r.report_generated();
            if (opt.single_turn) {  // -st: one reply, then exit
                std::printf("\n");
                break;
            }
        }
        if (!read_input(input)) {
            std::printf("\n");
            if (!error.empty()) return fail(error);
            break;
        }
        if (chat) {
            generate = input != "\n";  // an empty line: wait for a message
            if (generate && !r.feed(user_turn(input, false), false, true, &error, true)) return fail(error);
            if (r.stopped() == stop_reason::context_full) break;  // --no-context-shift
            if (generate && r.stopped() == stop_reason::input_dropped) {
                chat->drop_last_user();  // the model never saw it: the chat goes on without it
                generate = false;
            }
        } else {
            // An empty line hands control back without input (llama-cli).
            generate = true;
            if (input == "\n") continue;
            print(opt.in_suffix);
            if (!r.feed(opt.in_prefix, false, true, &error) || !r.feed(input, false, opt.parse_special, &error, true)) {
                return fail(error);
            }
            if (r.stopped() == stop_reason::input_dropped) {
                generate = false;
                continue;
            }
            if (!r.feed(opt.in_suffix, false, true, &error)) return fail(error);
            if (r.stopped() == stop_reason::context_full) break;  // --no-context-shift
        }
        std::fflush(stdout);
    }
    return 0;
}

/** rc, or 1 with a message when what was written to stdout did not all arrive (a full
 *  disk, /dev/full, a closed pipe). */
int checked_stdout(int rc) {
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::fprintf(stderr, "gk-run: error: writing standard output failed\n");
        return 1;
    }
    return rc;
}

int run(int argc, char ** argv) {
    run_options opt;
    if (auto rc = parse_options(argc, argv, opt)) return *rc;
    if (opt.list_devices) {
        print_devices();
        return 0;
    }
    if (opt.mpi) {
        if (const std::string e = mpi_start(opt); !e.empty()) return fail(e);
    }
    if (opt.tokenize) return tokenize_only(opt);
    std::error_code same_ec;
    if (!opt.dump_logits.empty() && std::filesystem::equivalent(opt.dump_logits, opt.model, same_ec)) {
        return fail("--dump-logits '" + opt.dump_logits + "' is the model file");
    }

    gk_backend_dev_t device = nullptr;
    std::string      device_error;
    if (!choose_device(opt, &device, &device_error)) return fail(device_error);

    std::error_code ec;
    const uint64_t  file_bytes = std::filesystem::file_size(opt.model, ec);
    progress_bar    bar("gk-run: loading");
    const auto      t_load = std::chrono::steady_clock::now();
    std::string     error;
    auto            model = gk::run::Model::load(
        opt.model,
        [&](uint64_t done, uint64_t total) {
            if (!ec && file_bytes > k_progress_min_bytes) bar.update(done, total);
        },
        &error);
    bar.finish();
    if (!mpi_all_ok(model != nullptr)) return fail(model ? "another MPI rank could not load its model" : error);
    if (opt.mpi) {
        if (const std::string e = mpi_same_model(model->hp()); !e.empty()) return fail(e);
    }
    for (const std::string & w : model->warnings()) {
        std::fprintf(stderr, "gk-run: warning: %s: %s\n", opt.model.c_str(), w.c_str());
    }
    const auto & hp = model->hp();
    const int64_t n_offloaded = device ? model->offload(device, gpu_layers(opt), &error) : 0;
    if (n_offloaded < 0) return fail(error);

    gk::run::session_params sp;
    sp.device    = device;
    sp.kv_offload      = !opt.no_kv_offload;
    sp.n_ctx     = gk::run::resolve_n_ctx(hp, opt.n_ctx, opt.n_ctx_given);
    sp.n_ubatch  = opt.n_ubatch;
    sp.n_threads       = opt.n_threads;
    sp.n_threads_batch = opt.n_threads_batch;
    for (const auto & [name, type, option] : {std::tuple{opt.cache_type_k, &sp.type_k, "--cache-type-k"},
                                              std::tuple{opt.cache_type_v, &sp.type_v, "--cache-type-v"}}) {
        if (!gk_type_from_name(name.c_str(), type)) {
            return fail(std::string(option) + ": unknown KV cache type '" + name + "' (use " +
                        gk::run::kv_cache_type_names() + ")");
        }
    }
    if (const std::string w = gk::run::context_warning(hp, sp.n_ctx); !w.empty()) {
        std::fprintf(stderr, "gk-run: warning: %s\n", w.c_str());
    }
    error = gk::run::check_context(hp, sp.n_ctx, sp.type_k, sp.type_v, gk::run::available_memory_bytes());
    if (!error.empty()) return fail(error);
    if (opt.mpi) {
        sp.pipeline_rank  = gk_mpi_rank();
        sp.pipeline_ranks = gk_mpi_size();
    }
    auto session = gk::run::Session::create(*model, sp, &error);
    if (!mpi_all_ok(session != nullptr)) {
        return fail(session ? "another MPI rank could not start its part of the model" : error);
    }
    if (!session->cache_note().empty()) std::fprintf(stderr, "gk-run: warning: %s\n", session->cache_note().c_str());
    timings t;
    t.load_ms = ms_since(t_load);

    for (const gk::run::logit_bias & b : opt.sampling.logit_biases) {
        if (b.id >= hp.n_vocab) {
            return fail("--logit-bias: token " + std::to_string(b.id) + " is not in the vocabulary (" +
                        std::to_string(hp.n_vocab) + " tokens)");
        }
    }
    const bool interactive = opt.chat || opt.interactive;
    runner     r(opt, *model, *session, t, interactive);
    if (!r.open_dump(&error)) return fail(error);
    if (opt.verbose) {
        std::fprintf(stderr,
                     "gk-run: %s: %lld layers, n_embd %lld, %lld heads (%lld kv, size %lld), n_ff %lld, vocab %lld "
                     "(%s), weights %.1f MiB\n",
                     hp.arch_name.c_str(), (long long) hp.n_layer, (long long) hp.n_embd, (long long) hp.n_head,
                     (long long) hp.n_head_kv, (long long) hp.head_dim_k, (long long) hp.n_ff, (long long) hp.n_vocab,
                     model->tokenizer().model_name().c_str(), model->weight_bytes() / (1024.0 * 1024.0));
        std::fprintf(stderr, "gk-run: context %lld, KV cache %s/%s %.1f MiB, %d threads, seed %u\n",
                     (long long) session->n_ctx(), gk_type_name(sp.type_k), gk_type_name(sp.type_v),
                     session->cache_bytes() / (1024.0 * 1024.0), sp.n_threads, r.seed());
        if (sp.n_threads_batch != sp.n_threads) {
            std::fprintf(stderr, "gk-run: %d threads for the prompt\n", sp.n_threads_batch);
        }
        std::fprintf(stderr, "gk-run: sampler chain: %s\n", r.sampler_chain().c_str());
        if (device) {
            const int64_t n_gpu = gpu_layers(opt);
            std::fprintf(stderr, "gk-run: %s (%s): %lld of %lld layers%s, %.1f MiB of weights, %.1f MiB of KV cache\n",
                         gk_backend_dev_name(device), gk_backend_dev_description(device), (long long)n_offloaded,
                         (long long)hp.n_layer, n_gpu < 0 || n_gpu > hp.n_layer ? " and the output layer" : "",
                         model->device_bytes() / (1024.0 * 1024.0), session->cache_device_bytes() / (1024.0 * 1024.0));
        }
    }
    int rc = interactive ? run_interactive(opt, *model, r) : run_completion(opt, r);
    if (!r.close_dump(&error) && rc == 0) rc = fail(error);
    if (opt.verbose) {
        for (const std::string & op : session->fallback_ops()) {
            std::fprintf(stderr, "gk-run: %s runs on the CPU: %s does not support it\n", op.c_str(),
                         gk_backend_dev_name(device));
        }
        std::fprintf(stderr, "gk-run: compute buffer %.1f KiB\n", session->compute_bytes() / 1024.0);
    }
    if (rc == 0 && opt.show_timings) print_timings(t);
    return rc;
}

} // namespace

int main(int argc, char ** argv) { return mpi_finish(checked_stdout(run(argc, argv))); }
