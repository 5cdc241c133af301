// sched.cpp - the public functions of gk-sched.h: argument checks, the one allocation
// of a graph with its staging tensors, and the split-by-split compute.
//
// The allocation hands the graph allocator one list of nodes: per split, its staging
// copies (each reads its storage, so the storage stays live until the copy is taken),
// the views of them, then the split's nodes, with every staged read redirected to its
// copy while the allocator measures. Each node's buffer id is its backend's memory, so
// the allocator keeps one buffer and one free list per memory in that single pass.
#include "sched.h"

#include "../backend/impl.h"
#include "../graph.h"
#include "../internal.h"

#include <algorithm>
#include <new>
#include <string>

using gk::backend_error;

namespace gk::sched {
namespace {

/// Points every staged read of the splits at its copy for as long as it lives.
class redirected {
public:
    explicit redirected(const std::vector<const std::vector<redirect> *> & lists) : lists_(lists) {
        for (const auto * l : lists_) {
            for (const redirect & r : *l) {
                saved_.push_back(r.node->src[r.index]);
                r.node->src[r.index] = r.with;
            }
        }
    }
    ~redirected() {
        size_t i = 0;
        for (const auto * l : lists_) {
            for (const redirect & r : *l) {
                r.node->src[r.index] = saved_[i++];
            }
        }
    }
    redirected(const redirected &)             = delete;
    redirected & operator=(const redirected &) = delete;

private:
    std::vector<const std::vector<redirect> *> lists_;
    std::vector<gk_tensor *>                   saved_;
};

/// What alloc_graph does after assigning and splitting g.
enum class then { place, measure, nothing };

/// Assign and split g, then place it, or only grow the buffers to hold it (measure), or
/// nothing more. The assignment is kept in every case (gk_sched_get_tensor_backend).
gk_status alloc_graph(gk_sched & s, gk_cgraph * g, then what) {
    s.graph  = nullptr;
    s.placed = false;
    s.splits.clear();
    assignment a;
    gk_status  st = assign(s, g, a);
    if (st != GK_STATUS_SUCCESS) {
        return st;
    }
    smooth(s, g, a);
    if ((st = follow_views(s, g, a)) != GK_STATUS_SUCCESS) {
        return st;
    }
    std::vector<split> splits;
    if ((st = make_splits(s, g, a, splits)) != GK_STATUS_SUCCESS) {
        return st;
    }
    const auto keep = [&] {
        s.assigned    = std::move(a);
        s.splits      = std::move(splits);
        s.graph       = g;
        s.graph_nodes = g->n_nodes;
        s.placed      = what == then::place;
        return GK_STATUS_SUCCESS;
    };
    if (what == then::nothing) {
        return keep();
    }
    const bool measure = what == then::measure;
    const auto               mem = [&s](int backend) { return s.mem_of_backend[static_cast<size_t>(backend)]; };
    std::vector<gk_tensor *> nodes;
    std::vector<int>         node_ids;
    std::vector<const std::vector<redirect> *> lists;
    for (const split & sp : splits) {
        for (const stage & t : sp.stages) {
            nodes.push_back(t.copy);
            node_ids.push_back(mem(sp.backend));
        }
        for (gk_tensor * v : sp.views) {
            nodes.push_back(v);
            node_ids.push_back(mem(sp.backend));
        }
        for (int i = sp.first; i < sp.first + sp.n; ++i) {
            nodes.push_back(g->nodes[i]);
            node_ids.push_back(mem(a.node_backend[static_cast<size_t>(i)]));
        }
        lists.push_back(&sp.redirects);
    }
    std::vector<int> leaf_ids(static_cast<size_t>(g->n_leafs), mem(static_cast<int>(s.backends.size()) - 1));
    for (int i = 0; i < g->n_leafs; ++i) {
        const auto it = a.backend.find(g->leafs[i]);
        if (it != a.backend.end()) {
            leaf_ids[static_cast<size_t>(i)] = mem(it->second);
        }
    }
    gk_cgraph ag{};  // what the allocator reads of a graph: the node and leaf lists
    ag.ctx     = g->ctx;
    ag.size    = static_cast<int>(nodes.size());
    ag.n_nodes = static_cast<int>(nodes.size());
    ag.nodes   = nodes.data();
    ag.n_leafs = g->n_leafs;
    ag.leafs   = g->leafs;
    {
        redirected r(lists);
        // With one memory every id is 0, which the allocator assumes without them.
        const bool one_memory = s.mems.size() == 1;
        if (((measure || !one_memory) && !gk_gallocr_reserve_n(s.galloc, &ag, node_ids.data(), leaf_ids.data())) ||
            (!measure && !gk_gallocr_alloc_graph(s.galloc, &ag))) {
            return GK_STATUS_ALLOC_FAILED;  // the allocator's message stands
        }
    }
    return keep();
}

/// alloc_graph behind a public entry point `fn`: the argument checks, out of memory as a
/// status.
gk_status checked_alloc(gk_sched_t sched, gk_cgraph * graph, then what, const char * fn) {
    if (!gk::graph_call_args_ok(sched, "scheduler", graph, fn)) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    try {
        return alloc_graph(*sched, graph, what);
    } catch (const std::bad_alloc &) {
        sched->graph = nullptr;
        backend_error("%s: out of memory", fn);
        return GK_STATUS_ALLOC_FAILED;
    }
}

/// Nodes [first, first + n) of split k on its backend, its staged reads redirected.
gk_status compute_nodes(const gk_sched & s, gk_cgraph * g, size_t k, int first, int n) {
    const split & sp     = s.splits[k];
    gk_cgraph     sub    = *g;
    sub.nodes            = g->nodes + first;
    sub.n_nodes          = n;
    sub.leafs            = nullptr;
    sub.n_leafs          = 0;
    gk_backend_t backend = s.backends[static_cast<size_t>(sp.backend)];
    gk_status    st;
    {
        redirected r({&sp.redirects});
        st = gk_backend_graph_compute(backend, &sub);
    }
    if (st != GK_STATUS_SUCCESS) {
        backend_error("sched: split %zu (%s, nodes %d..%d): %s", k, gk_backend_name(backend), first, first + n - 1,
                      gk_last_error(g->ctx));
    }
    return st;
}

/// Split k: its staging copies, then its nodes - in one compute, or, with an eval
/// callback, in runs that end at each node the callback asks to observe.
gk_status run_split(const gk_sched & s, gk_cgraph * g, size_t k) {
    const split & sp = s.splits[k];
    for (const stage & t : sp.stages) {
        if (gk_nbytes(t.root) > 0 && gk_backend_tensor_copy(t.root, t.copy) != GK_STATUS_SUCCESS) {
            backend_error("sched: split %zu: staging '%s': %s", k, t.root->name,
                          std::string(gk_backend_last_error()).c_str());
            return GK_STATUS_FAILED;
        }
    }
    if (!s.eval_callback) {
        return compute_nodes(s, g, k, sp.first, sp.n);
    }
    const int end = sp.first + sp.n;
    for (int j0 = sp.first; j0 < end;) {
        int  j1   = j0;
        bool need = s.eval_callback(g->nodes[j1], true, s.eval_user_data);
        while (!need && j1 + 1 < end) {
            need = s.eval_callback(g->nodes[++j1], true, s.eval_user_data);
        }
        const gk_status st = compute_nodes(s, g, k, j0, j1 - j0 + 1);
        if (st != GK_STATUS_SUCCESS) {
            return st;
        }
        if (need && !s.eval_callback(g->nodes[j1], false, s.eval_user_data)) {
            return GK_STATUS_ABORTED;
        }
        j0 = j1 + 1;
    }
    return GK_STATUS_SUCCESS;
}

} // namespace
} // namespace gk::sched

extern "C" {

gk_sched_t gk_sched_new(gk_backend_t * backends, int n_backends) {
    if (!backends || n_backends < 1) {
        backend_error("sched_new: need at least one backend (got %d)", backends ? n_backends : 0);
        return nullptr;
    }
    for (int i = 0; i < n_backends; ++i) {
        if (!backends[i] || !gk_backend_get_default_buffer_type(backends[i])) {
            backend_error("sched_new: backend %d is NULL or has no buffer type", i);
            return nullptr;
        }
        for (int j = 0; j < i; ++j) {
            if (backends[j] == backends[i]) {
                backend_error("sched_new: backend %d (%s) is listed twice", i, gk_backend_name(backends[i]));
                return nullptr;
            }
        }
    }
    gk_sched * s = new (std::nothrow) gk_sched;
    if (!s) {
        backend_error("sched_new: out of memory");
        return nullptr;
    }
    try {
        for (int i = 0; i < n_backends; ++i) {
            gk_backend_buffer_type_t m  = gk_backend_get_default_buffer_type(backends[i]);
            const auto               it = std::find(s->mems.begin(), s->mems.end(), m);
            s->mem_of_backend.push_back(static_cast<int>(it - s->mems.begin()));
            if (it == s->mems.end()) {
                s->mems.push_back(m);
            }
            s->backends.push_back(backends[i]);
        }
    } catch (const std::bad_alloc &) {
        delete s;
        backend_error("sched_new: out of memory");
        return nullptr;
    }
    s->galloc = gk_gallocr_new_n(s->mems.data(), static_cast<int>(s->mems.size()));
    if (!s->galloc) {
        delete s;
        return nullptr;
    }
    return s;
}

void gk_sched_free(gk_sched_t sched) {
    if (!sched) {
        return;
    }
    gk_gallocr_free(sched->galloc);
    gk_free(sched->ctx);
    delete sched;
}

gk_status gk_sched_alloc_graph(gk_sched_t sched, gk_cgraph * graph) {
    return gk::sched::checked_alloc(sched, graph, gk::sched::then::place, "sched_alloc_graph");
}

gk_status gk_sched_reserve(gk_sched_t sched, gk_cgraph * graph) {
    return gk::sched::checked_alloc(sched, graph, gk::sched::then::measure, "sched_reserve");
}

bool gk_sched_set_tensor_backend(gk_sched_t sched, const gk_tensor * node, gk_backend_t backend) {
    if (!sched || !node || !backend) {
        backend_error("sched_set_tensor_backend: %s is NULL", !sched ? "scheduler" : !node ? "node" : "backend");
        return false;
    }
    const auto it = std::find(sched->backends.begin(), sched->backends.end(), backend);
    if (it == sched->backends.end()) {
        backend_error("sched_set_tensor_backend: backend %s is not one of the scheduler's", gk_backend_name(backend));
        return false;
    }
    try {
        sched->overrides[node] = static_cast<int>(it - sched->backends.begin());
    } catch (const std::bad_alloc &) {
        backend_error("sched_set_tensor_backend: out of memory");
        return false;
    }
    return true;
}

gk_status gk_sched_split_graph(gk_sched_t sched, gk_cgraph * graph) {
    return gk::sched::checked_alloc(sched, graph, gk::sched::then::nothing, "sched_split_graph");
}

void gk_sched_reset(gk_sched_t sched) {
    if (sched) {
        sched->graph  = nullptr;
        sched->placed = false;
        sched->overrides.clear();
    }
}

void gk_sched_set_eval_callback(gk_sched_t sched, gk_sched_eval_callback callback, void * user_data) {
    if (sched) {
        sched->eval_callback  = callback;
        sched->eval_user_data = user_data;
    }
}

gk_status gk_sched_graph_compute(gk_sched_t sched, gk_cgraph * graph) {
    if (!gk::graph_call_args_ok(sched, "scheduler", graph, "sched_graph_compute")) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (sched->graph != graph || sched->graph_nodes != graph->n_nodes || !sched->placed) {
        const gk_status st = gk_sched_alloc_graph(sched, graph);
        if (st != GK_STATUS_SUCCESS) {
            return st;
        }
    }
    try {
        for (size_t k = 0; k < sched->splits.size(); ++k) {
            const gk_status st = gk::sched::run_split(*sched, graph, k);
            if (st != GK_STATUS_SUCCESS) {
                return st;
            }
        }
    } catch (const std::bad_alloc &) {
        backend_error("sched_graph_compute: out of memory");
        return GK_STATUS_ALLOC_FAILED;
    }
    return GK_STATUS_SUCCESS;
}

int gk_sched_get_n_backends(gk_sched_t sched) { return sched ? static_cast<int>(sched->backends.size()) : 0; }

gk_backend_t gk_sched_get_backend(gk_sched_t sched, int i) {
    if (!sched || i < 0 || static_cast<size_t>(i) >= sched->backends.size()) {
        return nullptr;
    }
    return sched->backends[static_cast<size_t>(i)];
}

gk_backend_t gk_sched_get_tensor_backend(gk_sched_t sched, const gk_tensor * tensor) {
    if (!sched || !sched->graph || !tensor) {
        return nullptr;
    }
    const auto it = sched->assigned.backend.find(tensor);
    return it != sched->assigned.backend.end() ? sched->backends[static_cast<size_t>(it->second)] : nullptr;
}

bool gk_sched_is_pinned(gk_sched_t sched, const gk_tensor * node) {
    if (!sched || !sched->graph || !node) {
        return false;
    }
    for (int i = 0; i < sched->graph->n_nodes; ++i) {
        if (sched->graph->nodes[i] == node) {
            return sched->assigned.pinned[static_cast<size_t>(i)] != 0;
        }
    }
    return false;
}

int gk_sched_get_n_splits(gk_sched_t sched) { return sched ? static_cast<int>(sched->splits.size()) : 0; }

bool gk_sched_get_split(gk_sched_t sched, int i, gk_sched_split * split) {
    if (!sched || !split || i < 0 || static_cast<size_t>(i) >= sched->splits.size()) {
        return false;
    }
    const gk::sched::split & sp = sched->splits[static_cast<size_t>(i)];
    *split                      = {sp.backend, sp.first, sp.n, static_cast<int>(sp.stages.size())};
    return true;
}

int gk_sched_get_n_copies(gk_sched_t sched) {
    if (!sched) {
        return 0;
    }
    int n = 0;
    for (const gk::sched::split & sp : sched->splits) {
        n += static_cast<int>(sp.stages.size());
    }
    return n;
}

size_t gk_sched_get_buffer_size(gk_sched_t sched, gk_backend_t backend) {
    if (!sched) {
        return 0;
    }
    const auto it = std::find(sched->backends.begin(), sched->backends.end(), backend);
    if (it == sched->backends.end()) {
        return 0;
    }
    return gk_gallocr_get_buffer_size(sched->galloc,
                                      sched->mem_of_backend[static_cast<size_t>(it - sched->backends.begin())]);
}

} // extern "C"
