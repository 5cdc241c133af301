// test-gguf-write: the writer. Every real file read and written back is identical to
// the byte; a file built through the API reads back with the same content.
#include "gguf_bytes.h"
#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};
using context = std::unique_ptr<gk_gguf, closer>;

std::vector<uint8_t> slurp(const fs::path & p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> written(const gk_gguf * ctx) {
    std::vector<uint8_t> out(gk_gguf_write_size(ctx));
    gk_gguf_error err;
    EXPECT_EQ(gk_gguf_write_memory(ctx, out.data(), out.size(), &err), GK_GGUF_OK) << err.message;
    return out;
}

fs::path temp_dir() {
    const fs::path d = fs::temp_directory_path() / ("gk-gguf-write-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
}

/** Each of `files`, read and written back (in memory and through a file), is the same bytes. */
void expect_round_trips(const std::vector<fs::path> & files) {
    const fs::path dir = temp_dir();
    for (const fs::path & p : files) {
        gk_gguf_error err;
        context ctx(gk_gguf_open(p.c_str(), &err));
        ASSERT_TRUE(ctx) << p << ": " << err.message;
        const std::vector<uint8_t> original = slurp(p);
        EXPECT_EQ(gk_gguf_write_size(ctx.get()), original.size()) << p;
        EXPECT_TRUE(written(ctx.get()) == original) << p << " differs after a round trip in memory";
        const fs::path out = dir / p.filename();
        ASSERT_EQ(gk_gguf_write(ctx.get(), out.c_str(), &err), GK_GGUF_OK) << err.message;
        EXPECT_TRUE(slurp(out) == original) << p << " differs after a round trip through a file";
    }
    fs::remove_all(dir);
}

TEST(GgufWrite, BundledModelRoundTripsByteIdentical) {
    expect_round_trips({fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf"});
}

TEST(GgufWriteSharedData, RealFilesRoundTripByteIdentical) {
    std::vector<fs::path> files;
    for (const char * sub : {"models", "vocab"}) {
        const fs::path dir = fs::path(GK_SHARED_DATA) / "gguf" / sub;
        if (!fs::is_directory(dir)) GTEST_SKIP() << "GK-SKIP: no shared data at " << dir;
        for (const auto & e : fs::directory_iterator(dir)) {
            files.push_back(e.path());
        }
    }
    expect_round_trips(files);
}

TEST(GgufWrite, TinyFileRoundTrips) {
    const gguf_test::bytes f = gguf_test::tiny_file();
    gk_gguf_error err;
    context ctx(gk_gguf_open_memory(f.data().data(), f.size(), &err));
    ASSERT_TRUE(ctx) << err.message;
    EXPECT_TRUE(written(ctx.get()) == f.data());
}

// A context written over the very file it is mapped from (through the temporary file).
TEST(GgufWrite, OverwriteTheMappedFile) {
    const fs::path dir = temp_dir();
    const fs::path p   = dir / "self.gguf";
    fs::copy_file(fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf", p);
    const std::vector<uint8_t> original = slurp(p);
    gk_gguf_error err;
    context ctx(gk_gguf_open(p.c_str(), &err));
    ASSERT_TRUE(ctx) << err.message;
    ASSERT_EQ(gk_gguf_write(ctx.get(), p.c_str(), &err), GK_GGUF_OK) << err.message;
    EXPECT_TRUE(slurp(p) == original);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temporary left
    fs::remove_all(dir);
}

// A FIFO (like /dev/stdout or /dev/null, which a test must not touch) is written in
// place, and a symlink is followed: renaming the temporary file over either replaced
// the node itself (gk-quantize ... /dev/null once turned /dev/null into a file).
TEST(GgufWrite, SpecialFilesAndSymlinksAreWrittenThrough) {
    const fs::path dir = temp_dir();
    gk_gguf_error  err;
    context        ctx(gk_gguf_open((fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf").c_str(), &err));
    ASSERT_TRUE(ctx) << err.message;
    const std::vector<uint8_t> expected = written(ctx.get());

    // The test holds both ends (O_RDWR: opening never blocks) and a thread drains the
    // expected number of bytes; should the FIFO be replaced, the test feeds it itself,
    // so a regression fails instead of hanging.
    const fs::path fifo = dir / "pipe";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const int ends = open(fifo.c_str(), O_RDWR);
    ASSERT_GE(ends, 0);
    std::vector<uint8_t> got(expected.size());
    std::thread          reader([&] {
        for (size_t n = 0; n < got.size();) {
            const ssize_t r = read(ends, got.data() + n, got.size() - n);
            if (r <= 0) {
                break;
            }
            n += static_cast<size_t>(r);
        }
    });
    EXPECT_EQ(gk_gguf_write(ctx.get(), fifo.c_str(), &err), GK_GGUF_OK) << err.message;
    const bool still_fifo = fs::is_fifo(fs::symlink_status(fifo));
    EXPECT_TRUE(still_fifo);
    if (!still_fifo) {
        const std::vector<uint8_t> filler(expected.size());
        EXPECT_EQ(write(ends, filler.data(), filler.size()), static_cast<ssize_t>(filler.size()));
    }
    reader.join();
    close(ends);
    EXPECT_TRUE(got == expected);

    const fs::path real = dir / "real.gguf", link = dir / "link.gguf";
    std::ofstream(real) << "old";
    fs::create_symlink(real, link);
    ASSERT_EQ(gk_gguf_write(ctx.get(), link.c_str(), &err), GK_GGUF_OK) << err.message;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_TRUE(slurp(real) == expected);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);  // no temporary left
    fs::remove_all(dir);
}

TEST(GgufWrite, BuildAndReadBack) {
    context ctx(gk_gguf_create());
    ASSERT_TRUE(ctx);
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    EXPECT_EQ(gk_gguf_set_str(c, "general.architecture", "llama", 5, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_u8(c, "u8", 7, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_i8(c, "i8", -7, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_u16(c, "u16", 700, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_i16(c, "i16", -700, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_u32(c, "u32", 70000, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_i32(c, "i32", -70000, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_f32(c, "f32", 1.5f, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_bool(c, "bool", true, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_u64(c, "u64", 1ull << 40, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_i64(c, "i64", -(1ll << 40), &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_set_f64(c, "f64", 0.1, &err), GK_GGUF_OK);
    const float fl[3] = {1, 2, 3};
    EXPECT_EQ(gk_gguf_set_array(c, "floats", GK_GGUF_TYPE_FLOAT32, fl, 3, &err), GK_GGUF_OK);
    const char * strs[] = {"a", "", "ccc"};
    EXPECT_EQ(gk_gguf_set_array_str(c, "strs", strs, nullptr, 3, &err), GK_GGUF_OK);
    // replacing keeps the position and may change the type
    EXPECT_EQ(gk_gguf_set_i32(c, "u8", 9, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_find_key(c, "u8"), 1);

    const float a[6] = {1, 2, 3, 4, 5, 6};
    const int64_t ne_a[2] = {3, 2};
    EXPECT_EQ(gk_gguf_add_tensor(c, "a", GK_TYPE_F32, 2, ne_a, a, sizeof a, &err), GK_GGUF_OK) << err.message;
    const uint8_t q[34] = {0x00, 0x3C};
    const int64_t ne_q[1] = {32};
    EXPECT_EQ(gk_gguf_add_tensor(c, "q", GK_TYPE_Q8_0, 1, ne_q, q, sizeof q, &err), GK_GGUF_OK) << err.message;
    const int64_t ne_e[3] = {4, 0, 2};
    EXPECT_EQ(gk_gguf_add_tensor(c, "e", GK_TYPE_F16, 3, ne_e, nullptr, 0, &err), GK_GGUF_OK) << err.message;
    EXPECT_EQ(gk_gguf_tensor_offset(c, 1), 32u);
    EXPECT_EQ(gk_gguf_tensor_offset(c, 2), 96u);
    EXPECT_EQ(gk_gguf_data_offset(c) % 32, 0u);

    // a copy of the nested array of the tiny file, taken from another context
    const gguf_test::bytes f = gguf_test::tiny_file();
    context tiny(gk_gguf_open_memory(f.data().data(), f.size(), &err));
    ASSERT_TRUE(tiny);
    EXPECT_EQ(gk_gguf_set_value(c, "nested", gk_gguf_get(tiny.get(), "t.nested"), &err), GK_GGUF_OK);

    const std::vector<uint8_t> bytes = written(c);
    context back(gk_gguf_open_memory(bytes.data(), bytes.size(), &err));
    ASSERT_TRUE(back) << err.message;
    gk_gguf * b = back.get();
    EXPECT_EQ(gk_gguf_version(b), 3u);
    ASSERT_EQ(gk_gguf_kv_count(b), gk_gguf_kv_count(c));
    int32_t i32 = 0;
    EXPECT_TRUE(gk_gguf_value_i32(gk_gguf_get(b, "u8"), &i32));
    EXPECT_EQ(i32, 9);
    double f64 = 0;
    EXPECT_TRUE(gk_gguf_value_f64(gk_gguf_get(b, "f64"), &f64));
    EXPECT_EQ(f64, 0.1);
    size_t len = 9;
    EXPECT_STREQ(gk_gguf_array_str(gk_gguf_get(b, "strs"), 1, &len), "");
    EXPECT_EQ(len, 0u);
    const gk_gguf_value * nested = gk_gguf_get(b, "nested");
    EXPECT_EQ(gk_gguf_array_len(gk_gguf_array_item(nested, 0)), 2u);
    ASSERT_EQ(gk_gguf_tensor_count(b), 3);
    EXPECT_EQ(static_cast<const float *>(gk_gguf_tensor_data(b, 0))[5], 6.0f);
    EXPECT_EQ(gk_gguf_tensor_size(b, 1), 34u);
    EXPECT_EQ(gk_gguf_tensor_ne(b, 2)[1], 0);
    EXPECT_EQ(gk_gguf_tensor_ne(b, 2)[3], 1);
    EXPECT_TRUE(written(b) == bytes);
}

TEST(GgufWrite, AlignmentRelaysTensors) {
    context ctx(gk_gguf_create());
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    const float x[3] = {};
    const int64_t ne[1] = {3};
    ASSERT_EQ(gk_gguf_add_tensor(c, "x", GK_TYPE_F32, 1, ne, x, sizeof x, &err), GK_GGUF_OK);
    ASSERT_EQ(gk_gguf_add_tensor(c, "y", GK_TYPE_F32, 1, ne, x, sizeof x, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_tensor_offset(c, 1), 32u);
    ASSERT_EQ(gk_gguf_set_u32(c, "general.alignment", 256, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_alignment(c), 256u);
    EXPECT_EQ(gk_gguf_tensor_offset(c, 1), 256u);
    EXPECT_EQ(gk_gguf_data_offset(c) % 256, 0u);
    EXPECT_EQ(gk_gguf_write_size(c) % 256, 0u);
    EXPECT_EQ(gk_gguf_set_u32(c, "general.alignment", 48, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_u64(c, "general.alignment", 64, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_alignment(c), 256u);
    ASSERT_EQ(gk_gguf_remove_key(c, "general.alignment", &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_alignment(c), 32u);
    EXPECT_EQ(gk_gguf_tensor_offset(c, 1), 32u);
    EXPECT_EQ(gk_gguf_remove_key(c, "general.alignment", &err), GK_GGUF_ERR_ARG);
}

TEST(GgufWrite, RemoveKeyKeepsIndex) {
    context ctx(gk_gguf_create());
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    for (const char * k : {"a", "b", "c"}) {
        ASSERT_EQ(gk_gguf_set_u8(c, k, 1, &err), GK_GGUF_OK);
    }
    // the key may point into the pair being removed
    ASSERT_EQ(gk_gguf_remove_key(c, gk_gguf_kv_key(c, 1), &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_kv_count(c), 2);
    EXPECT_EQ(gk_gguf_find_key(c, "b"), -1);
    EXPECT_EQ(gk_gguf_find_key(c, "c"), 1);
    EXPECT_STREQ(gk_gguf_kv_key(c, 1), "c");
}

TEST(GgufWrite, BadArgumentsRefused) {
    context ctx(gk_gguf_create());
    gk_gguf * c = ctx.get();
    gk_gguf_error err;
    const float x[64] = {};
    const int64_t ne[2] = {3, 2};
    EXPECT_EQ(gk_gguf_add_tensor(c, "t", GK_TYPE_F32, 2, ne, x, 20, &err), GK_GGUF_ERR_ARG);
    EXPECT_NE(std::string(err.message).find("24 bytes, 20 given"), std::string::npos) << err.message;
    ASSERT_EQ(gk_gguf_add_tensor(c, "t", GK_TYPE_F32, 2, ne, x, 24, &err), GK_GGUF_OK);
    EXPECT_EQ(gk_gguf_add_tensor(c, "t", GK_TYPE_F32, 2, ne, x, 24, &err), GK_GGUF_ERR_ARG);  // duplicate
    EXPECT_EQ(gk_gguf_add_tensor(c, "q", GK_TYPE_Q8_0, 2, ne, x, 24, &err), GK_GGUF_ERR_ARG);  // row of 3
    EXPECT_NE(std::string(err.message).find("not a multiple of the q8_0 block size 32"), std::string::npos)
        << err.message;
    EXPECT_EQ(gk_gguf_add_tensor(c, "z", GK_TYPE_F32, 0, ne, x, 0, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_add_tensor(c, "z", GK_TYPE_F32, 5, ne, x, 0, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_add_tensor(c, "z", static_cast<gk_type>(4), 1, ne, x, 12, &err), GK_GGUF_ERR_ARG);
    const int64_t neg[1] = {-1};
    EXPECT_EQ(gk_gguf_add_tensor(c, "z", GK_TYPE_F32, 1, neg, x, 0, &err), GK_GGUF_ERR_ARG);
    const int64_t huge[2] = {INT64_MAX / 2, 4};
    EXPECT_EQ(gk_gguf_add_tensor(c, "z", GK_TYPE_F32, 2, huge, x, 0, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_add_tensor(c, std::string(65, 'n').c_str(), GK_TYPE_F32, 2, ne, x, 24, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_u8(c, "", 1, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_u8(c, nullptr, 1, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_set_array(c, "s", GK_GGUF_TYPE_STRING, x, 1, &err), GK_GGUF_ERR_ARG);
    const uint8_t bad_bool[2] = {1, 2};
    EXPECT_EQ(gk_gguf_set_array(c, "b", GK_GGUF_TYPE_BOOL, bad_bool, 2, &err), GK_GGUF_ERR_ARG);
    // A C caller may pass any int as the element type: called here as C calls it (the enum
    // is an int in the ABI). It used to be read as the C++ enum, which UBSan stopped on.
    using set_array_int  = gk_gguf_status (*)(gk_gguf *, const char *, int, const void *, uint64_t, gk_gguf_error *);
    const auto set_array = reinterpret_cast<set_array_int>(&gk_gguf_set_array);
    for (int elem : {-1, 13, 1000, INT32_MIN}) {
        EXPECT_EQ(set_array(c, "e", elem, x, 1, &err), GK_GGUF_ERR_ARG) << elem;
        EXPECT_NE(std::string(err.message).find("not a gk_gguf_type"), std::string::npos) << err.message;
    }
    uint8_t small[8];
    EXPECT_EQ(gk_gguf_write_memory(c, small, sizeof small, &err), GK_GGUF_ERR_ARG);
    EXPECT_EQ(gk_gguf_write(c, "/nonexistent-dir/x.gguf", &err), GK_GGUF_ERR_IO);
    EXPECT_NE(std::string(err.message).find("No such file"), std::string::npos) << err.message;
    EXPECT_EQ(gk_gguf_kv_count(c), 0);  // nothing half-added
    EXPECT_EQ(gk_gguf_tensor_count(c), 1);
}

} // namespace
