// device.cpp - CUDA discovery and devices: every device the runtime reports, each probed
// with an empty kernel; one the build has no kernel image for (or any other launch error)
// is left out with a line naming what the build targets. No driver, no device: no CUDA
// device and no error (a CUDA build runs on a machine without a GPU).
#include "cuda.h"
#include "kernels.h"

#include "../debug.h"

#include <cuda_runtime.h>

#include <cstdio>

namespace gk::cuda {
namespace {

device_context & ctx_of(gk_backend_dev_t dev) { return *static_cast<device_context *>(dev->context); }

const char * dev_name(gk_backend_dev_t dev) { return ctx_of(dev).name.c_str(); }
const char * dev_description(gk_backend_dev_t dev) { return ctx_of(dev).description.c_str(); }

void dev_memory(gk_backend_dev_t dev, size_t * free, size_t * total) {
    *total = ctx_of(dev).total_memory;
    *free  = 0;
    size_t f = 0, t = 0;
    if (cudaSetDevice(ctx_of(dev).index) == cudaSuccess && cudaMemGetInfo(&f, &t) == cudaSuccess) {
        *free = f;
    }
}

enum gk_backend_dev_type dev_type(gk_backend_dev_t) { return GK_BACKEND_DEVICE_TYPE_GPU; }

gk_backend_t dev_init(gk_backend_dev_t dev, const char *) { return init_backend(ctx_of(dev)); }

gk_backend_buffer_type_t dev_buffer_type(gk_backend_dev_t dev) { return &ctx_of(dev).buffer_type; }

bool dev_supports_op(gk_backend_dev_t, const gk_tensor * op) { return supports_op(op, nullptr); }

bool dev_supports_buft(gk_backend_dev_t dev, gk_backend_buffer_type_t buft) { return buft == &ctx_of(dev).buffer_type; }

const gk_backend_feature * dev_features(gk_backend_dev_t dev) { return ctx_of(dev).features; }

void note(const std::string & line) {
    if (!env_flag("GK_QUIET")) std::fprintf(stderr, "gk: %s\n", line.c_str());
}

std::vector<device_context *> discover() {
    std::vector<device_context *> out;
    int                           n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // no driver or no device: clear the error, list nothing
        return out;
    }
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess || cudaSetDevice(i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        const std::string cc    = std::to_string(p.major) + "." + std::to_string(p.minor);
        const std::string probe = probe_kernel();
        if (!probe.empty()) {
            note(std::string("CUDA device ") + std::to_string(i) + " (" + p.name + ", compute " + cc +
                 ") left out: " + probe + "; this build has kernels for " + built_for());
            continue;
        }
        auto * d         = new device_context;  // kept for the process's life, as the registry's devices
        d->index         = i;
        d->name          = "CUDA" + std::to_string(out.size());
        d->description   = p.name;
        d->compute       = cc;
        d->sms           = std::to_string(p.multiProcessorCount);
        d->shared        = std::to_string(p.sharedMemPerBlock / 1024) + " KiB";
        d->total_memory  = p.totalGlobalMem;
        d->features[0]   = {"COMPUTE", d->compute.c_str()};
        d->features[1]   = {"SMS", d->sms.c_str()};
        d->features[2]   = {"SHARED_PER_BLOCK", d->shared.c_str()};
        d->features[3]   = {"BUILT_FOR", built_for()};
        d->features[4]   = {nullptr, nullptr};
        d->device        = {{dev_name, dev_description, dev_memory, dev_type, dev_init, dev_buffer_type,
                             dev_supports_op, dev_supports_buft, dev_features, nullptr},
                            d};
        init_buffer_type(*d);
        out.push_back(d);
    }
    return out;
}

} // namespace

const std::vector<device_context *> & devices() {
    static const std::vector<device_context *> list = discover();
    return list;
}

const char * built_for() { return GK_CUDA_BUILT_FOR; }

std::string probe_kernel() {
    const int e = kernels::empty(nullptr);
    const cudaError_t s = e != cudaSuccess ? static_cast<cudaError_t>(e) : cudaDeviceSynchronize();
    if (s == cudaSuccess) return "";
    cudaGetLastError();
    return cudaGetErrorString(s);
}

} // namespace gk::cuda
