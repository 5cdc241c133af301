// request.cpp - see request.h.
#include "request.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace gk_server {

namespace {

using gk::run::token_id;

api_error bad(const std::string & message) { return api_error{400, message}; }

/** Whether `key` is in `body` with a value other than null (null means "the default"). */
const json * field(const json & body, const char * key) {
    const auto it = body.find(key);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

/** A number field within [lo, hi]. */
std::optional<api_error> get_number(const json & body, const char * key, double lo, double hi, float & out) {
    const json * v = field(body, key);
    if (!v) return std::nullopt;
    if (!v->is_number()) return bad(std::string("'") + key + "' must be a number");
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
        return bad(std::string("'") + key + "' must be between " + json(lo).dump() + " and " + json(hi).dump() +
                   ", got " + v->dump());
    }
    out = static_cast<float>(d);
    return std::nullopt;
}

/** A whole-number field within [lo, hi] (a float with no fraction counts). */
std::optional<api_error> get_int(const json & body, const char * key, int64_t lo, int64_t hi, int64_t & out) {
    const json * v = field(body, key);
    if (!v) return std::nullopt;
    const auto range = [&] {
        return bad(std::string("'") + key + "' must be an integer from " + std::to_string(lo) + " to " +
                   std::to_string(hi) + ", got " + v->dump());
    };
    if (v->is_number_unsigned()) {
        const uint64_t u = v->get<uint64_t>();
        if (u > static_cast<uint64_t>(hi)) return range();
        out = static_cast<int64_t>(u);
    } else if (v->is_number_integer()) {
        out = v->get<int64_t>();
    } else if (v->is_number_float()) {
        const double d = v->get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || d < -9.0e18 || d > 9.0e18) {
            return bad(std::string("'") + key + "' must be an integer, got " + v->dump());
        }
        out = static_cast<int64_t>(d);
    } else {
        return bad(std::string("'") + key + "' must be an integer");
    }
    if (out < lo || out > hi) return range();
    return std::nullopt;
}

std::optional<api_error> get_bool(const json & body, const char * key, bool & out) {
    const json * v = field(body, key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return bad(std::string("'") + key + "' must be true or false");
    out = v->get<bool>();
    return std::nullopt;
}

/** The fields asking for what gk-server does not do. */
std::optional<api_error> refuse_unsupported(const json & body) {
    int64_t n = 1;
    if (auto e = get_int(body, "n", 1, 1, n)) return bad("'n' must be 1: gk-server gives one choice per request");
    bool echo = false;
    if (auto e = get_bool(body, "echo", echo)) return e;
    if (echo) return bad("'echo' is not supported");
    if (const json * v = field(body, "logprobs"); v && !(v->is_boolean() && !v->get<bool>())) {
        return bad("'logprobs' is not supported");
    }
    if (field(body, "top_logprobs")) return bad("'top_logprobs' is not supported");
    if (const json * v = field(body, "suffix"); v && !(v->is_string() && v->get<std::string>().empty())) {
        return bad("'suffix' is not supported");
    }
    if (const json * v = field(body, "tools"); v && !(v->is_array() && v->empty())) {
        return bad("'tools' is not supported");
    }
    // llama-server's constraint fields: gk-run's grammar sampler is not wired up here yet
    for (const char * key : {"grammar", "json_schema"}) {
        if (const json * v = field(body, key);
            v && !v->is_null() && !(v->is_string() && v->get<std::string>().empty())) {
            return bad(std::string("'") + key + "' is not supported");
        }
    }
    if (const json * v = field(body, "response_format")) {
        const bool text = v->is_object() && v->contains("type") && (*v)["type"] == "text";
        if (!text) return bad("'response_format' other than {\"type\": \"text\"} is not supported");
    }
    return std::nullopt;
}

/** Token ids from a JSON array, each inside the vocabulary. */
std::optional<api_error> get_tokens(const json & a, const char * key, const gk::run::Tokenizer & tok,
                                    std::vector<token_id> & out) {
    for (const json & v : a) {
        if (!v.is_number_integer()) return bad(std::string("'") + key + "' must hold token ids (integers)");
        const int64_t id = v.get<int64_t>();
        if (id < 0 || id >= tok.n_tokens()) {
            return bad(std::string("'") + key + "': token " + std::to_string(id) + " is not in the vocabulary (0.." +
                       std::to_string(tok.n_tokens() - 1) + ")");
        }
        out.push_back(static_cast<token_id>(id));
    }
    return std::nullopt;
}

/** gk-run's prompt: BOS in front as the vocabulary says, no control-token parsing; an
 *  empty prompt is BOS alone. */
std::optional<api_error> tokenize_text(const std::string & text, const gk::run::Tokenizer & tok, bool parse_special,
                                       generation_request & req) {
    req.params.prompt = tok.encode(text, true, parse_special);
    if (req.params.prompt.empty()) {
        if (tok.special().bos == gk::run::k_no_token) return bad("the prompt is empty and the model has no BOS token");
        req.params.prompt.push_back(tok.special().bos);
    }
    req.params.continues_text = !text.empty();
    return std::nullopt;
}

} // namespace

std::optional<api_error> parse_body(const std::string & text, json & body) {
    body = json::parse(text, nullptr, false);
    if (body.is_discarded()) return bad("the request body is not valid JSON");
    if (!body.is_object()) return bad("the request body must be a JSON object");
    return std::nullopt;
}

std::optional<api_error> parse_generation(const json & body, const gk::run::Tokenizer & tok, generation_request & req) {
    if (auto e = refuse_unsupported(body)) return e;
    auto & s = req.params.sampling;
    const double big = 1.0e9;
    if (auto e = get_number(body, "temperature", -big, big, s.temp)) return e;
    if (auto e = get_number(body, "top_p", 0.0, 1.0, s.top_p)) return e;
    if (auto e = get_number(body, "min_p", 0.0, 1.0, s.min_p)) return e;
    if (auto e = get_number(body, "typical_p", 0.0, 1.0, s.typical_p)) return e;
    if (auto e = get_number(body, "repeat_penalty", 1.0e-6, big, s.repeat_penalty)) return e;
    if (auto e = get_number(body, "frequency_penalty", -2.0, 2.0, s.frequency_penalty)) return e;
    if (auto e = get_number(body, "presence_penalty", -2.0, 2.0, s.presence_penalty)) return e;
    int64_t i = 0;
    if (auto e = get_int(body, "top_k", 0, std::numeric_limits<int32_t>::max(), i)) return e;
    if (field(body, "top_k")) s.top_k = static_cast<int>(i);
    if (auto e = get_int(body, "repeat_last_n", -1, std::numeric_limits<int32_t>::max(), i)) return e;
    if (field(body, "repeat_last_n")) s.repeat_last_n = static_cast<int>(i);
    if (auto e = get_int(body, "seed", -1, 0xFFFFFFFFll, i)) return e;
    if (field(body, "seed")) s.seed = i < 0 ? gk::run::k_random_seed : static_cast<uint32_t>(i);
    // The length: OpenAI's max_tokens (max_completion_tokens for chat), llama.cpp's n_predict.
    for (const char * key : {"n_predict", "max_tokens", "max_completion_tokens"}) {
        const int64_t lo = key[0] == 'n' ? -1 : 0;
        if (auto e = get_int(body, key, lo, std::numeric_limits<int32_t>::max(), i)) return e;
        if (field(body, key)) req.params.n_predict = i;
    }
    if (const json * v = field(body, "stop")) {
        if (v->is_string()) {
            req.params.stop = {v->get<std::string>()};
        } else if (v->is_array()) {
            for (const json & x : *v) {
                if (!x.is_string()) return bad("'stop' must be a string or an array of strings");
                req.params.stop.push_back(x.get<std::string>());
            }
        } else {
            return bad("'stop' must be a string or an array of strings");
        }
    }
    if (const json * v = field(body, "logit_bias")) {
        if (!v->is_object()) return bad("'logit_bias' must be an object of token ids and biases");
        for (const auto & [key, bias] : v->items()) {
            char *     end = nullptr;
            const long id  = std::strtol(key.c_str(), &end, 10);
            if (key.empty() || *end != '\0' || id < 0 || id >= tok.n_tokens()) {
                return bad("'logit_bias': '" + key + "' is not a token id of the vocabulary (0.." +
                           std::to_string(tok.n_tokens() - 1) + ")");
            }
            if (!bias.is_number() || !std::isfinite(bias.get<double>())) {
                return bad("'logit_bias': the bias of token " + key + " must be a number");
            }
            s.logit_biases.push_back({static_cast<token_id>(id), bias.get<float>()});
        }
    }
    if (auto e = get_bool(body, "stream", req.stream)) return e;
    if (const json * v = field(body, "stream_options")) {
        if (!v->is_object()) return bad("'stream_options' must be an object");
        if (auto e = get_bool(*v, "include_usage", req.include_usage)) return e;
    }
    if (auto e = get_bool(body, "ignore_eos", req.params.ignore_eos)) return e;
    return std::nullopt;
}

std::optional<api_error> parse_prompt(const json & body, const gk::run::Tokenizer & tok, generation_request & req) {
    const json * p = field(body, "prompt");
    if (!p) return bad("'prompt' is required");
    if (p->is_string()) return tokenize_text(p->get<std::string>(), tok, false, req);
    if (!p->is_array()) return bad("'prompt' must be a string, an array of one string or an array of token ids");
    if (p->size() == 1 && (*p)[0].is_string()) return tokenize_text((*p)[0].get<std::string>(), tok, false, req);
    if (!p->empty() && (*p)[0].is_string()) return bad("'prompt': one prompt per request (an array of one string)");
    if (p->empty()) return bad("'prompt' is an empty array");
    req.params.prompt.clear();
    if (auto e = get_tokens(*p, "prompt", tok, req.params.prompt)) return e;
    req.params.continues_text = !(req.params.prompt.size() == 1 && req.params.prompt[0] == tok.special().bos);
    return std::nullopt;
}

std::optional<api_error> parse_messages(const json & body, const gk::run::Tokenizer & tok,
                                        gk::run::chat_template tmpl, generation_request & req) {
    const json * m = field(body, "messages");
    if (!m) return bad("'messages' is required");
    if (!m->is_array() || m->empty()) return bad("'messages' must be a non-empty array");
    std::vector<gk::run::chat_message> msgs;
    for (size_t i = 0; i < m->size(); ++i) {
        const json &      msg = (*m)[i];
        const std::string at  = "'messages[" + std::to_string(i) + "]'";
        if (!msg.is_object()) return bad(at + " must be an object");
        const json * role = field(msg, "role");
        if (!role || !role->is_string()) return bad(at + ": 'role' must be a string");
        const std::string r = role->get<std::string>();
        gk::run::chat_role cr;
        if (r == "system" || r == "developer") {
            cr = gk::run::chat_role::system;
        } else if (r == "user") {
            cr = gk::run::chat_role::user;
        } else if (r == "assistant") {
            cr = gk::run::chat_role::assistant;
        } else {
            return bad(at + ": role '" + r + "' is not supported (system, developer, user, assistant)");
        }
        if (cr == gk::run::chat_role::system &&
            gk::run::chat_template_system_role(tmpl) == gk::run::chat_system_role::none) {
            return bad(std::string("the chat template ") + gk::run::chat_template_name(tmpl) + " has no system role");
        }
        std::string  text;
        const json * content = field(msg, "content");
        if (!content) {
            if (cr != gk::run::chat_role::assistant) return bad(at + ": 'content' is required");
        } else if (content->is_string()) {
            text = content->get<std::string>();
        } else if (content->is_array()) {
            for (const json & part : *content) {
                const bool is_text = part.is_object() && part.contains("type") && part["type"] == "text" &&
                                     part.contains("text") && part["text"].is_string();
                if (!is_text) return bad(at + ": only text content parts ({\"type\": \"text\", \"text\": ...})");
                text += part["text"].get<std::string>();
            }
        } else {
            return bad(at + ": 'content' must be a string or an array of text parts");
        }
        msgs.push_back({cr, std::move(text)});
    }
    std::string prompt = gk::run::chat_format(tmpl, msgs, true);
    prompt             = gk::run::drop_template_bos(std::move(prompt), tok, true);
    req.params.prompt  = tok.encode(prompt, true, true);
    if (req.params.prompt.empty()) return bad("the conversation formats to no tokens");
    req.params.continues_text = true;
    return std::nullopt;
}

std::optional<api_error> parse_embedding(const json & body, const gk::run::Tokenizer & tok, int64_t n_embd,
                                         embedding_request & req) {
    const json * in = field(body, "input");
    if (!in) return bad("'input' is required");
    req.inputs.clear();
    const auto text = [&](const json & t, const std::string & at) -> std::optional<api_error> {
        std::vector<token_id> ids = tok.encode(t.get<std::string>(), true, true);
        if (ids.empty()) return bad(at + " is empty and the model adds no BOS token");
        req.inputs.push_back(std::move(ids));
        return std::nullopt;
    };
    const char * k_shape = "'input' must be a string, an array of strings, an array of token ids or an array of "
                           "arrays of token ids";
    if (in->is_string()) {
        if (auto e = text(*in, "'input'")) return e;
    } else if (!in->is_array() || in->empty()) {
        return bad(in->is_array() ? "'input' is an empty array" : k_shape);
    } else if ((*in)[0].is_number_integer()) {
        req.inputs.emplace_back();
        if (auto e = get_tokens(*in, "input", tok, req.inputs.back())) return e;
    } else {
        for (size_t i = 0; i < in->size(); ++i) {
            const json &      item = (*in)[i];
            const std::string at   = "'input[" + std::to_string(i) + "]'";
            if (item.is_string()) {
                if (auto e = text(item, at)) return e;
            } else if (item.is_array() && !item.empty()) {
                req.inputs.emplace_back();
                if (auto e = get_tokens(item, "input", tok, req.inputs.back())) return e;
            } else {
                return bad(at + (item.is_array() ? " is an empty array" : " must be a string or an array of token ids"));
            }
        }
    }
    req.base64 = false;
    if (const json * f = field(body, "encoding_format")) {
        if (!f->is_string() || (*f != "float" && *f != "base64")) {
            return bad("'encoding_format' must be \"float\" or \"base64\"");
        }
        req.base64 = *f == "base64";
    }
    if (const json * d = field(body, "dimensions")) {
        if (!d->is_number_integer() || d->get<int64_t>() != n_embd) {
            return bad("'dimensions' must be the model's embedding size " + std::to_string(n_embd) +
                       " (gk-server does not shorten embeddings)");
        }
    }
    return std::nullopt;
}

} // namespace gk_server
