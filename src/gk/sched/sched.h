// sched.h - what the files of the scheduler share: the scheduler struct (its backends and
// memories), the assignment of a graph, and its splits. The steps, in the order
// gk_sched_alloc_graph runs them: assign (assign.cpp), smooth (smooth.cpp),
// follow_views (assign.cpp), make_splits (split.cpp), then one allocation (sched.cpp).
#pragma once

#include "gk/gk-sched.h"

#include <unordered_map>
#include <vector>

namespace gk::sched {

/// Where each tensor of one graph computes or lives.
struct assignment {
    std::unordered_map<const gk_tensor *, int> backend;       // node, leaf or source -> backend index
    std::vector<int>                           node_backend;  // by node index
    std::vector<char>                          pinned;        // by node index: rule 1 or 2 placed it
    std::vector<char>                          view;          // by node index: storage is another tensor's
};

/// A value a split reads from memory its backend cannot address: `copy` (in the split's
/// memory, the type and shape of the storage `root`) is filled from root before the split.
struct stage {
    gk_tensor * root;
    gk_tensor * copy;
};

/// While its split runs, node->src[index] reads `with` (a staging copy or a view of one).
struct redirect {
    gk_tensor * node;
    int         index;
    gk_tensor * with;
};

struct split {
    int                      backend;
    int                      first;
    int                      n;
    std::vector<stage>       stages;
    std::vector<gk_tensor *> views;  // views of staging copies, in creation order
    std::vector<redirect>    redirects;
};

} // namespace gk::sched

struct gk_sched {
    std::vector<gk_backend_t>             backends;        // priority order
    std::vector<gk_backend_buffer_type_t> mems;            // distinct default buffer types
    std::vector<int>                      mem_of_backend;  // backend index -> index in mems
    gk_gallocr_t                          galloc = nullptr;
    gk_context *                          ctx    = nullptr;  // staging tensors of the last graph

    std::unordered_map<const gk_tensor *, int> overrides;  // rule 0, until gk_sched_reset
    gk_sched_eval_callback                     eval_callback  = nullptr;
    void *                                     eval_user_data = nullptr;

    const gk_cgraph *             graph       = nullptr;  // the graph last assigned
    int                           graph_nodes = -1;
    bool                          placed      = false;  // graph is placed, not only assigned
    gk::sched::assignment         assigned;
    std::vector<gk::sched::split> splits;
};

namespace gk::sched {

/// The tensor that owns t's storage: t, or the tensor it views.
inline const gk_tensor * storage(const gk_tensor * t) { return t->view_src ? t->view_src : t; }

/// True when t's storage (t, or the tensor it views) was placed by someone other than
/// this scheduler: a weight, a cache, a tensor of an allocating context.
bool preplaced(const gk_sched & s, const gk_tensor * t);
/// The buffer type of a preplaced tensor's storage (the host's when it has data but no
/// buffer).
gk_backend_buffer_type_t preplaced_memory(const gk_tensor * t);
/// The first backend, in priority order, that can address memory m and supports node's
/// op; -1 when none.
int first_backend(const gk_sched & s, gk_backend_buffer_type_t m, const gk_tensor * node);
/// The memory t's storage is in under assignment a (preplaced, or its backend's).
gk_backend_buffer_type_t memory_of(const gk_sched & s, const assignment & a, const gk_tensor * t);

/// Rules 0-4 for every node of g in order, views with their storage, leafs and sources
/// without storage with their first reader. UNSUPPORTED (message naming the node and
/// op) when a node has no backend.
gk_status assign(const gk_sched & s, const gk_cgraph * g, assignment & a);
/// Move lone nodes (both neighbours doing work on one other backend) there, never a
/// pinned node or a view.
void smooth(const gk_sched & s, const gk_cgraph * g, assignment & a);
/// Put every view node with its storage again (after smooth moved storage); UNSUPPORTED
/// when no backend that can address the storage supports the view's op.
gk_status follow_views(const gk_sched & s, const gk_cgraph * g, assignment & a);
/// Cut g into splits and make the staging tensors (in s.ctx, created here).
gk_status make_splits(gk_sched & s, const gk_cgraph * g, const assignment & a, std::vector<split> & out);

} // namespace gk::sched
