// kernel_set.cpp - choosing the kernel set at run time (kernel_set.h), and the public
// lookups that go through it.
#include "kernel_set.h"

#include "cpu_features.h"
#include "vec_dot.h"
#include "vec_dot_tile.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <strings.h>
#include <vector>

// The entry of each compilation of the kernel sources; CMake defines GK_KERNEL_SET_<NAME>
// for the extra sets it builds.
extern "C" const gk::cpu::kernel_set * gk_cpu_kernel_set_base();
#if defined(GK_KERNEL_SET_AVX512)
extern "C" const gk::cpu::kernel_set * gk_cpu_kernel_set_avx512();
#endif
#if defined(GK_KERNEL_SET_AVX2)
extern "C" const gk::cpu::kernel_set * gk_cpu_kernel_set_avx2();
#endif

namespace gk::cpu {
namespace {

/// The extra sets, best first, with what the host needs to run each.
std::vector<const kernel_set *> find_runnable() {
    std::vector<const kernel_set *> sets;
    [[maybe_unused]] const cpu_features & host = host_cpu();
#if defined(GK_KERNEL_SET_AVX512)
    if (host.avx512 && host.avx512vnni) {
        sets.push_back(gk_cpu_kernel_set_avx512());
    }
#endif
#if defined(GK_KERNEL_SET_AVX2)
    if (host.avx2) {
        sets.push_back(gk_cpu_kernel_set_avx2());
    }
#endif
    sets.push_back(gk_cpu_kernel_set_base());  // compiled for the build's target: the host runs it
    return sets;
}

const kernel_set * choose(std::span<const kernel_set * const> sets) {
    const char * want = std::getenv("GK_CPU_LEVEL");
    if (!want || !*want) {
        return sets.front();
    }
    for (const kernel_set * s : sets) {
        if (strcasecmp(s->name, want) == 0) {
            return s;
        }
    }
    std::string have;
    for (const kernel_set * s : sets) {
        have += std::string(have.empty() ? "" : ", ") + s->name;
    }
    std::fprintf(stderr, "gk: GK_CPU_LEVEL=%s is not a level this build runs here (%s); using %s\n", want,
                 have.c_str(), sets.front()->name);
    return sets.front();
}

} // namespace

std::span<const kernel_set * const> runnable_kernel_sets() {
    static const std::vector<const kernel_set *> sets = find_runnable();
    return sets;
}

const kernel_set & active_kernel_set() {
    static const kernel_set * const set = choose(runnable_kernel_sets());
    return *set;
}

const vec_dot_traits * get_vec_dot_traits(gk_type type) { return active_kernel_set().vec_dot(type); }

const tile_kernel * get_tile_kernel(gk_type type) { return active_kernel_set().tile(type); }

vec_mad_fn get_vec_mad(gk_type type) { return active_kernel_set().vec_mad(type); }

const exp_kernels & get_exp_kernels() { return active_kernel_set().exp(); }

const char * dot_path_name(dot_path p) {
    switch (p) {
        case dot_path::float_simd: return "float-simd";
        case dot_path::float_scalar: return "float-scalar";
        case dot_path::bf16_dpbf16: return "vdpbf16ps";
        case dot_path::int_simd: return "int-simd";
        case dot_path::int_scalar: return "int-scalar";
    }
    return "?";
}

bool vec_dot_row_ok(gk_type type, int64_t n) {
    const vec_dot_traits * t = get_vec_dot_traits(type);
    return t && gk_row_len_ok(type, n) && gk_row_len_ok(t->vec_dot_type, n);
}

} // namespace gk::cpu
