// options.cpp - see options.h.
#include "options.h"

#include "run/json_schema.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
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
        {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-cnv", "--chat"}, {"-sys", "--system-prompt"},
        {"-ub", "--ubatch-size"}, {"-jf", "--json-schema-file"}};
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

/** Constrained output: the text of --grammar, --grammar-file, -j or -jf (at most one). */
struct grammar_args {
    std::string grammar, grammar_file, json_schema, json_schema_file;

    void add_to(CLI::App & app) {
        app.add_option("--grammar", grammar, "constrain the output to this GBNF grammar (llama.cpp's format)");
        app.add_option("--grammar-file", grammar_file, "constrain the output to the GBNF grammar in FILE")
            ->type_name("FILE");
        app.add_option("-j,--json-schema", json_schema, "constrain the output to JSON valid for this JSON Schema");
        app.add_option("--json-schema-file", json_schema_file, "(-jf) the same, with the schema read from FILE")
            ->type_name("FILE");
    }

    /** Parse the one given into opt.grammar. False with the error printed. */
    bool resolve(run_options & opt) const {
        const int n_given = !grammar.empty() + !grammar_file.empty() + !json_schema.empty() + !json_schema_file.empty();
        if (n_given == 0) return true;
        const auto error = [](const std::string & msg) {
            std::fprintf(stderr, "gk-run: error: %s\n", msg.c_str());
            return false;
        };
        if (n_given > 1) return error("give only one of --grammar, --grammar-file, --json-schema and --json-schema-file");
        std::string text = !grammar.empty() ? grammar : json_schema, msg;
        std::string what = !grammar.empty() ? "--grammar" : "--json-schema";
        for (const std::string * file : {&grammar_file, &json_schema_file}) {
            if (file->empty()) continue;
            what = (file == &grammar_file ? "--grammar-file " : "--json-schema-file ") + *file;
            std::error_code ec;
            if (std::filesystem::is_directory(*file, ec)) return error("cannot read " + what + ": it is a directory");
            if (!read_file(*file, text)) return error("cannot read " + what);
        }
        if (!json_schema.empty() || !json_schema_file.empty()) {
            auto gbnf = gk::run::json_schema_to_grammar(text, &msg);
            if (!gbnf) return error(what + ": " + msg);
            text = *gbnf;
        }
        opt.grammar = gk::run::Grammar::parse(text, &msg);
        if (!opt.grammar) return error(what + ": " + msg);
        return true;
    }
};

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
    app.add_option("--cache-type-k", opt.cache_type_k, "(-ctk) KV cache type of K: f32 or f16")->capture_default_str();
    app.add_option("--cache-type-v", opt.cache_type_v, "(-ctv) KV cache type of V: f32 or f16")->capture_default_str();
    app.add_flag("--chat", opt.chat, "(-cnv) chat: the prompt (if any) is the first user message, then one "
                                          "message per line of standard input");
    app.add_option("--system-prompt", opt.system_prompt, "(-sys) chat: system message");
    app.add_option("--chat-template", opt.chat_template, "chat: llama3, gemma or chatml (default: from the model)");
    app.add_option("--dump-logits", opt.dump_logits, "write the logits of every step to FILE (f32 rows)");
    app.add_flag("--tokenize", opt.tokenize, "print the prompt's token ids and exit (vocab-only files work)");
    app.add_flag("--no-bos", opt.no_bos, "do not add the BOS token");
    app.add_flag("--parse-special", opt.parse_special, "tokenize control-token text (\"<|im_start|>\") as tokens");
    app.add_flag("--ignore-eos", opt.ignore_eos, "keep generating past end-of-generation tokens");
    bool no_display = false;
    app.add_flag("--no-display-prompt", no_display, "do not echo the prompt");
    app.add_flag("-v,--verbose", opt.verbose, "print model, memory and sampling details to stderr");
    grammar_args grammar;
    grammar.add_to(app);
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
    if (!grammar.resolve(opt)) return 1;
    if (opt.n_threads < 0 || opt.n_ctx < 0 || opt.n_predict < -1 || opt.n_ubatch < 1) {
        std::fprintf(stderr, "gk-run: error: -t, -c must be >= 0, -n >= -1 and -ub >= 1\n");
        return 1;
    }
    return std::nullopt;
}

} // namespace gk_run_tool
