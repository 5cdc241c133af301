// norm.cpp - normalisations. norm, rms_norm and l2_norm work on one row at a time and
// split by destination row; their sums are accumulated in double, left to right.
// group_norm's statistic spans a group of ne2 slices, so it splits by group: the unit
// of work is one (group, i3) pair, computed wholly by one thread.
#include "../dispatch.h"
#include "../rows.h"

#include <cmath>

namespace gk::cpu {
namespace {

enum class row_norm_kind { mean_var, rms, l2 };

template <row_norm_kind Kind>
void row_norm(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const float       eps  = gk_get_op_params_f32(dst, 0);
    const int64_t     n    = a->ne[0];
    scratch           w    = p.work();
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t, int64_t, int64_t) {
        float  mean = 0.0f;
        double sum2 = 0.0;
        if (Kind == row_norm_kind::mean_var) {
            double sum = 0.0;
            for (int64_t i = 0; i < n; ++i) {
                sum += x[i];
            }
            mean = static_cast<float>(sum / static_cast<double>(n));
        }
        for (int64_t i = 0; i < n; ++i) {
            const double d = static_cast<double>(x[i] - mean);
            sum2 += d * d;
        }
        float scale;
        if (Kind == row_norm_kind::l2) {
            scale = 1.0f / std::fmax(static_cast<float>(std::sqrt(sum2)), eps);
        } else {
            scale = 1.0f / std::sqrt(static_cast<float>(sum2 / static_cast<double>(n)) + eps);
        }
        for (int64_t i = 0; i < n; ++i) {
            y[i] = (x[i] - mean) * scale;
        }
    });
}

void group_norm(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a        = dst->src[0];
    const int         n_groups = gk_get_op_params_i32(dst, 0);
    const float       eps      = gk_get_op_params_f32(dst, 1);
    const int64_t     per      = (a->ne[2] + n_groups - 1) / n_groups;  // slices per group
    const int64_t     n0       = a->ne[0];
    scratch           w        = p.work();
    float *           xbuf     = w.floats(n0);
    float *           ybuf     = w.floats(n0);
    const row_range   units    = split_rows(static_cast<int64_t>(n_groups) * a->ne[3], p.ith, p.nth);
    for (int64_t u = units.begin; u < units.end; ++u) {
        const int64_t i3  = u / n_groups;
        const int64_t c0  = (u % n_groups) * per;
        const int64_t c1  = c0 + per < a->ne[2] ? c0 + per : a->ne[2];
        double        sum = 0.0;
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
                const float * x = read_row(a, i1, c, i3, xbuf);
                for (int64_t i = 0; i < n0; ++i) {
                    sum += x[i];
                }
            }
        }
        const double count = static_cast<double>((c1 - c0) * a->ne[1] * n0);
        const float  mean  = count > 0 ? static_cast<float>(sum / count) : 0.0f;
        double       sum2  = 0.0;
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
                const float * x = read_row(a, i1, c, i3, xbuf);
                for (int64_t i = 0; i < n0; ++i) {
                    const double d = static_cast<double>(x[i] - mean);
                    sum2 += d * d;
                }
            }
        }
        const float scale = count > 0 ? 1.0f / std::sqrt(static_cast<float>(sum2 / count) + eps) : 0.0f;
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
                const float * x = read_row(a, i1, c, i3, xbuf);
                float *       y = out_row(dst, i1, c, i3, ybuf);
                for (int64_t i = 0; i < n0; ++i) {
                    y[i] = (x[i] - mean) * scale;
                }
                store_row(dst, i1, c, i3, y);
            }
        }
    }
}

} // namespace

void register_norm(kernel_table & t) {
    t.ops[GK_OP_NORM]       = {row_norm<row_norm_kind::mean_var>, nullptr};
    t.ops[GK_OP_RMS_NORM]   = {row_norm<row_norm_kind::rms>, nullptr};
    t.ops[GK_OP_L2_NORM]    = {row_norm<row_norm_kind::l2>, nullptr};
    t.ops[GK_OP_GROUP_NORM] = {group_norm, nullptr};
}

} // namespace gk::cpu
