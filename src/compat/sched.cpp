// sched.cpp - ggml_backend_sched over one backend (gk's CPU backend): graphs are placed by
// a gk gallocr in the backend's default buffer type and computed by the backend.
//
// FORWARDING POINT (gk_sched): gk's multi-backend scheduler (include/gk/gk-sched.h,
// src/gk/sched/) has landed but is not used here yet: ggml_backend_sched_* are to forward
// to it (it still lacks the per-node eval callback, reserve and a node's backend override,
// which these entry points need), and then the single-backend restriction of
// ggml_backend_sched_new goes away.
#include "convert.h"

#include <vector>

struct ggml_backend_sched {
    ggml_backend_t                  backend = nullptr;
    gk_gallocr_t                    galloc  = nullptr;
    ggml_backend_sched_eval_callback eval_callback = nullptr;
    void *                          eval_user_data = nullptr;
    std::vector<ggml_tensor *>      observed;  // nodes the eval callback asked for
    bool                            allocated = false;
};

namespace {

// Ask the eval callback which nodes it wants to see; those are flagged as outputs so that
// the allocator keeps their storage until the whole graph has run.
void ask_eval_callback(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    sched->observed.clear();
    if (!sched->eval_callback) {
        return;
    }
    gk_cgraph * g = compat::to_gk(graph);
    for (int i = 0; i < gk_graph_n_nodes(g); ++i) {
        gk_tensor * node = gk_graph_node(g, i);
        if (sched->eval_callback(compat::to_ggml(node), true, sched->eval_user_data)) {
            node->flags |= GK_TENSOR_FLAG_OUTPUT;
            sched->observed.push_back(compat::to_ggml(node));
        }
    }
}

} // namespace

extern "C" {

ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends,
                                            size_t graph_size, bool parallel, bool op_offload) {
    if (!backends || n_backends < 1 || !backends[0]) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_sched_new: no backend given");
    }
    if (n_backends != 1) {
        ggml_abort(__FILE__, __LINE__,
                   "ggml_backend_sched_new: %d backends given; gk's compat scheduler runs one backend until gk_sched lands",
                   n_backends);
    }
    ggml_backend_buffer_type_t buft = bufts && bufts[0] ? bufts[0] : ggml_backend_get_default_buffer_type(backends[0]);
    auto * sched    = new ggml_backend_sched;
    sched->backend  = backends[0];
    sched->galloc   = gk_gallocr_new(compat::to_gk(buft));
    compat::check_backend(sched->galloc != nullptr, "ggml_backend_sched_new");
    return sched;
}

void ggml_backend_sched_free(ggml_backend_sched_t sched) {
    if (!sched) {
        return;
    }
    gk_gallocr_free(sched->galloc);
    delete sched;
}

void ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, ggml_cgraph * measure_graph, size_t * sizes) {
    compat::check_backend(gk_gallocr_reserve(sched->galloc, compat::to_gk(measure_graph)), "ggml_backend_sched_reserve_size");
    if (sizes) {
        sizes[0] = gk_gallocr_get_buffer_size(sched->galloc, 0);
    }
}

bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, ggml_cgraph * measure_graph) {
    return gk_gallocr_reserve(sched->galloc, compat::to_gk(measure_graph));
}

int ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched) { return 1; }

ggml_backend_t ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i) {
    return i == 0 || i == -1 ? sched->backend : nullptr;
}

int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched) { return 1; }
int ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched) { return 1; }

ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend) {
    return backend == sched->backend ? ggml_backend_get_default_buffer_type(backend) : nullptr;
}

size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
    return backend == sched->backend ? gk_gallocr_get_buffer_size(sched->galloc, 0) : 0;
}

void ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, ggml_tensor * node, ggml_backend_t backend) {
    if (backend != sched->backend) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_sched_set_tensor_backend: backend is not the scheduler's one backend");
    }
}

ggml_backend_t ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, ggml_tensor * node) {
    return sched->backend;
}

void ggml_backend_sched_split_graph(ggml_backend_sched_t sched, ggml_cgraph * graph) {}

bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    ask_eval_callback(sched, graph);
    sched->allocated = gk_gallocr_alloc_graph(sched->galloc, compat::to_gk(graph));
    return sched->allocated;
}

enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    if (!sched->allocated && !ggml_backend_sched_alloc_graph(sched, graph)) {
        return GGML_STATUS_ALLOC_FAILED;
    }
    const enum ggml_status status = compat::to_ggml(gk_backend_graph_compute(compat::to_gk(sched->backend), compat::to_gk(graph)));
    if (status == GGML_STATUS_SUCCESS) {
        for (ggml_tensor * t : sched->observed) {
            if (!sched->eval_callback(t, false, sched->eval_user_data)) {
                break;
            }
        }
    }
    return status;
}

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, ggml_cgraph * graph) {
    return ggml_backend_sched_graph_compute_async(sched, graph);
}

void ggml_backend_sched_synchronize(ggml_backend_sched_t sched) { ggml_backend_synchronize(sched->backend); }

void ggml_backend_sched_reset(ggml_backend_sched_t sched) { sched->allocated = false; }

void ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback,
                                          void * user_data) {
    sched->eval_callback  = callback;
    sched->eval_user_data = user_data;
}

} // extern "C"
