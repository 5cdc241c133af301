// imatrix.h - importance weights for gk-quantize from a GGUF imatrix file, as
// llama-imatrix writes it: for each weight NAME a tensor "NAME.in_sum2" of shape
// [ne0, n_mat] (sums of squared activations per column, per matrix) and "NAME.counts"
// of shape [1, n_mat] (how many activations were summed). The weights of matrix m
// are in_sum2[:, m] / counts[m], or ones where the count is 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gk_quantize {

struct importance {
    int64_t            ne0   = 0;  // columns
    int64_t            n_mat = 0;  // matrices (experts), each ne0 weights
    std::vector<float> w;          // n_mat * ne0
};

class imatrix {
public:
    /// Read `path`; false and `err` set when it is not a GGUF imatrix.
    bool load(const std::string & path, std::string & err);

    /// The weights of tensor `name`, or nullptr when the file has none.
    const importance * find(const std::string & name) const;

    size_t size() const { return entries_.size(); }

private:
    std::map<std::string, importance> entries_;
};

} // namespace gk_quantize
