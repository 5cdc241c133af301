// options.h - gk-run's command line (llama.cpp's option names and defaults).
#pragma once

#include "run/sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gk_run_tool {

struct run_options {
    std::string model;
    std::string prompt;              // -p, or the contents of -f
    std::string system_prompt;       // --chat: -sys
    std::string chat_template;       // --chat: a chat_template_name(), instead of the model's
    std::string dump_logits;         // file for the logits of every step
    std::string cache_type_k = "f16";
    std::string cache_type_v = "f16";
    int64_t     n_predict = -1;      // -1: until end of generation or the context is full
    int64_t     n_ctx     = 4096;    // 0: the model's training context
    int64_t     n_ubatch  = 512;     // most prompt tokens per forward graph
    bool        n_ctx_given = false;
    int         n_threads = 0;       // 0: all hardware threads
    gk::run::sampler_params sampling;
    bool chat           = false;     // --chat, -cnv / --conversation
    bool tokenize       = false;
    bool no_bos         = false;
    bool parse_special  = false;
    bool ignore_eos     = false;
    bool display_prompt = true;
    bool verbose        = false;
    // interactive modes (llama-cli's -i, -if, -cnv): see docs/gk-run.md, "Chat"
    bool                     interactive       = false;  // -i: hand control to the user after each reply
    bool                     interactive_first = false;  // -if: and before the first
    bool                     multiline_input   = false;  // -mli
    bool                     context_shift     = true;   // --no-context-shift: stop at a full context
    int64_t                  n_keep            = 0;      // --keep: prompt tokens kept by a context shift; -1 all
    std::string              in_prefix, in_suffix;       // around each user input
    std::vector<std::string> reverse_prompts;            // -r
    std::string              chat_template_file;         // --chat-template-file: a Jinja template ...
    std::string              chat_template_jinja;        // ... and its text, matched to a family
};

/** Parse argv. Returns the exit code to end with (0 after --help, 1 after an error,
 *  with the message printed) or nullopt to run. */
std::optional<int> parse_options(int argc, char ** argv, run_options & opt);

} // namespace gk_run_tool
