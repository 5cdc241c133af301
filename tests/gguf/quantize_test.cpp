// quantize_test: gk-quantize and gk-gguf on the bundled model (stories260K, all f32).
// For q8_0, q4_0 and q5_1 (one ctest each, test-gguf-quantize-TYPE): quantize, check
// that the metadata is copied and general.file_type set, that each tensor got the
// type it should (rows of 172 fall back to f16; 1-D tensors stay f32; the output is
// q8_0 as llama-quantize's rules give it for rows of 64), decode every
// tensor and report its relative RMS error against the original (bounded per type),
// and `gk-gguf --check` the result. Skips while a codec it needs is missing.
#include "gk/gguf.h"
#include "quant/codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};
using context = std::unique_ptr<gk_gguf, closer>;

const std::string k_model = std::string(GK_TEST_DATA) + "/models/stories260K.gguf";

fs::path work_dir() {
    const fs::path d = fs::temp_directory_path() / ("gk-quantize-test-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
}

// Run a command with stdout and stderr into `log`; its exit status.
int run(const std::string & cmd, const fs::path & log, std::string * output = nullptr) {
    const int rc = std::system((cmd + " > '" + log.string() + "' 2>&1").c_str());
    std::ifstream f(log);
    const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    if (output) {
        *output = text;
    }
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

bool has_codec(gk_type t) {
    const gk::quant::type_traits * tt = gk::quant::get_type_traits(t);
    return tt && tt->to_float && tt->from_float;
}

std::vector<float> decode(const gk_gguf * ctx, int64_t i) {
    std::vector<float> x(static_cast<size_t>(gk_gguf_tensor_nelements(ctx, i)));
    gk_gguf_error err;
    EXPECT_EQ(gk_gguf_tensor_to_f32(ctx, i, 0, gk_gguf_tensor_nrows(ctx, i), x.data(), &err), GK_GGUF_OK)
        << err.message;
    return x;
}

bool same_value(const gk_gguf_value * a, const gk_gguf_value * b) {
    const gk_gguf_type t = gk_gguf_value_type(a);
    if (t != gk_gguf_value_type(b)) {
        return false;
    }
    if (t == GK_GGUF_TYPE_STRING) {
        size_t la = 0, lb = 0;
        const char * sa = gk_gguf_value_str(a, &la);
        const char * sb = gk_gguf_value_str(b, &lb);
        return la == lb && std::memcmp(sa, sb, la) == 0;
    }
    if (t != GK_GGUF_TYPE_ARRAY) {
        return std::memcmp(gk_gguf_value_data(a), gk_gguf_value_data(b), gk_gguf_type_size(t)) == 0;
    }
    const gk_gguf_type e = gk_gguf_array_type(a);
    const uint64_t     n = gk_gguf_array_len(a);
    if (e != gk_gguf_array_type(b) || n != gk_gguf_array_len(b)) {
        return false;
    }
    for (uint64_t j = 0; j < n; ++j) {
        bool same = true;
        if (e == GK_GGUF_TYPE_STRING) {
            same = std::strcmp(gk_gguf_array_str(a, j, nullptr), gk_gguf_array_str(b, j, nullptr)) == 0;
        } else if (e == GK_GGUF_TYPE_ARRAY) {
            same = same_value(gk_gguf_array_item(a, j), gk_gguf_array_item(b, j));
        }
        if (!same) {
            return false;
        }
    }
    return gk_gguf_type_size(e) == 0 ||
           std::memcmp(gk_gguf_array_data(a), gk_gguf_array_data(b), n * gk_gguf_type_size(e)) == 0;
}

double relative_rms_error(const std::vector<float> & x, const std::vector<float> & y) {
    double num = 0, den = 0;
    for (size_t k = 0; k < x.size(); ++k) {
        num += (static_cast<double>(x[k]) - y[k]) * (static_cast<double>(x[k]) - y[k]);
        den += static_cast<double>(x[k]) * x[k];
    }
    return std::sqrt(num / den);
}

// An imatrix for every weight matrix of `model`: in_sum2 [ne0, 1] and counts [1, 1].
void write_imatrix(const gk_gguf * model, const fs::path & path) {
    context im(gk_gguf_create());
    gk_gguf_error err;
    for (int64_t i = 0; i < gk_gguf_tensor_count(model); ++i) {
        if (gk_gguf_tensor_n_dims(model, i) < 2) {
            continue;
        }
        const int64_t ne0 = gk_gguf_tensor_ne(model, i)[0];
        std::vector<float> sums(static_cast<size_t>(ne0));
        for (int64_t k = 0; k < ne0; ++k) {
            sums[static_cast<size_t>(k)] = 10.0f * static_cast<float>(1 + k % 7);
        }
        const float count = 10.0f;
        const int64_t ne_s[2] = {ne0, 1}, ne_c[2] = {1, 1};
        const std::string name = gk_gguf_tensor_name(model, i);
        ASSERT_EQ(gk_gguf_add_tensor(im.get(), (name + ".in_sum2").c_str(), GK_TYPE_F32, 2, ne_s, sums.data(),
                                     sums.size() * sizeof(float), &err),
                  GK_GGUF_OK);
        ASSERT_EQ(gk_gguf_add_tensor(im.get(), (name + ".counts").c_str(), GK_TYPE_F32, 2, ne_c, &count, sizeof count,
                                     &err),
                  GK_GGUF_OK);
    }
    ASSERT_EQ(gk_gguf_write(im.get(), path.c_str(), &err), GK_GGUF_OK) << err.message;
}

struct quantize_case {
    const char * type;
    uint32_t     file_type;   // llama_ftype
    double       max_error;   // relative RMS error bound per tensor
};

class GkQuantize : public testing::TestWithParam<quantize_case> {};

TEST_P(GkQuantize, Stories260K) {
    const quantize_case & c = GetParam();
    gk_type type;
    ASSERT_TRUE(gk_type_from_name(c.type, &type));
    for (gk_type t : {type, GK_TYPE_F32, GK_TYPE_F16}) {
        if (!has_codec(t)) {
            GTEST_SKIP() << "codec for " << gk_type_name(t) << " not there yet";
        }
    }
    const fs::path dir = work_dir();
    for (bool with_imatrix : {false, true}) {
        SCOPED_TRACE(with_imatrix ? "with imatrix" : "without imatrix");
        gk_gguf_error err;
        context in(gk_gguf_open(k_model.c_str(), &err));
        ASSERT_TRUE(in) << err.message;
        const fs::path out_path = dir / (std::string(c.type) + (with_imatrix ? "-imatrix" : "") + ".gguf");
        std::string cmd = std::string(GK_QUANTIZE) + " " + k_model + " " + out_path.string() + " " + c.type;
        if (with_imatrix) {
            write_imatrix(in.get(), dir / "imatrix.gguf");
            cmd += " --imatrix " + (dir / "imatrix.gguf").string();
        }
        std::string log;
        ASSERT_EQ(run(cmd, dir / "quantize.log", &log), 0) << log;
        EXPECT_NE(log.find("[  48/48]"), std::string::npos) << log;  // a progress line per tensor
        EXPECT_NE(log.find("rows of 172 are not whole " + std::string(c.type) + " blocks of 32: f16 instead"),
                  std::string::npos)
            << log;

        context out(gk_gguf_open(out_path.c_str(), &err));
        ASSERT_TRUE(out) << err.message;
        for (int64_t i = 0; i < gk_gguf_kv_count(in.get()); ++i) {
            const char * key = gk_gguf_kv_key(in.get(), i);
            EXPECT_TRUE(same_value(gk_gguf_kv_value(in.get(), i), gk_gguf_get(out.get(), key))) << key;
        }
        uint32_t ftype = 0;
        EXPECT_TRUE(gk_gguf_value_u32(gk_gguf_get(out.get(), "general.file_type"), &ftype));
        EXPECT_EQ(ftype, c.file_type);

        ASSERT_EQ(gk_gguf_tensor_count(out.get()), gk_gguf_tensor_count(in.get()));
        double worst = 0;
        for (int64_t i = 0; i < gk_gguf_tensor_count(in.get()); ++i) {
            const std::string name = gk_gguf_tensor_name(in.get(), i);
            ASSERT_STREQ(gk_gguf_tensor_name(out.get(), i), name.c_str());
            const uint32_t n_dims = gk_gguf_tensor_n_dims(in.get(), i);
            ASSERT_EQ(gk_gguf_tensor_n_dims(out.get(), i), n_dims);
            for (uint32_t j = 0; j < 4; ++j) {
                EXPECT_EQ(gk_gguf_tensor_ne(out.get(), i)[j], gk_gguf_tensor_ne(in.get(), i)[j]);
            }
            const int64_t ne0      = gk_gguf_tensor_ne(in.get(), i)[0];
            // output.weight: llama-quantize's q6_K, which rows of 64 cannot hold: q8_0.
            const gk_type expected = n_dims == 1                ? GK_TYPE_F32
                                     : name == "output.weight" ? GK_TYPE_Q8_0
                                     : ne0 % 32 == 0           ? type
                                                               : GK_TYPE_F16;
            EXPECT_EQ(gk_gguf_tensor_type(out.get(), i), expected) << name;
            const double e = relative_rms_error(decode(in.get(), i), decode(out.get(), i));
            EXPECT_LE(e, c.max_error) << name;
            if (expected == GK_TYPE_F32) {
                EXPECT_EQ(e, 0.0) << name;
            }
            worst = std::max(worst, e);
        }
        std::printf("%s%s: largest relative RMS error over the 48 tensors %.4f%% (bound %.1f%%)\n", c.type,
                    with_imatrix ? " with imatrix" : "", 100 * worst, 100 * c.max_error);
        EXPECT_EQ(run(std::string(GK_GGUF_TOOL) + " --check " + out_path.string(), dir / "check.log", &log), 0) << log;
        EXPECT_NE(log.find("0 NaN, 0 Inf, 0 tensors not decodable: ok"), std::string::npos) << log;
    }
    fs::remove_all(dir);
}

// Bounds: about 1.5x the largest error seen on this model (0.58%, 9.2%, 3.7%).
INSTANTIATE_TEST_SUITE_P(Types, GkQuantize,
                         testing::Values(quantize_case{"q8_0", 7, 0.01}, quantize_case{"q4_0", 2, 0.14},
                                         quantize_case{"q5_1", 9, 0.06}),
                         [](const testing::TestParamInfo<quantize_case> & p) { return std::string(p.param.type); });

TEST(GkQuantizeArgs, Refusals) {
    const fs::path dir = work_dir();
    const std::string tool = GK_QUANTIZE;
    const fs::path out = dir / "x.gguf";
    std::string log;
    EXPECT_EQ(run(tool + " " + k_model + " " + out.string() + " q9_9", dir / "log", &log), 1);
    EXPECT_NE(log.find("unknown type 'q9_9'"), std::string::npos) << log;
    EXPECT_EQ(run(tool + " " + k_model + " " + out.string() + " q8_K", dir / "log", &log), 1);
    EXPECT_NE(log.find("q8_K is not a type for model weights"), std::string::npos) << log;
    EXPECT_EQ(run(tool + " /nonexistent.gguf " + out.string() + " q8_0", dir / "log", &log), 1);
    EXPECT_NE(log.find("No such file"), std::string::npos) << log;
    EXPECT_EQ(run(tool + " " + k_model + " " + out.string() + " q8_0 --imatrix " + k_model, dir / "log", &log), 1);
    EXPECT_NE(log.find("not an imatrix file"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(out));
    std::ofstream(dir / "bad.gguf") << "GGUF\x01";
    EXPECT_EQ(run(std::string(GK_GGUF_TOOL) + " " + (dir / "bad.gguf").string(), dir / "log", &log), 1);
    EXPECT_NE(log.find("bad.gguf: file ends inside version"), std::string::npos) << log;
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;  // one line
    fs::remove_all(dir);
}

// Exit 1 and exactly one line on stderr, which holds `what`.
void expect_one_line_error(const std::string & cmd, const fs::path & dir, const std::string & what) {
    const int rc = std::system((cmd + " > /dev/null 2> '" + (dir / "err").string() + "'").c_str());
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << cmd << ": status " << rc;
    std::ifstream     f(dir / "err");
    const std::string err{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    EXPECT_NE(err.find(what), std::string::npos) << cmd << "\n" << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << cmd << "\n" << err;
}

// An imatrix entry of zero matrices (a legal empty GGUF tensor) used to divide by zero.
TEST(GkQuantizeArgs, ImatrixWithoutMatrices) {
    const fs::path dir = work_dir();
    context        im(gk_gguf_create());
    gk_gguf_error  err;
    const int64_t  ne_s[2] = {64, 0}, ne_c[2] = {1, 0};
    const float    none    = 0;
    ASSERT_EQ(gk_gguf_add_tensor(im.get(), "blk.0.attn_q.weight.in_sum2", GK_TYPE_F32, 2, ne_s, &none, 0, &err),
              GK_GGUF_OK);
    ASSERT_EQ(gk_gguf_add_tensor(im.get(), "blk.0.attn_q.weight.counts", GK_TYPE_F32, 2, ne_c, &none, 0, &err),
              GK_GGUF_OK);
    ASSERT_EQ(gk_gguf_write(im.get(), (dir / "im.gguf").c_str(), &err), GK_GGUF_OK) << err.message;
    const fs::path out = dir / "x.gguf";
    expect_one_line_error(std::string(GK_QUANTIZE) + " " + k_model + " " + out.string() + " q8_0 --imatrix " +
                              (dir / "im.gguf").string(),
                          dir, "blk.0.attn_q.weight.in_sum2 holds no weights");
    EXPECT_FALSE(fs::exists(out));
    fs::remove_all(dir);
}

// The output is checked before any work: a missing folder, a directory, the input itself.
TEST(GkQuantizeArgs, OutputPathRefusedUpFront) {
    const fs::path    dir  = work_dir();
    const std::string tool = std::string(GK_QUANTIZE) + " ";
    const fs::path    copy = dir / "model.gguf";
    fs::copy_file(k_model, copy);
    const auto size = fs::file_size(copy);
    expect_one_line_error(tool + k_model + " " + (dir / "none" / "x.gguf").string() + " q8_0", dir, "no folder");
    expect_one_line_error(tool + k_model + " " + dir.string() + " q8_0", dir, "is a directory");
    expect_one_line_error(tool + copy.string() + " " + copy.string() + " q8_0", dir, "is the input file");
    expect_one_line_error(tool + copy.string() + " " + (dir / "." / "model.gguf").string() + " q8_0", dir,
                          "is the input file");
    EXPECT_EQ(fs::file_size(copy), size);
    std::string log;
    EXPECT_EQ(run(tool + k_model + " " + (dir / "none" / "x.gguf").string() + " q8_0", dir / "log", &log), 1);
    EXPECT_EQ(log.find("[   1/48]"), std::string::npos) << log;  // refused before the first tensor
    fs::remove_all(dir);
}

// Command-line mistakes: one line and exit 1 from both tools, as for any other error.
TEST(GkQuantizeArgs, UsageErrorsAreOneLine) {
    const fs::path    dir = work_dir();
    const std::string q   = std::string(GK_QUANTIZE) + " ";
    const std::string g   = std::string(GK_GGUF_TOOL) + " ";
    expect_one_line_error(q + k_model, dir, "gk-quantize: ");
    expect_one_line_error(q + k_model + " x.gguf q8_0 --bogus", dir, "gk-quantize: ");
    expect_one_line_error(g, dir, "gk-gguf: ");
    expect_one_line_error(g + "--json --dump x " + k_model, dir, "gk-gguf: ");
    expect_one_line_error(g + k_model + " extra", dir, "gk-gguf: ");
    // An empty --dump name is a tensor name like any other (it used to print the listing).
    expect_one_line_error(g + "--dump '' " + k_model, dir, "no tensor named ''");
    std::string log;
    EXPECT_EQ(run(g + "--help", dir / "log", &log), 0) << log;
    fs::remove_all(dir);
}

} // namespace
