// test-plain.cpp - the one-element types through the codec table (src/quant/plain.cpp):
// f32 copies bits, f64 and the integer types round as documented there. f16 and bf16
// are test-fp16; decoding of random bytes against numpy is decode_vs_gguf_py.py.
#include "quant/codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using gk::quant::dequantize_rows;
using gk::quant::quantize_rows;

template <class T>
std::vector<T> encode_as(gk_type t, const std::vector<float> & x) {
    std::vector<T> out(x.size());
    EXPECT_EQ(quantize_rows(t, x.data(), out.data(), 1, static_cast<int64_t>(x.size()), nullptr),
              x.size() * sizeof(T));
    return out;
}

template <class T>
std::vector<float> decode_from(gk_type t, const std::vector<T> & q) {
    std::vector<float> y(q.size(), std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(dequantize_rows(t, q.data(), y.data(), 1, static_cast<int64_t>(q.size())));
    return y;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Plain, F32KeepsEveryBit) {
    const std::vector<float> x = {0.0f, -0.0f, 1.5f, kInf, -kInf, std::bit_cast<float>(0x7FA12345u),
                                  std::numeric_limits<float>::denorm_min()};
    const auto q = encode_as<float>(GK_TYPE_F32, x);
    const auto y = decode_from(GK_TYPE_F32, q);
    EXPECT_EQ(0, std::memcmp(x.data(), y.data(), x.size() * sizeof(float)));
}

TEST(Plain, F64WidensExactlyAndRoundsToNearestBack) {
    const std::vector<float> x = {0.1f, -3.0f, kInf, 1e-45f};
    const auto q = encode_as<double>(GK_TYPE_F64, x);
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(q[i], static_cast<double>(x[i]));
    }
    // f64 -> f32: nearest, ties to even; out of range -> Inf; NaN stays NaN
    const std::vector<double> d = {1.0 + 0x1p-24, 1.0 + 0x1.8p-23, 1.0 + 0x1p-24 + 0x1p-40, 1e300, -1e300, 1e-300,
                                   std::nan("")};
    const auto y = decode_from(GK_TYPE_F64, d);
    EXPECT_EQ(y[0], 1.0f);                       // tie: to even
    EXPECT_EQ(y[1], 1.0f + 0x1p-22f);            // tie: to even (up)
    EXPECT_EQ(y[2], 1.0f + 0x1p-23f);            // above the tie
    EXPECT_EQ(y[3], kInf);
    EXPECT_EQ(y[4], -kInf);
    EXPECT_EQ(y[5], 0.0f);
    EXPECT_TRUE(std::isnan(y[6]));
}

TEST(Plain, IntegersRoundHalfAwayAndSaturate) {
    const std::vector<float> x = {2.5f, -2.5f, 0.49999997f, 126.6f, 127.5f, -128.4f, -129.0f, 1e10f, -1e10f,
                                  kInf, -kInf, kNaN};
    const std::vector<int8_t> want8 = {3, -3, 0, 127, 127, -128, -128, 127, -128, 127, -128, 0};
    EXPECT_EQ(encode_as<int8_t>(GK_TYPE_I8, x), want8);

    const std::vector<float>   x16     = {32767.4f, 32767.5f, -32768.6f, 40000.0f, kNaN, -0.5f};
    const std::vector<int16_t> want16  = {32767, 32767, -32768, 32767, 0, -1};
    EXPECT_EQ(encode_as<int16_t>(GK_TYPE_I16, x16), want16);

    // 2^31 is the first f32 past the i32 range; the largest f32 below it is 2^31 - 128
    const std::vector<float>   x32    = {0x1p31f, -0x1p31f, 2147483520.0f, -3e9f, kInf, 1.5f};
    const std::vector<int32_t> want32 = {INT32_MAX, INT32_MIN, 2147483520, INT32_MIN, INT32_MAX, 2};
    EXPECT_EQ(encode_as<int32_t>(GK_TYPE_I32, x32), want32);

    const std::vector<float>   x64    = {0x1p63f, -0x1p63f, 0x1p62f, -kInf, kNaN};
    const std::vector<int64_t> want64 = {INT64_MAX, INT64_MIN, int64_t{1} << 62, INT64_MIN, 0};
    EXPECT_EQ(encode_as<int64_t>(GK_TYPE_I64, x64), want64);
}

TEST(Plain, IntegersDecodeToTheNearestF32) {
    const auto y32 = decode_from(GK_TYPE_I32, std::vector<int32_t>{16777217, 16777219, INT32_MIN, INT32_MAX, -7});
    EXPECT_EQ(y32, (std::vector<float>{16777216.0f, 16777220.0f, -0x1p31f, 0x1p31f, -7.0f}));
    const auto y64 = decode_from(GK_TYPE_I64, std::vector<int64_t>{(int64_t{1} << 53) + 1, INT64_MAX, INT64_MIN});
    EXPECT_EQ(y64, (std::vector<float>{0x1p53f, 0x1p63f, -0x1p63f}));
    const auto y8 = decode_from(GK_TYPE_I8, std::vector<int8_t>{-128, 127, 0});
    EXPECT_EQ(y8, (std::vector<float>{-128.0f, 127.0f, 0.0f}));
    const auto y16 = decode_from(GK_TYPE_I16, std::vector<int16_t>{-32768, 32767});
    EXPECT_EQ(y16, (std::vector<float>{-32768.0f, 32767.0f}));
}

TEST(Plain, MisalignedBuffers) {
    // elements are read and written bytewise: any address works
    std::vector<uint8_t> buf(8 * 3 + 1);
    const std::vector<float> x = {1.0f, -2.0f, 3.5f};
    ASSERT_EQ(quantize_rows(GK_TYPE_F64, x.data(), buf.data() + 1, 1, 3, nullptr), 24u);
    std::vector<float> y(3);
    ASSERT_TRUE(dequantize_rows(GK_TYPE_F64, buf.data() + 1, y.data(), 1, 3));
    EXPECT_EQ(x, y);
}

} // namespace
