// fp4.cpp - decoders and encoders of the 4-bit codebook formats (layouts in fp4.h).
//
// Decoders compute exactly the float expressions of ggml's reference decoders
// (code value converted to f32, times the decoded scale; for IQ4_XS the sub-block scale
// d * (ls - 32) is rounded to f32 first), so they agree with it bit for bit.
//
// Encoders search the scale: every candidate scale is tried, the codes are the nearest
// codebook entries, and the candidate with the least weighted squared error is kept.
// Candidates are scales the format can store, so the search sees the error the
// decoder will reproduce.
#include "fp4.h"

#include "codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gk::quant {
namespace {

// ---- shared: block access and nibble packing --------------------------------------------

/// Block `i` of a row, copied out of possibly unaligned bytes.
template <class Block>
Block load_block(const void * src, int64_t i) {
    Block b;
    std::memcpy(&b, static_cast<const uint8_t *>(src) + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
    return b;
}

template <class Block>
void store_block(void * dst, int64_t i, const Block & b) {
    std::memcpy(static_cast<uint8_t *>(dst) + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
}

/// Decode one group of `n` codes packed as described in fp4.h; `value` maps a code to f32.
template <class Value>
void decode_group(const uint8_t * qs, int n, float * y, Value value) {
    for (int j = 0; j < n / 2; ++j) {
        y[j]         = value(qs[j] & 0x0F);
        y[j + n / 2] = value(qs[j] >> 4);
    }
}

/// Pack `n` codes (0..15) of one group into n/2 bytes, in decode_group's order.
void pack_group(const uint8_t * codes, int n, uint8_t * qs) {
    for (int j = 0; j < n / 2; ++j) {
        qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + n / 2] << 4));
    }
}

/// Largest |x[j]| over a group, NaN ignored; `signed_max` receives the element itself.
float group_amax(const float * x, int n, float * signed_max = nullptr) {
    float amax = 0.0f;
    float smax = 0.0f;
    for (int j = 0; j < n; ++j) {
        const float ax = std::fabs(x[j]);
        if (ax > amax) {
            amax = ax;
            smax = x[j];
        }
    }
    if (signed_max) {
        *signed_max = smax;
    }
    return amax;
}

/// round(v) clamped to [lo, hi]; NaN gives lo (no undefined float -> int conversion).
int round_clamped(float v, int lo, int hi) {
    if (!(v > static_cast<float>(lo))) {
        return lo;
    }
    if (v >= static_cast<float>(hi)) {
        return hi;
    }
    return static_cast<int>(std::lround(v));
}

/// The error weights `w` an encoder minimises over a block of `n` values. With importance
/// weights `qw`: qw * sqrt(sigma2 + x^2), sigma2 = 2 * mean(x^2), the weighting of ggml's
/// quantize_iq4_nl/xs (it lowers the importance-weighted error and keeps the plain error
/// close to the unweighted encode's). Without them, or when they are all zero: 1, so the
/// encoder minimises the plain squared error.
void error_weights(const float * x, const float * qw, int n, float * w) {
    float sumw = 0.0f;
    if (qw) {
        float sigma2 = 0.0f;
        for (int j = 0; j < n; ++j) {
            sigma2 += x[j] * x[j];
        }
        sigma2 *= 2.0f / static_cast<float>(n);
        for (int j = 0; j < n; ++j) {
            w[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
            sumw += w[j];
        }
    }
    if (!(sumw > 0.0f)) {
        for (int j = 0; j < n; ++j) {
            w[j] = 1.0f;
        }
    }
}

// ---- E2M1 (MXFP4, NVFP4) ----------------------------------------------------------------

/// f32 value of E2M1 code q at half-scale d, as ggml's decoders compute it.
struct e2m1_times {
    float d;
    float operator()(int q) const { return static_cast<float>(k_e2m1_doubled[q]) * d; }
};

/// Codes one group of `n` values with E2M1 at half-scale `d` (nearest entry, ties to the
/// smaller magnitude) into `codes`; returns the squared error weighted by `w` (in double:
/// it neither overflows nor underflows over the f32 range).
double code_e2m1_group(const float * x, const float * w, int n, float d, uint8_t * codes) {
    float mag[8];
    float mid[7];
    for (int k = 0; k < 8; ++k) {
        mag[k] = static_cast<float>(k_e2m1_doubled[k]) * d;
    }
    for (int k = 0; k < 7; ++k) {  // midpoints of the doubled magnitudes, exact in f32
        mid[k] = 0.5f * static_cast<float>(k_e2m1_doubled[k] + k_e2m1_doubled[k + 1]) * d;
    }
    double err = 0.0;
    for (int j = 0; j < n; ++j) {
        const float ax = std::fabs(x[j]);
        int c = 0;
        if (d > 0.0f) {
            for (int k = 0; k < 7; ++k) {
                c += ax > mid[k];
            }
        }
        const double e = static_cast<double>(ax) - static_cast<double>(mag[c]);
        err += static_cast<double>(w[j]) * e * e;
        codes[j] = static_cast<uint8_t>(c != 0 && x[j] < 0.0f ? c | 8 : c);
    }
    return err;
}

/// Codes a group of `n` (<= 32) values with the best of the candidate scale codes
/// [lo, hi], lo <= hi (decoded to half-scales by `half_scale`); returns the chosen scale code and
/// writes the E2M1 codes. On equal errors the lower scale code wins.
template <class HalfScale>
uint8_t code_e2m1_best(const float * x, const float * w, int n, int lo, int hi, HalfScale half_scale,
                       uint8_t * codes) {
    uint8_t trial[QK_MXFP4];
    double  best_err = code_e2m1_group(x, w, n, half_scale(static_cast<uint8_t>(lo)), codes);
    int     best     = lo;
    for (int c = lo + 1; c <= hi; ++c) {
        const double err = code_e2m1_group(x, w, n, half_scale(static_cast<uint8_t>(c)), trial);
        if (err < best_err) {
            best     = c;
            best_err = err;
            std::memcpy(codes, trial, static_cast<size_t>(n));
        }
    }
    return static_cast<uint8_t>(best);
}

/// The E8M0 code whose scale 2^(e-127) puts amax in [4, 8) scale units (so that amax is
/// near the top code, 6): floor(log2 amax) + 125, within [0, 252] (252 keeps 12 * the
/// half-scale finite).
int mxfp4_exponent(float amax) {
    if (!(amax > 0.0f)) {
        return 0;
    }
    if (amax > std::numeric_limits<float>::max()) {
        return 252;
    }
    int k = 0;
    std::frexp(amax, &k);  // amax = f * 2^k, f in [0.5, 1): floor(log2 amax) = k - 1
    return std::clamp(k - 1 + 125, 0, 252);
}

/// The UE4M3 code (0..0x7E) whose half-value is nearest to `half` (NaN gives 0).
int ue4m3_nearest_code(float half) {
    if (!(half > 0.0f)) {
        return 0;
    }
    const float * first = k_ue4m3_half.data();
    const float * last  = first + k_ue4m3_max_code + 1;
    const int     hi    = static_cast<int>(std::lower_bound(first, last, half) - first);
    if (hi > k_ue4m3_max_code) {
        return k_ue4m3_max_code;
    }
    return hi > 0 && half - first[hi - 1] <= first[hi] - half ? hi - 1 : hi;
}

// ---- IQ4_NL codebook (IQ4_NL, IQ4_XS) ---------------------------------------------------

/// Midpoints between consecutive codebook entries.
constexpr std::array<float, 15> k_iq4nl_mid = [] {
    std::array<float, 15> m{};
    for (int k = 0; k < 15; ++k) {
        m[static_cast<size_t>(k)] = 0.5f * static_cast<float>(k_iq4nl_values[k] + k_iq4nl_values[k + 1]);
    }
    return m;
}();

/// Index of the codebook entry nearest to v (in codebook units); NaN gives 0.
int iq4nl_nearest(float v) {
    int c = 0;
    for (float m : k_iq4nl_mid) {
        c += v > m;
    }
    return c;
}

/// f32 value of index q at scale d, as ggml's decoders compute it.
struct iq4nl_times {
    float d;
    float operator()(int q) const { return d * static_cast<float>(k_iq4nl_values[q]); }
};

/// Codes a group at scale `d` (nearest entries) into `codes`; returns the squared error
/// weighted by `w` (in double, as code_e2m1_group).
double code_iq4nl_group(const float * x, const float * w, int n, float d, uint8_t * codes) {
    const float id  = d != 0.0f ? 1.0f / d : 0.0f;
    double      err = 0.0;
    for (int j = 0; j < n; ++j) {
        const int    q = iq4nl_nearest(id * x[j]);
        const double e = static_cast<double>(x[j]) - static_cast<double>(iq4nl_times{d}(q));
        err += static_cast<double>(w[j]) * e * e;
        codes[j] = static_cast<uint8_t>(q);
    }
    return err;
}

/// The largest f16 magnitude: encoders clamp scales to it rather than store Inf.
constexpr float k_fp16_max = 65504.0f;

/// f32 scale -> stored f16 bits, saturating at the largest finite f16.
fp16_t store_scale(float d) {
    return fp32_to_fp16(std::clamp(d, -k_fp16_max, k_fp16_max));
}

/// The signed scale that best fits a group of `n` (<= 32) values to the codebook:
/// candidate grids map the largest-magnitude element to each end of the codebook
/// (-127 + t and 113 + t, t in [-7, 14]), the codes are the nearest entries, and each
/// candidate's scale is the weighted least-squares one; the fit with the largest
/// (sum w q x)^2 / sum w q^2 wins. 0 for a group below 1e-15 or with no usable fit.
float fit_iq4nl_scale(const float * x, const float * w, int n) {
    float       xmax = 0.0f;
    const float amax = group_amax(x, n, &xmax);
    if (!(amax >= 1e-15f)) {
        return 0.0f;
    }
    float best_d = 0.0f;
    float best   = 0.0f;
    for (const int end : {static_cast<int>(k_iq4nl_values[0]), static_cast<int>(k_iq4nl_values[15])}) {
        for (int t = -7; t <= 14; ++t) {
            const float id    = static_cast<float>(end + t) / xmax;
            float       sumqx = 0.0f;
            float       sumq2 = 0.0f;
            for (int j = 0; j < n; ++j) {
                const float q = static_cast<float>(k_iq4nl_values[iq4nl_nearest(id * x[j])]);
                sumqx += w[j] * q * x[j];
                sumq2 += w[j] * q * q;
            }
            if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                best_d = sumqx / sumq2;
                best   = best_d * sumqx;
            }
        }
    }
    return best_d;
}

/// Codes a group at the f16 scale nearest to `d`, then refits the scale to the chosen
/// codes (weighted least squares) while that lowers the error. Returns the f16 scale.
fp16_t code_iq4nl_refined(const float * x, const float * w, int n, float d, uint8_t * codes) {
    fp16_t  dh  = store_scale(d);
    double  err = code_iq4nl_group(x, w, n, fp16_to_fp32(dh), codes);
    uint8_t trial[QK4_NL];
    for (int iter = 0; iter < 2; ++iter) {
        float sumqx = 0.0f;
        float sumq2 = 0.0f;
        for (int j = 0; j < n; ++j) {
            const float q = static_cast<float>(k_iq4nl_values[codes[j]]);
            sumqx += w[j] * q * x[j];
            sumq2 += w[j] * q * q;
        }
        if (!(sumq2 > 0.0f)) {
            break;
        }
        const fp16_t th = store_scale(sumqx / sumq2);
        if (th == dh) {
            break;
        }
        const double terr = code_iq4nl_group(x, w, n, fp16_to_fp32(th), trial);
        if (!(terr < err)) {
            break;
        }
        dh  = th;
        err = terr;
        std::memcpy(codes, trial, static_cast<size_t>(n));
    }
    return dh;
}

// ---- IQ4_XS scales -----------------------------------------------------------------

/// Sub-block `ib`'s 6-bit scale code (0..63; the scale is d * (code - 32)).
int iq4_xs_scale(const block_iq4_xs & b, int ib) {
    return ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b.scales_h >> (2 * ib)) & 3) << 4);
}

/// Codes a super-block at the f16 super-scale `dh`: per sub-block, the 6-bit scale nearest
/// to its fitted scale and its two neighbours are tried, keeping the least error. Writes
/// the scale codes (0..63) and the element codes; returns the total weighted error.
double code_iq4_xs_at(const float * x, const float * w, const float * fitted, fp16_t dh, uint8_t * ls,
                     uint8_t * codes) {
    constexpr int nsub = QK_IQ4_XS / 32;
    const float   d    = fp16_to_fp32(dh);
    uint8_t       trial[32];
    double        total = 0.0;
    for (int ib = 0; ib < nsub; ++ib) {
        const float * xb = x + 32 * ib;
        const float * wb = w + 32 * ib;
        const int     l0 = d != 0.0f ? round_clamped(fitted[ib] / d, -32, 31) : 0;
        const int     lo = std::max(-32, l0 - 1);
        double        best_err = 0.0;
        for (int l = lo; l <= std::min(31, l0 + 1); ++l) {
            const double err = code_iq4nl_group(xb, wb, 32, d * static_cast<float>(l), trial);
            if (l == lo || err < best_err) {
                best_err = err;
                ls[ib]   = static_cast<uint8_t>(l + 32);
                std::memcpy(codes + 32 * ib, trial, sizeof trial);
            }
        }
        total += best_err;
    }
    return total;
}

} // namespace

// ---- decoders -------------------------------------------------------------------------

void dequantize_row_mxfp4(const void * src, float * dst, int64_t n) {
    for (int64_t i = 0; i < n / QK_MXFP4; ++i) {
        const auto b = load_block<block_mxfp4>(src, i);
        decode_group(b.qs, QK_MXFP4, dst + i * QK_MXFP4, e2m1_times{e8m0_to_fp32_half(b.e)});
    }
}

void dequantize_row_nvfp4(const void * src, float * dst, int64_t n) {
    for (int64_t i = 0; i < n / QK_NVFP4; ++i) {
        const auto b = load_block<block_nvfp4>(src, i);
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; ++s) {
            decode_group(b.qs + s * (QK_NVFP4_SUB / 2), QK_NVFP4_SUB, dst + i * QK_NVFP4 + s * QK_NVFP4_SUB,
                         e2m1_times{k_ue4m3_half[b.d[s]]});
        }
    }
}

void dequantize_row_iq4_nl(const void * src, float * dst, int64_t n) {
    for (int64_t i = 0; i < n / QK4_NL; ++i) {
        const auto b = load_block<block_iq4_nl>(src, i);
        decode_group(b.qs, QK4_NL, dst + i * QK4_NL, iq4nl_times{fp16_to_fp32(b.d)});
    }
}

void dequantize_row_iq4_xs(const void * src, float * dst, int64_t n) {
    for (int64_t i = 0; i < n / QK_IQ4_XS; ++i) {
        const auto  b = load_block<block_iq4_xs>(src, i);
        const float d = fp16_to_fp32(b.d);
        for (int ib = 0; ib < QK_IQ4_XS / 32; ++ib) {
            const float dl = d * static_cast<float>(iq4_xs_scale(b, ib) - 32);
            decode_group(b.qs + 16 * ib, 32, dst + i * QK_IQ4_XS + 32 * ib, iq4nl_times{dl});
        }
    }
}

// ---- encoders -------------------------------------------------------------------------

void quantize_row_mxfp4(const float * src, void * dst, int64_t n, const float * imatrix) {
    for (int64_t i = 0; i < n / QK_MXFP4; ++i) {
        const float * x = src + i * QK_MXFP4;
        float         w[QK_MXFP4];
        error_weights(x, imatrix ? imatrix + i * QK_MXFP4 : nullptr, QK_MXFP4, w);
        const int e0 = mxfp4_exponent(group_amax(x, QK_MXFP4));
        uint8_t       codes[QK_MXFP4];
        block_mxfp4   b;
        b.e = code_e2m1_best(x, w, QK_MXFP4, std::max(0, e0 - 2), std::min(252, e0 + 1),
                             e8m0_to_fp32_half, codes);
        pack_group(codes, QK_MXFP4, b.qs);
        store_block(dst, i, b);
    }
}

void quantize_row_nvfp4(const float * src, void * dst, int64_t n, const float * imatrix) {
    for (int64_t i = 0; i < n / QK_NVFP4; ++i) {
        float w[QK_NVFP4];
        error_weights(src + i * QK_NVFP4, imatrix ? imatrix + i * QK_NVFP4 : nullptr, QK_NVFP4, w);
        block_nvfp4 b;
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; ++s) {
            const float * x = src + i * QK_NVFP4 + s * QK_NVFP4_SUB;
            // the top code (6) times the scale should land near amax: half-scale amax / 12
            const int c0 = ue4m3_nearest_code(group_amax(x, QK_NVFP4_SUB) / 12.0f);
            uint8_t   codes[QK_NVFP4_SUB];
            b.d[s] = code_e2m1_best(x, w + s * QK_NVFP4_SUB, QK_NVFP4_SUB, std::max(0, c0 - 2),
                                    std::min<int>(k_ue4m3_max_code, c0 + 2),
                                    [](uint8_t c) { return k_ue4m3_half[c]; }, codes);
            pack_group(codes, QK_NVFP4_SUB, b.qs + s * (QK_NVFP4_SUB / 2));
        }
        store_block(dst, i, b);
    }
}

void quantize_row_iq4_nl(const float * src, void * dst, int64_t n, const float * imatrix) {
    for (int64_t i = 0; i < n / QK4_NL; ++i) {
        const float * x = src + i * QK4_NL;
        float         w[QK4_NL];
        error_weights(x, imatrix ? imatrix + i * QK4_NL : nullptr, QK4_NL, w);
        uint8_t      codes[QK4_NL];
        block_iq4_nl b;
        b.d = code_iq4nl_refined(x, w, QK4_NL, fit_iq4nl_scale(x, w, QK4_NL), codes);
        pack_group(codes, QK4_NL, b.qs);
        store_block(dst, i, b);
    }
}

void quantize_row_iq4_xs(const float * src, void * dst, int64_t n, const float * imatrix) {
    constexpr int nsub = QK_IQ4_XS / 32;
    for (int64_t i = 0; i < n / QK_IQ4_XS; ++i) {
        const float * x = src + i * QK_IQ4_XS;
        float         w[QK_IQ4_XS];
        error_weights(x, imatrix ? imatrix + i * QK_IQ4_XS : nullptr, QK_IQ4_XS, w);

        float fitted[nsub];
        float max_scale = 0.0f;
        for (int ib = 0; ib < nsub; ++ib) {
            fitted[ib] = fit_iq4nl_scale(x + 32 * ib, w + 32 * ib, 32);
            if (std::fabs(fitted[ib]) > std::fabs(max_scale)) {
                max_scale = fitted[ib];
            }
        }
        // The 6-bit scales run -32..31: the largest sub-block scale maps to -32 (or 31).
        uint8_t ls[nsub] = {};
        uint8_t codes[QK_IQ4_XS];
        fp16_t  dh       = store_scale(-max_scale / 32.0f);
        double  best_err = code_iq4_xs_at(x, w, fitted, dh, ls, codes);
        if (max_scale != 0.0f) {
            uint8_t      tls[nsub];
            uint8_t      tcodes[QK_IQ4_XS];
            const fp16_t th   = store_scale(max_scale / 31.0f);
            const double terr = code_iq4_xs_at(x, w, fitted, th, tls, tcodes);
            if (terr < best_err) {
                dh = th;
                std::memcpy(ls, tls, sizeof ls);
                std::memcpy(codes, tcodes, sizeof codes);
            }
        }
        block_iq4_xs b{};
        b.d = dh;
        for (int ib = 0; ib < nsub; ++ib) {
            b.scales_l[ib / 2] = static_cast<uint8_t>(b.scales_l[ib / 2] | ((ls[ib] & 0xF) << (4 * (ib % 2))));
            b.scales_h         = static_cast<uint16_t>(b.scales_h | ((ls[ib] >> 4) << (2 * ib)));
            pack_group(codes + 32 * ib, 32, b.qs + 16 * ib);
        }
        store_block(dst, i, b);
    }
}

void quantize_row_iq4_nl_ref(const float * src, void * dst, int64_t n) {
    for (int64_t i = 0; i < n / QK4_NL; ++i) {
        const float * x    = src + i * QK4_NL;
        float         xmax = 0.0f;
        block_iq4_nl  b{};  // d = +0, every index 0
        if (group_amax(x, QK4_NL, &xmax) >= 1e-15f) {
            const float id = 1.0f / (xmax / static_cast<float>(k_iq4nl_values[0]));
            uint8_t     codes[QK4_NL];
            float       sumqx = 0.0f;
            float       sumq2 = 0.0f;
            for (int j = 0; j < QK4_NL; ++j) {
                // The entry nearest to v: the count of midpoints at or below it, compared
                // doubled (v + v against the sum of two neighbours is exact).
                const float v  = id * x[j];
                const float v2 = v + v;
                int         c  = 0;
                for (int k = 1; k < 16; ++k) {
                    c += v2 >= static_cast<float>(k_iq4nl_values[k - 1] + k_iq4nl_values[k]);
                }
                codes[j]      = static_cast<uint8_t>(c);
                const float q = static_cast<float>(k_iq4nl_values[c]);
                const float w = x[j] * x[j];
                sumqx += w * q * x[j];
                sumq2 += w * q * q;
            }
            b.d = fp32_to_fp16(sumq2 > 0.0f ? sumqx / sumq2 : 0.0f);
            pack_group(codes, QK4_NL, b.qs);
        }
        store_block(dst, i, b);
    }
}

void register_fp4(codec_table & t) {
    const auto set = [&t](int id, to_float_fn dec, from_float_fn enc) {
        t.rows[id].to_float      = dec;
        t.rows[id].from_float    = enc;
        t.rows[id].takes_imatrix = true;
    };
    set(GK_TYPE_MXFP4, dequantize_row_mxfp4, quantize_row_mxfp4);
    set(GK_TYPE_NVFP4, dequantize_row_nvfp4, quantize_row_nvfp4);
    set(GK_TYPE_IQ4_NL, dequantize_row_iq4_nl, quantize_row_iq4_nl);
    set(GK_TYPE_IQ4_XS, dequantize_row_iq4_xs, quantize_row_iq4_xs);
    t.rows[GK_TYPE_IQ4_NL].from_float_ref = quantize_row_iq4_nl_ref;
}

} // namespace gk::quant
