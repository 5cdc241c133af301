// test-tokenizer: the tokenizers against llama.cpp's tokenizer test pairs
// (../shared/data/gguf/tokenizer: NAME.gguf.inp holds inputs separated by a line
// "__ggml_vocab_test__", NAME.gguf.out one line of ids per input, made with
// add_special = false, parse_special = false), round trips through the detokenizer,
// special tokens, streaming, and refusals of bad vocabularies.
#include "gk/gguf.h"
#include "run/tokenizer.h"

#include <gtest/gtest.h>

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
    for (const token_id id : ids) s += " " + std::to_string(id);
    return s;
}

// ---- the llama.cpp test pairs ---------------------------------------------------------

class TokenizerPairs : public testing::TestWithParam<std::string> {};

TEST_P(TokenizerPairs, EncodeMatchesAndDecodeRoundTrips) {
    const std::string name = GetParam();
    const Tokenizer * tok = vocab_tokenizer(name);
    if (tok == nullptr) GTEST_SKIP() << "no vocab file for " << name << " under " << k_data;
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

INSTANTIATE_TEST_SUITE_P(Vocabs, TokenizerPairs,
                         testing::Values("bert-bge", "deepseek-llm", "falcon", "gpt-2", "llama-spm", "mpt", "phi-3"),
                         [](const testing::TestParamInfo<std::string> & i) {
                             std::string n = i.param;
                             for (char & ch : n) {
                                 if (ch == '-') ch = '_';
                             }
                             return n;
                         });

} // namespace
