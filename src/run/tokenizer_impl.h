// tokenizer_impl.h - the pieces of the tokenizer shared between its files (internal).
#pragma once

#include "tokenizer.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gk::run {

/** std::string keys looked up by std::string_view without a copy. */
struct text_hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using text_to_id = std::unordered_map<std::string, token_id, text_hash, std::equal_to<>>;

/** The token table: text, score and type per id, and the reverse lookup. */
struct vocab {
    std::vector<std::string> text;
    std::vector<float>       score;
    std::vector<token_type>  type;
    text_to_id               ids;            // empty texts are left out
    size_t                   max_text_len = 0;

    /** The id whose text is `s`, or k_no_token. */
    token_id find(std::string_view s) const {
        const auto it = ids.find(s);
        return it == ids.end() ? k_no_token : it->second;
    }
    int32_t size() const { return static_cast<int32_t>(text.size()); }
};

// ---- SentencePiece (tokenizer_spm.cpp) ----------------------------------------------

/** Append the ids of `text` (spaces already replaced by U+2581): pairs of neighbouring
 *  pieces are merged, highest score first (leftmost on a tie), while the merged text is
 *  a token; pieces left that are not tokens become <0xXX> byte tokens (`unk` where the
 *  vocabulary lacks one, nothing when there is no `unk` either). */
void encode_spm(const vocab & v, std::string_view text, token_id unk, std::vector<token_id> & out);

/** The id of byte token <0xXX> for `b`, k_no_token if none. */
token_id hex_byte_token(const vocab & v, unsigned char b);

/** The id of byte token <0xXX> for `b` (or of the one-byte text), k_no_token if none. */
token_id spm_byte_token(const vocab & v, unsigned char b);

// ---- byte-level BPE (tokenizer_bpe.cpp) ---------------------------------------------

/** tokenizer.ggml.merges as ranks: the pair (left id, right id) -> rank (its line). */
class bpe_ranks {
public:
    /** Add merge `line` ("LEFT RIGHT", split at the first space after the first byte)
     *  with rank `rank`; merges whose halves are not tokens can never apply and are
     *  skipped. Returns false when the line has no such space. */
    bool add(const vocab & v, std::string_view line, int32_t rank);
    /** The rank of merging `left` then `right`, or -1. */
    int32_t rank(token_id left, token_id right) const;

private:
    std::unordered_map<uint64_t, int32_t> ranks_;
};

/** Append the ids of one pre-tokenized `word` that is already in the byte-level
 *  alphabet (or, `raw_utf8`, is the text itself): characters are merged by rank, lowest
 *  first (leftmost on a tie). With `ignore_merges`, a word that is itself a token is
 *  taken whole (llama-3 style). A piece left that is not a token becomes its characters'
 *  tokens, or with `raw_utf8` one <0xXX> token per byte (none where the vocabulary has
 *  no such token), as llama.cpp does for gemma4's BPE. */
void encode_bpe_word(const vocab & v, const bpe_ranks & ranks, std::string_view word, bool ignore_merges, bool raw_utf8,
                     std::vector<token_id> & out);

// ---- pre-tokenizers (tokenizer_pretok.cpp) ------------------------------------------

/** What a `tokenizer.ggml.pre` name stands for. */
struct pre_tokenizer_spec {
    std::vector<std::string> regexes;        // applied one after the other
    bool ignore_merges = false;              // llama-3 family: whole-word tokens first
    bool add_bos       = false;              // default of add_bos_token
    bool raw_utf8      = false;              // BPE over raw UTF-8 (gemma4, whitespace): words
                                             // not in the byte alphabet, <0xXX> byte tokens
    bool space_mark    = false;              // spaces become U+2581 before the split (gemma4)
    bool newline_words = false;              // gemma4: a word of newlines that is a token
                                             // is taken whole
};

/** The spec of pre-tokenizer `name` ("" = the default); false when it is unknown. */
bool find_pre_tokenizer(std::string_view name, pre_tokenizer_spec & spec);

/** The regexes of a spec, compiled (PCRE2, UTF + Unicode properties). */
class pre_tokenizer {
public:
    /** nullptr and `*error` when a regex does not compile. */
    static std::unique_ptr<pre_tokenizer> compile(const std::vector<std::string> & regexes, std::string * error);
    ~pre_tokenizer();

    /** Split well-formed UTF-8 `text` into words. Each regex in turn splits every piece
     *  that the previous ones left: its matches and the text between them all become
     *  pieces (Hugging Face's "Isolated" split behaviour). */
    std::vector<std::string_view> split(std::string_view text) const;

private:
    struct compiled;
    explicit pre_tokenizer(std::vector<compiled> c);
    std::vector<compiled> regexes_;
};

// ---- WordPiece (tokenizer_wpm.cpp) --------------------------------------------------

/** BERT's basic tokenizer on well-formed UTF-8: NFD and drop marks (when
 *  `strip_accents`), lower-case (when `lowercase`), drop control characters, split at
 *  white space, and make every punctuation mark, ASCII symbol and CJK ideograph a word
 *  of its own. */
std::vector<std::string> wordpiece_words(std::string_view text, bool lowercase, bool strip_accents);

/** Append the ids of `word`: greedy longest match from the left, the first piece with
 *  the U+2581 word-start mark that GGUF BERT vocabularies carry; `unk` when the word
 *  cannot be covered. */
void encode_wpm_word(const vocab & v, std::string_view word, token_id unk, std::vector<token_id> & out);

} // namespace gk::run
