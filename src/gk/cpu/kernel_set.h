// kernel_set.h - the CPU kernels as sets compiled for different instruction-set levels,
// and the choice among them at run time.
//
// The kernel sources (src/gk/cpu/vec_dot*.cpp, vec_mad.cpp, vec_exp.cpp, act_convert.cpp,
// kernel_set_entry.cpp; the list is in CMakeLists.txt) are compiled once with the build's own flags - the base set,
// linked into gk as usual - and, in a portable x86-64 build (GK_NATIVE=OFF, the default),
// once more per level: AVX2 (x86-64-v3) and AVX-512 with VNNI (x86-64-v4). Each extra
// compilation is linked into one relocatable object whose symbols are all made local
// except its entry function (ld -r, then objcopy), so that the inline functions and
// templates every set instantiates from shared headers never mix between levels. At the
// first use, the best set the host can run (cpu_features.h) becomes the active one; all of
// gk reaches the kernels through it (get_vec_dot_traits, get_tile_kernel, get_vec_mad,
// get_exp_kernels).
//
// Every set computes the same bits wherever its level has fused multiply-add (all but a
// base set compiled without it): the orders in vec_dot.h and vec_dot_tile.h do not depend
// on the vector width. test-vec-dot sweeps each set the host runs against its twins and
// against the others.
//
// GK_CPU_LEVEL=scalar|avx2|avx512 (or the set's name) in the environment caps the choice,
// for tests and ablations; a level the build lacks or the host cannot run is ignored
// with a message on stderr.
#pragma once

#include "gk/gk-type.h"
#include "simd.h"
#include "vec_exp.h"
#include "vec_mad.h"

#include <span>

namespace gk::cpu {

struct vec_dot_traits;
struct tile_kernel;

/// The kernels of one compilation.
struct kernel_set {
    const char *     name;      // "scalar", "AVX2", "AVX512", "NEON": simd.h's level of the set
    simd::features   compiled;  // what the set was compiled for
    const vec_dot_traits * (*vec_dot)(gk_type type);  // the set's table (vec_dot.h)
    const tile_kernel * (*tile)(gk_type type);        // the set's tile kernels (vec_dot_tile.h)
    vec_mad_fn (*vec_mad)(gk_type type);              // the set's row updates (vec_mad.h)
    const exp_kernels & (*exp)();                     // the set's exp rows (vec_exp.h)
};

/// The sets of this build that the host can run, best first (the base set last).
std::span<const kernel_set * const> runnable_kernel_sets();

/// The set in use: the first of runnable_kernel_sets(), or the one GK_CPU_LEVEL names.
const kernel_set & active_kernel_set();

} // namespace gk::cpu
