// chat.h - chat prompt formats (the turn markup of llama 3, gemma and ChatML models).
//
// A conversation is fed turn by turn: each user turn is one piece of text that closes the
// assistant's previous reply, opens the user's turn, and opens the assistant's reply, so
// the KV cache keeps the whole conversation and only the new text is evaluated. The text
// holds the models' control tokens literally ("<start_of_turn>"); tokenize it with
// parse_special. The BOS token is not part of it (the tokenizer adds it to the first turn).
#pragma once

#include "tokenizer.h"

#include "gk/gguf.h"

#include <optional>
#include <string>
#include <string_view>

namespace gk::run {

enum class chat_template { llama3, gemma, chatml };

/** "llama3", "gemma", "chatml". */
const char * chat_template_name(chat_template t);
/** The template called `name` (as chat_template_name writes it), or nullopt. */
std::optional<chat_template> chat_template_from_name(std::string_view name);

/** The format the model expects: from the markers in tokenizer.chat_template when the
 *  file has one, else from the control tokens in the vocabulary. nullopt when neither
 *  names a known format. */
std::optional<chat_template> detect_chat_template(const gk_gguf * gguf, const Tokenizer & tok);

/** The text of one user turn: the end of the assistant's previous reply (when
 *  `after_reply`), the system prompt (when not empty; give it with the first turn only),
 *  the user's message, and the start of the assistant's reply. */
std::string chat_user_turn(chat_template t, std::string_view system, std::string_view user, bool after_reply);

} // namespace gk::run
