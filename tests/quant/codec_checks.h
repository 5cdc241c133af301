// codec_checks.h - format-independent checks of a block codec through the codec table
// (codec.h), shared by the per-family tests (test-legacy, test-low-bit).
//
// Each family test names its types and, per type, "the reference choice": the decoded
// values ggml's reference encoder's scale gives a block, with every level rounded to the
// nearest for that f16 scale. Our encoders promise never to be worse than that, block by
// block, with or without an imatrix (scale_search.h).
#pragma once

#include "quant/codec.h"
#include "quant/fp16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace gk::test {

/// Decoded values of the reference choice for one block of n values.
using reference_choice = std::function<void(const float * x, float * y, int n)>;

struct codec_case {
    gk_type          type;
    reference_choice reference;
};

inline std::string case_name(const testing::TestParamInfo<codec_case> & info) {
    return gk_type_name(info.param.type);
}

inline int64_t block_of(gk_type t) { return gk_blck_size(t); }

/// Row length used by the checks: 4 blocks of the largest block size (256).
inline constexpr int64_t k_row = 1024;

/// Gaussian rows with a sprinkle of outliers (x8), seeded.
inline std::vector<float> gaussian_rows(int64_t nrows, uint64_t seed, float scale = 1.0f) {
    std::mt19937_64                 g(seed);
    std::normal_distribution<float> nd;
    std::uniform_real_distribution<float> u;
    std::vector<float>              x(static_cast<size_t>(nrows * k_row));
    for (float & v : x) {
        v = nd(g) * scale * (u(g) < 0.01f ? 8.0f : 1.0f);
    }
    return x;
}

/// Importance weights that matter a lot on some columns and little on others.
inline std::vector<float> skewed_imatrix() {
    std::vector<float> w(k_row);
    for (int64_t j = 0; j < k_row; ++j) {
        w[j] = (j % 3 == 0) ? 50.0f : 0.05f;
    }
    return w;
}

/// Encodes rows into a buffer prefilled with `fill`, through the codec table.
inline std::vector<uint8_t> encode(gk_type t, const std::vector<float> & x, const float * imatrix,
                                   uint8_t fill = 0xA5) {
    const int64_t        nrows = static_cast<int64_t>(x.size()) / k_row;
    std::vector<uint8_t> q(gk_row_size(t, k_row) * static_cast<size_t>(nrows), fill);
    EXPECT_EQ(quant::quantize_rows(t, x.data(), q.data(), nrows, k_row, imatrix), q.size());
    return q;
}

/// Decodes rows into a buffer prefilled with NaN, through the codec table.
inline std::vector<float> decode(gk_type t, const std::vector<uint8_t> & q) {
    const int64_t      nrows = static_cast<int64_t>(q.size() / gk_row_size(t, k_row));
    std::vector<float> y(static_cast<size_t>(nrows * k_row), std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(quant::dequantize_rows(t, q.data(), y.data(), nrows, k_row));
    return y;
}

/// Sum over [begin, end) of w_j (x - y)^2 (w = 1 without weights), in double.
inline double sq_error(const float * x, const float * y, int64_t begin, int64_t end, const float * w) {
    double e = 0.0;
    for (int64_t i = begin; i < end; ++i) {
        const double d = static_cast<double>(x[i]) - static_cast<double>(y[i]);
        e += (w ? w[i % k_row] : 1.0) * d * d;
    }
    return e;
}

class CodecChecks : public testing::TestWithParam<codec_case> {};

/// Block by block, no worse than the reference choice (plain and imatrix-weighted error).
inline void expect_never_worse(const codec_case & c, const std::vector<float> & x, const float * imatrix) {
    const std::vector<float> y  = decode(c.type, encode(c.type, x, imatrix));
    const int64_t            qk = block_of(c.type);
    std::vector<float>       ref(x.size());
    for (size_t b = 0; b < x.size(); b += static_cast<size_t>(qk)) {
        c.reference(x.data() + b, ref.data() + b, static_cast<int>(qk));
    }
    for (int64_t b = 0; b < static_cast<int64_t>(x.size()); b += qk) {
        const double ours   = sq_error(x.data(), y.data(), b, b + qk, imatrix);
        const double theirs = sq_error(x.data(), ref.data(), b, b + qk, imatrix);
        ASSERT_TRUE(std::isfinite(ours)) << "block " << b / qk;
        if (std::isfinite(theirs)) {  // ggml's scale overflows f16 past 65504 * levels
            ASSERT_LE(ours, theirs * (1.0 + 1e-6) + 1e-30) << "block " << b / qk << (imatrix ? " (imatrix)" : "");
        }
    }
}

TEST_P(CodecChecks, NeverWorseThanReferenceChoice) {
    const auto x = gaussian_rows(8, 1);
    expect_never_worse(GetParam(), x, nullptr);
    const auto w = skewed_imatrix();
    expect_never_worse(GetParam(), x, w.data());
}

TEST_P(CodecChecks, NeverWorseAtExtremeMagnitudes) {
    // f16 subnormal scales, the top of the f16 range, and far past it (scales saturate)
    for (const float scale : {1e-30f, 1e-7f, 1e-5f, 1e3f, 6e4f, 1e6f, 1e30f}) {
        const auto x = gaussian_rows(1, 2, scale);
        expect_never_worse(GetParam(), x, nullptr);
        const std::vector<float> y = decode(GetParam().type, encode(GetParam().type, x, nullptr));
        for (size_t i = 0; i < y.size(); ++i) {
            ASSERT_TRUE(std::isfinite(y[i])) << "scale " << scale << " element " << i;
        }
    }
}

TEST_P(CodecChecks, ZeroRowsDecodeToZero) {
    const std::vector<float> x(2 * k_row, 0.0f);
    for (const float v : decode(GetParam().type, encode(GetParam().type, x, nullptr))) {
        ASSERT_EQ(v, 0.0f);
    }
}

TEST_P(CodecChecks, EveryOutputWritten) {
    const gk_type t = GetParam().type;
    const auto    x = gaussian_rows(2, 3);
    const auto    w = skewed_imatrix();
    for (const float * im : {static_cast<const float *>(nullptr), w.data()}) {
        // every byte: two different prefills give the same encoding
        const auto q = encode(t, x, im, 0x00);
        EXPECT_EQ(q, encode(t, x, im, 0xFF));
        // every element: no NaN of the prefill survives decoding
        for (const float v : decode(t, q)) {
            ASSERT_FALSE(std::isnan(v));
        }
    }
}

TEST_P(CodecChecks, ImatrixChangesTheWeightedError) {
    const gk_type t = GetParam().type;
    EXPECT_TRUE(quant::get_type_traits(t)->takes_imatrix);
    const auto x     = gaussian_rows(8, 4);
    const auto w     = skewed_imatrix();
    const auto plain = decode(t, encode(t, x, nullptr));
    const auto imat  = decode(t, encode(t, x, w.data()));
    const auto n     = static_cast<int64_t>(x.size());
    EXPECT_LT(sq_error(x.data(), imat.data(), 0, n, w.data()), sq_error(x.data(), plain.data(), 0, n, w.data()));
}

TEST_P(CodecChecks, NonFiniteInputsSaturate) {
    const gk_type t  = GetParam().type;
    const int64_t qk = block_of(t);
    auto          x  = gaussian_rows(1, 5);
    const float   inf = std::numeric_limits<float>::infinity();
    x[1]              = inf;
    x[qk + 2]         = -inf;
    x[2 * qk + 3]     = std::numeric_limits<float>::quiet_NaN();
    const auto y      = decode(t, encode(t, x, nullptr));
    for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_TRUE(std::isfinite(y[i])) << "element " << i;
    }
    // +Inf takes the largest value of its block, -Inf the smallest
    EXPECT_EQ(y[1], *std::max_element(y.begin(), y.begin() + qk));
    EXPECT_EQ(y[qk + 2], *std::min_element(y.begin() + qk, y.begin() + 2 * qk));
}

TEST_P(CodecChecks, MisalignedBuffersGiveTheSameBits) {
    const gk_type t        = GetParam().type;
    const auto    x        = gaussian_rows(1, 6);
    const auto    aligned  = encode(t, x, nullptr);
    const size_t  row_size = aligned.size();
    // encode into and decode from an odd address
    std::vector<uint8_t> buf(row_size + 1);
    ASSERT_EQ(quant::quantize_rows(t, x.data(), buf.data() + 1, 1, k_row, nullptr), row_size);
    EXPECT_EQ(0, std::memcmp(buf.data() + 1, aligned.data(), row_size));
    std::vector<float> y(k_row);
    ASSERT_TRUE(quant::dequantize_rows(t, buf.data() + 1, y.data(), 1, k_row));
    const auto want = decode(t, aligned);
    EXPECT_EQ(0, std::memcmp(y.data(), want.data(), y.size() * sizeof(float)));
}

// --- reference choices: the scale ggml's reference encoder picks, levels rounded to the
// --- nearest for its f16 value.

/// Levels clamp(round(x / d)) in [lo, hi] times d, with d the f16 value of `scale`.
inline void symmetric_choice(const float * x, float * y, int n, float scale, int lo, int hi) {
    const float d = fp16_to_fp32(fp32_to_fp16(scale));
    for (int j = 0; j < n; ++j) {
        const float l = d != 0.0f ? std::clamp(std::nearbyint(x[j] / d), static_cast<float>(lo), static_cast<float>(hi))
                                  : 0.0f;
        y[j] = l * d;
    }
}

/// The finite value of largest magnitude (sign kept).
inline float max_abs_value(const float * x, int n) {
    float m = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (std::fabs(x[j]) > std::fabs(m)) {
            m = x[j];
        }
    }
    return m;
}

} // namespace gk::test
