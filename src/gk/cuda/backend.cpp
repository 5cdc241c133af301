// backend.cpp - a CUDA backend: launches one kernel per node of a graph whose tensors are
// in its device's memory (layout ops need none) on its own stream, then waits for them.
#include "cuda.h"

#include "../internal.h"

#include <cuda_runtime.h>

#include <new>

namespace gk::cuda {
namespace {

struct backend_context {
    device_context * d;
    cudaStream_t     stream;
};

backend_context & ctx_of(gk_backend_t b) { return *static_cast<backend_context *>(b->context); }

const char * backend_name(gk_backend_t b) { return ctx_of(b).d->name.c_str(); }

void backend_free(gk_backend_t b) {
    backend_context * c = static_cast<backend_context *>(b->context);
    if (cudaSetDevice(c->d->index) == cudaSuccess) cudaStreamDestroy(c->stream);
    delete c;
}

/// A tensor the kernels may read or write: in this device's memory.
bool on_device(const device_context & d, const gk_tensor * t) {
    gk_backend_buffer_t b = buffer_memory(t->buffer);
    return b && b->buft == &d.buffer_type;
}

gk_status fail(gk_cgraph * graph, gk_status st) {
    gk::set_error(gk_graph_context(graph), "%s", gk_backend_last_error());  // where gk_sched and callers look
    return st;
}

gk_status graph_compute(gk_backend_t b, gk_cgraph * graph) {
    backend_context & c = ctx_of(b);
    if (cudaSetDevice(c.d->index) != cudaSuccess) {
        backend_error("%s: cudaSetDevice: %s", c.d->name.c_str(), cudaGetErrorString(cudaGetLastError()));
        return fail(graph, GK_STATUS_FAILED);
    }
    for (int i = 0; i < gk_graph_n_nodes(graph); ++i) {
        const gk_tensor * n = gk_graph_node(graph, i);
        if (n->op == GK_OP_NONE || is_layout_op(n->op)) continue;
        std::string why;
        if (!supports_op(n, &why)) {
            backend_error("%s: node '%s': %s", c.d->name.c_str(), gk_get_name(n), why.c_str());
            return fail(graph, GK_STATUS_UNSUPPORTED);
        }
        const gk_tensor * operands[] = {n->src[0], n->src[1], n->src[2], n->src[3], n->src[4], n};
        for (const gk_tensor * t : operands) {
            if (t && !on_device(*c.d, t)) {
                backend_error("%s: tensor '%s' of node '%s' is not in %s memory", c.d->name.c_str(), gk_get_name(t),
                              gk_get_name(n), c.d->name.c_str());
                return fail(graph, GK_STATUS_FAILED);
            }
        }
        if (const gk_status st = launch_op(n, c.stream); st != GK_STATUS_SUCCESS) return fail(graph, st);
    }
    if (const cudaError_t e = cudaStreamSynchronize(c.stream); e != cudaSuccess) {
        backend_error("%s: the computation failed: %s", c.d->name.c_str(), cudaGetErrorString(e));
        cudaGetLastError();
        return fail(graph, GK_STATUS_FAILED);
    }
    return GK_STATUS_SUCCESS;
}

} // namespace

gk_backend_t init_backend(device_context & d) {
    cudaStream_t stream = nullptr;
    if (cudaSetDevice(d.index) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess) {
        backend_error("%s: cannot create a stream: %s", d.name.c_str(), cudaGetErrorString(cudaGetLastError()));
        return nullptr;
    }
    auto *       ctx = new (std::nothrow) backend_context{&d, stream};
    gk_backend_t b =
        ctx ? backend_init({backend_name, backend_free, graph_compute, nullptr}, &d.device, ctx) : nullptr;
    if (!b) {
        delete ctx;
        cudaStreamDestroy(stream);
        backend_error("%s: out of memory", d.name.c_str());
    }
    return b;
}

} // namespace gk::cuda
