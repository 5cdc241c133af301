// kernel_set_entry.cpp - the entry function of one compilation of the kernel sources
// (kernel_set.h): gk_cpu_kernel_set_<GK_KERNEL_SET>, the only symbol an extra set keeps
// global. GK_KERNEL_SET is the set's suffix (base for the build's own compilation).
#include "kernel_set.h"

#include "vec_dot_impl.h"
#include "vec_dot_tile_impl.h"

#if !defined(GK_KERNEL_SET)
#define GK_KERNEL_SET base
#endif
#define GK_KERNEL_SET_ENTRY2(suffix) gk_cpu_kernel_set_##suffix
#define GK_KERNEL_SET_ENTRY(suffix) GK_KERNEL_SET_ENTRY2(suffix)

extern "C" const gk::cpu::kernel_set * GK_KERNEL_SET_ENTRY(GK_KERNEL_SET)() {
    static constexpr gk::simd::features f = gk::simd::compiled_features();
    static const gk::cpu::kernel_set    set{f.level, f, gk::cpu::vec_dot_table, gk::cpu::tile_table,
                                         gk::cpu::vec_mad_table, gk::cpu::exp_kernels_table};
    return &set;
}
