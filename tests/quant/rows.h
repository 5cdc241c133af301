// rows.h - deterministic test rows for the encode-quality tests: a seeded PRNG
// (splitmix64, Box-Muller normals) and the row families that test-encode-quality
// and test-vs-ggml both measure, so that the reference figures recorded by one are
// the figures the other checks.
//
// A family is either synthetic (generated here, the same bits on every run) or a
// slice of the f32 weights of tests/data/models/stories260K.gguf.
#pragma once

#include "tiny_gguf.h"

#include <cmath>
#include <numbers>
#include <cstdint>
#include <string>
#include <vector>

namespace gk::test {

/// splitmix64: a 64-bit counter-based generator (Steele, Lea, Flood 2014).
class rng {
public:
    explicit rng(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

    /// Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Standard normal (Box-Muller; the second value of each pair is kept for the next call).
    double normal() {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        const double u1 = 1.0 - uniform();  // (0, 1]: log(u1) is finite
        const double u2 = uniform();
        const double r  = std::sqrt(-2.0 * std::log(u1));
        spare_     = r * std::sin(2.0 * std::numbers::pi * u2);
        has_spare_ = true;
        return r * std::cos(2.0 * std::numbers::pi * u2);
    }

private:
    uint64_t state_;
    double   spare_     = 0.0;
    bool     has_spare_ = false;
};

/// The row families. Synthetic ones first; the stories ones read the bundled model.
enum class family {
    gaussian,     // N(0, 1)
    uniform,      // U(-1, 1)
    outliers,     // N(0, 1) with 1 value in 64 scaled by 8..16
    heavy_tail,   // Student t with 3 degrees of freedom
    col_scale,    // N(0, 1) times a per-column scale exp(0.8 N(0, 1)) and a per-row scale
    stories_embd, // stories260K token_embd.weight, flattened
    stories_ffn,  // stories260K blk.0..4 ffn_gate/ffn_up/ffn_down weights, flattened
};

inline constexpr family k_families[] = {family::gaussian,  family::uniform,   family::outliers,
                                        family::heavy_tail, family::col_scale, family::stories_embd,
                                        family::stories_ffn};

inline const char * family_name(family f) {
    switch (f) {
        case family::gaussian: return "gaussian";
        case family::uniform: return "uniform";
        case family::outliers: return "outliers";
        case family::heavy_tail: return "heavy_tail";
        case family::col_scale: return "col_scale";
        case family::stories_embd: return "stories_embd";
        case family::stories_ffn: return "stories_ffn";
    }
    return "?";
}

inline std::string stories_path() { return std::string(GK_TEST_DATA) + "/models/stories260K.gguf"; }

/// `nrows` rows of `n_per_row` values of family `f` into `out`. Synthetic families
/// always succeed; the stories ones return false with `err` set when the model cannot
/// be read or holds fewer than nrows * n_per_row values.
inline bool make_rows(family f, int64_t nrows, int64_t n_per_row, std::vector<float> & out, std::string & err) {
    const size_t n = static_cast<size_t>(nrows * n_per_row);
    out.assign(n, 0.0f);
    if (f == family::stories_embd || f == family::stories_ffn) {
        std::vector<std::string> names;
        if (f == family::stories_embd) {
            names = {"token_embd.weight"};
        } else {
            for (int b = 0; b < 5; ++b) {
                for (const char * t : {"ffn_gate", "ffn_up", "ffn_down"}) {
                    names.push_back("blk." + std::to_string(b) + "." + t + ".weight");
                }
            }
        }
        std::vector<float> all;
        if (!read_f32_tensors(stories_path(), names, all, err)) {
            return false;
        }
        if (all.size() < n) {
            err = "stories260K holds " + std::to_string(all.size()) + " values of this family, fewer than " +
                  std::to_string(n);
            return false;
        }
        out.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
        return true;
    }
    rng r(0x5EED0000ull + static_cast<uint64_t>(f));
    std::vector<double> col(static_cast<size_t>(n_per_row), 1.0);
    if (f == family::col_scale) {
        for (double & c : col) {
            c = std::exp(0.8 * r.normal());
        }
    }
    for (int64_t i = 0; i < nrows; ++i) {
        const double row_scale = f == family::col_scale ? std::exp(0.5 * r.normal()) : 1.0;
        for (int64_t j = 0; j < n_per_row; ++j) {
            double v = 0.0;
            switch (f) {
                case family::uniform: v = 2.0 * r.uniform() - 1.0; break;
                case family::outliers:
                    v = r.normal();
                    if (r.next() % 64 == 0) {
                        v *= 8.0 + 8.0 * r.uniform();
                    }
                    break;
                case family::heavy_tail: {
                    const double z = r.normal();
                    double chi2 = 0.0;
                    for (int k = 0; k < 3; ++k) {
                        const double g = r.normal();
                        chi2 += g * g;
                    }
                    v = z / std::sqrt(chi2 / 3.0);
                    break;
                }
                default: v = r.normal() * col[static_cast<size_t>(j)] * row_scale; break;
            }
            out[static_cast<size_t>(i * n_per_row + j)] = static_cast<float>(v);
        }
    }
    return true;
}

/// A per-column importance matrix of `n_per_row` positive weights (log-normal,
/// spread like the mean squared activations a real imatrix holds).
inline std::vector<float> make_imatrix(int64_t n_per_row) {
    rng r(0x1A7B1C5ull);
    std::vector<float> w(static_cast<size_t>(n_per_row));
    for (float & x : w) {
        x = static_cast<float>(std::exp(1.2 * r.normal()));
    }
    return w;
}

/// Root mean squared error of `y` against `x` (rows of n_per_row), each column weighted
/// by `weights` when given (the error an imatrix-aware encoder minimises).
inline double weighted_rmse(const std::vector<float> & x, const std::vector<float> & y, int64_t n_per_row,
                            const float * weights) {
    double num = 0.0;
    double den = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double w = weights ? weights[i % static_cast<size_t>(n_per_row)] : 1.0;
        const double e = static_cast<double>(x[i]) - static_cast<double>(y[i]);
        num += w * e * e;
        den += w;
    }
    return den > 0.0 ? std::sqrt(num / den) : 0.0;
}

} // namespace gk::test
