// test-k-quants - the K-quant family (q2_K..q6_K, q8_K): scale packing, encode/decode
// round trips, edge inputs, fully written outputs, q8_K's sums, the dispatch table.
// (Bit-exact decoding against an independent reference is test-decode-vs-gguf-py.)
#include "quant/codec.h"
#include "quant/k_quants.h"
#include "quant/k_quants_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace gk::quant;

constexpr int k_types[] = {GK_TYPE_Q2_K, GK_TYPE_Q3_K, GK_TYPE_Q4_K, GK_TYPE_Q5_K, GK_TYPE_Q6_K};

std::string type_name(int t) { return gk_type_name(static_cast<gk_type>(t)); }

std::vector<float> gaussian(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 g(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> x(n);
    for (float & v : x) {
        v = d(g);
    }
    return x;
}

// Encode then decode nrows rows of n through the dispatch table.
std::vector<float> round_trip(int type, const std::vector<float> & x, int64_t n, const float * imatrix = nullptr) {
    const int64_t nrows = static_cast<int64_t>(x.size()) / n;
    std::vector<uint8_t> q(gk_row_size(static_cast<gk_type>(type), n) * static_cast<size_t>(nrows));
    EXPECT_EQ(quantize_rows(type, x.data(), q.data(), nrows, n, imatrix), q.size());
    std::vector<float> y(x.size(), std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(dequantize_rows(type, q.data(), y.data(), nrows, n));
    return y;
}

double rmse(const std::vector<float> & x, const std::vector<float> & y, const float * w = nullptr, size_t n = 1) {
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double wi = w ? w[i % n] : 1.0;
        const double e = static_cast<double>(x[i]) - y[i];
        num += wi * e * e;
        den += wi;
    }
    return std::sqrt(num / den);
}

// ---- scale packing -------------------------------------------------------------------

TEST(KQuants, ScaleMinK4PackUnpackRoundTrip) {
    std::mt19937 g(1);
    for (int rep = 0; rep < 2000; ++rep) {
        uint8_t sc[8], m[8], packed[K_SCALE_SIZE];
        for (int j = 0; j < 8; ++j) {
            sc[j] = static_cast<uint8_t>(g() % 64);
            m[j] = static_cast<uint8_t>(g() % 64);
        }
        std::memset(packed, 0xA5, sizeof(packed));
        pack_scales_mins_k4(sc, m, packed);
        for (int j = 0; j < 8; ++j) {
            uint8_t s = 0xFF, mm = 0xFF;
            unpack_scale_min_k4(j, packed, s, mm);
            ASSERT_EQ(s, sc[j]) << "sub-block " << j;
            ASSERT_EQ(mm, m[j]) << "sub-block " << j;
        }
        // and back: every packed byte is determined by the values
        uint8_t again[K_SCALE_SIZE];
        std::memset(again, 0x5A, sizeof(again));
        pack_scales_mins_k4(sc, m, again);
        ASSERT_EQ(0, std::memcmp(packed, again, sizeof(packed)));
    }
}

TEST(KQuants, ScaleMinK4KnownBytes) {
    // ggml's layout: bytes 0..3 scales 0..3, bytes 4..7 mins 0..3 (low 6 bits); bytes
    // 8..11 low nibbles of scales/mins 4..7; top 2 bits of bytes 0..7 their high bits.
    uint8_t packed[K_SCALE_SIZE] = {0x41, 0x02, 0x03, 0xC4, 0x05, 0x06, 0x87, 0x08, 0x9A, 0xBC, 0xDE, 0xF1};
    uint8_t sc = 0, m = 0;
    unpack_scale_min_k4(0, packed, sc, m);
    EXPECT_EQ(sc, 1);
    EXPECT_EQ(m, 5);
    unpack_scale_min_k4(3, packed, sc, m);
    EXPECT_EQ(sc, 4);
    EXPECT_EQ(m, 8);
    unpack_scale_min_k4(4, packed, sc, m);  // low 0xA | (0x41 >> 6) << 4, high 0x9 | (0x05 >> 6) << 4
    EXPECT_EQ(sc, 0x1A);
    EXPECT_EQ(m, 0x09);
    unpack_scale_min_k4(7, packed, sc, m);  // low 0x1 | (0xC4 >> 6) << 4, high 0xF | (0x08 >> 6) << 4
    EXPECT_EQ(sc, 0x31);
    EXPECT_EQ(m, 0x0F);
    unpack_scale_min_k4(6, packed, sc, m);  // low 0xE | (0x03 >> 6) << 4, high 0xD | (0x87 >> 6) << 4
    EXPECT_EQ(sc, 0x0E);
    EXPECT_EQ(m, 0x2D);
}

TEST(KQuants, ScalesQ3KPackUnpackRoundTrip) {
    std::mt19937 g(2);
    for (int rep = 0; rep < 2000; ++rep) {
        int8_t sc[16], back[16];
        uint8_t packed[K_SCALE_SIZE];
        for (int8_t & s : sc) {
            s = static_cast<int8_t>(static_cast<int>(g() % 64) - 32);
        }
        std::memset(packed, 0xA5, sizeof(packed));
        pack_scales_q3_K(sc, packed);
        unpack_scales_q3_K(packed, back);
        for (int j = 0; j < 16; ++j) {
            ASSERT_EQ(back[j], sc[j]) << "scale " << j;
        }
    }
    // stored value = scale + 32: all-zero bytes are -32 everywhere, all-one bytes 31
    uint8_t zeros[K_SCALE_SIZE] = {}, ones[K_SCALE_SIZE];
    std::memset(ones, 0xFF, sizeof(ones));
    int8_t out[16];
    unpack_scales_q3_K(zeros, out);
    for (int8_t s : out) {
        EXPECT_EQ(s, -32);
    }
    unpack_scales_q3_K(ones, out);
    for (int8_t s : out) {
        EXPECT_EQ(s, 31);
    }
    // out-of-range inputs are clamped, never spill into neighbours
    int8_t wide[16] = {-100, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pack_scales_q3_K(wide, zeros);
    unpack_scales_q3_K(zeros, out);
    EXPECT_EQ(out[0], -32);
    EXPECT_EQ(out[1], 31);
    for (int j = 2; j < 16; ++j) {
        EXPECT_EQ(out[j], 0);
    }
}

// ---- search helpers -------------------------------------------------------------------

TEST(KQuants, RoundClamp) {
    using gk::quant::kq::round_clamp;
    EXPECT_EQ(round_clamp(0.5f, -8, 7), 0);  // ties to even
    EXPECT_EQ(round_clamp(1.5f, -8, 7), 2);
    EXPECT_EQ(round_clamp(2.5f, -8, 7), 2);
    EXPECT_EQ(round_clamp(-2.5f, -8, 7), -2);
    EXPECT_EQ(round_clamp(2.5000002f, -8, 7), 3);
    EXPECT_EQ(round_clamp(6.6f, -8, 7), 7);
    EXPECT_EQ(round_clamp(7.6f, -8, 7), 7);
    EXPECT_EQ(round_clamp(-9.0f, -8, 7), -8);
    EXPECT_EQ(round_clamp(1e30f, -8, 7), 7);
    EXPECT_EQ(round_clamp(-std::numeric_limits<float>::infinity(), -8, 7), -8);
    EXPECT_EQ(round_clamp(std::numeric_limits<float>::infinity(), -8, 7), 7);
    EXPECT_EQ(round_clamp(std::numeric_limits<float>::quiet_NaN(), -8, 7), -8);
}

TEST(KQuants, FitsRecoverExactGroups) {
    float x[32], w[32];
    int8_t q[32];
    for (int i = 0; i < 32; ++i) {
        x[i] = 0.25f * static_cast<float>(i % 16) - 1.5f;  // scale 0.25, min 1.5, all 16 levels
        w[i] = 1.0f + static_cast<float>(i % 3);
    }
    const gk::quant::kq::affine_fit a = gk::quant::kq::fit_affine(x, w, 32, 15, q);
    EXPECT_NEAR(a.scale, 0.25f, 1e-6f);
    EXPECT_NEAR(a.min, 1.5f, 1e-6f);
    for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(q[i], i % 16);
    }
    for (int i = 0; i < 16; ++i) {
        x[i] = 0.1f * static_cast<float>(i % 8 - 4);  // levels -4..3
    }
    const float s = gk::quant::kq::fit_scale(x, w, 16, -4, 3, q);
    for (int i = 0; i < 16; ++i) {
        EXPECT_NEAR(s * q[i], x[i], 1e-6f);
    }
    EXPECT_EQ(gk::quant::kq::fit_scale(x, w, 0, -4, 3, q), 0.0f);  // empty groups
    EXPECT_EQ(gk::quant::kq::fit_affine(x, w, 0, 15, q).scale, 0.0f);
}

// ---- dispatch table ------------------------------------------------------------------

TEST(KQuants, Registered) {
    for (int t : k_types) {
        const type_traits * tt = get_type_traits(t);
        ASSERT_NE(tt, nullptr);
        EXPECT_NE(tt->to_float, nullptr) << type_name(t);
        EXPECT_NE(tt->from_float, nullptr) << type_name(t);
        EXPECT_TRUE(tt->takes_imatrix) << type_name(t);
        EXPECT_EQ(tt->blck_size, QK_K);
    }
    const type_traits * q8 = get_type_traits(GK_TYPE_Q8_K);
    ASSERT_NE(q8, nullptr);
    EXPECT_NE(q8->to_float, nullptr);
    EXPECT_NE(q8->from_float, nullptr);
    EXPECT_FALSE(q8->takes_imatrix);
    EXPECT_EQ(gk_type_size(GK_TYPE_Q2_K), sizeof(block_q2_K));
    EXPECT_EQ(gk_type_size(GK_TYPE_Q3_K), sizeof(block_q3_K));
    EXPECT_EQ(gk_type_size(GK_TYPE_Q4_K), sizeof(block_q4_K));
    EXPECT_EQ(gk_type_size(GK_TYPE_Q5_K), sizeof(block_q5_K));
    EXPECT_EQ(gk_type_size(GK_TYPE_Q6_K), sizeof(block_q6_K));
    EXPECT_EQ(gk_type_size(GK_TYPE_Q8_K), sizeof(block_q8_K));
}

// ---- decoding of hand-made blocks ----------------------------------------------------

TEST(KQuants, DecodeHandMadeQ4K) {
    block_q4_K b{};
    b.d = gk::fp32_to_fp16(0.5f);
    b.dmin = gk::fp32_to_fp16(0.25f);
    const uint8_t sc[8] = {1, 2, 3, 4, 5, 6, 7, 63};
    const uint8_t m[8] = {0, 1, 2, 3, 4, 5, 6, 63};
    pack_scales_mins_k4(sc, m, b.scales);
    for (int l = 0; l < 32; ++l) {
        b.qs[l] = static_cast<uint8_t>((l % 16) | ((15 - l % 16) << 4));  // elements 0..31 and 32..63
    }
    float y[QK_K];
    dequantize_row_q4_K(&b, y, QK_K);
    for (int l = 0; l < 32; ++l) {
        EXPECT_EQ(y[l], 0.5f * 1 * (l % 16) - 0.0f) << l;
        EXPECT_EQ(y[32 + l], 0.5f * 2 * (15 - l % 16) - 0.25f * 1) << l;
    }
    EXPECT_EQ(y[255], -0.25f * 63);  // qs zero there
}

TEST(KQuants, DecodeHandMadeQ6K) {
    block_q6_K b{};
    b.d = gk::fp32_to_fp16(2.0f);
    for (int j = 0; j < 16; ++j) {
        b.scales[j] = static_cast<int8_t>(j - 8);
    }
    // element 128*h + 32*k + l: nibble k/2 of ql[64h + 32(k%2) + l], bits 2k of qh[32h + l]
    std::memset(b.ql, 0, sizeof(b.ql));
    std::memset(b.qh, 0, sizeof(b.qh));
    b.ql[0] = 0x0F;           // element 0: low 15
    b.qh[0] = 0x03;           // element 0: high 3 -> 63 - 32 = 31
    b.ql[64 + 32 + 5] = 0xA0; // element 128 + 96 + 5: low 10, high 0 -> 10 - 32 = -22
    float y[QK_K];
    dequantize_row_q6_K(&b, y, QK_K);
    EXPECT_EQ(y[0], 2.0f * -8 * 31);
    EXPECT_EQ(y[229], 2.0f * (14 - 8) * -22);
    EXPECT_EQ(y[1], 2.0f * -8 * -32);
}

// ---- round trips -----------------------------------------------------------------------

struct bound {
    int    type;
    double rmse;  // on N(0, 1) rows; ggml's own encoders reach 0.296, 0.151, 0.0714, 0.0362, 0.0177
};
constexpr bound k_gaussian_bounds[] = {
    {GK_TYPE_Q2_K, 0.280}, {GK_TYPE_Q3_K, 0.150}, {GK_TYPE_Q4_K, 0.0712},
    {GK_TYPE_Q5_K, 0.0355}, {GK_TYPE_Q6_K, 0.0176},
};

TEST(KQuants, GaussianRoundTripError) {
    const int64_t n = 1024;
    const std::vector<float> x = gaussian(static_cast<size_t>(n) * 16, 3);
    for (const bound & b : k_gaussian_bounds) {
        const std::vector<float> y = round_trip(b.type, x, n);
        const double e = rmse(x, y);
        std::printf("%-5s rmse %.5f (bound %.4f)\n", type_name(b.type).c_str(), e, b.rmse);
        EXPECT_LT(e, b.rmse) << type_name(b.type);
    }
}

TEST(KQuants, ImatrixLowersTheWeightedError) {
    const int64_t n = 512;
    const std::vector<float> x = gaussian(static_cast<size_t>(n) * 8, 4);
    std::vector<float> w(static_cast<size_t>(n));
    std::mt19937 g(5);
    std::lognormal_distribution<float> ln(0.0f, 1.5f);
    for (float & v : w) {
        v = ln(g);
    }
    for (int t : k_types) {
        const double plain = rmse(x, round_trip(t, x, n), w.data(), static_cast<size_t>(n));
        const double weighted = rmse(x, round_trip(t, x, n, w.data()), w.data(), static_cast<size_t>(n));
        EXPECT_LT(weighted, 0.97 * plain) << type_name(t);
    }
}

TEST(KQuants, OddImatrixEntriesAreHarmless) {
    const int64_t n = 256;
    const std::vector<float> x = gaussian(static_cast<size_t>(n), 6);
    std::vector<float> w(static_cast<size_t>(n), 1.0f);
    for (int i = 0; i < 64; ++i) {
        w[static_cast<size_t>(i)] = 0.0f;  // a whole zero-weight stretch
    }
    w[100] = -3.0f;
    w[101] = std::numeric_limits<float>::quiet_NaN();
    w[102] = std::numeric_limits<float>::infinity();
    for (int t : k_types) {
        const std::vector<float> y = round_trip(t, x, n, w.data());
        for (float v : y) {
            ASSERT_TRUE(std::isfinite(v)) << type_name(t);
        }
    }
}

TEST(KQuants, ZeroRowsDecodeToZero) {
    const std::vector<float> x(QK_K * 2, 0.0f);
    for (int t : k_types) {
        for (const float * w : {static_cast<const float *>(nullptr), x.data()}) {
            const std::vector<float> y = round_trip(t, x, QK_K * 2, w);
            for (float v : y) {
                ASSERT_EQ(v, 0.0f) << type_name(t);
            }
        }
    }
}

TEST(KQuants, ConstantRows) {
    // within 0.2 % while the f16 factors stay normal; with subnormal factors (c = 1e-3)
    // the factor grid is coarse and 1 % is what the formats allow
    const struct {
        float  c;
        double rel;
    } cases[] = {{0.7f, 2e-3}, {-3.1f, 2e-3}, {250.0f, 2e-3}, {1e-3f, 1e-2}};
    for (const auto & k : cases) {
        const std::vector<float> x(QK_K, k.c);
        for (int t : k_types) {
            const std::vector<float> y = round_trip(t, x, QK_K);
            EXPECT_LE(rmse(x, y), k.rel * std::fabs(k.c)) << type_name(t) << " c=" << k.c;
        }
    }
}

TEST(KQuants, MagnitudesAcrossTheF16Range) {
    const int64_t n = 512;
    const std::vector<float> unit = gaussian(static_cast<size_t>(n) * 4, 7);
    for (int t : k_types) {
        const double e1 = rmse(unit, round_trip(t, unit, n));
        // scales well inside f16: the same relative error
        for (float s : {1e-2f, 30.0f, 2000.0f}) {
            std::vector<float> x = unit;
            for (float & v : x) {
                v *= s;
            }
            EXPECT_LT(rmse(x, round_trip(t, x, n)) / s, 1.1 * e1) << type_name(t) << " scale " << s;
        }
        // beyond f16 (tiny scales underflow, huge ones saturate): finite, and no worse
        // than decoding to zero
        for (float s : {1e-9f, 1e-30f, 1e9f, 1e30f}) {
            std::vector<float> x = unit;
            for (float & v : x) {
                v *= s;
            }
            const std::vector<float> y = round_trip(t, x, n);
            double err = 0, norm = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                ASSERT_TRUE(std::isfinite(y[i])) << type_name(t) << " scale " << s;
                err += std::fabs(static_cast<double>(x[i]) - y[i]);
                norm += std::fabs(static_cast<double>(x[i]));
            }
            EXPECT_LE(err, norm * 1.0000001) << type_name(t) << " scale " << s;
        }
    }
}

TEST(KQuants, NonFiniteInputIsContained) {
    std::vector<float> x = gaussian(QK_K * 2, 8);
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[300] = std::numeric_limits<float>::infinity();
    for (int t : k_types) {
        const std::vector<float> y = round_trip(t, x, QK_K * 2);  // no crash, no sanitizer report
        EXPECT_EQ(y.size(), x.size());
    }
}

// ---- every output written ------------------------------------------------------------

TEST(KQuants, EncodersWriteEveryByte) {
    const int64_t n = QK_K * 3;
    std::vector<float> x = gaussian(static_cast<size_t>(n), 9);
    std::fill(x.begin() + QK_K, x.begin() + 2 * QK_K, 0.0f);  // an all-zero block too
    for (int t : k_types) {
        const size_t rs = gk_row_size(static_cast<gk_type>(t), n);
        std::vector<uint8_t> a(rs, 0x00), b(rs, 0xFF);
        quantize_rows(t, x.data(), a.data(), 1, n, nullptr);
        quantize_rows(t, x.data(), b.data(), 1, n, nullptr);
        EXPECT_EQ(a, b) << type_name(t);
    }
    std::vector<uint8_t> a(gk_row_size(GK_TYPE_Q8_K, n), 0x00), b(a.size(), 0xFF);
    quantize_rows(GK_TYPE_Q8_K, x.data(), a.data(), 1, n, nullptr);
    quantize_rows(GK_TYPE_Q8_K, x.data(), b.data(), 1, n, nullptr);
    EXPECT_EQ(a, b) << "q8_K";
}

TEST(KQuants, DecodersWriteEveryValue) {
    std::mt19937 g(10);
    for (int t : {GK_TYPE_Q2_K, GK_TYPE_Q3_K, GK_TYPE_Q4_K, GK_TYPE_Q5_K, GK_TYPE_Q6_K, GK_TYPE_Q8_K}) {
        const size_t ts = gk_type_size(static_cast<gk_type>(t));
        std::vector<uint8_t> blocks(ts * 4);
        for (uint8_t & v : blocks) {
            v = static_cast<uint8_t>(g());
        }
        // finite, modest super-block factors so that no decoded value is NaN by itself
        for (size_t i = 0; i < 4; ++i) {
            uint8_t * blk = blocks.data() + i * ts;
            const uint16_t h = gk::fp32_to_fp16(0.01f);
            switch (t) {
                case GK_TYPE_Q2_K: std::memcpy(blk + 80, &h, 2); std::memcpy(blk + 82, &h, 2); break;
                case GK_TYPE_Q3_K: std::memcpy(blk + 108, &h, 2); break;
                case GK_TYPE_Q4_K:
                case GK_TYPE_Q5_K: std::memcpy(blk, &h, 2); std::memcpy(blk + 2, &h, 2); break;
                case GK_TYPE_Q6_K: std::memcpy(blk + 208, &h, 2); break;
                default: {
                    const float d = 0.01f;
                    std::memcpy(blk, &d, 4);
                }
            }
        }
        std::vector<float> y(QK_K * 4, std::numeric_limits<float>::quiet_NaN());
        ASSERT_TRUE(dequantize_rows(t, blocks.data(), y.data(), 1, QK_K * 4));
        for (float v : y) {
            ASSERT_FALSE(std::isnan(v)) << type_name(t);
        }
    }
}

// ---- q8_K ----------------------------------------------------------------------------

TEST(KQuants, Q8KQuantsAndSums) {
    std::vector<float> x = gaussian(QK_K * 4, 11, 3.0f);
    std::fill(x.begin() + QK_K, x.begin() + 2 * QK_K, 0.0f);  // an all-zero block
    x[2 * QK_K + 7] = -40.0f;                                   // largest magnitude negative
    std::vector<block_q8_K> b(4);
    std::memset(b.data(), 0x7F, b.size() * sizeof(block_q8_K));  // stale contents
    quantize_row_q8_K(x.data(), b.data(), static_cast<int64_t>(x.size()));
    for (int i = 0; i < 4; ++i) {
        for (int g = 0; g < QK_K / 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) {
                sum += b[i].qs[16 * g + l];
            }
            ASSERT_EQ(b[i].bsums[g], sum) << "block " << i << " group " << g;
        }
        float amax = 0;
        for (int e = 0; e < QK_K; ++e) {
            amax = std::max(amax, std::fabs(x[i * QK_K + e]));
        }
        EXPECT_FLOAT_EQ(std::fabs(b[i].d), amax / 127.0f);
        for (int e = 0; e < QK_K; ++e) {
            ASSERT_LE(std::fabs(x[i * QK_K + e] - b[i].d * b[i].qs[e]), 0.5001f * std::fabs(b[i].d) + 1e-30f);
        }
    }
    EXPECT_EQ(b[1].d, 0.0f);
    EXPECT_EQ(b[2].qs[7], -127);  // the largest magnitude maps onto -127 with d > 0 ...
    EXPECT_GT(b[2].d, 0.0f);
    EXPECT_NEAR(b[2].d * b[2].qs[7], -40.0f, 1e-5f);
    for (int e = 0; e < QK_K; ++e) {  // ... as a positive one onto -127 with d < 0
        if (std::fabs(x[e]) == std::fabs(b[0].d) * 127.0f) {
            EXPECT_EQ(b[0].qs[e], -127);
        }
    }
}

} // namespace
