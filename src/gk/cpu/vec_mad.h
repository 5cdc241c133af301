// vec_mad.h - y += the weighted sum of rows: attention's value rows (y += w[j] * v_j for
// each key j), for several output rows (queries) that share the value rows, in the kernel
// sets (kernel_set.h).
//
// Per element of an output row, the value rows are taken in order and each step rounds
// the product, then the sum (no fused multiply-add), so the vector kernels give the bits
// of the scalar loop
//     for q < rows: for j < n[q]: if w_q[j] != 0: for i < d: y_q[i] = y_q[i] + w_q[j] * v_j[i]
// at every level, whatever the row length and however many rows are taken together.
#pragma once

#include "gk/gk-type.h"

#include <cstddef>
#include <cstdint>

namespace gk::cpu {

/// For each output row q < rows (y_q = y + q * ldy floats, weights w_q = w + q * ldw) and
/// each value row j < n[q] in order whose weight w_q[j] is nonzero:
/// y_q[i] = y_q[i] + w_q[j] * v_j[i], i < d. Value row j is d contiguous elements of a
/// plain type (f32, f16, bf16), widened exactly to f32, at v + j * stride bytes. A row of
/// weight 0 adds nothing, whatever it holds (NaN included: masked keys).
using vec_mad_fn = void (*)(float * y, size_t ldy, const float * w, size_t ldw, const int64_t * n, int rows,
                            const void * v, size_t stride, int64_t d);

/// The active kernel set's vec_mad for value rows of `type`, or nullptr for a type other
/// than f32, f16 and bf16.
vec_mad_fn get_vec_mad(gk_type type);

/// This kernel set's vec_mad (get_vec_mad's source).
vec_mad_fn vec_mad_table(gk_type type);

} // namespace gk::cpu
