// registry.cpp - ggml's backend registry over gk's devices: one registry entry per kind of
// device, the CPU's first (ggml_backend_cpu_reg, whose extension functions are the CPU
// backend's), then one per other kind in gk's device order ("Vulkan" for Vulkan0, Vulkan1,
// ...), as ggml registers one entry per backend library. Backends are built in, so
// loading from a path finds nothing.
#include "convert.h"
#include "ggml-cpu.h"

#include <cstdio>
#include <deque>
#include <string>
#include <string_view>
#include <strings.h>
#include <vector>

namespace {

/// A device's kind (compat::kind_of).
std::string kind_of(ggml_backend_dev_t dev) { return compat::kind_of(ggml_backend_dev_name(dev)); }

/// The registry entries, built once from gk's device list (which does not change).
const std::vector<ggml_backend_reg_t> & regs() {
    static const std::vector<ggml_backend_reg_t> list = [] {
        static std::deque<std::string>      names;  // stable storage for the entries' names
        static std::deque<ggml_backend_reg> entries;
        std::vector<ggml_backend_reg_t>     out{ggml_backend_cpu_reg()};
        for (size_t i = 0; i < gk_backend_dev_count(); ++i) {
            const std::string kind  = kind_of(compat::to_ggml(gk_backend_dev_get(i)));
            bool              known = false;
            for (ggml_backend_reg_t r : out) {
                known = known || kind == r->name;
            }
            if (!known) {
                names.push_back(kind);
                entries.push_back({names.back().c_str()});
                out.push_back(&entries.back());
            }
        }
        return out;
    }();
    return list;
}

ggml_backend_feature * cpu_features(ggml_backend_reg_t reg) {
    gk_backend_dev_t dev = gk_backend_dev_count() > 0 ? gk_backend_dev_get(0) : nullptr;
    // layout.cpp asserts ggml_backend_feature is gk_backend_feature
    return dev ? const_cast<ggml_backend_feature *>(reinterpret_cast<const ggml_backend_feature *>(gk_backend_dev_features(dev)))
               : nullptr;
}

// The CPU device has no buffer types besides its own: an empty, NULL-terminated list.
ggml_backend_buffer_type_t * no_extra_buffer_types(ggml_backend_dev_t) {
    static ggml_backend_buffer_type_t none[] = {nullptr};
    return none;
}

void cpu_numa_init(ggml_numa_strategy numa) { ggml_numa_init(numa); }
bool cpu_is_numa() { return ggml_is_numa(); }

// The extension functions of the CPU registry, by the names ggml's CPU registry answers to.
struct proc {
    std::string_view name;
    void *           address;
};

const proc cpu_procs[] = {
    {"ggml_backend_set_n_threads", reinterpret_cast<void *>(&ggml_backend_cpu_set_n_threads)},
    {"ggml_backend_dev_get_extra_bufts", reinterpret_cast<void *>(&no_extra_buffer_types)},
    {"ggml_backend_get_features", reinterpret_cast<void *>(&cpu_features)},
    {"ggml_backend_set_abort_callback", reinterpret_cast<void *>(&ggml_backend_cpu_set_abort_callback)},
    {"ggml_backend_cpu_numa_init", reinterpret_cast<void *>(&cpu_numa_init)},
    {"ggml_backend_cpu_is_numa", reinterpret_cast<void *>(&cpu_is_numa)},
    {"ggml_backend_cpu_set_use_ref", reinterpret_cast<void *>(&ggml_backend_cpu_set_use_ref)},
    {"ggml_threadpool_new", reinterpret_cast<void *>(&ggml_threadpool_new)},
    {"ggml_threadpool_free", reinterpret_cast<void *>(&ggml_threadpool_free)},
    {"ggml_backend_cpu_set_threadpool", reinterpret_cast<void *>(&ggml_backend_cpu_set_threadpool)},
};

} // namespace

extern "C" {

size_t ggml_backend_reg_count(void) { return regs().size(); }

ggml_backend_reg_t ggml_backend_reg_get(size_t index) { return index < regs().size() ? regs()[index] : nullptr; }

ggml_backend_reg_t ggml_backend_reg_by_name(const char * name) {
    for (ggml_backend_reg_t r : regs()) {
        if (name && strcasecmp(name, r->name) == 0) {
            return r;
        }
    }
    return nullptr;
}

const char * ggml_backend_reg_name(ggml_backend_reg_t reg) { return reg ? reg->name : nullptr; }

size_t ggml_backend_reg_dev_count(ggml_backend_reg_t reg) {
    size_t n = 0;
    for (size_t i = 0; reg && i < gk_backend_dev_count(); ++i) {
        n += kind_of(compat::to_ggml(gk_backend_dev_get(i))) == reg->name;
    }
    return n;
}

ggml_backend_dev_t ggml_backend_reg_dev_get(ggml_backend_reg_t reg, size_t index) {
    for (size_t i = 0; reg && i < gk_backend_dev_count(); ++i) {
        ggml_backend_dev_t dev = compat::to_ggml(gk_backend_dev_get(i));
        if (kind_of(dev) == reg->name && index-- == 0) {
            return dev;
        }
    }
    return nullptr;
}

void * ggml_backend_reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    if (reg != ggml_backend_cpu_reg() || !name) {  // the other kinds have no extension functions
        return nullptr;
    }
    for (const proc & p : cpu_procs) {
        if (p.name == name) {
            return p.address;
        }
    }
    return nullptr;
}

// Compat's registry entries are gk's device kinds, all registered from the start; a
// program can only hold those (a backend of its own needs ggml-backend-impl.h's vtables,
// which compat does not have). As in ggml, NULL and an entry already registered are ignored.
void ggml_backend_register(ggml_backend_reg_t reg) {
    for (ggml_backend_reg_t r : regs()) {
        if (reg == nullptr || reg == r) {
            return;
        }
    }
    ggml_abort(__FILE__, __LINE__,
               "ggml_backend_register: %p is not one of compat's registry entries (gk's backends are built in; a "
               "backend of one's own needs ggml-backend-impl.h, which compat does not provide)",
               static_cast<void *>(reg));
}

ggml_backend_reg_t ggml_backend_dev_backend_reg(ggml_backend_dev_t device) {
    return device ? ggml_backend_reg_by_name(kind_of(device).c_str()) : nullptr;
}

void ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props) {
    *props             = {};
    props->name        = ggml_backend_dev_name(device);
    props->description = ggml_backend_dev_description(device);
    props->type        = ggml_backend_dev_type(device);
    ggml_backend_dev_memory(device, &props->memory_free, &props->memory_total);
    // gk's CPU buffers over caller memory need a GK_MEM_ALIGN (64-byte) aligned pointer, and
    // GGUF data is only 32-byte aligned: a caller that asks (llama.cpp with mmap) would be
    // refused for half of its files, so the capability is not advertised and such callers
    // allocate buffers and copy instead. ggml_backend_dev_buffer_from_host_ptr still works
    // for aligned pointers.
    props->caps.buffer_from_host_ptr = false;
}

ggml_backend_buffer_type_t ggml_backend_dev_host_buffer_type(ggml_backend_dev_t device) { return nullptr; }

ggml_backend_buffer_t ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void * ptr, size_t size,
                                                            size_t max_tensor_size) {
    return compat::to_ggml(gk_backend_cpu_buffer_from_ptr(ptr, size));
}

bool ggml_backend_dev_offload_op(ggml_backend_dev_t device, const struct ggml_tensor * op) { return false; }

ggml_backend_reg_t ggml_backend_load(const char * path) {
    std::fprintf(stderr, "ggml_backend_load: %s: gk's backends are built in; nothing is loaded\n", path ? path : "(null)");
    return nullptr;
}

void ggml_backend_unload(ggml_backend_reg_t reg) {}
void ggml_backend_load_all(void) {}
void ggml_backend_load_all_from_path(const char * dir_path) {}

} // extern "C"
