// k_quants.cpp - the K-quant family: q2_K, q3_K, q4_K, q5_K, q6_K and q8_K decoders and
// encoders (layouts in k_quants.h, scale searches in k_quants_search.cpp).
#include "k_quants.h"

#include "codec.h"
#include "k_quants_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gk::quant {
namespace {

// ---- where each element's bits live (see the structs in k_quants.h) -----------------

// 2-bit fields: element 128*h + 32*k + l at bits 2k of byte 32*h + l (q2_K/q3_K qs, q6_K qh).
void unpack_2bit(const uint8_t * src, uint8_t * v) {
    for (int e = 0; e < QK_K; ++e) {
        v[e] = (src[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
    }
}

void pack_2bit(const uint8_t * v, uint8_t * dst) {
    std::memset(dst, 0, QK_K / 4);
    for (int e = 0; e < QK_K; ++e) {
        dst[32 * (e / 128) + e % 32] |= static_cast<uint8_t>((v[e] & 3) << (2 * ((e / 32) % 4)));
    }
}

// 1-bit fields: element e at bit e / 32 of byte e % 32 (q3_K hmask, q5_K qh).
void unpack_1bit(const uint8_t * src, uint8_t * v) {
    for (int e = 0; e < QK_K; ++e) {
        v[e] = (src[e % 32] >> (e / 32)) & 1;
    }
}

void pack_1bit(const uint8_t * v, uint8_t * dst) {
    std::memset(dst, 0, QK_K / 8);
    for (int e = 0; e < QK_K; ++e) {
        dst[e % 32] |= static_cast<uint8_t>((v[e] & 1) << (e / 32));
    }
}

// 4-bit fields in groups of `span` elements (64 for q4_K/q5_K, 128 for q6_K): element
// span*c + (span/2)*n + r sits in nibble n of byte (span/2)*c + r.
void unpack_4bit(const uint8_t * src, int span, uint8_t * v) {
    const int half = span / 2;
    for (int e = 0; e < QK_K; ++e) {
        const int c = e / span;
        const int n = (e % span) / half;
        v[e] = (src[half * c + e % half] >> (4 * n)) & 0xF;
    }
}

void pack_4bit(const uint8_t * v, int span, uint8_t * dst) {
    const int half = span / 2;
    std::memset(dst, 0, QK_K / 2);
    for (int e = 0; e < QK_K; ++e) {
        const int c = e / span;
        const int n = (e % span) / half;
        dst[half * c + e % half] |= static_cast<uint8_t>((v[e] & 0xF) << (4 * n));
    }
}

// Elements wider than one field keep their low `low_bits` bits in one field and the rest
// in another (q3_K: 2 + 1, q5_K: 4 + 1, q6_K: 4 + 2); stored values are quant + offset.
void join_bits(uint8_t * lo, const uint8_t * hi, int low_bits) {
    for (int e = 0; e < QK_K; ++e) {
        lo[e] = static_cast<uint8_t>(lo[e] | (hi[e] << low_bits));
    }
}

void split_bits(const int8_t * q, int offset, int low_bits, uint8_t * lo, uint8_t * hi) {
    for (int e = 0; e < QK_K; ++e) {
        const int v = q[e] + offset;
        lo[e]       = static_cast<uint8_t>(v & ((1 << low_bits) - 1));
        hi[e]       = static_cast<uint8_t>(v >> low_bits);
    }
}

// ---- decoding ------------------------------------------------------------------------
// The reference computes y = (d * sc) * q - (dmin * m) with each product rounded to f32;
// the products are separate statements so that no compiler fuses them into an fma.

void decode_affine(const float * dl, const float * ml, int sub_len, const uint8_t * q, float * y) {
    for (int e = 0; e < QK_K; ++e) {
        const float p = dl[e / sub_len] * static_cast<float>(q[e]);
        y[e] = p - ml[e / sub_len];
    }
}

void decode_symmetric(const float * dl, int sub_len, const uint8_t * v, int offset, float * y) {
    for (int e = 0; e < QK_K; ++e) {
        y[e] = dl[e / sub_len] * static_cast<float>(static_cast<int>(v[e]) - offset);
    }
}

// The 6-bit scales and mins of a q4_K/q5_K block as d * sc and dmin * m.
void k4_factors(const uint8_t * packed, fp16_t d16, fp16_t dmin16, float * dl, float * ml) {
    const float d = fp16_to_fp32(d16);
    const float dmin = fp16_to_fp32(dmin16);
    for (int j = 0; j < 8; ++j) {
        uint8_t sc = 0, m = 0;
        unpack_scale_min_k4(j, packed, sc, m);
        dl[j] = d * static_cast<float>(sc);
        ml[j] = dmin * static_cast<float>(m);
    }
}

} // namespace

void dequantize_row_q2_K(const block_q2_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        const float dmin = fp16_to_fp32(x[i].dmin);
        float dl[16], ml[16];
        for (int j = 0; j < 16; ++j) {
            dl[j] = d * static_cast<float>(x[i].scales[j] & 0xF);
            ml[j] = dmin * static_cast<float>(x[i].scales[j] >> 4);
        }
        uint8_t q[QK_K];
        unpack_2bit(x[i].qs, q);
        decode_affine(dl, ml, 16, q, y);
    }
}

void dequantize_row_q3_K(const block_q3_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        int8_t sc[16];
        unpack_scales_q3_K(x[i].scales, sc);
        float dl[16];
        for (int j = 0; j < 16; ++j) {
            dl[j] = d * static_cast<float>(sc[j]);
        }
        uint8_t lo[QK_K], hi[QK_K];
        unpack_2bit(x[i].qs, lo);
        unpack_1bit(x[i].hmask, hi);
        join_bits(lo, hi, 2);  // stored value = quant + 4
        decode_symmetric(dl, 16, lo, 4, y);
    }
}

void dequantize_row_q4_K(const block_q4_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i, y += QK_K) {
        float dl[8], ml[8];
        k4_factors(x[i].scales, x[i].d, x[i].dmin, dl, ml);
        uint8_t q[QK_K];
        unpack_4bit(x[i].qs, 64, q);
        decode_affine(dl, ml, 32, q, y);
    }
}

void dequantize_row_q5_K(const block_q5_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i, y += QK_K) {
        float dl[8], ml[8];
        k4_factors(x[i].scales, x[i].d, x[i].dmin, dl, ml);
        uint8_t q[QK_K], hi[QK_K];
        unpack_4bit(x[i].qs, 64, q);
        unpack_1bit(x[i].qh, hi);
        join_bits(q, hi, 4);
        decode_affine(dl, ml, 32, q, y);
    }
}

void dequantize_row_q6_K(const block_q6_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        float dl[16];
        for (int j = 0; j < 16; ++j) {
            dl[j] = d * static_cast<float>(x[i].scales[j]);
        }
        uint8_t v[QK_K], hi[QK_K];
        unpack_4bit(x[i].ql, 128, v);
        unpack_2bit(x[i].qh, hi);
        join_bits(v, hi, 4);  // stored value = quant + 32
        decode_symmetric(dl, 16, v, 32, y);
    }
}

void dequantize_row_q8_K(const block_q8_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i, y += QK_K) {
        for (int e = 0; e < QK_K; ++e) {
            y[e] = x[i].d * static_cast<float>(x[i].qs[e]);
        }
    }
}

void quantize_row_q8_K(const float * x, block_q8_K * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i, x += QK_K) {
        block_q8_K & b = y[i];
        float amax = 0;
        float vmax = 0;
        for (int e = 0; e < QK_K; ++e) {
            if (std::fabs(x[e]) > amax) {
                amax = std::fabs(x[e]);
                vmax = x[e];
            }
        }
        const float iscale = amax != 0 ? -127.0f / vmax : 0.0f;
        b.d = amax != 0 ? 1.0f / iscale : 0.0f;
        for (int e = 0; e < QK_K; ++e) {
            b.qs[e] = static_cast<int8_t>(kq::round_clamp(iscale * x[e], -128, 127));
        }
        for (int g = 0; g < QK_K / 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) {
                sum += b.qs[16 * g + l];
            }
            b.bsums[g] = static_cast<int16_t>(sum);
        }
    }
}

// ---- encoding ------------------------------------------------------------------------

namespace {

// Integer ranges per format: sub-block length, quants, scales, mins.
constexpr kq::kformat k_fmt_q2{16, 0, 3, 0, 15, 15};
constexpr kq::kformat k_fmt_q3{16, -4, 3, -32, 31, 0};
constexpr kq::kformat k_fmt_q4{32, 0, 15, 0, 63, 63};
constexpr kq::kformat k_fmt_q5{32, 0, 31, 0, 63, 63};
constexpr kq::kformat k_fmt_q6{16, -32, 31, -128, 127, 0};

// Encode one super-block into b. The encoder minimises sum w * (x - decoded)^2 with w the
// importance weights when given, else w = 1. Weights that are negative, NaN or infinite
// count as 0; the others are scaled to a largest weight of 1 (the same minimiser, and
// the weighted sums cannot overflow).
void encode(const kq::kformat & f, const float * x, const float * qw, kq::kblock & b) {
    float w[QK_K];
    float wmax = 0;
    for (int e = 0; e < QK_K; ++e) {
        w[e] = !qw ? 1.0f : (qw[e] > 0 && qw[e] <= std::numeric_limits<float>::max()) ? qw[e] : 0.0f;
        wmax = std::max(wmax, w[e]);
    }
    if (wmax > 0 && wmax != 1.0f) {
        for (float & v : w) {
            v /= wmax;
        }
    }
    kq::encode_superblock(f, x, w, b);
}

// The imatrix slice of block i, or null.
const float * block_weights(const float * imatrix, int64_t i) { return imatrix ? imatrix + i * QK_K : nullptr; }

void store_k4_scales(const kq::kblock & b, uint8_t * packed) {
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
        sc[j] = static_cast<uint8_t>(b.sc[j]);
        m[j] = static_cast<uint8_t>(b.m[j]);
    }
    pack_scales_mins_k4(sc, m, packed);
}

} // namespace

void quantize_row_q2_K(const float * x, block_q2_K * y, int64_t k, const float * imatrix) {
    for (int64_t i = 0; i < k / QK_K; ++i, x += QK_K) {
        kq::kblock b;
        encode(k_fmt_q2, x, block_weights(imatrix, i), b);
        for (int j = 0; j < 16; ++j) {
            y[i].scales[j] = static_cast<uint8_t>(b.sc[j] | (b.m[j] << 4));
        }
        uint8_t v[QK_K];
        for (int e = 0; e < QK_K; ++e) {
            v[e] = static_cast<uint8_t>(b.q[e]);
        }
        pack_2bit(v, y[i].qs);
        y[i].d = kq::scale_to_fp16(b.d);
        y[i].dmin = kq::scale_to_fp16(b.dmin);
    }
}

void quantize_row_q3_K(const float * x, block_q3_K * y, int64_t k, const float * imatrix) {
    for (int64_t i = 0; i < k / QK_K; ++i, x += QK_K) {
        kq::kblock b;
        encode(k_fmt_q3, x, block_weights(imatrix, i), b);
        pack_scales_q3_K(b.sc, y[i].scales);
        uint8_t lo[QK_K], hi[QK_K];
        split_bits(b.q, 4, 2, lo, hi);
        pack_2bit(lo, y[i].qs);
        pack_1bit(hi, y[i].hmask);
        y[i].d = kq::scale_to_fp16(b.d);
    }
}

void quantize_row_q4_K(const float * x, block_q4_K * y, int64_t k, const float * imatrix) {
    for (int64_t i = 0; i < k / QK_K; ++i, x += QK_K) {
        kq::kblock b;
        encode(k_fmt_q4, x, block_weights(imatrix, i), b);
        store_k4_scales(b, y[i].scales);
        uint8_t v[QK_K];
        for (int e = 0; e < QK_K; ++e) {
            v[e] = static_cast<uint8_t>(b.q[e]);
        }
        pack_4bit(v, 64, y[i].qs);
        y[i].d = kq::scale_to_fp16(b.d);
        y[i].dmin = kq::scale_to_fp16(b.dmin);
    }
}

void quantize_row_q5_K(const float * x, block_q5_K * y, int64_t k, const float * imatrix) {
    for (int64_t i = 0; i < k / QK_K; ++i, x += QK_K) {
        kq::kblock b;
        encode(k_fmt_q5, x, block_weights(imatrix, i), b);
        store_k4_scales(b, y[i].scales);
        uint8_t lo[QK_K], hi[QK_K];
        split_bits(b.q, 0, 4, lo, hi);
        pack_4bit(lo, 64, y[i].qs);
        pack_1bit(hi, y[i].qh);
        y[i].d = kq::scale_to_fp16(b.d);
        y[i].dmin = kq::scale_to_fp16(b.dmin);
    }
}

void quantize_row_q6_K(const float * x, block_q6_K * y, int64_t k, const float * imatrix) {
    for (int64_t i = 0; i < k / QK_K; ++i, x += QK_K) {
        kq::kblock b;
        encode(k_fmt_q6, x, block_weights(imatrix, i), b);
        std::memcpy(y[i].scales, b.sc, sizeof(y[i].scales));
        uint8_t lo[QK_K], hi[QK_K];
        split_bits(b.q, 32, 4, lo, hi);
        pack_4bit(lo, 128, y[i].ql);
        pack_2bit(hi, y[i].qh);
        y[i].d = kq::scale_to_fp16(b.d);
    }
}

// ---- registration --------------------------------------------------------------------

namespace {

template <typename Block, void (*Decode)(const Block *, float *, int64_t)>
void to_float(const void * src, float * dst, int64_t n) {
    Decode(static_cast<const Block *>(src), dst, n);
}

template <typename Block, void (*Encode)(const float *, Block *, int64_t, const float *)>
void from_float(const float * src, void * dst, int64_t n, const float * imatrix) {
    Encode(src, static_cast<Block *>(dst), n, imatrix);
}

void from_float_q8_K(const float * src, void * dst, int64_t n, const float *) {
    quantize_row_q8_K(src, static_cast<block_q8_K *>(dst), n);
}

template <typename Block, void (*Decode)(const Block *, float *, int64_t),
          void (*Encode)(const float *, Block *, int64_t, const float *)>
void set_row(codec_table & t, int type) {
    type_traits & r = t.rows[type];
    r.to_float = to_float<Block, Decode>;
    r.from_float = from_float<Block, Encode>;
    r.takes_imatrix = true;
}

} // namespace

void register_k_quants(codec_table & t) {
    set_row<block_q2_K, dequantize_row_q2_K, quantize_row_q2_K>(t, GK_TYPE_Q2_K);
    set_row<block_q3_K, dequantize_row_q3_K, quantize_row_q3_K>(t, GK_TYPE_Q3_K);
    set_row<block_q4_K, dequantize_row_q4_K, quantize_row_q4_K>(t, GK_TYPE_Q4_K);
    set_row<block_q5_K, dequantize_row_q5_K, quantize_row_q5_K>(t, GK_TYPE_Q5_K);
    set_row<block_q6_K, dequantize_row_q6_K, quantize_row_q6_K>(t, GK_TYPE_Q6_K);
    type_traits & r = t.rows[GK_TYPE_Q8_K];
    r.to_float = to_float<block_q8_K, dequantize_row_q8_K>;
    r.from_float = from_float_q8_K;
    r.takes_imatrix = false;
}

} // namespace gk::quant
