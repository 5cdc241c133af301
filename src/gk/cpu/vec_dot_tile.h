// vec_dot_tile.h - tiled dot products: several weight rows times several activation
// columns at once, each result bit-identical to the vec_dot of that row and column.
//
// mul_mat with more than one activation column (a prompt) calls a weight type's tile
// kernel where it has one; with one column (a decode) it does so where the kernel says
// `decode` (the float types, whose tile sums 8 or 16 rows' dots in one reduction where
// vec_dot reduces each row alone; docs/performance.md). The kernel reuses each weight
// block across every column it is given: the block is unpacked once (to bytes, integer
// scales and f32 block scales, in a layout the vector instructions read directly) and
// dotted against each column from there, where vec_dot decodes it again for every column.
//
// Batch invariance: the kernel computes each output element with the operations of the
// single-column vec_dot, in the same order (the exact integer sums of a block, then the
// same fused multiply-adds on the same four chains; vec_dot.h). The instruction-level
// parallelism comes from computing many output elements side by side (one vector lane
// per weight row), never from splitting one dot. So a column's result does not depend
// on how many columns are computed with it, and a prompt evaluated in one batch, in
// micro-batches or token by token gives the same bits.
#pragma once

#include "gk/gk-type.h"

#include <cstddef>
#include <cstdint>

namespace gk::cpu {

/// s[c * ldc + r] = vec_dot(n, x + r * bx, y + c * by) for r < nr, c < nc, bit for bit.
/// x: nr weight rows of n elements, bx bytes apart; y: nc activation rows in the weight
/// type's vec_dot_type (from its from_float), by bytes apart; nr <= tile_kernel::rows;
/// nc <= tile_kernel::max_cols. work: tile_kernel::work_bytes bytes, 64-byte aligned.
using vec_dot_tile_fn = void (*)(int64_t n, int nr, const void * x, size_t bx, int nc, const void * y, size_t by,
                                 float * s, size_t ldc, void * work);

struct tile_kernel {
    vec_dot_tile_fn fn;
    int             rows;        // weight rows per call, at most
    int             max_cols;    // activation columns per call, at most
    size_t          work_bytes;  // scratch one call needs
    bool            decode;      // taken for a single column too (a decode), where it pays
};

/// The tile kernel of weight type `type` in the active kernel set (kernel_set.h), or
/// nullptr (mul_mat then calls vec_dot for every element).
const tile_kernel * get_tile_kernel(gk_type type);

} // namespace gk::cpu
