// test-gguf-retype: changing a tensor's type and data after it was added (what
// llama-quantize does through ggml's gguf_set_tensor_type / gguf_set_tensor_data): the
// size follows the new type, every later offset moves, the data is unset until given,
// the metadata alone is the file's first data_offset bytes.
#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};
using context = std::unique_ptr<gk_gguf, closer>;

std::vector<uint8_t> written(const gk_gguf * ctx) {
    std::vector<uint8_t> out(gk_gguf_write_size(ctx));
    gk_gguf_error err;
    EXPECT_EQ(gk_gguf_write_memory(ctx, out.data(), out.size(), &err), GK_GGUF_OK) << err.message;
    return out;
}

// Three f32 tensors of 64 x 2 (512 bytes each) without data, as llama-quantize adds them.
context three_unset() {
    context ctx(gk_gguf_create());
    gk_gguf_error err;
    const int64_t ne[2] = {64, 2};
    for (const char * name : {"a", "b", "c"}) {
        EXPECT_EQ(gk_gguf_add_tensor(ctx.get(), name, GK_TYPE_F32, 2, ne, nullptr, 512, &err), GK_GGUF_OK)
            << err.message;
    }
    return ctx;
}

TEST(GgufRetype, SizeAndLaterOffsetsFollowTheType) {
    context ctx = three_unset();
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    EXPECT_EQ(gk_gguf_tensor_offset(c, 1), 512u);
    EXPECT_EQ(gk_gguf_tensor_offset(c, 2), 1024u);
    const uint64_t data_offset = gk_gguf_data_offset(c);

    ASSERT_EQ(gk_gguf_set_tensor_type(c, 0, GK_TYPE_Q8_0, &err), GK_GGUF_OK) << err.message;
    EXPECT_EQ(gk_gguf_tensor_type(c, 0), GK_TYPE_Q8_0);
    EXPECT_EQ(gk_gguf_tensor_size(c, 0), 2u * 2 * 34);  // 2 rows of 2 blocks
    EXPECT_EQ(gk_gguf_tensor_offset(c, 1), 160u);       // 136 rounded up to 32
    EXPECT_EQ(gk_gguf_tensor_offset(c, 2), 672u);
    EXPECT_EQ(gk_gguf_data_offset(c), data_offset);  // the infos keep their size

    ASSERT_EQ(gk_gguf_set_tensor_type(c, 1, GK_TYPE_Q4_0, &err), GK_GGUF_OK) << err.message;
    EXPECT_EQ(gk_gguf_tensor_size(c, 1), 2u * 2 * 18);
    EXPECT_EQ(gk_gguf_tensor_offset(c, 2), 160u + 96);
    EXPECT_EQ(gk_gguf_tensor_ne(c, 1)[0], 64);
    EXPECT_EQ(gk_gguf_write_size(c), data_offset + 256 + 512);
}

TEST(GgufRetype, DataIsUnsetUntilGivenAndWrittenAsZeros) {
    context ctx = three_unset();
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    EXPECT_EQ(gk_gguf_tensor_data(c, 0), nullptr);
    std::vector<uint8_t> q(136);
    for (size_t i = 0; i < q.size(); ++i) {
        q[i] = static_cast<uint8_t>(i + 1);
    }
    ASSERT_EQ(gk_gguf_set_tensor_type(c, 0, GK_TYPE_Q8_0, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_tensor_data(c, 0, q.data(), 512, &err), GK_GGUF_ERR_ARG);  // the old size
    EXPECT_NE(std::string(err.message).find("136 bytes, 512 given"), std::string::npos) << err.message;
    ASSERT_EQ(gk_gguf_set_tensor_data(c, 0, q.data(), q.size(), &err), GK_GGUF_OK) << err.message;
    q[0] = 0;  // copied
    EXPECT_EQ(static_cast<const uint8_t *>(gk_gguf_tensor_data(c, 0))[0], 1);

    const std::vector<uint8_t> bytes = written(c);
    context back(gk_gguf_open_memory(bytes.data(), bytes.size(), &err));
    ASSERT_TRUE(back) << err.message;
    EXPECT_EQ(gk_gguf_tensor_type(back.get(), 0), GK_TYPE_Q8_0);
    EXPECT_EQ(gk_gguf_tensor_offset(back.get(), 1), 160u);
    EXPECT_EQ(std::memcmp(gk_gguf_tensor_data(back.get(), 0), bytes.data() + gk_gguf_data_offset(c), 136), 0);
    EXPECT_EQ(static_cast<const uint8_t *>(gk_gguf_tensor_data(back.get(), 0))[135], 136);
    const auto * b = static_cast<const uint8_t *>(gk_gguf_tensor_data(back.get(), 1));
    EXPECT_EQ(std::vector<uint8_t>(b, b + 512), std::vector<uint8_t>(512, 0));  // never set: zeros
    EXPECT_TRUE(written(back.get()) == bytes);

    // unset data cannot be decoded
    float row[64];
    EXPECT_EQ(gk_gguf_tensor_to_f32(c, 1, 0, 1, row, &err), GK_GGUF_ERR_ARG);
    EXPECT_NE(std::string(err.message).find("no data"), std::string::npos) << err.message;
}

TEST(GgufRetype, RetypingDropsTheDataUnlessTheTypeStays) {
    context ctx(gk_gguf_create());
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    const float x[32] = {1, 2, 3};
    const int64_t ne[1] = {32};
    ASSERT_EQ(gk_gguf_add_tensor(c, "x", GK_TYPE_F32, 1, ne, x, sizeof x, &err), GK_GGUF_OK);
    ASSERT_EQ(gk_gguf_set_tensor_type(c, 0, GK_TYPE_F32, &err), GK_GGUF_OK);
    ASSERT_NE(gk_gguf_tensor_data(c, 0), nullptr);
    EXPECT_EQ(static_cast<const float *>(gk_gguf_tensor_data(c, 0))[2], 3.0f);
    ASSERT_EQ(gk_gguf_set_tensor_type(c, 0, GK_TYPE_F16, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_tensor_data(c, 0), nullptr);
    EXPECT_EQ(gk_gguf_tensor_size(c, 0), 64u);
}

TEST(GgufRetype, AFileReadCanBeRetyped) {
    const std::string path = std::string(GK_TEST_DATA) + "/models/stories260K.gguf";
    gk_gguf_error err;
    context ctx(gk_gguf_open(path.c_str(), &err));
    ASSERT_TRUE(ctx) << err.message;
    gk_gguf * c = ctx.get();
    const int64_t n = gk_gguf_tensor_count(c);
    int64_t retyped = -1;
    for (int64_t i = 0; i < n && retyped < 0; ++i) {
        if (gk_gguf_tensor_type(c, i) == GK_TYPE_F32 && gk_gguf_tensor_ne(c, i)[0] % 32 == 0 &&
            gk_gguf_tensor_n_dims(c, i) == 2 && i + 1 < n) {
            retyped = i;
        }
    }
    ASSERT_GE(retyped, 0);
    const uint64_t later = gk_gguf_tensor_offset(c, retyped + 1);
    ASSERT_EQ(gk_gguf_set_tensor_type(c, retyped, GK_TYPE_Q8_0, &err), GK_GGUF_OK) << err.message;
    EXPECT_LT(gk_gguf_tensor_offset(c, retyped + 1), later);
    EXPECT_EQ(gk_gguf_tensor_data(c, retyped), nullptr);
    EXPECT_NE(gk_gguf_tensor_data(c, retyped + 1), nullptr);  // the others keep their data
    const std::vector<uint8_t> bytes = written(c);
    context back(gk_gguf_open_memory(bytes.data(), bytes.size(), &err));
    ASSERT_TRUE(back) << err.message;
    EXPECT_EQ(gk_gguf_tensor_type(back.get(), retyped), GK_TYPE_Q8_0);
    EXPECT_EQ(std::memcmp(gk_gguf_tensor_data(back.get(), retyped + 1), gk_gguf_tensor_data(c, retyped + 1),
                          gk_gguf_tensor_size(c, retyped + 1)),
              0);
}

TEST(GgufRetype, MetaIsTheFilesHead) {
    context ctx = three_unset();
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    ASSERT_EQ(gk_gguf_set_str(c, "general.name", "m", 1, &err), GK_GGUF_OK);
    const std::vector<uint8_t> bytes = written(c);
    std::vector<uint8_t> meta(gk_gguf_data_offset(c) + 5, 0xAB);
    ASSERT_EQ(gk_gguf_write_meta_memory(c, meta.data(), meta.size(), &err), GK_GGUF_OK) << err.message;
    EXPECT_TRUE(std::equal(meta.begin(), meta.end() - 5, bytes.begin()));
    EXPECT_EQ(meta.back(), 0xAB);  // nothing past the metadata
    EXPECT_EQ(gk_gguf_write_meta_memory(c, meta.data(), gk_gguf_data_offset(c) - 1, &err), GK_GGUF_ERR_ARG);
}

TEST(GgufRetype, BadArgumentsRefused) {
    context ctx = three_unset();
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    const int64_t ne[1] = {48};
    ASSERT_EQ(gk_gguf_add_tensor(c, "odd", GK_TYPE_F32, 1, ne, nullptr, 192, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_tensor_type(c, 3, GK_TYPE_Q8_0, &err), GK_GGUF_ERR_ARG);  // 48 is not 32k
    EXPECT_NE(std::string(err.message).find("not a multiple of the q8_0 block size"), std::string::npos)
        << err.message;
    EXPECT_EQ(gk_gguf_tensor_type(c, 3), GK_TYPE_F32);  // unchanged
    EXPECT_EQ(gk_gguf_tensor_size(c, 3), 192u);
    EXPECT_EQ(gk_gguf_set_tensor_type(c, 4, GK_TYPE_F16, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_tensor_type(c, -1, GK_TYPE_F16, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_tensor_type(c, 0, static_cast<gk_type>(4), &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_tensor_type(nullptr, 0, GK_TYPE_F16, &err), GK_GGUF_ERR_ARG);
    const float x[128] = {};
    EXPECT_EQ(gk_gguf_set_tensor_data(c, 0, nullptr, 512, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_tensor_data(c, 9, x, 512, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_tensor_data(nullptr, 0, x, 512, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_write_meta_memory(nullptr, nullptr, 0, &err), GK_GGUF_ERR_ARG);
}

} // namespace
