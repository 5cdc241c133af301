// Pre-tokenizers of byte-level BPE vocabularies: the split regexes that each
// `tokenizer.ggml.pre` name stands for, and the PCRE2 matcher that applies them.
//
// The regex strings are those of the models' tokenizer.json files as llama.cpp states
// them (src/llama-vocab.cpp), with case-insensitive groups spelt out as [sS] classes.
// Where llama.cpp's regex engine reads a class otherwise than PCRE2 would, the entry
// spells out what llama.cpp computes: it takes \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm} and
// \p{Lo} each as any letter (youtu, tiny_aya), and \d as ASCII in a regex without \p{..}
// classes (superbpe); where it splits with hand-written code instead of a regex (afmoe's
// and tiny_aya's digits, kimi-k2), the entry is a regex that does the same. The table
// has every name llama.cpp knows.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer_impl.h"

#include <pcre2.h>

namespace gk::run {

namespace {

// GPT-2's split (also the core of several others).
constexpr const char * k_gpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

// Llama 3's split; Qwen 2's differs only in taking digits one at a time.
constexpr const char * k_llama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_qwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// GPT-4o / Llama 4 and Tekken (Mistral Nemo): letter runs split at case changes. llama.cpp
// writes "upper" as a letter other than a-z and "lower" as one other than A-Z (lookaheads),
// which its engine needs; so a letter outside ASCII counts as both, and "aÉ" is one run.
constexpr const char * k_gpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+"
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*"
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_tekken =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+"
    "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*"
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Qwen 3.5: Qwen 2's with combining marks kept in letter runs.
constexpr const char * k_qwen35 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// DeepSeek V3's split after its digit and CJK/kana runs (also Hunyuan dense, JoyAI, HY v4).
constexpr const char * k_deepseek3_words =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

// GPT-4o's letter runs split at case changes, with marks counted as letters in the
// lookaheads (Granite multilingual embeddings, 97M).
constexpr const char * k_granite_multi =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+"
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*"
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Digit runs cut into groups of three from the right, the first of 1-3 (llama.cpp's
// hand-written split for afmoe, also used for tiny_aya's digit regex).
constexpr const char * k_digit_groups = "\\p{N}{1,3}(?=(?:\\p{N}{3})*(?!\\p{N}))";

// BLOOM-style: everything up to a space or a sentence mark.
constexpr const char * k_bloom = " ?[^(\\s|.,!?…。，、।۔،)]+";

struct pre_entry {
    std::vector<std::string_view> names;
    std::vector<std::string>      regexes;
    bool ignore_merges = false;
    bool add_bos       = false;
    bool raw_utf8      = false;
    bool space_mark    = false;
    bool newline_words = false;
};

const std::vector<pre_entry> & pre_table() {
    static const std::vector<pre_entry> table = {
        {{"", "default"}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", k_gpt2, "\\p{N}+", "[0-9][0-9][0-9]"}},
        {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
          "jina-v5-nano"},
         {k_llama3}, true, true},
        {{"dbrx", "smaug-bpe", "chatglm-bpe"}, {k_llama3}},
        {{"glm4", "glm5"}, {k_llama3}, true},
        {{"qwen2", "deepseek-r1-qwen", "stablelm2", "megrez", "hunyuan", "kormo", "f2llmv2", "grok-2", "solar-open"},
         {k_qwen2}},
        {{"deepseek-llm"},
         {
          "[\r\n]",
          "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
          "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
          "\\s+$",
          "[一-龥ࠀ-一가-퟿]+",
          "\\p{N}+",
         }},
        {{"deepseek-coder"}, {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"}},
        {{"deepseek-v3"},
         {
          "\\p{N}{1,3}",
          "[一-龥぀-ゟ゠-ヿ]+",
          "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
         }},
        {{"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", k_gpt2, "[0-9][0-9][0-9]"}},
        {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
         {"\\p{N}", k_gpt2}},
        {{"gpt-2", "phi-2", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4", "jina-es", "jina-de",
          "jina-v2-es", "jina-v2-de", "gigachat", "a.x-4.0", "mellum", "modern-bert", "roberta-bpe", "jina-v1-en",
          "jina-v2-code"},
         {k_gpt2}},
        {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, {k_gpt4o}},
        {{"tekken"}, {k_tekken}, true, true},
        {{"bloom", "poro-chat", "gpt3-finnish"}, {k_bloom}},
        {{"viking"}, {k_bloom, "\\p{N}"}},
        {{"seed-coder"},
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}"
          "| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {{"jais-2"},  // Llama 3's, with runs of white space cut into powers of two
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
          "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)"
          "|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"}},
        {{"minicpm5"},
         {"\\p{N}{1,3}",
          "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+"
          "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         true},
        {{"qwen35"}, {k_qwen35}},
        {{"hunyuan-dense", "joyai-llm", "hy_v4"}, {"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", k_deepseek3_words}},
        {{"spark2_5"},
         {"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
          "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
          "| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
          "\\p{N}"}},
        {{"youtu"},
         {"[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
          "[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
          "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         true},
        {{"exaone-moe"},  // letter runs go on over single spaces between letters
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: "
          "\\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
        {{"chameleon"},
         {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
          "[\\p{P}!-/:-@\\[-`{-~]", k_gpt2},
         false, true},
        {{"granite-embed-multi-97m"}, {k_granite_multi}, true},
        {{"tiny_aya", "cohere2moe"},  // digits grouped in threes from the right, then GPT-4o's split
         {k_digit_groups,
          "[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
          "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {{"superbpe"}, {"\\p{N}+", "(?=([0-9]{3})+(?![0-9]))"}},
        {{"bailingmoe", "bailingmoe2", "llada-moe"},
         {"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
          "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
        {{"ufakzeka"},  // Qwen 2's without the contractions (Turkish suffixes stay on their word)
         {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {{"afmoe"}, {k_digit_groups, "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+", k_deepseek3_words}},
        {{"kimi-k2"},  // llama.cpp's hand-written split: Han runs, then letter runs without Han or case
         {"\\p{Han}+|[^\\r\\n\\p{L}\\p{N}]?(?:(?!\\p{Han})\\p{L})+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
          "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {{"laguna"}, {"[^\\n]+|[\\n]+", k_qwen2}},
        // SentencePiece-style BPE over raw UTF-8, spaces as U+2581: only lines are split
        {{"gemma4", "granite-embed-multi-311m"}, {"[^\\n]+|[\\n]+"}, false, false, true, true, true},
        {{"sarvam-moe"}, {"[^\\n]+|[\\n]+"}, false, false, true, true},
        {{"whitespace"}, {"\\S+"}, false, false, true},  // runs of non-space and of space, raw UTF-8
    };
    return table;
}

// PCRE2's \s (with Unicode properties) is tab, LF, VT, FF, CR and the Z categories; the
// tokenizers' \s is Unicode White_Space, which also has U+0085 (NEXT LINE). Add it.
std::string with_next_line_as_space(std::string_view re) {
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < re.size(); ++i) {
        const char c = re[i];
        if (c == '\\' && i + 1 < re.size()) {
            const char e = re[++i];
            if (e == 's') {
                out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
            } else if (e == 'S' && !in_class) {
                out += "[^\\s\\x{85}]";
            } else {
                out += c;
                out += e;
            }
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = true;
        } else if (c == ']' && in_class) {
            in_class = false;
        }
        out += c;
    }
    return out;
}

} // namespace

bool find_pre_tokenizer(std::string_view name, pre_tokenizer_spec & spec) {
    for (const pre_entry & e : pre_table()) {
        for (const std::string_view n : e.names) {
            if (n == name) {
                spec.regexes = e.regexes;
                spec.ignore_merges = e.ignore_merges;
                spec.add_bos = e.add_bos;
                spec.raw_utf8 = e.raw_utf8;
                spec.space_mark = e.space_mark;
                spec.newline_words = e.newline_words;
                return true;
            }
        }
    }
    return false;
}

struct pre_tokenizer::compiled {
    struct code_free {
        void operator()(pcre2_code * c) const { pcre2_code_free(c); }
    };
    std::unique_ptr<pcre2_code, code_free> code;
};

pre_tokenizer::pre_tokenizer(std::vector<compiled> c) : regexes_(std::move(c)) {}
pre_tokenizer::~pre_tokenizer() = default;

std::unique_ptr<pre_tokenizer> pre_tokenizer::compile(const std::vector<std::string> & regexes, std::string * error) {
    std::vector<compiled> out;
    for (const std::string & re : regexes) {
        const std::string pattern = with_next_line_as_space(re);
        int code = 0;
        PCRE2_SIZE at = 0;
        pcre2_code * c = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                       PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &code, &at, nullptr);
        if (c == nullptr) {
            if (error) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(code, msg, sizeof msg);
                *error = "pre-tokenizer regex '" + re + "' does not compile at offset " + std::to_string(at) + ": " +
                         reinterpret_cast<const char *>(msg);
            }
            return nullptr;
        }
        pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);  // where JIT is missing, pcre2_match interprets
        out.push_back({std::unique_ptr<pcre2_code, compiled::code_free>(c)});
    }
    return std::unique_ptr<pre_tokenizer>(new pre_tokenizer(std::move(out)));
}

std::vector<std::string_view> pre_tokenizer::split(std::string_view text) const {
    std::vector<std::string_view> pieces;
    if (!text.empty()) pieces.push_back(text);
    std::vector<std::string_view> next;
    for (const compiled & re : regexes_) {
        pcre2_match_data * md = pcre2_match_data_create_from_pattern(re.code.get(), nullptr);
        if (md == nullptr) continue;  // out of memory: leave the pieces as they are
        const PCRE2_SIZE * ov = pcre2_get_ovector_pointer(md);
        next.clear();
        for (const std::string_view piece : pieces) {
            const auto * subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
            size_t done = 0;  // end of the last piece cut from `piece`
            size_t from = 0;  // where the next search starts
            while (from < piece.size()) {
                // Pieces are cut at match ends, so they stay well-formed UTF-8. A match
                // error (a resource limit) leaves the rest of the piece whole.
                const int rc = pcre2_match(re.code.get(), subject, piece.size(), from, PCRE2_NO_UTF_CHECK, md, nullptr);
                if (rc < 0) break;
                const size_t b = ov[0], e = ov[1];
                if (e == b) {  // an empty match cuts there (superbpe's digit groups); step over one character
                    if (b > done) {
                        next.push_back(piece.substr(done, b - done));
                        done = b;
                    }
                    from = b + 1;
                    while (from < piece.size() && (static_cast<unsigned char>(piece[from]) & 0xC0) == 0x80) ++from;
                    continue;
                }
                if (b > done) next.push_back(piece.substr(done, b - done));
                next.push_back(piece.substr(b, e - b));
                done = from = e;
            }
            if (done < piece.size()) next.push_back(piece.substr(done));
        }
        pcre2_match_data_free(md);
        pieces.swap(next);
    }
    return pieces;
}

} // namespace gk::run
