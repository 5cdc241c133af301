// routes.h - gk-server's HTTP endpoints on a cpp-httplib server:
//   GET  /, /index.html          the chat page, chat.html embedded at build time (no API key needed)
//   GET  /health                 {"status": "ok", ...} (no API key needed)
//   GET  /v1/models              the one model
//   POST /v1/completions         OpenAI completions, streamed as server-sent events with "stream": true
//   POST /v1/chat/completions    OpenAI chat completions, in the model's chat template
//   POST /v1/embeddings          OpenAI embeddings (with --embeddings), pooled and of unit length
//   POST /tokenize, /detokenize  llama-server's token endpoints
// Every error is OpenAI's JSON error body (api_error.h) with a 4xx / 5xx status.
#pragma once

#include "options.h"
#include "slots.h"

#include "run/chat.h"
#include "run/model.h"
#include "run/pooling.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace httplib {
class Server;
}

namespace gk_server {

/** What the handlers share. */
struct server_state {
    const server_options &  opt;
    const gk::run::Model &  model;
    gk::run::chat_template  tmpl;
    SlotPool &              slots;
    std::string             model_id;       // the id /v1/models reports
    int64_t                 n_ctx = 0;      // each slot's context
    gk::run::pooling        pooling = gk::run::pooling::mean;  // of /v1/embeddings
    std::atomic<bool>       stopping{false};
    std::atomic<uint64_t>   next_id{1};
};

/** Register the routes, the API-key check, the JSON error bodies and --max-body on `svr`. */
void install_routes(httplib::Server & svr, server_state & st);

} // namespace gk_server
