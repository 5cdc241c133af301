// options.h - gk-run's command line (llama.cpp's option names, meanings and defaults).
#pragma once

#include "run/grammar.h"
#include "run/sampler.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gk_run_tool {

struct run_options {
    std::string             model;
    std::string             prompt;         // -p, or the contents of -f
    std::string             system_prompt;  // --chat: -sys, or the contents of -sysf
    std::string             chat_template;  // --chat: a chat_template_name(), instead of the model's
    std::string             dump_logits;    // file for the logits of every step
    std::string             cache_type_k    = "f16";
    std::string             cache_type_v    = "f16";
    int64_t                 n_predict       = -1;    // -1: until end of generation or the context is full
    int64_t                 n_ctx           = 4096;  // 0: the model's training context
    int64_t                 n_batch         = 2048;  // logical batch: the micro-batch is at most this
    int64_t                 n_ubatch        = 512;   // most prompt tokens per forward graph
    bool                    n_ctx_given     = false;
    int                     n_threads       = 0;  // 0: all hardware threads
    int                     n_threads_batch = 0;  // threads for micro-batches of several tokens; 0: n_threads
    gk::run::sampler_params sampling;             // repeat_last_n -1: the context size (resolved by the runner)
    bool                    chat           = false;  // --chat, -cnv / --conversation
    bool                    tokenize       = false;
    bool                    no_bos         = false;
    bool                    parse_special  = false;
    bool                    ignore_eos     = false;
    bool                    display_prompt = true;
    bool                    escape         = true;  // -e: process the escapes of the prompt (escapes.h)
    bool                    show_timings   = true;
    bool                    verbose        = false;
    // devices (docs/gk-run.md, "Devices")
    bool                     list_devices = false;  // --list-devices: print them and exit
    std::vector<std::string> devices;               // --device: names, or {"none"}
    int64_t                  n_gpu_layers = -3;     // -ngl: blocks on the device; -1 all
                                                    // (auto, all); -3 not given
    bool                    no_kv_offload     = false;  // -nkvo: the whole KV cache in host memory
    bool                    mpi            = false;  // --mpi: this rank's layers of a pipeline (mpi_ranks.h)
    double                  mpi_start_timeout = 60;  // seconds for every rank to start (mpi_ranks.h)
    // interactive modes (llama-cli's -i, -if, -cnv): see docs/gk-run.md, "Chat"
    bool                     interactive       = false;  // -i: hand control to the user after each reply
    bool                     interactive_first = false;  // -if: and before the first
    bool                     multiline_input   = false;  // -mli
    bool                     single_turn       = false;  // -st: one reply of the conversation, then exit
    bool                     context_shift     = true;   // --no-context-shift: stop at a full context
    int64_t                  n_keep            = 0;      // --keep: prompt tokens kept by a context shift; -1 all
    std::string              in_prefix, in_suffix;       // around each user input
    std::vector<std::string> reverse_prompts;            // -r
    std::string              chat_template_file;         // --chat-template-file: a Jinja template ...
    std::string              chat_template_jinja;        // ... and its text, matched to a family
    // Constrained output: --grammar, --grammar-file, --json-schema or --json-schema-file,
    // parsed (nullptr: none).
    std::shared_ptr<const gk::run::Grammar> grammar;
};

/** Parse argv. Returns the exit code to end with (0 after --help, 1 after an error,
 *  with the one-line message "gk-run: error: ..." printed) or nullopt to run. Warnings
 *  (a thread count capped at the hardware's) go to stderr.
 *
 *  Every argument is read as llama.cpp's common_params_parse reads it: an option and its
 *  value are two arguments (or one, "--name=value"), a value is never read as an option
 *  (`-s -1`, `-p -x`), single-dash options never combine letters (`-fa` is -fa, not
 *  -f a), a repeated option keeps its last value, and llama.cpp's spellings (table in
 *  llama_options.h) reach the option gk-run registers, or are refused by name. */
std::optional<int> parse_options(int argc, char ** argv, run_options & opt);

} // namespace gk_run_tool
