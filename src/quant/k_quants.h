// k_quants.h - the K-quant block formats: super-blocks of QK_K = 256 elements split
// into sub-blocks that each carry a small integer scale (and, for the "min" formats,
// a small integer offset), themselves scaled by one or two f16 super-block factors.
//
//   q2_K (GGUF id 10)  16 x 16, x = d*sc*q - dmin*m,  q 0..3,   sc, m 4-bit
//   q3_K (id 11)       16 x 16, x = d*sc*q,           q -4..3,  sc 6-bit signed
//   q4_K (id 12)        8 x 32, x = d*sc*q - dmin*m,  q 0..15,  sc, m 6-bit
//   q5_K (id 13)        8 x 32, x = d*sc*q - dmin*m,  q 0..31,  sc, m 6-bit
//   q6_K (id 14)       16 x 16, x = d*sc*q,           q -32..31, sc int8
//   q8_K (id 15)       activations for the dot products: f32 d, 256 int8, 16 int16 sums
//
// Byte layouts as published in ggml's ggml-common.h; field names follow it. The
// decoders equal ggml's reference decoders bit for bit (same float operations in the
// same order). Element e of a block lives in sub-block e / 16 (or e / 32 for
// q4_K/q5_K); where its bits sit in qs/qh/hmask is written beside each struct.
#pragma once

#include "fp16.h"

#include <cstdint>

namespace gk::quant {

inline constexpr int QK_K         = 256;  // elements per super-block
inline constexpr int K_SCALE_SIZE = 12;   // bytes of packed 6-bit scales (q3_K, q4_K, q5_K)

/// q2_K, 84 bytes. Element e = 128*h + 32*k + l (h 0..1, k 0..3, l 0..31) has its 2-bit
/// quant at bits 2k..2k+1 of qs[32*h + l]. scales[j]: low nibble = scale, high = min.
struct block_q2_K {
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    fp16_t  d;     // multiplies the 4-bit scales
    fp16_t  dmin;  // multiplies the 4-bit mins
};

/// q3_K, 110 bytes. Low 2 bits of each quant as in q2_K's qs; element 128*h + 32*k + l
/// has its high bit at bit 4*h + k of hmask[l]; quant = low2 - (high bit ? 0 : 4).
/// scales: 16 signed 6-bit scales packed as unpack_scales_q3_K() reads them.
struct block_q3_K {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[K_SCALE_SIZE];
    fp16_t  d;
};

/// q4_K, 144 bytes. Element 64*c + l (c 0..3, l 0..31) is the low nibble of qs[32*c + l],
/// element 64*c + 32 + l its high nibble. scales: 8 scales + 8 mins, 6 bits each,
/// packed as unpack_scale_min_k4() reads them.
struct block_q4_K {
    fp16_t  d;
    fp16_t  dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
};

/// q5_K, 176 bytes. Low 4 bits as in q4_K's qs; the 5th bit of element 64*c + l is bit 2c
/// of qh[l], that of element 64*c + 32 + l bit 2c + 1. Scales as in q4_K.
struct block_q5_K {
    fp16_t  d;
    fp16_t  dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
};

/// q6_K, 210 bytes. Stored value v = quant + 32 (0..63). For half h (0..1) and l 0..31,
/// with L = ql + 64*h and H = qh + 32*h: element 128h + l     = L[l] low  | H[l] bits 0-1,
///                                        128h + 32 + l = L[l+32] low | H[l] bits 2-3,
///                                        128h + 64 + l = L[l] high   | H[l] bits 4-5,
///                                        128h + 96 + l = L[l+32] high| H[l] bits 6-7.
struct block_q6_K {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t  scales[QK_K / 16];
    fp16_t  d;
};

/// q8_K, 292 bytes: x = d * qs[e]; bsums[g] = sum of qs[16g .. 16g+15].
struct block_q8_K {
    float   d;
    int8_t  qs[QK_K];
    int16_t bsums[QK_K / 16];
};

static_assert(sizeof(block_q2_K) == 84);
static_assert(sizeof(block_q3_K) == 110);
static_assert(sizeof(block_q4_K) == 144);
static_assert(sizeof(block_q5_K) == 176);
static_assert(sizeof(block_q6_K) == 210);
static_assert(sizeof(block_q8_K) == 292);

// ---- packed sub-block scales ------------------------------------------------------

/// q4_K / q5_K: the 6-bit scale `sc` and min `m` of sub-block j (0..7) from the 12
/// packed bytes. Sub-blocks 0..3 keep both in the low 6 bits of bytes j and j+4;
/// sub-blocks 4..7 keep their low 4 bits in the nibbles of byte j+4 (scale low, min
/// high) and their top 2 bits in the top 2 bits of bytes j-4 (scale) and j (min).
constexpr void unpack_scale_min_k4(int j, const uint8_t * packed, uint8_t & sc, uint8_t & m) {
    if (j < 4) {
        sc = packed[j] & 63;
        m  = packed[j + 4] & 63;
    } else {
        sc = static_cast<uint8_t>((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4));
        m  = static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
    }
}

/// Inverse of unpack_scale_min_k4: pack 8 scales and 8 mins (each 0..63; higher bits
/// are dropped) into 12 bytes, every byte written.
constexpr void pack_scales_mins_k4(const uint8_t * sc, const uint8_t * m, uint8_t * packed) {
    for (int j = 0; j < 4; ++j) {
        packed[j]     = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        packed[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
    }
}

/// q3_K: the 16 signed scales (-32..31) from the 12 packed bytes. Scale j has its low
/// 4 bits in byte j % 8 (low nibble for j < 8, high nibble for j >= 8) and its top 2
/// bits at bits 2*(j/4) of byte 8 + j % 4; the stored 6-bit value is scale + 32.
constexpr void unpack_scales_q3_K(const uint8_t * packed, int8_t * sc) {
    for (int j = 0; j < 16; ++j) {
        const int lo = (packed[j % 8] >> (4 * (j / 8))) & 0xF;
        const int hi = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = static_cast<int8_t>((lo | (hi << 4)) - 32);
    }
}

/// Inverse of unpack_scales_q3_K: pack 16 scales (each -32..31; out-of-range values
/// are clamped) into 12 bytes, every byte written.
constexpr void pack_scales_q3_K(const int8_t * sc, uint8_t * packed) {
    for (int b = 0; b < K_SCALE_SIZE; ++b) {
        packed[b] = 0;
    }
    for (int j = 0; j < 16; ++j) {
        const int s = sc[j] < -32 ? 0 : sc[j] > 31 ? 63 : sc[j] + 32;
        packed[j % 8] = static_cast<uint8_t>(packed[j % 8] | ((s & 0xF) << (4 * (j / 8))));
        packed[8 + j % 4] = static_cast<uint8_t>(packed[8 + j % 4] | ((s >> 4) << (2 * (j / 4))));
    }
}

// ---- rows ---------------------------------------------------------------------------
// `k` counts elements; a row holds k / QK_K whole blocks (a trailing remainder of
// k % QK_K elements is neither read nor written). Every byte / float of the output
// blocks is written.

/// Decode k elements to f32, bit for bit as ggml's dequantize_row_q*_K.
void dequantize_row_q2_K(const block_q2_K * x, float * y, int64_t k);
void dequantize_row_q3_K(const block_q3_K * x, float * y, int64_t k);
void dequantize_row_q4_K(const block_q4_K * x, float * y, int64_t k);
void dequantize_row_q5_K(const block_q5_K * x, float * y, int64_t k);
void dequantize_row_q6_K(const block_q6_K * x, float * y, int64_t k);
void dequantize_row_q8_K(const block_q8_K * x, float * y, int64_t k);

/// Encode k elements. `imatrix` is null or holds k non-negative importance weights
/// (one per column of the row; negative, NaN or infinite entries count as 0); with it
/// the encoder minimises the imatrix-weighted squared error, without it the plain one.
void quantize_row_q2_K(const float * x, block_q2_K * y, int64_t k, const float * imatrix);
void quantize_row_q3_K(const float * x, block_q3_K * y, int64_t k, const float * imatrix);
void quantize_row_q4_K(const float * x, block_q4_K * y, int64_t k, const float * imatrix);
void quantize_row_q5_K(const float * x, block_q5_K * y, int64_t k, const float * imatrix);
void quantize_row_q6_K(const float * x, block_q6_K * y, int64_t k, const float * imatrix);

/// Quantise activations for the K-quant dot products, per block: with `max` the element
/// of largest magnitude (the first one on ties), iscale = -127 / max, qs = round to
/// nearest even (iscale * x) clamped to [-128, 127], d = 1 / iscale, bsums[g] = the sum
/// of the 16 quants of group g. An all-zero block gets d = 0, qs = 0, bsums = 0. Bit for
/// bit equal to ggml's quantize_row_q8_K_ref on finite input.
void quantize_row_q8_K(const float * x, block_q8_K * y, int64_t k);

} // namespace gk::quant
