// iq_encode.cpp - encoders of the lattice i-quants (formats in iq_quants.h).
//
// The method (after ggml's quantize_iq* encoders; own code and structure):
//  1. Weights w = q * sqrt(sigma2 + x^2), sigma2 a multiple of the super-block's mean x^2,
//     q the imatrix entry, or 1 without one. (ggml uses these with an imatrix; without,
//     it demands one for iq2_xxs, iq2_xs and iq1_s and weights by x^2 or sigma2/4 + x^2
//     elsewhere, which costs 10-25% in plain RMSE against a flat q = 1.)
//  2. Per sub-block, a scale search: for a range of candidate scales t, every group takes
//     its best grid point at t (iq_search.h); the candidate whose points give the best
//     least-squares fit wins and is refined by alternating least-squares scale and points.
//     Sign grids code |x| and keep x's signs; where the format stores 7 sign bits plus
//     parity, a group with an odd number of negative values negates the one coordinate
//     (over the group's points) where that costs least. iq1 grids code x itself with a
//     +-1/8 shift; their candidate scales come from the exact least-squares ternary fit
//     of the sub-block (all 3-level splits of its sorted values).
//  3. The super-block scale d (f16) and the sub-block codes are chosen together to
//     minimise the error of those fits, measured with the decoder's f16 d; then every group
//     is re-fitted at its final decoded scale, and the choice repeated once on the new fits.
// All of it works on the super-block divided by its largest |x|, so no sum overflows.
#include "iq_quants.h"

#include "iq_search.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace gk::quant {
namespace {

using iq::group_costs;
using iq::lattice;
using iq::pick;

constexpr float k_inf = std::numeric_limits<float>::infinity();

/// What the encoder needs to know of a format.
struct format {
    iq::grid_id grid;
    int         sub;                   // values per sub-block scale
    float (*sub_scale)(float, int);    // the decoder's sub-block scale (iq_quants.h)
    int         max_code;              // codes 0..max_code
    bool        shifted      = false;  // iq1: value = scale * (g + shift), no sign bits
    bool        parity       = false;  // signs stored as 7 bits + parity per group of 8
    int         shift_group  = 8;      // iq1: values sharing one shift
    float       delta        = 0.0f;   // iq1: the shift's magnitude
    float       sigma_factor = 2.0f;   // sigma2 = sigma_factor * mean(x^2) of the super-block
    float       r_lo, r_hi;            // candidate scales: sign grids t = max|x| / (top level * r),
    int         r_steps;               //   iq1 t = (ternary least-squares scale) * r
};

constexpr int k_max_sub_groups = 8;   // grid groups in one sub-block (32 / 4)
constexpr int k_max_subs       = 16;  // sub-blocks in one super-block

/// The fit of one sub-block: its groups' points and the sums that fix its best scale.
struct sub_fit {
    float    b   = 0.0f;   // sum w * y * v over the sub-block (v: decoded value at unit scale)
    float    c   = 0.0f;   // sum w * v * v
    float    err = k_inf;  // weighted squared error at the scale it was fitted for
    uint16_t point[k_max_sub_groups] = {};
    // sign grids: per group, the coordinate negated against x (-1: none)
    int8_t   flip[k_max_sub_groups] = {-1, -1, -1, -1, -1, -1, -1, -1};
    uint8_t  shift_neg[k_max_sub_groups] = {};  // iq1: 1 where the group's shift is -delta

    float score() const { return b > 0.0f && c > 0.0f ? b * b / c : 0.0f; }
};

/// One sub-block's inputs, in units of the super-block's largest |x|.
struct sub_input {
    const float * y;      // targets: |x| (sign grids) or x (iq1)
    const float * w;      // weights
    const uint8_t * neg;  // sign grids: per group of 8, bit j set where x_j < 0
};

int popcount8(uint8_t v) { return std::popcount(static_cast<unsigned>(v)); }

/// Sums b, c of the points in `fit` for targets `in`.
void fit_sums(const format & f, const lattice & g, const sub_input & in, sub_fit & fit) {
    const int dim = g.dim();
    fit.b = fit.c = 0.0f;
    for (int k = 0; k < f.sub / dim; ++k) {
        const uint8_t * lv    = g.levels(fit.point[k]);
        const float     shift = f.shifted ? (fit.shift_neg[k] ? -f.delta : f.delta) : 0.0f;
        for (int j = 0; j < dim; ++j) {
            const int   i = k * dim + j;
            const float v = g.value(lv[j]) + shift;
            fit.b += (fit.flip[k] == j ? -1.0f : 1.0f) * in.w[i] * in.y[i] * v;
            fit.c += in.w[i] * v * v;
        }
    }
}

/// Every group's best point at the fixed scale t (the signs' parity and iq1's shifts
/// included); returns the fit with its error at t and its sums.
sub_fit fit_at(const format & f, const lattice & g, const sub_input & in, float t) {
    const int dim = g.dim();
    sub_fit   fit;
    fit.err = 0.0f;
    if (!f.shifted) {
        const int per = 8 / dim;  // grid groups per group of 8 signs
        for (int s8 = 0; s8 < f.sub / 8; ++s8) {
            const bool odd = f.parity && (popcount8(in.neg[s8]) & 1);
            pick       plain[2], flipped[2];
            float      total = 0.0f;
            for (int k = 0; k < per; ++k) {
                const int         gi = s8 * per + k;
                const group_costs costs(g, in.y + gi * dim, in.w + gi * dim, t, 0.0f, odd);
                if (odd) {
                    iq::best_point_parity(g, costs, plain[k], flipped[k]);
                } else {
                    plain[k] = iq::best_point(g, costs);
                }
                total += plain[k].err;
            }
            int   kf   = -1;  // the grid group that takes the negation
            float best = k_inf;
            for (int k = 0; odd && k < per; ++k) {
                const float e = total - plain[k].err + flipped[k].err;
                if (e < best) {
                    best = e;
                    kf   = k;
                }
            }
            for (int k = 0; k < per; ++k) {
                const pick & p            = k == kf ? flipped[k] : plain[k];
                fit.point[s8 * per + k]   = static_cast<uint16_t>(p.point);
                fit.flip[s8 * per + k]    = static_cast<int8_t>(k == kf ? p.flip : -1);
            }
            fit.err += odd ? best : total;
        }
    } else {
        const int per = f.shift_group / dim;  // grid groups per shift
        for (int s = 0; s < f.sub / f.shift_group; ++s) {
            pick  p[2][k_max_sub_groups];     // [shift negative][grid group]
            float e[2] = {0.0f, 0.0f};
            for (int neg = 0; neg < 2; ++neg) {
                for (int k = 0; k < per; ++k) {
                    const int         gi = s * per + k;
                    const group_costs costs(g, in.y + gi * dim, in.w + gi * dim, t, neg ? -f.delta : f.delta, false);
                    p[neg][k] = iq::best_point(g, costs);
                    e[neg] += p[neg][k].err;
                }
            }
            const int neg = e[1] < e[0] ? 1 : 0;
            for (int k = 0; k < per; ++k) {
                fit.point[s * per + k]     = static_cast<uint16_t>(p[neg][k].point);
                fit.flip[s * per + k]      = -1;
                fit.shift_neg[s * per + k] = static_cast<uint8_t>(neg);
            }
            fit.err += e[neg];
        }
    }
    fit_sums(f, g, in, fit);
    return fit;
}

/// The least-squares scale of the best 3-level fit of y (levels -1, 0, 1 plus each
/// value's shift), ignoring the grid: every split of the sorted values into three runs is
/// scored in O(1) from prefix sums. 0 when no split fits with a positive scale.
float ternary_scale(const float * y, const float * w, const float * shift, int n) {
    int order[32];
    for (int i = 0; i < n; ++i) {
        order[i] = i;
    }
    std::sort(order, order + n, [&](int a, int b) { return y[a] < y[b]; });
    float pw[33], pwy[33], pws[33];  // prefix sums of w, w*y, w*shift in sorted order
    pw[0] = pwy[0] = pws[0] = 0.0f;
    float wys = 0.0f, wss = 0.0f;
    for (int k = 0; k < n; ++k) {
        const int i = order[k];
        pw[k + 1]   = pw[k] + w[i];
        pwy[k + 1]  = pwy[k] + w[i] * y[i];
        pws[k + 1]  = pws[k] + w[i] * shift[i];
        wys += w[i] * y[i] * shift[i];
        wss += w[i] * shift[i] * shift[i];
    }
    float best = 0.0f, scale = 0.0f;
    for (int i1 = 0; i1 <= n; ++i1) {        // [0, i1): level -1
        for (int i2 = i1; i2 <= n; ++i2) {   // [i2, n): level +1
            const float b = wys + (pwy[n] - pwy[i2]) - pwy[i1];
            const float c = wss + 2.0f * ((pws[n] - pws[i2]) - pws[i1]) + pw[i1] + (pw[n] - pw[i2]);
            if (b > 0.0f && c > 0.0f && b * b > best * c) {
                best  = b * b / c;
                scale = b / c;
            }
        }
    }
    return scale;
}

/// The best fit of one sub-block over the candidate scales, refined by alternating
/// least-squares scale and points.
sub_fit search_sub(const format & f, const lattice & g, const sub_input & in) {
    sub_fit best;
    best.err = k_inf;
    auto consider = [&](float t) {
        if (!(t > 0.0f) || !std::isfinite(t)) {
            return;
        }
        const sub_fit fit = fit_at(f, g, in, t);
        if (fit.score() > best.score()) {
            best = fit;
        }
    };
    auto scan = [&](float t0) {
        for (int k = 0; k < f.r_steps; ++k) {
            const float r = f.r_lo + (f.r_hi - f.r_lo) * static_cast<float>(k) / static_cast<float>(f.r_steps - 1);
            consider(f.shifted ? t0 * r : t0 / r);
        }
    };
    if (!f.shifted) {
        float ymax = 0.0f;
        for (int i = 0; i < f.sub; ++i) {
            ymax = std::max(ymax, in.y[i]);
        }
        scan(ymax / g.value(g.nlevels() - 1));
    } else {
        const int ngroups = f.sub / f.shift_group;
        for (int config = 0; config < (1 << ngroups); ++config) {
            float shift[32];
            for (int i = 0; i < f.sub; ++i) {
                shift[i] = (config >> (i / f.shift_group)) & 1 ? -f.delta : f.delta;
            }
            scan(ternary_scale(in.y, in.w, shift, f.sub));
        }
    }
    for (int iter = 0; iter < 3 && best.score() > 0.0f; ++iter) {
        const float before = best.score();
        consider(best.b / best.c);
        if (!(best.score() > before)) {
            break;
        }
    }
    return best;
}

/// f16 bits of a non-negative scale, saturating at the largest finite f16.
fp16_t to_f16_finite(float v) {
    const fp16_t h = fp32_to_fp16(v);
    return (h & 0x7FFFu) >= 0x7C00u ? static_cast<fp16_t>(0x7BFFu) : h;
}

/// The super-block scale and the sub-block codes.
struct scales {
    fp16_t  d16 = 0;
    float   d   = 0.0f;  // decoded d, in units of the super-block's largest |x|
    uint8_t code[k_max_subs] = {};
};

/// A sub-block's scale for d = 1 (exact: the scales are small odd multiples of 1/8).
float multiplier(const format & f, int code) { return f.sub_scale(1.0f, code); }

/// Codes nearest to each sub-block's best scale for decoded d, and the modelled error
/// sum_j c_j (d m_j)^2 - 2 b_j d m_j (the constant sum w y^2 left out).
float assign_codes(const format & f, const sub_fit * fits, int nsub, float d, uint8_t * code) {
    float cost = 0.0f;
    for (int j = 0; j < nsub; ++j) {
        code[j] = 0;
        if (!(d > 0.0f) || fits[j].score() <= 0.0f) {
            continue;
        }
        const float t    = fits[j].b / fits[j].c;
        const float step = multiplier(f, 1) - multiplier(f, 0);  // the multipliers are affine in the code
        const float r    = std::nearbyint((t / d - multiplier(f, 0)) / step);
        code[j]       = static_cast<uint8_t>(std::clamp(r, 0.0f, static_cast<float>(f.max_code)));
        const float s = d * multiplier(f, code[j]);
        cost += fits[j].c * s * s - 2.0f * fits[j].b * s;
    }
    return cost;
}

/// d (stored as f16 of d * amax) and codes minimising the modelled error of the fits.
scales choose_scales(const format & f, const sub_fit * fits, int nsub, float amax) {
    scales best;
    float  best_cost = 0.0f;  // d = 0: every value decodes to 0
    auto   consider  = [&](float d) {
        if (!(d > 0.0f) || !std::isfinite(d)) {
            return;
        }
        scales s;
        s.d16 = to_f16_finite(d * amax);
        s.d   = fp16_to_fp32(s.d16) / amax;
        const float cost = assign_codes(f, fits, nsub, s.d, s.code);
        if (cost < best_cost) {
            best_cost = cost;
            best      = s;
        }
    };
    for (int j = 0; j < nsub; ++j) {
        if (fits[j].score() > 0.0f) {
            for (int code = 0; code <= f.max_code; ++code) {
                consider(fits[j].b / fits[j].c / multiplier(f, code));
            }
        }
    }
    // least-squares d for the best codes
    float num = 0.0f, den = 0.0f;
    for (int j = 0; j < nsub; ++j) {
        const float m = multiplier(f, best.code[j]);
        num += fits[j].b * m;
        den += fits[j].c * m * m;
    }
    if (best.d > 0.0f && den > 0.0f) {
        consider(num / den);
    }
    return best;
}

/// Weights of a super-block (x in units of its largest |x|); see the file comment.
void make_weights(const format & f, const float * x, const float * imatrix, float * w) {
    float sumx2 = 0.0f;
    for (int i = 0; i < QK_K; ++i) {
        sumx2 += x[i] * x[i];
    }
    const float sigma2 = f.sigma_factor * sumx2 / QK_K;
    float       qmax   = 0.0f;
    if (imatrix) {
        for (int i = 0; i < QK_K; ++i) {
            if (std::isfinite(imatrix[i]) && imatrix[i] > qmax) {
                qmax = imatrix[i];
            }
        }
    }
    for (int i = 0; i < QK_K; ++i) {
        float q = 1.0f;
        if (imatrix) {
            q = std::isfinite(imatrix[i]) && imatrix[i] > 0.0f ? imatrix[i] / qmax : 0.0f;
        }
        w[i] = q * std::sqrt(sigma2 + x[i] * x[i]);
    }
    for (int s = 0; s < QK_K / f.sub; ++s) {  // a sub-block without weight: all equal
        float sum = 0.0f;
        for (int i = 0; i < f.sub; ++i) {
            sum += w[s * f.sub + i];
        }
        if (!(sum > 0.0f)) {
            std::fill(w + s * f.sub, w + (s + 1) * f.sub, 1.0f);
        }
    }
}

/// A super-block's choices, ready to pack.
struct superblock {
    scales   sc;
    uint16_t point[QK_K / 4]     = {};  // per grid group (of 8 or of 4 values)
    uint8_t  neg[QK_K / 8]       = {};  // sign grids: per group of 8, bit j = value j negative
    uint8_t  shift_neg[QK_K / 8] = {};  // iq1: per group of 8, 1 = shift -delta
};

/// Chooses everything for one super-block of x (NaN read as 0, +-Inf as +-FLT_MAX).
superblock encode_superblock(const format & f, const float * x_in, const float * imatrix) {
    superblock out;
    float      x[QK_K];
    float      amax = 0.0f;
    for (int i = 0; i < QK_K; ++i) {
        const float v = std::isnan(x_in[i]) ? 0.0f
                                            : std::clamp(x_in[i], -std::numeric_limits<float>::max(),
                                                         std::numeric_limits<float>::max());
        x[i]          = v;
        amax          = std::max(amax, std::fabs(v));
    }
    if (!(amax > 0.0f)) {
        return out;  // all zero: d = 0
    }
    float y[QK_K], w[QK_K];
    for (int i = 0; i < QK_K; ++i) {
        x[i] /= amax;
        y[i] = f.shifted ? x[i] : std::fabs(x[i]);
        if (x[i] < 0.0f) {
            out.neg[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
        }
    }
    make_weights(f, x, imatrix, w);

    const lattice & g    = iq::get_lattice(f.grid);
    const int       nsub = QK_K / f.sub;
    sub_fit         fits[k_max_subs];
    auto input = [&](int j) { return sub_input{y + j * f.sub, w + j * f.sub, out.neg + j * f.sub / 8}; };
    for (int j = 0; j < nsub; ++j) {
        fits[j] = search_sub(f, g, input(j));
    }

    // Choose d and the codes for the fits, re-fit every group at its decoded scale; twice.
    float  best_err = k_inf;
    scales best_sc;
    sub_fit best_fits[k_max_subs];
    for (int round = 0; round < 2; ++round) {
        const scales sc  = choose_scales(f, fits, nsub, amax);
        float        err = 0.0f;
        for (int j = 0; j < nsub; ++j) {
            fits[j] = fit_at(f, g, input(j), sc.d * multiplier(f, sc.code[j]));
            err += fits[j].err;
        }
        if (err < best_err) {
            best_err = err;
            best_sc  = sc;
            std::copy(fits, fits + nsub, best_fits);
        }
    }

    out.sc          = best_sc;
    const int ngrp  = f.sub / g.dim();
    for (int j = 0; j < nsub; ++j) {
        for (int k = 0; k < ngrp; ++k) {
            const int q  = j * ngrp + k;  // grid group in the super-block
            out.point[q] = best_fits[j].point[k];
            if (best_fits[j].flip[k] >= 0) {
                const int i = q * g.dim() + best_fits[j].flip[k];
                out.neg[i / 8] ^= static_cast<uint8_t>(1u << (i % 8));
            }
            out.shift_neg[q * g.dim() / 8] = best_fits[j].shift_neg[k];
        }
    }
    return out;
}

// ---- formats and packing ------------------------------------------------------------------

// sigma_factor and the candidate ranges as in ggml's encoders of each type, with fewer
// candidate scales (the least-squares refinement recovers what a finer scan would find).
constexpr format k_iq2_xxs{.grid = iq::grid_id::iq2xxs, .sub = 32, .sub_scale = iq2_sub_scale, .max_code = 15,
                           .parity = true, .sigma_factor = 1.0f, .r_lo = 0.82f, .r_hi = 1.18f, .r_steps = 11};
constexpr format k_iq2_xs{.grid = iq::grid_id::iq2xs, .sub = 16, .sub_scale = iq2_sub_scale, .max_code = 15,
                          .parity = true, .sigma_factor = 1.0f, .r_lo = 0.82f, .r_hi = 1.18f, .r_steps = 11};
constexpr format k_iq2_s{.grid = iq::grid_id::iq2s, .sub = 16, .sub_scale = iq2_sub_scale, .max_code = 15,
                         .r_lo = 0.82f, .r_hi = 1.18f, .r_steps = 11};
constexpr format k_iq3_xxs{.grid = iq::grid_id::iq3xxs, .sub = 32, .sub_scale = iq3xxs_sub_scale, .max_code = 15,
                           .parity = true, .r_lo = 0.8f, .r_hi = 1.2f, .r_steps = 16};
constexpr format k_iq3_s{.grid = iq::grid_id::iq3s, .sub = 32, .sub_scale = iq3s_sub_scale, .max_code = 15,
                         .r_lo = 0.8f, .r_hi = 1.2f, .r_steps = 11};
constexpr format k_iq1_s{.grid = iq::grid_id::iq1s, .sub = 32, .sub_scale = iq1_sub_scale, .max_code = 7,
                         .shifted = true, .shift_group = 32, .delta = IQ1S_DELTA, .r_lo = 0.8f, .r_hi = 1.2f,
                         .r_steps = 3};
constexpr format k_iq1_m{.grid = iq::grid_id::iq1s, .sub = 16, .sub_scale = iq1_sub_scale, .max_code = 7,
                         .shifted = true, .shift_group = 8, .delta = IQ1M_DELTA, .r_lo = 0.8f, .r_hi = 1.2f,
                         .r_steps = 3};

template <class Block>
void store(void * y, int64_t i, const Block & b) {
    std::memcpy(static_cast<uint8_t *>(y) + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof b);
}

void put_u32(uint8_t * p, uint32_t v) { std::memcpy(p, &v, sizeof v); }

/// Encodes each super-block of the row with `f` and writes it with `pack(superblock, Block &)`.
template <class Block, class Pack>
void encode_row(const format & f, const float * x, void * y, int64_t n, const float * imatrix, Pack pack) {
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const superblock s = encode_superblock(f, x + i * QK_K, imatrix ? imatrix + i * QK_K : nullptr);
        Block            b;
        std::memset(&b, 0, sizeof b);
        pack(s, b);
        store(y, i, b);
    }
}

} // namespace

void quantize_row_iq2_xxs(const float * x, void * y, int64_t n, const float * imatrix) {
    encode_row<block_iq2_xxs>(k_iq2_xxs, x, y, n, imatrix, [](const superblock & s, block_iq2_xxs & b) {
        b.d      = s.sc.d16;
        auto * q = reinterpret_cast<uint8_t *>(b.qs);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            uint32_t aux = static_cast<uint32_t>(s.sc.code[ib]) << 28;
            for (int l = 0; l < 4; ++l) {
                q[8 * ib + l] = static_cast<uint8_t>(s.point[4 * ib + l]);
                aux |= static_cast<uint32_t>(s.neg[4 * ib + l] & 127) << (7 * l);
            }
            put_u32(q + 8 * ib + 4, aux);
        }
    });
}

void quantize_row_iq2_xs(const float * x, void * y, int64_t n, const float * imatrix) {
    encode_row<block_iq2_xs>(k_iq2_xs, x, y, n, imatrix, [](const superblock & s, block_iq2_xs & b) {
        b.d = s.sc.d16;
        for (int g = 0; g < QK_K / 8; ++g) {
            b.qs[g] = static_cast<uint16_t>(s.point[g] | ((s.neg[g] & 127) << 9));
        }
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            b.scales[ib] = static_cast<uint8_t>(s.sc.code[2 * ib] | (s.sc.code[2 * ib + 1] << 4));
        }
    });
}

void quantize_row_iq2_s(const float * x, void * y, int64_t n, const float * imatrix) {
    encode_row<block_iq2_s>(k_iq2_s, x, y, n, imatrix, [](const superblock & s, block_iq2_s & b) {
        b.d = s.sc.d16;
        for (int g = 0; g < QK_K / 8; ++g) {
            b.qs[g] = static_cast<uint8_t>(s.point[g]);
            b.qh[g / 4] |= static_cast<uint8_t>((s.point[g] >> 8) << (2 * (g % 4)));
            b.qs[QK_K / 8 + g] = s.neg[g];
        }
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            b.scales[ib] = static_cast<uint8_t>(s.sc.code[2 * ib] | (s.sc.code[2 * ib + 1] << 4));
        }
    });
}

void quantize_row_iq3_xxs(const float * x, void * y, int64_t n, const float * imatrix) {
    encode_row<block_iq3_xxs>(k_iq3_xxs, x, y, n, imatrix, [](const superblock & s, block_iq3_xxs & b) {
        b.d = s.sc.d16;
        for (int q = 0; q < QK_K / 4; ++q) {
            b.qs[q] = static_cast<uint8_t>(s.point[q]);
        }
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            uint32_t aux = static_cast<uint32_t>(s.sc.code[ib]) << 28;
            for (int l = 0; l < 4; ++l) {
                aux |= static_cast<uint32_t>(s.neg[4 * ib + l] & 127) << (7 * l);
            }
            put_u32(b.qs + QK_K / 4 + 4 * ib, aux);
        }
    });
}

void quantize_row_iq3_s(const float * x, void * y, int64_t n, const float * imatrix) {
    encode_row<block_iq3_s>(k_iq3_s, x, y, n, imatrix, [](const superblock & s, block_iq3_s & b) {
        b.d = s.sc.d16;
        for (int q = 0; q < QK_K / 4; ++q) {
            b.qs[q] = static_cast<uint8_t>(s.point[q]);
            b.qh[q / 8] |= static_cast<uint8_t>((s.point[q] >> 8) << (q % 8));
        }
        for (int g = 0; g < QK_K / 8; ++g) {
            b.signs[g] = s.neg[g];
        }
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            b.scales[ib / 2] |= static_cast<uint8_t>(s.sc.code[ib] << (4 * (ib % 2)));
        }
    });
}

void quantize_row_iq1_s(const float * x, void * y, int64_t n, const float * imatrix) {
    encode_row<block_iq1_s>(k_iq1_s, x, y, n, imatrix, [](const superblock & s, block_iq1_s & b) {
        b.d = s.sc.d16;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            unsigned h = (static_cast<unsigned>(s.sc.code[ib]) << 12) | (s.shift_neg[4 * ib] ? 0x8000u : 0u);
            for (int l = 0; l < 4; ++l) {
                b.qs[4 * ib + l] = static_cast<uint8_t>(s.point[4 * ib + l]);
                h |= static_cast<unsigned>(s.point[4 * ib + l] >> 8) << (3 * l);
            }
            b.qh[ib] = static_cast<uint16_t>(h);
        }
    });
}

void quantize_row_iq1_m(const float * x, void * y, int64_t n, const float * imatrix) {
    encode_row<block_iq1_m>(k_iq1_m, x, y, n, imatrix, [](const superblock & s, block_iq1_m & b) {
        for (int g = 0; g < QK_K / 8; ++g) {
            b.qs[g] = static_cast<uint8_t>(s.point[g]);
            const unsigned nib = (s.point[g] >> 8) | (s.shift_neg[g] ? 8u : 0u);
            b.qh[g / 2] |= static_cast<uint8_t>(nib << (4 * (g % 2)));
        }
        uint16_t sc[4] = {};
        for (int k = 0; k < QK_K / 16; ++k) {
            sc[k / 4] |= static_cast<uint16_t>(s.sc.code[k] << (3 * (k % 4)));
        }
        for (int k = 0; k < 4; ++k) {  // nibble k of d in the top nibble of sc[k]
            sc[k] |= static_cast<uint16_t>(((s.sc.d16 >> (4 * k)) & 0xf) << 12);
        }
        std::memcpy(b.scales, sc, sizeof sc);
    });
}

} // namespace gk::quant
