// pipeline.cpp - see pipeline.h.
#include "pipeline.h"

#include <algorithm>

namespace gk::run {

bool pipeline_layers(int64_t n_layer, int rank, int n_ranks, layer_range & range, std::string * error) {
    if (n_ranks < 1 || rank < 0 || rank >= n_ranks) {
        if (error) *error = "rank " + std::to_string(rank) + " of " + std::to_string(n_ranks) + " is not a rank";
        return false;
    }
    if (n_ranks > n_layer) {
        if (error) {
            *error = "the model has " + std::to_string(n_layer) + " layers, fewer than the " + std::to_string(n_ranks) +
                     " MPI ranks it would be split over (start at most " + std::to_string(n_layer) + " ranks)";
        }
        return false;
    }
    const int64_t base  = n_layer / n_ranks;
    const int64_t extra = n_layer % n_ranks;
    range.first         = rank * base + std::min<int64_t>(rank, extra);
    range.end           = range.first + base + (rank < extra ? 1 : 0);
    return true;
}

} // namespace gk::run
