// chat.cpp - see chat.h. Detection substrings and turn markup are llama.cpp's
// (src/llama-chat.cpp), family by family; the code is this project's own: most families
// are a table row of per-role prefixes and suffixes, the few that carry state across
// turns (llama2, mistral v1/v3, monarch) have a function.
#include "chat.h"

#include <array>
#include <cctype>

namespace gk::run {

namespace {

using messages = std::span<const chat_message>;

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

enum class trim_mode { none, all, assistant };

/** The text around one turn; a null prefix: the family has no such turn. */
struct turn_markup {
    const char * prefix = nullptr;
    const char * suffix = nullptr;
};

/** A family whose turns are each prefix + content + suffix, by role. */
struct markup {
    const char * start;  // before the first message
    turn_markup  system, user, assistant;
    const char * generation;                  // opens the assistant's reply
    trim_mode    trim           = trim_mode::none;
    const char * fold_separator = nullptr;  // non-null: the system text leads the next user message, then this
};

std::string format_markup(const markup & m, messages msgs, bool add_assistant) {
    std::string out = m.start, pending_system;
    for (const chat_message & msg : msgs) {
        const bool trimmed =
            m.trim == trim_mode::all || (m.trim == trim_mode::assistant && msg.role == chat_role::assistant);
        std::string content = trimmed ? trim(msg.content) : msg.content;
        switch (msg.role) {
            case chat_role::system:
                if (m.fold_separator) {
                    pending_system += content;
                } else if (m.system.prefix) {
                    out += m.system.prefix + content + m.system.suffix;
                }  // else: no system role (gk-run refuses -sys for such a family)
                break;
            case chat_role::user:
                if (!pending_system.empty()) {
                    content = pending_system + m.fold_separator + content;
                    pending_system.clear();
                }
                out += m.user.prefix + content + m.user.suffix;
                break;
            case chat_role::assistant: out += m.assistant.prefix + content + m.assistant.suffix; break;
        }
    }
    if (add_assistant) out += m.generation;
    return out;
}

// clang-format off
// Each: the text before the first message; {prefix, suffix} of a system, user and assistant
// turn ({}: no system role); the generation prompt; trimming; the system-folding separator.
constexpr markup k_chatml{"",
    {"<|im_start|>system\n", "<|im_end|>\n"},
    {"<|im_start|>user\n", "<|im_end|>\n"},
    {"<|im_start|>assistant\n", "<|im_end|>\n"},
    "<|im_start|>assistant\n"};
constexpr markup k_phi4{"",
    {"<|im_start|>system<|im_sep|>", "<|im_end|>"},
    {"<|im_start|>user<|im_sep|>", "<|im_end|>"},
    {"<|im_start|>assistant<|im_sep|>", "<|im_end|>"},
    "<|im_start|>assistant<|im_sep|>"};
constexpr markup k_smolvlm{"<|im_start|>",
    {"", "\n\n"},
    {"User: ", "<end_of_utterance>\n"},
    {"Assistant: ", "<end_of_utterance>\n"},
    "Assistant:"};
constexpr markup k_mistral_v7{"",
    {"[SYSTEM_PROMPT] ", "[/SYSTEM_PROMPT]"},
    {"[INST] ", "[/INST]"},
    {" ", "</s>"},
    ""};
constexpr markup k_mistral_v7_tekken{"",
    {"[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"},
    {"[INST]", "[/INST]"},
    {"", "</s>"},
    ""};
constexpr markup k_phi3{"",
    {"<|system|>\n", "<|end|>\n"},
    {"<|user|>\n", "<|end|>\n"},
    {"<|assistant|>\n", "<|end|>\n"},
    "<|assistant|>\n"};
constexpr markup k_chatglm4{"[gMASK]<sop>",
    {"<|system|>\n", ""},
    {"<|user|>\n", ""},
    {"<|assistant|>\n", ""},
    "<|assistant|>"};
constexpr markup k_falcon3{"",
    {"<|system|>\n", "\n"},
    {"<|user|>\n", "\n"},
    {"<|assistant|>\n", "\n"},
    "<|assistant|>\n"};
constexpr markup k_glmedge{"",
    {"<|system|>\n", ""},
    {"<|user|>\n", ""},
    {"<|assistant|>\n", ""},
    "<|assistant|>"};
constexpr markup k_zephyr{"",
    {"<|system|>\n", "<|endoftext|>\n"},
    {"<|user|>\n", "<|endoftext|>\n"},
    {"<|assistant|>\n", "<|endoftext|>\n"},
    "<|assistant|>\n"};
constexpr markup k_gemma{"",
    {},
    {"<start_of_turn>user\n", "<end_of_turn>\n"},
    {"<start_of_turn>model\n", "<end_of_turn>\n"},
    "<start_of_turn>model\n", trim_mode::all, "\n\n"};
constexpr markup k_orion{"",
    {},
    {"Human: ", "\n\nAssistant: </s>"},
    {"", "</s>"},
    "", trim_mode::none, "\n\n"};
constexpr markup k_openchat{"",
    {"", "<|end_of_turn|>"},
    {"GPT4 Correct User: ", "<|end_of_turn|>"},
    {"GPT4 Correct Assistant: ", "<|end_of_turn|>"},
    "GPT4 Correct Assistant:"};
constexpr markup k_vicuna_orca{"",
    {"SYSTEM: ", "\n"},
    {"USER: ", "\n"},
    {"ASSISTANT: ", "</s>\n"},
    "ASSISTANT:"};
constexpr markup k_vicuna{"",
    {"", "\n\n"},
    {"USER: ", "\n"},
    {"ASSISTANT: ", "</s>\n"},
    "ASSISTANT:"};
constexpr markup k_deepseek{"",
    {"", ""},
    {"### Instruction:\n", "\n"},
    {"### Response:\n", "\n<|EOT|>\n"},
    "### Response:\n"};
constexpr markup k_command_r{"",
    {"<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", trim_mode::all};
constexpr markup k_llama3{"",
    {"<|start_header_id|>system<|end_header_id|>\n\n", "<|eot_id|>"},
    {"<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|>"},
    {"<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>"},
    "<|start_header_id|>assistant<|end_header_id|>\n\n", trim_mode::all};
constexpr markup k_chatglm3{"[gMASK]sop",
    {"<|system|>\n ", ""},
    {"<|user|>\n ", ""},
    {"<|assistant|>\n ", ""},
    "<|assistant|>"};
constexpr markup k_minicpm{"",
    {"", ""},
    {"<用户>", "<AI>"},
    {"", ""},
    "", trim_mode::all};
constexpr markup k_deepseek2{"",
    {"", "\n\n"},
    {"User: ", "\n\n"},
    {"Assistant: ", "<｜end▁of▁sentence｜>"},
    "Assistant:"};
constexpr markup k_deepseek3{"",
    {"", "\n\n"},
    {"<｜User｜>", ""},
    {"<｜Assistant｜>", "<｜end▁of▁sentence｜>"},
    "<｜Assistant｜>"};
constexpr markup k_exaone{"",
    {"[|system|]", "[|endofturn|]\n"},
    {"[|user|]", "\n"},
    {"[|assistant|]", "[|endofturn|]\n"},
    "[|assistant|]", trim_mode::all};
constexpr markup k_rwkv_world{"",
    {"System: ", "\n\n"},
    {"User: ", "\n\n"},
    {"Assistant: ", "\n\n"},
    "Assistant:", trim_mode::all};
constexpr markup k_granite{"",
    {"<|start_of_role|>system<|end_of_role|>", "<|end_of_text|>\n"},
    {"<|start_of_role|>user<|end_of_role|>", "<|end_of_text|>\n"},
    {"<|start_of_role|>assistant<|end_of_role|>", "<|end_of_text|>\n"},
    "<|start_of_role|>assistant<|end_of_role|>\n"};
constexpr markup k_gigachat{"<s>",
    {"", "<|message_sep|>"},
    {"user<|role_sep|>", "<|message_sep|>available functions<|role_sep|>[]<|message_sep|>"},
    {"assistant<|role_sep|>", "<|message_sep|>"},
    "assistant<|role_sep|>"};
constexpr markup k_megrez{"",
    {"<|role_start|>system<|role_end|>", "<|turn_end|>"},
    {"<|role_start|>user<|role_end|>", "<|turn_end|>"},
    {"<|role_start|>assistant<|role_end|>", "<|turn_end|>"},
    "<|role_start|>assistant<|role_end|>"};
constexpr markup k_yandex{"<s>",
    {},
    {" Пользователь: ", "\n\n"},
    {" Ассистент: ", "\n\n"},
    " Ассистент:[SEP]"};
constexpr markup k_bailing{"",
    {"<role>SYSTEM</role>", ""},
    {"<role>HUMAN</role>", ""},
    {"<role>ASSISTANT</role>", ""},
    "<role>ASSISTANT</role>"};
constexpr markup k_llama4{"",
    {"<|header_start|>system<|header_end|>\n\n", "<|eot|>"},
    {"<|header_start|>user<|header_end|>\n\n", "<|eot|>"},
    {"<|header_start|>assistant<|header_end|>\n\n", "<|eot|>"},
    "<|header_start|>assistant<|header_end|>\n\n", trim_mode::all};
constexpr markup k_dots1{"",
    {"<|system|>", "<|endofsystem|>"},
    {"<|userprompt|>", "<|endofuserprompt|>"},
    {"<|response|>", "<|endofresponse|>"},
    "<|response|>"};
constexpr markup k_hunyuan_moe{"",
    {"<|startoftext|>", "<|extra_4|>"},
    {"<|startoftext|>", "<|extra_0|>"},
    {"", "<|eos|>"},
    ""};
constexpr markup k_gpt_oss{"",
    {"<|start|>system<|message|>", "<|end|>"},
    {"<|start|>user<|message|>", "<|end|>"},
    {"<|start|>assistant<|message|>", "<|return|>"},
    "<|start|>assistant"};
constexpr markup k_kimi_k2{"",
    {"<|im_system|>system<|im_middle|>", "<|im_end|>"},
    {"<|im_user|>user<|im_middle|>", "<|im_end|>"},
    {"<|im_assistant|>assistant<|im_middle|>", "<|im_end|>"},
    "<|im_assistant|>assistant<|im_middle|>"};
constexpr markup k_seed_oss{"",
    {"<seed:bos>system\n", "<seed:eos>"},
    {"<seed:bos>user\n", "<seed:eos>"},
    {"<seed:bos>assistant\n", "<seed:eos>"},
    "<seed:bos>assistant\n", trim_mode::assistant};
// clang-format on

/** Llama 2 and its variants: one [INST] ... [/INST] per exchange; `system`: the system
 *  text in <<SYS>> (else it leads the user text); `bos_inside`: later exchanges start
 *  with <s>; `strip`: every message trimmed. No generation prompt: [/INST] ends the turn. */
std::string format_llama2(messages msgs, bool system, bool bos_inside, bool strip) {
    std::string out         = "[INST] ";
    bool        inside_turn = true;
    for (const chat_message & msg : msgs) {
        const std::string content = strip ? trim(msg.content) : msg.content;
        if (!inside_turn) {
            out += bos_inside ? "<s>[INST] " : "[INST] ";
            inside_turn = true;
        }
        switch (msg.role) {
            case chat_role::system: out += system ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n"; break;
            case chat_role::user: out += content + " [/INST]"; break;
            case chat_role::assistant:
                out += content + "</s>";
                inside_turn = false;
                break;
        }
    }
    return out;
}

/** Mistral's v1, v3 and v3-tekken templates: the system text opens the [INST] block of
 *  the following user message. v1 puts a space before [INST] and [/INST], tekken none
 *  after them; v3 trims the assistant's text. */
std::string format_mistral(messages msgs, const char * lead, const char * trail, bool trim_reply) {
    std::string out;
    bool        inside_turn = false;
    for (const chat_message & msg : msgs) {
        if (!inside_turn) {
            out += std::string(lead) + "[INST]" + trail;
            inside_turn = true;
        }
        switch (msg.role) {
            case chat_role::system: out += msg.content + "\n\n"; break;
            case chat_role::user: out += msg.content + lead + "[/INST]"; break;
            case chat_role::assistant:
                out += trail + (trim_reply ? trim(msg.content) : msg.content) + "</s>";
                inside_turn = false;
                break;
        }
    }
    return out;
}

/** AlphaMonarch: "<s>role\ncontent</s>\n" per message, without the <s> of the first
 *  (the tokenizer's BOS is that one). */
std::string format_monarch(messages msgs, bool add_assistant) {
    static constexpr const char * k_role[] = {"system", "user", "assistant"};
    std::string                   out;
    for (size_t i = 0; i < msgs.size(); ++i) {
        out += std::string(i ? "<s>" : "") + k_role[static_cast<int>(msgs[i].role)] + "\n" + msgs[i].content + "</s>\n";
    }
    if (add_assistant) out += "<s>assistant\n";
    return out;
}

bool is_inst(std::string_view t) { return t.substr(0, 7) == "mistral" || has(t, "[INST]"); }
bool is_mistral_official(std::string_view t) {
    return is_inst(t) && (has(t, "' [INST] ' + system_message") || has(t, "[AVAILABLE_TOOLS]"));
}

using detect_fn = bool (*)(std::string_view);
using format_fn = std::string (*)(messages, bool);

struct family {
    chat_template    id;
    const char *     name;
    chat_system_role system;
    detect_fn        detect;   // nullptr: chosen by name only
    const markup *   regular;  // per-role markup, or nullptr and `custom`
    format_fn        custom;
    const char *     vocab_marker;  // a control token that identifies the family without a template
};

using R = chat_system_role;

constexpr family k_families[] = {
    {chat_template::phi4, "phi4", R::native,
     [](std::string_view t) { return has(t, "<|im_start|>") && has(t, "<|im_sep|>"); }, &k_phi4, nullptr, nullptr},
    {chat_template::smolvlm, "smolvlm", R::native,
     [](std::string_view t) { return has(t, "<|im_start|>") && has(t, "<end_of_utterance>"); }, &k_smolvlm, nullptr,
     nullptr},
    {chat_template::chatml, "chatml", R::native, [](std::string_view t) { return has(t, "<|im_start|>"); }, &k_chatml,
     nullptr, "<|im_start|>"},
    {chat_template::mistral_v7, "mistral-v7", R::native,
     [](std::string_view t) { return is_inst(t) && has(t, "[SYSTEM_PROMPT]"); }, &k_mistral_v7, nullptr, nullptr},
    {chat_template::mistral_v7_tekken, "mistral-v7-tekken", R::native, nullptr, &k_mistral_v7_tekken, nullptr, nullptr},
    {chat_template::mistral_v1, "mistral-v1", R::folded,
     [](std::string_view t) { return is_mistral_official(t) && has(t, " [INST]"); }, nullptr,
     [](messages m, bool) { return format_mistral(m, " ", " ", false); }, nullptr},
    {chat_template::mistral_v3_tekken, "mistral-v3-tekken", R::folded,
     [](std::string_view t) { return is_mistral_official(t) && has(t, "\"[INST]\""); }, nullptr,
     [](messages m, bool) { return format_mistral(m, "", "", false); }, nullptr},
    {chat_template::mistral_v3, "mistral-v3", R::folded, is_mistral_official, nullptr,
     [](messages m, bool) { return format_mistral(m, "", " ", true); }, nullptr},
    {chat_template::llama2_sys_strip, "llama2-sys-strip", R::native,
     [](std::string_view t) { return is_inst(t) && has(t, "content.strip()"); }, nullptr,
     [](messages m, bool) { return format_llama2(m, true, false, true); }, nullptr},
    {chat_template::llama2_sys_bos, "llama2-sys-bos", R::native,
     [](std::string_view t) { return is_inst(t) && has(t, "bos_token + '[INST]"); }, nullptr,
     [](messages m, bool) { return format_llama2(m, true, true, false); }, nullptr},
    {chat_template::llama2_sys, "llama2-sys", R::native,
     [](std::string_view t) { return is_inst(t) && has(t, "<<SYS>>"); }, nullptr,
     [](messages m, bool) { return format_llama2(m, true, false, false); }, nullptr},
    {chat_template::llama2, "llama2", R::folded, is_inst, nullptr,
     [](messages m, bool) { return format_llama2(m, false, false, false); }, nullptr},
    {chat_template::phi3, "phi3", R::native,
     [](std::string_view t) { return has(t, "<|assistant|>") && has(t, "<|end|>"); }, &k_phi3, nullptr, nullptr},
    {chat_template::chatglm4, "chatglm4", R::native, [](std::string_view t) { return has(t, "[gMASK]<sop>"); },
     &k_chatglm4, nullptr, nullptr},
    {chat_template::falcon3, "falcon3", R::native,
     [](std::string_view t) { return has(t, "<|assistant|>") && has(t, "<|user|>") && has(t, "</s>"); }, &k_falcon3,
     nullptr, nullptr},
    {chat_template::glmedge, "glmedge", R::native,
     [](std::string_view t) {
         return (has(t, "<|assistant|>") && has(t, "<|user|>")) ||
                (has(t, "<|{{ item['role'] }}|>") && has(t, "<|begin_of_image|>"));
     },
     &k_glmedge, nullptr, nullptr},
    {chat_template::zephyr, "zephyr", R::native,
     [](std::string_view t) { return has(t, "<|user|>") && has(t, "<|endoftext|>"); }, &k_zephyr, nullptr, nullptr},
    {chat_template::monarch, "monarch", R::native,
     [](std::string_view t) { return has(t, "bos_token + message['role']"); }, nullptr, format_monarch, nullptr},
    {chat_template::gemma, "gemma", R::folded, [](std::string_view t) { return has(t, "<start_of_turn>"); }, &k_gemma,
     nullptr, "<start_of_turn>"},
    {chat_template::orion, "orion", R::folded,
     [](std::string_view t) { return has(t, "'\\n\\nAssistant: ' + eos_token"); }, &k_orion, nullptr, nullptr},
    {chat_template::openchat, "openchat", R::native, [](std::string_view t) { return has(t, "GPT4 Correct "); },
     &k_openchat, nullptr, nullptr},
    {chat_template::vicuna_orca, "vicuna-orca", R::native,
     [](std::string_view t) { return has(t, "USER: ") && has(t, "ASSISTANT: ") && has(t, "SYSTEM: "); }, &k_vicuna_orca,
     nullptr, nullptr},
    {chat_template::vicuna, "vicuna", R::native,
     [](std::string_view t) { return has(t, "USER: ") && has(t, "ASSISTANT: "); }, &k_vicuna, nullptr, nullptr},
    {chat_template::deepseek, "deepseek", R::native,
     [](std::string_view t) { return has(t, "### Instruction:") && has(t, "<|EOT|>"); }, &k_deepseek, nullptr, nullptr},
    {chat_template::command_r, "command-r", R::native,
     [](std::string_view t) { return has(t, "<|START_OF_TURN_TOKEN|>") && has(t, "<|USER_TOKEN|>"); }, &k_command_r,
     nullptr, nullptr},
    {chat_template::llama3, "llama3", R::native,
     [](std::string_view t) { return has(t, "<|start_header_id|>") && has(t, "<|end_header_id|>"); }, &k_llama3,
     nullptr, "<|start_header_id|>"},
    {chat_template::chatglm3, "chatglm3", R::native, [](std::string_view t) { return has(t, "[gMASK]sop"); },
     &k_chatglm3, nullptr, nullptr},
    {chat_template::minicpm, "minicpm", R::native,
     [](std::string_view t) { return has(t, "<用户>"); }, &k_minicpm, nullptr, nullptr},
    {chat_template::deepseek2, "deepseek2", R::native,
     [](std::string_view t) { return has(t, "'Assistant: ' + message['content'] + eos_token"); }, &k_deepseek2, nullptr,
     nullptr},
    {chat_template::deepseek3, "deepseek3", R::native,
     [](std::string_view t) {
         return has(t, "<｜Assistant｜>") && has(t, "<｜User｜>") && has(t, "<｜end▁of▁sentence｜>");
     },
     &k_deepseek3, nullptr, nullptr},
    {chat_template::exaone4, "exaone4", R::native,
     [](std::string_view t) {
         return has(t, "[|system|]") && has(t, "[|assistant|]") && has(t, "[|endofturn|]") && has(t, "[|tool|]");
     },
     &k_exaone, nullptr, nullptr},
    {chat_template::exaone3, "exaone3", R::native,
     [](std::string_view t) { return has(t, "[|system|]") && has(t, "[|assistant|]") && has(t, "[|endofturn|]"); },
     &k_exaone, nullptr, nullptr},
    {chat_template::rwkv_world, "rwkv-world", R::native,
     [](std::string_view t) {
         return has(t, "rwkv-world") || has(t, "{{- 'User: ' + message['content']|trim + '\\n\\n' -}}");
     },
     &k_rwkv_world, nullptr, nullptr},
    {chat_template::granite, "granite", R::native, [](std::string_view t) { return has(t, "<|start_of_role|>"); },
     &k_granite, nullptr, nullptr},
    {chat_template::gigachat, "gigachat", R::native,
     [](std::string_view t) {
         return has(
             t, "message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]");
     },
     &k_gigachat, nullptr, nullptr},
    {chat_template::megrez, "megrez", R::native, [](std::string_view t) { return has(t, "<|role_start|>"); }, &k_megrez,
     nullptr, nullptr},
    {chat_template::yandex, "yandex", R::none,
     [](std::string_view t) {
         return has(t, " Ассистент:");
     },
     &k_yandex, nullptr, nullptr},
    {chat_template::bailing, "bailing", R::native,
     [](std::string_view t) { return has(t, "<role>ASSISTANT</role>") && has(t, "'HUMAN'"); }, &k_bailing, nullptr,
     nullptr},
    {chat_template::llama4, "llama4", R::native,
     [](std::string_view t) { return has(t, "<|header_start|>") && has(t, "<|header_end|>"); }, &k_llama4, nullptr,
     nullptr},
    {chat_template::dots1, "dots1", R::native, [](std::string_view t) { return has(t, "<|endofuserprompt|>"); },
     &k_dots1, nullptr, nullptr},
    {chat_template::hunyuan_moe, "hunyuan-moe", R::native,
     [](std::string_view t) { return has(t, "<|extra_0|>") && has(t, "<|extra_4|>"); }, &k_hunyuan_moe, nullptr,
     nullptr},
    {chat_template::gpt_oss, "gpt-oss", R::native,
     [](std::string_view t) { return has(t, "<|start|>") && has(t, "<|channel|>"); }, &k_gpt_oss, nullptr, nullptr},
    {chat_template::kimi_k2, "kimi-k2", R::native,
     [](std::string_view t) { return has(t, "<|im_assistant|>assistant<|im_middle|>"); }, &k_kimi_k2, nullptr, nullptr},
    {chat_template::seed_oss, "seed_oss", R::native, [](std::string_view t) { return has(t, "<seed:bos>"); },
     &k_seed_oss, nullptr, nullptr},
};

/** The table has one row per enum value, in enum order, each with a way to format. */
constexpr bool table_complete() {
    if (std::size(k_families) != static_cast<size_t>(chat_template::count_)) return false;
    for (size_t i = 0; i < std::size(k_families); ++i) {
        if (static_cast<size_t>(k_families[i].id) != i) return false;
        if ((k_families[i].regular == nullptr) == (k_families[i].custom == nullptr)) return false;
    }
    return true;
}
static_assert(table_complete(), "k_families must have one row per chat_template, in enum order");

const family & info(chat_template t) { return k_families[static_cast<size_t>(t)]; }

/** True when `text` is a single control token of the vocabulary. */
bool has_control_token(const Tokenizer & tok, const char * text) {
    const auto ids = tok.encode(text, false, true);
    return ids.size() == 1 && tok.type_of(ids[0]) == token_type::control;
}

} // namespace

const char * chat_template_name(chat_template t) { return info(t).name; }

chat_system_role chat_template_system_role(chat_template t) { return info(t).system; }

std::string drop_template_bos(std::string text, const Tokenizer & tok, bool add_bos) {
    if (!add_bos || !tok.add_bos() || tok.special().bos == k_no_token) return text;
    const std::string_view bos = tok.token_text(tok.special().bos);
    if (!bos.empty() && std::string_view(text).substr(0, bos.size()) == bos) text.erase(0, bos.size());
    return text;
}

std::optional<chat_template> choose_chat_template(std::string_view name, const gk_gguf * gguf, const Tokenizer & tok,
                                                  std::string * error) {
    const std::string names = chat_template_names();
    if (!name.empty()) {
        auto t = chat_template_from_name(name);
        if (!t && error) {
            *error = "unknown chat template '" + std::string(name) + "' (--chat-template takes: " + names + ")";
        }
        return t;
    }
    bool had_jinja = false;
    auto t         = detect_chat_template(gguf, tok, &had_jinja);
    if (!t && error) {
        *error = had_jinja ? "the model's tokenizer.chat_template matches no chat template gk knows (there is no "
                             "Jinja engine); choose one with --chat-template: " + names
                           : "the model has no tokenizer.chat_template and its vocabulary names no chat format; "
                             "choose one with --chat-template: " + names;
    }
    return t;
}

std::optional<chat_template> chat_template_from_name(std::string_view name) {
    for (const family & f : k_families) {
        if (name == f.name) return f.id;
    }
    return std::nullopt;
}

std::string chat_template_names() {
    std::string s;
    for (const family & f : k_families) s += (s.empty() ? "" : ", ") + std::string(f.name);
    return s;
}

std::optional<chat_template> chat_template_detect(std::string_view jinja) {
    if (auto t = chat_template_from_name(jinja)) return t;
    for (const family & f : k_families) {
        if (f.detect && f.detect(jinja)) return f.id;
    }
    return std::nullopt;
}

std::optional<chat_template> detect_chat_template(const gk_gguf * gguf, const Tokenizer & tok, bool * had_jinja) {
    size_t       len  = 0;
    const auto * v    = gk_gguf_get(gguf, "tokenizer.chat_template");
    const char * text = v ? gk_gguf_value_str(v, &len) : nullptr;
    if (had_jinja) *had_jinja = text != nullptr;
    if (text) return chat_template_detect(std::string_view(text, len));
    for (const family & f : k_families) {
        if (f.vocab_marker && has_control_token(tok, f.vocab_marker)) return f.id;
    }
    return std::nullopt;
}

std::string chat_format(chat_template t, std::span<const chat_message> msgs, bool add_assistant) {
    const family & f = info(t);
    return f.regular ? format_markup(*f.regular, msgs, add_assistant) : f.custom(msgs, add_assistant);
}

void chat_history::add_system(std::string text) { msgs_.push_back({chat_role::system, std::move(text)}); }

std::string chat_history::add_user(std::string text) {
    std::string closing;  // the markup after the previous reply, which the cache lacks
    if (n_fed_ && msgs_[n_fed_ - 1].role == chat_role::assistant) {
        // The reply's own text is in the cache already; find what follows it with a
        // stand-in that no template trims or rewrites.
        std::vector<chat_message> probe(msgs_.begin(), msgs_.begin() + static_cast<std::ptrdiff_t>(n_fed_) - 1);
        probe.push_back({chat_role::assistant, "\x01"});
        const std::string with_probe = chat_format(tmpl_, probe, false);
        const size_t      at         = with_probe.rfind('\x01');
        if (at != std::string::npos) closing = with_probe.substr(at + 1);
    }
    const std::string before = n_fed_ ? chat_format(tmpl_, std::span<const chat_message>(msgs_).first(n_fed_), false)
                                      : std::string();
    msgs_.push_back({chat_role::user, std::move(text)});
    n_fed_before_           = n_fed_;
    n_fed_                  = msgs_.size();
    const std::string after = chat_format(tmpl_, msgs_, true);
    size_t            same  = 0;
    while (same < before.size() && same < after.size() && before[same] == after[same]) ++same;
    return closing + after.substr(same);
}

void chat_history::drop_last_user() {
    if (msgs_.empty() || msgs_.back().role != chat_role::user) return;
    msgs_.pop_back();
    n_fed_ = n_fed_before_;  // a system message fed with it is unfed again
}

void chat_history::add_assistant(std::string text) {
    msgs_.push_back({chat_role::assistant, std::move(text)});
    n_fed_ = msgs_.size();  // generated into the cache token by token
}

} // namespace gk::run
