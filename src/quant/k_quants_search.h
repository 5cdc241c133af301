// k_quants_search.h - the scale searches behind the K-quant encoders.
//
// A K-quant super-block is encoded in three stages:
//   1. each sub-block gets a real scale (and min) and integer quants by a weighted
//      search (fit_affine for the formats with mins, fit_scale for the symmetric ones);
//   2. the sub-block scales (and mins) are themselves quantised to small integers with
//      one f16 super-block factor each (fit_scale again, weighted by importance);
//   3. refine_superblock() improves the integer scales, the f16 factors and the quants
//      against the final weighted reconstruction error, evaluated with exactly the
//      float operations of the decoder.
// Weights are non-negative; a weight of 0 means "this element does not matter".
#pragma once

#include <cstdint>

namespace gk::quant::kq {

/// Round to nearest (ties to even) after clamping to [lo, hi]; NaN gives lo.
/// Equals clamp(round(v)) for every v, without undefined conversions.
int round_clamp(float v, int lo, int hi);

/// A family of candidate inverse scales for a group spanning `range`:
/// (levels + first + step * i) / range for i = 0 .. count-1, where `levels` is the
/// number of quantisation steps the group's extent maps onto.
struct scale_grid {
    float first;
    float step;
    int   count;
};

/// x ~= scale * q - min with q in [0, nmax], scale >= 0, min >= 0 (the group's
/// offset is never positive, so 0 stays representable).
struct affine_fit {
    float scale;
    float min;
};

/// Fit one group of n <= 32 values with a scale and a min: tries the min/max mapping and
/// the grid of inverse scales, each followed by a weighted least-squares fit of scale
/// and min, keeping the one with the least weighted error (absolute when abs_error,
/// else squared). Writes the quants to q[0..n).
affine_fit fit_affine(const float * x, const float * w, int n, int nmax, scale_grid grid, bool abs_error,
                      int8_t * q);

/// Fit x ~= s * q with integer q in [q_lo, q_hi] (q_lo <= 0 <= q_hi) minimising
/// sum w * (x - s*q)^2: the element of largest magnitude is mapped near the end of the
/// range with more room, trying 19 inverse scales around that mapping with the
/// least-squares s of each, then moves single quants while that lowers the error.
/// Writes q[0..n) and returns s (0 for an all-zero group). n <= 32.
float fit_scale(const float * x, const float * w, int n, int q_lo, int q_hi, int8_t * q);

/// The integer ranges of one K-quant format.
struct kformat {
    int sub_len;       // elements per sub-block: 16 or 32
    int q_lo, q_hi;    // quant range
    int sc_lo, sc_hi;  // sub-block scale range
    int m_hi;          // sub-block min range [0, m_hi]; 0 for the symmetric formats
};

/// One super-block being encoded: value of element e = (d * sc[j]) * q[e] - (dmin * m[j])
/// with j = e / sub_len, exactly as the decoders compute it. d and dmin are f16 values.
struct kblock {
    float  d    = 0;
    float  dmin = 0;
    int8_t sc[16]{};
    int8_t m[16]{};
    int8_t q[256]{};
};

/// Stages 1 and 2 above for the 256 values x: search weights w_search drive the
/// sub-block fits (fit_affine with `grid` / `abs_error` for formats with mins, fit_scale
/// otherwise) and the quantisation of their scales; then refine_superblock against
/// w_error. Fills every field of b.
void encode_superblock(const kformat & f, const float * x, const float * w_search, const float * w_error,
                       scale_grid grid, bool abs_error, kblock & b);

/// Stage 3: with b's integer scales as a start, requantise every element to its nearest
/// level, then repeatedly try moving each sub-block scale and min by one step and
/// refitting d and dmin by least squares (rounded to f16), keeping each change only when
/// the weighted squared error of the decoded block drops.
void refine_superblock(const kformat & f, const float * x, const float * w, kblock & b);

/// f32 -> f16 bits for a super-block factor: round to nearest even, saturating to the
/// largest finite f16 instead of overflowing to infinity (NaN stays NaN).
uint16_t scale_to_fp16(float v);

} // namespace gk::quant::kq
