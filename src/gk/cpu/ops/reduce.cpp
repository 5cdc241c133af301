// reduce.cpp - sum, sum_rows, mean, argmax, cumsum. Sums are accumulated in double,
// in index order.
//
// sum is one global accumulator and runs on thread 0 alone (the others return), so its
// order is the index order whatever the thread count. The rest split by destination
// row (argmax: by source row, one output element each).
#include "../dispatch.h"
#include "../rows.h"

#include <cstring>

namespace gk::cpu {
namespace {

double row_sum(const float * x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        s += x[i];
    }
    return s;
}

void sum(const compute_params & p, gk_tensor * dst) {
    if (p.ith != 0) {
        return;
    }
    const gk_tensor * a   = dst->src[0];
    scratch           w   = p.work();
    float *           buf = w.floats(a->ne[0]);
    double            s   = 0.0;
    for (int64_t i3 = 0; i3 < a->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < a->ne[2]; ++i2) {
            for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
                const float * x = read_row(a, i1, i2, i3, buf);
                for (int64_t i = 0; i < a->ne[0]; ++i) {
                    s += x[i];
                }
            }
        }
    }
    const float v = static_cast<float>(s);
    store_row(dst, 0, 0, 0, &v);
}

template <bool Mean>
void sum_rows(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a   = dst->src[0];
    scratch           w   = p.work();
    float *           buf = w.floats(a->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        double s = row_sum(read_row(a, i1, i2, i3, buf), a->ne[0]);
        if (Mean) {
            s /= static_cast<double>(a->ne[0]);
        }
        const float v = static_cast<float>(s);
        store_row(dst, i1, i2, i3, &v);
    });
}

void argmax(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    scratch           w    = p.work();
    float *           buf  = w.floats(a->ne[0]);
    const row_range   rows = split_rows(a->ne[1], p.ith, p.nth);
    for (int64_t i1 = rows.begin; i1 < rows.end; ++i1) {
        const float * x    = read_row(a, i1, 0, 0, buf);
        int32_t       best = 0;
        for (int64_t i = 1; i < a->ne[0]; ++i) {
            if (x[i] > x[best]) {  // first maximum wins; NaN never wins
                best = static_cast<int32_t>(i);
            }
        }
        std::memcpy(element_ptr(dst, i1, 0, 0, 0), &best, sizeof(best));
    }
}

void cumsum(const compute_params & p, gk_tensor * dst) {
    scratch w = p.work();
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t, int64_t, int64_t) {
        double s = 0.0;
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            s += x[i];
            y[i] = static_cast<float>(s);
        }
    });
}

/// Thread 0 counts every position (an integer count: no order to fix); the others do nothing.
void count_equal(const compute_params & p, gk_tensor * dst) {
    if (p.ith != 0) {
        return;
    }
    const gk_tensor * a = dst->src[0];
    const gk_tensor * b = dst->src[1];
    int64_t           n = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < a->ne[2]; ++i2) {
            for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
                for (int64_t i0 = 0; i0 < a->ne[0]; ++i0) {
                    n += read_index(a, i0, i1, i2, i3) == read_index(b, i0, i1, i2, i3) ? 1 : 0;
                }
            }
        }
    }
    std::memcpy(dst->data, &n, sizeof(n));
}

} // namespace

void register_reduce(kernel_table & t) {
    t.ops[GK_OP_COUNT_EQUAL] = {count_equal, nullptr};
    t.ops[GK_OP_SUM]      = {sum, nullptr};
    t.ops[GK_OP_SUM_ROWS] = {sum_rows<false>, nullptr};
    t.ops[GK_OP_MEAN]     = {sum_rows<true>, nullptr};
    t.ops[GK_OP_ARGMAX]   = {argmax, nullptr};
    t.ops[GK_OP_CUMSUM]   = {cumsum, nullptr};
}

} // namespace gk::cpu
