// test-vec-exp: gk's f32 exp (src/gk/cpu/vec_exp.h) and the row kernels built on it.
// - exp_f32 against exp in double: within 2.5 ulp (2.17 seen, near x = 82) over a sweep
//   of every 4099th f32 pattern
//   and a dense sweep of [-104, 89], +inf above 88.73, +0 below -103.98, NaN kept. (On
//   2^32 / 7 patterns it equals ggml's AVX-512 ggml_v_expf bit for bit; checked once by hand.)
// - Every kernel set the build has and the host runs: exp_shift, scale, silu and swiglu bit for bit
//   against exp_f32 / silu_f32 lane by lane (NaNs of any sign and payload, infinities,
//   zeros, subnormals, the overflow and underflow edges, the 2^n splitting points), on
//   rows of every length 0..40 (every vector tail) and in place.
// - softmax_rows (src/gk/cpu/ops/alibi.h) on several rows at once against its definition
//   row by row (the sums in double, left to right).
#include "gk/cpu/kernel_set.h"
#include "gk/cpu/ops/alibi.h"
#include "gk/cpu/vec_exp.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using gk::cpu::exp_f32;
using gk::cpu::silu_f32;

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

/// Distance in ulps between an f32 and a double, measured in the f32's own ulp.
double ulp_error(float got, double want) {
    const double ulp = std::ldexp(1.0, std::max(std::ilogb(static_cast<float>(want)), -126) - 23);
    return std::fabs(static_cast<double>(got) - want) / ulp;
}

TEST(VecExp, AccurateOverEveryRange) {
    double worst = 0.0;
    float  worst_x = 0.0f;
    const auto check = [&](float x) {
        const double want = std::exp(static_cast<double>(x));
        const float  got  = exp_f32(x);
        if (x > 88.73f) {
            ASSERT_EQ(got, INFINITY) << x;
        } else if (x < -103.98f) {
            ASSERT_EQ(bits(got), 0u) << x;
        } else if (want < 0x1p+128) {
            const double e = ulp_error(got, want);
            if (e > worst) {
                worst   = e;
                worst_x = x;
            }
        }
    };
    for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4099) {
        const float x = from_bits(static_cast<uint32_t>(u));
        if (!std::isnan(x)) {
            check(x);
        }
    }
    for (float x = -104.0f; x < 89.0f; x += 0.000977f) {
        check(x);
    }
    EXPECT_LE(worst, 2.5) << "at x = " << worst_x;
    EXPECT_EQ(exp_f32(0.0f), 1.0f);
    EXPECT_EQ(exp_f32(-0.0f), 1.0f);
    EXPECT_EQ(exp_f32(INFINITY), INFINITY);
    EXPECT_EQ(bits(exp_f32(-INFINITY)), 0u);
    EXPECT_TRUE(std::isnan(exp_f32(NAN)));
    EXPECT_GT(exp_f32(-103.0f), 0.0f);  // a subnormal, not flushed
    EXPECT_LT(exp_f32(-103.0f), 0x1p-126f);
}

/// Inputs that reach every branch of the definition, then random ones at many scales.
std::vector<float> edge_inputs() {
    std::vector<float> x = {0.0f, -0.0f, INFINITY, -INFINITY, from_bits(0x7fc00000u), from_bits(0xffc00000u),
                            from_bits(0x7f800001u), from_bits(0xff812345u), from_bits(0x7fc0beefu),
                            0x1p-149f, -0x1p-149f, 0x1p-126f, 88.72f, 88.7228f, 88.7229f, 88.73f, 89.0f,
                            -87.3f, -87.34f, -87.35f, -103.97f, -103.98f, -104.0f, -133.0f, 133.0f,
                            1e30f, -1e30f, 0.5f, -0.5f, 0.3465736f, -0.3465736f, 1.0f, -1.0f};
    for (int n = -200; n <= 200; ++n) {  // around every split point n * ln 2 of 2^n
        const float c = static_cast<float>(n) * 0.69314718f;
        x.push_back(c);
        x.push_back(std::nextafter(c, INFINITY));
        x.push_back(std::nextafter(c, -INFINITY));
        x.push_back(c + 0.34657359f);
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (float scale : {1e-3f, 1.0f, 10.0f, 50.0f, 90.0f, 110.0f, 1000.0f}) {
        for (int i = 0; i < 512; ++i) {
            x.push_back(scale * unit(rng));
        }
    }
    return x;
}

bool same_bits(float a, float b) { return bits(a) == bits(b); }

/// exp_shift's definition on the scalar twin.
void exp_shift_twin(std::vector<float> & w, float max) {
    for (float & v : w) {
        v = exp_f32(v - max);
    }
}

TEST(VecExp, EverySetMatchesTheScalarTwin) {
    const std::vector<float> in = edge_inputs();
    std::vector<float>       g(in.size());
    std::mt19937             rng(11);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (float & v : g) {
        v = normal(rng);
    }
    for (const gk::cpu::kernel_set * set : gk::cpu::runnable_kernel_sets()) {
        const gk::cpu::exp_kernels & k = set->exp();
        SCOPED_TRACE(set->name);
        // every element of the edge list in every lane position: rows at each offset
        for (size_t off = 0; off < 16; ++off) {
            const int64_t      n = static_cast<int64_t>(in.size() - off);
            std::vector<float> w(in.begin() + static_cast<long>(off), in.end());
            std::vector<float> twin = w;
            k.exp_shift(w.data(), n, 0.0f);
            exp_shift_twin(twin, 0.0f);
            for (int64_t i = 0; i < n; ++i) {
                ASSERT_TRUE(same_bits(w[i], twin[i])) << "exp of " << in[off + i] << " (bits " << std::hex
                                                      << bits(in[off + i]) << "): " << w[i] << " vs " << twin[i];
            }
            std::vector<float> y(static_cast<size_t>(n));
            k.silu(y.data(), in.data() + off, n);
            for (int64_t i = 0; i < n; ++i) {
                ASSERT_TRUE(same_bits(y[i], silu_f32(in[off + i]))) << "silu of " << in[off + i];
            }
            for (float f : {0.75f, 0x1.8p-20f, 3.0f}) {  // softmax's normalisation: the float product
                std::copy(in.begin() + static_cast<long>(off), in.end(), y.begin());
                k.scale(y.data(), n, f);
                for (int64_t i = 0; i < n; ++i) {
                    ASSERT_TRUE(same_bits(y[i], in[off + i] * f) || (std::isnan(y[i]) && std::isnan(in[off + i])))
                        << in[off + i] << " scaled by " << f;
                }
            }
            k.swiglu(y.data(), in.data() + off, g.data() + off, n);
            for (int64_t i = 0; i < n; ++i) {
                ASSERT_TRUE(same_bits(y[i], silu_f32(in[off + i]) * g[off + i])) << "swiglu of " << in[off + i];
            }
        }
        // every length 0..40 (each vector body and tail), with a max subtracted, in place
        for (int64_t n = 0; n <= 40; ++n) {
            std::vector<float> w(in.begin() + 100, in.begin() + 100 + n);
            std::vector<float> twin = w;
            k.exp_shift(w.data(), n, 1.25f);
            exp_shift_twin(twin, 1.25f);
            ASSERT_TRUE(n == 0 || std::memcmp(w.data(), twin.data(), w.size() * sizeof(float)) == 0) << "n = " << n;
            std::vector<float> x(in.begin() + 200, in.begin() + 200 + n);
            std::vector<float> want_y(x.size());
            for (size_t i = 0; i < x.size(); ++i) {
                want_y[i] = silu_f32(x[i]);
            }
            k.silu(x.data(), x.data(), n);  // in place
            ASSERT_TRUE(n == 0 || std::memcmp(x.data(), want_y.data(), x.size() * sizeof(float)) == 0) << "n = " << n;
        }
    }
}

/// softmax_rows (alibi.h) on 1 to 8 rows of their own lengths (fully masked ones among
/// them), with and without sinks (one per row), against its definition row by row: the max, exp_f32,
/// the sum in double left to right, the f32 reciprocal.
TEST(VecExp, SoftmaxRowsIsEachRowByItsDefinition) {
    std::mt19937                    rng(5);
    std::normal_distribution<float> g(0.0f, 30.0f);  // wide: many weights underflow
    for (int trial = 0; trial < 200; ++trial) {
        const int            rows      = 1 + static_cast<int>(rng() % 8);
        const size_t         ld        = 1 + rng() % 70;
        const bool           with_sink = rng() % 3 == 0;
        std::vector<float>   sinks(static_cast<size_t>(rows));  // one per row
        for (float & x : sinks) {
            x = g(rng);
        }
        std::vector<int64_t> n(static_cast<size_t>(rows));
        std::vector<float>   w(ld * static_cast<size_t>(rows));
        for (int r = 0; r < rows; ++r) {
            n[static_cast<size_t>(r)] = static_cast<int64_t>(rng() % (ld + 1));
            const bool masked         = rng() % 5 == 0;
            for (size_t i = 0; i < ld; ++i) {
                w[r * ld + i] = masked || rng() % 4 == 0 ? -INFINITY : g(rng);
            }
        }
        std::vector<float> want = w;
        for (int r = 0; r < rows; ++r) {
            float * row = want.data() + r * ld;
            const float sink = sinks[static_cast<size_t>(r)];
            float   max = with_sink ? sink : -INFINITY;
            for (int64_t i = 0; i < n[static_cast<size_t>(r)]; ++i) {
                max = std::max(max, row[i]);
            }
            if (max == -INFINITY) {
                std::fill(row, row + n[static_cast<size_t>(r)], 0.0f);
                continue;
            }
            double sum = 0.0;
            for (int64_t i = 0; i < n[static_cast<size_t>(r)]; ++i) {
                row[i] = exp_f32(row[i] - max);
                sum += row[i];
            }
            sum += with_sink ? static_cast<double>(exp_f32(sink - max)) : 0.0;
            const float inv = static_cast<float>(1.0 / sum);
            for (int64_t i = 0; i < n[static_cast<size_t>(r)]; ++i) {
                row[i] *= inv;
            }
        }
        gk::cpu::softmax_rows(w.data(), ld, n.data(), rows, with_sink ? sinks.data() : nullptr);
        for (size_t i = 0; i < w.size(); ++i) {
            ASSERT_TRUE(same_bits(w[i], want[i]))
                << "trial " << trial << " row " << i / ld << " at " << i % ld << ": " << w[i] << " vs " << want[i];
        }
    }
}

} // namespace
