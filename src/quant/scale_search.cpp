// scale_search.cpp - the block scale searches of scale_search.h.
#include "scale_search.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace gk::quant {
namespace {

constexpr int kMaxBlock = 256;  // the largest block any family searches

using levels = std::array<int32_t, kMaxBlock>;  // int32: stores that cannot alias the floats

/// Nearest integer to v (ties to even) clamped to [lo, hi]; NaN gives 0 clamped into
/// range. Branch-free, so the loops below vectorise.
inline int nearest_level(float v, int lo, int hi) {
    v = v == v ? v : 0.0f;
    v = std::min(std::max(v, static_cast<float>(lo)), static_cast<float>(hi));
    // |v| <= 2^22 here: adding 1.5 * 2^23 leaves the rounded integer in the low mantissa
    // bits (round to nearest even, the default floating-point mode).
    const float t = v + 12582912.0f;
    int32_t     i;
    std::memcpy(&i, &t, sizeof(i));
    return (i & 0x007FFFFF) - 0x00400000;
}

/// One block under search: a finite copy of the values (NaN -> 0, +-Inf -> +-FLT_MAX,
/// both with weight 0, so they saturate but never count), the weights, the level range.
struct block_view {
    std::array<float, kMaxBlock> x;
    std::array<float, kMaxBlock> w;
    int                          n;
    int                          lo;
    int                          hi;

    block_view(const float * xs, const float * ws, int count, int level_lo, int level_hi)
        : n(std::min(count, kMaxBlock)), lo(level_lo), hi(level_hi) {
        for (int j = 0; j < n; ++j) {
            const bool finite = std::isfinite(xs[j]);
            x[j] = finite ? xs[j] : std::isnan(xs[j]) ? 0.0f : std::copysign(FLT_MAX, xs[j]);
            w[j] = finite ? ws[j] : 0.0f;
        }
    }
};

/// Partial sums over a block in kLanes independent lanes (so the loops vectorise; every
/// block holds a multiple of kLanes values), added up at the end.
constexpr int kLanes = 8;

template <class T>
T lane_sum(const T * a) {
    T s = 0;
    for (int k = 0; k < kLanes; ++k) {
        s += a[k];
    }
    return s;
}

/// Rounds every level to the nearest for the decoded scale `d` and offset `m`, and
/// returns the weighted squared error of the values the decoder would produce.
double quantize_with(const block_view & b, float d, float m, int32_t * L) {
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const int   n = b.n, lo = b.lo, hi = b.hi;  // locals: the stores to L cannot change them
    const float * x = b.x.data();
    const float * w = b.w.data();
    double        err[kLanes] = {};
    for (int j = 0; j < n; j += kLanes) {
        for (int k = 0; k < kLanes; ++k) {
            const int    l    = nearest_level((x[j + k] - m) * id, lo, hi);
            const float  prod = static_cast<float>(l) * d;  // as the decoders round:
            const float  y    = prod + m;                   // product, then sum
            const double e    = static_cast<double>(x[j + k]) - static_cast<double>(y);
            L[j + k]          = l;
            err[k] += static_cast<double>(w[j + k]) * e * e;
        }
    }
    return lane_sum(err);
}

/// The best (lowest error) candidate seen so far.
class search {
public:
    explicit search(const block_view & b) : b_(b) {}

    /// Rounds (d, m) to f16, re-rounds the levels for them and keeps the result if it
    /// beats the best so far. A repeat of the previous candidate is skipped.
    void try_scale(float d, float m) {
        const fp16_t hd = fp32_to_fp16_finite(d);
        const fp16_t hm = fp32_to_fp16_finite(m);
        if (found_ && hd == last_d_ && hm == last_m_) {
            return;
        }
        last_d_          = hd;
        last_m_          = hm;
        const double err = quantize_with(b_, fp16_to_fp32(hd), fp16_to_fp32(hm), trial_.data());
        if (err < best_err_ || !found_) {
            found_    = true;
            best_err_ = err;
            best_d_   = hd;
            best_m_   = hm;
            std::swap(best_, trial_);
        }
    }

    const int32_t * best_levels() const { return best_.data(); }
    float          best_d() const { return fp16_to_fp32(best_d_); }
    fp16_t         best_d_bits() const { return best_d_; }
    fp16_t         best_m_bits() const { return best_m_; }
    double         best_err() const { return best_err_; }

private:
    const block_view & b_;
    bool               found_    = false;
    double             best_err_ = 0.0;
    fp16_t             best_d_ = 0, best_m_ = 0;
    fp16_t             last_d_ = 0, last_m_ = 0;
    levels             best_{};
    levels             trial_{};
};

/// Weighted least-squares scale for fixed levels (x ~ L * d); false when all L are 0.
bool scale_for_levels(const block_view & b, const int32_t * L, float & d) {
    double sxl = 0.0, sll = 0.0;
    for (int j = 0; j < b.n; ++j) {
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
bool scale_offset_for_levels(const block_view & b, const int32_t * L, float & d, float & m) {
    double sw = 0.0, sl = 0.0, sll = 0.0, sx = 0.0, sxl = 0.0;
    for (int j = 0; j < b.n; ++j) {
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
float offset_for(const block_view & b, const int32_t * L, float d) {
    double sw = 0.0, sr = 0.0;
    for (int j = 0; j < b.n; ++j) {
        sw += b.w[j];
        sr += b.w[j] * (static_cast<double>(b.x[j]) - static_cast<double>(static_cast<float>(L[j]) * d));
    }
    return sw > 0.0 ? static_cast<float>(sr / sw) : 0.0f;
}

/// Up to `rounds` alternations of least squares on the best levels and re-rounding the
/// levels for the resulting f16 scale, while the error falls.
void refine_scale(const block_view & b, search & s, int rounds) {
    for (int round = 0; round < rounds; ++round) {
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

/// The few best grid candidates, by the error their least-squares fit would have before
/// f16 rounding; only these are tried exactly.
class shortlist {
public:
    static constexpr int kSize = 3;

    void offer(float gain, float d, float m) {
        if (!(gain > 0.0f)) {
            return;
        }
        if (count_ == kSize && !(gain > entries_[kSize - 1].gain)) {
            return;
        }
        int i = count_ < kSize ? count_++ : kSize - 1;
        for (; i > 0 && entries_[i - 1].gain < gain; --i) {
            entries_[i] = entries_[i - 1];
        }
        entries_[i] = {gain, d, m};
    }

    void try_all(search & s) const {
        for (int i = 0; i < count_; ++i) {
            s.try_scale(entries_[i].d, entries_[i].m);
        }
    }

private:
    struct entry {
        float gain, d, m;
    };
    std::array<entry, kSize> entries_{};
    int                      count_ = 0;
};

/// Symmetric grid point: levels l_j = nearest(xn_j * id) of the normalised values xn
/// (|xn| <= 1); returns the least-squares fit's error reduction (sum w xn l)^2 / sum w l^2
/// and its scale in `dn` (normalised units), or 0 when all levels are 0.
float symmetric_gain(const float * xn, const float * w, int n, float id, int lo, int hi, float & dn) {
    float sxl[kLanes] = {}, sll[kLanes] = {};
    for (int j = 0; j < n; j += kLanes) {
        for (int k = 0; k < kLanes; ++k) {
            const float l = static_cast<float>(nearest_level(xn[j + k] * id, lo, hi));
            sxl[k] += w[j + k] * xn[j + k] * l;
            sll[k] += w[j + k] * l * l;
        }
    }
    const float a = lane_sum(sxl), b = lane_sum(sll);
    if (!(b > 0.0f)) {
        return 0.0f;
    }
    dn = a / b;
    return a * dn;
}

/// Affine grid point: levels of values normalised to [0, 1], spaced 1/iscale apart with
/// the point `anchor` (0, 1/2 or 1) of [0, 1] on level anchor * nmax:
/// l_j = nearest((xn_j - anchor) * iscale + anchor * nmax), clamped to [0, nmax]. With
/// iscale > nmax, anchor 0 clips the largest values, 1 the smallest, 1/2 both ends.
/// Returns the joint least-squares fit's error reduction against the best constant
/// (sw, sx: sums of w and w xn) and its scale and offset (normalised).
float affine_gain(const float * xn, const float * w, int n, float iscale, float anchor, int nmax, float sw, float sx,
                  float & dn, float & mn) {
    const float shift = anchor * static_cast<float>(nmax);
    float       sl[kLanes] = {}, sll[kLanes] = {}, sxl[kLanes] = {};
    for (int j = 0; j < n; j += kLanes) {
        for (int k = 0; k < kLanes; ++k) {
            const float l = static_cast<float>(nearest_level((xn[j + k] - anchor) * iscale + shift, 0, nmax));
            sl[k] += w[j + k] * l;
            sll[k] += w[j + k] * l * l;
            sxl[k] += w[j + k] * xn[j + k] * l;
        }
    }
    const float a = lane_sum(sl), b = lane_sum(sll), c = lane_sum(sxl);
    const float det = sw * b - a * a;
    if (!(det > 0.0f) || !(sw > 0.0f)) {
        return 0.0f;
    }
    dn = (sw * c - sx * a) / det;
    mn = (b * sx - a * c) / det;
    // reduction of sum w (xn - dn l - mn)^2 below sum w (xn - sx/sw)^2
    const float cov = c - a * sx / sw;
    return cov * cov / (b - a * a / sw);
}

float grid_point(const scale_grid & g, int i) {
    return g.steps > 1 ? g.from + (g.to - g.from) * static_cast<float>(i) / static_cast<float>(g.steps - 1) : g.from;
}

} // namespace

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

void block_weights(const float * x, const float * imatrix, int n, float * w) {
    float wmax = 0.0f;
    for (int j = 0; j < n; ++j) {
        const float q = imatrix ? imatrix[j] : 1.0f;
        w[j]          = q > 0.0f && std::isfinite(q) && std::isfinite(x[j]) ? q : 0.0f;
        wmax          = std::max(wmax, w[j]);
    }
    for (int j = 0; j < n; ++j) {
        w[j] = wmax > 0.0f ? w[j] / wmax : 1.0f;
    }
}

fp16_t fit_scale(const float * x, const float * w, int n, int lo, int hi, const scale_grid & grid,
                 float baseline, int8_t * L) {
    const block_view b(x, w, n, lo, hi);
    const float      xmax = signed_max_abs(x, b.n);
    search           s(b);
    s.try_scale(0.0f, 0.0f);
    if (xmax != 0.0f) {
        s.try_scale(baseline, 0.0f);
        // the grid runs on x / |xmax| (within [-1, 1]), so its f32 sums never overflow
        std::array<float, kMaxBlock> xn;
        const float                  inv = 1.0f / std::fabs(xmax);
        for (int j = 0; j < b.n; ++j) {
            xn[j] = b.w[j] > 0.0f ? b.x[j] * inv : 0.0f;  // weight 0: saturated non-finite values
        }
        const float sign = xmax > 0.0f ? 1.0f : -1.0f;
        shortlist   best;
        for (int dir : {1, -1}) {
            const int reach = dir > 0 ? hi : -lo;  // largest level on this side of zero
            for (int i = 0; reach > 0 && i < grid.steps; ++i) {
                // xmax maps to level dir * reach * grid_point
                const float id = sign * static_cast<float>(dir * reach) * grid_point(grid, i);
                float       dn = 0.0f;
                const float gain = symmetric_gain(xn.data(), b.w.data(), b.n, id, lo, hi, dn);
                best.offer(gain, dn * std::fabs(xmax), 0.0f);
            }
        }
        best.try_all(s);
        refine_scale(b, s, 2);
    }
    std::copy(s.best_levels(), s.best_levels() + b.n, L);
    return s.best_d_bits();
}

fp16_t fit_ternary(const float * x, const float * w, int n, float baseline, int8_t * L) {
    const block_view b(x, w, n, -1, 1);
    search           s(b);
    s.try_scale(0.0f, 0.0f);
    s.try_scale(baseline, 0.0f);
    // element indices by decreasing |x| (the non-finite ones, of weight 0, count as 0):
    // sort keys |x| bits (ordered like the values, being non-negative) above the index
    std::array<float, kMaxBlock>    mag;
    std::array<uint64_t, kMaxBlock> key;
    for (int j = 0; j < b.n; ++j) {
        mag[j] = b.w[j] > 0.0f ? std::fabs(b.x[j]) : 0.0f;
        uint32_t bits;
        std::memcpy(&bits, &mag[j], sizeof(bits));
        key[j] = static_cast<uint64_t>(bits) << 32 | static_cast<uint32_t>(j);
    }
    std::sort(key.begin(), key.begin() + b.n, std::greater<>());
    // scale_k = sum_{top k} w|x| / sum_{top k} w; the error falls by (sum w|x|)^2 / sum w
    std::array<float, kMaxBlock + 1> scale_k{};
    double sa = 0.0, sw = 0.0, best_gain = 0.0;
    int    best_k = 0;
    for (int k = 1; k <= b.n; ++k) {
        const int j = static_cast<int>(key[k - 1] & 0xFFFFFFFFu);
        sa += static_cast<double>(b.w[j]) * mag[j];
        sw += b.w[j];
        scale_k[k] = sw > 0.0 ? static_cast<float>(sa / sw) : 0.0f;
        if (sw > 0.0 && sa * sa / sw > best_gain) {
            best_gain = sa * sa / sw;
            best_k    = k;
        }
    }
    if (best_k > 0) {
        constexpr int kNeighbours = 4;
        for (int k = std::max(1, best_k - kNeighbours); k <= std::min(b.n, best_k + kNeighbours); ++k) {
            s.try_scale(scale_k[k], 0.0f);
        }
        refine_scale(b, s, 4);
    }
    std::copy(s.best_levels(), s.best_levels() + b.n, L);
    return s.best_d_bits();
}

scale_offset fit_scale_offset(const float * x, const float * w, int n, int nmax, const scale_grid & grid,
                              float baseline_d, float baseline_m, uint8_t * L) {
    const block_view b(x, w, n, 0, nmax);
    float            xlo, xhi;
    finite_range(x, b.n, xlo, xhi);
    search s(b);
    levels zero{};
    s.try_scale(0.0f, offset_for(b, zero.data(), 0.0f));  // a constant block
    s.try_scale(baseline_d, baseline_m);
    if (xhi > xlo) {
        // the grid runs on (x - min) / (max - min), within [0, 1]
        std::array<float, kMaxBlock> xn;
        const double                 range = static_cast<double>(xhi) - xlo;
        float                        sw = 0.0f, sx = 0.0f;
        for (int j = 0; j < b.n; ++j) {
            xn[j] = static_cast<float>((static_cast<double>(b.x[j]) - xlo) / range);
            xn[j] = b.w[j] > 0.0f ? xn[j] : 0.0f;  // saturated non-finite values: weight 0
            sw += b.w[j];
            sx += b.w[j] * xn[j];
        }
        shortlist best;
        for (int i = 0; i < grid.steps; ++i) {
            const float iscale = static_cast<float>(nmax) * grid_point(grid, i);
            for (const float anchor : {0.0f, 0.5f, 1.0f}) {
                float       dn = 0.0f, mn = 0.0f;
                const float gain = affine_gain(xn.data(), b.w.data(), b.n, iscale, anchor, nmax, sw, sx, dn, mn);
                best.offer(gain, static_cast<float>(dn * range), static_cast<float>(mn * range + xlo));
            }
        }
        best.try_all(s);
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
