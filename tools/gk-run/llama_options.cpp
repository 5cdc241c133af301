// llama_options.cpp - see llama_options.h. The rows follow the help of llama.cpp's
// llama-cli and llama-completion (common/arg.cpp); the reasons are gk-run's.
#include "llama_options.h"

namespace gk_run_tool {

namespace {

using enum llama_option_use;

// Why gk-run does not take an option, shared by many rows.
constexpr const char * k_cpu       = "gk-run places work on one device by --device and -ngl only";
constexpr const char * k_affinity  = "gk-run does not pin or prioritise its threads";
constexpr const char * k_download  = "gk-run reads local GGUF files only (download the file, then -m FILE)";
constexpr const char * k_draft     = "gk-run has no speculative or lookup decoding";
constexpr const char * k_media     = "gk-run runs text models only";
constexpr const char * k_adapter   = "gk-run applies no adapters or control vectors";
constexpr const char * k_rope      = "gk-run takes the rope settings from the model file";
constexpr const char * k_log       = "gk-run has no log system (errors, warnings and -v details go to stderr)";
constexpr const char * k_jinja     = "gk-run has no Jinja engine (it matches chat templates to built-in formats)";
constexpr const char * k_reasoning = "gk-run does not parse reasoning or tool-call output";
constexpr const char * k_cache     = "gk-run keeps no prompt cache or context checkpoints";
constexpr const char * k_load      = "gk-run maps regular model files into memory (and reads other inputs)";

// clang-format off
constexpr llama_option k_rows[] = {
    // ---- common ----
    {"-h,--help,--usage",                 "help",                           taken,   false, "", ""},
    {"--version",                         "version",                        refused, false, "",
     "gk-run prints no version; it is built from its source tree"},
    {"--license",                         "licenses",                       refused, false, "", "see the source tree"},
    {"-cl,--cache-list",                  "model cache list",               refused, false, "", k_download},
    {"--completion-bash",                 "bash completion",                refused, false, "",
     "gk-run has no shell completion script"},
    {"--verbose-prompt",                  "verbose prompt",                 refused, false, "",
     "use -v, which prints the prompt's token ids"},
    {"-t,--threads",                      "threads",                        taken,   true,  "", ""},
    {"-tb,--threads-batch",               "threads for the prompt",         taken,   true,  "", ""},
    {"-C,--cpu-mask",                     "CPU affinity mask",              refused, true,  "", k_affinity},
    {"-Cr,--cpu-range",                   "CPU affinity range",             refused, true,  "", k_affinity},
    {"--cpu-strict",                      "strict CPU placement",           refused, true,  "", k_affinity},
    {"--prio",                            "thread priority",                refused, true,  "", k_affinity},
    {"--poll",                            "polling level",                  refused, true,  "", k_affinity},
    {"-Cb,--cpu-mask-batch",              "CPU affinity mask (batch)",      refused, true,  "", k_affinity},
    {"-Crb,--cpu-range-batch",            "CPU affinity range (batch)",     refused, true,  "", k_affinity},
    {"--cpu-strict-batch",                "strict CPU placement (batch)",   refused, true,  "", k_affinity},
    {"--prio-batch",                      "thread priority (batch)",        refused, true,  "", k_affinity},
    {"--poll-batch",                      "polling (batch)",                refused, true,  "", k_affinity},
    {"-c,--ctx-size",                     "context size",                   taken,   true,  "", ""},
    {"-n,--predict,--n-predict",          "tokens to predict",              taken,   true,  "", ""},
    {"-b,--batch-size",                   "logical batch size",             taken,   true,  "", ""},
    {"-ub,--ubatch-size",                 "physical batch size",            taken,   true,  "", ""},
    {"--keep",                            "tokens kept on a context shift", taken,   true,  "", ""},
    {"--swa-full",                        "full-size sliding-window cache", no_op,   false, "",
     "gk-run's cache always holds every position"},
    {"-fa,--flash-attn",                  "flash attention",                no_op,   true,  "on,auto",
     "gk-run always uses its fused (flash) attention"},
    {"-p,--prompt",                       "prompt",                         taken,   true,  "", ""},
    {"--perf,--no-perf",                  "libllama timings",               refused, false, "",
     "gk-run prints its timing summary on stderr (--no-show-timings drops it)"},
    {"-f,--file",                         "prompt file",                    taken,   true,  "", ""},
    {"-bf,--binary-file",                 "binary prompt file",             refused, true,  "",
     "use -f, which reads the file's bytes as they are"},
    {"-e,--escape",                       "escape processing",              taken,   false, "", ""},
    {"--no-escape",                       "no escape processing",           taken,   false, "", ""},
    {"--rope-scaling",                    "RoPE scaling method",            refused, true,  "", k_rope},
    {"--rope-scale",                      "RoPE context scale",             refused, true,  "", k_rope},
    {"--rope-freq-base",                  "RoPE base frequency",            refused, true,  "", k_rope},
    {"--rope-freq-scale",                 "RoPE frequency scale",           refused, true,  "", k_rope},
    {"--yarn-orig-ctx",                   "YaRN original context",          refused, true,  "", k_rope},
    {"--yarn-ext-factor",                 "YaRN extrapolation factor",      refused, true,  "", k_rope},
    {"--yarn-attn-factor",                "YaRN attention factor",          refused, true,  "", k_rope},
    {"--yarn-beta-slow",                  "YaRN beta slow",                 refused, true,  "", k_rope},
    {"--yarn-beta-fast",                  "YaRN beta fast",                 refused, true,  "", k_rope},
    {"-kvo,--kv-offload",                 "KV cache offload",               no_op,   false, "",
     "the default: the cache of the blocks -ngl puts on the device is in its memory"},
    {"-nkvo,--no-kv-offload",             "no KV cache offload",            taken,   false, "", ""},
    {"--repack",                          "weight repacking",               refused, false, "",
     "gk-run uses the weights in place"},
    {"-nr,--no-repack",                   "no weight repacking",            no_op,   false, "",
     "gk-run uses the weights in place"},
    {"--no-host",                         "no host buffer",                 refused, false, "", k_cpu},
    {"-ctk,--cache-type-k",               "KV cache type of K",             taken,   true,  "", ""},
    {"-ctv,--cache-type-v",               "KV cache type of V",             taken,   true,  "", ""},
    {"-dt,--defrag-thold",                "KV defragmentation threshold",   refused, true,  "",
     "gk-run's cache holds one sequence and never fragments"},
    {"-np,--parallel",                    "parallel sequences",             no_op,   true,  "1",
     "gk-run runs one sequence"},
    {"--rpc",                             "RPC servers",                    refused, true,  "", k_cpu},
    {"--mlock",                           "lock the model in memory",       refused, false, "", k_load},
    {"--mmap",                            "memory-map the model",           no_op,   false, "", k_load},
    {"--no-mmap",                         "do not memory-map the model",    refused, false, "", k_load},
    {"-dio,--direct-io,-ndio,--no-direct-io", "direct I/O",                 refused, false, "", k_load},
    {"-lm,--load-mode",                   "model loading mode",             refused, true,  "", k_load},
    {"--numa",                            "NUMA optimizations",             refused, true,  "",
     "gk-run has no NUMA placement"},
    {"-dev,--device",                     "devices",                        taken,   true,  "", ""},
    {"--list-devices",                    "list devices",                   taken,   false, "", ""},
    {"-ot,--override-tensor",             "tensor buffer types",            refused, true,  "", k_cpu},
    {"-cmoe,--cpu-moe",                   "MoE weights on the CPU",         refused, false, "",
     "gk-run runs no mixture-of-experts models"},
    {"-ncmoe,--n-cpu-moe",                "MoE layers on the CPU",          refused, true,  "",
     "gk-run runs no mixture-of-experts models"},
    {"-ngl,--gpu-layers,--n-gpu-layers",  "GPU layers",                     taken,   true,  "", ""},
    {"-sm,--split-mode",                  "multi-GPU split mode",           refused, true,  "", k_cpu},
    {"-ts,--tensor-split",                "multi-GPU tensor split",         refused, true,  "", k_cpu},
    {"-mg,--main-gpu",                    "main GPU",                       refused, true,  "", k_cpu},
    {"-fit,--fit",                        "fit settings to device memory",  no_op,   true,  "off",
     "gk-run does not adjust settings to memory (it refuses a KV cache that does not fit)"},
    {"-fitt,--fit-target",                "--fit margin",                   refused, true,  "",
     "gk-run does not adjust settings to memory"},
    {"-fitc,--fit-ctx",                   "--fit context minimum",          refused, true,  "",
     "gk-run does not adjust settings to memory"},
    {"--check-tensors",                   "check tensor data",              refused, false, "",
     "gk-run does not scan the weights; it stops at the first step whose logits are not finite"},
    {"--override-kv",                     "metadata overrides",             refused, true,  "",
     "gk-run reads the model's metadata as it is"},
    {"--op-offload,--no-op-offload",      "host op offload",                refused, false, "", k_cpu},
    {"--lora",                            "LoRA adapter",                   refused, true,  "", k_adapter},
    {"--lora-scaled",                     "scaled LoRA adapter",            refused, true,  "", k_adapter},
    {"--control-vector",                  "control vector",                 refused, true,  "", k_adapter},
    {"--control-vector-scaled",           "scaled control vector",          refused, true,  "", k_adapter},
    {"--control-vector-layer-range",      "control vector layers",          refused, true,  "", k_adapter},
    {"-m,--model",                        "model",                          taken,   true,  "", ""},
    {"-mu,--model-url",                   "model URL",                      refused, true,  "", k_download},
    {"-dr,--docker-repo",                 "Docker Hub model",               refused, true,  "", k_download},
    {"-hf,-hfr,--hf-repo",                "Hugging Face repository",        refused, true,  "", k_download},
    {"-hff,--hf-file",                    "Hugging Face file",              refused, true,  "", k_download},
    {"-hfv,-hfrv,--hf-repo-v",            "Hugging Face vocoder repository", refused, true, "", k_download},
    {"-hffv,--hf-file-v",                 "Hugging Face vocoder file",      refused, true,  "", k_download},
    {"-hft,--hf-token",                   "Hugging Face token",             refused, true,  "", k_download},
    {"--offline",                         "offline mode",                   no_op,   false, "",
     "gk-run never uses the network"},
    {"--log-disable",                     "no logging",                     refused, false, "", k_log},
    {"--log-file",                        "log file",                       refused, true,  "", k_log},
    {"--log-colors",                      "coloured logs",                  refused, true,  "", k_log},
    {"-v,--verbose,--log-verbose",        "verbose output",                 taken,   false, "", ""},
    {"-lv,--verbosity,--log-verbosity",   "log verbosity",                  refused, true,  "", k_log},
    {"--log-prefix,--no-log-prefix",      "log prefixes",                   refused, false, "", k_log},
    {"--log-timestamps,--no-log-timestamps", "log timestamps",              refused, false, "", k_log},
    {"-ctkd,--cache-type-k-draft,--spec-draft-type-k", "draft KV cache type of K", refused, true, "", k_draft},
    {"-ctvd,--cache-type-v-draft,--spec-draft-type-v", "draft KV cache type of V", refused, true, "", k_draft},
    // ---- sampling ----
    {"--samplers",                        "sampler order",                  taken,   true,  "", ""},
    {"-s,--seed",                         "seed",                           taken,   true,  "", ""},
    {"--sampler-seq,--sampling-seq",      "sampler order (letters)",        taken,   true,  "", ""},
    {"--ignore-eos",                      "ignore end of stream",           taken,   false, "", ""},
    {"--temp,--temperature",              "temperature",                    taken,   true,  "", ""},
    {"--top-k",                           "top-k",                          taken,   true,  "", ""},
    {"--top-p",                           "top-p",                          taken,   true,  "", ""},
    {"--min-p",                           "min-p",                          taken,   true,  "", ""},
    {"--top-nsigma,--top-n-sigma",        "top-n-sigma",                    taken,   true,  "", ""},
    {"--xtc-probability",                 "XTC probability",                taken,   true,  "", ""},
    {"--xtc-threshold",                   "XTC threshold",                  taken,   true,  "", ""},
    {"--typical,--typical-p",             "locally typical sampling",       taken,   true,  "", ""},
    {"--repeat-last-n",                   "repeat penalty window",          taken,   true,  "", ""},
    {"--repeat-penalty",                  "repeat penalty",                 taken,   true,  "", ""},
    {"--presence-penalty",                "presence penalty",               taken,   true,  "", ""},
    {"--frequency-penalty",               "frequency penalty",              taken,   true,  "", ""},
    {"--dry-multiplier",                  "DRY multiplier",                 taken,   true,  "", ""},
    {"--dry-base",                        "DRY base",                       taken,   true,  "", ""},
    {"--dry-allowed-length",              "DRY allowed length",             taken,   true,  "", ""},
    {"--dry-penalty-last-n",              "DRY window",                     taken,   true,  "", ""},
    {"--dry-sequence-breaker",            "DRY sequence breaker",           taken,   true,  "", ""},
    {"--adaptive-target",                 "adaptive-p target",              refused, true,  "",
     "gk-run has no adaptive-p sampler"},
    {"--adaptive-decay",                  "adaptive-p decay",               refused, true,  "",
     "gk-run has no adaptive-p sampler"},
    {"--dynatemp-range",                  "dynamic temperature range",      taken,   true,  "", ""},
    {"--dynatemp-exp",                    "dynamic temperature exponent",   taken,   true,  "", ""},
    {"--mirostat",                        "Mirostat",                       taken,   true,  "", ""},
    {"--mirostat-lr",                     "Mirostat learning rate",         taken,   true,  "", ""},
    {"--mirostat-ent",                    "Mirostat target entropy",        taken,   true,  "", ""},
    {"-l,--logit-bias",                   "logit bias",                     taken,   true,  "", ""},
    {"--grammar",                         "grammar",                        taken,   true,  "", ""},
    {"--grammar-file",                    "grammar file",                   taken,   true,  "", ""},
    {"-j,--json-schema",                  "JSON schema",                    taken,   true,  "", ""},
    {"-jf,--json-schema-file",            "JSON schema file",               taken,   true,  "", ""},
    {"-bs,--backend-sampling",            "backend sampling",               refused, false, "", k_cpu},
    // ---- llama-cli / llama-completion ----
    {"--server-base",                     "server to connect to",           refused, true,  "",
     "gk-run runs the model in-process"},
    {"--display-prompt",                  "print the prompt",               taken,   false, "", ""},
    {"--no-display-prompt",               "do not print the prompt",        taken,   false, "", ""},
    {"-co,--color",                       "coloured output",                no_op,   true,  "off",
     "gk-run does not colour its output"},
    {"-ctxcp,--ctx-checkpoints,--swa-checkpoints", "context checkpoints",   refused, true,  "", k_cache},
    {"-cram,--cache-ram",                 "prompt cache size",              refused, true,  "", k_cache},
    {"--context-shift",                   "context shift",                  taken,   false, "", ""},
    {"--no-context-shift",                "no context shift",               taken,   false, "", ""},
    {"-sys,--system-prompt",              "system prompt",                  taken,   true,  "", ""},
    {"-sysf,--system-prompt-file",        "system prompt file",             taken,   true,  "", ""},
    {"--show-timings",                    "print the timings",              taken,   false, "", ""},
    {"--no-show-timings",                 "do not print the timings",       taken,   false, "", ""},
    {"-r,--reverse-prompt",               "reverse prompt",                 taken,   true,  "", ""},
    {"-sp,--special",                     "print special tokens",           refused, false, "",
     "gk-run does not print control tokens"},
    {"-cnv,--conversation",               "conversation mode",              taken,   false, "", ""},
    {"-no-cnv,--no-conversation",         "no conversation mode",           no_op,   false, "", "gk-run's default"},
    {"-st,--single-turn",                 "single turn",                    taken,   false, "", ""},
    {"-i,--interactive",                  "interactive mode",               taken,   false, "", ""},
    {"-if,--interactive-first",           "interactive, input first",       taken,   false, "", ""},
    {"-mli,--multiline-input",            "multi-line input",               taken,   false, "", ""},
    {"--in-prefix-bos",                   "BOS before user input",          refused, false, "",
     "gk-run puts BOS only in front of the first prompt"},
    {"--in-prefix",                       "user input prefix",              taken,   true,  "", ""},
    {"--in-suffix",                       "user input suffix",              taken,   true,  "", ""},
    {"--warmup",                          "warm-up run",                    refused, false, "",
     "gk-run does no warm-up run"},
    {"--no-warmup",                       "no warm-up run",                 no_op,   false, "",
     "gk-run does no warm-up run"},
    {"-gan,--grp-attn-n",                 "group-attention factor",         refused, true,  "",
     "gk-run has no group attention (self-extend)"},
    {"-gaw,--grp-attn-w",                 "group-attention width",          refused, true,  "",
     "gk-run has no group attention (self-extend)"},
    {"--jinja",                           "Jinja templates",                refused, false, "", k_jinja},
    {"--no-jinja",                        "no Jinja templates",             no_op,   false, "", k_jinja},
    {"--chat-template",                   "chat template",                  taken,   true,  "", ""},
    {"--chat-template-file",              "chat template file",             taken,   true,  "", ""},
    {"--chat-template-kwargs",            "chat template parameters",       refused, true,  "", k_jinja},
    {"--reasoning-format",                "reasoning format",               refused, true,  "", k_reasoning},
    {"-rea,--reasoning",                  "reasoning",                      refused, true,  "", k_reasoning},
    {"--reasoning-effort",                "reasoning effort",               refused, true,  "", k_reasoning},
    {"--reasoning-budget",                "reasoning budget",               refused, true,  "", k_reasoning},
    {"--reasoning-budget-message",        "reasoning budget message",       refused, true,  "", k_reasoning},
    {"--reasoning-preserve,--no-reasoning-preserve", "reasoning history",   refused, false, "", k_reasoning},
    {"--skip-chat-parsing,--no-skip-chat-parsing", "chat output parsing",   refused, false, "", k_reasoning},
    {"--simple-io",                       "basic I/O",                      no_op,   false, "",
     "gk-run's input and output are plain streams"},
    {"--log-prompts-dir",                 "prompt log folder",              refused, true,  "", k_log},
    {"-ptc,--print-token-count",          "token count every N tokens",     refused, true,  "",
     "gk-run prints the token counts in its summary"},
    {"--prompt-cache",                    "prompt cache file",              refused, true,  "", k_cache},
    {"--prompt-cache-all",                "cache generations too",          refused, false, "", k_cache},
    {"--prompt-cache-ro",                 "read-only prompt cache",         refused, false, "", k_cache},
    {"-o,--output,--output-file",         "output file",                    refused, true,  "",
     "gk-run writes the text to stdout (redirect it)"},
    {"-mm,--mmproj",                      "multimodal projector",           refused, true,  "", k_media},
    {"-mmu,--mmproj-url",                 "multimodal projector URL",       refused, true,  "", k_media},
    {"--mmproj-auto",                     "automatic multimodal projector", refused, false, "", k_media},
    {"--no-mmproj,--no-mmproj-auto",      "no multimodal projector",        no_op,   false, "", k_media},
    {"--mmproj-offload,--no-mmproj-offload", "multimodal projector offload", refused, false, "", k_media},
    {"-mmdev,--mmproj-device",            "multimodal projector device",    refused, true,  "", k_media},
    {"--image,--audio,--video",           "media input",                    refused, true,  "", k_media},
    {"--image-min-tokens",                "tokens per image (least)",       refused, true,  "", k_media},
    {"--image-max-tokens",                "tokens per image (most)",        refused, true,  "", k_media},
    {"-md,--model-draft,--spec-draft-model", "draft model",                 refused, true,  "", k_draft},
    {"-hfd,-hfrd,--hf-repo-draft,--spec-draft-hf", "draft model repository", refused, true, "", k_draft},
    {"-td,--threads-draft,--spec-draft-threads", "draft threads",           refused, true,  "", k_draft},
    {"-tbd,--threads-batch-draft,--spec-draft-threads-batch", "draft batch threads", refused, true, "", k_draft},
    {"-Cd,--cpu-mask-draft,--spec-draft-cpu-mask", "draft CPU mask",        refused, true,  "", k_draft},
    {"-Crd,--cpu-range-draft,--spec-draft-cpu-range", "draft CPU range",    refused, true,  "", k_draft},
    {"-Cbd,--cpu-mask-batch-draft,--spec-draft-cpu-mask-batch", "draft batch CPU mask", refused, true, "", k_draft},
    {"-otd,--override-tensor-draft,--spec-draft-override-tensor", "draft tensor buffer types", refused, true, "",
     k_draft},
    {"-cmoed,--cpu-moe-draft,--spec-draft-cpu-moe", "draft MoE weights on the CPU", refused, false, "", k_draft},
    {"-ncmoed,--n-cpu-moe-draft,--spec-draft-n-cpu-moe,--spec-draft-ncmoe",
     "draft MoE layers on the CPU", refused, true, "",
     k_draft},
    {"-devd,--device-draft,--spec-draft-device", "draft devices",           refused, true,  "", k_draft},
    {"-ngld,--gpu-layers-draft,--n-gpu-layers-draft,--spec-draft-ngl", "draft GPU layers", refused, true, "", k_draft},
    {"--draft,--draft-n,--draft-max,--spec-draft-n-max", "draft tokens (most)", refused, true, "", k_draft},
    {"--draft-min,--draft-n-min,--spec-draft-n-min", "draft tokens (least)", refused, true,  "", k_draft},
    {"--draft-p-min,--spec-draft-p-min",  "draft probability minimum",      refused, true,  "", k_draft},
    {"--draft-p-split,--spec-draft-p-split", "draft split probability",     refused, true,  "", k_draft},
    {"--spec-type",                       "speculative decoding types",     refused, true,  "", k_draft},
    {"--spec-default",                    "default speculative decoding",   refused, false, "", k_draft},
    {"-lcs,--lookup-cache-static",        "static lookup cache",            refused, true,  "", k_draft},
    {"-lcd,--lookup-cache-dynamic",       "dynamic lookup cache",           refused, true,  "", k_draft},
    {"-kvu,--kv-unified",                 "unified KV buffer",              no_op,   false, "",
     "gk-run runs one sequence in one cache"},
    {"--gpt-oss-20b-default",             "preset model",                   refused, false, "", k_download},
    {"--gpt-oss-120b-default",            "preset model",                   refused, false, "", k_download},
    {"--vision-gemma-4b-default",         "preset model",                   refused, false, "", k_download},
    {"--vision-gemma-12b-default",        "preset model",                   refused, false, "", k_download},
};
// clang-format on

std::vector<std::string_view> split_commas(std::string_view s) {
    std::vector<std::string_view> out;
    while (!s.empty()) {
        const size_t comma = s.find(',');
        out.push_back(s.substr(0, comma));
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 1);
    }
    return out;
}

} // namespace

std::span<const llama_option> llama_options() { return k_rows; }

std::vector<std::string_view> llama_option_names(const llama_option & row) { return split_commas(row.names); }

const llama_option * find_llama_option(std::string_view name) {
    for (const llama_option & row : k_rows) {
        for (std::string_view n : split_commas(row.names)) {
            if (n == name) return &row;
        }
    }
    return nullptr;
}

bool llama_option_accepts(const llama_option & row, std::string_view value) {
    for (std::string_view a : split_commas(row.accepted)) {
        if (a == value) return true;
    }
    return false;
}

std::string llama_option_refusal(const llama_option & row, std::string_view spelled) {
    std::string msg = "option " + std::string(spelled) + " (" + row.what + ") is not supported: " + row.reason;
    if (row.use == no_op && row.value) {
        const auto values = split_commas(row.accepted);
        msg += " (accepted, as a no-op: " + std::string(spelled);
        for (size_t i = 0; i < values.size(); ++i) msg += (i == 0 ? " " : " or ") + std::string(values[i]);
        msg += ")";
    }
    return msg;
}

} // namespace gk_run_tool
