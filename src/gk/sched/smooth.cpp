// smooth.cpp - the smoothing pass: a node alone on its backend between two nodes of one
// other backend costs two split boundaries to save one op, so it moves to its
// neighbours' backend when that one supports it.
//
// A pinned node never moves: moving a matmul away from the memory its weight lives in
// would stage the weight (the largest thing in the graph) instead. A view never moves on
// its own: it goes with its storage (follow_views, after this pass).
#include "sched.h"

#include "../graph.h"
#include "../internal.h"

namespace gk::sched {

void smooth(const gk_sched & s, const gk_cgraph * g, assignment & a) {
    std::vector<int> work;  // indices of the nodes that do work, in order
    work.reserve(static_cast<size_t>(g->n_nodes));
    for (int i = 0; i < g->n_nodes; ++i) {
        if (!is_layout_op(g->nodes[i]->op)) {
            work.push_back(i);
        }
    }
    for (size_t w = 1; w + 1 < work.size(); ++w) {
        const size_t k    = static_cast<size_t>(work[w]);
        const int    prev = a.node_backend[static_cast<size_t>(work[w - 1])];
        const int    next = a.node_backend[static_cast<size_t>(work[w + 1])];
        if (a.pinned[k] || a.view[k] || prev != next || prev == a.node_backend[k]) {
            continue;
        }
        gk_tensor * node = g->nodes[k];
        if (gk_backend_supports_op(s.backends[static_cast<size_t>(prev)], node)) {
            a.node_backend[k] = prev;
            a.backend[node]   = prev;
        }
    }
}

} // namespace gk::sched
