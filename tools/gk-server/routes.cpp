// routes.cpp - see routes.h.
#include "routes.h"

#include "api_error.h"
#include "request.h"

#include "run/completion.h"

#include <httplib.h>
#include <openssl/evp.h>  // EVP_EncodeBlock: base64

#include <chrono>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <memory>

namespace gk_server {

extern const char        chat_html[];  // chat.html, embedded at build time (embed_file.cmake)
extern const std::size_t chat_html_size;

namespace {

std::string dump(const json & j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_json(httplib::Response & res, const json & j, int status = 200) {
    res.status = status;
    res.set_content(dump(j), "application/json");
}

void send_error(httplib::Response & res, const api_error & e) {
    res.status = e.status;
    res.set_content(error_body(e.status, e.message), "application/json");
}

/** Whether the request carries one of the API keys ("Authorization: Bearer KEY"); always
 *  true without --api-key. The comparison takes the same time wherever a key differs. */
bool authorized(const server_state & st, const httplib::Request & req) {
    if (st.opt.api_keys.empty()) return true;
    const std::string auth   = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (auth.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string given = auth.substr(prefix.size());
    bool              ok    = false;
    for (const std::string & key : st.opt.api_keys) {
        unsigned char diff = given.size() == key.size() ? 0 : 1;
        for (size_t i = 0; i < given.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ key[i % key.size()]);
        ok |= diff == 0;
    }
    return ok;
}

const api_error k_unauthorized{401, "invalid or missing API key (send 'Authorization: Bearer KEY')"};

const char * finish_name(gk::run::finish_reason f) {
    return f == gk::run::finish_reason::length ? "length" : "stop";
}

json usage(const gk::run::completion_result & r) {
    return {{"prompt_tokens", r.n_prompt},
            {"completion_tokens", r.n_generated},
            {"total_tokens", r.n_prompt + r.n_generated}};
}

/** One request's identity in its responses. */
struct response_head {
    bool        chat = false;
    std::string id;
    int64_t     created = 0;
    std::string model;
};

/** A streamed chunk carrying `text` (chat: a delta; `role`: the first chunk's role), or
 *  the end with `finish` (nullptr: not the end). */
json chunk(const response_head & h, const std::string & text, const char * finish, bool role = false) {
    json choice = {{"index", 0}, {"finish_reason", finish ? json(finish) : json(nullptr)}};
    if (h.chat) {
        json delta = json::object();
        if (role) delta["role"] = "assistant";
        if (!text.empty() || role) delta["content"] = text;
        choice["delta"] = delta;
    } else {
        choice["text"]     = text;
        choice["logprobs"] = nullptr;
    }
    return {{"id", h.id},
            {"object", h.chat ? "chat.completion.chunk" : "text_completion"},
            {"created", h.created},
            {"model", h.model},
            {"choices", json::array({choice})}};
}

/** The non-streamed response. */
json full_response(const response_head & h, const gk::run::completion_result & r) {
    json choice = {{"index", 0}, {"finish_reason", finish_name(r.finish)}};
    if (h.chat) {
        choice["message"] = {{"role", "assistant"}, {"content", r.text}};
    } else {
        choice["text"]     = r.text;
        choice["logprobs"] = nullptr;
    }
    return {{"id", h.id},
            {"object", h.chat ? "chat.completion" : "text_completion"},
            {"created", h.created},
            {"model", h.model},
            {"choices", json::array({choice})},
            {"usage", usage(r)}};
}

void handle_generation(server_state & st, const httplib::Request & req, httplib::Response & res, bool chat) {
    if (!authorized(st, req)) return send_error(res, k_unauthorized);
    json body;
    if (auto e = parse_body(req.body, body)) return send_error(res, *e);
    auto         g   = std::make_shared<generation_request>();
    const auto & tok = st.model.tokenizer();
    if (auto e = parse_generation(body, tok, *g)) return send_error(res, *e);
    if (auto e = chat ? parse_messages(body, tok, st.tmpl, *g) : parse_prompt(body, tok, *g)) {
        return send_error(res, *e);
    }
    const auto n_prompt = static_cast<int64_t>(g->params.prompt.size());
    if (n_prompt > st.n_ctx) {
        return send_error(res, {400, "the prompt has " + std::to_string(n_prompt) + " tokens but the context holds " +
                                         std::to_string(st.n_ctx) + " (raise -c)"});
    }
    auto head     = std::make_shared<response_head>();
    head->chat    = chat;
    head->id      = (chat ? "chatcmpl-" : "cmpl-") + std::to_string(st.next_id++);
    head->created = static_cast<int64_t>(std::time(nullptr));
    head->model   = st.model_id;

    if (!g->stream) {
        const SlotPool::lease slot = st.slots.acquire();
        if (!slot.session()) return send_error(res, {503, "the server is stopping"});
        gk::run::completion_result r;
        std::string                error;
        const auto                 keep_going = [&](std::string_view) { return !st.stopping; };
        if (!gk::run::run_completion(*slot.session(), st.model, g->params, keep_going, r, &error)) {
            return send_error(res, {500, error});
        }
        if (r.finish == gk::run::finish_reason::cancelled) return send_error(res, {503, "the server is stopping"});
        return send_json(res, full_response(*head, r));
    }

    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [&st, g, head](size_t, httplib::DataSink & sink) {
        bool       alive = true;  // the client still reads
        const auto send  = [&](const std::string & event) {
            const std::string s = "data: " + event + "\n\n";
            alive               = alive && sink.write(s.data(), s.size());
            return alive;
        };
        const SlotPool::lease slot = st.slots.acquire();
        if (!slot.session()) {
            send(error_body(503, "the server is stopping"));
        } else {
            if (head->chat) send(dump(chunk(*head, "", nullptr, true)));
            gk::run::completion_result r;
            std::string                error;
            const auto                 on_text = [&](std::string_view t) {
                if (st.stopping) return false;
                return t.empty() || send(dump(chunk(*head, std::string(t), nullptr)));
            };
            if (!gk::run::run_completion(*slot.session(), st.model, g->params, on_text, r, &error)) {
                send(error_body(500, error));
            } else if (r.finish != gk::run::finish_reason::cancelled) {
                send(dump(chunk(*head, "", finish_name(r.finish))));
                if (g->include_usage) {
                    json u       = chunk(*head, "", nullptr);
                    u["choices"] = json::array();
                    u["usage"]   = usage(r);
                    send(dump(u));
                }
            }
        }
        send("[DONE]");
        if (alive) sink.done();
        return alive;
    });
}

/** Little-endian f32 bytes of `v` in base64 (OpenAI's encoding_format "base64"), by
 *  OpenSSL (which cpp-httplib's Debian package brings). */
std::string base64_floats(const std::vector<float> & v) {
    std::string bytes(v.size() * sizeof(float), '\0');
    for (size_t i = 0; i < v.size(); ++i) {
        uint32_t u;
        std::memcpy(&u, &v[i], sizeof u);
        for (int b = 0; b < 4; ++b) bytes[i * 4 + static_cast<size_t>(b)] = static_cast<char>((u >> (8 * b)) & 0xFF);
    }
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int   n = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                                    reinterpret_cast<const unsigned char *>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<size_t>(n));
    return out;
}

void handle_embeddings(server_state & st, const httplib::Request & req, httplib::Response & res) {
    if (!authorized(st, req)) return send_error(res, k_unauthorized);
    if (!st.opt.embeddings) {
        return send_error(res, {501, "this server does not serve embeddings: start it with --embeddings"});
    }
    json body;
    if (auto e = parse_body(req.body, body)) return send_error(res, *e);
    embedding_request er;
    const int64_t     n_embd = st.model.hp().n_embd;
    if (auto e = parse_embedding(body, st.model.tokenizer(), n_embd, er)) return send_error(res, *e);
    int64_t n_tokens = 0;
    for (size_t i = 0; i < er.inputs.size(); ++i) {
        const auto n = static_cast<int64_t>(er.inputs[i].size());
        if (n > st.n_ctx) {
            return send_error(res, {400, "input " + std::to_string(i) + " has " + std::to_string(n) +
                                             " tokens but the context holds " + std::to_string(st.n_ctx) +
                                             " (raise -c)"});
        }
        n_tokens += n;
    }
    const SlotPool::lease slot = st.slots.acquire();
    if (!slot.session()) return send_error(res, {503, "the server is stopping"});
    json               data = json::array();
    std::vector<float> hidden;
    for (size_t i = 0; i < er.inputs.size(); ++i) {
        if (st.stopping) return send_error(res, {503, "the server is stopping"});
        std::string error;
        slot.session()->truncate(0);  // every input from an empty cache
        if (!slot.session()->embed(er.inputs[i], hidden, &error)) return send_error(res, {500, error});
        const std::vector<float> v = gk::run::pool_hidden(hidden, n_embd, st.pooling, true);
        data.push_back({{"object", "embedding"},
                        {"index", i},
                        {"embedding", er.base64 ? json(base64_floats(v)) : json(v)}});
    }
    send_json(res, {{"object", "list"},
                    {"data", data},
                    {"model", st.model_id},
                    {"usage", {{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}}});
}

void handle_tokenize(server_state & st, const httplib::Request & req, httplib::Response & res) {
    if (!authorized(st, req)) return send_error(res, k_unauthorized);
    json body;
    if (auto e = parse_body(req.body, body)) return send_error(res, *e);
    const auto it = body.find("content");
    if (it == body.end() || !it->is_string()) return send_error(res, {400, "'content' must be a string"});
    bool add_special = false, parse_special = true, with_pieces = false;
    for (auto [key, flag] : {std::pair{"add_special", &add_special}, std::pair{"parse_special", &parse_special},
                             std::pair{"with_pieces", &with_pieces}}) {
        const auto f = body.find(key);
        if (f == body.end() || f->is_null()) continue;
        if (!f->is_boolean()) return send_error(res, {400, std::string("'") + key + "' must be true or false"});
        *flag = f->get<bool>();
    }
    const auto & tok = st.model.tokenizer();
    const auto   ids = tok.encode(it->get<std::string>(), add_special, parse_special);
    json         out = json::array();
    for (gk::run::token_id id : ids) {
        if (with_pieces) {
            out.push_back({{"id", id}, {"piece", tok.token_to_piece(id, true)}});
        } else {
            out.push_back(id);
        }
    }
    send_json(res, {{"tokens", out}});
}

void handle_detokenize(server_state & st, const httplib::Request & req, httplib::Response & res) {
    if (!authorized(st, req)) return send_error(res, k_unauthorized);
    json body;
    if (auto e = parse_body(req.body, body)) return send_error(res, *e);
    const auto   it  = body.find("tokens");
    const auto & tok = st.model.tokenizer();
    if (it == body.end() || !it->is_array()) return send_error(res, {400, "'tokens' must be an array of token ids"});
    std::vector<gk::run::token_id> ids;
    for (const json & v : *it) {
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= tok.n_tokens()) {
            return send_error(res, {400, "'tokens': " + v.dump() + " is not a token id of the vocabulary (0.." +
                                             std::to_string(tok.n_tokens() - 1) + ")"});
        }
        ids.push_back(static_cast<gk::run::token_id>(v.get<int64_t>()));
    }
    send_json(res, {{"content", tok.decode(ids, false)}});  // control tokens give no text
}

} // namespace

void install_routes(httplib::Server & svr, server_state & st) {
    svr.set_payload_max_length(st.opt.max_body);
    svr.Get("/health", [&st](const httplib::Request &, httplib::Response & res) {
        const int busy = st.slots.busy();
        send_json(res, {{"status", "ok"}, {"slots_idle", st.slots.size() - busy}, {"slots_processing", busy}});
    });
    // The chat page holds no data: it is served without a key (the API calls it makes need one).
    const httplib::Server::Handler page = [](const httplib::Request &, httplib::Response & res) {
        res.set_content(chat_html, chat_html_size, "text/html; charset=utf-8");
    };
    svr.Get("/", page);
    svr.Get("/index.html", page);
    svr.Get("/v1/models", [&st](const httplib::Request & req, httplib::Response & res) {
        if (!authorized(st, req)) return send_error(res, k_unauthorized);
        const json m = {{"id", st.model_id},
                        {"object", "model"},
                        {"created", static_cast<int64_t>(std::time(nullptr))},
                        {"owned_by", "gk"},
                        {"meta", {{"n_ctx", st.n_ctx}, {"n_vocab", st.model.hp().n_vocab}}}};
        send_json(res, {{"object", "list"}, {"data", json::array({m})}});
    });
    svr.Post("/v1/completions",
             [&st](const httplib::Request & q, httplib::Response & r) { handle_generation(st, q, r, false); });
    svr.Post("/completions",
             [&st](const httplib::Request & q, httplib::Response & r) { handle_generation(st, q, r, false); });
    svr.Post("/v1/chat/completions",
             [&st](const httplib::Request & q, httplib::Response & r) { handle_generation(st, q, r, true); });
    svr.Post("/chat/completions",
             [&st](const httplib::Request & q, httplib::Response & r) { handle_generation(st, q, r, true); });
    svr.Post("/v1/embeddings",
             [&st](const httplib::Request & q, httplib::Response & r) { handle_embeddings(st, q, r); });
    svr.Post("/embeddings", [&st](const httplib::Request & q, httplib::Response & r) { handle_embeddings(st, q, r); });
    svr.Post("/tokenize", [&st](const httplib::Request & q, httplib::Response & r) { handle_tokenize(st, q, r); });
    svr.Post("/detokenize", [&st](const httplib::Request & q, httplib::Response & r) { handle_detokenize(st, q, r); });

    // httplib's own errors (no route, a body over --max-body, a malformed request) get a
    // JSON body; the handlers' errors already have one.
    const httplib::Server::HandlerWithResponse on_error = [&st](const httplib::Request & req,
                                                                 httplib::Response &      res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (res.status == 404 && !authorized(st, req)) {
            send_error(res, k_unauthorized);
        } else if (res.status == 404) {
            send_error(res, {404, "no route " + req.method + " " + req.path});
        } else if (res.status == 413) {
            send_error(res, {413, "the request body is larger than --max-body (" + std::to_string(st.opt.max_body) +
                                      " bytes)"});
        } else {
            send_error(res, {res.status, std::string("HTTP error ") + std::to_string(res.status)});
        }
        return httplib::Server::HandlerResponse::Handled;
    };
    svr.set_error_handler(on_error);
    // A Content-Length that is not a decimal byte count (negative, signed, not a number):
    // 400 before the body is read, marked "Connection: close" since where this request ends
    // is unknown (httplib 0.11 still keeps the connection until its keep-alive timeout).
    // httplib itself would read "-1" as a huge length and answer 413.
    svr.set_pre_routing_handler([](const httplib::Request & req, httplib::Response & res) {
        const std::string v = req.get_header_value("Content-Length");
        if (!req.has_header("Content-Length") ||
            (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos)) {
            return httplib::Server::HandlerResponse::Unhandled;
        }
        send_error(res, {400, "Content-Length '" + v + "' is not a byte count"});
        res.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
    });
    if (st.opt.verbose) {
        // A request httplib refused before parsing its request line (414) has no method or
        // path to show.
        svr.set_logger([](const httplib::Request & req, const httplib::Response & res) {
            if (req.method.empty()) {
                std::fprintf(stderr, "gk-server: (request line not parsed) %d\n", res.status);
            } else {
                std::fprintf(stderr, "gk-server: %s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
            }
        });
    }
}

} // namespace gk_server
