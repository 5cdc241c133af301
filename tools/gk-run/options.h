// options.h - gk-run's command line (llama.cpp's option names and defaults).
#pragma once

#include "run/grammar.h"
#include "run/sampler.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace gk_run_tool {

struct run_options {
    std::string model;
    std::string prompt;              // -p, or the contents of -f
    std::string system_prompt;       // --chat: -sys
    std::string chat_template;       // --chat: override of the detected format
    std::string dump_logits;         // file for the logits of every step
    std::string cache_type_k = "f16";
    std::string cache_type_v = "f16";
    int64_t     n_predict = -1;      // -1: until end of generation or the context is full
    int64_t     n_ctx     = 4096;    // 0: the model's training context
    int64_t     n_ubatch  = 512;     // most prompt tokens per forward graph
    bool        n_ctx_given = false;
    int         n_threads = 0;       // 0: all hardware threads
    gk::run::sampler_params sampling;
    bool chat           = false;
    bool tokenize       = false;
    bool no_bos         = false;
    bool parse_special  = false;
    bool ignore_eos     = false;
    bool display_prompt = true;
    bool verbose        = false;
    // Constrained output: --grammar, --grammar-file, --json-schema or --json-schema-file,
    // parsed (nullptr: none).
    std::shared_ptr<const gk::run::Grammar> grammar;
};

/** Parse argv. Returns the exit code to end with (0 after --help, 1 after an error,
 *  with the message printed) or nullopt to run. */
std::optional<int> parse_options(int argc, char ** argv, run_options & opt);

} // namespace gk_run_tool
