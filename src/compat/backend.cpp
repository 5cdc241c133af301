// backend.cpp - the ggml_backend_t calls with no gk function of the same name: the
// backend's guid, whether it wants a node offloaded, and graph plans.
#include "convert.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

/// A graph plan: the graph a later ggml_backend_graph_plan_compute computes. gk's backends
/// need no preparation per graph, so the plan keeps the graph, as ggml's CPU plan keeps a
/// shallow copy of it. The graph must outlive the plan.
struct graph_plan {
    ggml_backend_t backend;
    ggml_cgraph *  graph;
};

struct guid_bytes {
    ggml_guid bytes{};
};

} // namespace

extern "C" {

// One guid per kind of backend (its name without the device number: "CPU", "Vulkan", ...):
// "gk:" and the kind, cut or zero-padded to 16 bytes. It is stable for the process, as
// ggml's static guids are, and it differs from every ggml guid, whose bytes are random.
ggml_guid_t ggml_backend_guid(ggml_backend_t backend) {
    if (!backend) {
        return nullptr;
    }
    const std::string kind = compat::kind_of(ggml_backend_name(backend));
    static std::mutex                        lock;
    static std::map<std::string, guid_bytes> guids;
    const std::lock_guard<std::mutex>        hold(lock);
    auto [it, fresh] = guids.try_emplace(kind);
    if (fresh) {
        const std::string text = "gk:" + kind;
        std::memcpy(it->second.bytes, text.data(), std::min(text.size(), sizeof(ggml_guid)));
    }
    return &it->second.bytes;
}

// ggml asks the backend's device (ggml_backend_dev_offload_op, in the registry library,
// above this one): no gk device asks for a node to be offloaded.
bool ggml_backend_offload_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    if (!backend) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_offload_op: no backend");
    }
    return false;
}

ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    if (!backend || !cgraph) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_graph_plan_create: no backend or no graph");
    }
    return new graph_plan{backend, cgraph};
}

void ggml_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    delete static_cast<graph_plan *>(plan);
}

enum ggml_status ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    auto * p = static_cast<graph_plan *>(plan);
    if (!p || p->backend != backend) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_graph_plan_compute: the plan was not made for this backend");
    }
    return ggml_backend_graph_compute(backend, p->graph);
}

} // extern "C"
