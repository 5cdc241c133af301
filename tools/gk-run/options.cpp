// options.cpp - see options.h.
#include "options.h"

#include "run/chat.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
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

} // namespace

std::optional<int> parse_options(int argc, char ** argv, run_options & opt) {
    CLI::App app{"gk-run: run a GGUF language model (llama, gemma3, qwen3) on the CPU"};
    app.get_formatter()->column_width(36);
    std::string prompt_file;
    auto & s = opt.sampling;
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
    try {
        std::vector<std::string> args = normalise_args(argc, argv);
        app.parse(args);
    } catch (const CLI::ParseError & e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 1;
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
