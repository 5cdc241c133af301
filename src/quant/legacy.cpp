// legacy.cpp - decoders and encoders of q4_0, q4_1, q5_0, q5_1, q8_0, q8_1 (legacy.h).
//
// Every block is handled through its 32 stored quants q (unsigned for q4/q5: nibble plus
// fifth bit; the int8 values for q8): symmetric formats decode (q - bias) * d, affine
// ones q * d + m.
#include "legacy.h"

#include "block_rows.h"
#include "codec.h"
#include "scale_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gk::quant {
namespace {

constexpr int QK = 32;  // every legacy format has 32-element blocks

// --- stored quants <-> block bytes ------------------------------------------------

/// Nibbles: element j < 16 in the low nibble of qs[j], element j + 16 in the high one.
void unpack_nibbles(const uint8_t * qs, int * q) {
    for (int j = 0; j < QK / 2; ++j) {
        q[j]          = qs[j] & 0x0F;
        q[j + QK / 2] = qs[j] >> 4;
    }
}

void pack_nibbles(const int * q, uint8_t * qs) {
    for (int j = 0; j < QK / 2; ++j) {
        qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + QK / 2] & 0x0F) << 4));
    }
}

/// Fifth bits: bit j of the little-endian u32 qh is bit 4 of element j.
void unpack_fifth_bits(const uint8_t * qh, int * q) {
    uint32_t h;
    std::memcpy(&h, qh, sizeof(h));
    for (int j = 0; j < QK; ++j) {
        q[j] |= static_cast<int>(((h >> j) & 1u) << 4);
    }
}

void pack_fifth_bits(const int * q, uint8_t * qh) {
    uint32_t h = 0;
    for (int j = 0; j < QK; ++j) {
        h |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
    }
    std::memcpy(qh, &h, sizeof(h));
}

void stored_quants(const block_q4_0 & b, int * q) { unpack_nibbles(b.qs, q); }
void stored_quants(const block_q4_1 & b, int * q) { unpack_nibbles(b.qs, q); }
void stored_quants(const block_q5_0 & b, int * q) {
    unpack_nibbles(b.qs, q);
    unpack_fifth_bits(b.qh, q);
}
void stored_quants(const block_q5_1 & b, int * q) {
    unpack_nibbles(b.qs, q);
    unpack_fifth_bits(b.qh, q);
}
void stored_quants(const block_q8_0 & b, int * q) { std::copy(b.qs, b.qs + QK, q); }
void stored_quants(const block_q8_1 & b, int * q) { std::copy(b.qs, b.qs + QK, q); }

void store_quants(block_q4_0 & b, const int * q) { pack_nibbles(q, b.qs); }
void store_quants(block_q4_1 & b, const int * q) { pack_nibbles(q, b.qs); }
void store_quants(block_q5_0 & b, const int * q) {
    pack_nibbles(q, b.qs);
    pack_fifth_bits(q, b.qh);
}
void store_quants(block_q5_1 & b, const int * q) {
    pack_nibbles(q, b.qs);
    pack_fifth_bits(q, b.qh);
}
void store_quants(block_q8_0 & b, const int * q) {
    for (int j = 0; j < QK; ++j) {
        b.qs[j] = static_cast<int8_t>(q[j]);
    }
}

// --- decoding -----------------------------------------------------------------------

/// y = (q - Bias) * d: the int difference converted to f32, times d, rounded once.
template <class Block, int Bias>
void dequantize_symmetric(const Block * x, float * y, int64_t k) {
    int q[QK];
    for (int64_t i = 0; i < k / QK; ++i) {
        stored_quants(x[i], q);
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK; ++j) {
            y[i * QK + j] = static_cast<float>(q[j] - Bias) * d;
        }
    }
}

/// y = q * d + m: the product rounded to f32, then the sum (never fused).
template <class Block>
void dequantize_affine(const Block * x, float * y, int64_t k) {
    int q[QK];
    for (int64_t i = 0; i < k / QK; ++i) {
        stored_quants(x[i], q);
        const float d = fp16_to_fp32(x[i].d);
        const float m = fp16_to_fp32(x[i].m);
        for (int j = 0; j < QK; ++j) {
            const float prod = static_cast<float>(q[j]) * d;
            y[i * QK + j]    = prod + m;
        }
    }
}

// --- encoding -----------------------------------------------------------------------

// Candidate scale grids (see scale_search.h), chosen by measuring the error on gaussian
// rows against ggml's encoders.
constexpr scale_grid k_grid_q4        = {0.60f, 1.10f, 8};
constexpr scale_grid k_grid_q5        = {0.70f, 1.10f, 8};
constexpr scale_grid k_grid_q8        = {0.90f, 1.00f, 4};
constexpr scale_grid k_grid_affine    = {0.70f, 1.20f, 12};

/// One row of a symmetric format storing level L as L + Bias, levels [Lo, Hi];
/// `baseline_level` is the level
/// ggml's reference encoder gives the largest |x| (its scale = that x / baseline_level;
/// for q8_0, whose levels are symmetric, the sign of that scale does not matter).
template <class Block, int Bias, int Lo, int Hi>
void encode_symmetric(const float * x, Block * y, int64_t k, const float * imatrix, const scale_grid & grid,
                      float baseline_level) {
    for_each_weighted_block<QK>(x, k, imatrix, [&](int64_t i, const float * xb, const float * w) {
        int8_t L[QK];
        int    q[QK];
        y[i].d = fit_scale(xb, w, QK, Lo, Hi, grid, signed_max_abs(xb, QK) / baseline_level, L);
        for (int j = 0; j < QK; ++j) {
            q[j] = L[j] + Bias;
        }
        store_quants(y[i], q);
    });
}

/// One row of an affine format with levels [0, Nmax]; ggml's reference encoder uses
/// m = min, d = (max - min) / Nmax.
template <class Block, int Nmax>
void encode_affine(const float * x, Block * y, int64_t k, const float * imatrix, const scale_grid & grid) {
    for_each_weighted_block<QK>(x, k, imatrix, [&](int64_t i, const float * xb, const float * w) {
        uint8_t L[QK];
        int     q[QK];
        float   lo, hi;
        finite_range(xb, QK, lo, hi);
        const scale_offset dm = fit_scale_offset(xb, w, QK, Nmax, grid, (hi - lo) / Nmax, lo, L);
        y[i].d                = dm.d;
        y[i].m                = dm.m;
        std::copy(L, L + QK, q);
        store_quants(y[i], q);
    });
}

/// ggml's activation quantization of one 32-value block: returns d (before f16 rounding).
float quantize_block_q8(const float * x, int8_t * qs) {
    float amax = 0.0f;
    for (int j = 0; j < QK; ++j) {
        amax = std::max(amax, std::fabs(x[j]));  // a NaN never wins the comparison
    }
    const float d  = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < QK; ++j) {
        const float v = x[j] * id;
        qs[j]         = std::isnan(v) ? 0 : static_cast<int8_t>(std::round(std::clamp(v, -127.0f, 127.0f)));
    }
    return d;
}

void quantize_q8_1_row(const float * x, block_q8_1 * y, int64_t k, const float *) { quantize_row_q8_1(x, y, k); }

/// quantize_row_q8_0_dot's block of 32: writes qs, returns d (legacy.h). A block holding a
/// NaN or an infinity, or so small that 127 / max|x| overflows, goes to quantize_block_q8.
float quantize_block_q8_dot(const float * x, int8_t * qs) {
    float amax   = 0.0f;
    bool  finite = true;
    for (int j = 0; j < QK; ++j) {
        finite = finite && std::isfinite(x[j]);
        amax   = std::max(amax, std::fabs(x[j]));
    }
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    if (!finite || std::isinf(id)) {  // id infinite: amax below 127 / FLT_MAX, d = 0 in f16
        return quantize_block_q8(x, qs);
    }
    for (int j = 0; j < QK; ++j) {
        // |x_j * id| <= 127 (1 + 2^-23) rounds to at most 127; adding and subtracting
        // 1.5 * 2^23 rounds to the nearest integer, ties to even, as VROUNDPS does.
        const float v = (x[j] * id + 12582912.0f) - 12582912.0f;
        qs[j]         = static_cast<int8_t>(v);
    }
    return amax / 127.0f;
}


/// Rows of q8_0 / q8_1 blocks by one block rule (d = Block(x, qs)); q8_1 also stores
/// s = f16(float(sum of q) * d) with the unrounded d.
template <float (*Block)(const float *, int8_t *)> void q8_0_rows(const float * x, block_q8_0 * y, int64_t k) {
    for (int64_t i = 0; i < k / QK; ++i) {
        y[i].d = fp32_to_fp16(Block(x + i * QK, y[i].qs));
    }
}

template <float (*Block)(const float *, int8_t *)> void q8_1_rows(const float * x, block_q8_1 * y, int64_t k) {
    for (int64_t i = 0; i < k / QK; ++i) {
        const float d   = Block(x + i * QK, y[i].qs);
        int         sum = 0;
        for (int j = 0; j < QK; ++j) {
            sum += y[i].qs[j];
        }
        y[i].d = fp32_to_fp16(d);
        y[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

/// int(v) for v in [0, hi] (truncated toward zero), 0 below (and for NaN), hi above: ggml's
/// MIN(hi, (int8_t) v) wherever that is defined and not negative.
int truncated_level(float v, int hi) {
    if (!(v > 0.0f)) {
        return 0;
    }
    return v >= static_cast<float>(hi) ? hi : static_cast<int>(v);
}

/// ggml's reference encoder of a symmetric format with levels 0 .. 2 * Half - 1 decoding to
/// (q - Half) * d (legacy.h).
template <class Block, int Half>
void quantize_symmetric_ref(const float * x, Block * y, int64_t k) {
    for (int64_t i = 0; i < k / QK; ++i) {
        const float * xb   = x + i * QK;
        float         amax = 0.0f;
        float         max  = 0.0f;
        for (int j = 0; j < QK; ++j) {
            if (amax < std::fabs(xb[j])) {
                amax = std::fabs(xb[j]);
                max  = xb[j];
            }
        }
        const float d  = max / static_cast<float>(-Half);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int         q[QK];
        for (int j = 0; j < QK; ++j) {
            const float v = xb[j] * id;
            q[j]          = truncated_level(v + (static_cast<float>(Half) + 0.5f), 2 * Half - 1);
        }
        y[i].d = fp32_to_fp16(d);
        store_quants(y[i], q);
    }
}

/// ggml's reference encoder of an affine format with levels 0 .. Nmax decoding to q * d + m.
template <class Block, int Nmax>
void quantize_affine_ref(const float * x, Block * y, int64_t k) {
    for (int64_t i = 0; i < k / QK; ++i) {
        const float * xb  = x + i * QK;
        float         min = std::numeric_limits<float>::max();
        float         max = -std::numeric_limits<float>::max();
        for (int j = 0; j < QK; ++j) {
            if (xb[j] < min) min = xb[j];
            if (xb[j] > max) max = xb[j];
        }
        const float d  = (max - min) / static_cast<float>(Nmax);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int         q[QK];
        for (int j = 0; j < QK; ++j) {
            const float v = (xb[j] - min) * id;
            q[j]          = truncated_level(v + 0.5f, Nmax);
        }
        y[i].d = fp32_to_fp16(d);
        y[i].m = fp32_to_fp16(min);
        store_quants(y[i], q);
    }
}

// from_float_ref adapters (codec.h): the typed reference encoders on untyped rows.
template <class Block, void (*Encode)(const float *, Block *, int64_t)>
void encode_ref(const float * x, Block * y, int64_t k, const float *) {
    Encode(x, y, k);
}

template <class Block, void (*Encode)(const float *, Block *, int64_t)>
void encode_ref_row(const float * src, void * dst, int64_t n) {
    encode_blocks<Block, QK, encode_ref<Block, Encode>>(src, dst, n, nullptr);
}

} // namespace

void dequantize_row_q4_0(const block_q4_0 * x, float * y, int64_t k) { dequantize_symmetric<block_q4_0, 8>(x, y, k); }
void dequantize_row_q4_1(const block_q4_1 * x, float * y, int64_t k) { dequantize_affine(x, y, k); }
void dequantize_row_q5_0(const block_q5_0 * x, float * y, int64_t k) { dequantize_symmetric<block_q5_0, 16>(x, y, k); }
void dequantize_row_q5_1(const block_q5_1 * x, float * y, int64_t k) { dequantize_affine(x, y, k); }
void dequantize_row_q8_0(const block_q8_0 * x, float * y, int64_t k) { dequantize_symmetric<block_q8_0, 0>(x, y, k); }
void dequantize_row_q8_1(const block_q8_1 * x, float * y, int64_t k) { dequantize_symmetric<block_q8_1, 0>(x, y, k); }

void quantize_q4_0(const float * x, block_q4_0 * y, int64_t k, const float * imatrix) {
    encode_symmetric<block_q4_0, 8, -8, 7>(x, y, k, imatrix, k_grid_q4, -8.0f);
}
void quantize_q5_0(const float * x, block_q5_0 * y, int64_t k, const float * imatrix) {
    encode_symmetric<block_q5_0, 16, -16, 15>(x, y, k, imatrix, k_grid_q5, -16.0f);
}
void quantize_q8_0(const float * x, block_q8_0 * y, int64_t k, const float * imatrix) {
    encode_symmetric<block_q8_0, 0, -127, 127>(x, y, k, imatrix, k_grid_q8, 127.0f);
}
void quantize_q4_1(const float * x, block_q4_1 * y, int64_t k, const float * imatrix) {
    encode_affine<block_q4_1, 15>(x, y, k, imatrix, k_grid_affine);
}
void quantize_q5_1(const float * x, block_q5_1 * y, int64_t k, const float * imatrix) {
    encode_affine<block_q5_1, 31>(x, y, k, imatrix, k_grid_affine);
}

void quantize_row_q8_0(const float * x, block_q8_0 * y, int64_t k) { q8_0_rows<quantize_block_q8>(x, y, k); }
void quantize_row_q8_1(const float * x, block_q8_1 * y, int64_t k) { q8_1_rows<quantize_block_q8>(x, y, k); }
void quantize_row_q8_0_dot(const float * x, block_q8_0 * y, int64_t k) { q8_0_rows<quantize_block_q8_dot>(x, y, k); }
void quantize_row_q8_1_dot(const float * x, block_q8_1 * y, int64_t k) { q8_1_rows<quantize_block_q8_dot>(x, y, k); }

void quantize_row_q4_0_ref(const float * x, block_q4_0 * y, int64_t k) {
    quantize_symmetric_ref<block_q4_0, 8>(x, y, k);
}
void quantize_row_q5_0_ref(const float * x, block_q5_0 * y, int64_t k) {
    quantize_symmetric_ref<block_q5_0, 16>(x, y, k);
}
void quantize_row_q4_1_ref(const float * x, block_q4_1 * y, int64_t k) { quantize_affine_ref<block_q4_1, 15>(x, y, k); }
void quantize_row_q5_1_ref(const float * x, block_q5_1 * y, int64_t k) { quantize_affine_ref<block_q5_1, 31>(x, y, k); }

void register_legacy(codec_table & t) {
    auto set = [&](gk_type type, to_float_fn dec, from_float_fn enc, bool imatrix) {
        t.rows[type].to_float      = dec;
        t.rows[type].from_float    = enc;
        t.rows[type].takes_imatrix = imatrix;
    };
    set(GK_TYPE_Q4_0, decode_blocks<block_q4_0, QK, dequantize_row_q4_0>,
        encode_blocks<block_q4_0, QK, quantize_q4_0>, true);
    set(GK_TYPE_Q4_1, decode_blocks<block_q4_1, QK, dequantize_row_q4_1>,
        encode_blocks<block_q4_1, QK, quantize_q4_1>, true);
    set(GK_TYPE_Q5_0, decode_blocks<block_q5_0, QK, dequantize_row_q5_0>,
        encode_blocks<block_q5_0, QK, quantize_q5_0>, true);
    set(GK_TYPE_Q5_1, decode_blocks<block_q5_1, QK, dequantize_row_q5_1>,
        encode_blocks<block_q5_1, QK, quantize_q5_1>, true);
    set(GK_TYPE_Q8_0, decode_blocks<block_q8_0, QK, dequantize_row_q8_0>,
        encode_blocks<block_q8_0, QK, quantize_q8_0>, true);
    set(GK_TYPE_Q8_1, decode_blocks<block_q8_1, QK, dequantize_row_q8_1>,
        encode_blocks<block_q8_1, QK, quantize_q8_1_row>, false);
    t.rows[GK_TYPE_Q4_0].from_float_ref = encode_ref_row<block_q4_0, quantize_row_q4_0_ref>;
    t.rows[GK_TYPE_Q4_1].from_float_ref = encode_ref_row<block_q4_1, quantize_row_q4_1_ref>;
    t.rows[GK_TYPE_Q5_0].from_float_ref = encode_ref_row<block_q5_0, quantize_row_q5_0_ref>;
    t.rows[GK_TYPE_Q5_1].from_float_ref = encode_ref_row<block_q5_1, quantize_row_q5_1_ref>;
    t.rows[GK_TYPE_Q8_0].from_float_ref = encode_ref_row<block_q8_0, quantize_row_q8_0_dot>;
    t.rows[GK_TYPE_Q8_1].from_float_ref = encode_ref_row<block_q8_1, quantize_row_q8_1_dot>;
}

} // namespace gk::quant
