// cpu.cpp - the CPU backend: host-memory buffers (owned, or over caller memory), the
// CPU device, and a backend that runs the compute pass on n threads of its own pool.
#include "impl.h"

#include "../cpu/cpu_features.h"
#include "../cpu/compute.h"
#include "../cpu/dispatch.h"
#include "../cpu/kernel_set.h"
#include "../cpu/pool.h"
#include "../cpu/vec_dot.h"
#include "../debug.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <unistd.h>

namespace gk {
namespace {

// ---- buffers --------------------------------------------------------------------------

void * cpu_base(gk_backend_buffer_t b) { return b->context; }

void cpu_free_owned(gk_backend_buffer_t b) { std::free(b->context); }

void cpu_clear(gk_backend_buffer_t b, uint8_t value) { std::memset(b->context, value, b->size); }

/// The table of a buffer over host memory; `owned` buffers free it.
gk_backend_buffer_i cpu_buffer_iface(bool owned) {
    gk_backend_buffer_i i{};
    i.free_buffer   = owned ? cpu_free_owned : nullptr;
    i.get_base      = cpu_base;
    i.memset_tensor = host::memset_tensor;
    i.set_tensor    = host::set_tensor;
    i.get_tensor    = host::get_tensor;
    i.clear         = cpu_clear;
    return i;
}

// ---- buffer type ----------------------------------------------------------------------

const char * cpu_buft_name(gk_backend_buffer_type_t) { return "CPU"; }

gk_backend_buffer_t cpu_alloc_buffer(gk_backend_buffer_type_t buft, size_t size) {
    // Round up to the alignment (aligned_alloc requires it); a 0-byte buffer still gets
    // one aligned block so that its base is a valid address.
    const size_t bytes = size == 0 ? GK_MEM_ALIGN : (size + GK_MEM_ALIGN - 1) / GK_MEM_ALIGN * GK_MEM_ALIGN;
    if (bytes < size) {
        backend_error("CPU buffer: %zu bytes overflow when aligned", size);
        return nullptr;
    }
    void * mem = std::aligned_alloc(GK_MEM_ALIGN, bytes);
    if (!mem) {
        backend_error("CPU buffer: cannot allocate %zu bytes", size);
        return nullptr;
    }
    debug_fill_fresh(mem, bytes);
    gk_backend_buffer_t b = buffer_init(buft, cpu_buffer_iface(true), mem, size);
    if (!b) {
        std::free(mem);
    }
    return b;
}

size_t cpu_buft_alignment(gk_backend_buffer_type_t) { return GK_MEM_ALIGN; }

bool cpu_buft_is_host(gk_backend_buffer_type_t) { return true; }

// ---- backend --------------------------------------------------------------------------

/// A CPU backend: its thread count and its own pool of workers.
struct cpu_backend_context {
    int              n_threads;
    cpu::thread_pool pool;
};

const char * cpu_backend_name(gk_backend_t) { return "CPU"; }

void cpu_backend_free(gk_backend_t b) { delete static_cast<cpu_backend_context *>(b->context); }

gk_status cpu_graph_compute(gk_backend_t b, gk_cgraph * graph) {
    auto * ctx = static_cast<cpu_backend_context *>(b->context);
    return cpu::graph_compute(graph, ctx->n_threads, ctx->pool);
}

// ---- device ---------------------------------------------------------------------------

const char * cpu_dev_name(gk_backend_dev_t) { return "CPU"; }

const char * cpu_dev_description(gk_backend_dev_t) { return "gk CPU backend"; }

void cpu_dev_memory(gk_backend_dev_t, size_t * free, size_t * total) {
    const long page  = sysconf(_SC_PAGESIZE);
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long avail = sysconf(_SC_AVPHYS_PAGES);
    *total           = page > 0 && pages > 0 ? static_cast<size_t>(page) * static_cast<size_t>(pages) : 0;
    *free            = page > 0 && avail > 0 ? static_cast<size_t>(page) * static_cast<size_t>(avail) : 0;
}

enum gk_backend_dev_type cpu_dev_type(gk_backend_dev_t) { return GK_BACKEND_DEVICE_TYPE_CPU; }

gk_backend_t cpu_dev_init(gk_backend_dev_t, const char *) { return gk_backend_cpu_init(); }

gk_backend_buffer_type_t cpu_dev_buffer_type(gk_backend_dev_t) { return gk_backend_cpu_buffer_type(); }

bool cpu_dev_supports_op(gk_backend_dev_t, const gk_tensor * op) { return cpu::supports(op, nullptr, 0); }

bool cpu_dev_can_run_in_place(gk_backend_dev_t, const gk_tensor * node) { return cpu::runs_in_place(node->op); }

bool cpu_dev_supports_buft(gk_backend_dev_t, gk_backend_buffer_type_t buft) { return gk_backend_buft_is_host(buft); }

/// The kernel set in use (kernel_set.h: its SIMD level and flags), then what the host
/// offers (cpu_features.h); AMX is "1" when a tile instruction ran, "advertised" when
/// cpuid claims it but it cannot run; BF16_DOT the bf16 dot's path ("vdpbf16ps" where the
/// instruction runs it, vec_dot_bf16.cpp).
const gk_backend_feature * cpu_dev_features(gk_backend_dev_t) {
    static const simd::features & f = cpu::active_kernel_set().compiled;
    static const cpu::cpu_features & h = cpu::host_cpu();
    const auto yes = [](bool b) { return b ? "1" : "0"; };
    static const gk_backend_feature  list[] = {
         {"SIMD", f.level},
         {"AVX512", yes(f.avx512)},
         {"AVX2", yes(f.avx2)},
         {"FMA", yes(f.fma)},
         {"F16C", yes(f.f16c)},
         {"HOST_AVX512", yes(h.avx512)},
         {"HOST_AVX512_VNNI", yes(h.avx512vnni)},
         {"HOST_AVX_VNNI", yes(h.avxvnni)},
         {"HOST_AVX512_BF16", yes(h.avx512bf16)},
         {"BF16_DOT", cpu::dot_path_name(cpu::get_vec_dot_traits(GK_TYPE_BF16)->path)},
         {"HOST_AVX512_FP16", yes(h.avx512fp16)},
         {"HOST_AMX", h.amx_usable       ? "1"
                      : h.amx_advertised ? "advertised"
                                         : "0"},
         {"HOST_FAST_GATHER", yes(h.fast_gather)},
         {"HOST_NEON_DOTPROD", yes(h.dotprod)},
         {nullptr, nullptr},
    };
    return list;
}

gk_backend_device cpu_dev{
    {cpu_dev_name, cpu_dev_description, cpu_dev_memory, cpu_dev_type, cpu_dev_init, cpu_dev_buffer_type,
     cpu_dev_supports_op, cpu_dev_supports_buft, cpu_dev_features, cpu_dev_can_run_in_place},
    nullptr,
};

gk_backend_buffer_type cpu_buft{
    {cpu_buft_name, cpu_alloc_buffer, cpu_buft_alignment, nullptr, nullptr, cpu_buft_is_host},
    &cpu_dev,
    nullptr,
};

} // namespace

gk_backend_dev_t cpu_device() { return &cpu_dev; }

} // namespace gk

using gk::backend_error;

extern "C" {

gk_backend_t gk_backend_cpu_init(void) {
    const unsigned hw  = std::thread::hardware_concurrency();
    auto *         ctx = new (std::nothrow) gk::cpu_backend_context{hw > 0 ? static_cast<int>(std::min(hw, 512u)) : 1, {}};
    if (!ctx) {
        backend_error("cpu_init: out of memory");
        return nullptr;
    }
    gk_backend_t b = gk::backend_init({gk::cpu_backend_name, gk::cpu_backend_free, gk::cpu_graph_compute, nullptr},
                                      gk::cpu_device(), ctx);
    if (!b) delete ctx;
    return b;
}

bool gk_backend_is_cpu(gk_backend_t backend) { return backend && backend->iface.get_name == gk::cpu_backend_name; }

gk_status gk_backend_cpu_set_n_threads(gk_backend_t backend, int n_threads) {
    if (!gk_backend_is_cpu(backend)) {
        backend_error("cpu_set_n_threads: %s is not a CPU backend", backend ? gk_backend_name(backend) : "NULL");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (n_threads < 1) {
        backend_error("cpu_set_n_threads: n_threads = %d (need >= 1)", n_threads);
        return GK_STATUS_INVALID_ARGUMENT;
    }
    static_cast<gk::cpu_backend_context *>(backend->context)->n_threads = n_threads;
    return GK_STATUS_SUCCESS;
}

gk_backend_buffer_type_t gk_backend_cpu_buffer_type(void) { return &gk::cpu_buft; }

gk_backend_buffer_t gk_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    if (!ptr || reinterpret_cast<uintptr_t>(ptr) % GK_MEM_ALIGN != 0) {
        backend_error("cpu_buffer_from_ptr: pointer %p is %s", ptr, ptr ? "not aligned to GK_MEM_ALIGN" : "NULL");
        return nullptr;
    }
    return gk::buffer_init(gk_backend_cpu_buffer_type(), gk::cpu_buffer_iface(false), ptr, size);
}

} // extern "C"
