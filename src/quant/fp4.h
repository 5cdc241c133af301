// fp4.h - the 4-bit codebook formats: MXFP4, NVFP4, IQ4_NL and IQ4_XS.
//
// All four store one 4-bit index per element into a 16-entry codebook and scale it per
// group. Within each group of G elements (G = 32, or 16 for NVFP4) byte j of `qs` holds
// element j in its low nibble and element j + G/2 in its high nibble.
//
// Layouts and value tables as published in ggml's ggml-common.h (block_mxfp4,
// block_nvfp4, block_iq4_nl, block_iq4_xs, kvalues_fp4, kvalues_iq4nl); the scale
// decodes as in ggml-impl.h (ggml_e8m0_to_fp32_half, ggml_ue4m3_to_fp32).
//
// The "half" convention: the E2M1 codebook is stored doubled (integers 0..12), so the
// scales decode to half their nominal value; value = code_value * half_scale.
#pragma once

#include "fp16.h"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace gk::quant {

// ---- MXFP4: OCP microscaling FP4, 32 E2M1 elements sharing one E8M0 exponent ----------

constexpr int QK_MXFP4 = 32;

struct block_mxfp4 {
    uint8_t e;                 // E8M0 shared exponent: scale = 2^(e - 127)
    uint8_t qs[QK_MXFP4 / 2];  // E2M1 codes, nibble order as in the file comment
};
static_assert(sizeof(block_mxfp4) == 17, "block_mxfp4 is 17 bytes");

// ---- NVFP4: 64 E2M1 elements, one UE4M3 scale per 16 ------------------------------------

constexpr int QK_NVFP4     = 64;
constexpr int QK_NVFP4_SUB = 16;  // elements per UE4M3 scale

struct block_nvfp4 {
    uint8_t d[QK_NVFP4 / QK_NVFP4_SUB];  // UE4M3 scale codes, one per 16 elements
    uint8_t qs[QK_NVFP4 / 2];            // E2M1 codes; 8 bytes per 16-element group
};
static_assert(sizeof(block_nvfp4) == 36, "block_nvfp4 is 36 bytes");

// ---- IQ4_NL: 32 indices into the non-linear codebook, one f16 scale ---------------------

constexpr int QK4_NL = 32;

struct block_iq4_nl {
    fp16_t  d;               // scale (f16)
    uint8_t qs[QK4_NL / 2];  // codebook indices
};
static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl is 18 bytes");

// ---- IQ4_XS: 256 elements (ggml's QK_K), 8 sub-blocks of 32 with 6-bit scales ------------

constexpr int QK_IQ4_XS = 256;  // ggml's QK_K

struct block_iq4_xs {
    fp16_t   d;                       // super-block scale (f16)
    uint16_t scales_h;                // bits 2*ib..2*ib+1: high 2 bits of sub-block ib's scale
    uint8_t  scales_l[QK_IQ4_XS / 64];  // nibble ib%2 of byte ib/2: low 4 bits of scale ib
    uint8_t  qs[QK_IQ4_XS / 2];       // codebook indices, 16 bytes per sub-block of 32
};
static_assert(sizeof(block_iq4_xs) == 136, "block_iq4_xs is 136 bytes");

// ---- value tables --------------------------------------------------------------------

/// E2M1 codebook, doubled (ggml's kvalues_fp4 / kvalues_mxfp4): code c (bit 3 = sign,
/// bits 2..1 = exponent, bit 0 = mantissa) decodes to k_e2m1_doubled[c] / 2.
inline constexpr int8_t k_e2m1_doubled[16] = {
    0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
};

/// IQ4_NL / IQ4_XS codebook (ggml's kvalues_iq4nl), ascending.
inline constexpr int8_t k_iq4nl_values[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

/// E8M0 exponent byte -> half its scale, 2^(e - 128), exactly (ggml_e8m0_to_fp32_half).
/// Every code is finite: 0 and 1 give the subnormals 2^-128 and 2^-127, 255 gives 2^127
/// (the OCP NaN code 0xFF is not treated specially, as in ggml).
constexpr float e8m0_to_fp32_half(uint8_t e) {
    const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e) - 1u) << 23;
    return std::bit_cast<float>(bits);
}

/// UE4M3 scale byte -> half its value, exactly as ggml's ggml_ue4m3_to_fp32 decodes it:
/// bit 7 is ignored; exponent = bits 6..3 (bias 7), mantissa = bits 2..0; exponent 0 is
/// subnormal (m * 2^-9); the codes 0x00 and 0x7F decode to 0 (0xFF, whose low seven bits
/// are also 0x7F, decodes as an ordinary number: 240). The result is value * 0.5.
constexpr float ue4m3_to_fp32_half(uint8_t x) {
    if (x == 0x00 || x == 0x7F) {
        return 0.0f;
    }
    const uint32_t exp = (x >> 3) & 0xFu;
    const uint32_t man = x & 0x7u;
    float raw;
    if (exp == 0) {
        raw = static_cast<float>(man) * (1.0f / 512.0f);
    } else {
        // (1 + man/8) * 2^(exp - 7), built from its bits (exact).
        raw = std::bit_cast<float>(((exp + 120u) << 23) | (man << 20));
    }
    return raw * 0.5f;
}

/// All 256 UE4M3 codes decoded by ue4m3_to_fp32_half (kernels read this in inner loops).
inline constexpr std::array<float, 256> k_ue4m3_half = [] {
    std::array<float, 256> t{};
    for (int c = 0; c < 256; ++c) {
        t[static_cast<std::size_t>(c)] = ue4m3_to_fp32_half(static_cast<uint8_t>(c));
    }
    return t;
}();

/// The largest UE4M3 code an encoder writes (448); codes 0x00..0x7E increase with value.
constexpr uint8_t k_ue4m3_max_code = 0x7E;

// ---- row codecs (n = a whole number of blocks; see codec.h for the contracts) ---------

void dequantize_row_mxfp4(const void * src, float * dst, int64_t n);
void dequantize_row_nvfp4(const void * src, float * dst, int64_t n);
void dequantize_row_iq4_nl(const void * src, float * dst, int64_t n);
void dequantize_row_iq4_xs(const void * src, float * dst, int64_t n);

/// Encoders. `imatrix` is null or holds n non-negative importance weights; all four
/// weight their error by it (ggml's reference uses it for IQ4_NL/IQ4_XS only).
void quantize_row_mxfp4(const float * src, void * dst, int64_t n, const float * imatrix);
void quantize_row_nvfp4(const float * src, void * dst, int64_t n, const float * imatrix);
void quantize_row_iq4_nl(const float * src, void * dst, int64_t n, const float * imatrix);
void quantize_row_iq4_xs(const float * src, void * dst, int64_t n, const float * imatrix);

/// IQ4_NL's reference encoder: the bytes of ggml's quantize_row_iq4_nl_ref (its CPU
/// from_float for IQ4_NL, what its set_rows writes into a quantized KV cache). Per block
/// of 32, with max the element of largest |x| (the first on a tie): a block with
/// max|x| < 1e-15 stores d = 0 and index 0 everywhere; otherwise each x takes the index of
/// the codebook entry nearest to x * (1 / (max / -127)) (a value on a midpoint takes the
/// upper entry), and d = sum(w q x) / sum(w q q) over the chosen entries q with weights
/// w = x^2, in f32 in element order, stored as f16. No search (ggml's ntry = -1).
/// NaN inputs are defined (they take index 0). n is a multiple of 32.
void quantize_row_iq4_nl_ref(const float * src, void * dst, int64_t n);

} // namespace gk::quant
