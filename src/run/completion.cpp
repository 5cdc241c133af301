// completion.cpp - see completion.h.
#include "completion.h"

#include "stop_text.h"

#include <algorithm>

namespace gk::run {

namespace {

/** The number of leading tokens `a` and `b` share. */
size_t common_prefix(std::span<const token_id> a, std::span<const token_id> b) {
    const size_t n = std::min(a.size(), b.size());
    size_t       i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

} // namespace

sampler_context sampling_context(const sampler_params & s, const Tokenizer & tok, int64_t n_ctx, bool ignore_eos) {
    sampler_context c;
    c.n_ctx = n_ctx;
    if (ignore_eos) c.banned = tok.eog_tokens();
    if (s.dry_enabled()) c.dry_breakers = dry_breakers_from_text(tok, s.dry_sequence_breakers);
    return c;
}

bool run_completion(Session & session, const Model & model, const completion_params & p, const completion_sink & sink,
                    completion_result & out, std::string * error) {
    out        = completion_result{};
    const auto n_prompt = static_cast<int64_t>(p.prompt.size());
    out.n_prompt        = n_prompt;
    if (n_prompt == 0) {
        if (error) *error = "the prompt has no tokens";
        return false;
    }
    if (n_prompt > session.n_ctx()) {
        if (error) {
            *error = "the prompt has " + std::to_string(n_prompt) + " tokens but the context holds " +
                     std::to_string(session.n_ctx());
        }
        return false;
    }
    // Keep the cells of the common beginning; at least the last prompt token is evaluated
    // again, for its logits.
    const size_t keep = std::min(common_prefix(session.tokens(), p.prompt), p.prompt.size() - 1);
    session.truncate(static_cast<int64_t>(keep));
    out.n_cached = static_cast<int64_t>(keep);
    std::vector<float> logits;
    if (!session.eval(std::span<const token_id>(p.prompt).subspan(keep), logits, error)) {
        session.truncate(0);
        if (error) *error = "evaluating the prompt: " + *error;
        return false;
    }

    const Tokenizer & tok = model.tokenizer();
    Sampler           sampler(p.sampling, sampling_context(p.sampling, tok, session.n_ctx(), p.ignore_eos));
    for (token_id id : p.prompt) sampler.accept(id);
    Detokenizer    detok(tok, false, p.continues_text);
    const StopText stops(p.stop);
    size_t         sent    = 0;      // bytes of out.text given to the sink
    bool           stopped = false;  // a stop string cut the text

    out.finish = finish_reason::length;
    for (int64_t n = 0; p.n_predict < 0 || n < p.n_predict; ++n) {
        const token_id id = sampler.sample(logits);
        sampler.accept(id);
        if (!p.ignore_eos && tok.is_eog(id)) {
            out.finish = finish_reason::stop;
            break;
        }
        ++out.n_generated;
        const size_t checked = out.text.size();
        out.text += detok.push(id);
        if (const size_t at = stops.find(out.text, checked); at != std::string::npos) {
            out.text.resize(at);
            out.finish = finish_reason::stop;
            stopped    = true;
            break;
        }
        // The last token needs no evaluation; neither does one that fills the context.
        if (n + 1 == p.n_predict || session.n_past() >= session.n_ctx()) break;
        const size_t end = stops.stream_end(out.text);
        if (!sink(std::string_view(out.text).substr(sent, end - sent))) {
            out.finish = finish_reason::cancelled;
            return true;
        }
        sent = end;
        if (!session.eval(std::span<const token_id>(&id, 1), logits, error)) {
            session.truncate(0);
            if (error) *error = "evaluating generated token " + std::to_string(n + 1) + ": " + *error;
            return false;
        }
    }
    if (!stopped) {
        const size_t checked = out.text.size();
        out.text += detok.finish();
        if (const size_t at = stops.find(out.text, checked); at != std::string::npos) {
            out.text.resize(at);
            out.finish = finish_reason::stop;
        }
    }
    if (sent < out.text.size() && !sink(std::string_view(out.text).substr(sent))) out.finish = finish_reason::cancelled;
    return true;
}

} // namespace gk::run
