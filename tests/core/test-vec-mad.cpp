// test-vec-mad: vec_mad (src/gk/cpu/vec_mad.h), attention's weighted sum of value rows, in
// every kernel set the build has and the host runs, bit for bit against the scalar loop
//     for q < rows: for j < n[q]: if w_q[j] != 0: for i < d: y_q[i] = y_q[i] + w_q[j] * v_j[i]
// for f32, f16 and bf16 rows of every length 1..70 and the head sizes 128, 256 and 576
// (every vector tail, partial and whole chunks of registers), 1 to 8 output rows with
// their own counts of value rows, rows spaced wider than their length, weights of 0
// whose rows hold NaN (they must not be read into the sum), tiny weights (products in
// the subnormal range, which the kernels take through double), a y that starts nonzero,
// and values at scales where rounding the product apart from the sum shows.
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

/// The scalar loop of vec_mad.h on value rows already widened to f32.
void reference(float * y, size_t ldy, const float * w, size_t ldw, const int64_t * n, int rows,
               const std::vector<std::vector<float>> & v, int64_t d) {
    for (int q = 0; q < rows; ++q) {
        for (int64_t j = 0; j < n[q]; ++j) {
            const float wq = w[q * ldw + j];
            if (wq != 0.0f) {
                for (int64_t i = 0; i < d; ++i) {
                    y[q * ldy + i] = y[q * ldy + i] + wq * v[static_cast<size_t>(j)][static_cast<size_t>(i)];
                }
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
            const auto scaled = [&] { return g(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10); };
            // several cases for the rows of half a register or less (two output rows to a
            // register at AVX-512, blocks of 8 value rows: counts past 8 and 16)
            std::vector<int64_t> cases;
            for (int64_t d : lengths) {
                cases.insert(cases.end(), d <= 8 ? 12 : 1, d);
            }
            for (int64_t d : cases) {
                // 1 to 8 output rows (past the 6 a kernel takes together), each seeing its
                // own number of value rows (most of them nearly all); rows of weight 0 hold NaN
                const int            rows   = 1 + static_cast<int>(rng() % 8);
                const int64_t        n_v    = 1 + static_cast<int64_t>(rng() % 20);
                const size_t         stride = gk_row_size(type, d) + 2 * gk_type_size(type) * (rng() % 3);
                const size_t         ldw    = static_cast<size_t>(n_v) + rng() % 3;
                const size_t         ldy    = static_cast<size_t>(d) + rng() % 5;
                std::vector<int64_t> n(static_cast<size_t>(rows));
                for (int64_t & k : n) {
                    k = rng() % 2 == 0 ? n_v - static_cast<int64_t>(rng() % 2)
                                       : static_cast<int64_t>(rng() % static_cast<uint32_t>(n_v + 1));
                }
                std::vector<float> w(ldw * static_cast<size_t>(rows), NAN);  // NaN past each n[q]: never read
                std::vector<bool>  used(static_cast<size_t>(n_v), false);
                // a third of the cases in the subnormal range: every weight tiny and y from 0
                // (far keys alone: the rounding of each product shows in the sum); else a
                // fifth of the weights tiny among ordinary ones
                const bool tiny_only = rng() % 3 == 0;
                const auto tiny      = [&] { return g(rng) * std::ldexp(1.0f, -100 - static_cast<int>(rng() % 45)); };
                for (int q = 0; q < rows; ++q) {
                    for (int64_t j = 0; j < n[static_cast<size_t>(q)]; ++j) {
                        const float wq = rng() % 4 == 0 ? 0.0f : tiny_only || rng() % 5 == 0 ? tiny() : scaled();
                        w[q * ldw + static_cast<size_t>(j)] = wq;
                        used[static_cast<size_t>(j)]        = used[static_cast<size_t>(j)] || wq != 0.0f;
                    }
                }
                std::vector<uint8_t>            v(stride * static_cast<size_t>(n_v));
                std::vector<std::vector<float>> vf(static_cast<size_t>(n_v),
                                                   std::vector<float>(static_cast<size_t>(d)));
                for (int64_t j = 0; j < n_v; ++j) {
                    std::vector<float> f(static_cast<size_t>(d));
                    for (float & x : f) {
                        x = used[static_cast<size_t>(j)] ? scaled() : NAN;
                    }
                    traits->from_float(f.data(), v.data() + static_cast<size_t>(j) * stride, d, nullptr);
                    traits->to_float(v.data() + static_cast<size_t>(j) * stride, vf[static_cast<size_t>(j)].data(), d);
                }
                std::vector<float> y0(ldy * static_cast<size_t>(rows));
                for (float & x : y0) {
                    x = tiny_only ? 0.0f : g(rng);
                }
                std::vector<float> want = y0, got = y0;
                reference(want.data(), ldy, w.data(), ldw, n.data(), rows, vf, d);
                mad(got.data(), ldy, w.data(), ldw, n.data(), rows, v.data(), stride, d);
                for (size_t i = 0; i < got.size(); ++i) {
                    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
                        << ks->name << " " << gk_type_name(type) << " d=" << d << " rows=" << rows << " at " << i;
                }
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 0);
}

}  // namespace
