// misc.cpp - placement and generator ops (repeat, concat, pad, roll, fill, arange,
// timestep_embedding) and the row-wise affine ops (scale, clamp, diag_mask_inf,
// diag_mask_zero). All split by destination row.
#include "../dispatch.h"
#include "../rows.h"
#include "timestep.h"

#include <cmath>
#include <cstring>

namespace gk::cpu {
namespace {

void scale(const compute_params & p, gk_tensor * dst) {
    const float s = gk_get_op_params_f32(dst, 0);
    const float b = gk_get_op_params_f32(dst, 1);
    map_rows(p, dst, [s, b](float x, int64_t, int64_t) { return x * s + b; });
}

void clamp(const compute_params & p, gk_tensor * dst) {
    const float lo = gk_get_op_params_f32(dst, 0);
    const float hi = gk_get_op_params_f32(dst, 1);
    map_rows(p, dst, [lo, hi](float x, int64_t, int64_t) {
        const float m = x < hi ? x : hi;
        return m > lo ? m : lo;
    });
}

/// Element i of row j is masked when i > n_past + j.
template <bool Inf>
void diag_mask(const compute_params & p, gk_tensor * dst) {
    const int64_t n_past = gk_get_op_params_i32(dst, 0);
    const float   fill   = Inf ? -INFINITY : 0.0f;
    map_rows(p, dst, [n_past, fill](float x, int64_t i, int64_t j) { return i > n_past + j ? fill : x; });
}

/// Element-size byte copies for the plain-type placement ops.
void copy_element(gk_tensor * dst, int64_t i0, int64_t i1, int64_t i2, int64_t i3, const gk_tensor * src, int64_t j0,
                  int64_t j1, int64_t j2, int64_t j3) {
    std::memcpy(element_ptr(dst, i0, i1, i2, i3), element_ptr(src, j0, j1, j2, j3), gk_type_size(src->type));
}

void repeat(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a = dst->src[0];
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            copy_element(dst, i0, i1, i2, i3, a, i0 % a->ne[0], i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3]);
        }
    });
}

void concat(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a   = dst->src[0];
    const gk_tensor * b   = dst->src[1];
    const int         dim = gk_get_op_params_i32(dst, 0);
    const int64_t     blk = gk_blck_size(dst->type);  // a block type moves whole blocks
    const int64_t     na  = dim == 0 ? a->ne[0] / blk : a->ne[dim];
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        for (int64_t i0 = 0; i0 < dst->ne[0] / blk; ++i0) {
            int64_t    j[4]  = {i0, i1, i2, i3};
            const bool in_a  = j[dim] < na;
            if (!in_a) {
                j[dim] -= na;
            }
            copy_element(dst, i0, i1, i2, i3, in_a ? a : b, j[0], j[1], j[2], j[3]);
        }
    });
}

/// Zero padding, or with op_params[8] set (circular) the source index taken modulo the size.
void pad(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a = dst->src[0];
    const bool        circular = gk_get_op_params_i32(dst, 8) != 0;
    int32_t           lp[4];
    for (int d = 0; d < 4; ++d) {
        lp[d] = gk_get_op_params_i32(dst, 2 * d);
    }
    const auto src_index = [&](int64_t i, int d) {
        const int64_t j = i - lp[d];
        return circular ? ((j % a->ne[d]) + a->ne[d]) % a->ne[d] : j;
    };
    scratch w    = p.work();
    float * xbuf = w.floats(a->ne[0]);
    float * ybuf = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        float *       y  = out_row(dst, i1, i2, i3, ybuf);
        const int64_t j1 = src_index(i1, 1), j2 = src_index(i2, 2), j3 = src_index(i3, 3);
        const bool    row_in = j1 >= 0 && j1 < a->ne[1] && j2 >= 0 && j2 < a->ne[2] && j3 >= 0 && j3 < a->ne[3];
        const float * x  = row_in ? read_row(a, j1, j2, j3, xbuf) : nullptr;
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            const int64_t j0 = src_index(i0, 0);
            y[i0]            = x && j0 >= 0 && j0 < a->ne[0] ? x[j0] : 0.0f;
        }
        store_row(dst, i1, i2, i3, y);
    });
}

void arange(const compute_params & p, gk_tensor * dst) {
    const float     start = gk_get_op_params_f32(dst, 0);
    const float     step  = gk_get_op_params_f32(dst, 2);
    const row_range r     = split_rows(dst->ne[0], p.ith, p.nth);  // one row: split its elements
    auto *          y     = static_cast<float *>(dst->data);
    for (int64_t i = r.begin; i < r.end; ++i) {
        const float v = start + step * static_cast<float>(i);
        std::memcpy(y + i, &v, sizeof(v));
    }
}

/// Row t: timestep_row of timesteps[t] (timestep.h).
void timestep_embedding(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * ts         = dst->src[0];
    const int         dim        = gk_get_op_params_i32(dst, 0);
    const int         max_period = gk_get_op_params_i32(dst, 1);
    scratch           w          = p.work();
    float *           ybuf       = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        float * y = out_row(dst, i1, i2, i3, ybuf);
        timestep_row(read_element(ts, i1, 0, 0, 0), dim, max_period, y);
        store_row(dst, i1, i2, i3, y);
    });
}

void fill(const compute_params & p, gk_tensor * dst) {
    const float c    = gk_get_op_params_f32(dst, 0);
    scratch     w    = p.work();
    float *     ybuf = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        float * y = out_row(dst, i1, i2, i3, ybuf);
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            y[i0] = c;
        }
        store_row(dst, i1, i2, i3, y);
    });
}

/// dst[i] = a[(i - shift) mod ne] in every dimension (shifts smaller than ne in magnitude).
void roll(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a = dst->src[0];
    int64_t           s[4];
    for (int d = 0; d < 4; ++d) {
        s[d] = gk_get_op_params_i32(dst, d);
    }
    const auto wrap = [](int64_t i, int64_t n) { return i < 0 ? i + n : (i >= n ? i - n : i); };
    scratch    w    = p.work();
    float *    xbuf = w.floats(a->ne[0]);
    float *    ybuf = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float * x =
            read_row(a, wrap(i1 - s[1], a->ne[1]), wrap(i2 - s[2], a->ne[2]), wrap(i3 - s[3], a->ne[3]), xbuf);
        float * y = out_row(dst, i1, i2, i3, ybuf);
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            y[i0] = x[wrap(i0 - s[0], a->ne[0])];
        }
        store_row(dst, i1, i2, i3, y);
    });
}

} // namespace

void register_misc(kernel_table & t) {
    t.ops[GK_OP_FILL]               = {fill, nullptr};
    t.ops[GK_OP_ROLL]               = {roll, nullptr};
    t.ops[GK_OP_SCALE]              = {scale, nullptr};
    t.ops[GK_OP_CLAMP]              = {clamp, nullptr};
    t.ops[GK_OP_DIAG_MASK_INF]      = {diag_mask<true>, nullptr};
    t.ops[GK_OP_DIAG_MASK_ZERO]     = {diag_mask<false>, nullptr};
    t.ops[GK_OP_REPEAT]             = {repeat, nullptr};
    t.ops[GK_OP_CONCAT]             = {concat, nullptr};
    t.ops[GK_OP_PAD]                = {pad, nullptr};
    t.ops[GK_OP_ARANGE]             = {arange, nullptr};
    t.ops[GK_OP_TIMESTEP_EMBEDDING] = {timestep_embedding, nullptr};
}

} // namespace gk::cpu
