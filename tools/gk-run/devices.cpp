// devices.cpp - see devices.h.
#include "devices.h"

#include <cstdio>
#include <vector>

namespace gk_run_tool {

namespace {

constexpr size_t k_mib = 1024 * 1024;

/** The registry's devices other than the CPU, in order. */
std::vector<gk_backend_dev_t> accelerators() {
    std::vector<gk_backend_dev_t> out;
    for (size_t i = 0; i < gk_backend_dev_count(); ++i) {
        gk_backend_dev_t d = gk_backend_dev_get(i);
        if (gk_backend_dev_type(d) != GK_BACKEND_DEVICE_TYPE_CPU) out.push_back(d);
    }
    return out;
}

/** "Vulkan0, CUDA0, none": what --device takes on this machine. */
std::string device_names() {
    std::string names;
    for (gk_backend_dev_t d : accelerators()) names += std::string(gk_backend_dev_name(d)) + ", ";
    return names + "none";
}

} // namespace

void print_devices() {
    std::printf("Available devices:\n");
    std::vector<gk_backend_dev_t> devs = accelerators();
    for (size_t i = 0; i < gk_backend_dev_count(); ++i) {
        gk_backend_dev_t d = gk_backend_dev_get(i);
        if (gk_backend_dev_type(d) == GK_BACKEND_DEVICE_TYPE_CPU) devs.push_back(d);
    }
    for (gk_backend_dev_t d : devs) {
        size_t free = 0, total = 0;
        gk_backend_dev_memory(d, &free, &total);
        std::printf("  %s: %s (%zu MiB, %zu MiB free)\n", gk_backend_dev_name(d), gk_backend_dev_description(d),
                    total / k_mib, free / k_mib);
    }
}

bool choose_device(const run_options & opt, gk_backend_dev_t * device, std::string * error) {
    *device = nullptr;
    if (!opt.devices.empty() && opt.devices.front() == "none") return true;
    for (const std::string & name : opt.devices) {
        gk_backend_dev_t d = gk_backend_dev_by_name(name.c_str());
        if (!d || gk_backend_dev_type(d) == GK_BACKEND_DEVICE_TYPE_CPU) {
            if (error) *error = "--device " + name + ": no such device (available: " + device_names() + ")";
            return false;
        }
        if (!*device) *device = d;
    }
    if (opt.devices.size() > 1) {
        std::fprintf(stderr, "gk-run: warning: gk-run uses one device; the layers go to %s\n",
                     gk_backend_dev_name(*device));
    }
    const int64_t n = gpu_layers(opt);
    if (n == 0) {
        *device = nullptr;
        return true;
    }
    if (!*device) {
        const std::vector<gk_backend_dev_t> devs = accelerators();
        if (!devs.empty()) *device = devs.front();
    }
    if (!*device) {
        std::fprintf(stderr,
                     "gk-run: warning: no usable GPU found, --gpu-layers option will be ignored "
                     "(see --list-devices)\n");
    }
    return true;
}

int64_t gpu_layers(const run_options & opt) {
    if (opt.n_gpu_layers != -3) return opt.n_gpu_layers;
    return opt.devices.empty() ? 0 : -1;
}

} // namespace gk_run_tool
