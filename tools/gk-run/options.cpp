// options.cpp - see options.h.
#include "options.h"

#include "run/chat.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gk_run_tool {

namespace {

bool read_file(const std::string & path, std::string & out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::ostringstream ss;
    ss << f.rdbuf();
    out = ss.str();
    return !f.bad();
}

/** llama.cpp's multi-letter short options, which CLI11 does not accept, as long ones. */
std::vector<std::string> normalise_args(int argc, char ** argv) {
    static const std::pair<const char *, const char *> k_aliases[] = {
        {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-cnv", "--conversation"}, {"-sys", "--system-prompt"},
        {"-ub", "--ubatch-size"}, {"-if", "--interactive-first"}, {"-mli", "--multiline-input"}};
    std::vector<std::string> args;
    for (int i = argc - 1; i >= 1; --i) {  // CLI11 takes the arguments in reverse order
        std::string a = argv[i];
        for (const auto & [from, to] : k_aliases) {
            if (a == from) a = to;
        }
        args.push_back(std::move(a));
    }
    return args;
}

// ---- sampling options beyond the basic ones (llama.cpp's names, defaults and meanings) ----

/** The raw text of the sampling options that need parsing after CLI11. */
struct sampling_args {
    std::vector<std::string> logit_bias;
    std::vector<std::string> dry_breakers;
    std::string              samplers;
    std::string              sampling_seq;
    CLI::Option *            samplers_opt     = nullptr;
    CLI::Option *            sampling_seq_opt = nullptr;
};

void add_sampling_options(CLI::App & app, gk::run::sampler_params & s, sampling_args & a) {
    app.add_option("--presence-penalty", s.presence_penalty,
                   "subtracted from the logit of a token in the last --repeat-last-n; 0 = off")
        ->capture_default_str();
    app.add_option("--frequency-penalty", s.frequency_penalty,
                   "subtracted per occurrence in the last --repeat-last-n; 0 = off")
        ->capture_default_str();
    app.add_option("--typical,--typical-p", s.typical_p, "locally typical sampling, parameter p; 1.0 = off")
        ->capture_default_str();
    app.add_option("--top-n-sigma,--top-nsigma", s.top_n_sigma,
                   "keep logits within N standard deviations of the best; <= 0 = off")
        ->capture_default_str();
    app.add_option("--dynatemp-range", s.dynatemp_range,
                   "dynamic temperature: from temp - range to temp + range by the entropy; 0 = off")
        ->capture_default_str();
    app.add_option("--dynatemp-exp", s.dynatemp_exponent, "dynamic temperature exponent")->capture_default_str();
    app.add_option("--min-keep", s.min_keep, "top-p, min-p, typical and XTC keep at least N tokens; 0 = no minimum")
        ->capture_default_str();
    app.add_option("--xtc-probability", s.xtc_probability, "XTC: chance of removing the top tokens; 0 = off")
        ->capture_default_str();
    app.add_option("--xtc-threshold", s.xtc_threshold, "XTC: least probability of a removed token; > 0.5 = off")
        ->capture_default_str();
    app.add_option("--mirostat", s.mirostat,
                   "Mirostat: 0 = off, 1 = Mirostat, 2 = Mirostat 2.0 (replaces the other samplers but temperature)")
        ->capture_default_str();
    app.add_option("--mirostat-lr", s.mirostat_eta, "Mirostat learning rate, eta")->capture_default_str();
    app.add_option("--mirostat-ent", s.mirostat_tau, "Mirostat target entropy (surprise), tau")->capture_default_str();
    app.add_option("--dry-multiplier", s.dry_multiplier, "DRY repetition penalty multiplier; 0 = off")
        ->capture_default_str();
    app.add_option("--dry-base", s.dry_base, "DRY: the penalty grows as base^(length - allowed length)")
        ->capture_default_str();
    app.add_option("--dry-allowed-length", s.dry_allowed_length, "DRY: longest repeat left unpenalised")
        ->capture_default_str();
    app.add_option("--dry-penalty-last-n", s.dry_penalty_last_n,
                   "DRY: tokens looked back over; 0 = off, -1 = the context")
        ->capture_default_str();
    app.add_option("--dry-sequence-breaker", a.dry_breakers,
                   "DRY: a repeat never spans this text (repeatable; "
                   "replaces the defaults \\n : \" *; 'none': no breakers)")
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("-l,--logit-bias", a.logit_bias,
                   "TOKEN_ID(+/-)BIAS: add BIAS to the token's logit, e.g. 15043+1 or 15043-inf (repeatable)")
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    a.samplers_opt     = app.add_option("--samplers", a.samplers,
                                        "the samplers in order, separated by ';' (default: "
                                            "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature)");
    a.sampling_seq_opt = app.add_option("--sampling-seq,--sampler-seq", a.sampling_seq,
                                        "the samplers in order as letters (default: edskypmxt)");
}

/** Parse and check what add_sampling_options read. Returns the error ("" when none). */
std::string finish_sampling_options(const CLI::App & app, gk::run::sampler_params & s, const sampling_args & a) {
    const auto finite     = [](float x) { return std::isfinite(x); };
    const auto in_0_1     = [](float x) { return x >= 0.0f && x <= 1.0f; };  // false for NaN
    const auto at_least_0 = [&](float x) { return finite(x) && x >= 0.0f; };
    if (!finite(s.presence_penalty)) return "--presence-penalty must be a finite number";
    if (!finite(s.frequency_penalty)) return "--frequency-penalty must be a finite number";
    if (!in_0_1(s.typical_p)) return "--typical must be in [0, 1]";
    if (!finite(s.top_n_sigma)) return "--top-n-sigma must be a finite number (<= 0 = off)";
    if (!in_0_1(s.xtc_probability)) return "--xtc-probability must be in [0, 1]";
    if (!in_0_1(s.xtc_threshold)) return "--xtc-threshold must be in [0, 1]";
    if (!at_least_0(s.dynatemp_range)) return "--dynatemp-range must be a finite number >= 0";
    if (!at_least_0(s.dynatemp_exponent)) return "--dynatemp-exp must be a finite number >= 0";
    if (s.min_keep < 0) return "--min-keep must be >= 0";
    if (s.mirostat < 0 || s.mirostat > 2) return "--mirostat must be 0, 1 or 2";
    if (!at_least_0(s.mirostat_eta)) return "--mirostat-lr must be a finite number >= 0";
    if (!at_least_0(s.mirostat_tau)) return "--mirostat-ent must be a finite number >= 0";
    if (!at_least_0(s.dry_multiplier)) return "--dry-multiplier must be a finite number >= 0";
    if (!at_least_0(s.dry_base)) return "--dry-base must be a finite number >= 0 (below 1 DRY is off)";
    if (s.dry_allowed_length < 0) return "--dry-allowed-length must be >= 0";
    if (s.dry_penalty_last_n < -1) return "--dry-penalty-last-n must be >= -1 (-1 = the context)";

    if (!a.dry_breakers.empty()) {
        s.dry_sequence_breakers.clear();
        for (const std::string & b : a.dry_breakers) {
            if (b == "none") {
                s.dry_sequence_breakers.clear();
            } else if (b.empty()) {
                return "--dry-sequence-breaker must not be empty (use 'none' for no breakers)";
            } else {
                s.dry_sequence_breakers.push_back(b);
            }
        }
    }

    for (const std::string & text : a.logit_bias) {
        // TOKEN_ID, then + or -, then the bias: a number or inf ("-inf": never this token).
        const std::string bad = "--logit-bias '" + text +
                                "': expected TOKEN_ID+BIAS or TOKEN_ID-BIAS (e.g. 15043+1, 15043-inf)";
        size_t digits = 0;
        while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
        if (digits == 0 || digits > 9 || digits + 1 >= text.size() || (text[digits] != '+' && text[digits] != '-')) {
            return bad;
        }
        const std::string num = text.substr(digits + 1);
        if (!std::isdigit(static_cast<unsigned char>(num[0])) && num[0] != '.' && num != "inf") return bad;
        char *      end  = nullptr;
        const float bias = std::strtof(num.c_str(), &end);
        if (end != num.c_str() + num.size() || std::isnan(bias)) return bad;
        if (text[digits] == '+' && std::isinf(bias)) return "--logit-bias '" + text + "': +inf is not a bias";
        s.logit_biases.push_back(
            {static_cast<gk::run::token_id>(std::stol(text.substr(0, digits))), text[digits] == '-' ? -bias : bias});
    }

    // --samplers and --sampling-seq both set the order: the one given last counts.
    const CLI::Option * order_opt = nullptr;
    for (const CLI::Option * o : app.parse_order()) {
        if (o == a.samplers_opt || o == a.sampling_seq_opt) order_opt = o;
    }
    const std::string not_here = "is llama.cpp's but gk-run does not have it";
    if (order_opt == a.samplers_opt) {
        s.order.clear();
        for (size_t at = 0; !a.samplers.empty() && at <= a.samplers.size();) {
            const size_t      semi = std::min(a.samplers.find(';', at), a.samplers.size());
            const std::string name = a.samplers.substr(at, semi - at);
            at                     = semi + 1;
            if (const auto st = gk::run::sampler_stage_from_name(name)) {
                s.order.push_back(*st);
            } else if (name == "infill" || name == "adaptive_p" || name == "adaptive-p") {
                return "--samplers: the sampler '" + name + "' " + not_here;
            } else {
                return "--samplers: unknown sampler '" + name +
                       "' (known: penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, temperature)";
            }
        }
    } else if (order_opt == a.sampling_seq_opt) {
        s.order.clear();
        for (char c : a.sampling_seq) {
            if (const auto st = gk::run::sampler_stage_from_char(c)) {
                s.order.push_back(*st);
            } else if (c == 'i' || c == 'a') {
                return std::string("--sampling-seq: the letter '") + c + "' (" + (c == 'i' ? "infill" : "adaptive_p") +
                       ") " + not_here;
            } else {
                return std::string("--sampling-seq: unknown letter '") + c + "' (known: e d s k y p m x t)";
            }
        }
    }
    return "";
}
}  // namespace

std::optional<int> parse_options(int argc, char ** argv, run_options & opt) {
    CLI::App app{"gk-run: run a GGUF language model (llama, gemma3, qwen3) on the CPU"};
    app.get_formatter()->column_width(36);
    std::string prompt_file;
    auto &      s = opt.sampling;
    app.add_option("-m,--model", opt.model, "GGUF model file")->required();
    app.add_option("-p,--prompt", opt.prompt, "prompt text (default: empty, BOS only)");
    app.add_option("-f,--file", prompt_file, "read the prompt from a file (one trailing newline dropped)");
    app.add_option("-n,--n-predict", opt.n_predict, "tokens to generate; -1 = until end of text or full context")
        ->capture_default_str();
    app.add_option("-t,--threads", opt.n_threads, "threads (default: all hardware threads)");
    auto * ctx_opt = app.add_option("-c,--ctx-size", opt.n_ctx, "context size in tokens; 0 = the model's")
                         ->capture_default_str();
    app.add_option("--ubatch-size", opt.n_ubatch, "(-ub) most prompt tokens evaluated at once (micro-batch)")
        ->capture_default_str();
    app.add_option("--temp", s.temp, "temperature; <= 0 is greedy")->capture_default_str();
    app.add_option("--top-k", s.top_k, "top-k sampling; 0 = off")->capture_default_str();
    app.add_option("--top-p", s.top_p, "top-p sampling; 1.0 = off")->capture_default_str();
    app.add_option("--min-p", s.min_p, "min-p sampling; 0.0 = off")->capture_default_str();
    app.add_option("--repeat-penalty", s.repeat_penalty, "penalty for repeated tokens; 1.0 = off")
        ->capture_default_str();
    app.add_option("--repeat-last-n", s.repeat_last_n, "tokens the repeat penalty looks back over")
        ->capture_default_str();
    app.add_option("-s,--seed", s.seed, "random seed; 4294967295 = random")->capture_default_str();
    app.add_option("--cache-type-k", opt.cache_type_k,
                   "(-ctk) KV cache type of K: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1")
        ->capture_default_str();
    app.add_option("--cache-type-v", opt.cache_type_v,
                   "(-ctv) KV cache type of V: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1")
        ->capture_default_str();
    app.add_flag("--chat,--conversation", opt.chat,
                 "(-cnv) chat in the model's template: the prompt (if any) is the first user message, then "
                 "one message per input from standard input");
    app.add_option("--system-prompt", opt.system_prompt, "(-sys) chat: system message");
    app.add_option("--chat-template", opt.chat_template, "chat: the template by name (default: the model's): " +
                                                             gk::run::chat_template_names());
    app.add_option("--chat-template-file", opt.chat_template_file,
                   "chat: a Jinja chat template file, used instead of the model's (matched to a template above)");
    app.add_flag("-i,--interactive", opt.interactive, "hand control to the user after each reply (raw text)");
    app.add_flag("--interactive-first", opt.interactive_first, "(-if) interactive, and wait for input first");
    app.add_flag("--multiline-input", opt.multiline_input,
                 "(-mli) input continues over lines until one ends with \\ or /");
    app.add_option("--in-prefix", opt.in_prefix, "text put before each user input");
    app.add_option("--in-suffix", opt.in_suffix, "text put after each user input");
    app.add_option("-r,--reverse-prompt", opt.reverse_prompts,
                   "stop generating when the text ends with this, and hand control to the user (repeatable)")
        ->take_all()
        ->expected(1)
        ->allow_extra_args(false);
    app.add_option("--keep", opt.n_keep, "prompt tokens kept when the context shifts; -1 = all")->capture_default_str();
    app.add_flag("--context-shift,!--no-context-shift", opt.context_shift,
                 "when the context is full, drop the older half of what follows --keep and go on (default), "
                 "or stop");
    app.add_option("--dump-logits", opt.dump_logits, "write the logits of every step to FILE (f32 rows)");
    app.add_flag("--tokenize", opt.tokenize, "print the prompt's token ids and exit (vocab-only files work)");
    app.add_flag("--no-bos", opt.no_bos, "do not add the BOS token");
    app.add_flag("--parse-special", opt.parse_special, "tokenize control-token text (\"<|im_start|>\") as tokens");
    app.add_flag("--ignore-eos", opt.ignore_eos, "keep generating past end-of-generation tokens");
    bool no_display = false;
    app.add_flag("--no-display-prompt", no_display, "do not echo the prompt");
    app.add_flag("-v,--verbose", opt.verbose, "print model, memory and sampling details to stderr");
    sampling_args sampling_raw;
    add_sampling_options(app, s, sampling_raw);
    try {
        std::vector<std::string> args = normalise_args(argc, argv);
        app.parse(args);
    } catch (const CLI::ParseError & e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 1;
    }
    if (const std::string e = finish_sampling_options(app, s, sampling_raw); !e.empty()) {
        std::fprintf(stderr, "gk-run: error: %s\n", e.c_str());
        return 1;
    }
    opt.display_prompt = !no_display;
    opt.n_ctx_given    = ctx_opt->count() > 0;
    if (!prompt_file.empty()) {
        if (!read_file(prompt_file, opt.prompt)) {
            std::fprintf(stderr, "gk-run: error: cannot read prompt file '%s'\n", prompt_file.c_str());
            return 1;
        }
        if (!opt.prompt.empty() && opt.prompt.back() == '\n') opt.prompt.pop_back();
    }
    if (opt.n_keep < -1) {
        std::fprintf(stderr, "gk-run: error: --keep must be >= -1 (got %lld)\n", static_cast<long long>(opt.n_keep));
        return 1;
    }
    if (opt.interactive_first) opt.interactive = true;
    if (!opt.chat_template_file.empty() && !read_file(opt.chat_template_file, opt.chat_template_jinja)) {
        std::fprintf(stderr, "gk-run: error: cannot read chat template file '%s'\n", opt.chat_template_file.c_str());
        return 1;
    }
    if (opt.n_threads < 0 || opt.n_ctx < 0 || opt.n_predict < -1 || opt.n_ubatch < 1) {
        std::fprintf(stderr, "gk-run: error: -t, -c must be >= 0, -n >= -1 and -ub >= 1\n");
        return 1;
    }
    return std::nullopt;
}

} // namespace gk_run_tool
