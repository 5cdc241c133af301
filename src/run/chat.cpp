// chat.cpp - see chat.h. The markup of each format is that of the models' published chat
// templates (Llama 3 instruct, Gemma instruct, ChatML as used by Qwen).
#include "chat.h"

namespace gk::run {

namespace {

struct format {
    chat_template id;
    const char *  name;
    const char *  marker;        // a control token that only this format uses
    const char *  turn_end;      // closes every turn
};

constexpr format k_formats[] = {
    {chat_template::llama3, "llama3", "<|start_header_id|>", "<|eot_id|>"},
    {chat_template::gemma, "gemma", "<start_of_turn>", "<end_of_turn>\n"},
    {chat_template::chatml, "chatml", "<|im_start|>", "<|im_end|>\n"},
};

const format & info(chat_template t) {
    for (const format & f : k_formats) {
        if (f.id == t) return f;
    }
    return k_formats[0];
}

std::string header(chat_template t, std::string_view role) {
    std::string s;
    switch (t) {
        case chat_template::llama3: s = "<|start_header_id|>" + std::string(role) + "<|end_header_id|>\n\n"; break;
        case chat_template::gemma: s = "<start_of_turn>" + std::string(role == "assistant" ? "model" : role) + "\n"; break;
        case chat_template::chatml: s = "<|im_start|>" + std::string(role) + "\n"; break;
    }
    return s;
}

/** True when `text` is a single control token of the vocabulary. */
bool has_control_token(const Tokenizer & tok, const char * text) {
    const auto ids = tok.encode(text, false, true);
    return ids.size() == 1 && tok.type_of(ids[0]) == token_type::control;
}

} // namespace

const char * chat_template_name(chat_template t) { return info(t).name; }

std::optional<chat_template> chat_template_from_name(std::string_view name) {
    for (const format & f : k_formats) {
        if (name == f.name) return f.id;
    }
    return std::nullopt;
}

std::optional<chat_template> detect_chat_template(const gk_gguf * gguf, const Tokenizer & tok) {
    size_t       len  = 0;
    const auto * v    = gk_gguf_get(gguf, "tokenizer.chat_template");
    const char * text = v ? gk_gguf_value_str(v, &len) : nullptr;
    if (text) {
        const std::string_view tmpl(text, len);
        for (const format & f : k_formats) {
            if (tmpl.find(f.marker) != std::string_view::npos) return f.id;
        }
    }
    for (const format & f : k_formats) {
        if (has_control_token(tok, f.marker)) return f.id;
    }
    return std::nullopt;
}

std::string chat_user_turn(chat_template t, std::string_view system, std::string_view user, bool after_reply) {
    const std::string end = info(t).turn_end;
    std::string       s   = after_reply ? end : "";
    if (!system.empty()) {
        if (t == chat_template::gemma) {
            // Gemma has no system role: the system text leads the first user message.
            return s + header(t, "user") + std::string(system) + "\n\n" + std::string(user) + end +
                   header(t, "assistant");
        }
        s += header(t, "system") + std::string(system) + end;
    }
    return s + header(t, "user") + std::string(user) + end + header(t, "assistant");
}

} // namespace gk::run
