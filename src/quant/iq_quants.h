// iq_quants.h - the lattice i-quants: super-blocks of QK_K = 256 values coded as points
// of a fixed codebook ("grid") of 8- or 4-vectors, with sign bits, small integer
// sub-block scales and one f16 super-block scale.
//
//   type     id  bytes  grid (points x dim, entry values)   sub-block scale     signs
//   iq2_xxs  16   66    iq2xxs_grid 256 x 8, {8,25,43}       4-bit per 32        7 + parity per 8
//   iq2_xs   17   74    iq2xs_grid  512 x 8, {8,25,43}       4-bit per 16        7 + parity per 8
//   iq2_s    22   82    iq2s_grid  1024 x 8, {8,25,43}       4-bit per 16        8 per 8
//   iq3_xxs  18   98    iq3xxs_grid 256 x 4, {4,12,..,52,62} 4-bit per 32        7 + parity per 8
//   iq3_s    21  110    iq3s_grid   512 x 4, {1,3,..,15}     4-bit per 32        8 per 8
//   iq1_s    19   50    iq1s_grid  2048 x 8, {-1,0,1}        3-bit per 32        none (shift +-1/8 per 32)
//   iq1_m    29   56    iq1s_grid  2048 x 8, {-1,0,1}        3-bit per 16        none (shift +-1/8 per 8)
//
// Decoded values (d = the f16 super-block scale, s = a sub-block's scale code, g = the
// grid entry's coordinate, sign = -1 where the sign bit is set):
//   iq2_*:   d * (0.5f + s) * 0.25f * g * sign
//   iq3_xxs: d * (0.5f + s) * 0.5f  * g * sign
//   iq3_s:   d * (1 + 2*s)          * g * sign
//   iq1_*:   d * (2*s + 1) * (g + delta),  delta = -+IQ1S_DELTA by the shift bit
// "7 + parity": a group of 8 stores 7 sign bits; the 8th is their parity (ksigns_iq2xs),
// so every group has an even number of negative values.
//
// Byte layouts, grids and sign tables as published in ggml's ggml-common.h; field names
// follow it. The decoders equal ggml's reference decoders (dequantize_row_iq*) bit for
// bit: the same float operations in the same order. Multi-byte fields are little-endian.
#pragma once

#include "fp16.h"
#include "k_quants.h"  // QK_K

#include <bit>
#include <cstdint>

namespace gk::quant {

static_assert(std::endian::native == std::endian::little, "the i-quant layouts are little-endian");

// ---- value tables (defined in iq_tables.cpp) ----------------------------------------

extern const uint8_t  kmask_iq2xs[8];      // kmask_iq2xs[j] = 1 << j
extern const uint8_t  ksigns_iq2xs[128];   // 7 sign bits -> 8 with even parity: i | parity(i) << 7
extern const uint64_t iq2xxs_grid[256];    // byte j = coordinate j, values 8, 25, 43
extern const uint64_t iq2xs_grid[512];
extern const uint64_t iq2s_grid[1024];
extern const uint32_t iq3xxs_grid[256];    // byte j = coordinate j, values 4, 12, ..., 52, 62
extern const uint32_t iq3s_grid[512];      // byte j = coordinate j, values 1, 3, ..., 15
extern const uint64_t iq1s_grid[2048];     // byte j = coordinate j as int8: -1, 0, +1

inline constexpr float IQ1S_DELTA = 0.125f;  // the shift of iq1_s
inline constexpr float IQ1M_DELTA = 0.125f;  // the shift of iq1_m

// Sub-block scales exactly as the reference decoders compute them from the decoded f16 d
// and a sub-block's scale code (each is affine in the code).
inline float iq2_sub_scale(float d, int code) { return d * (0.5f + static_cast<float>(code)) * 0.25f; }
inline float iq3xxs_sub_scale(float d, int code) { return d * (0.5f + static_cast<float>(code)) * 0.5f; }
inline float iq3s_sub_scale(float d, int code) { return d * static_cast<float>(1 + 2 * code); }
inline float iq1_sub_scale(float d, int code) { return d * static_cast<float>(2 * code + 1); }

// ---- block layouts ---------------------------------------------------------------------

/// iq2_xxs, 66 bytes. Sub-block b (32 values) owns the 8 bytes at qs + 4*b: bytes 0..3 are
/// the grid indices of its four groups of 8; the following little-endian u32 holds the
/// groups' 7-bit sign codes at bits 7*l .. 7*l+6 and the scale code at bits 28..31.
struct block_iq2_xxs {
    fp16_t   d;
    uint16_t qs[QK_K / 8];
};

/// iq2_xs, 74 bytes. qs[g] (group g of 8): grid index in bits 0..8, 7-bit sign code in
/// bits 9..15. scales[b]: low nibble = scale of values 32b..32b+15, high nibble of the next 16.
struct block_iq2_xs {
    fp16_t   d;
    uint16_t qs[QK_K / 8];
    uint8_t  scales[QK_K / 32];
};

/// iq2_s, 82 bytes. Group g of 8: grid index qs[g] | ((qh[g/4] >> 2*(g%4)) & 3) << 8,
/// sign bits qs[QK_K/8 + g] (bit j = value j). scales as in iq2_xs.
struct block_iq2_s {
    fp16_t  d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
};

/// iq3_xxs, 98 bytes. qs[0..63]: grid index of each group of 4; qs[64 + 4b ..] holds
/// sub-block b's u32: 7-bit sign codes of its four groups of 8 at bits 7*l, scale at 28..31.
struct block_iq3_xxs {
    fp16_t  d;
    uint8_t qs[3 * QK_K / 8];
};

/// iq3_s, 110 bytes. Group q of 4: grid index qs[q] | ((qh[q/8] >> (q%8)) & 1) << 8.
/// signs[g]: bit j = value j of group g of 8. scales[p]: low nibble = sub-block 2p, high = 2p+1.
struct block_iq3_s {
    fp16_t  d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[QK_K / 64];
};

/// iq1_s, 50 bytes. Sub-block b (32 values, groups 4b..4b+3): qh[b] bits 3l..3l+2 = high 3
/// bits of group 4b+l's 11-bit grid index (low 8 bits in qs), bits 12..14 = scale code,
/// bit 15 = shift sign (set: -IQ1S_DELTA).
struct block_iq1_s {
    fp16_t   d;
    uint8_t  qs[QK_K / 8];
    uint16_t qh[QK_K / 32];
};

/// iq1_m, 56 bytes. Group g of 8: grid index qs[g] | ((qh[g/2] >> 4*(g%2)) & 7) << 8, shift
/// sign bit 3 + 4*(g%2) of qh[g/2]. scales, read as four little-endian u16 sc[0..3]: the
/// 3-bit code of sub-block k (16 values) at bits 3*(k%4) of sc[k/4]; the f16 d is
/// assembled from the top nibbles: sc[0]>>12 | (sc[1]>>8 & 0xf0) | (sc[2]>>4 & 0xf00) | (sc[3] & 0xf000).
struct block_iq1_m {
    uint8_t qs[QK_K / 8];
    uint8_t qh[QK_K / 16];
    uint8_t scales[QK_K / 32];
};

static_assert(sizeof(block_iq2_xxs) == 66, "iq2_xxs block");
static_assert(sizeof(block_iq2_xs) == 74, "iq2_xs block");
static_assert(sizeof(block_iq2_s) == 82, "iq2_s block");
static_assert(sizeof(block_iq3_xxs) == 98, "iq3_xxs block");
static_assert(sizeof(block_iq3_s) == 110, "iq3_s block");
static_assert(sizeof(block_iq1_s) == 50, "iq1_s block");
static_assert(sizeof(block_iq1_m) == 56, "iq1_m block");

// ---- rows ------------------------------------------------------------------------------
//
// Decoders: `k` values (k / QK_K whole blocks; a trailing partial block is ignored) from
// the blocks at `x`, which may have any alignment. Every output value is written.
//
// Encoders: one row of `n` values (whole blocks) into blocks at `y` (any alignment).
// `imatrix` is null or holds n importance weights (llama.cpp's imatrix); negative or
// non-finite importances count as 0. Input NaN is coded as 0 and +-Inf as +-FLT_MAX; the
// super-block scale saturates at the largest finite f16. Every byte of output is written.

void dequantize_row_iq2_xxs(const void * x, float * y, int64_t k);
void dequantize_row_iq2_xs(const void * x, float * y, int64_t k);
void dequantize_row_iq2_s(const void * x, float * y, int64_t k);
void dequantize_row_iq3_xxs(const void * x, float * y, int64_t k);
void dequantize_row_iq3_s(const void * x, float * y, int64_t k);
void dequantize_row_iq1_s(const void * x, float * y, int64_t k);
void dequantize_row_iq1_m(const void * x, float * y, int64_t k);

void quantize_row_iq2_xxs(const float * x, void * y, int64_t n, const float * imatrix);
void quantize_row_iq2_xs(const float * x, void * y, int64_t n, const float * imatrix);
void quantize_row_iq2_s(const float * x, void * y, int64_t n, const float * imatrix);
void quantize_row_iq3_xxs(const float * x, void * y, int64_t n, const float * imatrix);
void quantize_row_iq3_s(const float * x, void * y, int64_t n, const float * imatrix);
void quantize_row_iq1_s(const float * x, void * y, int64_t n, const float * imatrix);
void quantize_row_iq1_m(const float * x, void * y, int64_t n, const float * imatrix);

} // namespace gk::quant
