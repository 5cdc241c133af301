// scale_search.h - choosing a block's f16 scale (and offset) for the encoders.
//
// A block of n values x_j is stored as integer levels L_j and an f16 scale d, decoded as
// L_j * d (symmetric formats) or L_j * d + m (affine formats, f16 m). The search
// minimises the weighted squared error sum_j w_j (x_j - y_j)^2 of the *decoded* values
// y_j, computed exactly as the decoder computes them, so the f16 rounding of d and m is
// part of what is measured. It tries a grid of candidate scales, refines each by least
// squares, rounds it to f16 and re-rounds every level to the nearest one for that f16
// scale; a caller-given baseline (the reference encoder's choice) is always among the
// candidates, so the result is never worse than that baseline for the same weights.
//
// Non-finite inputs never cause undefined behaviour: NaN values take level 0 (clamped
// into range) and +-Inf saturate; they are left out of the error and of the search's
// max |x|. Scales are kept finite (an f16 overflow becomes +-65504).
//
// Blocks hold at most 256 values, a multiple of 8.
#pragma once

#include "fp16.h"

#include <cstdint>

namespace gk::quant {

/// Candidate scales: the level reached by the block's largest |x| runs over
/// `steps` evenly spaced values from `from` to `to` times the largest level available
/// on its side of zero (e.g. 8 for a negative level in q4_0).
struct scale_grid {
    float from;
    float to;
    int   steps;
};

/// Weights of one block of n values: imatrix_j when `imatrix` (the block's n importances)
/// is given, else 1; scaled to at most 1 (only their ratios matter). Negative or
/// non-finite importances count as 0, and so do non-finite x_j; a block whose weights are
/// all 0 gets weights 1 (nothing to prefer, so the plain error).
void block_weights(const float * x, const float * imatrix, int n, float * w);

/// Runs fit(i, xb, w) for each block i of QK values xb of a row of k values (k a multiple
/// of QK), with w the block's weights (block_weights).
template <int QK, class Fit>
void for_each_weighted_block(const float * x, int64_t k, const float * imatrix, Fit && fit) {
    float w[QK];
    for (int64_t i = 0; i < k / QK; ++i) {
        const float * xb = x + i * QK;
        block_weights(xb, imatrix ? imatrix + i * QK : nullptr, QK, w);
        fit(i, xb, static_cast<const float *>(w));
    }
}

/// Symmetric formats: x_j ~ L_j * d, L_j in [lo, hi] (lo <= 0 <= hi). Writes the levels to
/// L and returns the f16 bits of d. `baseline` is a scale that is always tried (it is
/// rounded to f16 and the levels re-rounded for it). An all-zero block gives d = 0, L = 0.
fp16_t fit_scale(const float * x, const float * w, int n, int lo, int hi, const scale_grid & grid,
                 float baseline, int8_t * L);

/// Ternary formats: x_j ~ L_j * d, L_j in {-1, 0, 1}. For each k, the k values of largest
/// |x| taking +-1 have the least-squares scale sum w|x| / sum w over them; the best k and
/// its neighbours are tried (with `baseline`), then refined by alternating level
/// rounding and least squares. Writes L, returns the f16 bits of d (d >= 0).
fp16_t fit_ternary(const float * x, const float * w, int n, float baseline, int8_t * L);

/// f16 bits of an affine block's scale and offset.
struct scale_offset {
    fp16_t d;
    fp16_t m;
};

/// Affine formats: x_j ~ L_j * d + m, L_j in [0, nmax]. The candidate step sizes are
/// (max - min) / (nmax * r) for r on `grid`, each laid from the minimum up, from the
/// maximum down and from the middle out (r > 1 clips the top, the bottom or both ends).
/// `baseline_d`, `baseline_m` are always tried.
scale_offset fit_scale_offset(const float * x, const float * w, int n, int nmax, const scale_grid & grid,
                              float baseline_d, float baseline_m, uint8_t * L);

/// The finite value of largest magnitude among x[0..n) (its sign kept; the first one on a
/// tie), 0 when there is none.
float signed_max_abs(const float * x, int n);

/// The smallest and largest finite values among x[0..n); both 0 when there is none.
void finite_range(const float * x, int n, float & lo, float & hi);

/// f32 -> f16 bits, with an overflow to +-Inf replaced by +-65504 (NaN becomes 0).
fp16_t fp32_to_fp16_finite(float v);

} // namespace gk::quant
