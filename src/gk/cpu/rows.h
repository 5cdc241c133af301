// rows.h - row access for kernels: read any row of any decodable type as f32, write an
// f32 row into any encodable type, address single elements, read index tensors.
//
// Kernels compute in f32 one row at a time. read_row() returns a pointer to the row's
// values: the tensor's own memory when the row is dense, aligned f32 (no copy), or
// otherwise `buf` filled through the codec's to_float (element by element for a row
// whose elements are strided). out_row() / store_row() are the writing pair: out_row
// gives the place to compute the row (the destination itself when it is dense aligned
// f32, else `buf`) and store_row() encodes buf into the destination (nothing when the
// row was computed in place).
//
// Reading a row and then writing the same row (an in-place op) is safe: every
// element-wise kernel reads element i before it writes element i.
#pragma once

#include "gk/gk.h"
#include "kernel.h"

#include <cstdint>

namespace gk::cpu {

inline char * element_ptr(const gk_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return static_cast<char *>(t->data) + i0 * static_cast<int64_t>(t->nb[0]) + i1 * static_cast<int64_t>(t->nb[1]) +
           i2 * static_cast<int64_t>(t->nb[2]) + i3 * static_cast<int64_t>(t->nb[3]);
}

/// True when row (i1, i2, i3) of t can be used directly as float[ne0].
bool row_is_direct_f32(const gk_tensor * t, int64_t i1, int64_t i2, int64_t i3);

/// The ne[0] values of row (i1, i2, i3) as f32 (see the file comment). buf: ne[0] floats.
const float * read_row(const gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * buf);

/// Where to compute row (i1, i2, i3) of t: the row itself or buf (ne[0] floats).
float * out_row(gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * buf);

/// Encode `row` (from out_row) into row (i1, i2, i3) of t; no-op if it is that row.
void store_row(gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, const float * row);

/// store_row through the type's stored-row encoder (codec.h's from_float_ref: the bytes
/// ggml's CPU backend writes for a stored row on x86) where it has one, else through
/// from_float.
void store_row_ref(gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, const float * row);

/// Element (i0, i1, i2, i3) of a plain (one-element block) type as f32.
float read_element(const gk_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);

/// An I32 or I64 element as int64.
int64_t read_index(const gk_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);

/// The loop of the row-at-a-time kernels: for each row (i1, i2, i3) of dst in thread
/// p.ith's share (for_each_row), x = that row of dst->src[0] as f32 (read_row) and y =
/// the place to compute dst's row (out_row), their buffers taken from w; f(x, y, i1,
/// i2, i3) writes all dst->ne[0] values of y, which store_row then encodes.
template <class F>
void transform_rows(const compute_params & p, scratch & w, gk_tensor * dst, F && f) {
    const gk_tensor * a    = dst->src[0];
    float *           xbuf = w.floats(a->ne[0]);
    float *           ybuf = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float * x = read_row(a, i1, i2, i3, xbuf);
        float *       y = out_row(dst, i1, i2, i3, ybuf);
        f(x, y, i1, i2, i3);
        store_row(dst, i1, i2, i3, y);
    });
}

/// transform_rows element by element: y[i] = f(x[i], i, i1), i in 0..ne0 in order.
template <class F>
void map_rows(const compute_params & p, gk_tensor * dst, F && f) {
    scratch w = p.work();
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t i1, int64_t, int64_t) {
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            y[i] = f(x[i], i, i1);
        }
    });
}

} // namespace gk::cpu
