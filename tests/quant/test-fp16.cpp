// test-fp16.cpp - f16 and bf16 conversion (src/quant/fp16.h) against independent
// references: the compiler's _Float16 conversions (IEEE round to nearest even, done by
// the compiler runtime or the FPU) and a bf16 rounding written here in double arithmetic.
//
// The default run covers every f16 and bf16 pattern, every rounding tie, and a strided
// sweep of f32 patterns; the full 2^32 f32 sweeps run when GK_LONG_TESTS=1 is set.
#include "quant/fp16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

namespace {

using gk::bf16_t;
using gk::fp16_t;

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
float    from_bits(uint32_t u) { return std::bit_cast<float>(u); }

bool long_tests() {
    const char * v = std::getenv("GK_LONG_TESTS");
    return v && *v && *v != '0';
}

bool f16_is_nan(fp16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }

// ---- f16 -------------------------------------------------------------------------------

TEST(Fp16, RoundTripEveryPattern) {
    for (uint32_t u = 0; u <= 0xFFFFu; ++u) {
        const auto  h = static_cast<fp16_t>(u);
        const float f = gk::fp16_to_fp32(h);
        if (f16_is_nan(h)) {
            ASSERT_TRUE(std::isnan(f)) << std::hex << u;
            ASSERT_NE(bits(f) & 0x00400000u, 0u) << "NaN not quiet, f16 " << std::hex << u;
            ASSERT_EQ(gk::fp32_to_fp16(f), static_cast<fp16_t>((h & 0x8000u) | 0x7E00u)) << std::hex << u;
        } else {
            ASSERT_EQ(gk::fp32_to_fp16(f), h) << std::hex << u;
        }
    }
}

#ifdef __FLT16_MANT_DIG__

fp16_t compiler_f16(float f) { return std::bit_cast<fp16_t>(static_cast<_Float16>(f)); }

/// Ours against the compiler's conversion; NaN: ours must be the quiet 0x7E00 with the
/// input's sign (the compiler may keep payload bits, so it is not compared there).
void expect_f32_to_f16(float f) {
    const fp16_t got = gk::fp32_to_fp16(f);
    if (std::isnan(f)) {
        ASSERT_EQ(got, static_cast<fp16_t>(((bits(f) >> 16) & 0x8000u) | 0x7E00u)) << std::hex << bits(f);
        return;
    }
    ASSERT_EQ(got, compiler_f16(f)) << "f32 bits " << std::hex << bits(f) << " value " << f;
}

TEST(Fp16, ToF32MatchesCompilerEveryPattern) {
    for (uint32_t u = 0; u <= 0xFFFFu; ++u) {
        const auto  h    = static_cast<fp16_t>(u);
        const float want = static_cast<float>(std::bit_cast<_Float16>(h));
        const float got  = gk::fp16_to_fp32(h);
        if (f16_is_nan(h)) {
            // quiet NaN, sign and payload kept
            const uint32_t expect = ((u & 0x8000u) << 16) | 0x7FC00000u | ((u & 0x03FFu) << 13);
            ASSERT_TRUE(std::isnan(want));
            ASSERT_EQ(bits(got), expect) << std::hex << u;
        } else {
            ASSERT_EQ(bits(got), bits(want)) << std::hex << u;
        }
    }
}

TEST(Fp16, FromF32EveryTie) {
    // For every pair of adjacent finite f16 values (and the last one and Inf's rounding
    // boundary 65520), the f32 midpoint and its two f32 neighbours.
    for (uint32_t u = 0; u < 0x7C00u; ++u) {
        for (const uint32_t sign : {0u, 0x8000u}) {
            const double lo  = gk::fp16_to_fp32(static_cast<fp16_t>(u));
            const double hi  = u + 1 == 0x7C00u ? 65536.0 : gk::fp16_to_fp32(static_cast<fp16_t>(u + 1));
            const float  mid = static_cast<float>((lo + hi) / 2);  // exact: 12 significant bits
            ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
            const float s = sign ? -1.0f : 1.0f;
            for (const float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
                expect_f32_to_f16(s * f);
            }
        }
    }
}

TEST(Fp16, FromF32EdgeCases) {
    const float inf = std::numeric_limits<float>::infinity();
    for (const float f : {0.0f, -0.0f, 0x1p-24f, 0x1p-25f, std::nextafter(0x1p-25f, 1.0f), 0x1.8p-25f, 0x1p-26f,
                          0x1p-14f, std::nextafter(0x1p-14f, 0.0f), 0x1.ff8p-15f, 65504.0f, 65519.99f, 65520.0f,
                          std::nextafter(65520.0f, 0.0f), 1e10f, std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min(), inf, -inf}) {
        expect_f32_to_f16(f);
        expect_f32_to_f16(-f);
    }
    EXPECT_EQ(gk::fp32_to_fp16(65520.0f), 0x7C00u);
    EXPECT_EQ(gk::fp32_to_fp16(std::nextafter(65520.0f, 0.0f)), 0x7BFFu);
    EXPECT_EQ(gk::fp32_to_fp16(0x1p-25f), 0x0000u);  // tie to even: 0
    EXPECT_EQ(gk::fp32_to_fp16(0x1.8p-24f), 0x0002u); // 1.5 ulp: tie to even, 2
    EXPECT_EQ(gk::fp32_to_fp16(from_bits(0xFFC12345u)), 0xFE00u);  // NaN: quiet, sign kept
    EXPECT_EQ(gk::fp32_to_fp16(from_bits(0x7F800001u)), 0x7E00u);  // signalling NaN
}

TEST(Fp16, FromF32StridedSweep) {
    // 2^32 / 4093 ~ 1.05 million patterns, a prime stride so every exponent and many
    // mantissa bit patterns are met.
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4093) {
        expect_f32_to_f16(from_bits(static_cast<uint32_t>(u)));
    }
}

TEST(Fp16Long, FromF32EveryPattern) {
    if (!long_tests()) {
        GTEST_SKIP() << "set GK_LONG_TESTS=1 for the full 2^32 sweep";
    }
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; ++u) {
        expect_f32_to_f16(from_bits(static_cast<uint32_t>(u)));
    }
}

#else

TEST(Fp16, CompilerComparisons) { GTEST_SKIP() << "this compiler has no _Float16"; }

#endif

// ---- bf16 ------------------------------------------------------------------------------

/// f32 -> bf16 by arithmetic: round |f| to a multiple of its bf16 ulp (8 significant bits;
/// subnormals keep the ulp of the smallest normal binade) with ties to even, in double.
bf16_t reference_bf16(float f) {
    const double a = std::fabs(static_cast<double>(f));
    if (a == 0.0 || std::isinf(a)) {
        return static_cast<bf16_t>(bits(f) >> 16);
    }
    int exp;
    std::frexp(a, &exp);                                   // a = m * 2^exp, m in [0.5, 1)
    const double ulp = std::ldexp(1.0, std::max(exp, -125) - 8);
    const double q   = a / ulp;                            // exact
    double       r   = std::floor(q);
    const double rem = q - r;
    if (rem > 0.5 || (rem == 0.5 && std::fmod(r, 2.0) != 0.0)) {
        r += 1.0;
    }
    const double v = r * ulp;                              // exact
    if (v >= 0x1p128) {                                    // rounded past the largest finite
        return static_cast<bf16_t>(((bits(f) >> 16) & 0x8000u) | 0x7F80u);
    }
    return static_cast<bf16_t>(bits(std::copysign(static_cast<float>(v), f)) >> 16);
}

void expect_f32_to_bf16(float f) {
    const bf16_t got = gk::fp32_to_bf16(f);
    if (std::isnan(f)) {
        ASSERT_EQ(got, static_cast<bf16_t>((bits(f) >> 16) | 0x40u)) << std::hex << bits(f);
        return;
    }
    ASSERT_EQ(got, reference_bf16(f)) << "f32 bits " << std::hex << bits(f);
}

TEST(Bf16, EveryPatternBothWays) {
    for (uint32_t u = 0; u <= 0xFFFFu; ++u) {
        const auto  h = static_cast<bf16_t>(u);
        const float f = gk::bf16_to_fp32(h);
        ASSERT_EQ(bits(f), u << 16) << std::hex << u;
        const bool nan = (u & 0x7F80u) == 0x7F80u && (u & 0x7Fu) != 0;
        ASSERT_EQ(gk::fp32_to_bf16(f), nan ? static_cast<bf16_t>(u | 0x40u) : h) << std::hex << u;
    }
}

TEST(Bf16, FromF32EveryTie) {
    // the midpoint of every pair of adjacent bf16 patterns and its f32 neighbours
    for (uint32_t u = 0; u < 0x7F80u; ++u) {
        for (const uint32_t sign : {0u, 0x80000000u}) {
            const uint32_t mid = sign | (u << 16) | 0x8000u;
            for (const uint32_t m : {mid - 1, mid, mid + 1}) {
                expect_f32_to_bf16(from_bits(m));
            }
        }
    }
}

TEST(Bf16, FromF32StridedSweep) {
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4093) {
        expect_f32_to_bf16(from_bits(static_cast<uint32_t>(u)));
    }
}

TEST(Bf16Long, FromF32EveryPattern) {
    if (!long_tests()) {
        GTEST_SKIP() << "set GK_LONG_TESTS=1 for the full 2^32 sweep";
    }
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; ++u) {
        expect_f32_to_bf16(from_bits(static_cast<uint32_t>(u)));
    }
}

} // namespace
