// test-low-bit.cpp - q1_0, q2_0, tq1_0, tq2_0 (src/quant/low_bit.h): hand-built blocks
// against the published layout, exact rows, encode quality and edge cases
// (codec_checks.h). Bit-exact decoding of random blocks against an independent reference
// is tests/quant/decode_vs_gguf_py.py.
#include "codec_checks.h"
#include "quant/low_bit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace gk::quant;
using gk::fp16_to_fp32;
using gk::fp32_to_fp16;
using gk::test::codec_case;
using gk::test::CodecChecks;
using gk::test::max_abs_value;
using gk::test::symmetric_choice;

/// ggml's q1_0 choice: d = mean |x|, the sign of each x (x >= 0 -> +d).
void sign_choice(const float * x, float * y, int n) {
    float s = 0.0f;
    for (int j = 0; j < n; ++j) {
        s += std::fabs(x[j]);
    }
    const float d = fp16_to_fp32(fp32_to_fp16(s / static_cast<float>(n)));
    for (int j = 0; j < n; ++j) {
        y[j] = x[j] >= 0.0f ? d : -d;
    }
}

/// ggml's choice for q2_0 (levels -1..2) and the ternary formats: d = max |x|.
template <int Hi>
void amax_choice(const float * x, float * y, int n) {
    symmetric_choice(x, y, n, std::fabs(max_abs_value(x, n)), -1, Hi);
}

INSTANTIATE_TEST_SUITE_P(LowBit, CodecChecks,
                         testing::Values(codec_case{GK_TYPE_Q1_0, sign_choice}, codec_case{GK_TYPE_Q2_0, amax_choice<2>},
                                         codec_case{GK_TYPE_TQ1_0, amax_choice<1>},
                                         codec_case{GK_TYPE_TQ2_0, amax_choice<1>}),
                         gk::test::case_name);

// ---- the published layouts, one hand-built block each ---------------------------------

TEST(LowBitLayout, Q1_0) {
    block_q1_0 b;
    b.d = fp32_to_fp16(1.5f);
    for (int i = 0; i < 16; ++i) {
        b.qs[i] = static_cast<uint8_t>(0xA5 ^ i);
    }
    float y[128];
    dequantize_row_q1_0(&b, y, 128);
    for (int j = 0; j < 128; ++j) {
        const bool bit = (b.qs[j / 8] >> (j % 8)) & 1;
        EXPECT_EQ(y[j], bit ? 1.5f : -1.5f) << j;
    }
}

TEST(LowBitLayout, Q2_0) {
    block_q2_0 b;
    b.d = fp32_to_fp16(0.5f);
    for (int i = 0; i < 16; ++i) {
        b.qs[i] = 0xE4;  // elements 4i..4i+3 hold quants 0, 1, 2, 3
    }
    float y[64];
    dequantize_row_q2_0(&b, y, 64);
    for (int j = 0; j < 64; ++j) {
        EXPECT_EQ(y[j], static_cast<float>(j % 4 - 1) * 0.5f) << j;
    }
}

TEST(LowBitLayout, TQ2_0) {
    block_tq2_0 b;
    b.d = fp32_to_fp16(0.25f);
    for (int i = 0; i < 64; ++i) {
        b.qs[i] = static_cast<uint8_t>(i * 37 + 11);
    }
    float y[256];
    dequantize_row_tq2_0(&b, y, 256);
    // element 128c + 32l + m: bits 2l of qs[32c + m]
    for (int c = 0; c < 2; ++c) {
        for (int l = 0; l < 4; ++l) {
            for (int m = 0; m < 32; ++m) {
                const int q = (b.qs[32 * c + m] >> (2 * l)) & 3;
                EXPECT_EQ(y[128 * c + 32 * l + m], static_cast<float>(q - 1) * 0.25f);
            }
        }
    }
}

TEST(LowBitLayout, TQ1_0) {
    // Bytes holding known digits: byte value ceil(v * 256 / 243) for v = sum t_n 3^(4-n).
    block_tq1_0 b;
    b.d = fp32_to_fp16(2.0f);
    auto digits = [](int v, int n) {  // digit n (0 = most significant) of v in base 3
        for (int k = n; k < 4; ++k) {
            v /= 3;
        }
        return v % 3;
    };
    std::vector<int> value_of_byte(52);
    const auto       byte_of = [&](int i) {
        const int v      = (i * 47 + 5) % 243;
        value_of_byte[i] = i < 48 ? v : v - v % 3;  // qh bytes: 4 digits, the last 0
        return static_cast<uint8_t>((value_of_byte[i] * 256 + 242) / 243);
    };
    // two loops, qs then qh (one loop over both made GCC 12 warn of an index past qs)
    for (int i = 0; i < 48; ++i) {
        b.qs[i] = byte_of(i);
    }
    for (int i = 48; i < 52; ++i) {
        b.qh[i - 48] = byte_of(i);
    }
    float y[256];
    dequantize_row_tq1_0(&b, y, 256);
    for (int j = 0; j < 256; ++j) {
        int byte, n;
        if (j < 160) {
            byte = j % 32, n = j / 32;
        } else if (j < 240) {
            byte = 32 + (j - 160) % 16, n = (j - 160) / 16;
        } else {
            byte = 48 + (j - 240) % 4, n = (j - 240) / 4;
        }
        EXPECT_EQ(y[j], static_cast<float>(digits(value_of_byte[byte], n) - 1) * 2.0f) << "element " << j;
    }
}

// ---- rows the format holds exactly come back exactly -----------------------------------

TEST(LowBitEncode, ExactRowsRoundTrip) {
    struct exact {
        gk_type t;
        int     lo, hi;
    };
    std::mt19937_64 g(31);
    for (const exact & e : {exact{GK_TYPE_Q2_0, -1, 2}, exact{GK_TYPE_TQ1_0, -1, 1}, exact{GK_TYPE_TQ2_0, -1, 1}}) {
        std::uniform_int_distribution<int> u(e.lo, e.hi);
        std::vector<float>                 x(gk::test::k_row);
        for (float & v : x) {
            v = static_cast<float>(u(g)) * 0.375f;
        }
        const auto y = gk::test::decode(e.t, gk::test::encode(e.t, x, nullptr));
        EXPECT_EQ(x, y) << gk_type_name(e.t);
    }
    std::vector<float> x(gk::test::k_row);
    for (size_t j = 0; j < x.size(); ++j) {
        x[j] = (j * 7 % 5 < 2) ? -0.75f : 0.75f;
    }
    EXPECT_EQ(x, gk::test::decode(GK_TYPE_Q1_0, gk::test::encode(GK_TYPE_Q1_0, x, nullptr)));
}

TEST(LowBitEncode, TernaryFormatsStayTernary) {
    // tq2_0 can store a fourth level (+2); the encoder never uses it.
    const auto x = gk::test::gaussian_rows(4, 32);
    const auto q = gk::test::encode(GK_TYPE_TQ2_0, x, nullptr);
    for (size_t b = 0; b < q.size(); b += sizeof(block_tq2_0)) {
        for (size_t i = 0; i < QK_K / 4; ++i) {
            for (int l = 0; l < 4; ++l) {
                ASSERT_NE((q[b + i] >> (2 * l)) & 3, 3) << "block " << b / sizeof(block_tq2_0);
            }
        }
    }
    // and tq1_0 and tq2_0 choose the same values
    EXPECT_EQ(gk::test::decode(GK_TYPE_TQ2_0, q), gk::test::decode(GK_TYPE_TQ1_0, gk::test::encode(GK_TYPE_TQ1_0, x, nullptr)));
}

} // namespace
