// options.cpp - see options.h.
#include "options.h"

#include "escapes.h"
#include "llama_options.h"
#include "text_input.h"

#include "run/chat.h"
#include "run/json_schema.h"
#include "run/model.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace gk_run_tool {

namespace {

/** The arguments CLI11 cannot misread for option `o` as spelled `spelled`: a long name
 *  of the option (the one spelled, when it is one of the option's own: --no-display-prompt)
 *  with the value attached; an empty value, and the value of a short-only option (every
 *  gk-run option has a long name), as the next argument. */
void cli11_form(const CLI::Option & o, std::string_view spelled, bool spelled_is_own, const std::string * value,
                std::vector<std::string> & out) {
    const auto & lnames = o.get_lnames();
    const bool   own    = spelled_is_own && spelled.rfind("--", 0) == 0;
    if (!own && lnames.empty()) {
        out.emplace_back(spelled);
        if (value) out.push_back(*value);
        return;
    }
    const std::string name = own ? std::string(spelled) : "--" + lnames.front();
    if (value && value->empty()) {  // CLI11 reads "--name=" as a name still missing its value
        out.push_back(name);
        out.emplace_back();
        return;
    }
    out.push_back(value ? name + "=" + *value : name);
}

/** The registered option one of `row`'s spellings names, or nullptr. */
const CLI::Option * registered(const CLI::App & app, const llama_option & row) {
    for (std::string_view n : llama_option_names(row)) {
        if (const CLI::Option * o = app.get_option_no_throw(std::string(n))) return o;
    }
    return nullptr;
}

/** A number as llama.cpp reads it (std::stoi, std::stof): an integer in base 10 whatever
 *  its leading zeros ("010" is 10; CLI11 alone would read octal, and "0x10" as 16), and
 *  never an empty value. Rewrites `value` for CLI11; false with a message otherwise. */
bool numeric_value(const CLI::Option & o, const std::string & name, std::string & value, std::string & error) {
    const std::string type = o.get_type_name();
    if (type != "INT" && type != "UINT" && type != "FLOAT") return true;
    if (value.empty()) {
        error = "option " + name + " needs a number, got an empty value";
        return false;
    }
    if (type == "FLOAT") return true;
    const size_t sign = value[0] == '-' || value[0] == '+' ? 1 : 0;
    const bool   digits =
        value.size() > sign && std::all_of(value.begin() + static_cast<std::ptrdiff_t>(sign), value.end(),
                                           [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
        error = "option " + name + " takes a whole number in base 10, got '" + value + "'";
        return false;
    }
    const size_t first = std::min(value.find_first_not_of('0', sign), value.size() - 1);
    value              = value.substr(0, sign) + value.substr(first);
    return true;
}

/** argv as llama.cpp reads it, rewritten for CLI11 (see options.h); false with a
 *  message on an argument that is not an option gk-run takes. */
bool normalise_args(const CLI::App & app, int argc, char ** argv, std::vector<std::string> & out, std::string & error) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.size() < 2 || arg[0] != '-' || arg == "--") {
            error = "unexpected argument '" + arg + "' (gk-run takes only options; the prompt goes after -p)";
            return false;
        }
        std::string name      = arg, value;
        bool        has_value = false;
        if (arg.rfind("--", 0) == 0) {
            const size_t eq = arg.find('=');
            if (eq != std::string::npos) {
                name      = arg.substr(0, eq);
                value     = arg.substr(eq + 1);
                has_value = true;
            }
            std::replace(name.begin() + 2, name.end(), '_', '-');  // llama.cpp reads --n_predict as --n-predict
        }
        const CLI::Option *  o   = app.get_option_no_throw(name);
        const bool           own = o != nullptr;
        const llama_option * row = o ? nullptr : find_llama_option(name);
        if (!o && row) o = registered(app, *row);
        if (!o && !row) {
            error = "unknown option " + name + " (gk-run --help lists the options)";
            return false;
        }
        if (!o && row->use != llama_option_use::no_op) {
            error = llama_option_refusal(*row, name);
            return false;
        }
        const bool takes_value = o ? o->get_expected_max() > 0 : row->value;
        if (takes_value && !has_value) {
            // -fa alone is older llama.cpp's flag spelling of -fa on.
            const bool bare_fa = !o && name == "-fa" &&
                                 (i + 1 == argc || (argv[i + 1][0] == '-' && !llama_option_accepts(*row, argv[i + 1])));
            if (bare_fa) {
                continue;
            }
            if (i + 1 == argc) {
                error = "option " + name + " needs a value";
                return false;
            }
            value     = argv[++i];
            has_value = true;
        }
        if (o && has_value && !numeric_value(*o, name, value, error)) return false;
        if (!o) {  // a no-op: nothing to tell CLI11, when its value is one it accepts
            if (row->value ? !llama_option_accepts(*row, value) : has_value) {
                error = llama_option_refusal(*row, name);
                return false;
            }
            continue;
        }
        cli11_form(*o, name, own, has_value ? &value : nullptr, args);
    }
    out.assign(args.rbegin(), args.rend());  // CLI11 takes the arguments in reverse order
    return true;
}

/** CLI11's message on one line. */
std::string one_line(std::string msg) {
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    while (!msg.empty() && msg.back() == ' ') msg.pop_back();
    return msg;
}

/** The ranges llama.cpp documents for each value (or gk-run's, stricter where a value
 *  would make no sense): the first violation, or "". */
/** --device and -ngl as llama.cpp reads them: a comma list of names (or "none"); a
 *  count (a negative one: auto or all), "auto" or "all". "" or the error. */
std::string read_device_options(const std::string & device_list, const std::string & gpu_layers, run_options & opt) {
    if (!device_list.empty()) {
        for (size_t at = 0; at <= device_list.size();) {
            const size_t comma = std::min(device_list.find(',', at), device_list.size());
            opt.devices.push_back(device_list.substr(at, comma - at));
            at = comma + 1;
        }
        for (const std::string & d : opt.devices) {
            if (d.empty()) return "--device: an empty device name in '" + device_list + "'";
            if (d == "none" && opt.devices.size() > 1) return "--device: none cannot be listed with other devices";
        }
    }
    if (gpu_layers.empty()) return "";
    if (gpu_layers == "auto" || gpu_layers == "all") {
        opt.n_gpu_layers = -1;
        return "";
    }
    char *          end = nullptr;
    const long long n   = std::strtoll(gpu_layers.c_str(), &end, 10);
    if (end == gpu_layers.c_str() || *end != '\0') {
        return "-ngl takes a number of layers, auto or all, got '" + gpu_layers + "'";
    }
    opt.n_gpu_layers = n < 0 ? -1 : n;  // llama.cpp: -1 auto, below all
    return "";
}

// The longest --mpi-start-timeout: a day (a watchdog's wait must fit the clock's range).
constexpr int k_most_start_seconds = 86400;

std::string check_values(const run_options & opt, int64_t seed) {
    const auto & s = opt.sampling;
    if (opt.n_predict < -2) {
        return "-n must be >= -2 (-1 = until the end of the text, -2 = until the context is full), got " +
               std::to_string(opt.n_predict);
    }
    if (opt.n_ctx < 0) return "-c must be >= 0 (0 = the model's training context), got " + std::to_string(opt.n_ctx);
    if (opt.n_batch < 1) return "-b must be >= 1, got " + std::to_string(opt.n_batch);
    if (opt.n_ubatch < 1) return "-ub must be >= 1, got " + std::to_string(opt.n_ubatch);
    if (opt.n_threads < -1) {
        return "-t must be >= 1 (or -1 / 0 for every hardware thread), got " + std::to_string(opt.n_threads);
    }
    if (opt.n_threads_batch < -1) {
        return "-tb must be >= 1 (or -1 / 0 for the -t count), got " + std::to_string(opt.n_threads_batch);
    }
    if (seed < -1 || seed > 0xFFFFFFFFll) return "-s must be -1 (random) or 0..4294967295, got " + std::to_string(seed);
    if (!std::isfinite(s.temp)) return "--temp must be a finite number (<= 0 is greedy)";
    if (s.top_k < 0) return "--top-k must be >= 0 (0 = off), got " + std::to_string(s.top_k);
    if (!(s.top_p >= 0.0f && s.top_p <= 1.0f)) return "--top-p must be between 0 and 1 (1 = off)";
    if (!(s.min_p >= 0.0f && s.min_p <= 1.0f)) return "--min-p must be between 0 and 1 (0 = off)";
    if (!(std::isfinite(s.repeat_penalty) && s.repeat_penalty > 0.0f)) {
        return "--repeat-penalty must be a finite number > 0 (1 = off)";
    }
    if (!(opt.mpi_start_timeout > 0.0 && opt.mpi_start_timeout <= k_most_start_seconds)) {
        return "--mpi-start-timeout must be a number of seconds > 0 and <= " + std::to_string(k_most_start_seconds);
    }
    if (s.repeat_last_n < -1) {
        return "--repeat-last-n must be >= -1 (0 = off, -1 = the context size), got " + std::to_string(s.repeat_last_n);
    }
    return "";
}

/** -1 / 0 mean every hardware thread (llama.cpp's -1); more than the hardware has is
 *  capped at it with a warning: more threads than cores only wait on each other. */
int resolve_threads(int n, int fallback, const char * name) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (n <= 0) return fallback;
    if (n > hw) {
        std::fprintf(stderr, "gk-run: warning: %s %d is more than the %d hardware threads; using %d\n", name, n, hw,
                     hw);
        return hw;
    }
    return n;
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
/** Constrained output: the text of --grammar, --grammar-file, -j or -jf (at most one). */
struct grammar_args {
    std::string   grammar, grammar_file, json_schema, json_schema_file;
    CLI::Option * grammar_opt          = nullptr;  // given is count() > 0: "" is given, and refused
    CLI::Option * grammar_file_opt     = nullptr;
    CLI::Option * json_schema_opt      = nullptr;
    CLI::Option * json_schema_file_opt = nullptr;

    void add_to(CLI::App & app) {
        grammar_opt      = app.add_option("--grammar", grammar,
                                          "constrain the output to this GBNF grammar (llama.cpp's format)");
        grammar_file_opt = app.add_option("--grammar-file", grammar_file,
                                          "constrain the output to the GBNF grammar in FILE")
                               ->type_name("FILE");
        json_schema_opt      = app.add_option("-j,--json-schema", json_schema,
                                              "constrain the output to JSON valid for this JSON Schema");
        json_schema_file_opt = app.add_option("--json-schema-file", json_schema_file,
                                              "(-jf) the same, with the schema read from FILE")
                                   ->type_name("FILE");
    }

    /** Parse the one given into opt.grammar. Returns the error ("" when none). An empty
     *  grammar or schema (given as "" or in an empty file) is refused, not ignored. */
    std::string resolve(run_options & opt) const {
        const bool has_grammar = grammar_opt->count() > 0, has_grammar_file = grammar_file_opt->count() > 0;
        const bool has_schema = json_schema_opt->count() > 0, has_schema_file = json_schema_file_opt->count() > 0;
        const int  n_given = has_grammar + has_grammar_file + has_schema + has_schema_file;
        if (n_given == 0) return "";
        if (n_given > 1) return "give only one of --grammar, --grammar-file, --json-schema and --json-schema-file";
        std::string text = has_grammar ? grammar : json_schema, msg;
        std::string what = has_grammar ? "--grammar" : "--json-schema";
        for (const std::string * file : {&grammar_file, &json_schema_file}) {
            if (file == &grammar_file ? !has_grammar_file : !has_schema_file) continue;
            const char * option = file == &grammar_file ? "--grammar-file" : "--json-schema-file";
            what                = std::string(option) + " " + *file;
            if (!read_text_input(*file, option, text, &msg)) return msg;
        }
        if (has_schema || has_schema_file) {
            auto gbnf = gk::run::json_schema_to_grammar(text, &msg);
            if (!gbnf) return what + ": " + msg;
            text = *gbnf;
        }
        opt.grammar = gk::run::Grammar::parse(text, &msg);
        if (!opt.grammar) return what + ": " + msg;
        return "";
    }
};

} // namespace

std::optional<int> parse_options(int argc, char ** argv, run_options & opt) {
    CLI::App app{std::string("gk-run: run a GGUF language model (") + gk::run::supported_architectures() +
                     ") on the CPU or a device",
                 "gk-run"};
    app.set_help_flag("-h,--help", "print this help and exit (also --usage)");
    app.get_formatter()->column_width(36);
    app.footer(
        "llama.cpp's other options are taken by their llama.cpp spellings (-ub, -ctk, -cnv, ...), accepted "
        "as no-ops where that is true of gk-run (-fa on, -kvo), or refused by name: see docs/gk-run.md.");
    std::string prompt_file, system_file, device_list, gpu_layers;
    int64_t     seed = -1;
    auto &      s    = opt.sampling;
    auto * model_opt = app.add_option("-m,--model", opt.model, "GGUF model file (required)");
    app.add_option("-p,--prompt", opt.prompt, "prompt text (default: empty, BOS only)");
    app.add_option("-f,--file", prompt_file, "read the prompt from a file (one trailing newline dropped)");
    app.add_option("-n,--n-predict", opt.n_predict,
                   "(--predict) tokens to generate; -1 = until the end of the text (the context shifts), "
                   "-2 = until the context is full")
        ->capture_default_str();
    app.add_option("-t,--threads", opt.n_threads, "threads (default: all hardware threads; at most those)");
    app.add_option("--threads-batch", opt.n_threads_batch, "(-tb) threads for the prompt (default: as -t)");
    auto * ctx_opt = app.add_option("-c,--ctx-size", opt.n_ctx, "context size in tokens; 0 = the model's")
                         ->capture_default_str();
    app.add_option("--batch-size", opt.n_batch, "(-b) logical batch size: the micro-batch is at most this")
        ->capture_default_str();
    app.add_option("--ubatch-size", opt.n_ubatch, "(-ub) most prompt tokens evaluated at once (micro-batch)")
        ->capture_default_str();
    app.add_option("--temp", s.temp, "(--temperature) temperature; <= 0 is greedy")->capture_default_str();
    app.add_option("--top-k", s.top_k, "top-k sampling; 0 = off")->capture_default_str();
    app.add_option("--top-p", s.top_p, "top-p sampling, 0..1; 1.0 = off")->capture_default_str();
    app.add_option("--min-p", s.min_p, "min-p sampling, 0..1; 0.0 = off")->capture_default_str();
    app.add_option("--repeat-penalty", s.repeat_penalty, "penalty for repeated tokens (> 0); 1.0 = off")
        ->capture_default_str();
    app.add_option("--repeat-last-n", s.repeat_last_n, "tokens the repeat penalty looks back over; -1 = the context")
        ->capture_default_str();
    app.add_option("-s,--seed", seed, "random seed; -1 = random")->capture_default_str();
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
    app.add_option("--system-prompt-file", system_file, "(-sysf) chat: read the system message from a file");
    app.add_option("--chat-template", opt.chat_template, "chat: the template by name (default: the model's): " +
                                                             gk::run::chat_template_names());
    app.add_option("--chat-template-file", opt.chat_template_file,
                   "chat: a Jinja chat template file, used instead of the model's (matched to a template above)");
    app.add_flag("-i,--interactive", opt.interactive, "hand control to the user after each reply (raw text)");
    app.add_flag("--interactive-first", opt.interactive_first, "(-if) interactive, and wait for input first");
    app.add_flag("--multiline-input", opt.multiline_input,
                 "(-mli) input continues over lines until one ends with \\ or /");
    app.add_flag("--single-turn", opt.single_turn,
                 "(-st) conversation: answer one message (-p, or the first input), then exit");
    app.add_option("--in-prefix", opt.in_prefix, "text put before each user input");
    app.add_option("--in-suffix", opt.in_suffix, "text put after each user input");
    app.add_option("-r,--reverse-prompt", opt.reverse_prompts,
                   "stop generating when the text ends with this, and hand control to the user (repeatable)")
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--keep", opt.n_keep, "prompt tokens kept when the context shifts; -1 = all")->capture_default_str();
    app.add_flag("--context-shift,!--no-context-shift", opt.context_shift,
                 "when the context is full, drop the older half of what follows --keep and go on (default), "
                 "or stop");
    app.add_option("--dump-logits", opt.dump_logits, "write the logits of every step to FILE (f32 rows)");
    app.add_flag("--mpi", opt.mpi,
                 "under mpirun: split the model's layers over the ranks (pipeline parallel; docs/mpi.md)");
    app.add_option("--mpi-start-timeout", opt.mpi_start_timeout,
                   "--mpi: seconds for every rank to start, else this one ends with an error")
        ->capture_default_str();
    app.add_flag("--tokenize", opt.tokenize, "print the prompt's token ids and exit (vocab-only files work)");
    app.add_flag("--no-bos", opt.no_bos, "do not add the BOS token");
    app.add_flag("--parse-special", opt.parse_special, "tokenize control-token text (\"<|im_start|>\") as tokens");
    app.add_flag(
        "--ignore-eos", opt.ignore_eos,
        "never sample an end-of-generation token (a logit bias of -inf each, as llama.cpp's), so the text goes on");
    app.add_flag("-e,--escape,!--no-escape", opt.escape,
                 "process the escapes \\n \\r \\t \\' \\\" \\\\ \\xHH of the prompt, --in-prefix/--in-suffix, -r and "
                 "--dry-sequence-breaker (default: on)");
    app.add_flag("--display-prompt,!--no-display-prompt", opt.display_prompt, "echo the prompt (default: on)");
    app.add_flag("--show-timings,!--no-show-timings", opt.show_timings, "print the timing summary (default: on)");
    app.add_flag("-v,--verbose", opt.verbose, "print model, memory and sampling details to stderr");
    app.add_flag("--list-devices", opt.list_devices, "print the devices (Vulkan0, CUDA0, ..., the CPU) and exit");
    app.add_option("--device", device_list,
                   "(-dev) the device for -ngl's layers, by name (a comma list: the first is used); none = the CPU");
    app.add_flag("--no-kv-offload", opt.no_kv_offload,
                 "(-nkvo) keep the KV cache of -ngl's blocks in host memory too (default: in the device's)");
    app.add_option("--n-gpu-layers,--gpu-layers", gpu_layers,
                   "(-ngl) blocks whose weights go to the device (the last N; auto, all or more than the model has: "
                   "all, and the output layer); default 0, or all with --device");
    sampling_args sampling_raw;
    add_sampling_options(app, s, sampling_raw);
    grammar_args grammar;
    grammar.add_to(app);
    // A repeated option keeps its last value, as in llama.cpp (options that collect every
    // occurrence, of a vector type, keep them all).
    for (CLI::Option * o : app.get_options()) {
        if (o->get_items_expected_max() <= 1) o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    std::string error;
    try {
        std::vector<std::string> args;
        if (!normalise_args(app, argc, argv, args, error)) {
            std::fprintf(stderr, "gk-run: error: %s\n", error.c_str());
            return 1;
        }
        app.parse(args);
    } catch (const CLI::ParseError & e) {
        if (e.get_exit_code() == 0) {
            std::fputs(app.help().c_str(), stdout);
            return 0;
        }
        std::fprintf(stderr, "gk-run: error: %s\n", one_line(e.what()).c_str());
        return 1;
    }
    opt.n_ctx_given = ctx_opt->count() > 0;
    error           = check_values(opt, seed);
    if (error.empty() && model_opt->count() == 0 && !opt.list_devices) error = "--model is required";
    if (error.empty()) error = read_device_options(device_list, gpu_layers, opt);
    if (error.empty() && !prompt_file.empty() && app.count("--prompt") > 0) {
        error = "give the prompt with -p or with -f, not both";
    }
    if (error.empty() && !prompt_file.empty()) {
        if (read_text_input(prompt_file, "prompt file", opt.prompt, &error) && !opt.prompt.empty() &&
            opt.prompt.back() == '\n') {
            opt.prompt.pop_back();
        }
    }
    if (error.empty() && !system_file.empty() &&
        read_text_input(system_file, "system prompt file", opt.system_prompt, &error) && !opt.system_prompt.empty() &&
        opt.system_prompt.back() == '\n') {
        opt.system_prompt.pop_back();
    }
    if (error.empty()) error = finish_sampling_options(app, s, sampling_raw);
    if (error.empty()) error = grammar.resolve(opt);
    if (error.empty() && opt.n_keep < -1) {
        error = "--keep must be >= -1 (-1 = the whole prompt), got " + std::to_string(opt.n_keep);
    }
    if (error.empty() && !opt.chat_template_file.empty()) {
        read_text_input(opt.chat_template_file, "chat template file", opt.chat_template_jinja, &error);
    }
    if (!error.empty()) {
        std::fprintf(stderr, "gk-run: error: %s\n", error.c_str());
        return 1;
    }
    if (opt.interactive_first) opt.interactive = true;
    if (opt.single_turn) opt.chat = true;  // as llama-cli: -st is a conversation of one turn
    if (!opt.system_prompt.empty() && !opt.chat) {
        std::fprintf(stderr, "gk-run: warning: -sys / -sysf have no effect without -cnv (a conversation)\n");
    }
    if (opt.escape) {  // as llama.cpp: the prompt (-p and -f alike), the input affixes and reverse prompts
        opt.prompt    = process_escapes(opt.prompt);
        opt.in_prefix = process_escapes(opt.in_prefix);
        opt.in_suffix = process_escapes(opt.in_suffix);
        for (std::string & r : opt.reverse_prompts) r = process_escapes(r);
        for (std::string & b : s.dry_sequence_breakers) b = process_escapes(b);
    }
    s.seed              = seed < 0 ? gk::run::k_random_seed : static_cast<uint32_t>(seed);
    const int hw        = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    opt.n_threads       = resolve_threads(opt.n_threads, hw, "-t");
    opt.n_threads_batch = resolve_threads(opt.n_threads_batch, opt.n_threads, "-tb");
    opt.n_ubatch        = std::min(opt.n_ubatch, opt.n_batch);  // llama.cpp: n_ubatch <= n_batch
    return std::nullopt;
}

} // namespace gk_run_tool
