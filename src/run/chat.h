// chat.h - chat templates: the turn markup of the model families llama.cpp formats
// without a template engine (src/llama-chat.cpp: llm_chat_detect_template and
// llm_chat_apply_template), with the same names, the same detection rules and the same
// text for a conversation.
//
// A template is found from the Jinja text in tokenizer.chat_template by substrings that
// only that family's template has (the first family in table order whose rule matches),
// or forced by name (--chat-template). A Jinja template that matches no family is
// reported, not guessed: there is no template engine here.
//
// The formatted text holds the models' control tokens literally ("<|im_start|>");
// tokenize it with parse_special. The BOS token is not part of it unless the family
// writes it inside the conversation (monarch, gigachat, yandex).
#pragma once

#include "tokenizer.h"

#include "gk/gguf.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gk::run {

/** The families, in detection order (the first whose rule matches a template wins). */
enum class chat_template {
    phi4,
    smolvlm,
    chatml,
    mistral_v7,
    mistral_v7_tekken,
    mistral_v1,
    mistral_v3_tekken,
    mistral_v3,
    llama2_sys_strip,
    llama2_sys_bos,
    llama2_sys,
    llama2,
    phi3,
    chatglm4,
    falcon3,
    glmedge,
    zephyr,
    monarch,
    gemma,
    orion,
    openchat,
    vicuna_orca,
    vicuna,
    deepseek,
    command_r,
    llama3,
    chatglm3,
    minicpm,
    deepseek2,
    deepseek3,
    exaone4,
    exaone3,
    rwkv_world,
    granite,
    gigachat,
    megrez,
    yandex,
    bailing,
    llama4,
    dots1,
    hunyuan_moe,
    gpt_oss,
    kimi_k2,
    seed_oss,
    count_  // not a template
};

/** How a family treats a system message. */
enum class chat_system_role {
    native,  // a turn of its own
    folded,  // written into the first user turn (gemma, orion, llama2 without <<SYS>>)
    none,    // the family has no place for it (yandex)
};

enum class chat_role { system, user, assistant };

struct chat_message {
    chat_role   role;
    std::string content;
};

/** The name llama.cpp gives the family ("chatml", "mistral-v7", "llama2-sys-bos", ...). */
const char * chat_template_name(chat_template t);
/** The template called `name` (as chat_template_name writes it), or nullopt. */
std::optional<chat_template> chat_template_from_name(std::string_view name);
/** Every name, comma-separated, in table order (for help and error messages). */
std::string      chat_template_names();
chat_system_role chat_template_system_role(chat_template t);

/** The family of a Jinja chat template (or of a text that is a template's name), or
 *  nullopt when no family's rule matches it. */
std::optional<chat_template> chat_template_detect(std::string_view jinja);

/** The family a model asks for: from tokenizer.chat_template when the file has one (then
 *  nullopt when it matches no family, and `*jinja` tells that there was one), else from
 *  the control tokens in the vocabulary (llama3, gemma, chatml markers). */
std::optional<chat_template> detect_chat_template(const gk_gguf * gguf, const Tokenizer & tok, bool * had_jinja);

/** The family for a conversation: the one called `name` when it is not empty, else the
 *  model's (detect_chat_template). nullopt and a message in `*error` naming
 *  --chat-template and its choices when the name is unknown or the model's template
 *  matches no family (there is no Jinja engine) or the model has none. */
std::optional<chat_template> choose_chat_template(std::string_view name, const gk_gguf * gguf, const Tokenizer & tok,
                                                  std::string * error);

/** The text of `messages` in family `t`'s markup; `add_assistant`: end with the opening
 *  of the assistant's reply (the generation prompt). */
std::string chat_format(chat_template t, std::span<const chat_message> messages, bool add_assistant);

/** `text` (a formatted conversation's start) without the BOS token's text in front when
 *  the tokenizer puts BOS there itself (`add_bos`): the families that write BOS in their
 *  markup (gigachat, yandex) then get one BOS, not two. */
std::string drop_template_bos(std::string text, const Tokenizer & tok, bool add_bos);

/** A conversation fed to a model turn by turn: each call returns only the text to
 *  evaluate next, as llama-cli does (the formatted conversation with the new message,
 *  minus the formatted conversation before it), so the KV cache keeps the whole chat. */
class chat_history {
public:
    explicit chat_history(chat_template t) : tmpl_(t) {}

    /** Record a system message (before the first user message; it is fed with it). */
    void add_system(std::string text);
    /** Record the user's message and return the text to evaluate: the end of the
     *  assistant's previous reply (its turn-closing markup, which the model's
     *  end-of-generation token may not have written), the user's turn and the opening of
     *  the assistant's reply. */
    std::string add_user(std::string text);
    /** Record the assistant's reply (the generated text, without its end token). */
    void add_assistant(std::string text);
    /** Forget the user message add_user just recorded (its text was not evaluated). */
    void drop_last_user();

private:
    chat_template             tmpl_;
    std::vector<chat_message> msgs_;
    size_t                    n_fed_ = 0;  // messages whose text add_user returned (or was generated)
    size_t                    n_fed_before_ = 0;  // n_fed_ before the last add_user (drop_last_user)
};

} // namespace gk::run
