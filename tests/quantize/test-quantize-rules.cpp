// test-quantize-rules: gk-quantize's per-tensor type rules (tools/gk-quantize/plan.h) on
// hand-made tensor lists: what llama-quantize gives each tensor for a mixture, the
// fallback when rows are not whole blocks, the file type recorded, the mixture names.
// The expected types are worked out by hand from llama.cpp's rules (llama-quant.cpp).
#include "mixture.h"
#include "plan.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace gk_quantize;

tensor_desc matrix(const std::string & name, int64_t ne0, int64_t ne1, int64_t ne2 = 1) {
    tensor_desc t;
    t.name   = name;
    t.n_dims = ne2 > 1 ? 3 : 2;
    t.ne[0]  = ne0;
    t.ne[1]  = ne1;
    t.ne[2]  = ne2;
    return t;
}

tensor_desc vector1d(const std::string & name, int64_t ne0) {
    tensor_desc t;
    t.name   = name;
    t.n_dims = 1;
    t.ne[0]  = ne0;
    return t;
}

// A dense llama-like model: n_layer layers of width `dim` (a multiple of 256 unless said).
std::vector<tensor_desc> dense_model(int n_layer, int64_t dim, int64_t ff, bool with_output = true) {
    std::vector<tensor_desc> t{matrix("token_embd.weight", dim, 1000), vector1d("output_norm.weight", dim)};
    if (with_output) {
        t.push_back(matrix("output.weight", dim, 1000));
    }
    for (int i = 0; i < n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        for (const char * n : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
            t.push_back(matrix(b + n + ".weight", dim, dim));
        }
        t.push_back(matrix(b + "ffn_gate.weight", dim, ff));
        t.push_back(matrix(b + "ffn_up.weight", dim, ff));
        t.push_back(matrix(b + "ffn_down.weight", ff, dim));
        t.push_back(vector1d(b + "attn_norm.weight", dim));
        t.push_back(vector1d(b + "ffn_norm.weight", dim));
    }
    return t;
}

settings mix(const char * name) {
    const mixture * m = find_mixture(name);
    EXPECT_NE(m, nullptr) << name;
    settings s;
    s.id   = m->id;
    s.base = m->base;
    s.copy = m->copy;
    return s;
}

model_info llama(int64_t n_layer, int64_t n_gqa) {
    model_info m;
    m.arch       = "llama";
    m.n_layer    = n_layer;
    m.n_gqa      = n_gqa;
    m.has_output = true;
    return m;
}

// name -> written type
std::map<std::string, gk_type> types(const std::vector<tensor_desc> & t, const std::vector<decision> & d) {
    std::map<std::string, gk_type> r;
    for (size_t i = 0; i < t.size(); ++i) {
        r[t[i].name] = d[i].type;
    }
    return r;
}

std::string layer(int i, const char * n) { return "blk." + std::to_string(i) + "." + n + ".weight"; }

// llama.cpp's use_more_bits for 32 layers: 0-3, 28-31, and 4 + 3k + 2 = 6, 9, ..., 27.
bool more_bits_32(int i) { return i < 4 || i >= 28 || (i - 4) % 3 == 2; }

TEST(QuantizeRules, Q4_K_M_DenseModel) {
    const auto t  = dense_model(32, 4096, 11008);
    const auto d  = plan(mix("Q4_K_M"), llama(32, 1), t);
    const auto ty = types(t, d);
    EXPECT_EQ(ty.at("token_embd.weight"), GK_TYPE_Q4_K);
    EXPECT_EQ(ty.at("output.weight"), GK_TYPE_Q6_K);
    EXPECT_EQ(ty.at("output_norm.weight"), GK_TYPE_F32);
    for (int i = 0; i < 32; ++i) {
        SCOPED_TRACE(i);
        const gk_type more = more_bits_32(i) ? GK_TYPE_Q6_K : GK_TYPE_Q4_K;
        EXPECT_EQ(ty.at(layer(i, "attn_v")), more);
        EXPECT_EQ(ty.at(layer(i, "ffn_down")), more);
        for (const char * n : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"}) {
            EXPECT_EQ(ty.at(layer(i, n)), GK_TYPE_Q4_K) << n;
        }
        EXPECT_EQ(ty.at(layer(i, "attn_norm")), GK_TYPE_F32);
    }
    for (const decision & x : d) {
        EXPECT_FALSE(x.fallback()) << x.why;
    }
    EXPECT_EQ(recorded_file_type(mix("Q4_K_M"), d), FTYPE_Q4_K_M);
}

// The counters follow llama.cpp's order (layer number, then name), not the file's.
TEST(QuantizeRules, CountsInLayerOrderWhateverTheFileOrder) {
    auto t = dense_model(32, 4096, 11008);
    std::reverse(t.begin(), t.end());
    const auto ty = types(t, plan(mix("Q4_K_M"), llama(32, 1), t));
    for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(ty.at(layer(i, "attn_v")), more_bits_32(i) ? GK_TYPE_Q6_K : GK_TYPE_Q4_K) << i;
    }
}

TEST(QuantizeRules, Q4_K_S_And_Q3_K_M_And_Q2_K) {
    const auto t  = dense_model(32, 4096, 11008);
    auto       ty = types(t, plan(mix("Q4_K_S"), llama(32, 1), t));
    for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(ty.at(layer(i, "attn_v")), i < 4 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K) << i;
        EXPECT_EQ(ty.at(layer(i, "ffn_down")), i < 4 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K) << i;
    }
    ty = types(t, plan(mix("Q3_K_M"), llama(32, 1), t));
    for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(ty.at(layer(i, "attn_v")), i < 2 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K) << i;
        EXPECT_EQ(ty.at(layer(i, "ffn_down")), i < 2 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K) << i;
        EXPECT_EQ(ty.at(layer(i, "attn_output")), GK_TYPE_Q4_K) << i;
        EXPECT_EQ(ty.at(layer(i, "attn_q")), GK_TYPE_Q3_K) << i;
    }
    for (int64_t gqa : {1, 4}) {
        ty = types(t, plan(mix("Q2_K"), llama(32, gqa), t));
        EXPECT_EQ(ty.at(layer(5, "attn_v")), gqa >= 4 ? GK_TYPE_Q4_K : GK_TYPE_Q3_K);
        EXPECT_EQ(ty.at(layer(5, "ffn_down")), GK_TYPE_Q3_K);
        EXPECT_EQ(ty.at(layer(5, "attn_output")), GK_TYPE_Q3_K);
        EXPECT_EQ(ty.at(layer(5, "ffn_up")), GK_TYPE_Q2_K);
        EXPECT_EQ(ty.at("output.weight"), GK_TYPE_Q6_K);
    }
}

TEST(QuantizeRules, VeryLowBitMixtures) {
    const auto t  = dense_model(16, 4096, 11008);
    auto       ty = types(t, plan(mix("IQ2_XXS"), llama(16, 1), t));
    EXPECT_EQ(ty.at("token_embd.weight"), GK_TYPE_Q2_K);
    EXPECT_EQ(ty.at("output.weight"), GK_TYPE_Q5_K);
    EXPECT_EQ(ty.at(layer(3, "attn_v")), GK_TYPE_Q2_K);
    EXPECT_EQ(ty.at(layer(0, "ffn_down")), GK_TYPE_Q2_K);  // the first 16/8 = 2
    EXPECT_EQ(ty.at(layer(1, "ffn_down")), GK_TYPE_Q2_K);
    EXPECT_EQ(ty.at(layer(2, "ffn_down")), GK_TYPE_IQ2_XXS);
    EXPECT_EQ(ty.at(layer(2, "attn_q")), GK_TYPE_IQ2_XXS);
    ty = types(t, plan(mix("IQ2_M"), llama(16, 8), t));
    EXPECT_EQ(ty.at(layer(3, "attn_v")), GK_TYPE_Q4_K);  // GQA 8
    EXPECT_EQ(ty.at(layer(3, "attn_output")), GK_TYPE_IQ3_S);
    EXPECT_EQ(ty.at(layer(3, "attn_q")), GK_TYPE_IQ2_S);
    EXPECT_EQ(ty.at("token_embd.weight"), GK_TYPE_IQ3_S);
    ty = types(t, plan(mix("IQ1_S"), llama(16, 1), t));
    EXPECT_EQ(ty.at(layer(3, "attn_output")), GK_TYPE_IQ2_XXS);
    EXPECT_EQ(ty.at(layer(3, "attn_k")), GK_TYPE_IQ1_S);

    settings s = mix("IQ3_XXS");
    ty         = types(t, plan(s, llama(16, 1), t));
    EXPECT_EQ(ty.at(layer(3, "attn_v")), GK_TYPE_IQ3_S);  // no imatrix
    EXPECT_EQ(ty.at(layer(3, "attn_q")), GK_TYPE_IQ2_S);
    EXPECT_EQ(ty.at(layer(0, "ffn_down")), GK_TYPE_Q4_K);
    EXPECT_EQ(ty.at(layer(5, "ffn_down")), GK_TYPE_Q3_K);
    s.has_imatrix = true;
    ty            = types(t, plan(s, llama(16, 1), t));
    EXPECT_EQ(ty.at(layer(3, "attn_v")), GK_TYPE_IQ3_XXS);
    EXPECT_EQ(ty.at(layer(5, "ffn_down")), GK_TYPE_IQ3_XXS);

    EXPECT_TRUE(needs_imatrix(GK_TYPE_IQ2_XXS, "blk.0.attn_q.weight", FTYPE_IQ2_XXS));
    EXPECT_TRUE(needs_imatrix(GK_TYPE_IQ1_M, "blk.0.attn_q.weight", FTYPE_IQ1_M));
    EXPECT_FALSE(needs_imatrix(GK_TYPE_IQ1_M, "output.weight", FTYPE_IQ1_M));
    EXPECT_TRUE(needs_imatrix(GK_TYPE_Q2_K, "blk.0.attn_q.weight", FTYPE_Q2_K_S));
    EXPECT_FALSE(needs_imatrix(GK_TYPE_Q2_K, "token_embd.weight", FTYPE_Q2_K_S));
    EXPECT_FALSE(needs_imatrix(GK_TYPE_Q2_K, "blk.0.attn_q.weight", FTYPE_Q2_K));
    EXPECT_FALSE(needs_imatrix(GK_TYPE_IQ4_NL, "blk.0.attn_q.weight", FTYPE_IQ1_S));
}

// Defect: --help named no imatrix need for IQ3_XXS, whose iq2_s attn_q/attn_k are refused
// without one; the help, the refusal and this test now read one table.
TEST(QuantizeRules, WhichMixturesNeedAnImatrix) {
    std::set<std::string> need;
    for (const mixture & m : mixtures()) {
        if (mixture_needs_imatrix(m)) {
            need.insert(m.name);
        }
    }
    EXPECT_EQ(need,
              (std::set<std::string>{"IQ1_M", "IQ1_S", "IQ2_M", "IQ2_S", "IQ2_XS", "IQ2_XXS", "IQ3_XXS", "Q2_K_S"}));
    for (const imatrix_need & n : imatrix_needs()) {
        const ftype id = n.only_in >= 0 ? static_cast<ftype>(n.only_in) : FTYPE_IQ2_XXS;
        EXPECT_TRUE(needs_imatrix(n.type, "blk.0.ffn_up.weight", id)) << gk_type_name(n.type);
        for (const char * x : n.except) {
            if (x) {
                EXPECT_FALSE(needs_imatrix(n.type, x, id)) << x;
            }
        }
    }
    EXPECT_EQ(imatrix_needs_text(),
              "iq2_xxs, iq2_xs, iq2_s, iq1_s, iq1_m (but token_embd, output), q2_K under Q2_K_S (but token_embd)");
}

// Without output.weight, token_embd is the output and gets the output's type.
TEST(QuantizeRules, TiedEmbeddingsAreTheOutput) {
    const auto t = dense_model(8, 512, 1024, false);
    model_info m = llama(8, 1);
    m.has_output = false;
    EXPECT_EQ(types(t, plan(mix("Q4_K_M"), m, t)).at("token_embd.weight"), GK_TYPE_Q6_K);
    EXPECT_EQ(types(t, plan(mix("Q8_0"), m, t)).at("token_embd.weight"), GK_TYPE_Q8_0);
    const auto t640 = dense_model(8, 640, 1024, false);  // 640 is not a multiple of 256
    EXPECT_EQ(types(t640, plan(mix("Q4_K_M"), m, t640)).at("token_embd.weight"), GK_TYPE_Q8_0);
}

TEST(QuantizeRules, MoeAndOverrides) {
    std::vector<tensor_desc> t = {matrix("token_embd.weight", 512, 100), matrix("output.weight", 512, 100),
                                  matrix("blk.0.attn_q.weight", 512, 512),
                                  matrix("blk.0.ffn_down_exps.weight", 1024, 512, 8),
                                  matrix("blk.0.ffn_gate_inp.weight", 512, 8)};
    model_info               m = llama(1, 1);
    m.n_expert                 = 8;
    auto d                     = plan(mix("MXFP4_MOE"), m, t);
    auto ty                    = types(t, d);
    EXPECT_EQ(ty.at("blk.0.ffn_down_exps.weight"), GK_TYPE_MXFP4);
    EXPECT_EQ(ty.at("blk.0.attn_q.weight"), GK_TYPE_Q8_0);
    EXPECT_EQ(ty.at("output.weight"), GK_TYPE_Q8_0);
    EXPECT_FALSE(d[4].matrix);  // the router is kept
    EXPECT_EQ(d[4].why, "kept: a small tensor llama-quantize keeps");

    settings s        = mix("Q4_K_M");
    s.output_type     = GK_TYPE_F16;
    s.token_embd_type = GK_TYPE_Q8_0;
    ty                = types(t, plan(s, llama(1, 1), t));
    EXPECT_EQ(ty.at("output.weight"), GK_TYPE_F16);
    EXPECT_EQ(ty.at("token_embd.weight"), GK_TYPE_Q8_0);
    s.leave_output = true;
    d              = plan(s, llama(1, 1), t);
    EXPECT_FALSE(d[1].quantize);
    EXPECT_EQ(d[1].type, GK_TYPE_F32);
    s      = mix("Q4_K_M");
    s.pure = true;
    for (const decision & x : plan(s, llama(1, 1), t)) {
        if (x.matrix) {
            EXPECT_EQ(x.type, GK_TYPE_Q4_K);
        }
    }
    // An expert model's per-layer tensor needs its layer in its name.
    t.push_back(matrix("ffn_down_exps.weight", 1024, 512, 8));
    EXPECT_THROW(plan(mix("Q4_K_M"), m, t), std::invalid_argument);
}

// llama.cpp's fallbacks for rows that are not whole blocks, then f16; each says why.
TEST(QuantizeRules, FallbackSaysWhy) {
    const std::vector<tensor_desc> t = {matrix("blk.0.attn_q.weight", 64, 64),
                                        matrix("blk.0.ffn_down.weight", 172, 64)};
    const struct {
        const char * mixture;
        gk_type      at64;
    } cases[] = {{"Q4_K_S", GK_TYPE_Q5_0},   {"Q5_K_S", GK_TYPE_Q5_1},   {"Q6_K", GK_TYPE_Q8_0},
                 {"IQ4_XS", GK_TYPE_IQ4_NL}, {"Q3_K_S", GK_TYPE_IQ4_NL}, {"TQ1_0", GK_TYPE_Q4_0},
                 {"IQ1_S", GK_TYPE_IQ4_NL},  {"Q8_0", GK_TYPE_Q8_0}};
    for (const auto & c : cases) {
        SCOPED_TRACE(c.mixture);
        const auto d = plan(mix(c.mixture), llama(1, 1), t);
        EXPECT_EQ(d[0].type, c.at64);
        EXPECT_EQ(d[1].type, GK_TYPE_F16);
        EXPECT_TRUE(d[1].fallback());
        const std::string wanted = gk_type_name(d[1].wanted);
        EXPECT_NE(d[1].why.find("wanted " + wanted + ": rows of 172 are not whole " + wanted + " blocks of"),
                  std::string::npos)
            << d[1].why;
        EXPECT_NE(d[1].why.find(": f16 instead"), std::string::npos) << d[1].why;
        if (c.at64 != d[0].wanted) {
            EXPECT_NE(d[0].why.find(std::string(": ") + gk_type_name(c.at64) + " instead"), std::string::npos)
                << d[0].why;
        }
    }
}

// The file type: the mixture's while some matrix has the mixture's type (gemma3-270m's
// rows of 640 make most of its Q4_K_M q5_0, and llama-quantize records Q4_K_M); when none
// has (stories260K's rows of 64 under a K- or IQ-type), that of the type most were written in.
TEST(QuantizeRules, RecordedFileType) {
    const auto small = dense_model(5, 64, 172);
    EXPECT_EQ(recorded_file_type(mix("IQ1_S"), plan(mix("IQ1_S"), llama(5, 2), small)), FTYPE_IQ4_NL);
    EXPECT_EQ(recorded_file_type(mix("Q4_K_M"), plan(mix("Q4_K_M"), llama(5, 2), small)), FTYPE_Q5_0);
    EXPECT_EQ(recorded_file_type(mix("Q8_0"), plan(mix("Q8_0"), llama(5, 2), small)), FTYPE_Q8_0);
    const auto gemma_like = dense_model(18, 640, 2048);
    EXPECT_EQ(recorded_file_type(mix("Q4_K_M"), plan(mix("Q4_K_M"), llama(18, 4), gemma_like)), FTYPE_Q4_K_M);
    const auto big = dense_model(5, 256, 512);
    EXPECT_EQ(recorded_file_type(mix("IQ4_XS"), plan(mix("IQ4_XS"), llama(5, 2), big)), FTYPE_IQ4_XS);
    EXPECT_EQ(recorded_file_type(mix("COPY"), plan(mix("COPY"), llama(5, 2), big)), -1);
}

TEST(QuantizeRules, MixtureNames) {
    const char * names[] = {"Q4_0",    "Q4_1",      "Q5_0",   "Q5_1",    "Q8_0",   "Q2_K",   "Q2_K_S",
                            "Q3_K_S",  "Q3_K_M",    "Q3_K_L", "Q4_K_S",  "Q4_K_M", "Q5_K_S", "Q5_K_M",
                            "Q6_K",    "IQ1_S",     "IQ1_M",  "IQ2_XXS", "IQ2_XS", "IQ2_S",  "IQ2_M",
                            "IQ3_XXS", "IQ3_XS",    "IQ3_S",  "IQ3_M",   "IQ4_NL", "IQ4_XS", "TQ1_0",
                            "TQ2_0",   "MXFP4_MOE", "F16",    "BF16",    "F32",    "COPY"};
    for (const char * n : names) {
        const mixture * m = find_mixture(n);
        ASSERT_NE(m, nullptr) << n;
        EXPECT_STREQ(m->name, n);
        EXPECT_TRUE(has_encoder(m->base) || m->base == GK_TYPE_F32) << n;
    }
    EXPECT_EQ(find_mixture("q4_k_m")->id, FTYPE_Q4_K_M);
    EXPECT_EQ(find_mixture("15")->id, FTYPE_Q4_K_M);
    EXPECT_EQ(find_mixture("Q4_K")->id, FTYPE_Q4_K_M);  // llama-quantize's alias
    EXPECT_EQ(find_mixture("24")->base, GK_TYPE_IQ1_S);
    EXPECT_STREQ(find_mixture("0")->name, "F32");
    EXPECT_EQ(find_mixture("q9_9"), nullptr);
    EXPECT_EQ(find_mixture("15x"), nullptr);
    EXPECT_EQ(find_mixture("4"), nullptr);  // a removed llama_ftype
    EXPECT_EQ(find_mixture(""), nullptr);
    EXPECT_STREQ(file_type_name(FTYPE_Q4_K_M), "Q4_K_M");
    EXPECT_STREQ(file_type_name(FTYPE_ALL_F32), "F32");
    EXPECT_EQ(file_type_of(GK_TYPE_Q4_K), FTYPE_Q4_K_M);
    EXPECT_EQ(file_type_of(GK_TYPE_Q2_0), -1);
}

// gemma3-270m (18 layers, width 640, 4 heads sharing 1 KV head, no output.weight) under
// Q4_K_M, worked out from the rules: token_embd is the output and 640 is not a multiple
// of 256: q8_0; rows of 640 cannot hold q4_K (-> q5_0) or q6_K (-> q8_0); ffn_down's
// rows of 2048 and attn_output's of 1024 can. The released Q4_K_M file has these types.
TEST(QuantizeRules, Gemma3_270M_Q4_K_M) {
    std::vector<tensor_desc> t = {matrix("token_embd.weight", 640, 262144), vector1d("output_norm.weight", 640)};
    for (int i = 0; i < 18; ++i) {
        t.push_back(matrix(layer(i, "attn_q"), 640, 1024));
        t.push_back(matrix(layer(i, "attn_k"), 640, 256));
        t.push_back(matrix(layer(i, "attn_v"), 640, 256));
        t.push_back(matrix(layer(i, "attn_output"), 1024, 640));
        t.push_back(matrix(layer(i, "ffn_gate"), 640, 2048));
        t.push_back(matrix(layer(i, "ffn_up"), 640, 2048));
        t.push_back(matrix(layer(i, "ffn_down"), 2048, 640));
        t.push_back(vector1d(layer(i, "attn_q_norm"), 256));
    }
    model_info m;
    m.arch        = "gemma3";
    m.n_layer     = 18;
    m.n_gqa       = 4;
    const auto ty = types(t, plan(mix("Q4_K_M"), m, t));
    EXPECT_EQ(ty.at("token_embd.weight"), GK_TYPE_Q8_0);
    // use_more_bits over 18 layers: below 18/8 = 2, from 7*18/8 = 15 on, and 2 + 3k + 2 between.
    const bool more[18] = {1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 1};
    for (int i = 0; i < 18; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(ty.at(layer(i, "attn_v")), more[i] ? GK_TYPE_Q8_0 : GK_TYPE_Q5_0);
        EXPECT_EQ(ty.at(layer(i, "ffn_down")), more[i] ? GK_TYPE_Q6_K : GK_TYPE_Q4_K);
        EXPECT_EQ(ty.at(layer(i, "attn_output")), GK_TYPE_Q4_K);
        for (const char * n : {"attn_q", "attn_k", "ffn_gate", "ffn_up"}) {
            EXPECT_EQ(ty.at(layer(i, n)), GK_TYPE_Q5_0) << n;
        }
        EXPECT_EQ(ty.at(layer(i, "attn_q_norm")), GK_TYPE_F32);
    }
}

// What the rules read from the metadata, and the refusals naming the key.
TEST(QuantizeRules, ModelInfoFromMetadata) {
    struct closer {
        void operator()(gk_gguf * c) const { gk_gguf_free(c); }
    };
    std::unique_ptr<gk_gguf, closer> c(gk_gguf_create());
    gk_gguf_error                    e;
    const auto                       str = [&](const char * key, const std::string & v) {
        ASSERT_EQ(gk_gguf_set_str(c.get(), key, v.data(), v.size(), &e), GK_GGUF_OK);
    };
    const auto refusal = [&]() -> std::string {
        try {
            read_model_info(c.get());
        } catch (const std::invalid_argument & x) {
            return x.what();
        }
        return "accepted";
    };
    EXPECT_EQ(refusal(), "no general.architecture");
    ASSERT_EQ(gk_gguf_set_u32(c.get(), "general.architecture", 7, &e), GK_GGUF_OK);
    EXPECT_EQ(refusal(), "general.architecture is not a string");
    str("general.architecture", "llama");
    EXPECT_EQ(refusal(), "no llama.block_count");
    str("llama.block_count", "five");
    EXPECT_EQ(refusal(), "llama.block_count is not a non-negative integer");
    ASSERT_EQ(gk_gguf_set_u32(c.get(), "llama.block_count", 80, &e), GK_GGUF_OK);
    const int32_t heads[2] = {64, 64}, kv[2] = {8, 8};  // per-layer arrays: layer 0's
    ASSERT_EQ(gk_gguf_set_array(c.get(), "llama.attention.head_count", GK_GGUF_TYPE_INT32, heads, 2, &e), GK_GGUF_OK);
    ASSERT_EQ(gk_gguf_set_array(c.get(), "llama.attention.head_count_kv", GK_GGUF_TYPE_INT32, kv, 2, &e), GK_GGUF_OK);
    model_info m = read_model_info(c.get());
    EXPECT_EQ(m.arch, "llama");
    EXPECT_EQ(m.n_layer, 80);
    EXPECT_EQ(m.n_gqa, 8);
    EXPECT_EQ(m.n_expert, 0);
    EXPECT_FALSE(m.has_output);
    EXPECT_TRUE(m.is_70b);
    ASSERT_EQ(gk_gguf_set_u32(c.get(), "llama.expert_count", 8, &e), GK_GGUF_OK);
    EXPECT_EQ(read_model_info(c.get()).n_expert, 8);

    // 70B under Q4_K_M: an attn_v that would be q4_K is q5_K. use_more_bits over 80
    // layers: below 10, from 70, and (i - 10) % 3 == 2 between.
    const auto t  = dense_model(80, 8192, 28672);
    m.n_expert    = 0;
    const auto ty = types(t, plan(mix("Q4_K_M"), m, t));
    EXPECT_EQ(ty.at(layer(11, "attn_v")), GK_TYPE_Q5_K);
    EXPECT_EQ(ty.at(layer(12, "attn_v")), GK_TYPE_Q6_K);
    EXPECT_EQ(ty.at(layer(11, "ffn_down")), GK_TYPE_Q4_K);
}

}  // namespace
