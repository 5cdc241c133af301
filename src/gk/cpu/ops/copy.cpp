// copy.cpp - dup, cont and cpy: copy src0's elements into dst, converting the type
// through f32 (the codec's to_float / from_float) unless both types are equal.
//
// Same shape: row (i1, i2, i3) of dst comes from row (i1, i2, i3) of the source.
// Different shapes with equal element counts (the reshaping branch): the elements are
// matched in flat index order; each destination row gathers its ne0 elements from the
// source rows it overlaps. Both branches split by destination row.
//
// Equal types copy bytes (exact for every type, integers of any size included): whole
// rows when both rows are dense, else element by element (plain types only: a block
// type's rows are always dense).
#include "../dispatch.h"
#include "../rows.h"

#include <cstring>

namespace gk::cpu {
namespace {

bool dense(const gk_tensor * t) { return t->nb[0] == gk_type_size(t->type); }

void copy_same_shape(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a       = dst->src[0];
    const bool        same    = a->type == dst->type;
    const bool        rows_ok = same && dense(a) && dense(dst);
    const size_t      esize   = gk_type_size(a->type);
    scratch           w       = p.work();
    float *           buf     = w.floats(a->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        if (rows_ok) {
            std::memmove(element_ptr(dst, 0, i1, i2, i3), element_ptr(a, 0, i1, i2, i3),
                         gk_row_size(a->type, a->ne[0]));
        } else if (same) {
            for (int64_t i0 = 0; i0 < a->ne[0]; ++i0) {
                std::memmove(element_ptr(dst, i0, i1, i2, i3), element_ptr(a, i0, i1, i2, i3), esize);
            }
        } else {
            store_row(dst, i1, i2, i3, read_row(a, i1, i2, i3, buf));
        }
    });
}

/// Flat element f of t -> its row (i1, i2, i3) and column i0.
struct flat_pos {
    int64_t i0, i1, i2, i3;
};

flat_pos locate(const gk_tensor * t, int64_t f) {
    const int64_t r  = f / t->ne[0];
    const row_index ri = unflatten_row(t, r);
    return {f % t->ne[0], ri.i1, ri.i2, ri.i3};
}

void copy_reshaped(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a     = dst->src[0];
    const bool        same  = a->type == dst->type && gk_blck_size(a->type) == 1;
    const size_t      esize = gk_type_size(a->type);
    const int64_t     n     = dst->ne[0];
    scratch           w     = p.work();
    float *           abuf  = w.floats(a->ne[0]);
    float *           ybuf  = w.floats(n);
    int64_t           cached_row = -1;  // flat source row whose values x points at
    const float *     x          = nullptr;
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int64_t first = ((i3 * dst->ne[2] + i2) * dst->ne[1] + i1) * n;
        if (same) {
            for (int64_t i0 = 0; i0 < n; ++i0) {
                const flat_pos s = locate(a, first + i0);
                std::memmove(element_ptr(dst, i0, i1, i2, i3), element_ptr(a, s.i0, s.i1, s.i2, s.i3), esize);
            }
            return;
        }
        float * y = out_row(dst, i1, i2, i3, ybuf);
        for (int64_t done = 0; done < n;) {
            const flat_pos s = locate(a, first + done);
            if ((first + done) / a->ne[0] != cached_row) {
                x          = read_row(a, s.i1, s.i2, s.i3, abuf);
                cached_row = (first + done) / a->ne[0];
            }
            const int64_t  avail = a->ne[0] - s.i0;
            const int64_t  take  = avail < n - done ? avail : n - done;
            std::memcpy(y + done, x + s.i0, static_cast<size_t>(take) * sizeof(float));
            done += take;
        }
        store_row(dst, i1, i2, i3, y);
    });
}

void copy(const compute_params & p, gk_tensor * dst) {
    if (gk_are_same_shape(dst, dst->src[0])) {
        copy_same_shape(p, dst);
    } else {
        copy_reshaped(p, dst);
    }
}

} // namespace

void register_copy(kernel_table & t) {
    t.ops[GK_OP_DUP]  = {copy, nullptr};
    t.ops[GK_OP_CONT] = {copy, nullptr};
    t.ops[GK_OP_CPY]  = {copy, nullptr};
}

} // namespace gk::cpu
