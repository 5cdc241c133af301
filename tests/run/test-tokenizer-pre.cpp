// test-tokenizer-pre: every pre-tokenizer name llama.cpp knows (tokenizer.ggml.pre),
// against the ids llama.cpp gave (tests/data/tokenizer/pretok-reference.json, written by
// scripts/record-pretokenizers; llama.cpp is not needed here).
//
// The vocabulary is GPT-2's byte-level BPE (../shared/data/gguf/vocab/ggml-vocab-gpt-2.gguf)
// with tokenizer.ggml.pre set to each name in turn (and, for gemma4's names, also a small
// raw-UTF-8 BPE vocabulary); each of the recorded texts encodes
// with add_special = false and parse_special = false, as the recording did; every name
// must load. Names llama.cpp itself could not load, and texts it aborted on (null ids),
// are not checked.
#include "gk/gguf.h"
#include "run/tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk::run::token_id;
using gk::run::Tokenizer;

namespace {

const nlohmann::json & reference() {
    static const nlohmann::json j = [] {
        std::ifstream f(fs::path(GK_TEST_DATA) / "tokenizer" / "pretok-reference.json");
        return nlohmann::json::parse(f);
    }();
    return j;
}

struct closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};

/** The recorded set `index`: its vocabulary ("shared:PATH" under ../shared/data, "test:PATH"
 *  under tests/data) under each of its names; with `round_trip`, the ids also decode back
 *  to the text (a vocabulary with every <0xXX> byte token). */
void check_set(size_t index, bool round_trip) {
    const nlohmann::json & set   = reference()["sets"][index];
    const std::string      spec  = set["vocab"].get<std::string>();
    const size_t           colon = spec.find(':');
    const fs::path         vocab = fs::path(spec.substr(0, colon) == "shared" ? GK_SHARED_DATA : GK_TEST_DATA) /
                           spec.substr(colon + 1);
    if (!fs::exists(vocab)) GTEST_SKIP() << "GK-SKIP: " << vocab << " is missing";
    gk_gguf_error                    gerr{};
    std::unique_ptr<gk_gguf, closer> g(gk_gguf_open(vocab.c_str(), &gerr));
    ASSERT_TRUE(g) << gerr.message;
    const auto & texts   = reference()["texts"];
    int          checked = 0;
    for (const auto & [name, entry] : set["names"].items()) {
        SCOPED_TRACE("pre-tokenizer '" + name + "'");
        if (entry.contains("llama_cpp_error")) continue;
        // The absent key reads as the empty name, in llama.cpp as in gk.
        const std::string pre = name == "(absent)" ? "" : name;
        ASSERT_EQ(gk_gguf_set_str(g.get(), "tokenizer.ggml.pre", pre.data(), pre.size(), &gerr), GK_GGUF_OK);
        std::string                      err;
        const std::unique_ptr<Tokenizer> tok = Tokenizer::load(g.get(), &err);
        if (!tok) {
            ADD_FAILURE() << err;
            continue;
        }
        const auto & ids = entry["ids"];
        ASSERT_EQ(ids.size(), texts.size());
        for (size_t i = 0; i < texts.size(); ++i) {
            if (ids[i].is_null()) continue;  // llama.cpp aborted on this text (whitespace's runs of spaces)
            const std::string           text = texts[i].get<std::string>();
            const std::vector<token_id> want = ids[i].get<std::vector<token_id>>();
            EXPECT_EQ(tok->encode(text, false, false), want) << "text " << i << ": " << text;
            if (round_trip) {
                EXPECT_EQ(tok->decode(want, false), text) << "text " << i;
            }
        }
        ++checked;
    }
    std::printf("%s: %d pre-tokenizer names checked against llama.cpp\n", spec.c_str(), checked);
}

TEST(PreTokenizerSharedData, EveryNameOnGpt2Vocabulary) { check_set(0, false); }
// gemma4's kind of BPE (raw UTF-8, U+2581, <0xXX> byte tokens) on a vocabulary of that
// kind (tests/data/tokenizer/bpe-raw-utf8.gguf, written by the same script), which
// decode back to the text (U+2581 to spaces, byte tokens to their bytes).
TEST(PreTokenizer, RawUtf8NamesOnTheirKindOfVocabulary) { check_set(1, true); }

}  // namespace
