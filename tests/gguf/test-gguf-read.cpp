// test-gguf-read: the reader on real files (../shared/data/gguf) and on a small file
// holding every value type; the legacy files are refused with clear messages.
#include "gguf_bytes.h"
#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};
using context = std::unique_ptr<gk_gguf, closer>;

const fs::path k_shared = fs::path(GK_SHARED_DATA) / "gguf";

std::vector<fs::path> files_in(const fs::path & dir) {
    std::vector<fs::path> out;
    if (fs::is_directory(dir)) {
        for (const auto & e : fs::directory_iterator(dir)) {
            if (e.path().extension() == ".gguf") {
                out.push_back(e.path());
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(GgufReadSharedData, ModelsAndVocabsParse) {
    std::vector<fs::path> files = files_in(k_shared / "models");
    const std::vector<fs::path> vocab = files_in(k_shared / "vocab");
    files.insert(files.end(), vocab.begin(), vocab.end());
    if (files.empty()) {
        GTEST_SKIP() << "GK-SKIP: no shared data at " << k_shared;
    }
    for (const fs::path & p : files) {
        gk_gguf_error err;
        context ctx(gk_gguf_open(p.c_str(), &err));
        ASSERT_TRUE(ctx) << p << ": " << err.message;
        EXPECT_EQ(err.status, GK_GGUF_OK);
        EXPECT_EQ(gk_gguf_version(ctx.get()), 3u) << p;
        EXPECT_GE(gk_gguf_find_key(ctx.get(), "general.architecture"), 0) << p;
        const gk_gguf_value * tokens = gk_gguf_get(ctx.get(), "tokenizer.ggml.tokens");
        ASSERT_NE(tokens, nullptr) << p;
        EXPECT_EQ(gk_gguf_array_type(tokens), GK_GGUF_TYPE_STRING);
        EXPECT_GE(gk_gguf_array_len(tokens), 512u);
    }
}

TEST(GgufRead, Stories260K) {
    const fs::path p = fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf";
    gk_gguf_error err;
    context ctx(gk_gguf_open(p.c_str(), &err));
    ASSERT_TRUE(ctx) << err.message;
    EXPECT_EQ(gk_gguf_kv_count(ctx.get()), 19);
    ASSERT_EQ(gk_gguf_tensor_count(ctx.get()), 48);
    EXPECT_EQ(gk_gguf_alignment(ctx.get()), 32u);
    EXPECT_EQ(gk_gguf_data_offset(ctx.get()), 14176u);  // as gguf-py's GGUFReader reports
    size_t len = 0;
    EXPECT_STREQ(gk_gguf_value_str(gk_gguf_get(ctx.get(), "general.architecture"), &len), "llama");
    EXPECT_EQ(len, 5u);
    uint32_t n_embd = 0;
    EXPECT_TRUE(gk_gguf_value_u32(gk_gguf_get(ctx.get(), "llama.embedding_length"), &n_embd));
    EXPECT_EQ(n_embd, 64u);
    uint64_t end = 0;
    for (int64_t i = 0; i < gk_gguf_tensor_count(ctx.get()); ++i) {
        EXPECT_EQ(gk_gguf_tensor_type(ctx.get(), i), GK_TYPE_F32);
        EXPECT_EQ(gk_gguf_tensor_size(ctx.get(), i), 4u * gk_gguf_tensor_nelements(ctx.get(), i));
        end = std::max(end, gk_gguf_data_offset(ctx.get()) + gk_gguf_tensor_offset(ctx.get(), i) +
                                gk_gguf_tensor_size(ctx.get(), i));
    }
    EXPECT_EQ(end, fs::file_size(p));
    const int64_t emb = gk_gguf_find_tensor(ctx.get(), "token_embd.weight");
    ASSERT_GE(emb, 0);
    EXPECT_EQ(gk_gguf_tensor_n_dims(ctx.get(), emb), 2u);
    EXPECT_EQ(gk_gguf_tensor_ne(ctx.get(), emb)[0], 64);
    EXPECT_EQ(gk_gguf_tensor_ne(ctx.get(), emb)[1], 512);
    EXPECT_EQ(gk_gguf_tensor_ne(ctx.get(), emb)[2], 1);
}

// Each legacy file is refused; the message says why.
TEST(GgufReadSharedData, LegacyFilesRefused) {
    const struct {
        const char * file;
        const char * says;
        uint64_t     offset;
    } cases[] = {
        {"ggml-vocab-llama.v1.gguf", "GGUF version 1 is not supported", 4},
        {"tinyllamas-stories-260k-f32.v1.gguf", "GGUF version 1 is not supported", 4},
        {"example.prerelease-FUGG.gguf", "pre-release GGUF (magic 'FUGG'", 0},
        {"ggml-vocab-llama.prerelease-FUGG.gguf", "pre-release GGUF (magic 'FUGG'", 0},
        {"test_writer.valuetype13.gguf", "value type 13 of key", 0},
    };
    for (const auto & c : cases) {
        const fs::path p = k_shared / "legacy" / c.file;
        if (!fs::exists(p)) {
            GTEST_SKIP() << "GK-SKIP: no shared data at " << p;
        }
        gk_gguf_error err;
        context ctx(gk_gguf_open(p.c_str(), &err));
        EXPECT_FALSE(ctx) << p;
        EXPECT_EQ(err.status, GK_GGUF_ERR_FORMAT) << p;
        EXPECT_NE(std::string(err.message).find(c.says), std::string::npos) << p << ": " << err.message;
        if (c.offset || std::string(c.file).find("FUGG") != std::string::npos) {
            EXPECT_EQ(err.offset, c.offset) << p;
        }
        EXPECT_NE(std::string(err.message).find("(at byte " + std::to_string(err.offset) + ")"), std::string::npos);
    }
}

TEST(GgufRead, EveryValueType) {
    const gguf_test::bytes f = gguf_test::tiny_file();
    gk_gguf_error err;
    context ctx(gk_gguf_open_memory(f.data().data(), f.size(), &err));
    ASSERT_TRUE(ctx) << err.message;
    gk_gguf * c = ctx.get();
    ASSERT_EQ(gk_gguf_kv_count(c), 17);
    EXPECT_STREQ(gk_gguf_kv_key(c, 0), "general.architecture");
    EXPECT_EQ(gk_gguf_kv_key(c, 17), nullptr);
    EXPECT_EQ(gk_gguf_find_key(c, "nope"), -1);

    uint8_t u8;
    int8_t i8;
    uint16_t u16;
    int16_t i16;
    uint32_t u32;
    int32_t i32;
    float f32;
    bool b;
    uint64_t u64;
    int64_t i64;
    double f64;
    EXPECT_TRUE(gk_gguf_value_u8(gk_gguf_get(c, "t.u8"), &u8));
    EXPECT_EQ(u8, 200);
    EXPECT_FALSE(gk_gguf_value_i8(gk_gguf_get(c, "t.u8"), &i8));  // wrong type
    EXPECT_TRUE(gk_gguf_value_i8(gk_gguf_get(c, "t.i8"), &i8));
    EXPECT_EQ(i8, -100);
    EXPECT_TRUE(gk_gguf_value_u16(gk_gguf_get(c, "t.u16"), &u16));
    EXPECT_EQ(u16, 60000);
    EXPECT_TRUE(gk_gguf_value_i16(gk_gguf_get(c, "t.i16"), &i16));
    EXPECT_EQ(i16, -30000);
    EXPECT_TRUE(gk_gguf_value_u32(gk_gguf_get(c, "t.u32"), &u32));
    EXPECT_EQ(u32, 4000000000u);
    EXPECT_TRUE(gk_gguf_value_i32(gk_gguf_get(c, "t.i32"), &i32));
    EXPECT_EQ(i32, -2000000000);
    EXPECT_TRUE(gk_gguf_value_f32(gk_gguf_get(c, "t.f32"), &f32));
    EXPECT_EQ(f32, 0.25f);
    EXPECT_TRUE(gk_gguf_value_bool(gk_gguf_get(c, "t.bool"), &b));
    EXPECT_TRUE(b);
    EXPECT_TRUE(gk_gguf_value_u64(gk_gguf_get(c, "t.u64"), &u64));
    EXPECT_EQ(u64, 18000000000000000000ull);
    EXPECT_TRUE(gk_gguf_value_i64(gk_gguf_get(c, "t.i64"), &i64));
    EXPECT_EQ(i64, -9000000000000000000ll);
    EXPECT_TRUE(gk_gguf_value_f64(gk_gguf_get(c, "t.f64"), &f64));
    EXPECT_EQ(f64, -1.5);
    EXPECT_STREQ(gk_gguf_value_str(gk_gguf_get(c, "t.str"), nullptr), "hello");
    EXPECT_EQ(gk_gguf_value_str(gk_gguf_get(c, "t.u8"), nullptr), nullptr);

    const gk_gguf_value * arr = gk_gguf_get(c, "t.arr");
    ASSERT_EQ(gk_gguf_value_type(arr), GK_GGUF_TYPE_ARRAY);
    EXPECT_EQ(gk_gguf_array_type(arr), GK_GGUF_TYPE_INT32);
    ASSERT_EQ(gk_gguf_array_len(arr), 3u);
    const auto * ints = static_cast<const int32_t *>(gk_gguf_array_data(arr));
    EXPECT_EQ(ints[0], 1);
    EXPECT_EQ(ints[1], -2);
    EXPECT_EQ(ints[2], 3);
    EXPECT_EQ(gk_gguf_array_str(arr, 0, nullptr), nullptr);

    const gk_gguf_value * strs = gk_gguf_get(c, "t.strs");
    size_t len = 0;
    EXPECT_STREQ(gk_gguf_array_str(strs, 1, &len), "yz");
    EXPECT_EQ(len, 2u);
    EXPECT_EQ(gk_gguf_array_str(strs, 2, &len), nullptr);
    EXPECT_EQ(gk_gguf_array_data(strs), nullptr);

    const gk_gguf_value * nested = gk_gguf_get(c, "t.nested");
    EXPECT_EQ(gk_gguf_array_type(nested), GK_GGUF_TYPE_ARRAY);
    ASSERT_EQ(gk_gguf_array_len(nested), 2u);
    const gk_gguf_value * first = gk_gguf_array_item(nested, 0);
    EXPECT_EQ(gk_gguf_array_type(first), GK_GGUF_TYPE_UINT16);
    ASSERT_EQ(gk_gguf_array_len(first), 2u);
    EXPECT_EQ(static_cast<const uint16_t *>(gk_gguf_array_data(first))[1], 2);
    EXPECT_EQ(gk_gguf_array_len(gk_gguf_array_item(nested, 1)), 0u);
    EXPECT_EQ(gk_gguf_array_item(nested, 2), nullptr);

    ASSERT_EQ(gk_gguf_tensor_count(c), 3);
    EXPECT_EQ(gk_gguf_data_offset(c), f.at("data"));
    EXPECT_STREQ(gk_gguf_tensor_name(c, 1), "b");
    EXPECT_EQ(gk_gguf_tensor_type(c, 1), GK_TYPE_Q8_0);
    EXPECT_EQ(gk_gguf_tensor_size(c, 1), 68u);
    EXPECT_EQ(gk_gguf_tensor_offset(c, 1), 64u);
    EXPECT_EQ(gk_gguf_tensor_nelements(c, 2), 0);
    EXPECT_EQ(gk_gguf_tensor_size(c, 2), 0u);
    EXPECT_EQ(gk_gguf_tensor_data(c, 2), nullptr);  // an empty tensor has none (it pointed at the next one's)
    const auto * a = static_cast<const float *>(gk_gguf_tensor_data(c, 0));
    EXPECT_EQ(a[11], 5.5f);
    EXPECT_EQ(gk_gguf_tensor_name(c, 3), nullptr);
}

// A file that cannot be mapped (a pipe) is read into memory instead.
TEST(GgufRead, PipeIsReadWithoutMapping) {
    const gguf_test::bytes f = gguf_test::tiny_file();
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ASSERT_EQ(write(fds[1], f.data().data(), f.size()), static_cast<ssize_t>(f.size()));  // fits the pipe buffer
    close(fds[1]);
    gk_gguf_error err;
    context ctx(gk_gguf_open(("/proc/self/fd/" + std::to_string(fds[0])).c_str(), &err));
    close(fds[0]);
    ASSERT_TRUE(ctx) << err.message;
    EXPECT_EQ(gk_gguf_tensor_count(ctx.get()), 3);
    EXPECT_EQ(static_cast<const float *>(gk_gguf_tensor_data(ctx.get(), 0))[11], 5.5f);
}

TEST(GgufRead, MissingFileAndDirectory) {
    gk_gguf_error err;
    EXPECT_EQ(gk_gguf_open("/nonexistent/x.gguf", &err), nullptr);
    EXPECT_EQ(err.status, GK_GGUF_ERR_IO);
    EXPECT_NE(std::string(err.message).find("No such file"), std::string::npos) << err.message;
    EXPECT_EQ(gk_gguf_open("/", &err), nullptr);
    EXPECT_EQ(err.status, GK_GGUF_ERR_IO);
    EXPECT_EQ(gk_gguf_open("/dev/null", &err), nullptr);  // not mappable: read, then refused as too short
    EXPECT_EQ(err.status, GK_GGUF_ERR_FORMAT);
    EXPECT_NE(std::string(err.message).find("too short"), std::string::npos) << err.message;
}

} // namespace
