// vec_mad.h - y += the weighted sum of rows: attention's value rows (y += w[j] * v_j for
// each key j), in the kernel sets (kernel_set.h).
//
// Per element, the rows are taken in order and each step rounds the product, then the sum
// (no fused multiply-add), so the vector kernels give the bits of the scalar loop
//     for j < n: if w[j] != 0: for i < d: y[i] = y[i] + w[j] * v_j[i]
// at every level, whatever the row length.
#pragma once

#include "gk/gk-type.h"

#include <cstddef>
#include <cstdint>

namespace gk::cpu {

/// For each row j < n in order whose weight w[j] is nonzero: y[i] = y[i] + w[j] * v_j[i],
/// i < d. Row j is d contiguous elements of a plain type (f32, f16, bf16), widened exactly
/// to f32, at v + j * stride bytes. A row of weight 0 is not read (masked keys may hold
/// anything, NaN included).
using vec_mad_fn = void (*)(float * y, const float * w, int64_t n, const void * v, size_t stride, int64_t d);

/// The active kernel set's vec_mad for rows of `type`, or nullptr for a type other
/// than f32, f16 and bf16.
vec_mad_fn get_vec_mad(gk_type type);

/// This kernel set's vec_mad (get_vec_mad's source).
vec_mad_fn vec_mad_table(gk_type type);

} // namespace gk::cpu
