// encode_quality.h - the encode-quality measurement shared by test-encode-quality
// (ours against recorded reference figures) and test-vs-ggml (ours against the live
// reference, and the mode that records those figures).
//
// A case is one row family with or without an importance matrix; its figure is the
// (imatrix-weighted) RMSE of decode(encode(rows)) against the rows.
#pragma once

#include "gk/gk-type.h"
#include "rows.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gk::test {

/// Row length of every quality case: a multiple of every block size (32..256).
inline constexpr int64_t k_quality_n_per_row = 256;
/// Rows per family in the default test and in the recorded reference figures.
inline constexpr int64_t k_quality_rows = 32;
/// Ours may be at most this much worse than the reference (RMSE ratio).
inline constexpr double k_quality_max_ratio = 1.02;

struct quality_case {
    family fam;
    bool   imatrix;

    std::string key() const { return std::string(family_name(fam)) + (imatrix ? "+imatrix" : ""); }
};

inline std::vector<quality_case> quality_cases() {
    std::vector<quality_case> cases;
    for (family f : k_families) {
        cases.push_back({f, false});
        cases.push_back({f, true});
    }
    return cases;
}

/// Encodes `nrows` rows of `n_per_row` from `src` to `dst`; false when it has no encoder
/// for the type (or refuses this input, e.g. a reference that requires an imatrix).
using encode_fn = std::function<bool(int type, const float * src, void * dst, int64_t nrows, int64_t n_per_row,
                                     const float * imatrix)>;
/// Decodes rows; false when it has no decoder for the type.
using decode_fn = std::function<bool(int type, const void * src, float * dst, int64_t nrows, int64_t n_per_row)>;

/// The rows of a family, generated (or read) once per (family, nrows).
inline const std::vector<float> & quality_rows(family f, int64_t nrows, std::string & err) {
    static std::map<std::pair<int, int64_t>, std::vector<float>> cache;
    const auto key = std::make_pair(static_cast<int>(f), nrows);
    auto       it  = cache.find(key);
    if (it == cache.end()) {
        std::vector<float> rows;
        if (!make_rows(f, nrows, k_quality_n_per_row, rows, err)) {
            static const std::vector<float> none;
            return none;
        }
        it = cache.emplace(key, std::move(rows)).first;
    }
    return it->second;
}

enum class quality_status { ok, no_codec, no_data };

/// The RMSE of one case for `type` (row size `row_size` bytes), encoded with `enc` and
/// decoded with `dec`, into `rmse`. `err` explains no_data.
inline quality_status measure_quality(int type, size_t row_size, const quality_case & c, int64_t nrows,
                                      const encode_fn & enc, const decode_fn & dec, double & rmse, std::string & err) {
    const std::vector<float> & x = quality_rows(c.fam, nrows, err);
    if (x.empty()) {
        return quality_status::no_data;
    }
    static const std::vector<float> imatrix = make_imatrix(k_quality_n_per_row);
    const float *                   w       = c.imatrix ? imatrix.data() : nullptr;
    std::vector<uint8_t>            q(row_size * static_cast<size_t>(nrows));
    std::vector<float>              y(x.size());
    if (!enc(type, x.data(), q.data(), nrows, k_quality_n_per_row, w) ||
        !dec(type, q.data(), y.data(), nrows, k_quality_n_per_row)) {
        return quality_status::no_codec;
    }
    rmse = weighted_rmse(x, y, k_quality_n_per_row, w);
    return quality_status::ok;
}

/// The types whose encoders are measured: every block format, and f16/bf16.
inline bool quality_measures(gk_type type) {
    return gk_is_quantized(type) || type == GK_TYPE_F16 || type == GK_TYPE_BF16;
}

} // namespace gk::test
