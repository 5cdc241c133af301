// legacy.h - the legacy 32-element block formats: q4_0, q4_1, q5_0, q5_1, q8_0, q8_1.
//
// Byte layouts as published in ggml's ggml-common.h (all fields little-endian; f16
// fields are raw IEEE binary16 bits, see fp16.h). Element j of a block decodes to
//   q4_0: (q - 8) * d            q = nibble j (low nibbles hold j < 16, high j >= 16)
//   q4_1: q * d + m              q = nibble j as above
//   q5_0: (q - 16) * d           q = nibble j | bit j of qh << 4
//   q5_1: q * d + m              q = nibble j | bit j of qh << 4
//   q8_0, q8_1: qs[j] * d
// each product and sum rounded to f32 in that order (bit for bit ggml's
// dequantize_row_*). q8_1 also stores s = d * sum(qs), used by dot products only.
#pragma once

#include "fp16.h"

#include <cstdint>

namespace gk::quant {

inline constexpr int QK4_0 = 32;
inline constexpr int QK4_1 = 32;
inline constexpr int QK5_0 = 32;
inline constexpr int QK5_1 = 32;
inline constexpr int QK8_0 = 32;
inline constexpr int QK8_1 = 32;

struct block_q4_0 {
    fp16_t  d;              // scale
    uint8_t qs[QK4_0 / 2];  // element j in the low nibble of qs[j], j + 16 in the high one
};
static_assert(sizeof(block_q4_0) == 18, "q4_0 block is 18 bytes");

struct block_q4_1 {
    fp16_t  d;              // scale
    fp16_t  m;              // offset (the block minimum)
    uint8_t qs[QK4_1 / 2];  // nibbles as in q4_0
};
static_assert(sizeof(block_q4_1) == 20, "q4_1 block is 20 bytes");

struct block_q5_0 {
    fp16_t  d;              // scale
    uint8_t qh[4];          // bit j (little-endian u32) = fifth bit of element j
    uint8_t qs[QK5_0 / 2];  // low four bits, nibbles as in q4_0
};
static_assert(sizeof(block_q5_0) == 22, "q5_0 block is 22 bytes");

struct block_q5_1 {
    fp16_t  d;              // scale
    fp16_t  m;              // offset (the block minimum)
    uint8_t qh[4];          // fifth bits as in q5_0
    uint8_t qs[QK5_1 / 2];  // low four bits as in q5_0
};
static_assert(sizeof(block_q5_1) == 24, "q5_1 block is 24 bytes");

struct block_q8_0 {
    fp16_t d;               // scale
    int8_t qs[QK8_0];       // quants
};
static_assert(sizeof(block_q8_0) == 34, "q8_0 block is 34 bytes");

struct block_q8_1 {
    fp16_t d;               // scale
    fp16_t s;               // d * sum(qs), as f16 (d taken before its f16 rounding)
    int8_t qs[QK8_1];       // quants
};
static_assert(sizeof(block_q8_1) == 36, "q8_1 block is 36 bytes");

// Decoders: `k` elements (a multiple of 32) from k/32 blocks at `x` to `y`.
void dequantize_row_q4_0(const block_q4_0 * x, float * y, int64_t k);
void dequantize_row_q4_1(const block_q4_1 * x, float * y, int64_t k);
void dequantize_row_q5_0(const block_q5_0 * x, float * y, int64_t k);
void dequantize_row_q5_1(const block_q5_1 * x, float * y, int64_t k);
void dequantize_row_q8_0(const block_q8_0 * x, float * y, int64_t k);
void dequantize_row_q8_1(const block_q8_1 * x, float * y, int64_t k);

// File encoders (what gk-quantize writes): one row of `k` elements (a multiple of 32).
// `imatrix` is null or holds k non-negative importance weights (llama.cpp's imatrix, the
// mean squared activation of each column); with it, the error minimised is
// sum_j imatrix_j (x_j - y_j)^2 (the expected squared error of a dot product with such
// activations), otherwise the plain squared error. ggml's encoders weight by
// imatrix_j * sqrt(mean(x^2) + x_j^2) instead; we minimise the imatrix-weighted error
// itself. Each block's scale (and offset) is chosen by a least-squares search
// (scale_search.h) that includes ggml's max-abs (min/max) choice, so without an imatrix
// no block is worse than ggml's reference encoder. NaN inputs encode as 0, +-Inf
// saturate; scales are kept finite.
void quantize_q4_0(const float * x, block_q4_0 * y, int64_t k, const float * imatrix);
void quantize_q4_1(const float * x, block_q4_1 * y, int64_t k, const float * imatrix);
void quantize_q5_0(const float * x, block_q5_0 * y, int64_t k, const float * imatrix);
void quantize_q5_1(const float * x, block_q5_1 * y, int64_t k, const float * imatrix);
void quantize_q8_0(const float * x, block_q8_0 * y, int64_t k, const float * imatrix);

// Activation quantizers for the CPU dot products (the right-hand side of vec_dot):
// bit for bit ggml's quantize_row_q8_0_ref / quantize_row_q8_1_ref on finite input.
// Per block: d = max|x| / 127, q_j = round(x_j / d) (via x_j * (1/d), halves away from
// zero), stored d = f16(d); q8_1 also stores s = f16(d * sum q_j) with the unrounded d.
// An all-zero block gives d = 0, q = 0. NaN inputs give q = 0 (and are ignored by max|x|).
// `k` is a multiple of 32.
void quantize_row_q8_0(const float * x, block_q8_0 * y, int64_t k);
void quantize_row_q8_1(const float * x, block_q8_1 * y, int64_t k);

// The same blocks by ggml's CPU rule on x86 (ggml-cpu's quantize_row_q8_0 / _q8_1 for AVX and
// AVX2, which every x86-64 build of llama.cpp runs on the activations of its q8_0- and
// q8_1-paired dot products): d = max|x| / 127, id = 127 / max|x| (0 for an all-zero block),
// q_j = x_j * id rounded to nearest, ties to even; stored d = f16(d); q8_1's s as above. It
// differs from the reference rule in a few quants per thousand (ties, and products the two
// id's round to different sides of a half). gk's dot products use it on every ISA, so that
// gk computes llama.cpp's x86 activations everywhere. A block holding a NaN or an infinity
// (where ggml's vector code has no defined answer) is quantized by the reference rule.
void quantize_row_q8_0_dot(const float * x, block_q8_0 * y, int64_t k);
void quantize_row_q8_1_dot(const float * x, block_q8_1 * y, int64_t k);

// Reference encoders of the 4- and 5-bit formats: the bytes of ggml's quantize_row_q4_0_ref,
// _q4_1_ref, _q5_0_ref and _q5_1_ref (ggml's CPU from_float for these types: what its
// set_rows writes into a quantized KV cache). One pass per block, no search:
//   q4_0 / q5_0: d = max / -8 (/ -16), max the element of largest |x| (the first on a tie);
//                level = trunc(x * (1/d) + 8.5 (16.5)), at most 15 (31);
//   q4_1 / q5_1: m = min, d = (max - min) / 15 (/ 31); level = trunc((x - m) * (1/d) + 0.5),
//                at most 15 (31);
// with 1/d taken as 0 when d is 0, each operation rounded to f32 in that order, d and m
// stored as f16 (round to nearest even). Identical to ggml on every block where its
// float-to-int conversions are defined; a NaN or infinite input gives a defined block
// (levels clamped into range, NaN to level 0) where ggml's behaviour is undefined.
// `k` is a multiple of 32.
void quantize_row_q4_0_ref(const float * x, block_q4_0 * y, int64_t k);
void quantize_row_q4_1_ref(const float * x, block_q4_1 * y, int64_t k);
void quantize_row_q5_0_ref(const float * x, block_q5_0 * y, int64_t k);
void quantize_row_q5_1_ref(const float * x, block_q5_1 * y, int64_t k);

} // namespace gk::quant
