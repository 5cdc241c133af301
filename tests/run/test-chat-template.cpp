// test-chat-template: gk-run's chat templates (src/run/chat.h). For every family, the text
// of a system + user + assistant + user conversation, written out here from the family's
// markup as llama.cpp formats it (src/llama-chat.cpp); detection from template text (the
// real one of a GGUF file where there is one, else the family's tell-tale snippet);
// the turn-by-turn text that gk-run feeds; and llama-cli's input rules and reverse prompts.
#include "run/chat.h"
#include "run/chat_input.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace gk::run;

namespace {

const std::vector<chat_message> k_chat = {
    {chat_role::system, "Be brief."},
    {chat_role::user, "Hi"},
    {chat_role::assistant, "Hello!"},
    {chat_role::user, "Why?"},
};

struct expected_text {
    chat_template t;
    const char *  text;  // chat_format(t, k_chat, true)
};

// The reference texts, from each family's documented turn markup.
const expected_text k_expected[] = {
    {chat_template::phi4,
     "<|im_start|>system<|im_sep|>Be brief.<|im_end|><|im_start|>user<|im_sep|>Hi<|im_end|>"
     "<|im_start|>assistant<|im_sep|>Hello!<|im_end|><|im_start|>user<|im_sep|>Why?<|im_end|>"
     "<|im_start|>assistant<|im_sep|>"},
    {chat_template::smolvlm,
     "<|im_start|>Be brief.\n\nUser: Hi<end_of_utterance>\nAssistant: Hello!<end_of_utterance>\n"
     "User: Why?<end_of_utterance>\nAssistant:"},
    {chat_template::chatml,
     "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
     "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nWhy?<|im_end|>\n"
     "<|im_start|>assistant\n"},
    {chat_template::mistral_v7,
     "[SYSTEM_PROMPT] Be brief.[/SYSTEM_PROMPT][INST] Hi[/INST] Hello!</s>[INST] Why?[/INST]"},
    {chat_template::mistral_v7_tekken,
     "[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT][INST]Hi[/INST]Hello!</s>[INST]Why?[/INST]"},
    {chat_template::mistral_v1, " [INST] Be brief.\n\nHi [/INST] Hello!</s> [INST] Why? [/INST]"},
    {chat_template::mistral_v3_tekken, "[INST]Be brief.\n\nHi[/INST]Hello!</s>[INST]Why?[/INST]"},
    {chat_template::mistral_v3, "[INST] Be brief.\n\nHi[/INST] Hello!</s>[INST] Why?[/INST]"},
    {chat_template::llama2_sys_strip, "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello!</s>[INST] Why? [/INST]"},
    {chat_template::llama2_sys_bos,
     "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello!</s><s>[INST] Why? [/INST]"},
    {chat_template::llama2_sys, "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello!</s>[INST] Why? [/INST]"},
    {chat_template::llama2, "[INST] Be brief.\nHi [/INST]Hello!</s>[INST] Why? [/INST]"},
    {chat_template::phi3,
     "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n"
     "<|user|>\nWhy?<|end|>\n<|assistant|>\n"},
    {chat_template::chatglm4,
     "[gMASK]<sop><|system|>\nBe brief.<|user|>\nHi<|assistant|>\nHello!<|user|>\nWhy?<|assistant|>"},
    {chat_template::falcon3,
     "<|system|>\nBe brief.\n<|user|>\nHi\n<|assistant|>\nHello!\n<|user|>\nWhy?\n<|assistant|>\n"},
    {chat_template::glmedge, "<|system|>\nBe brief.<|user|>\nHi<|assistant|>\nHello!<|user|>\nWhy?<|assistant|>"},
    {chat_template::zephyr,
     "<|system|>\nBe brief.<|endoftext|>\n<|user|>\nHi<|endoftext|>\n<|assistant|>\nHello!<|endoftext|>\n"
     "<|user|>\nWhy?<|endoftext|>\n<|assistant|>\n"},
    {chat_template::monarch,
     "system\nBe brief.</s>\n<s>user\nHi</s>\n<s>assistant\nHello!</s>\n<s>user\nWhy?</s>\n"
     "<s>assistant\n"},
    {chat_template::gemma,
     "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
     "<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n"},
    {chat_template::orion, "Human: Be brief.\n\nHi\n\nAssistant: </s>Hello!</s>Human: Why?\n\nAssistant: </s>"},
    {chat_template::openchat,
     "Be brief.<|end_of_turn|>GPT4 Correct User: Hi<|end_of_turn|>GPT4 Correct Assistant: Hello!"
     "<|end_of_turn|>GPT4 Correct User: Why?<|end_of_turn|>GPT4 Correct Assistant:"},
    {chat_template::vicuna_orca, "SYSTEM: Be brief.\nUSER: Hi\nASSISTANT: Hello!</s>\nUSER: Why?\nASSISTANT:"},
    {chat_template::vicuna, "Be brief.\n\nUSER: Hi\nASSISTANT: Hello!</s>\nUSER: Why?\nASSISTANT:"},
    {chat_template::deepseek,
     "Be brief.### Instruction:\nHi\n### Response:\nHello!\n<|EOT|>\n### Instruction:\nWhy?\n"
     "### Response:\n"},
    {chat_template::command_r,
     "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>Be brief.<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hello!<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Why?<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
    {chat_template::llama3,
     "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nWhy?<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n"},
    {chat_template::chatglm3,
     "[gMASK]sop<|system|>\n Be brief.<|user|>\n Hi<|assistant|>\n Hello!<|user|>\n Why?<|assistant|>"},
    {chat_template::minicpm, "Be brief.<用户>Hi<AI>Hello!<用户>Why?<AI>"},
    {chat_template::deepseek2,
     "Be brief.\n\nUser: Hi\n\nAssistant: Hello!<｜end▁of▁sentence｜>User: Why?\n\nAssistant:"},
    {chat_template::deepseek3,
     "Be brief.\n\n<｜User｜>Hi<｜Assistant｜>Hello!<｜end▁of▁sentence｜><｜User｜>Why?<｜Assistant｜>"},
    {chat_template::exaone4,
     "[|system|]Be brief.[|endofturn|]\n[|user|]Hi\n[|assistant|]Hello![|endofturn|]\n[|user|]Why?\n"
     "[|assistant|]"},
    {chat_template::exaone3,
     "[|system|]Be brief.[|endofturn|]\n[|user|]Hi\n[|assistant|]Hello![|endofturn|]\n[|user|]Why?\n"
     "[|assistant|]"},
    {chat_template::rwkv_world, "System: Be brief.\n\nUser: Hi\n\nAssistant: Hello!\n\nUser: Why?\n\nAssistant:"},
    {chat_template::granite,
     "<|start_of_role|>system<|end_of_role|>Be brief.<|end_of_text|>\n"
     "<|start_of_role|>user<|end_of_role|>Hi<|end_of_text|>\n"
     "<|start_of_role|>assistant<|end_of_role|>Hello!<|end_of_text|>\n"
     "<|start_of_role|>user<|end_of_role|>Why?<|end_of_text|>\n"
     "<|start_of_role|>assistant<|end_of_role|>\n"},
    {chat_template::gigachat,
     "<s>Be brief.<|message_sep|>user<|role_sep|>Hi<|message_sep|>available functions<|role_sep|>[]"
     "<|message_sep|>assistant<|role_sep|>Hello!<|message_sep|>user<|role_sep|>Why?<|message_sep|>"
     "available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>"},
    {chat_template::megrez,
     "<|role_start|>system<|role_end|>Be brief.<|turn_end|><|role_start|>user<|role_end|>Hi<|turn_end|>"
     "<|role_start|>assistant<|role_end|>Hello!<|turn_end|><|role_start|>user<|role_end|>Why?"
     "<|turn_end|><|role_start|>assistant<|role_end|>"},
    // Yandex has no system role: the system message is left out.
    {chat_template::yandex, "<s> Пользователь: Hi\n\n Ассистент: Hello!\n\n Пользователь: Why?\n\n Ассистент:[SEP]"},
    {chat_template::bailing,
     "<role>SYSTEM</role>Be brief.<role>HUMAN</role>Hi<role>ASSISTANT</role>Hello!<role>HUMAN</role>"
     "Why?<role>ASSISTANT</role>"},
    {chat_template::llama4,
     "<|header_start|>system<|header_end|>\n\nBe brief.<|eot|><|header_start|>user<|header_end|>\n\nHi"
     "<|eot|><|header_start|>assistant<|header_end|>\n\nHello!<|eot|><|header_start|>user"
     "<|header_end|>\n\nWhy?<|eot|><|header_start|>assistant<|header_end|>\n\n"},
    {chat_template::dots1,
     "<|system|>Be brief.<|endofsystem|><|userprompt|>Hi<|endofuserprompt|><|response|>Hello!"
     "<|endofresponse|><|userprompt|>Why?<|endofuserprompt|><|response|>"},
    {chat_template::hunyuan_moe,
     "<|startoftext|>Be brief.<|extra_4|><|startoftext|>Hi<|extra_0|>Hello!<|eos|>"
     "<|startoftext|>Why?<|extra_0|>"},
    {chat_template::gpt_oss,
     "<|start|>system<|message|>Be brief.<|end|><|start|>user<|message|>Hi<|end|>"
     "<|start|>assistant<|message|>Hello!<|return|><|start|>user<|message|>Why?<|end|>"
     "<|start|>assistant"},
    {chat_template::kimi_k2,
     "<|im_system|>system<|im_middle|>Be brief.<|im_end|><|im_user|>user<|im_middle|>Hi<|im_end|>"
     "<|im_assistant|>assistant<|im_middle|>Hello!<|im_end|><|im_user|>user<|im_middle|>Why?"
     "<|im_end|><|im_assistant|>assistant<|im_middle|>"},
    {chat_template::seed_oss,
     "<seed:bos>system\nBe brief.<seed:eos><seed:bos>user\nHi<seed:eos><seed:bos>assistant\n"
     "Hello!<seed:eos><seed:bos>user\nWhy?<seed:eos><seed:bos>assistant\n"},
};

std::vector<chat_template> all_templates() {
    std::vector<chat_template> v;
    for (int i = 0; i < static_cast<int>(chat_template::count_); ++i) v.push_back(static_cast<chat_template>(i));
    return v;
}

} // namespace

TEST(ChatTemplate, EveryFamilyFormatsItsMarkup) {
    std::set<chat_template> seen;
    for (const expected_text & e : k_expected) {
        SCOPED_TRACE(chat_template_name(e.t));
        EXPECT_TRUE(seen.insert(e.t).second) << "listed twice";
        EXPECT_EQ(chat_format(e.t, k_chat, true), e.text);
    }
    EXPECT_EQ(seen.size(), all_templates().size()) << "a family has no reference text here";
}

TEST(ChatTemplate, NamesRoundTrip) {
    std::set<std::string> names;
    for (chat_template t : all_templates()) {
        const std::string name = chat_template_name(t);
        EXPECT_TRUE(names.insert(name).second) << name;
        EXPECT_EQ(chat_template_from_name(name), t) << name;
        EXPECT_EQ(chat_template_detect(name), t) << name;  // a template text that is a name (llama.cpp)
        EXPECT_NE(chat_template_names().find(name), std::string::npos) << name;
    }
    EXPECT_FALSE(chat_template_from_name("alpaca"));
    EXPECT_FALSE(chat_template_from_name(""));
}

TEST(ChatTemplate, TrimmingFamiliesTrim) {
    const std::vector<chat_message> spaced = {{chat_role::user, "  Hi \n"}};
    EXPECT_EQ(
        chat_format(chat_template::llama3, spaced, true),
        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    EXPECT_EQ(chat_format(chat_template::gemma, spaced, false), "<start_of_turn>user\nHi<end_of_turn>\n");
    EXPECT_EQ(chat_format(chat_template::llama2_sys_strip, spaced, false), "[INST] Hi [/INST]");
    EXPECT_EQ(chat_format(chat_template::llama2_sys, spaced, false), "[INST]   Hi \n [/INST]");
    EXPECT_EQ(chat_format(chat_template::chatml, spaced, false), "<|im_start|>user\n  Hi \n<|im_end|>\n");
}

TEST(ChatTemplate, SystemRoles) {
    EXPECT_EQ(chat_template_system_role(chat_template::chatml), chat_system_role::native);
    EXPECT_EQ(chat_template_system_role(chat_template::gemma), chat_system_role::folded);
    EXPECT_EQ(chat_template_system_role(chat_template::llama2), chat_system_role::folded);
    EXPECT_EQ(chat_template_system_role(chat_template::yandex), chat_system_role::none);
}

// ---- detection ------------------------------------------------------------------------

struct detect_case {
    const char *  jinja;
    chat_template t;
};

// Snippets of the families' published templates, each with the text the family is told by.
const detect_case k_detect[] = {
    {"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
     "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}",
     chat_template::chatml},
    {"{{'<|im_start|>' + message['role'] + '<|im_sep|>' + message['content'] + '<|im_end|>'}}", chat_template::phi4},
    {"<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}: {{ message['content'] }}"
     "<end_of_utterance>\n{% endfor %}",
     chat_template::smolvlm},
    {"{%- if messages[0]['role'] == 'system' %}{{- '[SYSTEM_PROMPT]' + messages[0]['content'] + '[/SYSTEM_PROMPT]' }}"
     "{%- endif %}{{- '[INST]' + message['content'] + '[/INST]' }}",
     chat_template::mistral_v7},
    {"{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ ' [INST] ' + system_message"
     " + message['content'] + ' [/INST]' }}{% endif %}{% endfor %}",
     chat_template::mistral_v1},
    {"{%- if message['role'] == 'user' %}{%- if tools is not none %}{{- \"[AVAILABLE_TOOLS]\" }}{%- endif %}"
     "{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}{%- endif %}",
     chat_template::mistral_v3_tekken},
    {"{%- if tools %}{{- '[AVAILABLE_TOOLS] [' }}{%- endif %}{{- '[INST] ' + message['content'] + '[/INST]' }}",
     chat_template::mistral_v3},
    {"{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + message['content'].strip() + ' [/INST]' }}{% endif %}"
     "{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}",
     chat_template::llama2_sys_strip},
    {"{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + message['content'] + ' [/INST]' }}{% endif %}",
     chat_template::llama2_sys_bos},
    {"{{ '[INST] <<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' }}", chat_template::llama2_sys},
    {"{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% endif %}",
     chat_template::llama2},
    {"mistral", chat_template::llama2},  // llama.cpp: a template text that starts with "mistral"
    {"{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}", chat_template::phi3},
    {"[gMASK]<sop>{% for item in messages %}<|{{ item['role'] }}|>\n{{ item['content'] }}{% endfor %}",
     chat_template::chatglm4},
    {"{{ '<|user|>\\n' + message['content'] + '\\n' }}{{ '<|assistant|>\\n' + message['content'] + '</s>' }}",
     chat_template::falcon3},
    {"{{ '<|user|>\\n' + message['content'] }}{{ '<|assistant|>' }}", chat_template::glmedge},
    {"{% for item in messages %}<|{{ item['role'] }}|>{% if item['image'] %}<|begin_of_image|>{% endif %}{% endfor %}",
     chat_template::glmedge},
    {"{{ '<|user|>\n' + message['content'] + '<|endoftext|>' }}", chat_template::zephyr},
    {"{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n'}}"
     "{% endfor %}",
     chat_template::monarch},
    {"{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}", chat_template::gemma},
    {"{{ 'Human: ' + content + '\\n\\nAssistant: ' + eos_token }}", chat_template::orion},
    {"{{ 'GPT4 Correct ' + message['role'].title() + ': ' + message['content'] + '<|end_of_turn|>'}}",
     chat_template::openchat},
    {"{{ 'SYSTEM: ' + message['content'] }}{{ 'USER: ' + message['content'] }}{{ 'ASSISTANT: ' }}",
     chat_template::vicuna_orca},
    {"{{ 'USER: ' + message['content'] + '\\n' }}{{ 'ASSISTANT: ' + message['content'] + '</s>\\n' }}",
     chat_template::vicuna},
    {"{{'### Instruction:\\n' + message['content'] + '\\n'}}{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}",
     chat_template::deepseek},
    {"{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}",
     chat_template::command_r},
    {"{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
     "'<|eot_id|>' %}",
     chat_template::llama3},
    {"[gMASK]sop{% for message in messages %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endfor %}",
     chat_template::chatglm3},
    {"{{'<用户>' + message['content'].strip() + '<AI>'}}", chat_template::minicpm},
    {"{{ 'User: ' + message['content'] + '\n\n' }}{{ 'Assistant: ' + message['content'] + eos_token }}",
     chat_template::deepseek2},
    {"{{'<｜User｜>' + message['content']}}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}",
     chat_template::deepseek3},
    {"{{ '[|system|]' + content + '[|endofturn|]\n' }}{{ '[|assistant|]' + content + '[|endofturn|]\n' }}",
     chat_template::exaone3},
    {"{{ '[|system|]' }}{{ '[|assistant|]' }}{{ '[|endofturn|]' }}{{ '[|tool|]' }}", chat_template::exaone4},
    {"rwkv-world", chat_template::rwkv_world},
    {"{%- if message['role'] == 'user' %}{{- 'User: ' + message['content']|trim + '\\n\\n' -}}{%- endif %}",
     chat_template::rwkv_world},
    {"{{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}",
     chat_template::granite},
    {"{{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] }}",
     chat_template::gigachat},
    {"{{ '<|role_start|>' + message['role'] + '<|role_end|>' + message['content'] + '<|turn_end|>' }}",
     chat_template::megrez},
    {"{{ ' Пользователь: ' + message['content'] + '\n\n' }}{{ ' Ассистент:[SEP]' }}", chat_template::yandex},
    {"{% set role = 'HUMAN' %}{{ '<role>' + role + '</role>' + message['content'] }}{{ '<role>ASSISTANT</role>' }}",
     chat_template::bailing},
    {"{{- '<|header_start|>' + message['role'] + '<|header_end|>\\n\\n' }}", chat_template::llama4},
    {"{{ '<|userprompt|>' + message['content'] + '<|endofuserprompt|>' }}", chat_template::dots1},
    {"{{ '<|startoftext|>' + message['content'] + '<|extra_4|>' }}{{ '<|startoftext|>' + content + '<|extra_0|>' }}",
     chat_template::hunyuan_moe},
    {"{{- '<|start|>assistant<|channel|>final<|message|>' + content + '<|end|>' }}", chat_template::gpt_oss},
    {"{{ '<|im_user|>user<|im_middle|>' }}{{ '<|im_assistant|>assistant<|im_middle|>' }}", chat_template::kimi_k2},
    {"{{ '<seed:bos>' + message['role'] + '\\n' + content + '<seed:eos>' }}", chat_template::seed_oss},
};

TEST(ChatTemplate, DetectsEachFamily) {
    for (const detect_case & c : k_detect) {
        const auto t = chat_template_detect(c.jinja);
        ASSERT_TRUE(t) << c.jinja;
        EXPECT_EQ(chat_template_name(*t), std::string(chat_template_name(c.t))) << c.jinja;
    }
}

TEST(ChatTemplate, UnknownTemplateIsNotGuessed) {
    EXPECT_FALSE(chat_template_detect("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"));
    EXPECT_FALSE(chat_template_detect(""));
}

struct closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};

TEST(ChatTemplateSharedData, DetectsPhi3FromItsGgufFile) {
    // llama.cpp's models/ggml-vocab-phi-3.gguf carries Phi-3's published template.
    const fs::path path = fs::path(GK_SHARED_DATA) / "gguf" / "vocab" / "ggml-vocab-phi-3.gguf";
    if (!fs::exists(path)) GTEST_SKIP() << "GK-SKIP: " << path << " is not there";
    gk_gguf_error                    err{};
    std::unique_ptr<gk_gguf, closer> g(gk_gguf_open(path.c_str(), &err));
    ASSERT_TRUE(g) << err.message;
    std::string msg;
    auto        tok = Tokenizer::load(g.get(), &msg);
    ASSERT_TRUE(tok) << msg;
    bool had_jinja = false;
    EXPECT_EQ(detect_chat_template(g.get(), *tok, &had_jinja), chat_template::phi3);
    EXPECT_TRUE(had_jinja);
}

// ---- turn by turn ---------------------------------------------------------------------

TEST(ChatHistory, TurnsAddUpToTheConversation) {
    // What gk-run evaluates - each add_user() text, and between them the reply the model
    // generated - is the whole conversation in the family's markup. The reply is what the
    // markup has between the generation prompt and the reply's end: families whose
    // assistant turn has text of its own after the generation prompt (a space for mistral
    // v1/v3/v7, "Assistant: " after "Assistant:") get it from the model.
    for (chat_template t : all_templates()) {
        SCOPED_TRACE(chat_template_name(t));
        // yandex has no system role; granite's generation prompt ends with a newline its
        // assistant turns lack (llama.cpp's markup), so the two texts differ by that.
        if (t == chat_template::yandex || t == chat_template::granite) continue;
        chat_history h(t);
        h.add_system("Be brief.");
        std::string       fed   = h.add_user("Hi");
        const std::string full1 = chat_format(t, std::span(k_chat).first(3), false);
        const size_t      end   = full1.rfind("Hello!") + 6;
        ASSERT_EQ(full1.substr(0, fed.size()), fed) << "the generation prompt does not open the assistant's turn";
        const std::string reply = full1.substr(fed.size(), end - fed.size());
        h.add_assistant(reply);
        fed += reply;
        fed += h.add_user("Why?");
        EXPECT_EQ(fed, chat_format(t, k_chat, true));
    }
}

TEST(ChatHistory, GraniteKeepsItsGenerationPrompt) {
    chat_history h(chat_template::granite);
    EXPECT_EQ(h.add_user("Hi"),
              "<|start_of_role|>user<|end_of_role|>Hi<|end_of_text|>\n"
              "<|start_of_role|>assistant<|end_of_role|>\n");
    h.add_assistant("Hello!");
    EXPECT_EQ(h.add_user("Why?"),
              "<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Why?<|end_of_text|>\n"
              "<|start_of_role|>assistant<|end_of_role|>\n");
}

TEST(ChatHistory, ClosingMarkupFollowsTheReply) {
    chat_history h(chat_template::chatml);
    EXPECT_EQ(h.add_user("Hi"), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    h.add_assistant("Hello!");
    EXPECT_EQ(h.add_user("Why?"), "<|im_end|>\n<|im_start|>user\nWhy?<|im_end|>\n<|im_start|>assistant\n");
    h.add_assistant("");  // the model ended its reply at once
    EXPECT_EQ(h.add_user("Ok"), "<|im_end|>\n<|im_start|>user\nOk<|im_end|>\n<|im_start|>assistant\n");

    chat_history g(chat_template::gemma);
    g.add_system("Be brief.");
    EXPECT_EQ(g.add_user("Hi"), "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
    g.add_assistant("Hello!");
    EXPECT_EQ(g.add_user("Why?"), "<end_of_turn>\n<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatHistory, ADroppedMessageLeavesTheHistoryAsBefore) {
    // gk-run skips a message that cannot fit: the next one's text must be what it would
    // have been, the system message with the first one, the closing markup after a reply.
    chat_history g(chat_template::gemma);
    g.add_system("Be brief.");
    g.add_user("a message too long");
    g.drop_last_user();
    EXPECT_EQ(g.add_user("Hi"), "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
    g.add_assistant("Hello!");
    g.add_user("another one too long");
    g.drop_last_user();
    EXPECT_EQ(g.add_user("Why?"), "<end_of_turn>\n<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n");
}

// ---- input and reverse prompts --------------------------------------------------------

std::vector<std::string> inputs(const std::string & text, bool multiline) {
    std::istringstream       in(text);
    std::vector<std::string> out;
    std::string              s;
    while (read_user_input(in, multiline, size_t(1) << 20, s) == input_status::ok) out.push_back(s);
    return out;
}

TEST(ChatInput, LineByLineWithBackslashContinuation) {
    EXPECT_EQ(inputs("one\ntwo\n", false), (std::vector<std::string>{"one\n", "two\n"}));
    EXPECT_EQ(inputs("a\\\nb\\\nc\nd\n", false), (std::vector<std::string>{"a\nb\nc\n", "d\n"}));
    EXPECT_EQ(inputs("x\n\ny\n", false), (std::vector<std::string>{"x\n", "\n", "y\n"}));
    EXPECT_EQ(inputs("done/\nnext", false), (std::vector<std::string>{"done", "next\n"}));
    EXPECT_TRUE(inputs("", false).empty());
}

TEST(ChatInput, MultilineUntilBackslashOrSlash) {
    EXPECT_EQ(inputs("a\nb\nc\\\nd\ne/\n", true), (std::vector<std::string>{"a\nb\nc\n", "d\ne"}));
    EXPECT_EQ(inputs("tail\nwithout end", true), (std::vector<std::string>{"tail\nwithout end\n"}));
}

TEST(ChatInput, ReversePrompts) {
    const std::vector<std::string> rp = {"User:", "###"};
    EXPECT_EQ(ends_with_reverse_prompt("Hello.\nUser:", rp), &rp[0]);
    EXPECT_EQ(ends_with_reverse_prompt("a ###", rp), &rp[1]);
    EXPECT_EQ(ends_with_reverse_prompt("User: hi", rp), nullptr);
    EXPECT_EQ(ends_with_reverse_prompt("Use", rp), nullptr);
    EXPECT_EQ(ends_with_reverse_prompt("anything", {""}), nullptr);
}
