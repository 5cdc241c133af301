// test-tokenizer: the tokenizers against llama.cpp's tokenizer test pairs
// (../shared/data/gguf/tokenizer: NAME.gguf.inp holds inputs separated by a line
// "__ggml_vocab_test__", NAME.gguf.out one line of ids per input, made with
// add_special = false, parse_special = false), round trips through the detokenizer,
// special tokens, streaming, and refusals of bad vocabularies.
#include "gk/gguf.h"
#include "run/tokenizer.h"
#include "run/tokenizer_impl.h"
#include "run/tokenizer_utf8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk::run::Detokenizer;
using gk::run::token_id;
using gk::run::Tokenizer;
using gk::run::tokenizer_kind;

namespace {

const fs::path k_data = fs::path(GK_SHARED_DATA) / "gguf";

struct closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};
using gguf_ptr = std::unique_ptr<gk_gguf, closer>;

// Each vocabulary is loaded once for the whole program (they are 1-4 MB).
const Tokenizer * vocab_tokenizer(const std::string & name) {
    static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
    auto it = cache.find(name);
    if (it != cache.end()) return it->second.get();
    std::unique_ptr<Tokenizer> tok;
    const fs::path path = k_data / "vocab" / ("ggml-vocab-" + name + ".gguf");
    gk_gguf_error gerr{};
    gguf_ptr g(gk_gguf_open(path.c_str(), &gerr));
    EXPECT_TRUE(g || !fs::exists(path)) << path << ": " << gerr.message;
    if (g) {
        std::string err;
        tok = Tokenizer::load(g.get(), &err);
        EXPECT_TRUE(tok) << name << ": " << err;
    }
    return cache.emplace(name, std::move(tok)).first->second.get();
}

std::string read_file(const fs::path & p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

struct test_case {
    std::string           text;
    std::vector<token_id> ids;
};

std::vector<test_case> read_pairs(const std::string & name) {
    const std::string base = "ggml-vocab-" + name + ".gguf";
    const std::string inp = read_file(k_data / "tokenizer" / (base + ".inp"));
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<test_case> cases;
    for (size_t start = 0;;) {
        const size_t at = inp.find(sep, start);
        if (at == std::string::npos) break;  // the file ends with the separator
        cases.push_back({inp.substr(start, at - start), {}});
        start = at + sep.size();
    }
    std::istringstream out(read_file(k_data / "tokenizer" / (base + ".out")));
    std::string line;
    for (test_case & c : cases) {
        if (!std::getline(out, line)) break;
        std::istringstream ids(line);
        for (long id; ids >> id;) c.ids.push_back(static_cast<token_id>(id));
    }
    return cases;
}

std::string show(const std::vector<token_id> & ids) {
    std::string s;
    for (const token_id id : ids) {
        s += ' ';
        s += std::to_string(id);
    }
    return s;
}

// ---- the llama.cpp test pairs ---------------------------------------------------------

class TokenizerPairsSharedData : public testing::TestWithParam<std::string> {};

TEST_P(TokenizerPairsSharedData, EncodeMatchesAndDecodeRoundTrips) {
    const std::string name = GetParam();
    const Tokenizer * tok = vocab_tokenizer(name);
    if (tok == nullptr) GTEST_SKIP() << "GK-SKIP: no vocab file for " << name << " under " << k_data;
    const std::vector<test_case> cases = read_pairs(name);
    ASSERT_EQ(cases.size(), 46u) << name;

    int encoded = 0, decoded = 0, decode_checked = 0;
    for (const test_case & c : cases) {
        const std::vector<token_id> ids = tok->encode(c.text, false, false);
        if (ids == c.ids) {
            ++encoded;
        } else {
            ADD_FAILURE() << name << ": '" << c.text << "'\n  got     " << show(ids) << "\n  expected" << show(c.ids);
        }

        // Decoding gives the text back. WordPiece loses case, accents, control characters
        // and the spacing around punctuation, so there the reference is its normalised
        // words joined by single spaces, for inputs where no word became [UNK].
        std::string expect = c.text;
        if (tok->kind() == tokenizer_kind::wpm) {
            const token_id unk = tok->special().unk;
            if (std::find(c.ids.begin(), c.ids.end(), unk) != c.ids.end()) continue;
            expect.clear();
            for (const std::string & w : tok->wordpiece_words(c.text)) {
                expect += (expect.empty() ? "" : " ") + w;
            }
        }
        ++decode_checked;
        const std::string text = tok->decode(c.ids, false);
        if (text == expect) {
            ++decoded;
        } else {
            ADD_FAILURE() << name << ": decode" << show(c.ids) << "\n  got      '" << text << "'\n  expected '" << expect
                          << "'";
        }
    }
    std::printf("[ %-12s ] encode %d/%zu cases exact, decode %d/%d round trips\n", name.c_str(), encoded, cases.size(),
                decoded, decode_checked);
}

INSTANTIATE_TEST_SUITE_P(Vocabs, TokenizerPairsSharedData,
                         testing::Values("bert-bge", "deepseek-llm", "falcon", "gpt-2", "llama-spm", "mpt", "phi-3"),
                         [](const testing::TestParamInfo<std::string> & i) {
                             std::string n = i.param;
                             for (char & ch : n) {
                                 if (ch == '-') ch = '_';
                             }
                             return n;
                         });

// ---- special tokens ------------------------------------------------------------------

std::vector<token_id> cat(std::vector<token_id> a, const std::vector<token_id> & b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

token_id id_of(const Tokenizer & tok, std::string_view text) {
    for (token_id i = 0; i < tok.n_tokens(); ++i) {
        if (tok.token_text(i) == text) return i;
    }
    return gk::run::k_no_token;
}

TEST(TokenizerSpecialSharedData, SentencePieceBosEosAndParseSpecial) {
    const Tokenizer * tok = vocab_tokenizer("llama-spm");
    if (tok == nullptr) GTEST_SKIP() << "GK-SKIP: no llama-spm vocab";
    ASSERT_EQ(tok->special().bos, 1);
    ASSERT_EQ(tok->special().eos, 2);
    EXPECT_TRUE(tok->add_bos());
    EXPECT_FALSE(tok->add_eos());
    const std::vector<token_id> hello = tok->encode("Hello", false, false);
    EXPECT_EQ(tok->encode("Hello", true, false), cat({1}, hello));
    EXPECT_EQ(tok->encode("", true, false), std::vector<token_id>{1});
    // Control-token text is matched only with parse_special; the text after a special
    // token gets the space prefix again.
    EXPECT_EQ(tok->encode("<s>Hello</s>", false, true), cat(cat({1}, hello), {2}));
    const std::vector<token_id> plain = tok->encode("<s>Hello</s>", false, false);
    EXPECT_TRUE(std::find(plain.begin(), plain.end(), 1) == plain.end());
    EXPECT_EQ(tok->decode(plain, false), "<s>Hello</s>");
    // control tokens print only when asked
    EXPECT_EQ(tok->decode(std::vector<token_id>{1, hello[0]}, false), "Hello");
    EXPECT_EQ(tok->decode(std::vector<token_id>{1, hello[0]}, true), "<s> Hello");
    EXPECT_TRUE(tok->is_eog(2));
    EXPECT_FALSE(tok->is_eog(1));
}

TEST(TokenizerSpecialSharedData, Phi3AddedTokensEatTheWhiteSpaceAfterThem) {
    const Tokenizer * tok = vocab_tokenizer("phi-3");
    if (tok == nullptr) GTEST_SKIP() << "GK-SKIP: no phi-3 vocab";
    const token_id user = id_of(*tok, "<|user|>");
    const token_id end = id_of(*tok, "<|end|>");
    ASSERT_NE(user, gk::run::k_no_token);
    ASSERT_NE(end, gk::run::k_no_token);
    EXPECT_EQ(tok->encode("<|user|>\nHi<|end|>\n", false, true), cat(cat({user}, tok->encode("Hi", false, false)), {end}));
    EXPECT_TRUE(tok->is_eog(end));  // <|end|> ends a turn
}

TEST(TokenizerSpecialSharedData, WordPieceClsSep) {
    const Tokenizer * tok = vocab_tokenizer("bert-bge");
    if (tok == nullptr) GTEST_SKIP() << "GK-SKIP: no bert-bge vocab";
    const std::vector<token_id> body = tok->encode("Hello world", false, false);
    EXPECT_EQ(tok->encode("Hello world", true, false), cat(cat({101}, body), {102}));
    EXPECT_EQ(tok->encode("[CLS] hi [SEP]", false, true), cat(cat({101}, tok->encode("hi", false, false)), {102}));
    EXPECT_EQ(tok->decode(tok->encode("Héllo, WORLD!", false, false), false), "hello , world !");
    const std::vector<std::string> words = tok->wordpiece_words("Héllo, WORLD! \xE4\xBD\xA0\xE5\xA5\xBD\tx\x01y");
    const std::vector<std::string> expect = {"hello", ",", "world", "!", "\xE4\xBD\xA0", "\xE5\xA5\xBD", "xy"};
    EXPECT_EQ(words, expect);
}

TEST(TokenizerSpecialSharedData, ByteLevelEndOfText) {
    const Tokenizer * tok = vocab_tokenizer("gpt-2");
    if (tok == nullptr) GTEST_SKIP() << "GK-SKIP: no gpt-2 vocab";
    EXPECT_FALSE(tok->add_bos());
    EXPECT_EQ(tok->encode("a<|endoftext|>b", true, true),
              cat(cat(tok->encode("a", false, false), {50256}), tok->encode("b", false, false)));
    const std::vector<token_id> plain = tok->encode("a<|endoftext|>b", false, false);
    EXPECT_TRUE(std::find(plain.begin(), plain.end(), 50256) == plain.end());
    EXPECT_EQ(tok->decode(plain, false), "a<|endoftext|>b");
    EXPECT_TRUE(tok->is_eog(50256));
}

// ---- invalid text and ids ---------------------------------------------------------------

TEST(TokenizerInputSharedData, InvalidUtf8AndIdsOutOfRange) {
    const Tokenizer * spm = vocab_tokenizer("llama-spm");
    const Tokenizer * bpe = vocab_tokenizer("gpt-2");
    if (spm == nullptr || bpe == nullptr) GTEST_SKIP() << "GK-SKIP: no vocab files";
    const std::string bad = "a\xFF" "b\xE2\x82";
    // SentencePiece keeps the stray byte as a byte token; byte-level BPE sees U+FFFD.
    const std::vector<token_id> s = spm->encode(bad, false, false);
    EXPECT_TRUE(std::find(s.begin(), s.end(), id_of(*spm, "<0xFF>")) != s.end());
    EXPECT_EQ(spm->decode(s, false), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
    EXPECT_EQ(bpe->decode(bpe->encode(bad, false, false), false), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
    for (const Tokenizer * tok : {spm, bpe}) {
        EXPECT_EQ(tok->token_to_piece(-1, true), "");
        EXPECT_EQ(tok->token_to_piece(tok->n_tokens(), true), "");
        EXPECT_EQ(tok->token_text(tok->n_tokens()), "");
        EXPECT_EQ(tok->decode(std::vector<token_id>{-5, tok->n_tokens(), 1 << 30}, true), "");
    }
}

// ---- streaming ----------------------------------------------------------------------------

bool valid_utf8(std::string_view s) {
    std::string clean;
    gk::run::utf8::append_valid(s, clean, false);
    return clean == s;
}

TEST(TokenizerStreamSharedData, HoldsBackSplitCharacters) {
    for (const char * name : {"llama-spm", "gpt-2", "falcon"}) {
        const Tokenizer * tok = vocab_tokenizer(name);
        if (tok == nullptr) continue;
        const std::string text = "\xF0\x9F\xA6\x99 and \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F fog";
        const std::vector<token_id> ids = tok->encode(text, false, false);
        Detokenizer d(*tok, false);
        std::string joined;
        int held = 0;
        for (const token_id id : ids) {
            const std::string part = d.push(id);
            EXPECT_TRUE(valid_utf8(part)) << name;
            held += part.empty() && !tok->token_to_piece(id, false).empty();
            joined += part;
        }
        joined += d.finish();
        EXPECT_EQ(joined, text) << name;
        EXPECT_GT(held, 0) << name << ": the emoji should span several tokens";
    }
    const Tokenizer * tok = vocab_tokenizer("llama-spm");
    if (tok == nullptr) GTEST_SKIP() << "GK-SKIP: no llama-spm vocab";
    Detokenizer d(*tok, false);
    EXPECT_EQ(d.push(id_of(*tok, "<0xF0>")), "");
    EXPECT_EQ(d.push(id_of(*tok, "<0x9F>")), "");
    EXPECT_EQ(d.push(id_of(*tok, "<0x41>")), "\xEF\xBF\xBD" "A");  // broken sequence, then A
    EXPECT_EQ(d.push(id_of(*tok, "<0xE2>")), "");
    EXPECT_EQ(d.finish(), "\xEF\xBF\xBD");  // unfinished at the end
}

// ---- UTF-8 and the byte-level alphabet ------------------------------------------------------

TEST(TokenizerUtf8, IllFormedSequences) {
    using gk::run::utf8::append_valid;
    const std::string r = "\xEF\xBF\xBD";
    const struct {
        std::string in, out;
    } cases[] = {
        {"plain", "plain"},
        {"\xC0\x80", r + r},                              // overlong
        {"\xE0\x80\x80", r + r + r},                      // overlong
        {"\xED\xA0\x80", r + r + r},                      // surrogate
        {"\xF4\x90\x80\x80", r + r + r + r},              // past U+10FFFF
        {"\xF0\x9F\xA6x", r + "x"},                       // cut short: one maximal subpart
        {"\x80\xBF", r + r},                              // stray continuation bytes
        {"\xF0\x9F\xA6\x99", "\xF0\x9F\xA6\x99"},         // U+1F999
        {"\xF8\x88\x80\x80\x80", r + r + r + r + r},      // 5-byte forms are not UTF-8
    };
    for (const auto & c : cases) {
        std::string out;
        EXPECT_EQ(append_valid(c.in, out, false), 0u);
        EXPECT_EQ(out, c.out) << c.in;
    }
    std::string out;
    EXPECT_EQ(append_valid("ab\xF0\x9F\xA6", out, true), 3u);
    EXPECT_EQ(out, "ab");
}

TEST(TokenizerUtf8, ByteAlphabetIsABijection) {
    using namespace gk::run::utf8;
    EXPECT_EQ(byte_to_char(' '), "\xC4\xA0");   // U+0120 'Ġ'
    EXPECT_EQ(byte_to_char('\n'), "\xC4\x8A");  // U+010A 'Ċ'
    EXPECT_EQ(byte_to_char('!'), "!");
    EXPECT_EQ(byte_to_char(0xAD), "\xC5\x83");  // U+0143, the last stand-in
    for (int b = 0; b < 256; ++b) {
        const std::string_view c = byte_to_char(static_cast<uint8_t>(b));
        size_t pos = 0;
        EXPECT_EQ(char_to_byte(next(c, pos)), b);
        EXPECT_EQ(pos, c.size());
    }
    EXPECT_EQ(char_to_byte('A' + 0x1000), -1);
}

// ---- pre-tokenizers ---------------------------------------------------------------------------

std::vector<std::string> split_with(const std::string & pre, const std::string & text) {
    gk::run::pre_tokenizer_spec spec;
    EXPECT_TRUE(gk::run::find_pre_tokenizer(pre, spec)) << pre;
    std::string err;
    auto p = gk::run::pre_tokenizer::compile(spec.regexes, &err);
    EXPECT_TRUE(p) << err;
    std::vector<std::string> out;
    if (p) {
        for (const std::string_view w : p->split(text)) out.emplace_back(w);
    }
    return out;
}

TEST(TokenizerPre, EveryNameCompiles) {
    for (const char * name : {"", "default", "llama3", "llama-bpe", "dbrx", "glm4", "qwen2", "deepseek-r1-qwen",
                              "deepseek-llm", "deepseek-coder", "deepseek-v3", "falcon", "starcoder", "command-r",
                              "gpt-2", "phi-2", "mpt", "roberta-bpe", "gpt-4o", "llama4", "tekken", "bloom", "viking",
                              "seed-coder"}) {
        EXPECT_FALSE(split_with(name, "Hello world 12345").empty()) << name;
    }
    gk::run::pre_tokenizer_spec spec;
    EXPECT_FALSE(gk::run::find_pre_tokenizer("no-such-pre", spec));
}

TEST(TokenizerPre, Llama3AndQwen2Splits) {
    const std::string text = "I've 12345 \n\n  x";
    const std::vector<std::string> llama3 = {"I", "'ve", " ", "123", "45", " \n\n", " ", " x"};
    const std::vector<std::string> qwen2 = {"I", "'ve", " ", "1", "2", "3", "4", "5", " \n\n", " ", " x"};
    EXPECT_EQ(split_with("llama-bpe", text), llama3);
    EXPECT_EQ(split_with("qwen2", text), qwen2);
    // gpt-4o splits letter runs at a lower-to-upper case change and keeps contractions
    const std::vector<std::string> gpt4o = {"Hello", "World'S", " ok"};
    EXPECT_EQ(split_with("gpt-4o", "HelloWorld'S ok"), gpt4o);
}

TEST(TokenizerPre, LongRunsStayWhole) {
    // one match per run however long (no matcher limit cuts them)
    const std::string letters(100000, 'a'), spaces(100000, ' ');
    const std::vector<std::string> expect = {letters, std::string(99999, ' '), " b"};
    EXPECT_EQ(split_with("gpt-2", letters + spaces + "b"), expect);
    EXPECT_EQ(split_with("llama3", letters + spaces + "b"), expect);
}

TEST(TokenizerPre, NextLineIsWhiteSpace) {
    // U+0085 is White_Space for the tokenizers (PCRE2's \s lacks it)
    const std::vector<std::string> expect = {"x", " ", "\xC2\x85", "y"};
    EXPECT_EQ(split_with("gpt-2", "x \xC2\x85y"), expect);
}

// ---- bad vocabularies -------------------------------------------------------------------------

struct vocab_builder {
    gguf_ptr g{gk_gguf_create()};
    gk_gguf_error err{};

    vocab_builder & str(const char * key, const std::string & v) {
        EXPECT_EQ(gk_gguf_set_str(g.get(), key, v.data(), v.size(), &err), GK_GGUF_OK) << err.message;
        return *this;
    }
    vocab_builder & strs(const char * key, const std::vector<const char *> & v) {
        EXPECT_EQ(gk_gguf_set_array_str(g.get(), key, v.data(), nullptr, v.size(), &err), GK_GGUF_OK) << err.message;
        return *this;
    }
    vocab_builder & floats(const char * key, const std::vector<float> & v) {
        EXPECT_EQ(gk_gguf_set_array(g.get(), key, GK_GGUF_TYPE_FLOAT32, v.data(), v.size(), &err), GK_GGUF_OK);
        return *this;
    }
    vocab_builder & u32(const char * key, uint32_t v) {
        EXPECT_EQ(gk_gguf_set_u32(g.get(), key, v, &err), GK_GGUF_OK);
        return *this;
    }
    std::string load_error() const {
        std::string error;
        const std::unique_ptr<Tokenizer> t = Tokenizer::load(g.get(), &error);
        EXPECT_FALSE(t) << "loaded a bad vocabulary";
        return error;
    }
};

TEST(TokenizerLoad, BadVocabulariesAreRefusedWithAMessage) {
    const std::vector<const char *> toks = {"<unk>", "<s>", "</s>", "a", "b", "ab"};
    auto llama = [&] {
        vocab_builder b;
        b.str("tokenizer.ggml.model", "llama").strs("tokenizer.ggml.tokens", toks);
        return b;
    };
    auto gpt2 = [&] {
        vocab_builder b;
        b.str("tokenizer.ggml.model", "gpt2").strs("tokenizer.ggml.tokens", toks);
        return b;
    };
    const struct {
        std::string error;
        const char * expect;
    } cases[] = {
        {vocab_builder().strs("tokenizer.ggml.tokens", toks).load_error(), "missing key tokenizer.ggml.model"},
        {vocab_builder().str("tokenizer.ggml.model", "llama").load_error(), "missing key tokenizer.ggml.tokens"},
        {vocab_builder().str("tokenizer.ggml.model", "rwkv").strs("tokenizer.ggml.tokens", toks).load_error(),
         "unsupported tokenizer 'rwkv'"},
        {vocab_builder().str("tokenizer.ggml.model", "llama").str("tokenizer.ggml.tokens", "ab").load_error(),
         "tokenizer.ggml.tokens: expected an array of strings"},
        {llama().floats("tokenizer.ggml.scores", {0, 0, 0}).load_error(), "tokenizer.ggml.scores: 3 entries for 6 tokens"},
        {llama().u32("tokenizer.ggml.add_bos_token", 1).load_error(), "tokenizer.ggml.add_bos_token: expected a bool"},
        {gpt2().load_error(), "missing key tokenizer.ggml.merges"},
        {gpt2().strs("tokenizer.ggml.merges", {"ab"}).load_error(), "tokenizer.ggml.merges[0]: 'ab' is not two pieces"},
        {gpt2().strs("tokenizer.ggml.merges", {"a b"}).str("tokenizer.ggml.pre", "no-such-pre").load_error(),
         "unsupported pre-tokenizer 'no-such-pre'"},
    };
    for (const auto & c : cases) {
        EXPECT_NE(c.error.find(c.expect), std::string::npos) << "message: " << c.error << "\nexpected: " << c.expect;
    }
    std::string error;
    EXPECT_FALSE(Tokenizer::load(nullptr, &error));
    EXPECT_FALSE(error.empty());
}

TEST(TokenizerLoad, TinySentencePieceVocabulary) {
    // no scores or types: all tokens normal, score 0; merges then go leftmost first
    vocab_builder b;
    b.str("tokenizer.ggml.model", "llama").strs("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a",
                                                                          "b", "ab", "\xE2\x96\x81" "ab"});
    std::string error;
    const std::unique_ptr<Tokenizer> tok = Tokenizer::load(b.g.get(), &error);
    ASSERT_TRUE(tok) << error;
    EXPECT_EQ(tok->encode("ab", true, false), (std::vector<token_id>{1, 7}));
    EXPECT_EQ(tok->encode("ab b", false, false), (std::vector<token_id>{7, 3, 5}));
    EXPECT_EQ(tok->encode("c", false, false), (std::vector<token_id>{3, 0}));  // no byte tokens: <unk>
    EXPECT_EQ(tok->decode(tok->encode("ab b", false, false), false), "ab b");
}

} // namespace
