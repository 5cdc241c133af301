// tokenizer.h - text <-> token ids from the tokenizer.* metadata of a GGUF file.
//
// Three families, chosen by `tokenizer.ggml.model`:
//   "llama" SentencePiece-style BPE over scores (llama, gemma, phi-3): spaces become U+2581,
//           a space is put in front of the text (tokenizer.ggml.add_space_prefix, default
//           on), pieces that are not in the vocabulary fall back to <0xXX> byte tokens;
//   "gpt2"  GPT-2 byte-level BPE over ranked merges, after splitting the text with the
//           pre-tokenizer regexes named by `tokenizer.ggml.pre` (see docs/tokenizers.md);
//   "bert"  WordPiece: NFD, lower-casing, accent stripping, punctuation and CJK split,
//           greedy longest match; a word that cannot be covered becomes [UNK].
// The vocabulary, scores, token types, merges, special ids and add_bos/add_eos flags are
// read once by Tokenizer::load; a missing or mistyped key is a clear error, never a crash.
//
// Token ids are int32 (GGUF's choice). Pieces are raw bytes: a byte token or a part of a
// multi-byte character is not valid UTF-8 on its own; Detokenizer joins them into text.
#pragma once

#include "gk/gguf.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gk::run {

using token_id = int32_t;
inline constexpr token_id k_no_token = -1;

/** The tokenizer family, from tokenizer.ggml.model. */
enum class tokenizer_kind { spm, bpe, wpm };

/** tokenizer.ggml.token_type values (GGUF / llama.cpp numbering). */
enum class token_type : int32_t {
    undefined    = 0,
    normal       = 1,
    unknown      = 2,
    control      = 3,
    user_defined = 4,
    unused       = 5,
    byte         = 6,
};

/** Ids of the special tokens; k_no_token where the vocabulary has none. */
struct special_tokens {
    token_id bos  = k_no_token;
    token_id eos  = k_no_token;
    token_id eot  = k_no_token;  // end of turn (key, or found by its text)
    token_id eom  = k_no_token;  // end of message
    token_id unk  = k_no_token;
    token_id sep  = k_no_token;
    token_id pad  = k_no_token;
    token_id cls  = k_no_token;
    token_id mask = k_no_token;
};

class Tokenizer {
public:
    /** Build the tokenizer described by the tokenizer.* keys of `gguf` (the file may be
     *  closed afterwards: everything is copied). Returns nullptr and a message naming the
     *  key and the problem in `*error` (may be null) when a required key is missing or has
     *  the wrong type, an array is shorter than the vocabulary, a special id is out of
     *  range, a token type is not one of GGUF's (0..6), or the model / pre-tokenizer is
     *  not supported. A special-token key naming an id outside the vocabulary is ignored
     *  with a warning (warnings()), as llama.cpp does. */
    static std::unique_ptr<Tokenizer> load(const gk_gguf * gguf, std::string * error);

    ~Tokenizer();
    Tokenizer(const Tokenizer &) = delete;
    Tokenizer & operator=(const Tokenizer &) = delete;

    tokenizer_kind kind() const;
    /** tokenizer.ggml.model and tokenizer.ggml.pre ("" when absent). */
    const std::string & model_name() const;
    const std::string & pre_name() const;
    int32_t n_tokens() const;
    const special_tokens & special() const;
    /** Whether encode(add_special = true) puts BOS in front / EOS at the end. */
    bool add_bos() const;
    bool add_eos() const;
    /** Whether SentencePiece text gets a leading space (and decoding drops it again). */
    bool add_space_prefix() const;
    /** What load() accepted but found wrong in the file, one line each, naming the key. */
    const std::vector<std::string> & warnings() const;

    /** The token's text as stored in the vocabulary; "" for an id out of range. */
    std::string_view token_text(token_id id) const;
    /** The token's type; token_type::undefined for an id out of range. */
    token_type type_of(token_id id) const;
    /** True for tokens that end generation: EOS, EOT, EOM and the end-of-turn tokens
     *  found by their text (<|eot_id|>, <|im_end|>, <end_of_turn>, ...). */
    bool is_eog(token_id id) const;
    /** Every token is_eog accepts, in increasing order. */
    const std::vector<token_id> & eog_tokens() const;

    /** Token ids of `text` (UTF-8; invalid bytes are kept by SentencePiece byte fallback
     *  and become U+FFFD for the other families). `add_special`: BOS / EOS (WordPiece:
     *  CLS ... SEP) as the vocabulary's flags say. `parse_special`: control and unknown
     *  token texts in `text` (e.g. "<|im_start|>") become those tokens; user-defined tokens
     *  are always matched as tokens, as in Hugging Face tokenizers. */
    std::vector<token_id> encode(std::string_view text, bool add_special, bool parse_special) const;

    /** WordPiece: the normalised words of `text` that encode() looks up (NFD and accents
     *  stripped, lower-cased, as the vocabulary's normaliser flags say; punctuation and
     *  CJK split off). Empty for the other families. */
    std::vector<std::string> wordpiece_words(std::string_view text) const;

    /** The bytes that token `id` stands for: byte-level text mapped back to bytes,
     *  U+2581 back to spaces, <0xXX> to its byte. Control and unknown tokens give their
     *  text when `special`, else "". An id out of range gives "". */
    const std::string & token_to_piece(token_id id, bool special) const;

    /** All of `ids` as text: the pieces joined, the SentencePiece space prefix removed,
     *  and invalid or incomplete UTF-8 replaced by U+FFFD. Same as feeding a Detokenizer. */
    std::string decode(std::span<const token_id> ids, bool special) const;

    struct impl;

private:
    explicit Tokenizer(std::unique_ptr<impl> p);
    std::unique_ptr<impl> p_;
};

/** Streaming detokenizer: feed sampled tokens one by one and print what comes back. It
 *  holds back the bytes of a UTF-8 sequence that is not complete yet (byte-fallback and
 *  byte-level tokens split characters), so every returned string is valid UTF-8. */
class Detokenizer {
public:
    /** `special`: print control tokens' text (see Tokenizer::token_to_piece).
     *  `continues_text`: the tokens continue text that is already there (a prompt), so
     *  the first piece keeps its leading space; otherwise the SentencePiece prefix space
     *  (WordPiece's word-start mark) of the first piece is dropped, as decode() does.
     *  The tokenizer must outlive the detokenizer. */
    Detokenizer(const Tokenizer & tok, bool special, bool continues_text = false);
    ~Detokenizer();

    /** The text completed by token `id` (possibly ""). */
    std::string push(token_id id);
    /** The bytes still held back, as U+FFFD (an unfinished sequence at the end); resets
     *  to the start of a text. */
    std::string finish();

private:
    const Tokenizer & tok_;
    bool special_;
    bool at_start_ = true;   // the SentencePiece prefix space is still to be dropped
    std::string pending_;    // bytes of an unfinished UTF-8 sequence
};

} // namespace gk::run
