// test-act-convert: the vectorised activation conversions (src/gk/cpu/act_convert.h)
// against the codec's functions they replace (fp32_to_fp16, fp32_to_bf16,
// quantize_row_q8_0_dot / q8_1_dot / q8_K), byte for byte, over rows built to hit every rule of
// the reference: random rows at scales from subnormal to overflow, halves after scaling,
// all-zero blocks, a single nonzero, the maximum at every position with both signs, the
// maximum repeated with the opposite sign, subnormals, blocks scaled so that 1 / d is
// infinite, NaN and infinities, and f16 / bf16 rounding boundaries; rows of 1..20 blocks.
// Each row goes through the converters of every kernel set the build has and the host runs,
// taken from the set's dot table (so the table's choice of converter is checked too). The
// widening of f16 / bf16 rows back to f32 (to_float) is checked on every pattern.
//
// GK_ACT_CONVERT_REPORT=1 in the environment also prints ns per row of 4096 for each
// conversion against the codec's function (never asserted).
#include "gk/cpu/act_convert.h"
#include "gk/cpu/kernel_set.h"
#include "gk/cpu/simd.h"
#include "gk/cpu/vec_dot.h"
#include "quant/fp16.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

namespace cpu = gk::cpu::detail;
namespace q   = gk::quant;
using gk::cpu::act_from_float_fn;

constexpr int QK  = q::QK8_0;  // 32
constexpr int QKK = q::QK_K;   // 256

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

/// The first differing byte of two buffers, or -1.
long first_diff(const void * a, const void * b, size_t n) {
    const auto * x = static_cast<const uint8_t *>(a);
    const auto * y = static_cast<const uint8_t *>(b);
    for (size_t i = 0; i < n; ++i) {
        if (x[i] != y[i]) {
            return static_cast<long>(i);
        }
    }
    return -1;
}

/// The first `n` inputs around element `e`, as bit patterns, for a failure message.
std::string around(const std::vector<float> & x, long e) {
    std::string s;
    char        buf[64];
    for (long i = std::max(0L, e - 2); i < std::min<long>(static_cast<long>(x.size()), e + 3); ++i) {
        std::snprintf(buf, sizeof buf, " x[%ld]=%a(0x%08x)", i, static_cast<double>(x[i]), std::bit_cast<uint32_t>(x[i]));
        s += buf;
    }
    return s;
}

/// Converts x[0..n) with `fast` and `ref` into buffers prefilled with different bytes;
/// fails on the first differing byte (blocks of `block_elems` elements, `block_bytes` bytes).
template <class T, class Fast>
void expect_same(const char * what, const std::string & name, const std::vector<float> & x, int64_t n,
                 int64_t block_elems, size_t block_bytes, Fast fast, void (*ref)(const float *, T *, int64_t)) {
    const size_t         bytes = static_cast<size_t>(n / block_elems) * block_bytes;
    std::vector<uint8_t> a(bytes + 1, 0xA5), b(bytes + 1, 0x5A);
    fast(x.data(), reinterpret_cast<T *>(a.data()), n);
    ref(x.data(), reinterpret_cast<T *>(b.data()), n);
    a[bytes] = b[bytes] = 0;  // the guard byte: must be untouched (checked below)
    const long d = first_diff(a.data(), b.data(), bytes);
    if (d >= 0) {
        const long blk = d / static_cast<long>(block_bytes);
        ADD_FAILURE() << what << " differs from the codec on " << name << " (n " << n << ") at byte " << d
                      << " (block " << blk << ", byte " << d % static_cast<long>(block_bytes) << "): "
                      << int(a[d]) << " vs " << int(b[d]) << ";" << around(x, blk * block_elems);
    }
}

void ref_f16(const float * x, uint16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = gk::fp32_to_fp16(x[i]);
    }
}
void ref_bf16(const float * x, uint16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = gk::fp32_to_bf16(x[i]);
    }
}

/// The converters of one kernel set (kernel_set.h), taken from its dot table: the base set
/// (the build's own flags; scalar code in a portable x86-64 build) and, in a portable build,
/// the AVX2 and AVX-512 sets, so each vector level is swept over every row below.
struct converters {
    std::string       set;
    act_from_float_fn f16, bf16, q8_0, q8_1, q8_K;
};

std::vector<converters> all_converters() {
    std::vector<converters> out;
    for (const gk::cpu::kernel_set * ks : gk::cpu::runnable_kernel_sets()) {
        auto of = [&](gk_type w, gk_type act) {
            const gk::cpu::vec_dot_traits * t = ks->vec_dot(w);
            EXPECT_TRUE(t != nullptr && t->vec_dot_type == act) << ks->name << " weight " << gk_type_name(w);
            return t ? t->from_float : nullptr;
        };
        out.push_back({ks->name, of(GK_TYPE_F16, GK_TYPE_F16), of(GK_TYPE_BF16, GK_TYPE_BF16),
                       of(GK_TYPE_Q4_0, GK_TYPE_Q8_0), of(GK_TYPE_Q4_1, GK_TYPE_Q8_1), of(GK_TYPE_Q4_K, GK_TYPE_Q8_K)});
    }
    return out;
}

/// Every conversion of the row, at every length it accepts up to x.size() worth testing,
/// by every kernel set: f16 / bf16 at the full length and a few shorter ones (tails),
/// q8_0 / q8_1 over the whole 32-blocks, q8_K over the whole 256-blocks.
void check_row(const std::string & name, const std::vector<float> & x) {
    static const std::vector<converters> sets = all_converters();
    const auto                           n    = static_cast<int64_t>(x.size());
    for (const converters & c : sets) {
        const std::string at = name + " [" + c.set + "]";
        auto via = [](act_from_float_fn f) { return [f](const float * x, void * y, int64_t n) { f(x, y, n); }; };
        for (int64_t m : {n, n - 1, n - 15, n - 17}) {
            if (m >= 0) {
                expect_same<uint16_t>("f16", at, x, m, 1, 2, via(c.f16), ref_f16);
                expect_same<uint16_t>("bf16", at, x, m, 1, 2, via(c.bf16), ref_bf16);
            }
        }
        expect_same<q::block_q8_0>("q8_0", at, x, n / QK * QK, QK, sizeof(q::block_q8_0), via(c.q8_0),
                                   q::quantize_row_q8_0_dot);
        expect_same<q::block_q8_1>("q8_1", at, x, n / QK * QK, QK, sizeof(q::block_q8_1), via(c.q8_1),
                                   q::quantize_row_q8_1_dot);
        expect_same<q::block_q8_K>("q8_K", at, x, n / QKK * QKK, QKK, sizeof(q::block_q8_K), via(c.q8_K),
                                   q::quantize_row_q8_K);
    }
}

/// Rows of 1..20 blocks of 256 built by `fill(row, rng)`, a few of each length.
template <class Fill> void check_rows(const char * name, uint32_t seed, Fill fill) {
    std::mt19937 rng(seed);
    for (int blocks = 1; blocks <= 20; ++blocks) {
        for (int rep = 0; rep < 3; ++rep) {
            std::vector<float> x(static_cast<size_t>(blocks) * QKK);
            fill(x, rng);
            check_row(std::string(name) + " blocks " + std::to_string(blocks) + " rep " + std::to_string(rep), x);
        }
    }
}

float normal(std::mt19937 & rng) { return std::normal_distribution<float>(0.0f, 1.0f)(rng); }
int   pick(std::mt19937 & rng, int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

TEST(ActConvert, RandomRowsAtManyScales) {
    for (int e : {-149, -140, -133, -127, -126, -120, -100, -60, -20, -8, -1, 0, 1, 8, 20, 60, 100, 120, 125, 127}) {
        check_rows(("normal * 2^" + std::to_string(e)).c_str(), 1000u + static_cast<uint32_t>(e + 200),
                   [e](std::vector<float> & x, std::mt19937 & rng) {
                       for (float & v : x) {
                           v = std::ldexp(normal(rng), e);
                       }
                   });
    }
    // Each block its own scale, uniform rather than normal values.
    check_rows("mixed scales", 7, [](std::vector<float> & x, std::mt19937 & rng) {
        for (size_t b = 0; b < x.size(); b += QK) {
            const int e = pick(rng, 260) - 140;
            for (size_t i = b; i < b + QK; ++i) {
                x[i] = std::ldexp(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng), e);
            }
        }
    });
}

TEST(ActConvert, HalvesAfterScaling) {
    // q8_0 / q8_1: max |x| = 127 * 2^j gives d = 2^j and x * id = x * 2^-j exactly, so
    // (k + 1/2) * 2^j lands on a half. q8_K: vmax = +-127 * 2^j gives iscale = -+2^-j.
    check_rows("halves", 11, [](std::vector<float> & x, std::mt19937 & rng) {
        const int j = pick(rng, 40) - 20;
        for (size_t b = 0; b < x.size(); b += QK) {
            for (size_t i = b; i < b + QK; ++i) {
                x[i] = std::ldexp(static_cast<float>(pick(rng, 254) - 127) + 0.5f, j);
            }
            x[b + static_cast<size_t>(pick(rng, QK))] = std::ldexp(pick(rng, 2) ? 127.0f : -127.0f, j);
        }
    });
    // Values a hair either side of a half, where rounding through 1 / d matters.
    check_rows("near halves", 12, [](std::vector<float> & x, std::mt19937 & rng) {
        for (size_t b = 0; b < x.size(); b += QK) {
            for (size_t i = b; i < b + QK; ++i) {
                const float h = static_cast<float>(pick(rng, 254) - 127) + 0.5f;
                x[i]          = std::nextafter(h, pick(rng, 3) == 0 ? h : (pick(rng, 2) ? 1000.0f : -1000.0f));
            }
            x[b + static_cast<size_t>(pick(rng, QK))] = pick(rng, 2) ? 127.0f : -127.0f;
        }
    });
}

TEST(ActConvert, ZerosAndSingleNonzero) {
    check_rows("all zero", 21, [](std::vector<float> & x, std::mt19937 & rng) {
        for (float & v : x) {
            v = pick(rng, 2) ? 0.0f : -0.0f;
        }
    });
    check_rows("single nonzero", 22, [](std::vector<float> & x, std::mt19937 & rng) {
        for (float & v : x) {
            v = pick(rng, 2) ? 0.0f : -0.0f;
        }
        // one nonzero in some blocks of 32, some whole 256-blocks left zero
        for (size_t b = 0; b < x.size(); b += QK) {
            if (pick(rng, 3) == 0) {
                x[b + static_cast<size_t>(pick(rng, QK))] = std::ldexp(normal(rng), pick(rng, 80) - 40);
            }
        }
    });
}

TEST(ActConvert, MaximumAtEveryPositionBothSigns) {
    std::mt19937 rng(31);
    for (int pos = 0; pos < QKK; ++pos) {
        for (float sign : {1.0f, -1.0f}) {
            std::vector<float> x(2 * QKK);
            for (float & v : x) {
                v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
            }
            x[static_cast<size_t>(pos)]       = 3.0f * sign;
            x[static_cast<size_t>(QKK + pos)] = -7.5f * sign;
            check_row("max at " + std::to_string(pos) + " sign " + std::to_string(sign), x);
        }
    }
}

TEST(ActConvert, RepeatedMaximumOppositeSigns) {
    std::mt19937 rng(41);
    for (int rep = 0; rep < 400; ++rep) {
        std::vector<float> x(QKK * (1 + static_cast<size_t>(pick(rng, 3))));
        const float        a = std::ldexp(1.0f + static_cast<float>(pick(rng, 1000)) / 1000.0f, pick(rng, 60) - 30);
        for (float & v : x) {
            v = a * std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        }
        for (size_t b = 0; b < x.size(); b += QKK) {
            const int copies = 2 + pick(rng, 4);
            for (int c = 0; c < copies; ++c) {
                x[b + static_cast<size_t>(pick(rng, QKK))] = pick(rng, 2) ? a : -a;
            }
            // and a tie across the two halves of a q8_0 block with opposite signs
            const size_t b32 = b + static_cast<size_t>(QK * pick(rng, QKK / QK));
            x[b32 + static_cast<size_t>(pick(rng, QK / 2))]          = -2.0f * a;
            x[b32 + QK / 2 + static_cast<size_t>(pick(rng, QK / 2))] = 2.0f * a;
        }
        check_row("repeated max " + std::to_string(rep), x);
    }
}

TEST(ActConvert, Subnormals) {
    check_rows("subnormal bits", 51, [](std::vector<float> & x, std::mt19937 & rng) {
        for (float & v : x) {
            v = from_bits((std::uniform_int_distribution<uint32_t>(0, 0x7FFFFF)(rng)) | (pick(rng, 2) ? 0x80000000u : 0u));
        }
    });
    // Normals small enough that 1 / d or -127 / vmax overflows to Inf, with zeros beside
    // them (0 * Inf is NaN: q8_0 writes 0, q8_K -128), and subnormals mixed in.
    check_rows("tiny with zeros", 52, [](std::vector<float> & x, std::mt19937 & rng) {
        for (float & v : x) {
            switch (pick(rng, 4)) {
                case 0: v = pick(rng, 2) ? 0.0f : -0.0f; break;
                case 1: v = from_bits(std::uniform_int_distribution<uint32_t>(1, 0x7FFFFF)(rng)); break;
                default: v = std::ldexp(normal(rng), -126 - pick(rng, 6) + pick(rng, 10)); break;
            }
        }
    });
}

TEST(ActConvert, NanAndInfinity) {
    const uint32_t specials[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                                 0xFFBFFFFFu, 0x7FE00000u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC0FFFFu};
    check_rows("nan and inf", 61, [&](std::vector<float> & x, std::mt19937 & rng) {
        for (float & v : x) {
            v = std::ldexp(normal(rng), pick(rng, 20) - 10);
        }
        for (size_t b = 0; b < x.size(); b += QK) {
            const int k = pick(rng, 4);  // 0..3 specials in this block of 32
            for (int c = 0; c < k; ++c) {
                x[b + static_cast<size_t>(pick(rng, QK))] = from_bits(specials[pick(rng, std::size(specials))]);
            }
        }
    });
    // Finite values beside overflowing products: huge values with small iscale.
    check_rows("near max float", 62, [](std::vector<float> & x, std::mt19937 & rng) {
        for (float & v : x) {
            v = std::numeric_limits<float>::max() * std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        }
    });
}

TEST(ActConvert, HalfPrecisionBoundaries) {
    // Every upper 16 bits with low halves at and around the rounding points of bf16 (bit
    // 15) and f16 (bit 12 for normals; subnormal f16 results round at higher bits, which
    // the upper halves sweep), plus random low halves.
    std::mt19937                 rng(71);
    const std::vector<uint32_t>  lows = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000,
                                         0x7FFF, 0x8000, 0x8001, 0xFFFF, 0xE000};
    std::vector<float>           x;
    for (uint32_t hi = 0; hi < 0x10000; ++hi) {
        for (uint32_t lo : lows) {
            x.push_back(from_bits(hi << 16 | lo));
        }
        x.push_back(from_bits(hi << 16 | (rng() & 0xFFFF)));
    }
    // f16 limits: 65504 (max), 65519.99.. (still 65504), 65520 (Inf), the subnormal edges
    for (float v : {65504.0f, 65519.996f, 65520.0f, 65536.0f, 6.1035156e-05f, 6.1035153e-05f, 5.9604645e-08f,
                    2.9802322e-08f, 2.9802326e-08f, 8.940697e-08f}) {
        x.push_back(v);
        x.push_back(-v);
        x.push_back(std::nextafter(v, 0.0f));
        x.push_back(std::nextafter(v, 1e30f));
    }
    while (x.size() % 16 != 3) {
        x.push_back(1.0f);
    }
    const auto      n = static_cast<int64_t>(x.size());
    std::vector<uint16_t> a(x.size()), b(x.size());
    cpu::convert_row_f16(x.data(), a.data(), n);
    ref_f16(x.data(), b.data(), n);
    for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(a[i], b[i]) << "f16 of 0x" << std::hex << std::bit_cast<uint32_t>(x[i]);
    }
    cpu::convert_row_bf16(x.data(), a.data(), n);
    ref_bf16(x.data(), b.data(), n);
    for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(a[i], b[i]) << "bf16 of 0x" << std::hex << std::bit_cast<uint32_t>(x[i]);
    }
}

TEST(ActConvert, ShortAndOddLengths) {
    std::mt19937 rng(81);
    for (int64_t n = 0; n <= 300; ++n) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float & v : x) {
            v = pick(rng, 50) == 0 ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(normal(rng), pick(rng, 40) - 20);
        }
        check_row("length " + std::to_string(n), x);
    }
}

// ---- timing report (GK_ACT_CONVERT_REPORT=1) -----------------------------------------

template <class F> double ns_per_call(F f) {
    using clock = std::chrono::steady_clock;
    int    reps = 64;
    double best = 1e30;
    for (int round = 0; round < 7; ++round) {
        const auto t0 = clock::now();
        for (int r = 0; r < reps; ++r) {
            f();
        }
        const double ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / reps;
        best            = std::min(best, ns);
        if (ns * reps < 2e6) {
            reps *= 2;
        }
    }
    return best;
}

/// The widening back: every f16 and bf16 pattern (NaNs of every payload, subnormals,
/// infinities) through each set's to_float, bit for bit against fp16_to_fp32 /
/// bf16_to_fp32, at every offset of a vector (rows of 65536 and of 65536 - k).
TEST(ActConvert, WideningEveryPattern) {
    std::vector<uint16_t> all(65536);
    for (size_t i = 0; i < all.size(); ++i) {
        all[i] = static_cast<uint16_t>(i);
    }
    for (const gk::cpu::kernel_set * ks : gk::cpu::runnable_kernel_sets()) {
        for (gk_type type : {GK_TYPE_F16, GK_TYPE_BF16}) {
            const gk::cpu::vec_dot_traits * t = ks->vec_dot(type);
            ASSERT_TRUE(t != nullptr && t->to_float != nullptr) << ks->name << " " << gk_type_name(type);
            for (size_t off : {0, 1, 7, 15}) {
                const auto         n = static_cast<int64_t>(all.size() - off);
                std::vector<float> y(static_cast<size_t>(n));
                t->to_float(all.data() + off, y.data(), n);
                for (int64_t i = 0; i < n; ++i) {
                    const uint16_t h    = all[off + static_cast<size_t>(i)];
                    const float    want = type == GK_TYPE_F16 ? gk::fp16_to_fp32(h) : gk::bf16_to_fp32(h);
                    ASSERT_EQ(std::bit_cast<uint32_t>(y[static_cast<size_t>(i)]), std::bit_cast<uint32_t>(want))
                        << ks->name << " " << gk_type_name(type) << " pattern " << std::hex << h;
                }
            }
        }
        const gk::cpu::vec_dot_traits * f = ks->vec_dot(GK_TYPE_F32);
        ASSERT_TRUE(f != nullptr && f->to_float != nullptr);
        const std::vector<float> x = {1.5f, -0.0f, std::numeric_limits<float>::quiet_NaN()};
        std::vector<float>       y(x.size());
        f->to_float(x.data(), y.data(), static_cast<int64_t>(x.size()));
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0);
        EXPECT_EQ(ks->vec_dot(GK_TYPE_Q4_0)->to_float, nullptr);
    }
}

TEST(ActConvert, TimingReport) {
    if (!std::getenv("GK_ACT_CONVERT_REPORT")) {
        GTEST_SKIP() << "set GK_ACT_CONVERT_REPORT=1 for ns per row of 4096";
    }
    constexpr int64_t  n = 4096;
    std::mt19937       rng(5);
    std::vector<float> x(n);
    for (float & v : x) {
        v = normal(rng);
    }
    std::vector<uint8_t> buf(n * 4);
    auto report = [&](const char * what, auto fast, auto ref) {
        const double f = ns_per_call(fast);
        const double r = ns_per_call(ref);
        std::printf("  %-5s codec %8.0f ns  vector %8.0f ns  x%.1f\n", what, r, f, r / f);
    };
    std::printf("ns per row of 4096 (%s build, best of 7)\n", gk::simd::compiled_features().level);
    auto * h  = reinterpret_cast<uint16_t *>(buf.data());
    auto * b0 = reinterpret_cast<q::block_q8_0 *>(buf.data());
    auto * b1 = reinterpret_cast<q::block_q8_1 *>(buf.data());
    auto * bk = reinterpret_cast<q::block_q8_K *>(buf.data());
    const float * xs = x.data();
    report("f16", [&] { cpu::convert_row_f16(xs, h, n); }, [&] { ref_f16(xs, h, n); });
    report("bf16", [&] { cpu::convert_row_bf16(xs, h, n); }, [&] { ref_bf16(xs, h, n); });
    report("q8_0", [&] { cpu::convert_row_q8_0(xs, b0, n); }, [&] { q::quantize_row_q8_0_dot(xs, b0, n); });
    report("q8_1", [&] { cpu::convert_row_q8_1(xs, b1, n); }, [&] { q::quantize_row_q8_1_dot(xs, b1, n); });
    report("q8_K", [&] { cpu::convert_row_q8_K(xs, bk, n); }, [&] { q::quantize_row_q8_K(xs, bk, n); });
}

} // namespace
