// The lattice i-quants (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m): value
// tables against their defining functions and published contents, hand-decoded blocks,
// and (below) the encoders: round-trip error bounds, edge inputs, structural validity.
// Bit-for-bit decoding against an independent reference is decode_vs_gguf_py.py's job.
#include "quant/codec.h"
#include "quant/fp16.h"
#include "quant/iq_quants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <thread>
#include <vector>

using namespace gk::quant;

namespace {

struct iq_type {
    gk_type     type;
    const char * name;
    size_t      bytes;
};

constexpr iq_type k_types[] = {
    {GK_TYPE_IQ2_XXS, "iq2_xxs", 66}, {GK_TYPE_IQ2_XS, "iq2_xs", 74}, {GK_TYPE_IQ2_S, "iq2_s", 82},
    {GK_TYPE_IQ3_XXS, "iq3_xxs", 98}, {GK_TYPE_IQ3_S, "iq3_s", 110}, {GK_TYPE_IQ1_S, "iq1_s", 50},
    {GK_TYPE_IQ1_M, "iq1_m", 56},
};

/// FNV-1a 64 over the little-endian bytes of a table's entries.
template <class T, size_t N>
uint64_t fnv1a(const T (&table)[N]) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (T v : table) {
        for (size_t k = 0; k < sizeof(T); ++k) {
            h ^= static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * k));
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/// Sorted distinct byte values over all coordinates of a grid, and whether all entries differ.
template <class T, size_t N>
std::set<int> coordinate_values(const T (&grid)[N], int dim, bool as_int8, bool & distinct) {
    std::set<int> values;
    std::set<T>   entries(std::begin(grid), std::end(grid));
    distinct = entries.size() == N;
    for (T v : grid) {
        for (int j = 0; j < dim; ++j) {
            const auto b = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * j));
            values.insert(as_int8 ? static_cast<int8_t>(b) : b);
        }
    }
    return values;
}

std::vector<float> decode(gk_type t, const std::vector<uint8_t> & bytes) {
    const int64_t      nb = static_cast<int64_t>(bytes.size() / gk_type_size(t));
    std::vector<float> y(static_cast<size_t>(nb * 256), std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(dequantize_rows(t, bytes.data(), y.data(), 1, nb * 256));
    return y;
}

void put_u16(std::vector<uint8_t> & b, size_t at, uint16_t v) { std::memcpy(b.data() + at, &v, 2); }
void put_u32(std::vector<uint8_t> & b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }

} // namespace

// ---- tables ------------------------------------------------------------------------------

TEST(IqTables, MasksAreSingleBits) {
    for (int j = 0; j < 8; ++j) {
        EXPECT_EQ(kmask_iq2xs[j], 1u << j);
    }
}

TEST(IqTables, SignsAreSevenBitsPlusParity) {
    for (int i = 0; i < 128; ++i) {
        const int parity = std::popcount(static_cast<unsigned>(i)) & 1;
        EXPECT_EQ(ksigns_iq2xs[i], i | (parity << 7)) << i;
        EXPECT_EQ(std::popcount(static_cast<unsigned>(ksigns_iq2xs[i])) % 2, 0) << i;
    }
}

TEST(IqTables, GridsHoldThePublishedValues) {
    // Hashes of the tables as published in ggml-common.h (FNV-1a 64 of their LE bytes).
    EXPECT_EQ(fnv1a(iq2xxs_grid), 0xbb4ee025b5ac6e8eull);
    EXPECT_EQ(fnv1a(iq2xs_grid), 0xc9b1ee61e79909bdull);
    EXPECT_EQ(fnv1a(iq2s_grid), 0x123edd38a3b62b90ull);
    EXPECT_EQ(fnv1a(iq3xxs_grid), 0xdfa5dc83d6a155d5ull);
    EXPECT_EQ(fnv1a(iq3s_grid), 0xfa37020c25b44829ull);
    EXPECT_EQ(fnv1a(iq1s_grid), 0x6703ed863501ae2eull);
}

TEST(IqTables, GridsAreDistinctPointsOnTheirLevels) {
    bool distinct = false;
    const std::set<int> iq2 = {8, 25, 43};
    EXPECT_EQ(coordinate_values(iq2xxs_grid, 8, false, distinct), iq2);
    EXPECT_TRUE(distinct);
    EXPECT_EQ(coordinate_values(iq2xs_grid, 8, false, distinct), iq2);
    EXPECT_TRUE(distinct);
    EXPECT_EQ(coordinate_values(iq2s_grid, 8, false, distinct), iq2);
    EXPECT_TRUE(distinct);
    EXPECT_EQ(coordinate_values(iq3xxs_grid, 4, false, distinct), (std::set<int>{4, 12, 20, 28, 36, 44, 52, 62}));
    EXPECT_TRUE(distinct);
    EXPECT_EQ(coordinate_values(iq3s_grid, 4, false, distinct), (std::set<int>{1, 3, 5, 7, 9, 11, 13, 15}));
    EXPECT_TRUE(distinct);
    EXPECT_EQ(coordinate_values(iq1s_grid, 8, true, distinct), (std::set<int>{-1, 0, 1}));
    EXPECT_TRUE(distinct);
}

// ---- decoders ------------------------------------------------------------------------------

TEST(IqDecode, Iq2XxsSignsAndScale) {
    std::vector<uint8_t> b(66, 0);
    put_u16(b, 0, 0x3C00);                     // d = 1
    put_u32(b, 2 + 4, 1u | (3u << 28));        // sub-block 0: group 0 sign code 1, scale 3
    const auto y = decode(GK_TYPE_IQ2_XXS, b); // db = (0.5 + 3) / 4 = 0.875, grid[0] = 8s
    EXPECT_EQ(y[0], -7.0f);                    // sign bit 0 and (parity) bit 7
    for (int j = 1; j < 7; ++j) {
        EXPECT_EQ(y[j], 7.0f);
    }
    EXPECT_EQ(y[7], -7.0f);
    EXPECT_EQ(y[8], 7.0f);
    EXPECT_EQ(y[32], 1.0f);                    // sub-block 1: scale 0, db = 0.125
}

TEST(IqDecode, Iq2XsAndIq2SScaleNibbles) {
    std::vector<uint8_t> xs(74, 0);
    put_u16(xs, 0, 0x3C00);
    put_u16(xs, 2, static_cast<uint16_t>(1 | (1u << 9)));  // group 0: grid[1], sign code 1
    xs[2 + 64] = 0x31;                                      // scales: 1 (values 0..15), 3 (16..31)
    auto y = decode(GK_TYPE_IQ2_XS, xs);
    const float db0 = 1.5f * 0.25f, db1 = 3.5f * 0.25f;
    for (int j = 0; j < 8; ++j) {
        const float g = static_cast<float>((iq2xs_grid[1] >> (8 * j)) & 0xff);
        EXPECT_EQ(y[j], (j == 0 || j == 7 ? -1.0f : 1.0f) * db0 * g) << j;
    }
    EXPECT_EQ(y[16], db1 * 8.0f);

    std::vector<uint8_t> s(82, 0);
    put_u16(s, 0, 0x3C00);
    s[2 + 0]       = 5;     // group 0: low bits of the index
    s[2 + 64]      = 3;     // qh[0]: group 0's index bits 8..9 = 3
    s[2 + 32]      = 0x80;  // group 0's sign bits: value 7 negative (no parity in iq2_s)
    s[2 + 64 + 8]  = 0x02;  // scales[0]: 2 for values 0..15
    y = decode(GK_TYPE_IQ2_S, s);
    for (int j = 0; j < 8; ++j) {
        const float g = static_cast<float>((iq2s_grid[768 + 5] >> (8 * j)) & 0xff);
        EXPECT_EQ(y[j], (j == 7 ? -1.0f : 1.0f) * 2.5f * 0.25f * g) << j;
    }
}

TEST(IqDecode, Iq3Formats) {
    std::vector<uint8_t> xxs(98, 0);
    put_u16(xxs, 0, 0x3C00);
    put_u32(xxs, 2 + 64, 2u << 28);  // sub-block 0: scale 2 -> db = 2.5 / 2
    auto y = decode(GK_TYPE_IQ3_XXS, xxs);
    EXPECT_EQ(y[0], 1.25f * 4.0f);   // iq3xxs_grid[0] = 4s
    EXPECT_EQ(y[32], 0.25f * 4.0f);

    std::vector<uint8_t> s(110, 0);
    put_u16(s, 0, 0x4000);           // d = 2
    s[2 + 64 + 8 + 32] = 0x10 | 1;   // scales[0]: sub-block 0 -> 1, sub-block 1 -> 1 (db = 2 * 3)
    s[2 + 64 + 8]      = 0x11;       // signs of group 0: values 0 and 4 negative
    s[2 + 1]           = 7;          // group of 4 #1 (values 4..7): low index bits
    s[2 + 64]          = 0x02;       // qh[0] bit 1: index of group of 4 #1 += 256
    y = decode(GK_TYPE_IQ3_S, s);
    EXPECT_EQ(y[0], -6.0f);          // iq3s_grid[0] = 1s
    EXPECT_EQ(y[1], 6.0f);
    EXPECT_EQ(y[4], -6.0f * static_cast<float>(iq3s_grid[256 + 7] & 0xff));
    EXPECT_EQ(y[32], 6.0f);
}

TEST(IqDecode, Iq1Formats) {
    std::vector<uint8_t> s(50, 0);
    put_u16(s, 0, 0x3C00);
    put_u16(s, 2 + 32, 2u << 12);                      // sub-block 0: scale 2 -> dl = 5, shift +
    put_u16(s, 2 + 32 + 2, (2u << 12) | 0x8000u);      // sub-block 1: shift -
    auto y = decode(GK_TYPE_IQ1_S, s);                 // iq1s_grid[0] = all -1
    EXPECT_EQ(y[0], 5.0f * (-1.0f + 0.125f));
    EXPECT_EQ(y[32], 5.0f * (-1.0f - 0.125f));

    std::vector<uint8_t> m(56, 0);
    put_u16(m, 48 + 0, 1);                             // sub-block 0 code 1 -> dl = 3 * d
    put_u16(m, 48 + 4, 0xC000);                        // d = 0x3C00 = 1: nibble 2 = 0xC
    put_u16(m, 48 + 6, 0x3000);                        //                 nibble 3 = 0x3
    m[32] = 0x80;                                      // group 1: shift -
    y = decode(GK_TYPE_IQ1_M, m);
    EXPECT_EQ(y[0], 3.0f * (-1.0f + 0.125f));
    EXPECT_EQ(y[8], 3.0f * (-1.0f - 0.125f));
    EXPECT_EQ(y[16], 1.0f * (-1.0f + 0.125f));         // sub-block 1 code 0
}

TEST(IqDecode, ZeroBlocksDecodeToZeroAndEveryValueIsWritten) {
    std::mt19937 gen(42);
    for (const iq_type & t : k_types) {
        SCOPED_TRACE(t.name);
        std::vector<uint8_t> zeros(t.bytes * 3, 0);
        for (float v : decode(t.type, zeros)) {
            ASSERT_EQ(v, 0.0f);
        }
        // random blocks with a finite scale: every output finite, so every slot was written
        std::vector<uint8_t> rnd(t.bytes * 5);
        for (auto & b : rnd) {
            b = static_cast<uint8_t>(gen());
        }
        for (size_t i = 0; i < 5; ++i) {
            uint8_t * blk = rnd.data() + i * t.bytes;
            if (t.type == GK_TYPE_IQ1_M) {
                for (int k = 0; k < 4; ++k) {
                    blk[48 + 2 * k + 1] &= 0x0f;  // clear the four nibbles of d ...
                }
                blk[48 + 7] |= 0x30;              // ... then d = 0x3000 (0.125)
            } else {
                put_u16(rnd, i * t.bytes, 0x3555);
            }
        }
        for (float v : decode(t.type, rnd)) {
            ASSERT_TRUE(std::isfinite(v));
        }
    }
}

TEST(IqDecode, MisalignedInputGivesTheSameBits) {
    std::mt19937 gen(43);
    for (const iq_type & t : k_types) {
        SCOPED_TRACE(t.name);
        std::vector<uint8_t> buf(t.bytes * 4 + 1);
        for (auto & b : buf) {
            b = static_cast<uint8_t>(gen());
        }
        const std::vector<uint8_t> aligned(buf.begin() + 1, buf.end());
        const auto                 want = decode(t.type, aligned);
        std::vector<float>         got(want.size());
        ASSERT_TRUE(dequantize_rows(t.type, buf.data() + 1, got.data(), 1, 4 * 256));
        for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << i;
        }
    }
}

// ---- encoders ------------------------------------------------------------------------------

namespace {

/// Deterministic N(0, 1) values (splitmix64 + Box-Muller), the same on every platform
/// up to the last bits of log/cos.
std::vector<float> gaussian(size_t n, uint64_t seed) {
    auto next = [&seed]() {
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        const double u1 = 1.0 - static_cast<double>(next() >> 11) * 0x1.0p-53;
        const double u2 = static_cast<double>(next() >> 11) * 0x1.0p-53;
        v[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
    }
    return v;
}

std::vector<uint8_t> encode(gk_type t, const std::vector<float> & x, int64_t n_per_row, const float * imatrix,
                            uint8_t fill = 0xA5) {
    const int64_t        nrows = static_cast<int64_t>(x.size()) / n_per_row;
    std::vector<uint8_t> q(gk_row_size(t, n_per_row) * static_cast<size_t>(nrows), fill);
    EXPECT_EQ(quantize_rows(t, x.data(), q.data(), nrows, n_per_row, imatrix), q.size());
    return q;
}

std::vector<float> round_trip(gk_type t, const std::vector<float> & x, int64_t n_per_row, const float * imatrix) {
    const auto         q = encode(t, x, n_per_row, imatrix);
    std::vector<float> y(x.size(), std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(dequantize_rows(t, q.data(), y.data(), static_cast<int64_t>(x.size()) / n_per_row, n_per_row));
    return y;
}

double rmse(const std::vector<float> & x, const std::vector<float> & y, const float * w = nullptr, size_t n = 1) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double wi = w ? w[i % n] : 1.0;
        num += wi * (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
        den += wi;
    }
    return std::sqrt(num / den);
}

constexpr int64_t k_row = 512;  // two super-blocks

} // namespace

TEST(IqEncode, GaussianRoundTripErrorIsBounded) {
    // RMSE of N(0, 1) rows: our encoders measure about 0.33, 0.29, 0.24, 0.175, 0.13,
    // 0.46, 0.42 (ggml's reference: 3-30% more). The bounds leave room for the sample.
    const double bound[] = {0.37, 0.32, 0.27, 0.20, 0.15, 0.50, 0.47};
    const auto   x       = gaussian(4 * k_row, 1);
    for (size_t k = 0; k < std::size(k_types); ++k) {
        SCOPED_TRACE(k_types[k].name);
        const auto y = round_trip(k_types[k].type, x, k_row, nullptr);
        EXPECT_LT(rmse(x, y), bound[k]);
    }
}

TEST(IqEncode, ImatrixLowersTheWeightedError) {
    const auto         x = gaussian(4 * k_row, 2);
    std::vector<float> imatrix(k_row);
    for (int64_t i = 0; i < k_row; ++i) {
        imatrix[static_cast<size_t>(i)] = i % 16 == 0 ? 100.0f : 1.0f;  // every 16th column matters most
    }
    for (const iq_type & t : k_types) {
        SCOPED_TRACE(t.name);
        const auto plain    = round_trip(t.type, x, k_row, nullptr);
        const auto weighted = round_trip(t.type, x, k_row, imatrix.data());
        EXPECT_LT(rmse(x, weighted, imatrix.data(), k_row), 0.9 * rmse(x, plain, imatrix.data(), k_row));
    }
}

TEST(IqEncode, ZeroRowsGiveZeroBlocks) {
    const std::vector<float> x(2 * k_row, 0.0f);
    for (const iq_type & t : k_types) {
        SCOPED_TRACE(t.name);
        for (uint8_t b : encode(t.type, x, k_row, nullptr)) {
            ASSERT_EQ(b, 0);
        }
        std::vector<float> zeros_im(k_row, 0.0f);
        for (float v : round_trip(t.type, x, k_row, zeros_im.data())) {
            ASSERT_EQ(v, 0.0f);
        }
    }
}

TEST(IqEncode, EveryOutputByteIsWritten) {
    const auto x = gaussian(2 * k_row, 3);
    for (const iq_type & t : k_types) {
        SCOPED_TRACE(t.name);
        EXPECT_EQ(encode(t.type, x, k_row, nullptr, 0x00), encode(t.type, x, k_row, nullptr, 0xFF));
        // and an output buffer at an odd address
        std::vector<uint8_t> odd(gk_row_size(t.type, k_row) * 2 + 1, 0x5A);
        ASSERT_GT(quantize_rows(t.type, x.data(), odd.data() + 1, 2, k_row, nullptr), 0u);
        EXPECT_TRUE(std::equal(odd.begin() + 1, odd.end(), encode(t.type, x, k_row, nullptr).begin()));
    }
}

TEST(IqEncode, PowerOfTwoScalingScalesTheDecodedValues) {
    const auto x = gaussian(2 * k_row, 4);
    for (const iq_type & t : k_types) {
        SCOPED_TRACE(t.name);
        const auto y = round_trip(t.type, x, k_row, nullptr);
        for (float s : {0.25f, 64.0f}) {
            std::vector<float> xs(x);
            for (float & v : xs) {
                v *= s;
            }
            const auto ys = round_trip(t.type, xs, k_row, nullptr);
            for (size_t i = 0; i < y.size(); ++i) {
                ASSERT_EQ(ys[i], y[i] * s) << i;
            }
        }
    }
}

TEST(IqEncode, ExtremeAndNonFiniteInputsStayFinite) {
    const float big = std::numeric_limits<float>::max();
    for (const iq_type & t : k_types) {
        SCOPED_TRACE(t.name);
        for (float scale : {1e-30f, 1e-8f, 1e8f, 1e30f, big}) {
            auto x = gaussian(k_row, 5);
            for (float & v : x) {
                v = std::clamp(v * scale, -big, big);
            }
            const auto y = round_trip(t.type, x, k_row, nullptr);
            for (size_t i = 0; i < y.size(); ++i) {
                ASSERT_TRUE(std::isfinite(y[i])) << i;
                ASSERT_LE(std::fabs(y[i]), 65504.0f * 512.0f) << i;  // largest f16 d x largest multiple (465)
            }
        }
        auto x = gaussian(k_row, 6);
        x[3]   = std::numeric_limits<float>::quiet_NaN();
        x[77]  = std::numeric_limits<float>::infinity();
        x[300] = -std::numeric_limits<float>::infinity();
        std::vector<float> imatrix(k_row, 1.0f);
        imatrix[5] = std::numeric_limits<float>::quiet_NaN();
        imatrix[6] = -1.0f;
        imatrix[7] = std::numeric_limits<float>::infinity();
        for (const float * im : {static_cast<const float *>(nullptr), static_cast<const float *>(imatrix.data())}) {
            for (float v : round_trip(t.type, x, k_row, im)) {
                ASSERT_TRUE(std::isfinite(v));
            }
        }
    }
}

TEST(IqEncode, SignsFollowTheInput) {
    // Sign grids keep x's signs; where 7 bits + parity are stored, a group of 8 with an odd
    // number of negative values negates exactly one value (iq1 grids carry no sign bits).
    const auto x = gaussian(2 * k_row, 7);
    for (const iq_type & t : k_types) {
        if (t.type == GK_TYPE_IQ1_S || t.type == GK_TYPE_IQ1_M) {
            continue;
        }
        SCOPED_TRACE(t.name);
        const bool parity = t.type == GK_TYPE_IQ2_XXS || t.type == GK_TYPE_IQ2_XS || t.type == GK_TYPE_IQ3_XXS;
        const auto y      = round_trip(t.type, x, k_row, nullptr);
        for (size_t g = 0; g < x.size() / 8; ++g) {
            int negative = 0, differ = 0;
            for (size_t i = 8 * g; i < 8 * g + 8; ++i) {
                negative += x[i] < 0.0f;
                if (y[i] != 0.0f) {
                    differ += (x[i] < 0.0f) != (y[i] < 0.0f);
                }
            }
            ASSERT_EQ(differ, parity ? negative % 2 : 0) << "group " << g;
        }
    }
}

TEST(IqEncode, ConcurrentFirstUseGivesTheSameBytes) {
    const auto x = gaussian(k_row, 8);
    std::vector<std::vector<uint8_t>> seq;
    for (const iq_type & t : k_types) {
        seq.push_back(encode(t.type, x, k_row, nullptr));
    }
    std::vector<std::vector<uint8_t>> par(std::size(k_types));
    std::vector<std::thread>          threads;
    for (size_t k = 0; k < std::size(k_types); ++k) {
        threads.emplace_back([&, k] {
            std::vector<uint8_t> q(gk_row_size(k_types[k].type, k_row));
            quantize_rows(k_types[k].type, x.data(), q.data(), 1, k_row, nullptr);
            par[k] = std::move(q);
        });
    }
    for (auto & th : threads) {
        th.join();
    }
    EXPECT_EQ(par, seq);
}
