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
    if (!(v > static_cast<float>(lo))) {
        return lo;
    }
    if (!(v < static_cast<float>(hi))) {
        return hi;
    }
    // |v| < 2^22 here: adding and removing 1.5 * 2^23 rounds to an integer, ties to even.
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

float group_error(const float * x, const float * w, const int8_t * q, int n, float scale, float offset,
                  bool abs_error) {
    float err = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = scale * static_cast<float>(q[i]) + offset - x[i];
        err += w[i] * (abs_error ? std::fabs(diff) : diff * diff);
    }
    return err;
}

} // namespace

affine_fit fit_affine(const float * x, const float * w, int n, int nmax, scale_grid grid, bool abs_error,
                      int8_t * q) {
    float lo = x[0];
    float hi = x[0];
    float sum_w = 0;
    float sum_wx = 0;
    for (int i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
        sum_w += w[i];
        sum_wx += w[i] * x[i];
    }
    lo = std::min(lo, 0.0f);
    if (!(hi > lo)) {  // all zero (or NaN)
        std::memset(q, 0, static_cast<size_t>(n));
        return {0.0f, -lo};
    }
    const float range = hi - lo;

    // The plain min/max mapping is the first candidate.
    const float inv0 = static_cast<float>(nmax) / range;
    for (int i = 0; i < n; ++i) {
        q[i] = static_cast<int8_t>(round_clamp(inv0 * (x[i] - lo), 0, nmax));
    }
    float best_scale = 1.0f / inv0;
    float best_offset = lo;
    float best_err = group_error(x, w, q, n, best_scale, best_offset, abs_error);

    int8_t trial[32];
    for (int s = 0; s < grid.count; ++s) {
        const float inv = (static_cast<float>(nmax) + grid.first + grid.step * static_cast<float>(s)) / range;
        float sum_l = 0;
        float sum_l2 = 0;
        float sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = round_clamp(inv * (x[i] - lo), 0, nmax);
            trial[i] = static_cast<int8_t>(l);
            const float wl = w[i] * static_cast<float>(l);
            sum_l += wl;
            sum_l2 += wl * static_cast<float>(l);
            sum_xl += wl * x[i];
        }
        // weighted least squares for x ~= scale * l + offset, offset <= 0
        const float det = sum_w * sum_l2 - sum_l * sum_l;
        if (!(det > 0)) {
            continue;
        }
        float scale = (sum_w * sum_xl - sum_wx * sum_l) / det;
        float offset = (sum_l2 * sum_wx - sum_l * sum_xl) / det;
        if (offset > 0) {
            offset = 0;
            scale = sum_xl / sum_l2;
        }
        const float err = group_error(x, w, trial, n, scale, offset, abs_error);
        if (err < best_err) {
            best_err = err;
            best_scale = scale;
            best_offset = offset;
            std::memcpy(q, trial, static_cast<size_t>(n));
        }
    }
    return {best_scale, -best_offset};
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
    const float toward = anchor < 0 ? -1.0f : 1.0f;
    float best_xl = 0;
    float best_l2 = 0;
    int8_t trial[32];
    for (int step = 0; step <= 18; ++step) {
        const int t = step == 0 ? 0 : (step <= 9 ? -step : step - 9);  // 0, -1..-9, 1..9
        const float inv = (anchor + toward * 0.1f * static_cast<float>(t)) / vmax;
        float sum_xl = 0;
        float sum_l2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = round_clamp(inv * x[i], q_lo, q_hi);
            trial[i] = static_cast<int8_t>(l);
            const float wl = w[i] * static_cast<float>(l);
            sum_xl += wl * x[i];
            sum_l2 += wl * static_cast<float>(l);
        }
        const bool better = sum_l2 > 0 && (best_l2 == 0 || sum_xl * sum_xl * best_l2 > best_xl * best_xl * sum_l2);
        if (step == 0 || better) {
            std::memcpy(q, trial, static_cast<size_t>(n));
            if (sum_l2 > 0) {
                best_xl = sum_xl;
                best_l2 = sum_l2;
            }
        }
    }
    if (!(best_l2 > 0)) {  // every weight zero: keep the plain mapping
        return vmax / anchor;
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
    float err = 0;
    for (int i = 0; i < n; ++i) {
        const int l = dl != 0 ? round_clamp((x[i] + ml) / dl, f.q_lo, f.q_hi) : 0;
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

} // namespace

void refine_superblock(const kformat & f, const float * x, const float * w, kblock & b) {
    const int nsub = QK_K / f.sub_len;
    float err[16];
    float total = requantise_all(f, x, w, b.d, b.dmin, b, b.q, err);

    struct move {
        int dsc, dm;
    };
    constexpr move moves[] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    const int n_moves = f.m_hi > 0 ? 4 : 2;

    int8_t trial[QK_K];
    float trial_err[16];
    for (int pass = 0; pass < 4; ++pass) {
        bool changed = false;
        for (int j = 0; j < nsub; ++j) {
            const int o = j * f.sub_len;
            for (int k = 0; k < n_moves; ++k) {
                const int sc = b.sc[j] + moves[k].dsc;
                const int m = b.m[j] + moves[k].dm;
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

void encode_superblock(const kformat & f, const float * x, const float * w_search, const float * w_error,
                       scale_grid grid, bool abs_error, kblock & b) {
    const int nsub = QK_K / f.sub_len;
    float scales[16];
    float mins[16];
    float sw[16];
    for (int j = 0; j < nsub; ++j) {
        const int o = j * f.sub_len;
        if (f.m_hi > 0) {
            const affine_fit a = fit_affine(x + o, w_search + o, f.sub_len, f.q_hi, grid, abs_error, b.q + o);
            scales[j] = a.scale;
            mins[j] = a.min;
        } else {
            scales[j] = fit_scale(x + o, w_search + o, f.sub_len, f.q_lo, f.q_hi, b.q + o);
            mins[j] = 0;
        }
        float s = 0;
        for (int i = 0; i < f.sub_len; ++i) {
            s += w_search[o + i];
        }
        sw[j] = s;
    }
    const float d = fit_scale(scales, sw, nsub, f.sc_lo, f.sc_hi, b.sc);
    b.d = fp16_to_fp32(scale_to_fp16(d));
    if (f.m_hi > 0) {
        const float dmin = fit_scale(mins, sw, nsub, 0, f.m_hi, b.m);
        b.dmin = fp16_to_fp32(scale_to_fp16(dmin));
    } else {
        b.dmin = 0;
        std::memset(b.m, 0, sizeof(b.m));
    }
    refine_superblock(f, x, w_error, b);
}

} // namespace gk::quant::kq
