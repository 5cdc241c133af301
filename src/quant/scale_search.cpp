// scale_search.cpp - the block scale searches of scale_search.h.
#include "scale_search.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace gk::quant {
namespace {

constexpr int kMaxBlock = 256;  // the largest block any family searches

using levels = std::array<int16_t, kMaxBlock>;

/// One block under search: values, weights, level range.
struct block_view {
    const float * x;
    const float * w;
    int           n;
    int           lo;
    int           hi;
};

/// Rounds every level to the nearest for the decoded scale `d` and offset `m`, and
/// returns the weighted squared error of the values the decoder would produce.
double quantize_with(const block_view & b, float d, float m, int16_t * L) {
    const float id  = d != 0.0f ? 1.0f / d : 0.0f;
    double      err = 0.0;
    for (int j = 0; j < b.n; ++j) {
        L[j] = static_cast<int16_t>(nearest_level((b.x[j] - m) * id, b.lo, b.hi));
        if (!std::isfinite(b.x[j])) {
            continue;
        }
        const float  prod = static_cast<float>(L[j]) * d;  // as the decoders round:
        const float  y    = prod + m;                      // product, then sum
        const double e    = static_cast<double>(b.x[j]) - static_cast<double>(y);
        err += static_cast<double>(b.w[j]) * e * e;
    }
    return err;
}

/// The best (lowest error) candidate seen so far.
class search {
public:
    explicit search(const block_view & b) : b_(b) {}

    /// Rounds (d, m) to f16, re-rounds the levels for them and keeps the result if it
    /// beats the best so far.
    void try_scale(float d, float m) {
        const fp16_t hd = fp32_to_fp16_finite(d);
        const fp16_t hm = fp32_to_fp16_finite(m);
        const double err = quantize_with(b_, fp16_to_fp32(hd), fp16_to_fp32(hm), trial_.data());
        if (err < best_err_ || !found_) {
            found_    = true;
            best_err_ = err;
            best_d_   = hd;
            best_m_   = hm;
            std::swap(best_, trial_);
        }
    }

    const int16_t * best_levels() const { return best_.data(); }
    float           best_d() const { return fp16_to_fp32(best_d_); }
    float           best_m() const { return fp16_to_fp32(best_m_); }
    fp16_t          best_d_bits() const { return best_d_; }
    fp16_t          best_m_bits() const { return best_m_; }
    double          best_err() const { return best_err_; }

private:
    block_view b_;
    bool       found_    = false;
    double     best_err_ = 0.0;
    fp16_t     best_d_   = 0;
    fp16_t     best_m_   = 0;
    levels     best_{};
    levels     trial_{};
};

/// Weighted least-squares scale for fixed levels (x ~ L * d); false when all L are 0.
bool scale_for_levels(const block_view & b, const int16_t * L, float & d) {
    double sxl = 0.0, sll = 0.0;
    for (int j = 0; j < b.n; ++j) {
        if (!std::isfinite(b.x[j])) {
            continue;
        }
        const double w = b.w[j], l = L[j];
        sxl += w * b.x[j] * l;
        sll += w * l * l;
    }
    if (!(sll > 0.0)) {
        return false;
    }
    d = static_cast<float>(sxl / sll);
    return true;
}

/// Weighted least-squares scale and offset for fixed levels (x ~ L * d + m); false when
/// the levels do not determine both (all equal).
bool scale_offset_for_levels(const block_view & b, const int16_t * L, float & d, float & m) {
    double sw = 0.0, sl = 0.0, sll = 0.0, sx = 0.0, sxl = 0.0;
    for (int j = 0; j < b.n; ++j) {
        if (!std::isfinite(b.x[j])) {
            continue;
        }
        const double w = b.w[j], l = L[j], x = b.x[j];
        sw += w;
        sl += w * l;
        sll += w * l * l;
        sx += w * x;
        sxl += w * x * l;
    }
    const double det = sw * sll - sl * sl;
    if (!(det > 0.0)) {
        return false;
    }
    d = static_cast<float>((sw * sxl - sx * sl) / det);
    m = static_cast<float>((sll * sx - sl * sxl) / det);
    return true;
}

/// Weighted mean of x - L * d: the best offset for fixed levels and scale (0 if no weight).
float offset_for(const block_view & b, const int16_t * L, float d) {
    double sw = 0.0, sr = 0.0;
    for (int j = 0; j < b.n; ++j) {
        if (!std::isfinite(b.x[j])) {
            continue;
        }
        sw += b.w[j];
        sr += b.w[j] * (static_cast<double>(b.x[j]) - static_cast<double>(static_cast<float>(L[j]) * d));
    }
    return sw > 0.0 ? static_cast<float>(sr / sw) : 0.0f;
}

float grid_point(const scale_grid & g, int i) {
    return g.steps > 1 ? g.from + (g.to - g.from) * static_cast<float>(i) / static_cast<float>(g.steps - 1) : g.from;
}

} // namespace

int nearest_level(float v, int lo, int hi) {
    if (std::isnan(v)) {
        v = 0.0f;
    }
    v = std::clamp(v, static_cast<float>(lo), static_cast<float>(hi));
    // |v| <= 2^22 here: adding 1.5 * 2^23 leaves the rounded integer in the low mantissa
    // bits (round to nearest even, the default floating-point mode).
    const float t = v + 12582912.0f;
    int32_t     i;
    std::memcpy(&i, &t, sizeof(i));
    return (i & 0x007FFFFF) - 0x00400000;
}

float signed_max_abs(const float * x, int n) {
    float amax = 0.0f, xmax = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (std::isfinite(x[j]) && std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            xmax = x[j];
        }
    }
    return xmax;
}

void finite_range(const float * x, int n, float & lo, float & hi) {
    lo = std::numeric_limits<float>::infinity();
    hi = -lo;
    for (int j = 0; j < n; ++j) {
        if (std::isfinite(x[j])) {
            lo = std::min(lo, x[j]);
            hi = std::max(hi, x[j]);
        }
    }
    if (lo > hi) {
        lo = hi = 0.0f;
    }
}

fp16_t fp32_to_fp16_finite(float v) {
    if (std::isnan(v)) {
        return 0;
    }
    const fp16_t h = fp32_to_fp16(v);
    return (h & 0x7FFFu) == 0x7C00u ? static_cast<fp16_t>((h & 0x8000u) | 0x7BFFu) : h;
}

float row_sigma2(const float * x, int64_t n) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) {
        if (std::isfinite(x[j])) {
            s += static_cast<double>(x[j]) * x[j];
        }
    }
    return n > 0 ? static_cast<float>(s / static_cast<double>(n)) : 0.0f;
}

void block_weights(const float * x, const float * imatrix, float sigma2, int n, float * w) {
    double wide[kMaxBlock];
    double wmax = 0.0;
    for (int j = 0; j < n; ++j) {
        double q = imatrix ? imatrix[j] : 1.0;
        if (!(q > 0.0) || !std::isfinite(q) || !std::isfinite(x[j])) {
            q = 0.0;
        } else if (imatrix) {
            q *= std::sqrt(static_cast<double>(sigma2) + static_cast<double>(x[j]) * x[j]);
        }
        wide[j] = q;
        wmax    = std::max(wmax, q);
    }
    for (int j = 0; j < n; ++j) {
        w[j] = wmax > 0.0 && std::isfinite(wmax) ? static_cast<float>(wide[j] / wmax) : 1.0f;
    }
}

fp16_t fit_scale(const float * x, const float * w, int n, int lo, int hi, const scale_grid & grid,
                 float baseline, int8_t * L) {
    const block_view b{x, w, std::min(n, kMaxBlock), lo, hi};
    const float xmax = signed_max_abs(x, b.n);
    search      s(b);
    s.try_scale(0.0f, 0.0f);
    if (xmax != 0.0f) {
        s.try_scale(baseline, 0.0f);
        levels trial{};
        for (int dir : {1, -1}) {
            const int reach = dir > 0 ? hi : -lo;  // largest level on this side of zero
            for (int i = 0; reach > 0 && i < grid.steps; ++i) {
                const float p = static_cast<float>(reach) * grid_point(grid, i);
                if (!(p > 0.0f)) {
                    continue;
                }
                const float id = static_cast<float>(dir) * p / xmax;  // xmax -> level dir * p
                for (int j = 0; j < b.n; ++j) {
                    trial[j] = static_cast<int16_t>(nearest_level(x[j] * id, lo, hi));
                }
                float d;
                if (scale_for_levels(b, trial.data(), d)) {
                    s.try_scale(d, 0.0f);
                }
            }
        }
        for (int round = 0; round < 2; ++round) {  // least squares on the winner's levels
            const double before = s.best_err();
            float        d;
            if (scale_for_levels(b, s.best_levels(), d)) {
                s.try_scale(d, 0.0f);
            }
            if (!(s.best_err() < before)) {
                break;
            }
        }
    }
    for (int j = 0; j < b.n; ++j) {
        L[j] = static_cast<int8_t>(s.best_levels()[j]);
    }
    return s.best_d_bits();
}

fp16_t fit_ternary(const float * x, const float * w, int n, float baseline, int8_t * L) {
    const block_view b{x, w, std::min(n, kMaxBlock), -1, 1};
    search           s(b);
    s.try_scale(0.0f, 0.0f);
    s.try_scale(baseline, 0.0f);
    // magnitudes in decreasing order (non-finite values, weight 0, last)
    std::array<int16_t, kMaxBlock> order;
    auto mag = [&](int j) { return std::isfinite(x[j]) ? std::fabs(x[j]) : -1.0f; };
    for (int j = 0; j < b.n; ++j) {
        order[j] = static_cast<int16_t>(j);
    }
    std::stable_sort(order.begin(), order.begin() + b.n, [&](int16_t a, int16_t c) { return mag(a) > mag(c); });
    // scale_k = sum_{top k} w|x| / sum_{top k} w; the error falls by (sum w|x|)^2 / sum w
    std::array<float, kMaxBlock + 1> scale_k{};
    double sa = 0.0, sw = 0.0, best_gain = 0.0;
    int    best_k = 0;
    for (int k = 1; k <= b.n; ++k) {
        const int j = order[k - 1];
        if (mag(j) < 0.0f) {
            break;
        }
        sa += static_cast<double>(w[j]) * std::fabs(x[j]);
        sw += w[j];
        scale_k[k] = sw > 0.0 ? static_cast<float>(sa / sw) : 0.0f;
        if (sw > 0.0 && sa * sa / sw > best_gain) {
            best_gain = sa * sa / sw;
            best_k    = k;
        }
    }
    if (best_k > 0) {
        constexpr int kNeighbours = 4;
        for (int k = std::max(1, best_k - kNeighbours); k <= std::min(b.n, best_k + kNeighbours); ++k) {
            if (scale_k[k] > 0.0f) {
                s.try_scale(scale_k[k], 0.0f);
            }
        }
        for (int round = 0; round < 4; ++round) {  // alternate: levels for d, d for levels
            const double before = s.best_err();
            float        d;
            if (scale_for_levels(b, s.best_levels(), d)) {
                s.try_scale(d, 0.0f);
            }
            if (!(s.best_err() < before)) {
                break;
            }
        }
    }
    for (int j = 0; j < b.n; ++j) {
        L[j] = static_cast<int8_t>(s.best_levels()[j]);
    }
    return s.best_d_bits();
}

scale_offset fit_scale_offset(const float * x, const float * w, int n, int nmax, const scale_grid & grid,
                              float baseline_d, float baseline_m, uint8_t * L) {
    const block_view b{x, w, std::min(n, kMaxBlock), 0, nmax};
    float xlo, xhi;
    finite_range(x, b.n, xlo, xhi);
    search s(b);
    levels zero{};
    s.try_scale(0.0f, offset_for(b, zero.data(), 0.0f));  // a constant block
    s.try_scale(baseline_d, baseline_m);
    if (xhi > xlo) {
        levels trial{};
        for (int i = 0; i < grid.steps; ++i) {
            const float iscale = static_cast<float>(nmax) * grid_point(grid, i) / (xhi - xlo);
            for (int j = 0; j < b.n; ++j) {
                trial[j] = static_cast<int16_t>(nearest_level((x[j] - xlo) * iscale, 0, nmax));
            }
            float d, m;
            if (scale_offset_for_levels(b, trial.data(), d, m)) {
                s.try_scale(d, m);
            }
        }
    }
    for (int round = 0; round < 2; ++round) {  // refit on the winner's levels
        const double before = s.best_err();
        float        d, m;
        if (scale_offset_for_levels(b, s.best_levels(), d, m)) {
            s.try_scale(d, m);
        }
        // the offset that best suits the f16-rounded scale
        const float dd = s.best_d();
        s.try_scale(dd, offset_for(b, s.best_levels(), dd));
        if (!(s.best_err() < before)) {
            break;
        }
    }
    for (int j = 0; j < b.n; ++j) {
        L[j] = static_cast<uint8_t>(s.best_levels()[j]);
    }
    return {s.best_d_bits(), s.best_m_bits()};
}

} // namespace gk::quant
