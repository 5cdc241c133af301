// graph.h - the compute graph struct (shared by the graph walk and the compute pass).
#pragma once

#include "gk/gk.h"

#include <cstddef>

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
};
