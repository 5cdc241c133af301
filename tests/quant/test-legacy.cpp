// test-legacy.cpp - q4_0, q4_1, q5_0, q5_1, q8_0, q8_1 (src/quant/legacy.h): hand-built
// blocks against the published layout, exact rows, encode quality and edge cases
// (codec_checks.h), and the q8 activation quantizers. Bit-exact decoding of random
// blocks against an independent reference is tests/quant/decode_vs_gguf_py.py.
#include "codec_checks.h"
#include "quant/legacy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <random>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

using namespace gk::quant;
using gk::fp16_t;
using gk::fp16_to_fp32;
using gk::fp32_to_fp16;
using gk::test::codec_case;
using gk::test::CodecChecks;
using gk::test::max_abs_value;
using gk::test::symmetric_choice;

/// ggml's q4_1/q5_1 choice: m = min, d = (max - min) / nmax, levels rounded to nearest.
void affine_choice(const float * x, float * y, int n, int nmax) {
    const float lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
    const float d  = fp16_to_fp32(fp32_to_fp16((hi - lo) / static_cast<float>(nmax)));
    const float m  = fp16_to_fp32(fp32_to_fp16(lo));
    for (int j = 0; j < n; ++j) {
        const float l    = d != 0.0f ? std::clamp(std::nearbyint((x[j] - m) / d), 0.0f, static_cast<float>(nmax)) : 0.0f;
        const float prod = l * d;
        y[j]             = prod + m;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Legacy, CodecChecks,
    testing::Values(
        codec_case{GK_TYPE_Q4_0, [](const float * x, float * y, int n) { symmetric_choice(x, y, n, max_abs_value(x, n) / -8.0f, -8, 7); }},
        codec_case{GK_TYPE_Q5_0, [](const float * x, float * y, int n) { symmetric_choice(x, y, n, max_abs_value(x, n) / -16.0f, -16, 15); }},
        codec_case{GK_TYPE_Q8_0, [](const float * x, float * y, int n) { symmetric_choice(x, y, n, std::fabs(max_abs_value(x, n)) / 127.0f, -127, 127); }},
        codec_case{GK_TYPE_Q4_1, [](const float * x, float * y, int n) { affine_choice(x, y, n, 15); }},
        codec_case{GK_TYPE_Q5_1, [](const float * x, float * y, int n) { affine_choice(x, y, n, 31); }}),
    gk::test::case_name);

// ---- the published layouts, one hand-built block each ---------------------------------

TEST(LegacyLayout, Q4_0) {
    block_q4_0 b;
    b.d = fp32_to_fp16(0.5f);
    for (int j = 0; j < 16; ++j) {
        b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);  // element j: j, element j+16: 15-j
    }
    float y[32];
    dequantize_row_q4_0(&b, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], (j - 8) * 0.5f) << j;
        EXPECT_EQ(y[j + 16], (7 - j) * 0.5f) << j;
    }
}

TEST(LegacyLayout, Q4_1) {
    block_q4_1 b;
    b.d = fp32_to_fp16(0.25f);
    b.m = fp32_to_fp16(-3.0f);
    for (int j = 0; j < 16; ++j) {
        b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    }
    float y[32];
    dequantize_row_q4_1(&b, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], j * 0.25f - 3.0f) << j;
        EXPECT_EQ(y[j + 16], (15 - j) * 0.25f - 3.0f) << j;
    }
}

/// q5 quants q_j = j (0..31): low nibbles as q4, fifth bit j of the little-endian qh.
template <class Block>
void fill_q5_ramp(Block & b) {
    for (int j = 0; j < 16; ++j) {
        b.qs[j] = static_cast<uint8_t>((j & 15) | ((j + 16) & 15) << 4);
    }
    const uint32_t qh = 0xFFFF0000u;  // elements 16..31 have bit 4 set
    std::memcpy(b.qh, &qh, 4);
}

TEST(LegacyLayout, Q5_0) {
    block_q5_0 b;
    b.d = fp32_to_fp16(2.0f);
    fill_q5_ramp(b);
    float y[32];
    dequantize_row_q5_0(&b, y, 32);
    for (int j = 0; j < 32; ++j) {
        EXPECT_EQ(y[j], (j - 16) * 2.0f) << j;
    }
}

TEST(LegacyLayout, Q5_1) {
    block_q5_1 b;
    b.d = fp32_to_fp16(0.125f);
    b.m = fp32_to_fp16(1.0f);
    fill_q5_ramp(b);
    float y[32];
    dequantize_row_q5_1(&b, y, 32);
    for (int j = 0; j < 32; ++j) {
        EXPECT_EQ(y[j], j * 0.125f + 1.0f) << j;
    }
}

TEST(LegacyLayout, Q8_0AndQ8_1) {
    block_q8_0 a;
    block_q8_1 b;
    a.d = b.d = fp32_to_fp16(0.75f);
    b.s       = fp32_to_fp16(1000.0f);  // used by dot products only
    for (int j = 0; j < 32; ++j) {
        a.qs[j] = b.qs[j] = static_cast<int8_t>(j * 8 - 128);
    }
    float ya[32], yb[32];
    dequantize_row_q8_0(&a, ya, 32);
    dequantize_row_q8_1(&b, yb, 32);
    for (int j = 0; j < 32; ++j) {
        EXPECT_EQ(ya[j], (j * 8 - 128) * 0.75f) << j;
        EXPECT_EQ(yb[j], ya[j]) << j;
    }
}

// ---- rows the format holds exactly come back exactly -----------------------------------

/// Row of blocks x = level * d (+ m), levels drawn from [lo, hi] with both ends present.
std::vector<float> exact_row(int lo, int hi, float d, float m, uint64_t seed) {
    std::mt19937_64                    g(seed);
    std::uniform_int_distribution<int> u(lo, hi);
    std::vector<float>                 x(gk::test::k_row);
    for (size_t j = 0; j < x.size(); ++j) {
        const int   l    = j % 32 == 0 ? lo : j % 32 == 1 ? hi : u(g);
        const float prod = static_cast<float>(l) * d;
        x[j]             = prod + m;
    }
    return x;
}

TEST(LegacyEncode, ExactRowsRoundTrip) {
    struct exact {
        gk_type t;
        int     lo, hi;
        float   m;
    };
    for (const exact & e : {exact{GK_TYPE_Q4_0, -8, 7, 0.0f}, exact{GK_TYPE_Q5_0, -16, 15, 0.0f},
                            exact{GK_TYPE_Q8_0, -127, 127, 0.0f}, exact{GK_TYPE_Q4_1, 0, 15, -1.5f},
                            exact{GK_TYPE_Q5_1, 0, 31, 0.25f}}) {
        const auto x = exact_row(e.lo, e.hi, 0.0625f, e.m, 11);
        const auto y = gk::test::decode(e.t, gk::test::encode(e.t, x, nullptr));
        EXPECT_EQ(x, y) << gk_type_name(e.t);
    }
}

// ---- activation quantizers --------------------------------------------------------------

/// ggml's activation quantization, written from its description: d = max|x| / 127,
/// q = round(x * (1/d)) with halves away from zero.
void expect_q8_activation(const float * x, const int8_t * qs, fp16_t d_bits, float & d_out, int & sum) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) {
        amax = std::max(amax, std::fabs(x[j]));
    }
    const float d  = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    EXPECT_EQ(d_bits, fp32_to_fp16(d));
    sum = 0;
    for (int j = 0; j < 32; ++j) {
        EXPECT_EQ(qs[j], static_cast<int8_t>(std::round(x[j] * id))) << j;
        sum += qs[j];
    }
    d_out = d;
}

TEST(LegacyActivation, Q8_0AndQ8_1MatchTheirDefinition) {
    auto x = gk::test::gaussian_rows(1, 21);
    std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero block (block 2)
    const int64_t           nb = gk::test::k_row / 32;
    std::vector<block_q8_0> a(nb);
    std::vector<block_q8_1> b(nb);
    quantize_row_q8_0(x.data(), a.data(), gk::test::k_row);
    quantize_row_q8_1(x.data(), b.data(), gk::test::k_row);
    for (int64_t i = 0; i < nb; ++i) {
        float d;
        int   sum;
        expect_q8_activation(x.data() + 32 * i, a[i].qs, a[i].d, d, sum);
        expect_q8_activation(x.data() + 32 * i, b[i].qs, b[i].d, d, sum);
        EXPECT_EQ(b[i].s, fp32_to_fp16(static_cast<float>(sum) * d)) << "block " << i;
    }
    EXPECT_EQ(a[2].d, 0u);
    EXPECT_EQ(b[2].s, 0u);
}

TEST(LegacyActivation, NonFiniteInputsAreDefined) {
    float x[32];
    for (int j = 0; j < 32; ++j) {
        x[j] = static_cast<float>(j) - 16.0f;
    }
    x[3] = std::numeric_limits<float>::quiet_NaN();
    block_q8_0 a;
    quantize_row_q8_0(x, &a, 32);
    EXPECT_EQ(a.qs[3], 0);  // NaN -> 0, and ignored by max|x|
    EXPECT_EQ(a.d, fp32_to_fp16(16.0f / 127.0f));
    EXPECT_EQ(a.qs[0], -127);
}

// The dot products' rule (ggml's x86 CPU quantize_row_q8_0 / _q8_1): id = 127 / max|x|,
// products rounded to nearest with ties to even, where the reference takes id = 1 / (max|x|
// / 127) and ties away from zero.
TEST(LegacyActivation, DotRuleIsGgmlsX86Rule) {
    float x[32];
    for (int j = 0; j < 32; ++j) {
        x[j] = static_cast<float>(j % 8) - 3.5f;  // ties: -3.5 .. 3.5 with max 127 below
    }
    x[31] = 127.0f;  // id = 1 exactly in both rules
    block_q8_0 dot, ref;
    quantize_row_q8_0_dot(x, &dot, 32);
    quantize_row_q8_0(x, &ref, 32);
    for (int j = 0; j < 31; ++j) {
        const float v = x[j];
        EXPECT_EQ(dot.qs[j], static_cast<int8_t>(std::nearbyint(v))) << "x " << v;  // ties to even
        EXPECT_EQ(ref.qs[j], static_cast<int8_t>(std::round(v))) << "x " << v;      // ties away
    }
    EXPECT_EQ(dot.d, ref.d);
    // Every element at the rule's arithmetic, over random blocks: d = f16(amax / 127),
    // q = nearbyint(x * (127 / amax)); q8_1's s from the same quants.
    const auto              r  = gk::test::gaussian_rows(1, 23);
    const int64_t           nb = gk::test::k_row / 32;
    std::vector<block_q8_0> a(nb);
    std::vector<block_q8_1> b(nb);
    quantize_row_q8_0_dot(r.data(), a.data(), gk::test::k_row);
    quantize_row_q8_1_dot(r.data(), b.data(), gk::test::k_row);
    int differ = 0;
    for (int64_t i = 0; i < nb; ++i) {
        const float * xb   = r.data() + 32 * i;
        float         amax = 0.0f;
        for (int j = 0; j < 32; ++j) {
            amax = std::max(amax, std::fabs(xb[j]));
        }
        const float id  = 127.0f / amax;
        int         sum = 0;
        block_q8_0  plain;
        quantize_row_q8_0(xb, &plain, 32);
        for (int j = 0; j < 32; ++j) {
            const auto q = static_cast<int8_t>(std::nearbyint(xb[j] * id));
            ASSERT_EQ(a[i].qs[j], q) << "block " << i << " element " << j;
            ASSERT_EQ(b[i].qs[j], q) << "block " << i << " element " << j;
            sum += q;
            differ += plain.qs[j] != q;
        }
        EXPECT_EQ(a[i].d, fp32_to_fp16(amax / 127.0f));
        EXPECT_EQ(b[i].s, fp32_to_fp16(static_cast<float>(sum) * (amax / 127.0f)));
    }
    EXPECT_LT(differ, nb * 32 / 50) << "the two rules should differ in a few quants only";
    // A NaN block falls back to the reference rule.
    x[3] = std::numeric_limits<float>::quiet_NaN();
    quantize_row_q8_0_dot(x, &dot, 32);
    quantize_row_q8_0(x, &ref, 32);
    EXPECT_EQ(0, std::memcmp(&dot, &ref, sizeof dot));
}

TEST(LegacyRegistration, Q8_1IsAnActivationFormat) {
    const auto * tt = get_type_traits(GK_TYPE_Q8_1);
    ASSERT_NE(tt, nullptr);
    EXPECT_NE(tt->to_float, nullptr);
    EXPECT_NE(tt->from_float, nullptr);
    EXPECT_FALSE(tt->takes_imatrix);
    // the table's q8_1 encoder is the activation quantizer
    const auto              x = gk::test::gaussian_rows(1, 22);
    std::vector<block_q8_1> want(gk::test::k_row / 32);
    quantize_row_q8_1(x.data(), want.data(), gk::test::k_row);
    const auto got = gk::test::encode(GK_TYPE_Q8_1, x, nullptr);
    ASSERT_EQ(got.size(), want.size() * sizeof(block_q8_1));
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size()));
}

} // namespace
