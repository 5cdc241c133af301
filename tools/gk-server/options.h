// options.h - gk-server's command line: llama-server's option names for what it takes.
#pragma once

#include "run/pooling.h"

#include "gk/gk.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gk_server {

struct server_options {
    std::string              model;                   // -m (required)
    std::string              alias;                   // -a: the model id /v1/models reports (default: file name)
    std::string              host          = "127.0.0.1";
    int                      port          = 8080;    // 0: any free port (printed)
    int64_t                  n_ctx         = 4096;    // per slot; 0: the model's training context
    bool                     n_ctx_given   = false;
    int64_t                  n_ubatch      = 512;
    int                      n_threads     = 0;       // 0 / -1: every hardware thread
    int                      n_threads_batch = 0;     // steps of several tokens; 0 / -1: n_threads
    int                      n_parallel    = 1;       // slots: requests served at once
    size_t                   max_body      = 1 << 20; // bytes of a request body
    std::vector<std::string> api_keys;                // --api-key (comma-separated), --api-key-file (one a line)
    std::string              chat_template;           // a chat_template_name(); default: the model's
    enum gk_type             type_k        = GK_TYPE_F16;  // -ctk: KV cache types
    enum gk_type             type_v        = GK_TYPE_F16;  // -ctv
    bool                     embeddings    = false;   // --embeddings: /v1/embeddings is served
    std::optional<gk::run::pooling> pooling;          // --pooling; default: the model's, else mean
    bool                     verbose       = false;   // one line per request on stderr
};

/** Parse argv. Returns the exit code to end with (0 after --help; 1 after an error, with
 *  one line "gk-server: error: ..." on stderr) or nullopt to run. An option and its value
 *  are two arguments or one ("--port=0"); an unknown option is an error. */
std::optional<int> parse_options(int argc, char ** argv, server_options & opt);

} // namespace gk_server
