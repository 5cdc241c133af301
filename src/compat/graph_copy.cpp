// graph_copy.cpp - ggml_backend_graph_copy and ggml_backend_compare_graph_backend. The
// first duplicates a graph's nodes, their sources and their data into a buffer of another
// backend. The second computes a graph node by node on two backends and shows each pair of
// results to a callback. llama.cpp's test-backend-ops uses them to check a backend against
// the CPU.
//
// The copy keeps every tensor's type, shape, strides, op, op_params, flags and name. A
// tensor that owns its storage gets storage of its own in the new buffer, and its bytes
// are copied. A view gets a view of the copied storage at the same offset. The copy
// graph's nodes are the originals' copies, in the same order.
#include "convert.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

/// Every tensor reachable from the graph's nodes through src[] and view_src: each one once.
std::vector<ggml_tensor *> reachable(ggml_cgraph * graph) {
    std::vector<ggml_tensor *>              out;
    std::unordered_set<const ggml_tensor *> seen;
    std::vector<ggml_tensor *>              stack;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        stack.push_back(ggml_graph_node(graph, i));
    }
    while (!stack.empty()) {
        ggml_tensor * t = stack.back();
        stack.pop_back();
        if (!t || !seen.insert(t).second) {
            continue;
        }
        out.push_back(t);
        stack.push_back(t->view_src);
        for (ggml_tensor * s : t->src) {
            stack.push_back(s);
        }
    }
    return out;
}

/// The tensors of one copy: `owned` holds those with storage of their own (allocated in
/// the backend's buffer), `views` the views (pointed into the copies of their view_src).
struct copier {
    ggml_context *                                         owned;
    ggml_context *                                         views;
    std::unordered_map<const ggml_tensor *, ggml_tensor *> copies;

    ggml_tensor * dup(ggml_tensor * src) {
        if (auto it = copies.find(src); it != copies.end()) {
            return it->second;
        }
        ggml_tensor * dst = ggml_new_tensor(src->view_src ? views : owned, src->type, GGML_MAX_DIMS, src->ne);
        if (src->view_src) {
            dst->view_src  = dup(src->view_src);
            dst->view_offs = src->view_offs;
        }
        std::memcpy(dst->nb, src->nb, sizeof(dst->nb));
        dst->op    = src->op;
        dst->flags = src->flags;
        std::memcpy(dst->op_params, src->op_params, sizeof(dst->op_params));
        ggml_set_name(dst, src->name);
        for (int i = 0; i < GGML_MAX_SRC; ++i) {
            dst->src[i] = src->src[i] ? dup(src->src[i]) : nullptr;
        }
        copies.emplace(src, dst);
        return dst;
    }
};

/// ggml_is_view_op: nodes that only describe other memory; their results are not compared.
bool is_view_op(ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

/// Computes the single node t on backend, through a one-node graph in scratch.
bool compute_node(ggml_backend_t backend, ggml_cgraph * scratch, ggml_tensor * t) {
    ggml_graph_clear(scratch);
    ggml_graph_add_node(scratch, t);
    return ggml_backend_graph_compute(backend, scratch) == GGML_STATUS_SUCCESS;
}

struct ggml_backend_graph_copy no_copy() { return {nullptr, nullptr, nullptr, nullptr}; }

} // namespace

extern "C" {

struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph) {
    if (!backend || !graph) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_graph_copy: no backend or no graph");
    }
    const std::vector<ggml_tensor *> tensors = reachable(graph);
    const size_t                     n_nodes = static_cast<size_t>(ggml_graph_n_nodes(graph));
    const ggml_init_params params{ggml_tensor_overhead() * tensors.size() + ggml_graph_overhead_custom(n_nodes, false),
                                  nullptr, true};
    copier c{ggml_init(params), ggml_init(params), {}};
    if (!c.owned || !c.views) {
        ggml_free(c.owned);
        ggml_free(c.views);
        return no_copy();
    }
    for (size_t i = 0; i < n_nodes; ++i) {
        c.dup(ggml_graph_node(graph, static_cast<int>(i)));
    }
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(c.owned, backend);
    if (!buffer) {
        ggml_free(c.owned);
        ggml_free(c.views);
        return no_copy();
    }
    // Storage first (the bytes, as they are now), then the views over it.
    for (ggml_tensor * t : tensors) {
        if (!t->view_src) {
            ggml_backend_tensor_copy(t, c.copies.at(t));
        }
    }
    for (ggml_tensor * t : tensors) {
        if (t->view_src && ggml_backend_view_init(c.copies.at(t)) != GGML_STATUS_SUCCESS) {
            ggml_abort(__FILE__, __LINE__, "ggml_backend_graph_copy: cannot place the view %s", t->name);
        }
    }
    ggml_cgraph * copy = ggml_new_graph_custom(c.owned, n_nodes, false);
    for (size_t i = 0; i < n_nodes; ++i) {
        ggml_graph_add_node(copy, c.copies.at(ggml_graph_node(graph, static_cast<int>(i))));
    }
    return {buffer, c.owned, c.views, copy};
}

void ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy) {
    ggml_backend_buffer_free(copy.buffer);
    ggml_free(copy.ctx_allocated);
    ggml_free(copy.ctx_unallocated);
}

bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph,
                                        ggml_backend_eval_callback callback, void * user_data,
                                        struct ggml_tensor const * const * test_nodes, size_t num_test_nodes) {
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(backend2, graph);
    if (!copy.buffer) {
        return false;
    }
    ggml_cgraph * g1 = graph;
    ggml_cgraph * g2 = copy.graph;
    const int     n  = ggml_graph_n_nodes(g1);
    if (num_test_nodes != 0) {
        // The whole graph on each backend, then only the nodes asked for are compared.
        if (!test_nodes || ggml_backend_graph_compute(backend1, g1) != GGML_STATUS_SUCCESS ||
            ggml_backend_graph_compute(backend2, g2) != GGML_STATUS_SUCCESS) {
            ggml_backend_graph_copy_free(copy);
            return false;
        }
        bool found = false;
        for (int i = 0; i < n; ++i) {
            for (size_t j = 0; j < num_test_nodes; ++j) {
                if (ggml_graph_node(g1, i) == test_nodes[j]) {
                    callback(i, ggml_graph_node(g1, i), ggml_graph_node(g2, i), user_data);
                    found = true;
                }
            }
        }
        ggml_backend_graph_copy_free(copy);
        if (!found) {
            ggml_abort(__FILE__, __LINE__, "ggml_backend_compare_graph_backend: no test node is in the graph");
        }
        return true;
    }
    // One node at a time on both backends, each pair shown to the callback after it ran.
    const ggml_init_params params{2 * ggml_graph_overhead_custom(1, false), nullptr, true};
    ggml_context *         scratch = ggml_init(params);
    ggml_cgraph *          one1    = scratch ? ggml_new_graph_custom(scratch, 1, false) : nullptr;
    ggml_cgraph *          one2    = scratch ? ggml_new_graph_custom(scratch, 1, false) : nullptr;
    bool                   ok      = one1 && one2;
    for (int i = 0; ok && i < n; ++i) {
        ggml_tensor * t1 = ggml_graph_node(g1, i);
        ggml_tensor * t2 = ggml_graph_node(g2, i);
        ok               = compute_node(backend1, one1, t1) && compute_node(backend2, one2, t2);
        if (ok && !is_view_op(t1->op) && !callback(i, t1, t2, user_data)) {
            break;
        }
    }
    ggml_free(scratch);
    ggml_backend_graph_copy_free(copy);
    return ok;
}

} // extern "C"
