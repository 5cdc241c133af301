// test-ops-reduce - sum, sum_rows, mean, argmax, count_equal, cumsum, argsort and top_k.
#include "op_check.h"

#include <algorithm>
#include <numeric>

namespace {

using namespace gk_test;

TEST(OpsReduce, Sums) {
    env         e;
    gk_tensor * a  = e.f32(37, 6, 2);
    gk_tensor * s  = gk_sum(e.ctx, a);
    gk_tensor * sr = gk_sum_rows(e.ctx, a);
    gk_tensor * mn = gk_mean(e.ctx, a);
    gk_tensor * cs = gk_cumsum(e.ctx, a);
    for (gk_tensor * t : {s, sr, mn, cs}) {
        ASSERT_TRUE(compute(e.ctx, t));
    }
    const auto          va = values(a);
    std::vector<double> rs{0}, rsr, rmn, rcs;
    for (size_t r = 0; r < 12; ++r) {
        double acc = 0;
        for (size_t i = 0; i < 37; ++i) {
            acc += va[r * 37 + i];
            rcs.push_back(acc);
        }
        rs[0] += acc;
        rsr.push_back(acc);
        rmn.push_back(acc / 37);
    }
    expect_close(s, rs, 1e-6, 1e-6, "sum");
    expect_close(sr, rsr, 1e-6, 1e-6, "sum_rows");
    expect_close(mn, rmn, 1e-7, 1e-6, "mean");
    expect_close(cs, rcs, 1e-6, 1e-6, "cumsum");
}

/// Indices of row `r` of v (n per row) in the order gk defines: by value, NaN last,
/// ties by index.
std::vector<double> order_of(const std::vector<double> & v, size_t r, size_t n, bool desc) {
    std::vector<int> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    const double * x = &v[r * n];
    std::stable_sort(idx.begin(), idx.end(), [&](int i, int j) {
        if (std::isnan(x[i]) || std::isnan(x[j])) return !std::isnan(x[i]) && std::isnan(x[j]);
        return desc ? x[i] > x[j] : x[i] < x[j];
    });
    return {idx.begin(), idx.end()};
}

TEST(OpsReduce, ArgmaxArgsortTopK) {
    env         e;
    gk_tensor * a = e.rand(GK_TYPE_F16, 40, 9);  // f16: many ties
    auto *      h = static_cast<uint16_t *>(a->data);
    h[3]          = 0x7E00;  // a NaN in row 0
    h[45]         = h[44];   // a tie in row 1
    gk_tensor * am  = gk_argmax(e.ctx, a);
    gk_tensor * asc = gk_argsort(e.ctx, a, GK_SORT_ORDER_ASC);
    gk_tensor * dsc = gk_argsort(e.ctx, a, GK_SORT_ORDER_DESC);
    gk_tensor * tk  = gk_top_k(e.ctx, a, 6);
    for (gk_tensor * t : {am, asc, dsc, tk}) {
        ASSERT_TRUE(compute(e.ctx, t));
    }
    const auto          va = values(a);
    std::vector<double> ram, rasc, rdsc, rtk;
    for (size_t r = 0; r < 9; ++r) {
        size_t best = 0;
        for (size_t i = 1; i < 40; ++i) {
            if (va[r * 40 + i] > va[r * 40 + best]) best = i;
        }
        ram.push_back(static_cast<double>(best));
        const auto up = order_of(va, r, 40, false), down = order_of(va, r, 40, true);
        rasc.insert(rasc.end(), up.begin(), up.end());
        rdsc.insert(rdsc.end(), down.begin(), down.end());
        rtk.insert(rtk.end(), down.begin(), down.begin() + 6);
    }
    expect_close(am, ram, 0, 0, "argmax");
    expect_close(asc, rasc, 0, 0, "argsort asc");
    expect_close(dsc, rdsc, 0, 0, "argsort desc");
    expect_close(tk, rtk, 0, 0, "top_k");
}

TEST(OpsReduce, CountEqual) {
    env         e;
    gk_tensor * a = e.indices(3, 17, 4, 2);
    gk_tensor * b = e.indices(3, 17, 4, 2);
    gk_tensor * n = gk_count_equal(e.ctx, a, gk_cont(e.ctx, b));
    ASSERT_TRUE(compute(e.ctx, n));
    EXPECT_EQ(n->type, GK_TYPE_I64);
    const auto va = values(a), vb = values(b);
    double     same = 0;
    for (size_t i = 0; i < va.size(); ++i) {
        same += va[i] == vb[i];
    }
    EXPECT_EQ(values(n), std::vector<double>{same});
    // a transposed view of a against itself: every position equal
    gk_tensor * t = gk_transpose(e.ctx, gk_reshape_2d(e.ctx, a, 17, 8));
    gk_tensor * m = gk_count_equal(e.ctx, t, t);
    ASSERT_TRUE(compute(e.ctx, m));
    EXPECT_EQ(values(m), std::vector<double>{17.0 * 8});
    expect_refused(e.ctx, gk_count_equal(e.ctx, a, e.f32(17, 4, 2)), "f32 b", "must be i32");
    expect_refused(e.ctx, gk_count_equal(e.ctx, a, e.indices(3, 17, 4)), "shapes", "shapes differ");
}

} // namespace
