// registry.cpp - the device list. Discovery runs once, on the first call that needs
// the list: it lists the CPU device (always), then the CUDA devices of a GK_CUDA build
// and the Vulkan devices of a GK_VULKAN build (src/gk/cuda, src/gk/vulkan; none found is
// not an error), and prints one line per device found to
// stderr unless GK_QUIET is set. Devices registered by the program are appended.
#include "impl.h"

#include "../debug.h"
#if defined(GK_CUDA)
#include "../cuda/cuda.h"
#endif
#if defined(GK_VULKAN)
#include "../vulkan/vk.h"
#endif

#include <cstdio>
#include <mutex>
#include <string>
#include <strings.h>
#include <vector>

namespace gk {
namespace {

struct registry {
    std::mutex                    mutex;
    std::vector<gk_backend_dev_t> devices;
};

/// "gk: CPU - gk CPU backend, 31954 MiB | SIMD = AVX2 | AVX512 = 0 | ..."
void print_device_line(gk_backend_dev_t dev) {
    size_t free  = 0;
    size_t total = 0;
    gk_backend_dev_memory(dev, &free, &total);
    std::string line = std::string("gk: ") + gk_backend_dev_name(dev) + " - " + gk_backend_dev_description(dev) + ", " +
                       std::to_string(total >> 20) + " MiB";
    for (const gk_backend_feature * f = gk_backend_dev_features(dev); f->name; ++f) {
        line += std::string(" | ") + f->name + " = " + f->value;
    }
    std::fprintf(stderr, "%s\n", line.c_str());
}

registry & the_registry() {
    static registry * r = [] {
        auto * reg = new registry;  // never destroyed: devices may be used during exit
        reg->devices.push_back(cpu_device());
#if defined(GK_CUDA)
        for (cuda::device_context * d : cuda::devices()) {
            reg->devices.push_back(&d->device);
        }
#endif
#if defined(GK_VULKAN)
        for (vulkan::device_context * d : vulkan::devices()) {
            reg->devices.push_back(&d->device);
        }
#endif
        if (!env_flag("GK_QUIET")) {
            for (gk_backend_dev_t dev : reg->devices) {
                print_device_line(dev);
            }
        }
        return reg;
    }();
    return *r;
}

/// The first device for which pred(dev) holds, or nullptr.
template <class Pred>
gk_backend_dev_t find_device(Pred pred) {
    registry &                  r = the_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (gk_backend_dev_t dev : r.devices) {
        if (pred(dev)) {
            return dev;
        }
    }
    return nullptr;
}

} // namespace
} // namespace gk

using gk::backend_error;

extern "C" {

size_t gk_backend_dev_count(void) {
    gk::registry &              r = gk::the_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.devices.size();
}

gk_backend_dev_t gk_backend_dev_get(size_t index) {
    gk::registry &              r = gk::the_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return index < r.devices.size() ? r.devices[index] : nullptr;
}

gk_backend_dev_t gk_backend_dev_by_name(const char * name) {
    if (!name) {
        return nullptr;
    }
    return gk::find_device([name](gk_backend_dev_t dev) { return strcasecmp(gk_backend_dev_name(dev), name) == 0; });
}

gk_backend_dev_t gk_backend_dev_by_type(enum gk_backend_dev_type type) {
    return gk::find_device([type](gk_backend_dev_t dev) { return gk_backend_dev_type(dev) == type; });
}

void gk_backend_device_register(gk_backend_dev_t dev) {
    if (!dev) {
        return;
    }
    gk::registry &              r = gk::the_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.devices.push_back(dev);
}

gk_backend_t gk_backend_init_by_name(const char * name, const char * params) {
    gk_backend_dev_t dev = gk_backend_dev_by_name(name);
    if (!dev) {
        backend_error("init_by_name: no device named '%s'", name ? name : "(null)");
        return nullptr;
    }
    return gk_backend_dev_init(dev, params);
}

gk_backend_t gk_backend_init_by_type(enum gk_backend_dev_type type, const char * params) {
    gk_backend_dev_t dev = gk_backend_dev_by_type(type);
    if (!dev) {
        backend_error("init_by_type: no device of type %d", static_cast<int>(type));
        return nullptr;
    }
    return gk_backend_dev_init(dev, params);
}

gk_backend_t gk_backend_init_best(void) {
    gk_backend_dev_t dev = gk_backend_dev_by_type(GK_BACKEND_DEVICE_TYPE_GPU);
    return gk_backend_dev_init(dev ? dev : gk_backend_dev_by_type(GK_BACKEND_DEVICE_TYPE_CPU), nullptr);
}

} // extern "C"
