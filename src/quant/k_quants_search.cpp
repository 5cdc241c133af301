// k_quants_search.cpp - the scale searches behind the K-quant encoders (see the header
// for the three stages).
#include "k_quants_search.h"

#include "fp16.h"
#include "k_quants.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gk::quant::kq {

int round_clamp(float v, int lo, int hi) {
    // NaN fails v > lo and becomes lo; then |v| < 2^22, where adding and removing
    // 1.5 * 2^23 rounds to an integer, ties to even.
    v = v > static_cast<float>(lo) ? v : static_cast<float>(lo);
    v = v < static_cast<float>(hi) ? v : static_cast<float>(hi);
    const float r = (v + 12582912.0f) - 12582912.0f;
    return static_cast<int>(r);
}

uint16_t scale_to_fp16(float v) {
    constexpr float f16_max = 65504.0f;
    if (v > f16_max) {
        v = f16_max;
    } else if (v < -f16_max) {
        v = -f16_max;
    }
    return fp32_to_fp16(v);
}

namespace {

// Below this a group counts as all zero (its scale would underflow every format).
constexpr float k_group_eps = 1e-15f;

// Candidate inverse scales of fit_affine, as offsets from nmax: -0.9, -0.8, ..., +0.9.
constexpr float k_affine_first = -0.9f;
constexpr float k_affine_step  = 0.1f;
constexpr int   k_affine_count = 19;
// Rounds of "nearest quants, then least squares" after the grid (more gain nothing measurable).
constexpr int   k_lloyd_iterations = 3;

// Least-squares fits of x ~= scale * q + offset (offset <= 0) for candidate quants of one
// group, keeping the best. For the least-squares scale and offset of given quants the
// weighted error is sum w x^2 - (scale * sum w x q + offset * sum w x), so candidates
// are compared by that gain, accumulated in double to keep the comparison exact enough.
class affine_search {
public:
    affine_search(const float * x, const float * w, int n) : x_(x), w_(w), n_(n) {
        for (int i = 0; i < n; ++i) {
            sum_w_ += w[i];
            sum_wx_ += static_cast<double>(w[i]) * x[i];
        }
    }

    /// Fits `q`; adopts it when its gain beats the best so far. True when adopted.
    bool consider(const int8_t * q) {
        double sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n_; ++i) {
            const double wl = static_cast<double>(w_[i]) * q[i];
            sum_l += wl;
            sum_l2 += wl * q[i];
            sum_xl += wl * x_[i];
        }
        const double det = sum_w_ * sum_l2 - sum_l * sum_l;
        if (!(det > 0)) {
            return false;
        }
        double scale = (sum_w_ * sum_xl - sum_wx_ * sum_l) / det;
        double offset = (sum_l2 * sum_wx_ - sum_l * sum_xl) / det;
        if (offset > 0) {
            offset = 0;
            scale = sum_xl / sum_l2;
        }
        const double gain = scale * sum_xl + offset * sum_wx_;
        if (found_ && !(gain > best_gain_)) {
            return false;
        }
        found_ = true;
        best_gain_ = gain;
        scale_ = static_cast<float>(scale);
        offset_ = static_cast<float>(offset);
        return true;
    }

    bool  found() const { return found_; }
    float scale() const { return scale_; }
    float offset() const { return offset_; }

private:
    const float * x_;
    const float * w_;
    int           n_;
    double        sum_w_ = 0, sum_wx_ = 0;
    bool          found_ = false;
    double        best_gain_ = 0;
    float         scale_ = 0, offset_ = 0;
};

} // namespace

affine_fit fit_affine(const float * x, const float * w, int n, int nmax, int8_t * q) {
    if (n <= 0) {
        return {0.0f, 0.0f};
    }
    float lo = x[0];
    float hi = x[0];
    for (int i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    lo = std::min(lo, 0.0f);
    if (!(hi > lo)) {  // all zero (or NaN)
        std::memset(q, 0, static_cast<size_t>(n));
        return {0.0f, -lo};
    }
    const float range = hi - lo;

    // Candidates: the min/max mapping, then the inverse scales of the grid.
    affine_search search(x, w, n);
    int8_t trial[32];
    const auto map = [&](float inv) {
        for (int i = 0; i < n; ++i) {
            trial[i] = static_cast<int8_t>(round_clamp(inv * (x[i] - lo), 0, nmax));
        }
        if (search.consider(trial)) {
            std::memcpy(q, trial, static_cast<size_t>(n));
        }
    };
    const float inv0 = static_cast<float>(nmax) / range;
    map(inv0);
    for (int s = 0; s < k_affine_count; ++s) {
        map((static_cast<float>(nmax) + k_affine_first + k_affine_step * static_cast<float>(s)) / range);
    }
    if (!search.found()) {  // every candidate singular (weights zero but for one element)
        map(inv0);
        return {1.0f / inv0, -lo};
    }
    // Alternate nearest quants for the fit and the fit for the quants while that helps.
    for (int it = 0; it < k_lloyd_iterations && search.scale() > 0; ++it) {
        const float inv = 1.0f / search.scale();
        const float offset = search.offset();
        for (int i = 0; i < n; ++i) {
            trial[i] = static_cast<int8_t>(round_clamp((x[i] - offset) * inv, 0, nmax));
        }
        if (!search.consider(trial)) {
            break;
        }
        std::memcpy(q, trial, static_cast<size_t>(n));
    }
    return {search.scale(), -search.offset()};
}

float fit_scale(const float * x, const float * w, int n, int q_lo, int q_hi, int8_t * q) {
    float amax = 0;
    float vmax = 0;
    for (int i = 0; i < n; ++i) {
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            vmax = x[i];
        }
    }
    if (!(amax >= k_group_eps)) {
        std::memset(q, 0, static_cast<size_t>(n));
        return 0.0f;
    }
    // Map the largest element onto the end of the range with more room, then try
    // neighbouring inverse scales; compare by the error left after the best scale
    // for those quants, sum w x^2 - (sum w x q)^2 / sum w q^2.
    const float anchor = static_cast<float>(-q_lo >= q_hi ? q_lo : q_hi);
    float best_xl = 0;
    float best_l2 = 0;
    float best_inv = anchor / vmax;
    for (int t = -9; t <= 9; ++t) {
        const float inv = (anchor + 0.1f * static_cast<float>(t)) / vmax;
        float sum_xl = 0;
        float sum_l2 = 0;
        for (int i = 0; i < n; ++i) {
            const float l = static_cast<float>(round_clamp(inv * x[i], q_lo, q_hi));
            sum_xl += w[i] * l * x[i];
            sum_l2 += w[i] * l * l;
        }
        if (sum_l2 > 0 && (best_l2 == 0 || sum_xl * sum_xl * best_l2 > best_xl * best_xl * sum_l2)) {
            best_xl = sum_xl;
            best_l2 = sum_l2;
            best_inv = inv;
        }
    }
    for (int i = 0; i < n; ++i) {
        q[i] = static_cast<int8_t>(round_clamp(best_inv * x[i], q_lo, q_hi));
    }
    if (!(best_l2 > 0)) {  // every weight zero: keep the plain mapping
        return 1.0f / best_inv;
    }
    // Move single quants to their best level for the scale of the others.
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float wi = w[i];
            const float li = static_cast<float>(q[i]);
            const float xl = best_xl - wi * x[i] * li;
            const float l2 = best_l2 - wi * li * li;
            if (!(l2 > 0) || xl == 0) {
                continue;
            }
            const int nl = round_clamp(x[i] * l2 / xl, q_lo, q_hi);
            if (nl == q[i]) {
                continue;
            }
            const float new_xl = xl + wi * x[i] * static_cast<float>(nl);
            const float new_l2 = l2 + wi * static_cast<float>(nl) * static_cast<float>(nl);
            if (new_l2 > 0 && new_xl * new_xl * best_l2 > best_xl * best_xl * new_l2) {
                q[i] = static_cast<int8_t>(nl);
                best_xl = new_xl;
                best_l2 = new_l2;
                ++changed;
            }
        }
        if (changed == 0) {
            break;
        }
    }
    return best_xl / best_l2;
}

namespace {

// Requantise n elements for one integer scale and min; writes q and returns the
// weighted squared error of the values as the decoder computes them.
float requantise(const kformat & f, const float * x, const float * w, int n, float d, float dmin, int sc, int m,
                 int8_t * q) {
    const float dl = d * static_cast<float>(sc);
    const float ml = dmin * static_cast<float>(m);
    const float inv = dl != 0 ? 1.0f / dl : 0.0f;  // dl = 0: every level decodes alike, take 0
    float err = 0;
    for (int i = 0; i < n; ++i) {
        const int l = round_clamp((x[i] + ml) * inv, f.q_lo, f.q_hi);
        q[i] = static_cast<int8_t>(l);
        const float p = dl * static_cast<float>(l);  // two statements: never fused
        const float y = p - ml;
        const float diff = x[i] - y;
        err += w[i] * diff * diff;
    }
    return err;
}

float requantise_all(const kformat & f, const float * x, const float * w, float d, float dmin, const kblock & b,
                     int8_t * q, float * err) {
    float total = 0;
    for (int j = 0; j < QK_K / f.sub_len; ++j) {
        const int o = j * f.sub_len;
        err[j] = requantise(f, x + o, w + o, f.sub_len, d, dmin, b.sc[j], b.m[j], q + o);
        total += err[j];
    }
    return total;
}

// Least-squares d and dmin for the current integers: minimise
// sum w (x - d*a + dmin*c)^2 with a = sc[j]*q[e], c = m[j]. False when singular.
bool lsq_super(const kformat & f, const float * x, const float * w, const kblock & b, double & d, double & dmin) {
    double saa = 0, scc = 0, sac = 0, sax = 0, scx = 0;
    for (int e = 0; e < QK_K; ++e) {
        const int j = e / f.sub_len;
        const double a = static_cast<double>(b.sc[j]) * b.q[e];
        const double c = b.m[j];
        saa += w[e] * a * a;
        scc += w[e] * c * c;
        sac += w[e] * a * c;
        sax += w[e] * a * x[e];
        scx += w[e] * c * x[e];
    }
    if (f.m_hi == 0) {
        if (!(saa > 0)) {
            return false;
        }
        d = sax / saa;
        dmin = 0;
        return true;
    }
    const double det = saa * scc - sac * sac;
    if (!(det > 1e-12 * saa * scc)) {
        return false;
    }
    d = (sax * scc - sac * scx) / det;
    dmin = (sac * sax - saa * scx) / det;
    return true;
}

// Passes of refine_superblock (it rarely still improves after the third).
constexpr int k_refine_passes = 4;

} // namespace

void refine_superblock(const kformat & f, const float * x, const float * w, kblock & b) {
    const int nsub = QK_K / f.sub_len;
    float err[16];
    float total = requantise_all(f, x, w, b.d, b.dmin, b, b.q, err);

    struct move {
        int dsc, dm;
    };
    // One step of the scale alone (all a symmetric format has), of the min alone, of both.
    constexpr move moves[] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}, {-1, -1}, {1, 1}, {-1, 1}, {1, -1}};
    const int n_moves = f.m_hi > 0 ? 8 : 2;
    // Rescalings of scale and min together, which reach the basins that single steps
    // cannot leave (a sub-block that gains by clipping its low-weight extremes).
    constexpr float k_rescales[] = {0.96f, 0.92f, 0.88f, 0.84f, 1.04f, 1.08f, 1.12f, 1.16f};
    constexpr int n_rescales = 8;

    int8_t trial[QK_K];
    float trial_err[16];
    for (int pass = 0; pass < k_refine_passes; ++pass) {
        bool changed = false;
        for (int j = 0; j < nsub; ++j) {
            const int o = j * f.sub_len;
            const int first = pass == 0 ? 0 : n_rescales;  // rescalings in the first pass only
            for (int k = first; k < n_rescales + n_moves; ++k) {
                int sc = 0;
                int m = 0;
                if (k < n_rescales) {
                    sc = round_clamp(static_cast<float>(b.sc[j]) * k_rescales[k], f.sc_lo, f.sc_hi);
                    m = round_clamp(static_cast<float>(b.m[j]) * k_rescales[k], 0, f.m_hi);
                    if (sc == b.sc[j] && m == b.m[j]) {
                        continue;
                    }
                } else {
                    sc = b.sc[j] + moves[k - n_rescales].dsc;
                    m = b.m[j] + moves[k - n_rescales].dm;
                }
                if (sc < f.sc_lo || sc > f.sc_hi || m < 0 || m > f.m_hi) {
                    continue;
                }
                const float e = requantise(f, x + o, w + o, f.sub_len, b.d, b.dmin, sc, m, trial);
                if (e < err[j]) {
                    total += e - err[j];
                    err[j] = e;
                    b.sc[j] = static_cast<int8_t>(sc);
                    b.m[j] = static_cast<int8_t>(m);
                    std::memcpy(b.q + o, trial, static_cast<size_t>(f.sub_len));
                    changed = true;
                }
            }
        }
        double d = 0, dmin = 0;
        if (lsq_super(f, x, w, b, d, dmin)) {
            const float nd = fp16_to_fp32(scale_to_fp16(static_cast<float>(d)));
            const float ndmin = fp16_to_fp32(scale_to_fp16(static_cast<float>(dmin)));
            if (nd != b.d || ndmin != b.dmin) {
                const float t = requantise_all(f, x, w, nd, ndmin, b, trial, trial_err);
                if (t < total) {
                    total = t;
                    b.d = nd;
                    b.dmin = ndmin;
                    std::memcpy(b.q, trial, sizeof(trial));
                    std::memcpy(err, trial_err, sizeof(err));
                    changed = true;
                }
            }
        }
        if (!changed) {
            break;
        }
    }
}

namespace {

// The f16 rounding of v and, when that is subnormal (a step there is a large relative
// change), its neighbours one step either way in magnitude, never crossing zero.
// Returns how many values were written to out (1 or up to 3).
int f16_candidates(float v, float * out) {
    const uint16_t h = scale_to_fp16(v);
    const int sign = h & 0x8000;
    const int mag = h & 0x7FFF;
    if (mag >= 0x0400) {  // normal: refine_superblock's least-squares refit takes it from here
        out[0] = fp16_to_fp32(h);
        return 1;
    }
    int n = 0;
    for (int m = std::max(mag - 1, 0); m <= mag + 1; ++m) {
        out[n++] = fp16_to_fp32(static_cast<uint16_t>(sign | m));
    }
    return n;
}

// Stage 2's last step: round every sub-block scale and min to its nearest level against
// the f16 factors (and, for subnormal factors, their neighbours), keeping the pair whose
// decoded block has the least weighted error.
void choose_super_factors(const kformat & f, const float * x, const float * w, const float * scales,
                          const float * mins, float d, float dmin, kblock & b) {
    const int nsub = QK_K / f.sub_len;
    float ds[3], dmins[3] = {0.0f};
    const int nd = f16_candidates(d, ds);
    const int ndmin = f.m_hi > 0 ? f16_candidates(dmin, dmins) : 1;
    kblock trial;
    float err[16];
    float best = 0;
    bool found = false;
    for (int a = 0; a < nd; ++a) {
        for (int c = 0; c < ndmin; ++c) {
            trial.d = ds[a];
            trial.dmin = dmins[c];
            for (int j = 0; j < nsub; ++j) {
                trial.sc[j] = static_cast<int8_t>(trial.d != 0 ? round_clamp(scales[j] / trial.d, f.sc_lo, f.sc_hi) : 0);
                trial.m[j] = static_cast<int8_t>(trial.dmin != 0 ? round_clamp(mins[j] / trial.dmin, 0, f.m_hi) : 0);
            }
            const float e = requantise_all(f, x, w, trial.d, trial.dmin, trial, trial.q, err);
            if (!found || e < best) {
                found = true;
                best = e;
                b = trial;
            }
        }
    }
}

} // namespace

void encode_superblock(const kformat & f, const float * x, const float * w, kblock & b) {
    const int nsub = QK_K / f.sub_len;
    float scales[16];
    float mins[16];
    float sw[16];
    for (int j = 0; j < nsub; ++j) {
        const int o = j * f.sub_len;
        if (f.m_hi > 0) {
            const affine_fit a = fit_affine(x + o, w + o, f.sub_len, f.q_hi, b.q + o);
            scales[j] = a.scale;
            mins[j] = a.min;
        } else {
            scales[j] = fit_scale(x + o, w + o, f.sub_len, f.q_lo, f.q_hi, b.q + o);
            mins[j] = 0;
        }
        float s = 0;
        for (int i = 0; i < f.sub_len; ++i) {
            s += w[o + i];
        }
        sw[j] = s;
    }
    int8_t levels[16];
    const float d = fit_scale(scales, sw, nsub, f.sc_lo, f.sc_hi, levels);
    const float dmin = f.m_hi > 0 ? fit_scale(mins, sw, nsub, 0, f.m_hi, levels) : 0.0f;
    choose_super_factors(f, x, w, scales, mins, d, dmin, b);
    refine_superblock(f, x, w, b);
}

} // namespace gk::quant::kq
