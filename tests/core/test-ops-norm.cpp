// test-ops-norm - norm, rms_norm, l2_norm and group_norm against double references.
#include "op_check.h"

namespace {

using namespace gk_test;

enum class kind { mean_var, rms, l2 };

std::vector<double> row_norm_ref(const std::vector<double> & x, int64_t n, double eps, kind k) {
    std::vector<double> out;
    for (size_t r = 0; r < x.size() / static_cast<size_t>(n); ++r) {
        const double * v    = &x[r * static_cast<size_t>(n)];
        double         mean = 0;
        if (k == kind::mean_var) {
            for (int64_t i = 0; i < n; ++i) {
                mean += v[i];
            }
            mean /= static_cast<double>(n);
        }
        double s2 = 0;
        for (int64_t i = 0; i < n; ++i) {
            s2 += (v[i] - mean) * (v[i] - mean);
        }
        const double scale = k == kind::l2 ? 1 / std::fmax(std::sqrt(s2), eps) : 1 / std::sqrt(s2 / static_cast<double>(n) + eps);
        for (int64_t i = 0; i < n; ++i) {
            out.push_back((v[i] - mean) * scale);
        }
    }
    return out;
}

TEST(OpsNorm, RowNorms) {
    const struct {
        gk_tensor * (*build)(gk_context *, gk_tensor *, float);
        kind         k;
        float        eps;
        const char * name;
    } norms[] = {
        {gk_norm, kind::mean_var, 1e-5f, "norm"},
        {gk_rms_norm, kind::rms, 1e-6f, "rms_norm"},
        {gk_l2_norm, kind::l2, 1e-12f, "l2_norm"},
    };
    for (const auto & nm : norms) {
        env         e;
        gk_tensor * a = e.rand(GK_TYPE_F32, 96, 7, 2, 1, -3, 5);
        gk_tensor * y = nm.build(e.ctx, a, nm.eps);
        ASSERT_TRUE(compute(e.ctx, y));
        expect_close(y, row_norm_ref(values(a), 96, nm.eps, nm.k), 1e-6, 1e-5, nm.name);
    }
}

TEST(OpsNorm, RmsNormOfAView) {
    env         e;
    gk_tensor * a = e.f32(64, 10);
    gk_tensor * v = gk_view_2d(e.ctx, a, 32, 10, a->nb[1], 32 * sizeof(float));  // right halves
    gk_tensor * y = gk_rms_norm(e.ctx, v, 1e-6f);
    ASSERT_TRUE(compute(e.ctx, y));
    expect_close(y, row_norm_ref(values(v), 32, 1e-6, kind::rms), 1e-6, 1e-5, "rms_norm view");
}

TEST(OpsNorm, GroupNorm) {
    env           e;
    const int64_t ne0 = 5, ne1 = 3, ne2 = 10, ne3 = 2;
    const int     groups = 4;  // 3 slices per group, the last group has 1
    gk_tensor *   a      = e.rand(GK_TYPE_F32, ne0, ne1, ne2, ne3, -2, 3);
    gk_tensor *   y      = gk_group_norm(e.ctx, a, groups, 1e-5f);
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          va = values(a);
    std::vector<double> ref(va.size());
    const int64_t       per   = (ne2 + groups - 1) / groups;
    const int64_t       slice = ne0 * ne1;
    for (int64_t i3 = 0; i3 < ne3; ++i3) {
        for (int64_t c0 = 0; c0 < ne2; c0 += per) {
            const int64_t c1    = std::min(c0 + per, ne2);
            const size_t  begin = static_cast<size_t>((i3 * ne2 + c0) * slice);
            const size_t  end   = static_cast<size_t>((i3 * ne2 + c1) * slice);
            double        mean  = 0, var = 0;
            for (size_t i = begin; i < end; ++i) {
                mean += va[i];
            }
            mean /= static_cast<double>(end - begin);
            for (size_t i = begin; i < end; ++i) {
                var += (va[i] - mean) * (va[i] - mean);
            }
            var /= static_cast<double>(end - begin);
            for (size_t i = begin; i < end; ++i) {
                ref[i] = (va[i] - mean) / std::sqrt(var + 1e-5);
            }
        }
    }
    expect_close(y, ref, 1e-6, 1e-5, "group_norm");
}

} // namespace
