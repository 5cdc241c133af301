// gk-run - run a GGUF language model on the CPU.
//
//   gk-run -m MODEL.gguf -p "PROMPT" [-n N] [-t THREADS] [-c CTX] [sampling options]
//   gk-run -m MODEL.gguf --chat [-p FIRST_MESSAGE]     (then one message per stdin line)
//   gk-run -m MODEL.gguf -p "PROMPT" --tokenize         (token ids, one line)
//
// The prompt is evaluated in micro-batches of at most -ub tokens, then tokens are
// generated one at a time with a KV cache and streamed to stdout. A timing summary goes to stderr at the end.
// Exit status: 0 on success; 1 with one line "gk-run: error: ..." on stderr otherwise
// (an unreadable or malformed model, an unsupported architecture, a prompt longer than
// the context, generation asked to run past a full context, ...).
#include "options.h"
#include "report.h"

#include "run/chat.h"
#include "run/grammar_constraint.h"
#include "run/model.h"
#include "run/model_session.h"
#include "run/sampler.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace gk_run_tool;
using gk::run::token_id;

constexpr uint64_t k_progress_min_bytes = 4u << 20;  // show a bar for files above 4 MiB

int fail(const std::string & msg) {
    std::fflush(stdout);
    std::fprintf(stderr, "gk-run: error: %s\n", msg.c_str());
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
    const auto ids = tok->encode(opt.prompt, !opt.no_bos, opt.parse_special);
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%d", i ? " " : "", ids[i]);
    std::printf("\n");
    return 0;
}

/** Generation state shared by the completion and chat modes. */
class runner {
public:
    runner(const run_options & opt, const gk::run::Model & model, gk::run::Session & session, timings & t)
        : opt_(opt), model_(model), session_(session), sampler_(opt.sampling), t_(t) {
        if (opt.grammar) grammar_ = std::make_unique<gk::run::GrammarConstraint>(*opt.grammar, model.tokenizer());
    }

    ~runner() {
        if (dump_) std::fclose(dump_);
    }

    bool open_dump(std::string * error) {
        if (opt_.dump_logits.empty()) return true;
        dump_ = std::fopen(opt_.dump_logits.c_str(), "wb");
        if (!dump_ && error) *error = "cannot write '" + opt_.dump_logits + "'";
        return dump_ != nullptr;
    }

    uint32_t seed() const { return sampler_.seed(); }

    /** Evaluate `text` (tokenized with BOS when `first`). */
    bool feed(const std::string & text, bool first, bool parse_special, std::string * error) {
        const auto & tok = model_.tokenizer();
        auto ids = tok.encode(text, first && !opt_.no_bos, parse_special);
        if (ids.empty()) {
            if (!first) return true;
            // An empty prompt without BOS: start from BOS anyway, or there is nothing to condition on.
            if (tok.special().bos == gk::run::k_no_token) {
                if (error) *error = "the prompt is empty and the model has no BOS token";
                return false;
            }
            ids.push_back(tok.special().bos);
        }
        if (session_.n_past() + static_cast<int64_t>(ids.size()) > session_.n_ctx()) {
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
        const auto t0 = std::chrono::steady_clock::now();
        if (!session_.eval(ids, logits_, error)) return false;
        t_.prompt_ms += ms_since(t0);
        t_.n_prompt += static_cast<int64_t>(ids.size());
        return true;
    }

    /** Sample and stream up to opt.n_predict tokens (all, when -1) after a feed().
     *  Stops at an end-of-generation token (unless --ignore-eos) and, with -n -1, at a
     *  full context; with -n N a full context before N tokens is an error. */
    bool generate(std::string * error) {
        const auto &          tok = model_.tokenizer();
        // The generated text continues the prompt: its first piece keeps its space. So it
        // does under a grammar, which matched the piece with its space.
        gk::run::Detokenizer  detok(tok, false, text_before_ || grammar_);
        if (grammar_ && !grammar_->reset(error)) return false;  // each reply is one sentence of the grammar
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
            if (!opt_.ignore_eos && tok.is_eog(id)) break;
            std::fputs(detok.push(id).c_str(), stdout);
            std::fflush(stdout);
            if (opt_.n_predict >= 0 && n + 1 == opt_.n_predict) break;  // the last token needs no evaluation
            if (grammar_ && grammar_->finished()) break;                // the grammar allows nothing more
            if (session_.n_past() >= session_.n_ctx()) {
                std::fputs(detok.finish().c_str(), stdout);
                if (opt_.n_predict < 0) {
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
            const auto t0 = std::chrono::steady_clock::now();
            if (!session_.eval(std::span<const token_id>(&id, 1), logits_, error)) return false;
            t_.generate_ms += ms_since(t0);
            ++t_.n_generated;
        }
        std::fputs(detok.finish().c_str(), stdout);
        std::fflush(stdout);
        return true;
    }

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
    const run_options &     opt_;
    const gk::run::Model &  model_;
    gk::run::Session &      session_;
    gk::run::Sampler        sampler_;
    timings &               t_;
    std::vector<float>      logits_;
    std::vector<token_id>   generated_;
    std::FILE *             dump_ = nullptr;
    bool                    text_before_ = false;  // some text was fed before generation
    std::unique_ptr<gk::run::GrammarConstraint> grammar_;  // --grammar / --json-schema
};

int run_completion(const run_options & opt, runner & r) {
    std::string error;
    if (!r.feed(opt.prompt, true, opt.parse_special, &error)) return fail(error);
    if (opt.display_prompt) {
        std::fputs(opt.prompt.c_str(), stdout);
        std::fflush(stdout);
    }
    if (!r.generate(&error)) return fail(error);
    std::printf("\n");
    r.report_generated();
    return 0;
}

int run_chat(const run_options & opt, const gk::run::Model & model, runner & r) {
    std::optional<gk::run::chat_template> tmpl;
    if (!opt.chat_template.empty()) {
        tmpl = gk::run::chat_template_from_name(opt.chat_template);
        if (!tmpl) return fail("unknown chat template '" + opt.chat_template + "' (known: llama3, gemma, chatml)");
    } else {
        tmpl = gk::run::detect_chat_template(model.gguf(), model.tokenizer());
        if (!tmpl) return fail("the model names no known chat format; choose one with --chat-template llama3|gemma|chatml");
    }
    if (opt.verbose) std::fprintf(stderr, "gk-run: chat template %s\n", gk::run::chat_template_name(*tmpl));
    const bool  interactive = isatty(STDIN_FILENO);
    const auto  read_message = [&](std::string & line) {
        for (;;) {
            if (interactive) {
                std::printf("\n> ");
                std::fflush(stdout);
            }
            if (!std::getline(std::cin, line)) return false;
            if (!line.empty()) return true;
        }
    };
    std::string message = opt.prompt, error;
    if (message.empty() && !read_message(message)) return 0;
    for (bool first = true;; first = false) {
        const std::string turn = gk::run::chat_user_turn(*tmpl, first ? opt.system_prompt : "", message, !first);
        if (!r.feed(turn, first, true, &error)) return fail(error);
        if (!r.generate(&error)) return fail(error);
        std::printf("\n");
        r.report_generated();
        if (!read_message(message)) break;
    }
    return 0;
}

} // namespace

int main(int argc, char ** argv) {
    run_options opt;
    if (auto rc = parse_options(argc, argv, opt)) return *rc;
    if (opt.tokenize) return tokenize_only(opt);

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
    if (!model) return fail(error);
    const auto & hp = model->hp();

    gk::run::session_params sp;
    sp.n_ctx     = opt.n_ctx == 0 ? hp.n_ctx_train : opt.n_ctx_given ? opt.n_ctx : std::min(opt.n_ctx, hp.n_ctx_train);
    sp.n_ubatch  = opt.n_ubatch;
    sp.n_threads = opt.n_threads > 0 ? opt.n_threads : std::max(1u, std::thread::hardware_concurrency());
    if (!gk_type_from_name(opt.cache_type_k.c_str(), &sp.type_k) ||
        !gk_type_from_name(opt.cache_type_v.c_str(), &sp.type_v)) {
        return fail("unknown KV cache type '" + opt.cache_type_k + "' / '" + opt.cache_type_v + "' (use f32 or f16)");
    }
    auto session = gk::run::Session::create(*model, sp, &error);
    if (!session) return fail(error);
    timings t;
    t.load_ms = ms_since(t_load);

    runner r(opt, *model, *session, t);
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
    }
    const int rc = opt.chat ? run_chat(opt, *model, r) : run_completion(opt, r);
    if (opt.verbose) {
        std::fprintf(stderr, "gk-run: compute buffer %.1f KiB\n", session->compute_bytes() / 1024.0);
    }
    if (rc == 0) print_timings(t);
    return rc;
}
