// matrix.cpp - kernels of the ops on each [ne0, ne1] matrix of a tensor (i0 the column,
// i1 the row): tri and diag split by destination row; solve_tri by right-hand-side column
// (each column of each matrix is one unit: its rows depend on each other, its columns do not).
#include "../dispatch.h"
#include "../rows.h"

namespace gk::cpu {
namespace {

/// Whether element (column i0, row i1) is in the triangle gk_tri keeps.
bool in_triangle(gk_tri_type type, int64_t i0, int64_t i1) {
    switch (type) {
    case GK_TRI_TYPE_UPPER_DIAG: return i0 >= i1;
    case GK_TRI_TYPE_UPPER: return i0 > i1;
    case GK_TRI_TYPE_LOWER_DIAG: return i0 <= i1;
    case GK_TRI_TYPE_LOWER: return i0 < i1;
    }
    return false;
}

void tri(const compute_params & p, gk_tensor * dst) {
    const auto type = static_cast<gk_tri_type>(gk_get_op_params_i32(dst, 0));
    scratch    w    = p.work();
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t i1, int64_t, int64_t) {
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            y[i0] = in_triangle(type, i0, i1) ? x[i0] : 0.0f;
        }
    });
}

void diag(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    scratch           w    = p.work();
    float *           ybuf = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        float * y = out_row(dst, i1, i2, i3, ybuf);
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            y[i0] = 0.0f;
        }
        y[i1] = read_element(a, i1, 0, i2, i3);
        store_row(dst, i1, i2, i3, y);
    });
}

/// Forward substitution of column c of B (F32, contiguous, as the builder checks):
/// X[i, c] = (B[i, c] - sum_{t < i} A[i, t] X[t, c]) / A[i, i], t ascending.
void solve_tri(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a     = dst->src[0];
    const gk_tensor * b     = dst->src[1];
    const int64_t     k     = b->ne[0];
    const int64_t     n     = b->ne[1];
    const int64_t     units = k * b->ne[2] * b->ne[3];
    const row_range   r     = split_rows(units, p.ith, p.nth);
    for (int64_t u = r.begin; u < r.end; ++u) {
        const int64_t c  = u % k;
        const int64_t i2 = (u / k) % b->ne[2];
        const int64_t i3 = u / (k * b->ne[2]);
        for (int64_t i = 0; i < n; ++i) {
            const auto * arow = reinterpret_cast<const float *>(element_ptr(a, 0, i, i2, i3));
            float        sum  = 0.0f;
            for (int64_t t = 0; t < i; ++t) {
                sum += arow[t] * *reinterpret_cast<const float *>(element_ptr(dst, c, t, i2, i3));
            }
            const float bi = *reinterpret_cast<const float *>(element_ptr(b, c, i, i2, i3));
            *reinterpret_cast<float *>(element_ptr(dst, c, i, i2, i3)) = (bi - sum) / arow[i];
        }
    }
}

} // namespace

void register_matrix(kernel_table & t) {
    t.ops[GK_OP_TRI]       = {tri, nullptr};
    t.ops[GK_OP_DIAG]      = {diag, nullptr};
    t.ops[GK_OP_SOLVE_TRI] = {solve_tri, nullptr};
}

} // namespace gk::cpu
