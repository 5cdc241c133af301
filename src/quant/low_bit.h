// low_bit.h - the one- and two-bit block formats: q1_0, q2_0, tq1_0, tq2_0.
//
// Byte layouts as published in ggml's ggml-common.h (f16 fields are raw binary16 bits,
// see fp16.h). Element j of a block decodes to
//   q1_0  (128 per block): bit j%8 of qs[j/8] set ? d : -d
//   q2_0  ( 64 per block): (q - 1) * d, q = bits 2*(j%4)..+1 of qs[j/4]   (levels -1..2)
//   tq2_0 (256 per block): (q - 1) * d, q = bits 2*l..2*l+1 of qs[32*c + m] for
//                          j = 128*c + 32*l + m                        (levels -1..2)
//   tq1_0 (256 per block): (t - 1) * d for a base-3 digit t in 0..2, see block_tq1_0
// with (q - 1) converted to f32 and multiplied by d, rounded once (bit for bit ggml's
// dequantize_row_*).
#pragma once

#include "fp16.h"
#include "k_quants.h"  // QK_K

#include <cstdint>

namespace gk::quant {

inline constexpr int QK1_0 = 128;
inline constexpr int QK2_0 = 64;

struct block_q1_0 {
    fp16_t  d;              // scale
    uint8_t qs[QK1_0 / 8];  // one sign bit per element
};
static_assert(sizeof(block_q1_0) == 18, "q1_0 block is 18 bytes");

struct block_q2_0 {
    fp16_t  d;              // scale
    uint8_t qs[QK2_0 / 4];  // four 2-bit quants per byte, element j at bits 2*(j%4)
};
static_assert(sizeof(block_q2_0) == 18, "q2_0 block is 18 bytes");

/// Base-3 packing, 5 digits per byte: a byte b holds the digits t_0..t_4 of
/// v = sum t_n 3^(4-n) as b = ceil(v * 256 / 243); digit n is recovered as
/// ((uint8_t)(b * 3^n) * 3) >> 8. Element j's digit lives at
///   j <  160: qs[j % 32],             digit j / 32
///   j <  240: qs[32 + (j - 160) % 16], digit (j - 160) / 16
///   j <  256: qh[(j - 240) % 4],       digit (j - 240) / 4 (digit 4 of qh is 0)
struct block_tq1_0 {
    uint8_t qs[(QK_K - 4 * QK_K / 64) / 5];  // 48 bytes, 5 digits each
    uint8_t qh[QK_K / 64];                   // 4 bytes, 4 digits each
    fp16_t  d;                               // scale
};
static_assert(sizeof(block_tq1_0) == 54, "tq1_0 block is 54 bytes");

struct block_tq2_0 {
    uint8_t qs[QK_K / 4];  // four 2-bit quants per byte, see the file comment
    fp16_t  d;             // scale
};
static_assert(sizeof(block_tq2_0) == 66, "tq2_0 block is 66 bytes");

// Decoders: `k` elements (a multiple of the block size) from k/QK blocks at `x` to `y`.
void dequantize_row_q1_0(const block_q1_0 * x, float * y, int64_t k);
void dequantize_row_q2_0(const block_q2_0 * x, float * y, int64_t k);
void dequantize_row_tq1_0(const block_tq1_0 * x, float * y, int64_t k);
void dequantize_row_tq2_0(const block_tq2_0 * x, float * y, int64_t k);

// Encoders: one row of `k` elements (a multiple of the block size); `imatrix` is null or
// k importance weights, minimising sum_j imatrix_j (x_j - y_j)^2 as in legacy.h (ggml's
// reference encoders of these formats ignore an imatrix). Each block's scale minimises
// the (weighted) squared error over candidates that include ggml's reference choice
// (q1_0: d = mean |x|; q2_0, tq1_0, tq2_0: d = max |x|), so no block is worse than
// ggml's reference encoder:
//   q1_0: the sign of each x (x >= 0 -> +d) and the best d for those signs;
//   q2_0: a scale search over levels -1..2, either sign of d;
//   tq1_0, tq2_0: ternary levels -1, 0, 1 (tq2_0's level 2 is never written, so the
//   weights stay ternary), the scale from the best "largest k magnitudes" support.
// NaN inputs encode as 0 (q1_0: as -d), +-Inf saturate; scales are kept finite.
void quantize_q1_0(const float * x, block_q1_0 * y, int64_t k, const float * imatrix);
void quantize_q2_0(const float * x, block_q2_0 * y, int64_t k, const float * imatrix);
void quantize_tq1_0(const float * x, block_tq1_0 * y, int64_t k, const float * imatrix);
void quantize_tq2_0(const float * x, block_tq2_0 * y, int64_t k, const float * imatrix);

} // namespace gk::quant
