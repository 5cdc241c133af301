// backend.cpp - the public functions of backends and devices: argument checks, then a
// call through the implementation's table (impl.h).
#include "impl.h"

#include "../graph.h"
#include "../internal.h"

using gk::backend_error;

extern "C" {

// ---- backends -------------------------------------------------------------------------

const char * gk_backend_name(gk_backend_t backend) { return backend ? backend->iface.get_name(backend) : "(null)"; }

void gk_backend_free(gk_backend_t backend) {
    if (!backend) {
        return;
    }
    backend->iface.free(backend);
    delete backend;
}

gk_backend_dev_t gk_backend_get_device(gk_backend_t backend) { return backend ? backend->device : nullptr; }

gk_backend_buffer_type_t gk_backend_get_default_buffer_type(gk_backend_t backend) {
    return backend ? gk_backend_dev_buffer_type(backend->device) : nullptr;
}

gk_backend_buffer_t gk_backend_alloc_buffer(gk_backend_t backend, size_t size) {
    if (!backend) {
        backend_error("alloc_buffer: backend is NULL");
        return nullptr;
    }
    return gk_backend_buft_alloc_buffer(gk_backend_get_default_buffer_type(backend), size);
}

size_t gk_backend_get_alignment(gk_backend_t backend) {
    return gk_backend_buft_get_alignment(gk_backend_get_default_buffer_type(backend));
}

size_t gk_backend_get_max_size(gk_backend_t backend) {
    return gk_backend_buft_get_max_size(gk_backend_get_default_buffer_type(backend));
}

void gk_backend_synchronize(gk_backend_t backend) {
    if (backend && backend->iface.synchronize) {
        backend->iface.synchronize(backend);
    }
}

gk_status gk_backend_graph_compute(gk_backend_t backend, gk_cgraph * graph) {
    if (!backend || !graph) {
        backend_error("graph_compute: %s is NULL", backend ? "graph" : "backend");
        if (graph) {
            gk::set_error(graph->ctx, "graph_compute: backend is NULL");
        }
        return GK_STATUS_INVALID_ARGUMENT;
    }
    return backend->iface.graph_compute(backend, graph);
}

bool gk_backend_supports_op(gk_backend_t backend, const gk_tensor * op) {
    return backend && gk_backend_dev_supports_op(backend->device, op);
}

bool gk_backend_supports_buft(gk_backend_t backend, gk_backend_buffer_type_t buft) {
    return backend && gk_backend_dev_supports_buft(backend->device, buft);
}

// ---- devices --------------------------------------------------------------------------

const char * gk_backend_dev_name(gk_backend_dev_t dev) { return dev ? dev->iface.get_name(dev) : "(null)"; }

const char * gk_backend_dev_description(gk_backend_dev_t dev) {
    return dev ? dev->iface.get_description(dev) : "(null)";
}

void gk_backend_dev_memory(gk_backend_dev_t dev, size_t * free, size_t * total) {
    size_t f = 0;
    size_t t = 0;
    if (dev) {
        dev->iface.get_memory(dev, &f, &t);
    }
    if (free) {
        *free = f;
    }
    if (total) {
        *total = t;
    }
}

enum gk_backend_dev_type gk_backend_dev_type(gk_backend_dev_t dev) {
    return dev ? dev->iface.get_type(dev) : GK_BACKEND_DEVICE_TYPE_CPU;
}

gk_backend_t gk_backend_dev_init(gk_backend_dev_t dev, const char * params) {
    if (!dev) {
        backend_error("dev_init: device is NULL");
        return nullptr;
    }
    return dev->iface.init_backend(dev, params);
}

gk_backend_buffer_type_t gk_backend_dev_buffer_type(gk_backend_dev_t dev) {
    return dev ? dev->iface.get_buffer_type(dev) : nullptr;
}

bool gk_backend_dev_supports_op(gk_backend_dev_t dev, const gk_tensor * op) {
    return dev && op && dev->iface.supports_op(dev, op);
}

bool gk_backend_dev_supports_buft(gk_backend_dev_t dev, gk_backend_buffer_type_t buft) {
    return dev && buft && dev->iface.supports_buft(dev, buft);
}

bool gk_backend_dev_can_run_in_place(gk_backend_dev_t dev, const gk_tensor * node) {
    return dev && node && dev->iface.can_run_in_place && dev->iface.can_run_in_place(dev, node);
}

const gk_backend_feature * gk_backend_dev_features(gk_backend_dev_t dev) {
    static const gk_backend_feature none[] = {{nullptr, nullptr}};
    return dev && dev->iface.get_features ? dev->iface.get_features(dev) : none;
}

} // extern "C"
