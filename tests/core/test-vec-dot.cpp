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
#include "gk/cpu/kernel_set.h"
#include "gk/cpu/simd.h"
#include "gk/cpu/vec_dot.h"
#include "gk/cpu/vec_dot_impl.h"
#include "weight_rows.h"
#include "quant/codec.h"
#include "quant/fp4.h"
#include "quant/iq_quants.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"
#include "quant/low_bit.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <vector>

namespace {

using gk::cpu::kernel_set;
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

/// Bit-identical, except that any two NaNs count as equal: the sign and payload of a NaN
/// made by Inf - Inf or 0 * Inf are the machine's choice (x86 and Arm differ).
bool same_bits(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

/// FNV-1a over result bits: printed so that builds at different SIMD levels can be
/// compared by eye (the order does not depend on the level where the target has FMA).
struct bits_hash {
    uint64_t h = 1469598103934665603ull;
    void add(float f) {
        const uint32_t b = std::isnan(f) ? 0x7FC00000u : std::bit_cast<uint32_t>(f);
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

/// Every kernel set this build has and the host runs (kernel_set.h), best first: each test
/// below sweeps all of them.
std::span<const kernel_set * const> sets() { return gk::cpu::runnable_kernel_sets(); }

TEST(VecDot, SimdLevel) {
    for (const kernel_set * ks : sets()) {
        const auto & f = ks->compiled;
        std::printf("kernel set %-7s AVX512 = %d | AVX2 = %d | FMA = %d | F16C = %d | VNNI = %d | NEON = %d\n",
                    ks->name, f.avx512, f.avx2, f.fma, f.f16c, f.vnni, f.neon);
    }
    std::printf("active: %s\n", gk::cpu::active_kernel_set().name);
    EXPECT_FALSE(sets().empty());
}

TEST(VecDot, FloatDotsMatchTwinAndTruth) {
    for (const kernel_set * ks : sets()) {
        SCOPED_TRACE(ks->name);
        std::mt19937 rng(1234);
        for (gk_type type : {GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_BF16}) {
            const vec_dot_traits * t = ks->vec_dot(type);
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
                if (t->vec_dot2) {  // the pair form: y's row after this one, each with its own dot's bits
                    const size_t         rb = gk_row_size(type, n);  // x holds a spare byte after the row
                    std::vector<uint8_t> two(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(rb));
                    two.insert(two.end(), y.begin(), y.end());
                    float s2[2] = {NAN, NAN}, s_yy = NAN;
                    t->vec_dot2(n, s2, two.data(), rb, y.data());
                    t->vec_dot(n, &s_yy, y.data(), y.data());
                    ASSERT_TRUE(same_bits(s2[0], s) && same_bits(s2[1], s_yy))
                        << gk_type_name(type) << " vec_dot2 n=" << n << ": " << s2[0] << ", " << s2[1] << " vs " << s
                        << ", " << s_yy;
                }

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
            std::printf("%-7s %-5s path %-12s twin: bit-identical; worst |dot - truth| / sum|xy| = %.2e; "
                        "results %016llx\n",
                        ks->name, gk_type_name(type), gk::cpu::dot_path_name(t->path), worst,
                        static_cast<unsigned long long>(hash.h));
        }
    }
}

/// The bf16 order is VDPBF16PS's (vec_dot_bf16.cpp): cases whose value that instruction
/// fixed on this project's AMD Zen 4 (each is also what Intel's pseudocode gives), on every
/// kernel set and the twin. A pair's odd element is added first, a result whose 24-bit
/// rounding (unbounded exponent) is below 2^-126 is flushed, a subnormal input reads as 0.
TEST(VecDot, Bf16FollowsVdpbf16ps) {
    const float m = 0x1p-126f;
    struct element {
        int64_t i;
        float   x, y;  // bf16 values
    };
    struct edge {
        const char *                   what;
        int64_t                        n;  // negative: -n elements, all of them the first one
        std::initializer_list<element> nonzero;
        float                          want;
    } cases[] = {
        {"2^-126 - 2^-151 rounds up to 2^-126: kept", 2, {{1, 0x1p-63f, 0x1p-63f}, {0, 0x1p-75f, -0x1p-76f}}, m},
        {"2^-126 - 2^-150 is below 2^-126 at 24 bits: flushed", 2, {{1, 0x1p-63f, 0x1p-63f}, {0, 0x1p-75f, -0x1p-75f}}, 0.0f},
        {"2^-126 - 2^-149: flushed", 2, {{1, 0x1p-63f, 0x1p-63f}, {0, 0x1p-75f, -0x1p-74f}}, 0.0f},
        {"2^-126 - 2^-200: kept", 2, {{1, 0x1p-63f, 0x1p-63f}, {0, 0x1p-100f, -0x1p-100f}}, m},
        // every element -2^-70 * 2^-70: each of the 64 partial sums is flushed to -0, and
        // (-0) + (-0) stays -0 through the combination (one +0 anywhere would make it +0)
        {"a tiny negative result is a negative zero", -128, {{0, -0x1p-70f, 0x1p-70f}}, -0.0f},
        {"a subnormal input reads as zero", 2, {{1, 1.0f, 1.0f}, {0, 0x1p-133f, 0x1p120f}}, 1.0f},
        // lane 0 holds pairs 0 and 64: 1, then (1 + 2^-24 -> 1) + 2^-23; the even element
        // first would give (1 + 2^-23) + 2^-24 -> 1 + 2^-22
        {"the odd element first", 130, {{1, 1.0f, 1.0f}, {129, 0x1p-24f, 1.0f}, {128, 0x1p-23f, 1.0f}}, 1.0f + 0x1p-23f},
        {"odd length: the last pair's odd element is a zero", 129, {{1, 1.0f, 1.0f}, {128, 0x1p-23f, 1.0f}}, 1.0f + 0x1p-23f},
    };
    const auto bits = [](float f) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16); };
    for (const kernel_set * ks : sets()) {
        const vec_dot_traits * t = ks->vec_dot(GK_TYPE_BF16);
        ASSERT_NE(t, nullptr);
        for (const edge & e : cases) {
            const int64_t         n = std::abs(e.n);
            std::vector<uint16_t> x(static_cast<size_t>(n)), y(x.size());
            for (const element & el : e.nonzero) {
                x[static_cast<size_t>(el.i)] = bits(el.x);
                y[static_cast<size_t>(el.i)] = bits(el.y);
            }
            if (e.n < 0) {
                std::fill(x.begin(), x.end(), x[0]);
                std::fill(y.begin(), y.end(), y[0]);
            }
            float s = NAN, s_twin = NAN;
            t->vec_dot(n, &s, x.data(), y.data());
            t->vec_dot_scalar(n, &s_twin, x.data(), y.data());
            EXPECT_TRUE(same_bits(s, e.want)) << ks->name << ": " << e.what << ": " << s;
            EXPECT_TRUE(same_bits(s_twin, e.want)) << "twin: " << e.what << ": " << s_twin;
        }
    }
}

/// Random bf16 bit patterns (every finite exponent, subnormals, signed zeros) against the
/// twin on every kernel set: on a host with AVX512-BF16 this checks the instruction itself
/// against the order written in vec_dot_bf16.cpp.
TEST(VecDot, Bf16RandomBitsMatchTwin) {
    for (const kernel_set * ks : sets()) {
        SCOPED_TRACE(ks->name);
        const vec_dot_traits * t = ks->vec_dot(GK_TYPE_BF16);
        std::mt19937           rng(77);
        for (int trial = 0; trial < 3000; ++trial) {
            const int64_t n = 1 + static_cast<int64_t>(rng() % 300);
            // narrow exponent bands make cancellation and tiny sums likely; wide ones cover all
            const uint32_t band = trial % 3 == 0 ? 254u : trial % 3 == 1 ? 12u : 40u;
            const uint32_t low  = trial % 3 == 1 ? 56u : 1u;
            std::vector<uint8_t> x(static_cast<size_t>(2 * n)), y(x.size());
            for (std::vector<uint8_t> * row : {&x, &y}) {
                for (int64_t i = 0; i < n; ++i) {
                    uint32_t e = rng() % 16 == 0 ? 0u : low + rng() % band;  // 0: zero or subnormal
                    const uint16_t h = static_cast<uint16_t>((rng() & 0x8000u) | (std::min(e, 254u) << 7) | (rng() & 0x7Fu));
                    std::memcpy(row->data() + 2 * i, &h, 2);
                }
            }
            float s = NAN, s_twin = NAN;
            t->vec_dot(n, &s, x.data(), y.data());
            t->vec_dot_scalar(n, &s_twin, x.data(), y.data());
            ASSERT_TRUE(same_bits(s, s_twin)) << "trial " << trial << " n=" << n << ": " << s << " vs " << s_twin;
        }
    }
}

/// A dot fed with a zero-length row writes +0 (every output is written).
TEST(VecDot, EmptyRowWritesZero) {
    for (const kernel_set * ks : sets()) {
        for (gk_type type : {GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_BF16}) {
            const vec_dot_traits * t = ks->vec_dot(type);
            ASSERT_NE(t, nullptr);
            float s = NAN;
            t->vec_dot(0, &s, nullptr, nullptr);
            EXPECT_TRUE(same_bits(s, 0.0f)) << ks->name << " " << gk_type_name(type);
        }
    }
}

// ---- integer path -------------------------------------------------------------


/// An activation row of n values with blocks of varied character: gaussian at random
/// scales, all-zero blocks, constant blocks (every quant at the extreme) and outliers.
std::vector<float> varied_activations(std::mt19937 & rng, int64_t n) {
    std::vector<float> a = gaussian(rng, n);
    for (int64_t b = 0; b < n / 32; ++b) {
        const unsigned kind = rng() % 8;
        float * p = a.data() + 32 * b;
        const float scale = std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
        for (int j = 0; j < 32; ++j) {
            p[j] = kind == 0 ? 0.0f : kind == 1 ? (b % 2 ? -scale : scale) : p[j] * scale;
        }
        if (kind == 2) {
            p[rng() % 32] = 1000.0f * scale;
        }
    }
    return a;
}

/// Every byte pattern a weight quant can take at the extremes: all 0x00, 0xFF, 0x80, 0x7F.
std::vector<uint8_t> constant_weight(gk_type type, int64_t n, uint8_t byte, std::mt19937 & rng) {
    std::vector<uint8_t> w(gk_row_size(type, n), byte);
    fix_scales(type, w, rng);
    return w;
}

/// For q8_K activations: put -128 (legal in q8_K) into some quants, keeping bsums true.
void poke_q8_K_extremes(std::vector<uint8_t> & a, int64_t n, std::mt19937 & rng) {
    auto * blocks = reinterpret_cast<gk::quant::block_q8_K *>(a.data());
    for (int64_t b = 0; b < n / gk::quant::QK_K; ++b) {
        gk::quant::block_q8_K & y = blocks[b];
        for (int k = 0; k < 8; ++k) {
            y.qs[rng() % gk::quant::QK_K] = -128;
        }
        for (int g = 0; g < gk::quant::QK_K / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) {
                sum += y.qs[16 * g + j];
            }
            y.bsums[g] = static_cast<int16_t>(sum);
        }
    }
}

bool is_int_path(const vec_dot_traits & t) {
    return t.path == gk::cpu::dot_path::int_simd || t.path == gk::cpu::dot_path::int_scalar;
}

/// Every integer kernel against its scalar twin over random blocks (any bytes in the
/// weight quants and scales; activations from the dot's own converter): bit for bit.
/// ... in every kernel set; and every set whose level has FMA gives the same bits as every
/// other such set (the order does not depend on the vector width: vec_dot.h).
TEST(VecDot, IntegerDotsMatchTwin) {
    std::vector<std::pair<const kernel_set *, std::vector<uint64_t>>> results;  // per set: a hash per type
    for (const kernel_set * ks : sets()) {
        SCOPED_TRACE(ks->name);
        std::vector<uint64_t> hashes(GK_TYPE_COUNT, 0);
        std::mt19937 rng(99);
        int checked_types = 0;
        for (int id = 0; id < GK_TYPE_COUNT; ++id) {
            const auto type = static_cast<gk_type>(id);
            const vec_dot_traits * t = ks->vec_dot(type);
            if (!t || !is_int_path(*t)) {
                continue;
            }
            ++checked_types;
            const int64_t blck = std::max(gk_blck_size(type), gk_blck_size(t->vec_dot_type));
            std::vector<int64_t> counts;
            for (int64_t nb = 1; nb <= (blck == 32 ? 70 : 12); ++nb) {
                counts.push_back(nb);
            }
            counts.push_back(blck == 32 ? 350 : 44);
            bits_hash hash;
            int64_t              dots = 0, pairs = 0;
            std::vector<uint8_t> prev;  // the previous draw's weight row
            for (int64_t nb : counts) {
                const int64_t n = nb * blck;
                for (int draw = 0; draw < 6; ++draw) {
                    std::vector<uint8_t> w(gk_row_size(type, n));
                    if (draw < 4) {
                        for (uint8_t & byte : w) {
                            byte = static_cast<uint8_t>(rng());
                        }
                        fix_scales(type, w, rng);
                    } else {
                        w = constant_weight(type, n, draw == 4 ? 0xFF : 0x80, rng);
                    }
                    std::vector<uint8_t> a = encode_act(*t, varied_activations(rng, n));
                    if (t->vec_dot_type == GK_TYPE_Q8_K && draw % 2) {
                        poke_q8_K_extremes(a, n, rng);
                    }
                    float s = NAN, s_twin = NAN;
                    t->vec_dot(n, &s, w.data(), a.data());
                    t->vec_dot_scalar(n, &s_twin, w.data(), a.data());
                    ASSERT_TRUE(same_bits(s, s_twin))
                        << gk_type_name(type) << " n=" << n << " draw " << draw << ": " << s << " vs " << s_twin;
                    hash.add(s);
                    ++dots;
                    if (t->vec_dot2) {
                        // the pair form: this row after the previous draw's (or itself), each
                        // with its single dot's bits
                        const std::vector<uint8_t> & first = prev.size() == w.size() ? prev : w;
                        std::vector<uint8_t>         two(first);
                        two.insert(two.end(), w.begin(), w.end());
                        float s2[2] = {NAN, NAN}, s_first = NAN;
                        t->vec_dot2(n, s2, two.data(), w.size(), a.data());
                        t->vec_dot(n, &s_first, first.data(), a.data());
                        ASSERT_TRUE(same_bits(s2[0], s_first) && same_bits(s2[1], s))
                            << gk_type_name(type) << " vec_dot2 n=" << n << " draw " << draw << ": " << s2[0] << ", "
                            << s2[1] << " vs " << s_first << ", " << s;
                        ++pairs;
                    }
                    prev = w;
                }
            }
            std::printf(
                "%-7s %-7s path %-10s twin: bit-identical over %lld random rows (two-row form: %lld pairs); "
                "results %016llx\n",
                ks->name, gk_type_name(type), gk::cpu::dot_path_name(t->path), static_cast<long long>(dots),
                static_cast<long long>(pairs), static_cast<unsigned long long>(hash.h));
            hashes[static_cast<size_t>(id)] = hash.h;
        }
        EXPECT_GT(checked_types, 0);
        results.emplace_back(ks, hashes);
    }
    const std::pair<const kernel_set *, std::vector<uint64_t>> * first_fma = nullptr;
    for (const auto & r : results) {
        if (!r.first->compiled.fma) {
            continue;
        }
        if (!first_fma) {
            first_fma = &r;
            continue;
        }
        for (int id = 0; id < GK_TYPE_COUNT; ++id) {
            EXPECT_EQ(r.second[static_cast<size_t>(id)], first_fma->second[static_cast<size_t>(id)])
                << gk_type_name(static_cast<gk_type>(id)) << ": kernel sets " << r.first->name << " and "
                << first_fma->first->name << " give different bits";
        }
    }
}

/// The kernels' word-parallel q4_K / q5_K scale unpack against the codec's helper:
/// 96 bits are too many to enumerate, so random patterns plus all-zero and all-one.
TEST(VecDot, K4ScaleUnpackMatchesCodec) {
    std::mt19937 rng(5);
    for (int k = 0; k < 20002; ++k) {
        uint8_t packed[gk::quant::K_SCALE_SIZE];
        for (uint8_t & b : packed) {
            b = k == 0 ? 0x00 : k == 1 ? 0xFF : static_cast<uint8_t>(rng());
        }
        const gk::cpu::detail::k4_scales all = gk::cpu::detail::unpack_k4_all(packed);
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            gk::quant::unpack_scale_min_k4(j, packed, sc, m);
            ASSERT_EQ((all.sc >> (8 * j)) & 0xFF, sc) << "pattern " << k << " sub-block " << j;
            ASSERT_EQ((all.m >> (8 * j)) & 0xFF, m) << "pattern " << k << " sub-block " << j;
        }
    }
}

/// q4_1 / q5_1 take each block's activation sum from q8_1's stored f16 s, as ggml does,
/// not from its quants: their dot may differ from the decoded rows' by the sum over blocks
/// of |m| * |s - d * sum(qs)|, which this returns (0 for every other type).
double offset_allowance(gk_type type, const std::vector<uint8_t> & w, const std::vector<uint8_t> & a, int64_t n) {
    if (type != GK_TYPE_Q4_1 && type != GK_TYPE_Q5_1) {
        return 0.0;
    }
    const auto * y = reinterpret_cast<const gk::quant::block_q8_1 *>(a.data());
    double       r = 0.0;
    for (int64_t b = 0; b < n / 32; ++b) {
        const gk::fp16_t m = type == GK_TYPE_Q4_1 ? reinterpret_cast<const gk::quant::block_q4_1 *>(w.data())[b].m
                                                  : reinterpret_cast<const gk::quant::block_q5_1 *>(w.data())[b].m;
        int sum = 0;
        for (int8_t q : y[b].qs) {
            sum += q;
        }
        const double exact = static_cast<double>(gk::fp16_to_fp32(y[b].d)) * sum;
        r += std::fabs(static_cast<double>(gk::fp16_to_fp32(m))) * std::fabs(gk::fp16_to_fp32(y[b].s) - exact);
    }
    return r;
}

/// Every quantized weight type: encoder-made weights, gaussian activations. The dot must
/// equal its twin, sit within rounding of the exact dot of the decoded rows, and within
/// the activation quantisation's loss of the truth with the original activations.
TEST(VecDot, EveryQuantizedDotAgainstTruth) {
    for (const kernel_set * ks : sets()) {
        SCOPED_TRACE(ks->name);
        std::mt19937 rng(2024);
        std::printf("kernel set %s\n", ks->name);
        std::printf("%-8s %-10s %-6s %12s %12s %12s\n", "type", "path", "act", "err/sum|wa|", "vs-rounding",
                    "vs-act-loss");
        for (int id = 0; id < GK_TYPE_COUNT; ++id) {
            const auto type = static_cast<gk_type>(id);
            const vec_dot_traits * t = ks->vec_dot(type);
            if (!t || !gk_is_quantized(type)) {
                continue;
            }
            const gk::quant::type_traits * codec = gk::quant::get_type_traits(type);
            if (!codec || !codec->from_float) {
                std::printf("%-8s %-10s (no encoder in the codec: truth check skipped)\n", gk_type_name(type),
                            gk::cpu::dot_path_name(t->path));
                continue;
            }
            double worst_rel = 0, worst_round = 0, worst_loss = 0;
            for (int64_t n : {256, 768, 4096}) {
                const std::vector<float> wsrc = gaussian(rng, n);
                std::vector<uint8_t>     w(gk_row_size(type, n));
                ASSERT_GT(gk::quant::quantize_rows(type, wsrc.data(), w.data(), 1, n, nullptr), 0u)
                    << gk_type_name(type);
                const std::vector<float>   af = gaussian(rng, n, 0.5f);
                const std::vector<uint8_t> a  = encode_act(*t, af);
                std::vector<float>         wd(static_cast<size_t>(n)), ad(static_cast<size_t>(n));
                ASSERT_TRUE(gk::quant::dequantize_rows(type, w.data(), wd.data(), 1, n));
                ASSERT_TRUE(gk::quant::dequantize_rows(t->vec_dot_type, a.data(), ad.data(), 1, n));

                float s = NAN, s_twin = NAN;
                t->vec_dot(n, &s, w.data(), a.data());
                t->vec_dot_scalar(n, &s_twin, w.data(), a.data());
                ASSERT_TRUE(same_bits(s, s_twin)) << gk_type_name(type) << " n=" << n;

                double exact_deq = 0, mag_deq = 0, truth = 0, mag = 0, loss = 0;
                for (int64_t i = 0; i < n; ++i) {
                    exact_deq += static_cast<double>(wd[i]) * ad[i];
                    mag_deq += std::fabs(static_cast<double>(wd[i]) * ad[i]);
                    truth += static_cast<double>(wd[i]) * af[i];
                    mag += std::fabs(static_cast<double>(wd[i]) * af[i]);
                    loss += std::fabs(static_cast<double>(wd[i])) * std::fabs(static_cast<double>(af[i]) - ad[i]);
                }
                // Rounding: at most n/32 fused steps per chain plus the decodes' own roundings;
                // a factor 4 covers the scale products and the K-quant mins term.
                const double rounding =
                    4.0 * static_cast<double>(n / 32 / 4 + 8) * u32 * mag_deq + offset_allowance(type, w, a, n);
                ASSERT_LE(std::fabs(s - exact_deq), rounding) << gk_type_name(type) << " n=" << n;
                ASSERT_LE(std::fabs(s - truth), loss + rounding) << gk_type_name(type) << " n=" << n;
                worst_rel   = std::max(worst_rel, std::fabs(s - truth) / mag);
                worst_round = std::max(worst_round, std::fabs(s - exact_deq) / rounding);
                worst_loss  = std::max(worst_loss, std::fabs(s - truth) / (loss + rounding));
            }
            std::printf("%-8s %-10s %-6s %12.2e %12.3f %12.3f\n", gk_type_name(type), gk::cpu::dot_path_name(t->path),
                        gk_type_name(t->vec_dot_type), worst_rel, worst_round, worst_loss);
        }
    }
    std::printf("err/sum|wa|: |dot - truth| / sum|w a| with the original f32 activations;\n"
                "vs-rounding: |dot - exact dot of the decoded rows| / rounding allowance (<= 1);\n"
                "vs-act-loss: |dot - truth| / (sum|w| |a - dequant(a)| + allowance) (<= 1).\n");
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
        const vec_dot_traits * t = gk::cpu::get_vec_dot_traits(type);
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
