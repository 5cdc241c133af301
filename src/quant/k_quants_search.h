// k_quants_search.h - the scale searches behind the K-quant encoders.
//
// A K-quant super-block is encoded in three stages:
//   1. each sub-block gets a real scale (and min) and integer quants by a weighted
//      search (fit_affine for the formats with mins, fit_scale for the symmetric ones);
//   2. the sub-block scales (and mins) are themselves quantised to small integers with
//      one f16 super-block factor each (fit_scale again, weighted by importance, then
//      each rounded to its nearest level against the f16-rounded factor);
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

/// x ~= scale * q - min with q in [0, nmax], scale >= 0, min >= 0 (the group's
/// offset is never positive, so 0 stays representable).
struct affine_fit {
    float scale;
    float min;
};

/// Fit one group of n <= 32 values with a scale and a min minimising
/// sum w * (x - (scale*q - min))^2: tries the min/max mapping and 19 inverse scales
/// around it, each followed by the least-squares scale and min of its quants, then
/// alternates nearest quants and least-squares fit while the error drops. Writes
/// q[0..n).
affine_fit fit_affine(const float * x, const float * w, int n, int nmax, int8_t * q);

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

/// Encode the 256 values x minimising sum w * (x - decoded)^2: stages 1 and 2 above
/// (sub-block fits, then their scales and mins quantised with weights = the sub-block
/// sums of w), then refine_superblock. Fills every field of b.
void encode_superblock(const kformat & f, const float * x, const float * w, kblock & b);

/// Stage 3: with b's integer scales as a start, requantise every element to its nearest
/// level, then repeatedly try moving each sub-block's scale and min by one step (and,
/// in the first pass, rescaling both by up to -+16 %) and refitting d and dmin by least
/// squares (rounded to f16), keeping each change only when the weighted squared error
/// of the decoded block drops.
void refine_superblock(const kformat & f, const float * x, const float * w, kblock & b);

/// f32 -> f16 bits for a super-block factor: round to nearest even, saturating to the
/// largest finite f16 instead of overflowing to infinity (NaN stays NaN).
uint16_t scale_to_fp16(float v);

} // namespace gk::quant::kq
