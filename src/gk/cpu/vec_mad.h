// vec_mad.h - y += w * v over a row: the inner step of a weighted sum of rows (attention's
// value rows), in the kernel sets (kernel_set.h).
//
// Lane by lane the product is rounded, then the sum (no fused multiply-add), so the
// vector loop gives the bits of the scalar loop y[i] = y[i] + w * v[i] at every level.
#pragma once

#include "gk/gk-type.h"

#include <cstdint>

namespace gk::cpu {

/// y[i] = y[i] + w * v[i] for i < n; v: n elements of a plain type (f32, f16, bf16),
/// contiguous, widened exactly to f32.
using vec_mad_fn = void (*)(float * y, float w, const void * v, int64_t n);

/// The active kernel set's vec_mad for rows of `type`, or nullptr for a type other
/// than f32, f16 and bf16.
vec_mad_fn get_vec_mad(gk_type type);

/// This kernel set's vec_mad (get_vec_mad's source).
vec_mad_fn vec_mad_table(gk_type type);

} // namespace gk::cpu
