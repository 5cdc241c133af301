// test-vec-dot: every vec_dot against its scalar twin (bit for bit, since both keep the
// order written in vec_dot.h) and against the truth computed in double.
//
// Truth bars:
// * float path (f32, f16, bf16): |dot - truth| <= (ceil(n / 64) + 6) * 2^-24 * sum|x y|,
//   the first-order bound of the order (ceil(n/64) fused steps per partial sum, then six
//   additions); observed errors are printed relative to sum|x y|.
// * integer path: the truth is the decoded weight row dotted in double with the original
//   f32 activations, so the activation's 8-bit quantisation is part of the error; the bar
//   is that loss, sum |w| |a - dequant(a)|, plus a rounding allowance. Separately, against
//   the decoded activation the dot must sit within rounding of the exact value.
//
// GK_VEC_DOT_REPORT=1 in the environment also prints a timing report (never asserted).
#include "gk/cpu/simd.h"
#include "gk/cpu/vec_dot.h"
#include "quant/codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

using gk::cpu::get_vec_dot_traits;
using gk::cpu::vec_dot_traits;

constexpr double u32 = 1.0 / 16777216.0;  // 2^-24, unit roundoff of f32

/// Lengths swept for the float path: every length up to 300, then a few large ones.
std::vector<int64_t> float_lengths() {
    std::vector<int64_t> v;
    for (int64_t n = 0; n <= 300; ++n) {
        v.push_back(n);
    }
    for (int64_t n : {511, 512, 513, 1000, 4096, 4099, 11008}) {
        v.push_back(n);
    }
    return v;
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

/// FNV-1a over result bits: printed so that builds at different SIMD levels can be
/// compared by eye (the order does not depend on the level where the target has FMA).
struct bits_hash {
    uint64_t h = 1469598103934665603ull;
    void add(float f) {
        const uint32_t b = std::bit_cast<uint32_t>(f);
        for (int k = 0; k < 4; ++k) {
            h = (h ^ ((b >> (8 * k)) & 0xFF)) * 1099511628211ull;
        }
    }
};


/// Convert f32 values to `type` with the dot's own activation conversion.
std::vector<uint8_t> encode_act(const vec_dot_traits & t, const std::vector<float> & x) {
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<uint8_t> out(gk_row_size(t.vec_dot_type, n) + 1);
    t.from_float(x.data(), out.data(), n);
    return out;
}

/// f32 values of a plain float row (f32, f16 or bf16), independent of the codec.
std::vector<float> widen(gk_type type, const std::vector<uint8_t> & row, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        if (type == GK_TYPE_F32) {
            std::memcpy(&out[i], row.data() + 4 * i, 4);
        } else {
            uint16_t h;
            std::memcpy(&h, row.data() + 2 * i, 2);
            out[i] = type == GK_TYPE_F16 ? gk::fp16_to_fp32(h) : gk::bf16_to_fp32(h);
        }
    }
    return out;
}

std::vector<float> gaussian(std::mt19937 & rng, int64_t n, float scale = 1.0f) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(static_cast<size_t>(n));
    for (float & f : v) {
        f = d(rng);
    }
    return v;
}

// ---- float path ---------------------------------------------------------------------------

TEST(VecDot, SimdLevel) {
    const auto f = gk::simd::compiled_features();
    std::printf("SIMD = %s | AVX512 = %d | AVX2 = %d | FMA = %d | F16C = %d | VNNI = %d | NEON = %d\n", f.level,
                f.avx512, f.avx2, f.fma, f.f16c, f.vnni, f.neon);
    EXPECT_NE(f.level, nullptr);
}

TEST(VecDot, FloatDotsMatchTwinAndTruth) {
    std::mt19937 rng(1234);
    for (gk_type type : {GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_BF16}) {
        const vec_dot_traits * t = get_vec_dot_traits(type);
        ASSERT_NE(t, nullptr) << gk_type_name(type);
        ASSERT_EQ(t->vec_dot_type, type);
        double worst = 0.0;
        bits_hash hash;
        for (int64_t n : float_lengths()) {
            const std::vector<uint8_t> x = encode_act(*t, gaussian(rng, n));
            const std::vector<uint8_t> y = encode_act(*t, gaussian(rng, n, 3.0f));
            float s = NAN, s_twin = NAN;
            t->vec_dot(n, &s, x.data(), y.data());
            t->vec_dot_scalar(n, &s_twin, x.data(), y.data());
            ASSERT_TRUE(same_bits(s, s_twin)) << gk_type_name(type) << " n=" << n << ": " << s << " vs " << s_twin;
            hash.add(s);

            const std::vector<float> xf = widen(type, x, n), yf = widen(type, y, n);
            double truth = 0.0, mag = 0.0;
            for (int64_t i = 0; i < n; ++i) {
                truth += static_cast<double>(xf[i]) * yf[i];
                mag += std::fabs(static_cast<double>(xf[i]) * yf[i]);
            }
            const double bound = static_cast<double>((n + 63) / 64 + 6) * u32 * mag;
            ASSERT_LE(std::fabs(s - truth), bound) << gk_type_name(type) << " n=" << n;
            if (mag > 0) {
                worst = std::max(worst, std::fabs(s - truth) / mag);
            }
        }
        std::printf("%-5s path %-12s twin: bit-identical; worst |dot - truth| / sum|xy| = %.2e; results %016llx\n",
                    gk_type_name(type), gk::cpu::dot_path_name(t->path), worst,
                    static_cast<unsigned long long>(hash.h));
    }
}

/// A dot fed with a zero-length row writes +0 (every output is written).
TEST(VecDot, EmptyRowWritesZero) {
    for (gk_type type : {GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_BF16}) {
        const vec_dot_traits * t = get_vec_dot_traits(type);
        ASSERT_NE(t, nullptr);
        float s = NAN;
        t->vec_dot(0, &s, nullptr, nullptr);
        EXPECT_TRUE(same_bits(s, 0.0f)) << gk_type_name(type);
    }
}

// ---- timing report (opt-in, never asserted) ----------------------------------------------

volatile float sink;  // keeps the timed results alive

TEST(VecDot, Report) {
    const char * on = std::getenv("GK_VEC_DOT_REPORT");
    if (!on || std::strcmp(on, "1") != 0) {
        GTEST_SKIP() << "set GK_VEC_DOT_REPORT=1 for the timing report";
    }
    std::mt19937 rng(7);
    const int64_t n = 4096;
    const std::vector<float> xf = gaussian(rng, n), af = gaussian(rng, n);
    std::printf("%-8s %-12s %12s %12s   (ns per row of %lld, best of 5)\n", "type", "path", "vec_dot", "scalar twin",
                static_cast<long long>(n));
    for (int id = 0; id < GK_TYPE_COUNT; ++id) {
        const auto type = static_cast<gk_type>(id);
        const vec_dot_traits * t = get_vec_dot_traits(type);
        if (!t) {
            continue;
        }
        std::vector<uint8_t> w(gk_row_size(type, n));
        if (type == t->vec_dot_type) {
            t->from_float(xf.data(), w.data(), n);
        } else if (!gk::quant::quantize_rows(type, xf.data(), w.data(), 1, n, nullptr)) {
            continue;
        }
        const std::vector<uint8_t> a = encode_act(*t, af);
        double best[2] = {1e30, 1e30};
        for (int which = 0; which < 2; ++which) {
            const gk::cpu::vec_dot_fn fn = which == 0 ? t->vec_dot : t->vec_dot_scalar;
            for (int rep = 0; rep < 5; ++rep) {
                const int iters = 200;
                float s = 0.0f;
                const auto t0 = std::chrono::steady_clock::now();
                for (int k = 0; k < iters; ++k) {
                    float r;
                    fn(n, &r, w.data(), a.data());
                    s += r;
                }
                const auto t1 = std::chrono::steady_clock::now();
                sink = s;
                best[which] = std::min(best[which], std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
            }
        }
        std::printf("%-8s %-12s %12.0f %12.0f\n", gk_type_name(type), gk::cpu::dot_path_name(t->path), best[0],
                    best[1]);
    }
}

} // namespace
