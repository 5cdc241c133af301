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
#include <fcntl.h>
#include <mutex>
#include <string>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>
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

#if defined(__SANITIZE_ADDRESS__)
/// LeakSanitizer's built-in suppressions for programs linking gk under ASan: allocations
/// that libraries of the build's backends keep alive past exit, theirs and not gk's (every
/// program that lists the devices, or starts MPI, meets them): Mesa's lavapipe (a few of
/// the Vulkan instance and device), Open MPI and its runtime (PMIx, hwloc, libevent and
/// the components it loads). Here because every such program links the registry.
extern "C" const char * __lsan_default_suppressions() {
    return ""
#if defined(GK_VULKAN)
           "leak:libvulkan_lvp.so\n"
#endif
#if defined(GK_MPI)
           "leak:libmpi.so\n"
           "leak:libopen-pal.so\n"
           "leak:libopen-rte.so\n"
           "leak:libpmix.so\n"
           "leak:libhwloc.so\n"
           "leak:libevent\n"
           "leak:mca_\n"
#endif
        ;
}
/// The list of suppressions used is not printed at exit: it would add lines to the
/// standard error of every program that meets them (gk-run's one-line errors included).
#if !defined(GK_MPI)
extern "C" const char * __lsan_default_options() { return "print_suppressions=0"; }
#else
namespace {
/// True when this process's environment names OMPI_COMM_WORLD_SIZE (Open MPI's launcher
/// started it). Read from /proc/self/environ with raw system calls: the sanitizers ask
/// before the C library has set up getenv and before their interceptors work. Only the
/// first 256 KiB of the environment are looked at. Not instrumented: the shadow memory
/// does not exist yet.
__attribute__((no_sanitize("address", "undefined"))) bool started_by_open_mpi() {
    static char  env[256 << 10];
    const long   fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY);
    size_t       n  = 0;
    if (fd < 0) return false;
    for (long got = 1; got > 0 && n < sizeof env - 1; n += static_cast<size_t>(got)) {
        got = syscall(SYS_read, fd, env + n, sizeof env - 1 - n);
        if (got < 0) break;
    }
    syscall(SYS_close, fd);
    // NUL-separated entries, env[n] == 0; no strlen / strncmp (intercepted, not ready yet).
    static const char key[] = "OMPI_COMM_WORLD_SIZE=";
    for (size_t at = 0; at < n;) {
        size_t k = 0;
        while (key[k] && env[at + k] == key[k]) ++k;
        if (!key[k]) return true;
        while (env[at]) ++at;
        ++at;
    }
    return false;
}
} // namespace

/// Under Open MPI's launcher the stacks of allocations are unwound in full (its libraries
/// have no frame pointers, so the fast unwinder stops at their first frame and the
/// suppressions above could not see them). Elsewhere the fast unwinder stays (the full one
/// slows every allocation by a third).
extern "C" const char * __lsan_default_options() {
    return started_by_open_mpi() ? "fast_unwind_on_malloc=0:print_suppressions=0" : "print_suppressions=0";
}
#endif
#endif
