// sched.cpp - ggml_backend_sched on gk's scheduler (include/gk/gk-sched.h): every entry
// point forwards to gk_sched, which assigns nodes to the backends (ggml's order: highest
// priority first, the CPU last), cuts the splits, stages what crosses memories, and places
// the compute buffers in each backend's default buffer type.
//
// What is ggml's and kept here: the "allocated since the last reset" state (a compute
// allocates first when the graph was not allocated), the eval callback's cancel, which
// ggml does not count as a failure (gk_sched reports it as ABORTED), and ggml's place for
// a graph input without storage: the last backend's memory (the CPU's), where gk_sched
// would put it with the first node that reads it (llama.cpp writes some inputs through
// tensor->data, asserting that their buffer is the host's).
#include "convert.h"

#include "gk/gk-sched.h"

#include <unordered_set>
#include <vector>

struct ggml_backend_sched {
    gk_sched_t                            s = nullptr;
    std::vector<ggml_backend_t>           backends;
    ggml_backend_sched_eval_callback      eval_callback  = nullptr;
    void *                                eval_user_data = nullptr;
    bool                                  cancelled      = false;  // the callback returned false
    bool                                  allocated      = false;
    std::unordered_set<const gk_tensor *> set_by_caller;  // ggml_backend_sched_set_tensor_backend since the last reset
};

namespace {

// gk_sched's callback: the user's, with the gk tensor seen as the ggml tensor it is.
bool eval_trampoline(gk_tensor * node, bool ask, void * user_data) {
    auto *     sched = static_cast<ggml_backend_sched *>(user_data);
    const bool r     = sched->eval_callback(compat::to_ggml(node), ask, sched->eval_user_data);
    sched->cancelled = sched->cancelled || (!ask && !r);
    return r;
}

/// ggml's rule for graph inputs: each leaf flagged GGML_TENSOR_FLAG_INPUT that has no
/// storage yet and whose backend the caller did not set goes to the last backend.
void place_inputs(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    const gk_cgraph * g = compat::to_gk(graph);
    for (int i = 0; g && i < gk_graph_n_leafs(g); ++i) {
        const gk_tensor * leaf = gk_graph_leaf(g, i);
        if ((leaf->flags & GK_TENSOR_FLAG_INPUT) && !leaf->data && !leaf->view_src &&
            !sched->set_by_caller.count(leaf)) {
            gk_sched_set_tensor_backend(sched->s, leaf, compat::to_gk(sched->backends.back()));
        }
    }
}

} // namespace

extern "C" {

ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends,
                                            size_t graph_size, bool parallel, bool op_offload) {
    if (!backends || n_backends < 1) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_sched_new: no backend given");
    }
    std::vector<gk_backend_t> list;
    for (int i = 0; i < n_backends; ++i) {
        list.push_back(compat::to_gk(backends[i]));
    }
    gk_sched_t s = gk_sched_new(list.data(), n_backends);
    compat::check_backend(s != nullptr, "ggml_backend_sched_new");
    auto * sched    = new ggml_backend_sched;
    sched->s        = s;
    sched->backends = {backends, backends + n_backends};
    return sched;
}

void ggml_backend_sched_free(ggml_backend_sched_t sched) {
    if (sched) {
        gk_sched_free(sched->s);
        delete sched;
    }
}

void ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, ggml_cgraph * measure_graph, size_t * sizes) {
    place_inputs(sched, measure_graph);
    compat::check(gk_sched_reserve(sched->s, compat::to_gk(measure_graph)), "ggml_backend_sched_reserve_size");
    for (size_t i = 0; sizes && i < sched->backends.size(); ++i) {
        sizes[i] = gk_sched_get_buffer_size(sched->s, compat::to_gk(sched->backends[i]));
    }
}

bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, ggml_cgraph * measure_graph) {
    place_inputs(sched, measure_graph);
    const bool ok = gk_sched_reserve(sched->s, compat::to_gk(measure_graph)) == GK_STATUS_SUCCESS;
    ggml_backend_sched_reset(sched);
    return ok;
}

int ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched) { return gk_sched_get_n_backends(sched->s); }

ggml_backend_t ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i) {
    return compat::to_ggml(gk_sched_get_backend(sched->s, i));
}

int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched) { return gk_sched_get_n_splits(sched->s); }
int ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched) { return 1; }  // gk_sched keeps one copy of each input

ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend) {
    for (ggml_backend_t b : sched->backends) {
        if (b == backend) {
            return ggml_backend_get_default_buffer_type(backend);
        }
    }
    return nullptr;
}

size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
    return gk_sched_get_buffer_size(sched->s, compat::to_gk(backend));
}

void ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, ggml_tensor * node, ggml_backend_t backend) {
    compat::check_backend(gk_sched_set_tensor_backend(sched->s, compat::to_gk(node), compat::to_gk(backend)),
                          "ggml_backend_sched_set_tensor_backend");
    sched->set_by_caller.insert(compat::to_gk(node));
}

ggml_backend_t ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, ggml_tensor * node) {
    return compat::to_ggml(gk_sched_get_tensor_backend(sched->s, compat::to_gk(node)));
}

void ggml_backend_sched_split_graph(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    place_inputs(sched, graph);
    compat::check(gk_sched_split_graph(sched->s, compat::to_gk(graph)), "ggml_backend_sched_split_graph");
    sched->allocated = false;
}

bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    place_inputs(sched, graph);
    sched->allocated = gk_sched_alloc_graph(sched->s, compat::to_gk(graph)) == GK_STATUS_SUCCESS;
    return sched->allocated;
}

enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    if (!sched->allocated && !ggml_backend_sched_alloc_graph(sched, graph)) {
        return GGML_STATUS_ALLOC_FAILED;
    }
    sched->cancelled   = false;
    const gk_status st = gk_sched_graph_compute(sched->s, compat::to_gk(graph));
    return st == GK_STATUS_ABORTED && sched->cancelled ? GGML_STATUS_SUCCESS : compat::to_ggml(st);
}

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    return ggml_backend_sched_graph_compute_async(sched, graph);
}

void ggml_backend_sched_synchronize(ggml_backend_sched_t sched) {
    for (ggml_backend_t b : sched->backends) {
        ggml_backend_synchronize(b);
    }
}

void ggml_backend_sched_reset(ggml_backend_sched_t sched) {
    gk_sched_reset(sched->s);
    sched->allocated = false;
    sched->set_by_caller.clear();
}

void ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback,
                                          void * user_data) {
    sched->eval_callback  = callback;
    sched->eval_user_data = user_data;
    gk_sched_set_eval_callback(sched->s, callback ? eval_trampoline : nullptr, sched);
}

} // extern "C"
