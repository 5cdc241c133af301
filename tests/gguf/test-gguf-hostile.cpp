// test-gguf-hostile: malformed files. Each is refused with GK_GGUF_ERR_FORMAT, a
// message naming the problem, and the byte offset of the offending field (also in the
// message). Run under AddressSanitizer and UBSan, this also shows that no refusal
// reads out of bounds or overflows.
#include "gguf_bytes.h"
#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace {

using gguf_test::bytes;
using gguf_test::tiny_file;

constexpr uint64_t k_any_offset = std::numeric_limits<uint64_t>::max();

// Refused, with `says` in the message and the offending byte offset `at`.
void expect_refused(const std::vector<uint8_t> & b, const std::string & says, uint64_t at, size_t size) {
    gk_gguf_error err{};
    gk_gguf * ctx = gk_gguf_open_memory(b.data(), size, &err);
    EXPECT_EQ(ctx, nullptr) << "accepted; expected: " << says;
    gk_gguf_free(ctx);
    EXPECT_EQ(err.status, GK_GGUF_ERR_FORMAT) << err.message;
    EXPECT_NE(std::string(err.message).find(says), std::string::npos)
        << "message: " << err.message << "\nexpected: " << says;
    if (at != k_any_offset) {
        EXPECT_EQ(err.offset, at) << err.message;
    }
    EXPECT_LE(err.offset, size) << err.message;
    EXPECT_NE(std::string(err.message).find("(at byte " + std::to_string(err.offset) + ")"), std::string::npos)
        << err.message;
}

#define REFUSED(f, says, at)                    \
    do {                                        \
        SCOPED_TRACE(says);                     \
        expect_refused((f), says, at, (f).size());        \
    } while (0)

gk_gguf * accepted(const bytes & f) {
    gk_gguf_error err{};
    gk_gguf * ctx = gk_gguf_open_memory(f.data().data(), f.size(), &err);
    EXPECT_NE(ctx, nullptr) << err.message;
    return ctx;
}

size_t find_bytes(const bytes & f, const std::string & s) {
    const auto it = std::search(f.data().begin(), f.data().end(), s.begin(), s.end());
    return static_cast<size_t>(it - f.data().begin());
}

// A file of one tensor (no pairs) whose fields are given; its data is `data_bytes` zeros.
bytes one_tensor(const std::string & name, uint32_t n_dims, std::vector<int64_t> ne, uint32_t type, uint64_t offset,
                 size_t data_bytes) {
    bytes f;
    f.raw("GGUF", 4).put<uint32_t>(3).put<uint64_t>(1).put<uint64_t>(0);
    f.mark("name").str(name).put<uint32_t>(n_dims).mark("ne");
    for (int64_t n : ne) {
        f.put<int64_t>(n);
    }
    f.put<uint32_t>(type).put<uint64_t>(offset).mark("meta_end").pad_to(32);
    for (size_t i = 0; i < data_bytes; ++i) {
        f.put<uint8_t>(0);
    }
    return f;
}

TEST(GgufHostile, TruncatedAtEveryByte) {
    const bytes f = tiny_file();
    for (size_t n = 0; n < f.size(); ++n) {
        SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
        expect_refused(f.data(), "", k_any_offset, n);
    }
}

// Every prefix of the real model's metadata, then prefixes into its data.
TEST(GgufHostile, TruncatedStories260K) {
    std::ifstream in(std::string(GK_TEST_DATA) + "/models/stories260K.gguf", std::ios::binary);
    const std::vector<uint8_t> b{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    ASSERT_EQ(b.size(), 1185376u);
    const size_t data_offset = 14176;
    for (size_t n = 0; n < data_offset + 64; ++n) {
        SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
        expect_refused(b, "", k_any_offset, n);
    }
    for (size_t n = data_offset + 64; n < b.size(); n += 4099) {
        SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
        expect_refused(b, "lies outside the file", k_any_offset, n);
    }
}

TEST(GgufHostile, MagicAndVersion) {
    bytes f = tiny_file();
    f.patch<uint32_t>(4, 1);
    REFUSED(f.data(), "GGUF version 1 is not supported", 4);
    f.patch<uint32_t>(4, 0);
    REFUSED(f.data(), "unsupported GGUF version 0", 4);
    f.patch<uint32_t>(4, 4);
    REFUSED(f.data(), "unsupported GGUF version 4", 4);
    f.patch<uint32_t>(4, 0x03000000);
    REFUSED(f.data(), "big-endian GGUF (version 3 byte-swapped)", 4);
    f.patch<uint32_t>(4, 2);  // v2 has the layout of v3
    gk_gguf_free(accepted(f));
    f.data()[0] = 'F';
    f.data()[1] = 'U';
    f.data()[2] = 'G';
    f.data()[3] = 'G';
    REFUSED(f.data(), "pre-release GGUF (magic 'FUGG'", 0);
    f.data()[0] = 0xFF;
    REFUSED(f.data(), "not a GGUF file: magic is '\\xFFUGG'", 0);
}

TEST(GgufHostile, HugeCounts) {
    bytes f = tiny_file();
    f.patch<uint64_t>(f.at("n_kv"), 1ull << 60);
    REFUSED(f.data(), "key/value count 1152921504606846976 cannot fit", f.at("n_kv"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("n_tensors"), ~0ull);
    REFUSED(f.data(), "tensor count 18446744073709551615 cannot fit", f.at("n_tensors"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("n_tensors"), 20);  // fits the whole file, not what follows the pairs
    REFUSED(f.data(), "tensor count 20 cannot fit in the", f.at("n_tensors"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("n_tensors"), 4);  // one more than there are: read into padding and data
    REFUSED(f.data(), "", k_any_offset);
}

TEST(GgufHostile, HugeStringLengths) {
    bytes f = tiny_file();
    f.patch<uint64_t>(f.at("key0"), ~0ull);
    REFUSED(f.data(), "length 18446744073709551615 of key exceeds the", f.at("key0"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("str.len"), 1ull << 63);
    REFUSED(f.data(), "length 9223372036854775808 of string value exceeds", f.at("str.len"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("strs.len") + 8, 1000000);  // the first string of the array
    REFUSED(f.data(), "length 1000000 of array string exceeds", f.at("strs.len") + 8);
    f = tiny_file();
    f.patch<uint64_t>(f.at("a.name"), 1ull << 40);
    REFUSED(f.data(), "length 1099511627776 of tensor name exceeds", f.at("a.name"));
}

TEST(GgufHostile, HugeArrayLengths) {
    bytes f = tiny_file();
    f.patch<uint64_t>(f.at("arr.len"), 1ull << 61);
    REFUSED(f.data(), "array length 2305843009213693952 of key 't.arr' needs at least 4 bytes per int32",
            f.at("arr.len"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("strs.len"), ~0ull);
    REFUSED(f.data(), "needs at least 8 bytes per string", f.at("strs.len"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("nested") + 4, 1ull << 62);
    REFUSED(f.data(), "needs at least 12 bytes per array", f.at("nested") + 4);
    f = tiny_file();
    f.patch<uint64_t>(f.at("nested") + 16, 1ull << 62);  // the first inner array
    REFUSED(f.data(), "needs at least 2 bytes per uint16", f.at("nested") + 16);
}

TEST(GgufHostile, ArraysNestedTooDeep) {
    for (int depth : {GK_GGUF_MAX_ARRAY_DEPTH, GK_GGUF_MAX_ARRAY_DEPTH + 1, 100000}) {
        bytes f;
        f.raw("GGUF", 4).put<uint32_t>(3).put<uint64_t>(0).put<uint64_t>(1).str("deep").put<uint32_t>(gguf_test::ARR);
        for (int d = 1; d < depth; ++d) {  // each level: one array element
            if (d == GK_GGUF_MAX_ARRAY_DEPTH) {
                f.mark("too_deep");
            }
            f.put<uint32_t>(gguf_test::ARR).put<uint64_t>(1);
        }
        f.put<uint32_t>(gguf_test::U8).put<uint64_t>(0);
        if (depth <= GK_GGUF_MAX_ARRAY_DEPTH) {
            gk_gguf_free(accepted(f));
        } else {
            REFUSED(f.data(), "arrays of key 'deep' nest deeper than 8 levels", f.at("too_deep") + 12);
        }
    }
}

TEST(GgufHostile, Alignment) {
    for (uint32_t a : {0u, 3u, 48u, 0xFFFFFFFFu}) {
        bytes f = tiny_file();
        f.patch<uint32_t>(f.at("align.value"), a);
        REFUSED(f.data(), "general.alignment " + std::to_string(a) + " is not a non-zero power of two",
                f.at("align.value"));
    }
    bytes f = tiny_file();
    f.patch<uint32_t>(f.at("align.type"), gguf_test::I32);
    REFUSED(f.data(), "general.alignment has type int32, must be uint32", f.at("align.value"));
    f = tiny_file();
    f.patch<uint32_t>(f.at("align.value"), 64);  // "empty" sits at 160
    REFUSED(f.data(), "tensor 'empty' offset 160 is not a multiple of the alignment 64", f.at("empty.offset"));
    f = tiny_file();
    f.patch<uint32_t>(f.at("align.value"), 1u << 31);
    REFUSED(f.data(), "tensor 'b' offset 64 is not a multiple of the alignment 2147483648", f.at("b.offset"));
}

TEST(GgufHostile, BadValueTypes) {
    for (uint32_t t : {13u, 0xFFFFFFFFu}) {
        bytes f = tiny_file();
        f.patch<uint32_t>(f.at("u8.type"), t);
        REFUSED(f.data(), "value type " + std::to_string(t) + " of key 't.u8' is not a GGUF value type",
                f.at("u8.type"));
        f = tiny_file();
        f.patch<uint32_t>(f.at("arr.elem"), t);
        REFUSED(f.data(), "array element type " + std::to_string(t) + " of key 't.arr'", f.at("arr.elem"));
    }
    bytes f = tiny_file();
    f.data()[f.at("bool.value")] = 2;
    REFUSED(f.data(), "bool of key 't.bool' is 2, not 0 or 1", f.at("bool.value"));
    // ggml's rule on request (compat's gguf_init_*): any byte but 0 is true, kept as 1.
    f.data()[f.at("bool.value")] = 0xA7;
    gk_gguf_error err{};
    gk_gguf *     ctx = gk_gguf_open_memory_ex(f.data().data(), f.size(), GK_GGUF_READ_BOOL_NONZERO, &err);
    ASSERT_NE(ctx, nullptr) << err.message;
    bool b = false;
    EXPECT_TRUE(gk_gguf_value_bool(gk_gguf_get(ctx, "t.bool"), &b));
    EXPECT_TRUE(b);
    EXPECT_EQ(*static_cast<const uint8_t *>(gk_gguf_value_data(gk_gguf_get(ctx, "t.bool"))), 1);
    gk_gguf_free(ctx);
}

TEST(GgufHostile, BadKeys) {
    bytes f = tiny_file();
    f.patch<uint64_t>(f.at("key0"), 0);
    REFUSED(f.data(), "key 0 is empty", f.at("key0"));
    f = tiny_file();
    f.data()[f.at("key0") + 8 + 3] = 0;
    REFUSED(f.data(), "key 'gen\\x00ral.architecture' contains a NUL byte", f.at("key0"));
    f = tiny_file();
    const size_t i8 = find_bytes(f, "t.i8");
    f.data()[i8 + 2] = 'u';
    REFUSED(f.data(), "duplicate key 't.u8' (first as pair 1)", i8 - 8);
}

TEST(GgufHostile, BadTensorTypes) {
    for (uint32_t t : {4u, 5u, 31u, 36u, static_cast<uint32_t>(GK_TYPE_COUNT), 1000u, 0xFFFFFFFFu}) {
        bytes f = tiny_file();
        f.patch<uint32_t>(f.at("a.type"), t);
        REFUSED(f.data(), "tensor 'a' has type id " + std::to_string(t) + ", which is not a ggml type", f.at("a.type"));
    }
    bytes f = tiny_file();
    f.patch<uint32_t>(f.at("a.type"), GK_TYPE_Q4_0);  // a row of 4 is not a whole q4_0 block
    REFUSED(f.data(), "tensor 'a': row length ne[0] = 4 is not a multiple of the q4_0 block size 32", f.at("a.ne"));
}

TEST(GgufHostile, Dims) {
    for (uint32_t n : {0u, 5u, 0xFFFFFFFFu}) {
        bytes f = tiny_file();
        f.patch<uint32_t>(f.at("a.n_dims"), n);
        REFUSED(f.data(), "tensor 'a' has n_dims " + std::to_string(n) + ", must be 1..4", f.at("a.n_dims"));
    }
    bytes f = tiny_file();
    f.patch<int64_t>(f.at("a.ne") + 8, -3);
    REFUSED(f.data(), "dimension 1 of tensor 'a' is -3, negative", f.at("a.ne") + 8);
}

TEST(GgufHostile, ZeroDimsAreLegal) {
    bytes f = tiny_file();
    f.patch<int64_t>(f.at("b.ne"), 0);  // q8_0 with rows of 0 elements
    gk_gguf * ctx = accepted(f);
    EXPECT_EQ(gk_gguf_tensor_size(ctx, 1), 0u);
    EXPECT_EQ(gk_gguf_tensor_nelements(ctx, 1), 0);
    EXPECT_EQ(gk_gguf_tensor_size(ctx, 2), 0u);  // "empty": [0, 5]
    gk_gguf_free(ctx);
    // an empty tensor whose other size is huge still has strides that fit
    f = tiny_file();
    f.patch<int64_t>(f.at("a.ne"), 0);
    f.patch<int64_t>(f.at("a.ne") + 8, int64_t{1} << 62);
    gk_gguf_free(accepted(f));
}

TEST(GgufHostile, HugeDims) {
    struct {
        int64_t      ne0, ne1;
        const char * says;
    } cases[] = {
        {int64_t{1} << 62, 4, "has more than 2^63-1 elements"},
        {int64_t{1} << 61, 5, "has more than 2^63-1 elements"},
        {INT64_MAX, INT64_MAX, "has more than 2^63-1 elements"},
        {int64_t{1} << 61, 2, "shape [2305843009213693952, 2] of type f32 has more than 2^63-1 bytes"},
        {int64_t{1} << 62, 0, "of type f32 has more than 2^63-1 bytes"},  // empty, but nb[1] overflows
    };
    for (const auto & c : cases) {
        bytes f = tiny_file();
        f.patch<int64_t>(f.at("a.ne"), c.ne0);
        f.patch<int64_t>(f.at("a.ne") + 8, c.ne1);
        REFUSED(f.data(), c.says, f.at("a.ne"));
    }
    bytes f = tiny_file();
    f.patch<int64_t>(f.at("b.ne"), 32 * int64_t{280000000000000000});  // elements fit, 34-byte blocks do not
    f.patch<int64_t>(f.at("b.ne") + 8, 1);
    REFUSED(f.data(), "of type q8_0 has more than 2^63-1 bytes", f.at("b.ne"));
    f = tiny_file();
    f.patch<int64_t>(f.at("a.ne"), int64_t{1} << 40);  // 3 rows of 4 TiB: representable, not in the file
    REFUSED(f.data(), "data of tensor 'a' (13194139533312 bytes at data offset 0) lies outside the file",
            f.at("a.name"));
}

TEST(GgufHostile, DuplicateTensorNames) {
    bytes f = tiny_file();
    f.data()[f.at("b.name") + 8] = 'a';
    REFUSED(f.data(), "duplicate tensor name 'a' (first as tensor 0)", f.at("b.name"));
}

TEST(GgufHostile, TensorNames) {
    const bytes ok = one_tensor(std::string(64, 'n'), 1, {8}, 0, 0, 32);
    gk_gguf_free(accepted(ok));
    const bytes f = one_tensor(std::string(65, 'n'), 1, {8}, 0, 0, 32);
    REFUSED(f.data(), "is 65 bytes, more than 64", f.at("name"));
    const bytes g = one_tensor(std::string("a\0b", 3), 1, {8}, 0, 0, 32);
    REFUSED(g.data(), "tensor name 'a\\x00b' contains a NUL byte", g.at("name"));
}

TEST(GgufHostile, DataOutsideTheFile) {
    bytes f = tiny_file();
    f.patch<uint64_t>(f.at("a.offset"), uint64_t{1} << 40);
    REFUSED(f.data(), "data of tensor 'a' (48 bytes at data offset 1099511627776) lies outside the file",
            f.at("a.name"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("b.offset"), 128);  // 68 bytes at 128: 36 past the end
    REFUSED(f.data(), "data of tensor 'b' (68 bytes at data offset 128) lies outside the file", f.at("b.name"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("b.offset"), ~uint64_t{31});  // offset + size would wrap
    REFUSED(f.data(), "lies outside the file", f.at("b.name"));
    f = tiny_file();
    f.patch<uint64_t>(f.at("a.offset"), 4);
    REFUSED(f.data(), "tensor 'a' offset 4 is not a multiple of the alignment 32", f.at("a.offset"));
    // the data section itself starts past the end: an empty tensor, no padding written
    const bytes g = one_tensor("e", 1, {0}, 0, 0, 0);
    std::vector<uint8_t> cut(g.data().begin(), g.data().begin() + static_cast<long>(g.at("meta_end")));
    REFUSED(cut, "the data section starts at byte 64, past the end of the file (" +
                      std::to_string(g.at("meta_end")) + " bytes)",
            g.at("meta_end"));
}

} // namespace
