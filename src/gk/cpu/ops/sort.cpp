// sort.cpp - argsort and top_k, one row at a time, split by destination row.
//
// Both sort indices under a total order, so the result is unique: by value (ascending
// or descending), NaN after every number in either direction, and equal values by
// index (which makes argsort stable). top_k returns the indices of the k largest,
// largest first.
#include "../dispatch.h"
#include "../rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace gk::cpu {
namespace {

struct index_order {
    const float * x;
    bool          descending;
    bool operator()(int32_t i, int32_t j) const {
        const float a = x[i];
        const float b = x[j];
        const bool  na = std::isnan(a);
        const bool  nb = std::isnan(b);
        if (na || nb) {
            return na != nb ? nb : i < j;
        }
        if (a != b) {
            return descending ? a > b : a < b;
        }
        return i < j;
    }
};

template <bool TopK>
void sort_rows(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const int64_t     n    = a->ne[0];
    const int64_t     k    = dst->ne[0];
    const bool        desc = TopK || gk_get_op_params_i32(dst, 0) == GK_SORT_ORDER_DESC;
    scratch           w    = p.work();
    float *           buf  = w.floats(n);
    auto *            idx  = static_cast<int32_t *>(w.take(static_cast<size_t>(n) * sizeof(int32_t)));
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const index_order order{read_row(a, i1, i2, i3, buf), desc};
        std::iota(idx, idx + n, 0);
        if (TopK) {
            std::partial_sort(idx, idx + k, idx + n, order);
        } else {
            std::sort(idx, idx + n, order);
        }
        for (int64_t i = 0; i < k; ++i) {
            std::memcpy(element_ptr(dst, i, i1, i2, i3), &idx[i], sizeof(int32_t));
        }
    });
}

size_t sort_work_size(const gk_tensor * dst) {
    const size_t n = static_cast<size_t>(dst->src[0]->ne[0]);
    return scratch_bytes(n * sizeof(float)) + scratch_bytes(n * sizeof(int32_t));
}

} // namespace

void register_sort(kernel_table & t) {
    t.ops[GK_OP_ARGSORT] = {sort_rows<false>, sort_work_size};
    t.ops[GK_OP_TOP_K]   = {sort_rows<true>, sort_work_size};
}

} // namespace gk::cpu
