// low_bit.cpp - decoders and encoders of q1_0, q2_0, tq1_0, tq2_0 (low_bit.h).
#include "low_bit.h"

#include "block_rows.h"
#include "codec.h"
#include "scale_search.h"

#include <cmath>

namespace gk::quant {
namespace {

// --- 2-bit quants: q2_0 and tq2_0 differ only in where element j sits -------------

struct bit_pos {
    int byte;
    int shift;
};

/// q2_0: four consecutive elements per byte.
constexpr bit_pos q2_0_pos(int j) { return {j / 4, 2 * (j % 4)}; }

/// tq2_0: j = 128*c + 32*l + m sits at bits 2l of qs[32c + m].
constexpr bit_pos tq2_0_pos(int j) { return {32 * (j / 128) + j % 32, 2 * ((j % 128) / 32)}; }

/// y = (q - 1) * d for every element of 2-bit quants.
template <class Block, int QK, bit_pos (*Pos)(int)>
void dequantize_2bit(const Block * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK; ++j) {
            const bit_pos p = Pos(j);
            const int     q = (x[i].qs[p.byte] >> p.shift) & 3;
            y[i * QK + j]   = static_cast<float>(q - 1) * d;
        }
    }
}

/// Stores levels L (-1..2) as q = L + 1.
template <int QK, bit_pos (*Pos)(int)>
void pack_2bit(const int8_t * L, uint8_t * qs) {
    for (int b = 0; b < QK / 4; ++b) {
        qs[b] = 0;
    }
    for (int j = 0; j < QK; ++j) {
        const bit_pos p = Pos(j);
        qs[p.byte] = static_cast<uint8_t>(qs[p.byte] | ((L[j] + 1) & 3) << p.shift);
    }
}

// --- tq1_0's base-3 digits ------------------------------------------------------------

/// The runs of a tq1_0 block in element order: `bytes` bytes of qs (or qh) starting at
/// `first`, each holding `digits` digits; digit n of byte m is element n * bytes + m of
/// the run.
struct trit_run {
    bool in_qh;
    int  first;
    int  bytes;
    int  digits;
};
constexpr trit_run k_tq1_runs[] = {{false, 0, 32, 5}, {false, 32, 16, 5}, {true, 0, 4, 4}};

constexpr uint8_t k_pow3[5] = {1, 3, 9, 27, 81};

/// Digit n (0 = most significant) of a packed byte.
int trit(uint8_t b, int n) {
    const auto q = static_cast<uint8_t>(b * k_pow3[n]);
    return (q * 3) >> 8;
}

/// Packs up to five digits t_0..t_{count-1} (the rest 0): ceil(sum t_n 3^(4-n) * 256 / 243).
uint8_t pack_trits(const int * t, int count) {
    int v = 0;
    for (int n = 0; n < 5; ++n) {
        v = v * 3 + (n < count ? t[n] : 0);
    }
    return static_cast<uint8_t>((v * 256 + 242) / 243);
}

// --- encoders ---------------------------------------------------------------------------

constexpr scale_grid k_grid_q2_0 = {0.40f, 3.00f, 16};

/// The q1_0 scale for sign levels: the nearer to the optimum of (weighted mean |x|) and
/// ggml's mean |x|, measured.
fp16_t fit_sign_scale(const float * x, const float * w, int n) {
    double sa = 0.0, sw = 0.0;
    float  mean_abs = 0.0f;  // ggml's choice, summed in f32 in element order
    for (int j = 0; j < n; ++j) {
        if (std::isfinite(x[j])) {
            sa += static_cast<double>(w[j]) * std::fabs(x[j]);
            sw += w[j];
            mean_abs += std::fabs(x[j]);
        }
    }
    auto error = [&](fp16_t h) {
        const float d = fp16_to_fp32(h);
        double      e = 0.0;
        for (int j = 0; j < n; ++j) {
            if (std::isfinite(x[j])) {
                const double r = static_cast<double>(x[j]) - static_cast<double>(x[j] >= 0.0f ? d : -d);
                e += static_cast<double>(w[j]) * r * r;
            }
        }
        return e;
    };
    const fp16_t baseline = fp32_to_fp16_finite(mean_abs / static_cast<float>(n));
    const fp16_t best     = fp32_to_fp16_finite(sw > 0.0 ? static_cast<float>(sa / sw) : 0.0f);
    return error(best) <= error(baseline) ? best : baseline;
}

} // namespace

void dequantize_row_q1_0(const block_q1_0 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK1_0; ++i) {
        const float d     = fp16_to_fp32(x[i].d);
        const float neg_d = -d;
        for (int j = 0; j < QK1_0; ++j) {
            y[i * QK1_0 + j] = ((x[i].qs[j / 8] >> (j % 8)) & 1) ? d : neg_d;
        }
    }
}

void dequantize_row_q2_0(const block_q2_0 * x, float * y, int64_t k) {
    dequantize_2bit<block_q2_0, QK2_0, q2_0_pos>(x, y, k);
}

void dequantize_row_tq2_0(const block_tq2_0 * x, float * y, int64_t k) {
    dequantize_2bit<block_tq2_0, QK_K, tq2_0_pos>(x, y, k);
}

void dequantize_row_tq1_0(const block_tq1_0 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        float *     out = y + i * QK_K;
        for (const trit_run & r : k_tq1_runs) {
            const uint8_t * bytes = (r.in_qh ? x[i].qh : x[i].qs) + r.first;
            for (int n = 0; n < r.digits; ++n) {
                for (int m = 0; m < r.bytes; ++m) {
                    *out++ = static_cast<float>(trit(bytes[m], n) - 1) * d;
                }
            }
        }
    }
}

void quantize_q1_0(const float * x, block_q1_0 * y, int64_t k, const float * imatrix) {
    for_each_weighted_block<QK1_0>(x, k, imatrix, [&](int64_t i, const float * xb, const float * w) {
        y[i].d = fit_sign_scale(xb, w, QK1_0);
        for (int b = 0; b < QK1_0 / 8; ++b) {
            uint8_t bits = 0;
            for (int j = 0; j < 8; ++j) {
                bits = static_cast<uint8_t>(bits | (xb[8 * b + j] >= 0.0f ? 1 : 0) << j);
            }
            y[i].qs[b] = bits;
        }
    });
}

void quantize_q2_0(const float * x, block_q2_0 * y, int64_t k, const float * imatrix) {
    for_each_weighted_block<QK2_0>(x, k, imatrix, [&](int64_t i, const float * xb, const float * w) {
        int8_t L[QK2_0];
        y[i].d = fit_scale(xb, w, QK2_0, -1, 2, k_grid_q2_0, std::fabs(signed_max_abs(xb, QK2_0)), L);
        pack_2bit<QK2_0, q2_0_pos>(L, y[i].qs);
    });
}

void quantize_tq2_0(const float * x, block_tq2_0 * y, int64_t k, const float * imatrix) {
    for_each_weighted_block<QK_K>(x, k, imatrix, [&](int64_t i, const float * xb, const float * w) {
        int8_t L[QK_K];
        y[i].d = fit_ternary(xb, w, QK_K, std::fabs(signed_max_abs(xb, QK_K)), L);
        pack_2bit<QK_K, tq2_0_pos>(L, y[i].qs);
    });
}

void quantize_tq1_0(const float * x, block_tq1_0 * y, int64_t k, const float * imatrix) {
    for_each_weighted_block<QK_K>(x, k, imatrix, [&](int64_t i, const float * xb, const float * w) {
        int8_t L[QK_K];
        y[i].d = fit_ternary(xb, w, QK_K, std::fabs(signed_max_abs(xb, QK_K)), L);
        int e = 0;
        for (const trit_run & r : k_tq1_runs) {
            uint8_t * bytes = (r.in_qh ? y[i].qh : y[i].qs) + r.first;
            for (int m = 0; m < r.bytes; ++m) {
                int t[5];
                for (int n = 0; n < r.digits; ++n) {
                    t[n] = L[e + n * r.bytes + m] + 1;
                }
                bytes[m] = pack_trits(t, r.digits);
            }
            e += r.bytes * r.digits;
        }
    });
}

void register_low_bit(codec_table & t) {
    auto set = [&](gk_type type, to_float_fn dec, from_float_fn enc) {
        t.rows[type].to_float      = dec;
        t.rows[type].from_float    = enc;
        t.rows[type].takes_imatrix = true;
    };
    set(GK_TYPE_Q1_0, decode_blocks<block_q1_0, QK1_0, dequantize_row_q1_0>,
        encode_blocks<block_q1_0, QK1_0, quantize_q1_0>);
    set(GK_TYPE_Q2_0, decode_blocks<block_q2_0, QK2_0, dequantize_row_q2_0>,
        encode_blocks<block_q2_0, QK2_0, quantize_q2_0>);
    set(GK_TYPE_TQ1_0, decode_blocks<block_tq1_0, QK_K, dequantize_row_tq1_0>,
        encode_blocks<block_tq1_0, QK_K, quantize_tq1_0>);
    set(GK_TYPE_TQ2_0, decode_blocks<block_tq2_0, QK_K, dequantize_row_tq2_0>,
        encode_blocks<block_tq2_0, QK_K, quantize_tq2_0>);
}

} // namespace gk::quant
