// graph.h - the compute graph struct (shared by the graph walk and the compute pass).
#pragma once

#include "gk/gk.h"

#include <cstddef>
#include <cstdint>

namespace gk {

/// One entry of the walk's explicit stack: a tensor and the next source to visit.
struct graph_frame {
    gk_tensor * t;
    int         next_src;
};

} // namespace gk

struct gk_cgraph {
    gk_context *       ctx;
    int                size;       // capacity of nodes and of leafs
    int                n_nodes;
    int                n_leafs;
    gk_tensor **       nodes;      // in topological order
    gk_tensor **       leafs;
    size_t             hash_size;  // power of two
    const gk_tensor ** hash;       // visited set, open addressing, nullptr = empty
    gk::graph_frame *  stack;      // 2*size frames for the walk
    gk_tensor **       grads;      // per hash slot: the gradient of the key (NULL without grads)
    gk_tensor **       grad_accs;  // per hash slot: the key's gradient accumulator (NULL without grads)
};

namespace gk {

/// The hash slot of t in g's visited set, or SIZE_MAX when t is not in the graph.
size_t graph_slot(const gk_cgraph * g, const gk_tensor * t);

/// Cut g back to its first n_nodes nodes and n_leafs leafs; the gradients of the tensors
/// that stay are kept, the others dropped.
void graph_truncate(gk_cgraph * g, int n_nodes, int n_leafs);

} // namespace gk
