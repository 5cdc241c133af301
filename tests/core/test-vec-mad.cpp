// test-vec-mad: vec_mad (src/gk/cpu/vec_mad.h), attention's weighted sum of value rows, in
// every kernel set the build has and the host runs, bit for bit against the scalar loop
//     for j < n: if w[j] != 0: for i < d: y[i] = y[i] + w[j] * v_j[i]
// for f32, f16 and bf16 rows of every length 1..70 and the head sizes 128, 256 and 576
// (every vector tail, partial and whole chunks of registers), with rows spaced wider than
// their length, weights of 0 whose rows hold NaN (they must not be read into the sum), a
// y that starts nonzero, and values at scales where rounding the product apart from the
// sum shows.
#include "gk/cpu/kernel_set.h"
#include "gk/cpu/vec_mad.h"
#include "quant/codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

/// The scalar loop of vec_mad.h on rows already widened to f32.
void reference(float * y, const float * w, int64_t n, const std::vector<std::vector<float>> & rows, int64_t d) {
    for (int64_t j = 0; j < n; ++j) {
        if (w[j] != 0.0f) {
            for (int64_t i = 0; i < d; ++i) {
                y[i] = y[i] + w[j] * rows[static_cast<size_t>(j)][static_cast<size_t>(i)];
            }
        }
    }
}

TEST(VecMad, EverySetIsTheScalarLoop) {
    std::vector<int64_t> lengths;
    for (int64_t d = 1; d <= 70; ++d) {
        lengths.push_back(d);
    }
    for (int64_t d : {128, 256, 576}) {
        lengths.push_back(d);
    }
    int checked = 0;
    for (const gk::cpu::kernel_set * ks : gk::cpu::runnable_kernel_sets()) {
        for (gk_type type : {GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_BF16}) {
            const gk::cpu::vec_mad_fn mad = ks->vec_mad(type);
            ASSERT_NE(mad, nullptr) << ks->name << " " << gk_type_name(type);
            const auto *                    traits = gk::quant::get_type_traits(type);
            std::mt19937                    rng(7);
            std::normal_distribution<float> g(0.0f, 1.0f);
            for (int64_t d : lengths) {
                const int64_t                   n      = 1 + static_cast<int64_t>(rng() % 9);
                const size_t                    stride = gk_row_size(type, d) + 2 * gk_type_size(type) * (rng() % 3);
                std::vector<uint8_t>            v(stride * static_cast<size_t>(n));
                std::vector<std::vector<float>> rows(static_cast<size_t>(n),
                                                     std::vector<float>(static_cast<size_t>(d)));
                std::vector<float>              w(static_cast<size_t>(n));
                for (int64_t j = 0; j < n; ++j) {
                    w[static_cast<size_t>(j)] = rng() % 4 == 0
                                                    ? 0.0f
                                                    : g(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10);
                    std::vector<float> f(static_cast<size_t>(d));
                    for (float & x : f) {
                        x = w[static_cast<size_t>(j)] == 0.0f
                                ? NAN
                                : g(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10);
                    }
                    traits->from_float(f.data(), v.data() + static_cast<size_t>(j) * stride, d, nullptr);
                    traits->to_float(v.data() + static_cast<size_t>(j) * stride, rows[static_cast<size_t>(j)].data(),
                                     d);
                }
                std::vector<float> y0(static_cast<size_t>(d));
                for (float & x : y0) {
                    x = g(rng);
                }
                std::vector<float> want = y0, got = y0;
                reference(want.data(), w.data(), n, rows, d);
                mad(got.data(), w.data(), n, v.data(), stride, d);
                for (int64_t i = 0; i < d; ++i) {
                    ASSERT_EQ(std::bit_cast<uint32_t>(got[static_cast<size_t>(i)]),
                              std::bit_cast<uint32_t>(want[static_cast<size_t>(i)]))
                        << ks->name << " " << gk_type_name(type) << " d=" << d << " n=" << n << " i=" << i;
                }
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 0);
}

}  // namespace
