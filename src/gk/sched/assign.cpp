// assign.cpp - which backend computes each node (the rules of gk-sched.h), and where the
// leafs and views live.
#include "sched.h"

#include "../alloc/gallocr.h"
#include "../backend/impl.h"
#include "../graph.h"
#include "../internal.h"

#include <string>

namespace gk::sched {
namespace {

/// "a, b, c": the backends' names, for messages.
std::string backend_names(const gk_sched & s) {
    std::string names;
    for (gk_backend_t b : s.backends) {
        names += names.empty() ? "" : ", ";
        names += gk_backend_name(b);
    }
    return names;
}

/// The backend of view node `i`: its storage's, when that one supports the view's op,
/// else the first that can address the storage's memory and does; -1 with a message
/// when none.
int view_backend(const gk_sched & s, const assignment & a, const gk_tensor * node, int i) {
    const auto it = a.backend.find(node->view_src);
    if (it != a.backend.end() && gk_backend_supports_op(s.backends[static_cast<size_t>(it->second)], node)) {
        return it->second;
    }
    const int b = first_backend(s, memory_of(s, a, node->view_src), node);
    if (b < 0) {
        backend_error(
            "sched: node %d '%s' views '%s', and no backend that can address it supports op %s "
            "(backends: %s)",
            i, node->name, node->view_src->name, gk_op_name(node->op), backend_names(s).c_str());
    }
    return b;
}

/// The backend set for t with gk_sched_set_tensor_backend, else `otherwise`.
int set_backend(const gk_sched & s, const gk_tensor * t, int otherwise) {
    const auto it = s.overrides.find(t);
    return it != s.overrides.end() ? it->second : otherwise;
}

/// The backend of node `i` by rules 0-4; sets pinned. -1 with a message when none.
int by_rules(const gk_sched & s, const assignment & a, const gk_tensor * node, int i, char & pinned) {
    const auto set = s.overrides.find(node);
    if (set != s.overrides.end()) {  // 0. the backend set for the node
        gk_backend_t b = s.backends[static_cast<size_t>(set->second)];
        if (!gk_backend_supports_op(b, node)) {
            backend_error("sched: node %d '%s' was set to backend %s, which does not support op %s", i, node->name,
                          gk_backend_name(b), gk_op_name(node->op));
            return -1;
        }
        pinned = 1;
        return set->second;
    }
    if (preplaced(s, node)) {  // 1. the memory the node already lives in
        const gk_backend_buffer_type_t m = preplaced_memory(storage(node));
        const int                      b = first_backend(s, m, node);
        if (b < 0) {
            backend_error(
                "sched: node %d '%s' lives in %s memory, and no backend that can address it supports "
                "op %s (backends: %s)",
                i, node->name, gk_backend_buft_name(m), gk_op_name(node->op), backend_names(s).c_str());
        }
        pinned = b >= 0;
        return b;
    }
    if (node->view_src && a.backend.count(node->view_src)) {  // a view goes with its storage
        return view_backend(s, a, node, i);
    }
    for (const gk_tensor * src : node->src) {  // 2. the memory a source lives in
        if (src && preplaced(s, src)) {
            const int b = first_backend(s, preplaced_memory(storage(src)), node);
            if (b >= 0) {
                pinned = 1;
                return b;
            }
        }
    }
    for (const gk_tensor * src : node->src) {  // 3. the first source with a backend
        const auto it = src ? a.backend.find(src) : a.backend.end();
        if (it != a.backend.end() && gk_backend_supports_op(s.backends[static_cast<size_t>(it->second)], node)) {
            return it->second;
        }
    }
    for (size_t b = 0; b < s.backends.size(); ++b) {  // 4. any backend that supports the op
        if (gk_backend_supports_op(s.backends[b], node)) {
            return static_cast<int>(b);
        }
    }
    backend_error("sched: node %d '%s': no backend supports op %s (backends: %s)", i, node->name, gk_op_name(node->op),
                  backend_names(s).c_str());
    return -1;
}

} // namespace

bool preplaced(const gk_sched & s, const gk_tensor * t) {
    const gk_tensor * r = storage(t);
    return r->data && !(r->buffer && alloc::owns_buffer(s.galloc, r->buffer));
}

gk_backend_buffer_type_t preplaced_memory(const gk_tensor * t) {
    const gk_tensor * r = storage(t);
    return r->buffer ? gk_backend_buffer_get_type(r->buffer) : gk_backend_cpu_buffer_type();
}

int first_backend(const gk_sched & s, gk_backend_buffer_type_t m, const gk_tensor * node) {
    for (size_t b = 0; b < s.backends.size(); ++b) {
        if (gk_backend_supports_buft(s.backends[b], m) && gk_backend_supports_op(s.backends[b], node)) {
            return static_cast<int>(b);
        }
    }
    return -1;
}

gk_backend_buffer_type_t memory_of(const gk_sched & s, const assignment & a, const gk_tensor * t) {
    if (preplaced(s, t)) {
        return preplaced_memory(t);
    }
    const auto it = a.backend.find(storage(t));
    const int  b  = it != a.backend.end() ? it->second : static_cast<int>(s.backends.size()) - 1;
    return s.mems[static_cast<size_t>(s.mem_of_backend[static_cast<size_t>(b)])];
}

gk_status assign(const gk_sched & s, const gk_cgraph * g, assignment & a) {
    const size_t n = static_cast<size_t>(g->n_nodes);
    a.backend.clear();
    a.backend.reserve(2 * (n + static_cast<size_t>(g->n_leafs)));
    a.node_backend.assign(n, -1);
    a.pinned.assign(n, 0);
    a.view.assign(n, 0);
    for (int i = 0; i < g->n_nodes; ++i) {
        const gk_tensor * node = g->nodes[i];
        const size_t      k    = static_cast<size_t>(i);
        a.view[k]              = node->view_src != nullptr && !preplaced(s, node);
        const int b            = by_rules(s, a, node, i, a.pinned[k]);
        if (b < 0) {
            return GK_STATUS_UNSUPPORTED;
        }
        a.node_backend[k] = b;
        a.backend[node]   = b;
        // Storage nobody placed yet (a leaf, an input, a view's owner) lives where it was
        // set to (rule 0), else where it is first needed.
        for (const gk_tensor * src : node->src) {
            if (src && !preplaced(s, src)) {
                a.backend.try_emplace(storage(src), set_backend(s, storage(src), b));
            }
        }
        if (node->view_src && !preplaced(s, node)) {
            a.backend.try_emplace(node->view_src, b);
        }
    }
    const int fallback = static_cast<int>(s.backends.size()) - 1;
    for (int i = 0; i < g->n_leafs; ++i) {  // a leaf no node reads
        if (!preplaced(s, g->leafs[i])) {
            a.backend.try_emplace(g->leafs[i], set_backend(s, g->leafs[i], fallback));
        }
    }
    return GK_STATUS_SUCCESS;
}

gk_status follow_views(const gk_sched & s, const gk_cgraph * g, assignment & a) {
    for (int i = 0; i < g->n_nodes; ++i) {
        const size_t k = static_cast<size_t>(i);
        if (!a.view[k]) {
            continue;
        }
        const gk_tensor * node = g->nodes[i];
        const int         b    = view_backend(s, a, node, i);
        if (b < 0) {
            return GK_STATUS_UNSUPPORTED;
        }
        a.node_backend[k] = b;
        a.backend[node]   = b;
    }
    return GK_STATUS_SUCCESS;
}

} // namespace gk::sched
