// The layout cost model (../shared/seeds/presk-native.txt, "Contractions: one builder, a layout
// space": "what the tile buys is fewer loads per multiply-add"; docs/presk.md, "The cost
// model"). It predicts a nest's time in cycles of one core from its kernels' text:
//  - issue: each load, store and real operation (a vector one counts once) and each loop
//    iteration is one operation, kIssue of them a cycle;
//  - an innermost loop's iteration takes at least its arithmetic over kPipes pipes, slowed
//    where its live values (accumulators carried across iterations and the values it assigns:
//    operand vectors, left elements) leave fewer free registers than the kLatency * kPipes
//    products in flight a full rate needs (Little's law), and at least kLatency cycles per
//    operation on its longest carried chain (one accumulator's adds are serial); values that do
//    not fit the registers at all are stored and reloaded at every iteration; a running sum
//    kept in memory (a store of a value read from the same element) makes each run of its loop
//    wait kLatency per operation on that path and kLatency for the store's forwarding;
//  - memory: each access's cache lines (kLine bytes) are fetched again unless reused along a
//    loop it does not move along (or moves along within a line) while one iteration of that
//    loop touches at most kL1Lines lines (lines that map to fewer sets count as more); a fetch
//    continuing a walk (the access advancing by less than a page per iteration of a loop)
//    costs kStreamed cycles, one that starts a walk, or whose walk is one of more than
//    kStreams interleaved ones, kJump.
// A split divides its loop's share by min(workers, iterations). It is a ranking, not a clock.
#pragma once
#include <vector>

#include "kernel/ir.h"

namespace presk::kernel {

/// The machine the model prices: constants of recent x86-64 and AArch64 cores (Zen 4, Ice
/// Lake, Neoverse V1), but the vector registers, which the host says (host_registers).
inline constexpr double kIssue = 6;       // operations issued per cycle
inline constexpr double kPipes = 2;       // vector multiplies (and adds) per cycle
inline constexpr double kLatency = 4;     // cycles of a multiply or add
inline constexpr double kLine = 64;       // bytes of a cache line
inline constexpr double kL1Lines = 512;   // lines of the level-1 data cache (32 KiB)
inline constexpr double kWays = 8;        // of them, the lines of one set (64 sets)
inline constexpr double kPage = 4096;     // bytes of a page: the prefetchers follow a walk within one
inline constexpr double kStreams = 256;   // walks followed at once (half the level-1 cache's lines)
inline constexpr double kStreamed = 1;    // cycles of a line that continues a walk
inline constexpr double kJump = 8;        // cycles of a line that does not

/// What the model counts for a sequence of kernels (a nest's pack and product).
struct Cost {
    double cycles = 0;        // predicted cycles on the critical worker: what plans rank by
    double memory = 0;        // of those, the cache lines' (the rest are the operations')
    double ops = 0;           // machine operations on the critical worker
    double loads = 0;         // register loads (scalar or vector), all workers together
    double multiply_adds = 0; // real multiplications, one per lane
    double lines = 0;         // cache lines fetched on the critical worker (streamed or not)
    double jumps = 0;         // of those, the ones that start or leave a contiguous walk
    double loads_per_multiply_add() const { return multiply_adds > 0 ? loads / multiply_adds : 0; }
};

/// The cost of running `ks` in turn, each split as its split_depth and split_workers say (a
/// split whose loop split_loop does not find counts as none), on a machine with `registers`
/// vector registers (16 on x86-64 below AVX-512, 32 on AVX-512 and AArch64).
Cost cost(const std::vector<Kernel>& ks, int registers);

/// The vector registers of the host (16 or 32), for cost().
int host_registers();

} // namespace presk::kernel
