// test-gk-run-input: model files whose metadata contradicts their tensors, or whose
// tensors gk cannot compute with. Each is refused with a message naming the key or the
// tensor (and the file), or, where llama.cpp only warns, loaded with a warning; gk-run
// says so in its one-line form. The files are tiny_model.h's model with one thing spoilt.
#include "fuzz/check_model.h"
#include "gk_run_exec.h"
#include "run/model.h"
#include "run/model_session.h"
#include "tiny_model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::run_gk_run;

namespace {

const fs::path & dir() {
    static const fs::path d = gk_run_test::scratch_dir("gk-run-input");
    return d;
}

std::string save(const gk_gguf * g, const std::string & name) {
    const std::string path = (dir() / (name + ".gguf")).string();
    EXPECT_TRUE(tiny_model::write(g, path)) << path;
    return path;
}

struct load_result {
    std::unique_ptr<gk::run::Model> model;
    std::string                     error;
};

load_result load(const std::string & path) {
    load_result r;
    r.model = gk::run::Model::load(path, {}, &r.error);
    return r;
}

bool has(const std::string & text, const std::string & part) { return text.find(part) != std::string::npos; }

// Refused by Model::load with `says` in the message, which begins with the path.
void expect_refused(const std::string & path, const std::string & says) {
    const load_result r = load(path);
    EXPECT_FALSE(r.model) << "loaded; expected: " << says;
    EXPECT_TRUE(has(r.error, says)) << "message: " << r.error << "\nexpected: " << says;
    EXPECT_EQ(r.error.rfind(path, 0), 0u) << r.error;
}

void set_u32(gk_gguf * g, const char * key, uint32_t v) { ASSERT_EQ(gk_gguf_set_u32(g, key, v, nullptr), GK_GGUF_OK); }

} // namespace

TEST(HostileModel, TheTinyModelRuns) {
    const std::string path = save(tiny_model::build().get(), "good");
    const load_result r    = load(path);
    ASSERT_TRUE(r.model) << r.error;
    EXPECT_TRUE(r.model->warnings().empty());
    const auto out = run_gk_run({"-m", path, "-p", "a b", "-n", "3", "--temp", "0"});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    EXPECT_FALSE(has(out.err, "warning")) << out.err;
}

TEST(HostileModel, BlocksPastBlockCountAreRefused) {
    tiny_model::spec s;
    s.n_layer = 5;
    auto g    = tiny_model::build(s);
    set_u32(g.get(), "llama.block_count", 3);
    const std::string path = save(g.get(), "blocks");
    expect_refused(path, "tensor blk.3.attn_norm.weight is in block 3 but llama.block_count = 3 (blocks 0..2)");
    const auto out = run_gk_run({"-m", path, "-p", "a", "-n", "1"});
    EXPECT_EQ(out.exit_code, 1);
    ASSERT_EQ(out.err_lines().size(), 1u) << out.err;
    EXPECT_EQ(out.err_lines()[0].rfind("gk-run: error: " + path + ": tensor blk.3.attn_norm.weight", 0), 0u) << out.err;
}

TEST(HostileModel, PerLayerArraysMustCoverEveryLayer) {
    auto           g     = tiny_model::build();
    const uint32_t one[] = {2};
    ASSERT_EQ(gk_gguf_set_array(g.get(), "llama.attention.head_count", GK_GGUF_TYPE_UINT32, one, 1, nullptr),
              GK_GGUF_OK);
    expect_refused(save(g.get(), "heads-short"),
                   "key llama.attention.head_count has 1 entries for 2 layers (llama.block_count)");

    const uint32_t three[] = {1, 1, 1};
    ASSERT_EQ(gk_gguf_set_array(g.get(), "llama.attention.head_count", GK_GGUF_TYPE_UINT32, three, 3, nullptr),
              GK_GGUF_OK);
    expect_refused(save(g.get(), "heads-long"), "key llama.attention.head_count has 3 entries for 2 layers");

    // One entry per layer, all equal: accepted like the scalar.
    const uint32_t two[] = {2, 2};
    ASSERT_EQ(gk_gguf_set_array(g.get(), "llama.attention.head_count", GK_GGUF_TYPE_UINT32, two, 2, nullptr),
              GK_GGUF_OK);
    const load_result r = load(save(g.get(), "heads-ok"));
    EXPECT_TRUE(r.model) << r.error;
}

TEST(HostileModel, SpecialIdsOutsideTheVocabularyAreWarnings) {
    auto g = tiny_model::build();
    set_u32(g.get(), "tokenizer.ggml.bos_token_id", 600);
    set_u32(g.get(), "tokenizer.ggml.eos_token_id", 16);
    const std::string path = save(g.get(), "special-ids");
    const load_result r    = load(path);
    ASSERT_TRUE(r.model) << r.error;
    ASSERT_EQ(r.model->warnings().size(), 2u);
    EXPECT_EQ(r.model->warnings()[0],
              "tokenizer.ggml.bos_token_id = 600 is outside the vocabulary of 16 tokens; ignored (using 1)");
    EXPECT_EQ(r.model->warnings()[1],
              "tokenizer.ggml.eos_token_id = 16 is outside the vocabulary of 16 tokens; ignored (using 2)");
    EXPECT_EQ(r.model->tokenizer().special().bos, 1);

    const auto out = run_gk_run({"-m", path, "-p", "a", "-n", "1", "--temp", "0"});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    EXPECT_TRUE(has(out.err, "gk-run: warning: " + path + ": tokenizer.ggml.bos_token_id = 600 is outside")) << out.err;

    // -1 is how converters write "none" (stories260K's separator and padding ids): no warning.
    set_u32(g.get(), "tokenizer.ggml.bos_token_id", 1);
    set_u32(g.get(), "tokenizer.ggml.eos_token_id", 2);
    set_u32(g.get(), "tokenizer.ggml.padding_token_id", UINT32_MAX);
    const load_result none = load(save(g.get(), "special-none"));
    ASSERT_TRUE(none.model) << none.error;
    EXPECT_TRUE(none.model->warnings().empty());
}

TEST(HostileModel, UnknownTokenTypesAreRefused) {
    auto                 g = tiny_model::build();
    std::vector<int32_t> types(tiny_model::vocab().size(), 1);
    types[5] = 99;
    ASSERT_EQ(gk_gguf_set_array(g.get(), "tokenizer.ggml.token_type", GK_GGUF_TYPE_INT32, types.data(), types.size(),
                                nullptr),
              GK_GGUF_OK);
    expect_refused(save(g.get(), "token-type"), "tokenizer.ggml.token_type[5] = 99 is not a token type (0..6)");
    types[5] = -1;
    ASSERT_EQ(gk_gguf_set_array(g.get(), "tokenizer.ggml.token_type", GK_GGUF_TYPE_INT32, types.data(), types.size(),
                                nullptr),
              GK_GGUF_OK);
    expect_refused(save(g.get(), "token-type-neg"), "tokenizer.ggml.token_type[5] = -1 is not a token type");
}

TEST(HostileModel, ArchitectureOfTheWrongTypeIsNamed) {
    auto g = tiny_model::build();
    set_u32(g.get(), "general.architecture", 7);
    expect_refused(save(g.get(), "arch-int"), "key general.architecture is a uint32, expected a string");
    ASSERT_EQ(gk_gguf_remove_key(g.get(), "general.architecture", nullptr), GK_GGUF_OK);
    expect_refused(save(g.get(), "arch-none"), "missing key general.architecture");
}

TEST(HostileModel, AnF64MatrixNamesTheFileAndTheTensor) {
    tiny_model::spec s;
    s.types["blk.0.attn_q.weight"] = GK_TYPE_F64;
    const std::string path         = save(tiny_model::build(s).get(), "f64");
    expect_refused(path, "tensor blk.0.attn_q.weight (attention query) is f64, which gk's matrix product cannot read");
    const auto out = run_gk_run({"-m", path, "-p", "a", "-n", "1"});
    EXPECT_EQ(out.exit_code, 1);
    ASSERT_EQ(out.err_lines().size(), 1u) << out.err;
    EXPECT_TRUE(has(out.err_lines()[0], "gk-run: error: " + path + ": tensor blk.0.attn_q.weight")) << out.err;
}

TEST(HostileModel, TensorsOfTypesGkCannotUseAreRefused) {
    {
        tiny_model::spec s;
        s.types["blk.1.ffn_down.weight"] = GK_TYPE_I32;
        expect_refused(save(tiny_model::build(s).get(), "i32"),
                       "tensor blk.1.ffn_down.weight (feed-forward down) is i32, which gk's matrix product cannot read");
    }
    {
        // Tied embeddings: the table is also the output projection, which must multiply.
        tiny_model::spec s;
        s.tied                       = true;
        s.types["token_embd.weight"] = GK_TYPE_F64;
        const load_result r          = load(save(tiny_model::build(s).get(), "embd-f64"));
        EXPECT_FALSE(r.model);
        EXPECT_TRUE(has(r.error, "tensor token_embd.weight (token embeddings")) << r.error;
        EXPECT_TRUE(has(r.error, "is f64, which gk's")) << r.error;
    }
    {
        tiny_model::spec s;
        s.types["blk.0.attn_norm.weight"] = GK_TYPE_F64;
        expect_refused(save(tiny_model::build(s).get(), "norm-f64"),
                       "tensor blk.0.attn_norm.weight (attention norm) is f64, expected f32, f16 or bf16");
    }
}

TEST(HostileModel, ShapesThatContradictTheHyperparametersAreRefused) {
    {
        auto g = tiny_model::build();
        set_u32(g.get(), "llama.embedding_length", 16);
        expect_refused(save(g.get(), "n-embd"), "tensor token_embd.weight (token embeddings) has shape [8, 16, 1, 1], "
                                                "expected [16, 16]");
    }
    {
        auto g = tiny_model::build();
        set_u32(g.get(), "llama.feed_forward_length", 32);
        expect_refused(save(g.get(), "n-ff"), "tensor blk.0.ffn_gate.weight (feed-forward gate) has shape");
    }
    {
        auto g = tiny_model::build();
        set_u32(g.get(), "llama.attention.head_count_kv", 2);
        expect_refused(save(g.get(), "n-head-kv"), "tensor blk.0.attn_k.weight (attention key) has shape");
    }
    {
        auto g = tiny_model::build();
        set_u32(g.get(), "llama.attention.head_count", 2);
        set_u32(g.get(), "llama.attention.head_count_kv", 3);
        expect_refused(save(g.get(), "n-head-kv-many"), "attention.head_count 2 is not a multiple of head_count_kv 3");
        set_u32(g.get(), "llama.attention.head_count", 3);
        expect_refused(save(g.get(), "n-head"), "key llama.embedding_length = 8 is not a multiple of "
                                                "llama.attention.head_count = 3, and the head size");
    }
    {
        // A vocabulary larger than the embeddings.
        auto                      g = tiny_model::build();
        std::vector<const char *> texts;
        for (const std::string & t : tiny_model::vocab()) texts.push_back(t.c_str());
        texts.push_back("zz");
        ASSERT_EQ(gk_gguf_set_array_str(g.get(), "tokenizer.ggml.tokens", texts.data(), nullptr, texts.size(), nullptr),
                  GK_GGUF_OK);
        ASSERT_EQ(gk_gguf_remove_key(g.get(), "tokenizer.ggml.scores", nullptr), GK_GGUF_OK);
        ASSERT_EQ(gk_gguf_remove_key(g.get(), "tokenizer.ggml.token_type", nullptr), GK_GGUF_OK);
        expect_refused(save(g.get(), "n-vocab"), "tensor token_embd.weight (token embeddings) has shape [8, 16, 1, 1], "
                                                 "expected [8, 17]");
    }
    {
        auto g = tiny_model::build();
        set_u32(g.get(), "llama.block_count", 40);
        expect_refused(save(g.get(), "block-count-big"), "llama.block_count = 40 but the file has only 21 tensors");
    }
    {
        auto g = tiny_model::build();
        set_u32(g.get(), "llama.block_count", 3);
        expect_refused(save(g.get(), "block-missing"), "missing tensor blk.2.attn_norm.weight (attention norm)");
    }
}

TEST(HostileModel, UnusedTensorsAreWarnings) {
    auto          g     = tiny_model::build();
    const int64_t ne[]  = {4};
    const float   x[4]  = {1, 2, 3, 4};
    ASSERT_EQ(gk_gguf_add_tensor(g.get(), "extra.weight", GK_TYPE_F32, 1, ne, x, sizeof x, nullptr), GK_GGUF_OK);
    const load_result r = load(save(g.get(), "extra"));
    ASSERT_TRUE(r.model) << r.error;
    ASSERT_EQ(r.model->warnings().size(), 1u);
    EXPECT_EQ(r.model->warnings()[0], "tensor extra.weight is not used by gk-run's llama; ignored");
}

TEST(HostileModel, EveryTinyTokenizerLoads) {
    for (const char * tokenizer : {"llama", "gpt2", "bert"}) {
        SCOPED_TRACE(tokenizer);
        tiny_model::spec s;
        s.tokenizer         = tokenizer;
        const load_result r = load(save(tiny_model::build(s).get(), std::string("tok-") + tokenizer));
        ASSERT_TRUE(r.model) << r.error;
        EXPECT_TRUE(r.model->warnings().empty());
        EXPECT_FALSE(r.model->tokenizer().encode("a b.", true, false).empty());
    }
}

TEST(HostileModel, EveryTinyArchitectureEvaluates) {
    for (const char * arch : {"llama", "qwen3", "gemma3"}) {
        SCOPED_TRACE(arch);
        tiny_model::spec s;
        s.arch                 = arch;
        const std::string path = save(tiny_model::build(s).get(), std::string("arch-") + arch);
        const load_result r    = load(path);
        ASSERT_TRUE(r.model) << r.error;
        gk::run::session_params sp;
        sp.n_ctx = 8;
        std::string error;
        auto        session = gk::run::Session::create(*r.model, sp, &error);
        ASSERT_TRUE(session) << error;
        std::vector<float> logits;
        ASSERT_TRUE(session->eval(std::vector<gk::run::token_id>{1, 4, 5}, logits, &error)) << error;
        EXPECT_EQ(logits.size(), tiny_model::vocab().size());
    }
}

TEST(HostileModel, FuzzSeedsAndRegressionsPassTheFuzzChecks) {
    const fs::path fuzz = fs::path(GK_TEST_DATA).parent_path() / "run" / "fuzz";
    int            n    = 0;
    for (const char * sub : {"seeds", "regressions"}) {
        for (const auto & entry : fs::directory_iterator(fuzz / sub)) {
            SCOPED_TRACE(entry.path().string());
            std::ifstream              f(entry.path(), std::ios::binary);
            const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            EXPECT_EQ(model_check::check_model(bytes.data(), bytes.size()), "");
            ++n;
        }
    }
    EXPECT_GE(n, 10);  // the seeds of make-seeds and the regressions' README
}
