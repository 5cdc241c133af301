// Launching a kernel compiled to machine code (native.h's presk_kernel_fn), on one thread or
// divided among a pool's workers (the seed's "Threads": a kernel whose outermost loop is
// parallel, above four million weighted operations, is split; "--threads 1 turns the split
// off"). Each iteration of the split loop is computed entirely by one worker, by the same
// code in the same order as on one thread, so every worker count gives the same bits.
#pragma once
#include <cstdint>
#include <optional>

#include "kernel/ir.h"
#include "kernel/native.h"
#include "kernel/pool.h"

namespace presk::kernel {

/// Iterations [lo, hi) of a split loop: piece `t` of `pieces` (0 <= t < pieces <= hi - lo).
/// The pieces are contiguous, in order, cover [lo, hi) and differ in length by at most one
/// (the first (hi - lo) % pieces are the longer ones): a fixed function of the range and the
/// count, never of timing.
struct Range {
    int64_t lo = 0, hi = 0;
};
Range piece(int64_t lo, int64_t hi, int64_t pieces, int64_t t);

/// How a kernel is launched, decided once per kernel: its split loop (split_loop), and whether
/// a launch on a pool divides it (its work exceeds `threshold`, kSplitWork by default; a test
/// gives 0 to divide every kernel that has a split loop; a plan's split, k.split_workers > 0,
/// divides it whatever its work, among that many workers at most).
struct LaunchPlan {
    std::optional<Split> split;
    bool divisible = false;
    int workers = 0;  // the most pieces a launch makes, 0 for the pool's size
};
LaunchPlan plan_launch(const Kernel& k, double threshold = kSplitWork);

/// Runs `code` (compiled from `k`, planned as `p`) on `bufs` (native.h's layout: the inputs,
/// then the output). When `pool` has more than one worker and `p` is divisible, the split
/// loop's range is divided into min(pool->size(), p.workers if set, hi - lo) pieces (piece())
/// run on the pool;
/// otherwise code.fn runs once, over the whole split loop's range (lo = hi = 0 when there is
/// none). Throws presk::Error with status_message() when the kernel fails (in a divided
/// launch, the failure of the lowest failing piece, which is the failure one thread meets
/// first), or naming the kernel when `code` has no function. The output is then partly
/// written and must be discarded.
void launch(const Kernel& k, const LaunchPlan& p, const NativeCode& code, void* const* bufs, Pool* pool);
/// launch(k, plan_launch(k), code, bufs, pool): for a kernel launched once.
inline void launch(const Kernel& k, const NativeCode& code, void* const* bufs, Pool* pool) {
    launch(k, plan_launch(k), code, bufs, pool);
}

} // namespace presk::kernel
