// test-fp4.cpp - the 4-bit codebook formats (MXFP4, NVFP4, IQ4_NL, IQ4_XS): value tables
// swept against their definitions, encode quality and edge cases. Bit-exact decoding
// against an independent reference is tests/quant/decode_vs_gguf_py.py.
#include "quant/codec.h"
#include "quant/fp4.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace gk::quant;

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// ---- value tables against their definitions ------------------------------------------

// E2M1 (OCP MX spec): bit 3 sign, bits 2..1 exponent (bias 1), bit 0 mantissa;
// exponent 0 is subnormal (m * 0.5).
double e2m1_definition(int code) {
    const double sign = (code & 8) ? -1.0 : 1.0;
    const int    e    = (code >> 1) & 3;
    const int    m    = code & 1;
    return sign * (e == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, e - 1));
}

TEST(Fp4Tables, E2M1AllCodes) {
    for (int c = 0; c < 16; ++c) {
        EXPECT_EQ(static_cast<double>(k_e2m1_doubled[c]), 2.0 * e2m1_definition(c)) << "code " << c;
    }
}

TEST(Fp4Tables, E8M0AllCodes) {
    // half of the E8M0 scale 2^(e - 127), every code (0 and 1 are f32 subnormals)
    for (int e = 0; e < 256; ++e) {
        const float want = static_cast<float>(std::ldexp(1.0, e - 128));
        EXPECT_EQ(bits(e8m0_to_fp32_half(static_cast<uint8_t>(e))), bits(want)) << "code " << e;
    }
}

// ggml's ue4m3 decode, written from its description: bit 7 ignored, 4-bit exponent with
// bias 7 (0 = subnormal, m * 2^-9), 3-bit mantissa, codes 0x00 and 0x7F are zero; halved.
double ue4m3_definition(int code) {
    if (code == 0x00 || code == 0x7F) {
        return 0.0;
    }
    const int e = (code >> 3) & 15;
    const int m = code & 7;
    const double v = e == 0 ? std::ldexp(static_cast<double>(m), -9) : std::ldexp(1.0 + m / 8.0, e - 7);
    return 0.5 * v;
}

TEST(Fp4Tables, UE4M3AllCodes) {
    for (int c = 0; c < 256; ++c) {
        const auto  code = static_cast<uint8_t>(c);
        const float want = static_cast<float>(ue4m3_definition(c));
        EXPECT_EQ(static_cast<double>(want), ue4m3_definition(c)) << "not exact in f32, code " << c;
        EXPECT_EQ(bits(ue4m3_to_fp32_half(code)), bits(want)) << "function, code " << c;
        EXPECT_EQ(bits(k_ue4m3_half[code]), bits(want)) << "table, code " << c;
    }
    // The encoders rely on codes 0x00..0x7E increasing with value, 0x7E being 448.
    for (int c = 1; c <= k_ue4m3_max_code; ++c) {
        EXPECT_LT(k_ue4m3_half[c - 1], k_ue4m3_half[c]) << "code " << c;
    }
    EXPECT_EQ(k_ue4m3_half[k_ue4m3_max_code], 224.0f);
}

TEST(Fp4Tables, IQ4NLCodebookAscending) {
    for (int k = 1; k < 16; ++k) {
        EXPECT_LT(k_iq4nl_values[k - 1], k_iq4nl_values[k]);
    }
    EXPECT_EQ(k_iq4nl_values[0], -127);
    EXPECT_EQ(k_iq4nl_values[15], 113);
}

// ---- row codecs --------------------------------------------------------------------------

const gk_type k_types[] = {GK_TYPE_MXFP4, GK_TYPE_NVFP4, GK_TYPE_IQ4_NL, GK_TYPE_IQ4_XS};
constexpr int64_t k_row = 1024;  // a whole number of blocks of every type

struct codec {
    gk_type             type;
    const type_traits * tt;

    explicit codec(gk_type t) : type(t), tt(get_type_traits(t)) {}

    std::vector<uint8_t> encode(const std::vector<float> & x, const float * imatrix = nullptr,
                                uint8_t fill = 0) const {
        std::vector<uint8_t> q(gk_row_size(type, static_cast<int64_t>(x.size())), fill);
        tt->from_float(x.data(), q.data(), static_cast<int64_t>(x.size()), imatrix);
        return q;
    }
    std::vector<float> decode(const std::vector<uint8_t> & q, int64_t n) const {
        std::vector<float> y(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
        tt->to_float(q.data(), y.data(), n);
        return y;
    }
    std::vector<float> round_trip(const std::vector<float> & x, const float * imatrix = nullptr) const {
        return decode(encode(x, imatrix), static_cast<int64_t>(x.size()));
    }
};

std::vector<float> gaussian(int64_t n, uint32_t seed, double scale = 1.0) {
    std::mt19937                     rng(seed);
    std::normal_distribution<double> nd(0.0, 1.0);
    std::vector<float>               x(static_cast<size_t>(n));
    for (float & v : x) {
        v = static_cast<float>(nd(rng) * scale);
    }
    return x;
}

/// sqrt(sum w (x - y)^2 / sum w) / rms(x); w null: plain.
double rel_rmse(const std::vector<float> & x, const std::vector<float> & y, const float * w = nullptr) {
    double se = 0.0, sx = 0.0, sw = 0.0;
    for (size_t j = 0; j < x.size(); ++j) {
        const double wj = w ? w[j] : 1.0;
        se += wj * (static_cast<double>(x[j]) - y[j]) * (static_cast<double>(x[j]) - y[j]);
        sx += static_cast<double>(x[j]) * x[j];
        sw += wj;
    }
    return std::sqrt(se / sw) / std::sqrt(sx / static_cast<double>(x.size()));
}

// Relative RMSE bounds on N(0,1) rows, a little above what the encoders reach (about
// 3-10% below ggml's reference encoders, whose figures are 0.115, 0.095, 0.076, 0.077).
double gauss_bound(gk_type t) {
    switch (t) {
        case GK_TYPE_MXFP4: return 0.115;
        case GK_TYPE_NVFP4: return 0.090;
        default: return 0.076;
    }
}

TEST(Fp4Codec, Registered) {
    for (gk_type t : k_types) {
        const type_traits * tt = get_type_traits(t);
        ASSERT_NE(tt, nullptr);
        EXPECT_NE(tt->to_float, nullptr) << tt->name;
        EXPECT_NE(tt->from_float, nullptr) << tt->name;
        EXPECT_TRUE(tt->takes_imatrix) << tt->name;
    }
}

TEST(Fp4Codec, GaussianRoundTrip) {
    for (gk_type t : k_types) {
        const codec c(t);
        const auto  x = gaussian(16 * k_row, 1);
        EXPECT_LT(rel_rmse(x, c.round_trip(x)), gauss_bound(t)) << c.tt->name;
    }
}

TEST(Fp4Codec, ScaleInvariantOverTheFormatsRange) {
    // Within the range each format's scales cover, the error scales with the data.
    struct range { gk_type t; int lo, hi; };
    const range ranges[] = {{GK_TYPE_MXFP4, -100, 100}, {GK_TYPE_NVFP4, -3, 6},
                            {GK_TYPE_IQ4_NL, -4, 12}, {GK_TYPE_IQ4_XS, -4, 16}};
    for (const range & r : ranges) {
        const codec c(r.t);
        for (int p = r.lo; p <= r.hi; p += 2) {
            const auto x = gaussian(k_row, 2, std::ldexp(1.0, p));
            EXPECT_LT(rel_rmse(x, c.round_trip(x)), gauss_bound(r.t) * 1.1) << c.tt->name << " scale 2^" << p;
        }
    }
}

TEST(Fp4Codec, ImatrixLowersTheWeightedError) {
    // A few columns matter 1000 times more: the imatrix encode must serve them clearly better.
    std::vector<float> im(k_row, 1.0f);
    for (size_t j = 0; j < im.size(); j += 13) {
        im[j] = 1000.0f;
    }
    for (gk_type t : k_types) {
        const codec c(t);
        const auto  x = gaussian(k_row, 3);
        EXPECT_LT(rel_rmse(x, c.round_trip(x, im.data()), im.data()), 0.95 * rel_rmse(x, c.round_trip(x), im.data()))
            << c.tt->name;
    }
}

TEST(Fp4Codec, ZeroImatrixFallsBackToPlainError) {
    const std::vector<float> im(k_row, 0.0f);
    for (gk_type t : k_types) {
        const codec c(t);
        const auto  x = gaussian(k_row, 4);
        EXPECT_LT(rel_rmse(x, c.round_trip(x, im.data())), gauss_bound(t)) << c.tt->name;
    }
}

// Rows whose values the format stores exactly come back exactly.
std::vector<float> representable_row(gk_type t, uint32_t seed) {
    std::mt19937       rng(seed);
    std::vector<float> x(k_row);
    auto               code = [&] { return static_cast<int>(rng() % 16); };
    if (t == GK_TYPE_MXFP4 || t == GK_TYPE_NVFP4) {
        const int group = t == GK_TYPE_MXFP4 ? QK_MXFP4 : QK_NVFP4_SUB;
        for (size_t g = 0; g < x.size(); g += group) {
            const float half = t == GK_TYPE_MXFP4 ? std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20)
                                                  : k_ue4m3_half[1 + rng() % k_ue4m3_max_code];
            for (int j = 0; j < group; ++j) {
                x[g + j] = static_cast<float>(k_e2m1_doubled[j == 0 ? 7 : code()]) * half;  // top code present
            }
        }
    } else {
        const int   super = t == GK_TYPE_IQ4_NL ? QK4_NL : QK_IQ4_XS;
        for (size_t s = 0; s < x.size(); s += super) {
            const float d = std::ldexp(1.0f, static_cast<int>(rng() % 10) - 12);
            for (int ib = 0; ib < super / 32; ++ib) {
                // sub-block scales d*l with l in [-32, 31], the first at -32 (IQ4_XS's range);
                // each sub-block holds codebook entry 0 so that its extreme is at an end
                const int l = super == QK4_NL ? 1 : (ib == 0 ? -32 : static_cast<int>(rng() % 64) - 32);
                for (int j = 0; j < 32; ++j) {
                    x[s + 32 * ib + j] = d * static_cast<float>(l) * static_cast<float>(k_iq4nl_values[j == 0 ? 0 : code()]);
                }
            }
        }
    }
    return x;
}

TEST(Fp4Codec, RepresentableRowsAreExact) {
    for (gk_type t : k_types) {
        const codec c(t);
        const auto  x = representable_row(t, 5);
        const auto  y = c.round_trip(x);
        for (size_t j = 0; j < x.size(); ++j) {
            ASSERT_EQ(x[j], y[j]) << c.tt->name << " element " << j;
        }
    }
}

TEST(Fp4Codec, ZeroRows) {
    for (gk_type t : k_types) {
        const codec              c(t);
        const std::vector<float> x(k_row, 0.0f);
        for (const float * im : {static_cast<const float *>(nullptr), x.data()}) {  // zero imatrix too
            for (float v : c.round_trip(x, im)) {
                ASSERT_EQ(v, 0.0f) << c.tt->name;
            }
        }
    }
}

TEST(Fp4Codec, OutputsFullyWritten) {
    for (gk_type t : k_types) {
        const codec c(t);
        const auto  x = gaussian(k_row, 6);
        // every byte of the encoding is written: 0x00- and 0xFF-prefilled agree
        const auto q0 = c.encode(x, nullptr, 0x00);
        EXPECT_EQ(q0, c.encode(x, nullptr, 0xFF)) << c.tt->name;
        // every decoded element is written (decode() prefills NaN; finite data decodes finite)
        for (float v : c.decode(q0, k_row)) {
            ASSERT_TRUE(std::isfinite(v)) << c.tt->name;
        }
    }
}

TEST(Fp4Codec, ExtremeMagnitudes) {
    const float big  = std::numeric_limits<float>::max();
    const float tiny = std::numeric_limits<float>::denorm_min();
    const float inf  = std::numeric_limits<float>::infinity();
    const float nan  = std::numeric_limits<float>::quiet_NaN();
    for (gk_type t : k_types) {
        const codec c(t);
        // finite data: finite output, the sign kept on the largest elements
        for (const float v : {big, -big, 1e30f, 1e-30f, tiny, -tiny}) {
            auto x = gaussian(k_row, 7);
            for (size_t j = 0; j < x.size(); j += 5) {
                x[j] = v;
            }
            const auto y = c.round_trip(x);
            for (size_t j = 0; j < x.size(); ++j) {
                ASSERT_TRUE(std::isfinite(y[j])) << c.tt->name << " with " << v << " at " << j;
            }
            if (std::fabs(v) >= 1e30f) {
                EXPECT_GT(y[0] * v, 0.0f) << c.tt->name << " with " << v;
            }
        }
        // non-finite data: no crash, and the same bytes every time
        for (const float v : {inf, -inf, nan}) {
            auto x = gaussian(k_row, 8);
            for (size_t j = 0; j < x.size(); j += 7) {
                x[j] = v;
            }
            EXPECT_EQ(c.encode(x, nullptr, 0x00), c.encode(x, nullptr, 0xFF)) << c.tt->name << " with " << v;
        }
    }
}

TEST(Fp4Codec, DecodeIsThePublishedFloatExpression) {
    // One hand-built block per type, values worked out from the layout in fp4.h.
    {   // MXFP4: e = 128 -> half-scale 1; byte 0 = codes 7 (element 0) and 15 (element 16)
        block_mxfp4 b{};
        b.e     = 128;
        b.qs[0] = 0xF7;
        b.qs[1] = 0x09;  // element 1: code 9 (-0.5 * 2 = -1), element 17: code 0
        float y[QK_MXFP4];
        dequantize_row_mxfp4(&b, y, QK_MXFP4);
        EXPECT_EQ(y[0], 12.0f);
        EXPECT_EQ(y[16], -12.0f);
        EXPECT_EQ(y[1], -1.0f);
        EXPECT_EQ(y[17], 0.0f);
    }
    {   // NVFP4: group 2 (elements 32..47) at scale code 0x38 (1.0, half 0.5); its byte 0
        // holds elements 32 (low nibble) and 40 (high nibble)
        block_nvfp4 b{};
        b.d[2]      = 0x38;
        b.qs[2 * 8] = 0x7D;  // element 32: code 13 (-6 * 0.5 = -3), element 40: code 7 (12 * 0.5 = 6)
        float y[QK_NVFP4];
        dequantize_row_nvfp4(&b, y, QK_NVFP4);
        EXPECT_EQ(y[32], -3.0f);
        EXPECT_EQ(y[40], 6.0f);
        EXPECT_EQ(y[33], 0.0f);
    }
    {   // IQ4_XS: d = 1, sub-block 3 scale code 0b10'0101 = 37 -> 5; element 96 index 15
        block_iq4_xs b{};
        b.d           = gk::fp32_to_fp16(1.0f);
        b.scales_l[1] = 0x50;  // sub-block 3 is the high nibble of byte 1
        b.scales_h    = static_cast<uint16_t>(2u << 6);
        b.qs[3 * 16]  = 0x0F;
        float y[QK_IQ4_XS];
        dequantize_row_iq4_xs(&b, y, QK_IQ4_XS);
        EXPECT_EQ(y[96], 5.0f * 113.0f);
        EXPECT_EQ(y[96 + 16], 5.0f * -127.0f);
        EXPECT_EQ(y[0], -32.0f * -127.0f);  // every other sub-block: code 0 -> -32
    }
}

} // namespace
