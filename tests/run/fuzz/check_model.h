// check_model.h - what must hold for any input to gk-run's model loading, checked by the
// fuzz target (fuzz-model.cpp) and by the replay of its seeds and regressions
// (test-gk-run-input). An input the GGUF reader accepts goes through the tokenizer, the
// hyperparameters and the binding of every weight (Model::load); a model that loads gets
// a session whose first evaluation of a short prompt gives one row of n_vocab logits.
// Every refusal must come with a message.
#pragma once

#include "run/model.h"
#include "run/model_session.h"

#include <cstdint>
#include <string>
#include <vector>

namespace model_check {

/** "" when the input was refused cleanly or ran; else what went wrong. */
inline std::string check_model(const uint8_t * data, size_t size) {
    gk_gguf_error err{};
    gk_gguf *     g = gk_gguf_open_memory(data, size, &err);
    if (!g) return err.message[0] ? "" : "gk_gguf_open_memory refused without a message";
    std::string error;
    const auto  model = gk::run::Model::load(g, "input", {}, &error);
    if (!model) return error.empty() ? "Model::load refused without a message" : "";
    gk::run::session_params sp;
    sp.n_ctx    = 8;
    sp.n_ubatch = 4;
    auto session = gk::run::Session::create(*model, sp, &error);
    if (!session) return error.empty() ? "Session::create refused without a message" : "";
    const gk::run::Tokenizer &     tok = model->tokenizer();
    std::vector<gk::run::token_id> ids = tok.encode("a b.<s>", true, true);
    if (ids.size() > 6) ids.resize(6);
    if (ids.empty()) ids.push_back(0);
    for (const gk::run::token_id id : ids) {
        if (id < 0 || id >= tok.n_tokens()) return "encode gave id " + std::to_string(id) + " outside the vocabulary";
    }
    std::vector<float> logits;
    if (!session->eval(ids, logits, &error)) return error.empty() ? "eval failed without a message" : "";
    if (static_cast<int64_t>(logits.size()) != model->hp().n_vocab) {
        return "eval gave " + std::to_string(logits.size()) + " logits for a vocabulary of " +
               std::to_string(model->hp().n_vocab);
    }
    (void) tok.decode(ids, true);
    return "";
}

} // namespace model_check
