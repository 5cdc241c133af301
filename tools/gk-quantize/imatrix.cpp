// imatrix.cpp - reading a GGUF imatrix file (imatrix.h).
#include "imatrix.h"

#include "gk/gguf.h"

#include <cmath>
#include <memory>

namespace gk_quantize {
namespace {

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};

const std::string k_sums   = ".in_sum2";
const std::string k_counts = ".counts";

bool decode(const gk_gguf * ctx, int64_t i, std::vector<float> & out, std::string & err) {
    out.resize(static_cast<size_t>(gk_gguf_tensor_nelements(ctx, i)));
    gk_gguf_error e;
    if (gk_gguf_tensor_to_f32(ctx, i, 0, gk_gguf_tensor_nrows(ctx, i), out.data(), &e) != GK_GGUF_OK) {
        err = std::string(gk_gguf_tensor_name(ctx, i)) + ": " + e.message;
        return false;
    }
    return true;
}

} // namespace

bool imatrix::load(const std::string & path, std::string & err) {
    gk_gguf_error e;
    std::unique_ptr<gk_gguf, closer> ctx(gk_gguf_open(path.c_str(), &e));
    if (!ctx) {
        err = path + ": " + e.message + " (only GGUF imatrix files, llama-imatrix's default output, are read)";
        return false;
    }
    const gk_gguf * c = ctx.get();
    for (int64_t i = 0; i < gk_gguf_tensor_count(c); ++i) {
        const std::string sums_name = gk_gguf_tensor_name(c, i);
        if (sums_name.size() <= k_sums.size() ||
            sums_name.compare(sums_name.size() - k_sums.size(), k_sums.size(), k_sums) != 0) {
            continue;
        }
        const std::string name = sums_name.substr(0, sums_name.size() - k_sums.size());
        const int64_t j = gk_gguf_find_tensor(c, (name + k_counts).c_str());
        if (j < 0) {
            err = path + ": " + sums_name + " has no " + name + k_counts;
            return false;
        }
        importance imp;
        imp.ne0   = gk_gguf_tensor_ne(c, i)[0];
        imp.n_mat = gk_gguf_tensor_nrows(c, i);
        if (imp.ne0 == 0 || imp.n_mat == 0) {  // an empty tensor is legal GGUF, but weighs nothing
            err = path + ": " + sums_name + " holds no weights (" + std::to_string(imp.n_mat) + " x " +
                  std::to_string(imp.ne0) + ")";
            return false;
        }
        std::vector<float> counts;
        if (!decode(c, i, imp.w, err) || !decode(c, j, counts, err)) {
            err = path + ": " + err;
            return false;
        }
        if (static_cast<int64_t>(counts.size()) != imp.n_mat) {
            err = path + ": " + name + k_counts + " has " + std::to_string(counts.size()) + " values for " +
                  std::to_string(imp.n_mat) + " matrices";
            return false;
        }
        for (int64_t m = 0; m < imp.n_mat; ++m) {
            for (int64_t k = 0; k < imp.ne0; ++k) {
                float & x = imp.w[static_cast<size_t>(m * imp.ne0 + k)];
                x = counts[static_cast<size_t>(m)] > 0 ? x / counts[static_cast<size_t>(m)] : 1.0f;
                if (!std::isfinite(x) || x < 0) {
                    err = path + ": " + name + " has a weight that is negative, NaN or infinite";
                    return false;
                }
            }
        }
        entries_[name] = std::move(imp);
    }
    if (entries_.empty()) {
        err = path + ": no *.in_sum2 / *.counts tensors: not an imatrix file";
        return false;
    }
    return true;
}

const importance * imatrix::find(const std::string & name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
}

} // namespace gk_quantize
