// pipeline.h - a model's layers split over the ranks of an MPI job (pipeline parallel,
// docs/mpi.md): rank r computes layers [first, end) of every forward graph, rank 0 from
// the token embeddings, the others from the hidden state the rank before sends, and the
// last rank the logits, which it broadcasts so that every rank samples the same token.
#pragma once

#include <cstdint>
#include <string>

namespace gk::run {

/** Layers [first, end) of a model (end past n_layer: up to the last). */
struct layer_range {
    int64_t first = 0;
    int64_t end   = INT64_MAX;
};

/** Rank `rank`'s layers of `n_layer` split over `n_ranks` ranks: contiguous and in rank
 *  order, their counts differing by at most one (the first n_layer % n_ranks ranks have
 *  the larger). false and a message when n_ranks < 1, rank is not in [0, n_ranks), or
 *  there are more ranks than layers (a rank would have none). */
bool pipeline_layers(int64_t n_layer, int rank, int n_ranks, layer_range & range, std::string * error);

} // namespace gk::run
