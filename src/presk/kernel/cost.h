// The layout cost model (../shared/seeds/presk-native.txt, "Contractions: one builder, a
// layout space": "what the tile buys is fewer loads per multiply-add"; docs/presk.md, "presk
// plan"). It predicts a nest's time from its kernels' text in machine operations: each load,
// store and real arithmetic operation (a vector one counts once) once per iteration of its
// enclosing loops, a loop iteration as one, and an innermost loop whose accumulators and
// operands do not fit the machine's registers paying a store and a load per assignment. A
// split divides its loop's share by min(workers, iterations). It is a ranking, not a clock.
#pragma once
#include <vector>

#include "kernel/ir.h"

namespace presk::kernel {

/// What the model counts for a sequence of kernels (a nest's pack and product).
struct Cost {
    double ops = 0;           // predicted machine operations on the critical worker
    double loads = 0;         // register loads (scalar or vector), all workers together
    double multiply_adds = 0; // real multiplications, one per lane
    double loads_per_multiply_add() const { return multiply_adds > 0 ? loads / multiply_adds : 0; }
};

/// The cost of running `ks` in turn, each split as its split_depth and split_workers say (a
/// split whose loop split_loop does not find counts as none), on a machine with `registers`
/// vector registers (16 on x86-64 below AVX-512, 32 on AVX-512 and AArch64).
Cost cost(const std::vector<Kernel>& ks, int registers);

/// The vector registers of the host (16 or 32), for cost().
int host_registers();

} // namespace presk::kernel
