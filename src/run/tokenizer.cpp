// Tokenizer: loading from GGUF metadata, special-token matching, encode and decode.
#include "tokenizer_impl.h"
#include "tokenizer_utf8.h"

#include <algorithm>
#include <cctype>

namespace gk::run {

struct Tokenizer::impl {
    tokenizer_kind kind = tokenizer_kind::spm;
    std::string    model, pre;
    vocab          voc;
    special_tokens ids;

    bool add_bos = false, add_eos = false, add_sep = false;
    bool add_space_prefix = false;               // SentencePiece: " " in front of the text
    bool lowercase = true, strip_accents = true; // WordPiece normaliser
    bool ignore_merges = false;                  // BPE: a word that is a token is taken whole
    bool raw_utf8 = false, space_mark = false;   // BPE over raw UTF-8 (pre_tokenizer_spec)
    bool newline_words = false;                  // BPE: gemma4's newline runs whole

    bpe_ranks                      ranks;
    std::unique_ptr<pre_tokenizer> pretok;

    std::vector<std::string> piece;         // the bytes of each token (control: its text)
    std::vector<char>        hidden;        // control / unknown: shown only when asked
    std::vector<token_id>    matchable;     // matched in the text before tokenizing, longest first
    std::vector<char>        rstrip;        // a match eats the white space after it
    std::vector<token_id>    eog;           // sorted
    std::vector<std::string> warnings;

    // A stretch of the input: either a token already decided, or text to tokenize.
    struct fragment {
        token_id         id;    // k_no_token for text
        std::string_view text;
    };
    std::vector<fragment> partition(std::string_view text, bool parse_special) const;
    void encode_text(std::string_view text, bool after_special, std::vector<token_id> & out) const;
};

namespace {

constexpr const char * k_space_mark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// ---- metadata access ----------------------------------------------------------------

bool fail(std::string * error, const std::string & msg) {
    if (error) *error = msg;
    return false;
}

// An optional integer key of any integer type; false (with a message) when it is not one.
bool get_int(const gk_gguf * g, const char * key, int64_t & out, bool & found, std::string * error) {
    found = false;
    const gk_gguf_value * v = gk_gguf_get(g, key);
    if (v == nullptr) return true;
    const enum gk_gguf_type t = gk_gguf_value_type(v);
    const void * d = gk_gguf_value_data(v);
    switch (t) {
        case GK_GGUF_TYPE_UINT8:  out = *static_cast<const uint8_t *>(d);  break;
        case GK_GGUF_TYPE_INT8:   out = *static_cast<const int8_t *>(d);   break;
        case GK_GGUF_TYPE_UINT16: out = *static_cast<const uint16_t *>(d); break;
        case GK_GGUF_TYPE_INT16:  out = *static_cast<const int16_t *>(d);  break;
        case GK_GGUF_TYPE_UINT32: out = *static_cast<const uint32_t *>(d); break;
        case GK_GGUF_TYPE_INT32:  out = *static_cast<const int32_t *>(d);  break;
        case GK_GGUF_TYPE_INT64:  out = *static_cast<const int64_t *>(d);  break;
        case GK_GGUF_TYPE_UINT64: {
            const uint64_t u = *static_cast<const uint64_t *>(d);
            out = u > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(u);
            break;
        }
        default:
            return fail(error, std::string(key) + ": expected an integer, found " + gk_gguf_type_name(t));
    }
    found = true;
    return true;
}

bool get_bool(const gk_gguf * g, const char * key, bool & out, std::string * error) {
    const gk_gguf_value * v = gk_gguf_get(g, key);
    if (v == nullptr) return true;
    if (!gk_gguf_value_bool(v, &out)) {
        return fail(error, std::string(key) + ": expected a bool, found " + gk_gguf_type_name(gk_gguf_value_type(v)));
    }
    return true;
}

// An optional string key; `present` says whether it was there.
bool get_string(const gk_gguf * g, const char * key, std::string & out, bool & present, std::string * error) {
    present = false;
    const gk_gguf_value * v = gk_gguf_get(g, key);
    if (v == nullptr) return true;
    size_t len = 0;
    const char * s = gk_gguf_value_str(v, &len);
    if (s == nullptr) {
        return fail(error, std::string(key) + ": expected a string, found " + gk_gguf_type_name(gk_gguf_value_type(v)));
    }
    out.assign(s, len);
    present = true;
    return true;
}

// An optional array key of element type `elem` and at least `n` elements.
bool get_array(const gk_gguf * g, const char * key, enum gk_gguf_type elem, uint64_t n, const gk_gguf_value *& out,
               std::string * error) {
    out = gk_gguf_get(g, key);
    if (out == nullptr) return true;
    if (gk_gguf_value_type(out) != GK_GGUF_TYPE_ARRAY || gk_gguf_array_type(out) != elem) {
        return fail(error, std::string(key) + ": expected an array of " + gk_gguf_type_name(elem));
    }
    if (gk_gguf_array_len(out) < n) {
        return fail(error, std::string(key) + ": " + std::to_string(gk_gguf_array_len(out)) + " entries for " +
                               std::to_string(n) + " tokens");
    }
    return true;
}

// ---- loading ------------------------------------------------------------------------

bool load_tokens(const gk_gguf * g, vocab & v, std::string * error) {
    const char * key = "tokenizer.ggml.tokens";
    const gk_gguf_value * tokens = gk_gguf_get(g, key);
    if (tokens == nullptr) return fail(error, std::string("missing key ") + key + " (the vocabulary)");
    if (gk_gguf_value_type(tokens) != GK_GGUF_TYPE_ARRAY || gk_gguf_array_type(tokens) != GK_GGUF_TYPE_STRING) {
        return fail(error, std::string(key) + ": expected an array of strings");
    }
    const uint64_t n = gk_gguf_array_len(tokens);
    if (n == 0 || n > static_cast<uint64_t>(INT32_MAX)) {
        return fail(error, std::string(key) + ": " + std::to_string(n) + " tokens (need 1 .. 2^31-1)");
    }

    const gk_gguf_value * scores = nullptr;
    const gk_gguf_value * types = nullptr;
    const char * score_key = "tokenizer.ggml.scores";
    if (!get_array(g, "tokenizer.ggml.token_type", GK_GGUF_TYPE_INT32, n, types, error)) return false;
    const gk_gguf_value * sv = gk_gguf_get(g, score_key);
    const bool int_scores = sv != nullptr && gk_gguf_array_type(sv) == GK_GGUF_TYPE_INT32;
    if (!get_array(g, score_key, int_scores ? GK_GGUF_TYPE_INT32 : GK_GGUF_TYPE_FLOAT32, n, scores, error)) return false;

    v.text.resize(n);
    v.score.assign(n, 0.0f);
    v.type.assign(n, token_type::normal);
    v.ids.reserve(n);
    const auto * score_f = scores && !int_scores ? static_cast<const float *>(gk_gguf_array_data(scores)) : nullptr;
    const auto * score_i = scores && int_scores ? static_cast<const int32_t *>(gk_gguf_array_data(scores)) : nullptr;
    const auto * type_i = types ? static_cast<const int32_t *>(gk_gguf_array_data(types)) : nullptr;
    for (uint64_t i = 0; i < n; ++i) {
        size_t len = 0;
        const char * s = gk_gguf_array_str(tokens, i, &len);
        if (s == nullptr) len = 0;
        v.text[i].assign(s ? s : "", len);
        if (score_f) v.score[i] = score_f[i];
        if (score_i) v.score[i] = static_cast<float>(score_i[i]);
        if (type_i) {
            // GGUF's token types: 0 undefined, 1 normal, 2 unknown, 3 control, 4 user-defined,
            // 5 unused, 6 byte (llama.cpp's llama_token_type).
            const int32_t t = type_i[i];
            if (t < 0 || t > 6) {
                return fail(error, "tokenizer.ggml.token_type[" + std::to_string(i) + "] = " + std::to_string(t) +
                                       " is not a token type (0..6)");
            }
            v.type[i] = static_cast<token_type>(t);
        }
        if (len > 0) v.ids.insert_or_assign(v.text[i], static_cast<token_id>(i));  // the last of equal texts
        v.max_text_len = std::max(v.max_text_len, len);
    }
    return true;
}

bool load_merges(const gk_gguf * g, const vocab & v, bpe_ranks & ranks, std::string * error) {
    const char * key = "tokenizer.ggml.merges";
    const gk_gguf_value * merges = gk_gguf_get(g, key);
    if (merges == nullptr) return fail(error, std::string("missing key ") + key + " (needed by a gpt2 tokenizer)");
    if (gk_gguf_value_type(merges) != GK_GGUF_TYPE_ARRAY || gk_gguf_array_type(merges) != GK_GGUF_TYPE_STRING) {
        return fail(error, std::string(key) + ": expected an array of strings");
    }
    const uint64_t n = gk_gguf_array_len(merges);
    if (n > static_cast<uint64_t>(INT32_MAX)) return fail(error, std::string(key) + ": too many merges");
    for (uint64_t i = 0; i < n; ++i) {
        size_t len = 0;
        const char * s = gk_gguf_array_str(merges, i, &len);
        const std::string_view line = s ? std::string_view(s, len) : std::string_view();
        if (!ranks.add(v, line, static_cast<int32_t>(i))) {
            return fail(error, std::string(key) + "[" + std::to_string(i) + "]: '" + std::string(line) +
                                   "' is not two pieces separated by a space");
        }
    }
    return true;
}

// Special ids: the family's defaults (dropped when outside the vocabulary), then the keys.
// A key naming another id outside the vocabulary is ignored with a warning, as llama.cpp does.
bool load_special_ids(const gk_gguf * g, tokenizer_kind kind, int32_t n, special_tokens & s,
                      std::vector<std::string> & warnings, std::string * error) {
    if (kind == tokenizer_kind::spm) {
        s.bos = 1, s.eos = 2, s.unk = 0;
    } else if (kind == tokenizer_kind::wpm) {
        s.bos = 101, s.unk = 100, s.sep = 102, s.pad = 0, s.mask = 103;
    }
    const struct {
        const char * key;
        token_id *   id;
    } keys[] = {
        {"tokenizer.ggml.bos_token_id", &s.bos},        {"tokenizer.ggml.eos_token_id", &s.eos},
        {"tokenizer.ggml.eot_token_id", &s.eot},        {"tokenizer.ggml.eom_token_id", &s.eom},
        {"tokenizer.ggml.unknown_token_id", &s.unk},    {"tokenizer.ggml.seperator_token_id", &s.sep},
        {"tokenizer.ggml.padding_token_id", &s.pad},    {"tokenizer.ggml.cls_token_id", &s.cls},
        {"tokenizer.ggml.mask_token_id", &s.mask},
    };
    for (const auto & k : keys) {
        if (*k.id >= n) *k.id = k_no_token;
        int64_t value = 0;
        bool found = false;
        if (!get_int(g, k.key, value, found, error)) return false;
        // -1 (as int32 or uint32) is the converters' way of writing "none": ignored silently.
        if (!found || value == -1 || value == int64_t(UINT32_MAX)) continue;
        if (value >= 0 && value < n) {
            *k.id = static_cast<token_id>(value);
        } else {
            warnings.push_back(std::string(k.key) + " = " + std::to_string(value) + " is outside the vocabulary of " +
                               std::to_string(n) + " tokens; ignored" +
                               (*k.id == k_no_token ? std::string() : " (using " + std::to_string(*k.id) + ")"));
        }
    }
    return true;
}

bool is_special_type(token_type t) {
    return t == token_type::control || t == token_type::unknown || t == token_type::user_defined;
}

// Texts of end-of-turn tokens, for vocabularies that do not name them by key.
constexpr const char * k_end_of_turn_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "<end_of_utterance>",
};

void find_end_of_turn(Tokenizer::impl & t) {
    for (const char * text : k_end_of_turn_texts) {
        const token_id id = t.voc.find(text);
        if (id == k_no_token) continue;
        if (t.ids.eot == k_no_token) t.ids.eot = id;
        t.eog.push_back(id);
    }
    for (const token_id id : {t.ids.eos, t.ids.eot, t.ids.eom}) {
        if (id != k_no_token) t.eog.push_back(id);
    }
    std::sort(t.eog.begin(), t.eog.end());
    t.eog.erase(std::unique(t.eog.begin(), t.eog.end()), t.eog.end());
}

// The pieces of every token, computed once.
void build_pieces(Tokenizer::impl & t) {
    const int32_t n = t.voc.size();
    t.piece.resize(n);
    t.hidden.assign(n, 0);
    for (int32_t i = 0; i < n; ++i) {
        const std::string & text = t.voc.text[i];
        std::string & p = t.piece[i];
        switch (t.voc.type[i]) {
            case token_type::control:
            case token_type::unknown:
                t.hidden[i] = 1;
                p = text;
                break;
            case token_type::user_defined:
                p = text;
                break;
            case token_type::byte:
                if (text.size() == 6 && text.compare(0, 3, "<0x") == 0 && text[5] == '>' &&
                    std::isxdigit(static_cast<unsigned char>(text[3])) &&
                    std::isxdigit(static_cast<unsigned char>(text[4]))) {
                    p.assign(1, static_cast<char>(std::stoi(text.substr(3, 2), nullptr, 16)));
                }
                break;
            case token_type::normal:
                if (t.kind == tokenizer_kind::bpe && !t.raw_utf8) {
                    // byte-level characters back to bytes; others pass through unchanged
                    for (size_t pos = 0; pos < text.size();) {
                        const size_t start = pos;
                        const int b = utf8::char_to_byte(utf8::next(text, pos));
                        if (b >= 0) {
                            p += static_cast<char>(b);
                        } else {
                            p.append(text, start, pos - start);
                        }
                    }
                } else {
                    for (size_t pos = 0; pos < text.size();) {
                        if (text.compare(pos, 3, k_space_mark) == 0) {
                            p += ' ';
                            pos += 3;
                        } else {
                            p += text[pos++];
                        }
                    }
                }
                break;
            case token_type::unused:
            case token_type::undefined:
                break;  // no text, like llama.cpp
        }
    }
}

// Control, unknown and user-defined tokens are looked for in the input before it is
// tokenized, longest first. Phi-3's tokenizer.json marks its added tokens rstrip (the
// white space after them belongs to them); GGUF does not carry that, so the model name
// tells, as in llama.cpp.
void build_matchable(Tokenizer::impl & t, const gk_gguf * g) {
    const int32_t n = t.voc.size();
    for (int32_t i = 0; i < n; ++i) {
        if (is_special_type(t.voc.type[i]) && !t.voc.text[i].empty()) t.matchable.push_back(i);
    }
    std::stable_sort(t.matchable.begin(), t.matchable.end(), [&](token_id a, token_id b) {
        return t.voc.text[a].size() > t.voc.text[b].size();
    });
    t.rstrip.assign(n, 0);

    const gk_gguf_value * name_v = gk_gguf_get(g, "general.name");
    const char * name_c = name_v ? gk_gguf_value_str(name_v, nullptr) : nullptr;
    std::string name = name_c ? name_c : "";
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (const token_id id : t.matchable) t.rstrip[id] = 1;
        if (const token_id id = t.voc.find("</s>"); id != k_no_token) t.rstrip[id] = 1;
        for (const char * keep : {"<unk>", "<s>", "<|endoftext|>"}) {
            if (const token_id id = t.voc.find(keep); id != k_no_token) t.rstrip[id] = 0;
        }
    }
}

bool is_ascii_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

} // namespace

// ---- special tokens in the input ------------------------------------------------------

std::vector<Tokenizer::impl::fragment> Tokenizer::impl::partition(std::string_view text, bool parse_special) const {
    std::vector<fragment> frags;
    if (!text.empty()) frags.push_back({k_no_token, text});
    std::vector<fragment> next;
    for (const token_id id : matchable) {
        const token_type t = voc.type[id];
        if (!parse_special && (t == token_type::control || t == token_type::unknown)) continue;
        const std::string & needle = voc.text[id];
        next.clear();
        bool changed = false;
        for (const fragment & f : frags) {
            if (f.id != k_no_token) {
                next.push_back(f);
                continue;
            }
            std::string_view rest = f.text;
            for (size_t at; (at = rest.find(needle)) != std::string_view::npos;) {
                if (at > 0) next.push_back({k_no_token, rest.substr(0, at)});
                next.push_back({id, {}});
                rest.remove_prefix(at + needle.size());
                if (rstrip[id]) {
                    while (!rest.empty() && is_ascii_space(rest.front())) rest.remove_prefix(1);
                }
                changed = true;
            }
            if (!rest.empty()) next.push_back({k_no_token, rest});
        }
        if (changed) frags.swap(next);
    }
    return frags;
}

// ---- encoding -------------------------------------------------------------------------

void Tokenizer::impl::encode_text(std::string_view text, bool after_special, std::vector<token_id> & out) const {
    switch (kind) {
        case tokenizer_kind::spm: {
            std::string s;
            if (add_space_prefix && after_special) s = k_space_mark;
            for (const char c : text) {
                if (c == ' ') {
                    s += k_space_mark;
                } else {
                    s += c;
                }
            }
            encode_spm(voc, s, ids.unk, out);
            break;
        }
        case tokenizer_kind::bpe: {
            std::string valid;
            utf8::append_valid(text, valid, false);
            if (space_mark) {  // spaces as U+2581, before the split (llama.cpp's escape_whitespaces)
                std::string escaped;
                for (const char c : valid) {
                    if (c == ' ') {
                        escaped += k_space_mark;
                    } else {
                        escaped += c;
                    }
                }
                valid.swap(escaped);
            }
            std::string word;
            for (const std::string_view w : pretok->split(valid)) {
                if (newline_words && w.find_first_not_of('\n') == std::string_view::npos) {
                    const token_id whole = voc.find(w);
                    if (whole != k_no_token) {
                        out.push_back(whole);
                        continue;
                    }
                }
                word.clear();
                if (raw_utf8) {
                    word = w;
                } else {
                    for (const char c : w) word += utf8::byte_to_char(static_cast<uint8_t>(c));
                }
                encode_bpe_word(voc, ranks, word, ignore_merges, raw_utf8, out);
            }
            break;
        }
        case tokenizer_kind::wpm: {
            std::string valid;
            utf8::append_valid(text, valid, false);
            for (const std::string & w : gk::run::wordpiece_words(valid, lowercase, strip_accents)) {
                encode_wpm_word(voc, w, ids.unk, out);
            }
            break;
        }
    }
}

std::vector<token_id> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
    const impl & t = *p_;
    std::vector<token_id> out;
    if (add_special && t.add_bos) {
        out.push_back(t.kind == tokenizer_kind::wpm && t.ids.cls != k_no_token ? t.ids.cls : t.ids.bos);
    }
    bool after_special = true;  // the start of the text counts as after a special token
    for (const impl::fragment & f : t.partition(text, parse_special)) {
        if (f.id != k_no_token) {
            out.push_back(f.id);
            after_special = true;
        } else {
            t.encode_text(f.text, after_special, out);
            after_special = false;
        }
    }
    if (add_special && t.add_eos) out.push_back(t.ids.eos);
    if (add_special && t.add_sep) out.push_back(t.ids.sep);
    return out;
}

// ---- loading ----------------------------------------------------------------------------

Tokenizer::Tokenizer(std::unique_ptr<impl> p) : p_(std::move(p)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::load(const gk_gguf * g, std::string * error) {
    if (g == nullptr) {
        fail(error, "no GGUF file");
        return nullptr;
    }
    auto t = std::make_unique<impl>();
    bool present = false;
    if (!get_string(g, "tokenizer.ggml.model", t->model, present, error)) return nullptr;
    if (!present) {
        fail(error, "missing key tokenizer.ggml.model (the tokenizer type)");
        return nullptr;
    }
    if (t->model == "llama") {
        t->kind = tokenizer_kind::spm;
    } else if (t->model == "gpt2") {
        t->kind = tokenizer_kind::bpe;
    } else if (t->model == "bert") {
        t->kind = tokenizer_kind::wpm;
    } else {
        fail(error, "tokenizer.ggml.model: unsupported tokenizer '" + t->model + "' (supported: llama, gpt2, bert)");
        return nullptr;
    }
    if (!get_string(g, "tokenizer.ggml.pre", t->pre, present, error)) return nullptr;
    if (!load_tokens(g, t->voc, error)) return nullptr;

    switch (t->kind) {
        case tokenizer_kind::spm:
            t->add_space_prefix = true;
            t->add_bos = true;
            break;
        case tokenizer_kind::wpm:
            t->add_bos = true;
            t->add_sep = true;
            break;
        case tokenizer_kind::bpe: {
            pre_tokenizer_spec spec;
            if (!find_pre_tokenizer(t->pre, spec)) {
                fail(error, "tokenizer.ggml.pre: unsupported pre-tokenizer '" + t->pre + "' (not one llama.cpp knows)");
                return nullptr;
            }
            t->ignore_merges = spec.ignore_merges;
            t->add_bos = spec.add_bos;
            t->raw_utf8 = spec.raw_utf8;
            t->space_mark = spec.space_mark;
            t->newline_words = spec.newline_words;
            t->pretok = pre_tokenizer::compile(spec.regexes, error);
            if (!t->pretok) return nullptr;
            if (!load_merges(g, t->voc, t->ranks, error)) return nullptr;
            break;
        }
    }
    if (!get_bool(g, "tokenizer.ggml.add_space_prefix", t->add_space_prefix, error) ||
        !get_bool(g, "tokenizer.ggml.add_bos_token", t->add_bos, error) ||
        !get_bool(g, "tokenizer.ggml.add_eos_token", t->add_eos, error) ||
        !get_bool(g, "tokenizer.ggml.add_sep_token", t->add_sep, error) ||
        !get_bool(g, "tokenizer.ggml.normalizer.lowercase", t->lowercase, error)) {
        return nullptr;
    }
    t->strip_accents = t->lowercase;
    if (!get_bool(g, "tokenizer.ggml.normalizer.strip_accents", t->strip_accents, error)) return nullptr;
    if (!load_special_ids(g, t->kind, t->voc.size(), t->ids, t->warnings, error)) return nullptr;

    const token_id first = t->kind == tokenizer_kind::wpm && t->ids.cls != k_no_token ? t->ids.cls : t->ids.bos;
    if (t->add_bos && first == k_no_token) {
        fail(error, "tokenizer.ggml.add_bos_token is set but the vocabulary has no BOS token");
        return nullptr;
    }
    if (t->add_eos && t->ids.eos == k_no_token) {
        fail(error, "tokenizer.ggml.add_eos_token is set but the vocabulary has no EOS token");
        return nullptr;
    }
    if (t->add_sep && t->ids.sep == k_no_token) {
        fail(error, "tokenizer.ggml.add_sep_token is set but the vocabulary has no separator token");
        return nullptr;
    }

    find_end_of_turn(*t);
    build_pieces(*t);
    build_matchable(*t, g);
    return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(t)));
}

// ---- accessors ------------------------------------------------------------------------

tokenizer_kind Tokenizer::kind() const { return p_->kind; }
const std::string & Tokenizer::model_name() const { return p_->model; }
const std::string & Tokenizer::pre_name() const { return p_->pre; }
int32_t Tokenizer::n_tokens() const { return p_->voc.size(); }
const special_tokens & Tokenizer::special() const { return p_->ids; }
bool Tokenizer::add_bos() const { return p_->add_bos; }
bool Tokenizer::add_eos() const { return p_->add_eos; }
bool Tokenizer::add_space_prefix() const { return p_->add_space_prefix; }
const std::vector<std::string> & Tokenizer::warnings() const { return p_->warnings; }

std::string_view Tokenizer::token_text(token_id id) const {
    return id >= 0 && id < p_->voc.size() ? std::string_view(p_->voc.text[id]) : std::string_view();
}

token_type Tokenizer::type_of(token_id id) const {
    return id >= 0 && id < p_->voc.size() ? p_->voc.type[id] : token_type::undefined;
}

bool Tokenizer::is_eog(token_id id) const {
    return std::binary_search(p_->eog.begin(), p_->eog.end(), id);
}

const std::vector<token_id> & Tokenizer::eog_tokens() const { return p_->eog; }

std::vector<std::string> Tokenizer::wordpiece_words(std::string_view text) const {
    if (p_->kind != tokenizer_kind::wpm) return {};
    std::string valid;
    utf8::append_valid(text, valid, false);
    return gk::run::wordpiece_words(valid, p_->lowercase, p_->strip_accents);
}

const std::string & Tokenizer::token_to_piece(token_id id, bool special) const {
    static const std::string none;
    if (id < 0 || id >= p_->voc.size() || (p_->hidden[id] && !special)) return none;
    return p_->piece[id];
}

std::string Tokenizer::decode(std::span<const token_id> ids, bool special) const {
    Detokenizer d(*this, special);
    std::string out;
    for (const token_id id : ids) out += d.push(id);
    out += d.finish();
    return out;
}

// ---- streaming detokenizer --------------------------------------------------------------

Detokenizer::Detokenizer(const Tokenizer & tok, bool special, bool continues_text)
    : tok_(tok), special_(special), at_start_(!continues_text) {}
Detokenizer::~Detokenizer() = default;

std::string Detokenizer::push(token_id id) {
    std::string_view piece = tok_.token_to_piece(id, special_);
    if (piece.empty()) return {};
    if (at_start_) {
        // the space that SentencePiece put in front, or WordPiece's word-start mark
        const bool strip = tok_.kind() == tokenizer_kind::wpm ||
                           (tok_.kind() == tokenizer_kind::spm && tok_.add_space_prefix());
        if (strip && piece.front() == ' ') piece.remove_prefix(1);
        at_start_ = false;
    }
    pending_.append(piece);
    std::string out;
    const size_t tail = utf8::append_valid(pending_, out, true);
    pending_.erase(0, pending_.size() - tail);
    return out;
}

std::string Detokenizer::finish() {
    std::string out;
    utf8::append_valid(pending_, out, false);
    pending_.clear();
    at_start_ = true;
    return out;
}

} // namespace gk::run
