// Launching a compiled kernel, whole or in pieces of its split loop (launch.h).
#include "kernel/launch.h"

#include <algorithm>
#include <vector>

#include "lang/source.h"

namespace presk::kernel {

Range piece(int64_t lo, int64_t hi, int64_t pieces, int64_t t) {
    const int64_t q = (hi - lo) / pieces, r = (hi - lo) % pieces;
    const int64_t start = lo + q * t + std::min(t, r);
    return {start, start + q + (t < r ? 1 : 0)};
}

LaunchPlan plan_launch(const Kernel& k, double threshold) {
    LaunchPlan p;
    p.split = split_loop(k);
    p.divisible = p.split && (k.split_workers > 1 || (k.split_workers == 0 && work(k) > threshold));
    p.workers = k.split_workers;
    return p;
}

void launch(const Kernel& k, const LaunchPlan& p, const NativeCode& code, void* const* bufs, Pool* pool) {
    if (!code.fn) throw Error({}, "kernel " + k.name + ": no machine code to launch");
    const std::optional<Split>& split = p.split;
    const int64_t lo = split ? split->lo : 0, hi = split ? split->hi : 0;
    int64_t err[3] = {0, 0, 0};
    if (!pool || pool->size() < 2 || !p.divisible) {
        const int status = code.fn(bufs, lo, hi, err);
        if (status != PRESK_OK) throw Error({}, status_message(k, status, err));
        return;
    }
    // One status and error triple per piece; the lowest failing piece is reported.
    struct Result {
        int status = PRESK_OK;
        int64_t err[3] = {0, 0, 0};
    };
    const int64_t pieces = std::min<int64_t>({pool->size(), p.workers > 0 ? p.workers : pool->size(), hi - lo});
    std::vector<Result> results((size_t)pieces);
    const presk_kernel_fn fn = code.fn;
    pool->run(pieces, [&](int64_t t) {
        const Range r = piece(lo, hi, pieces, t);
        results[(size_t)t].status = fn(bufs, r.lo, r.hi, results[(size_t)t].err);
    });
    for (const Result& r : results) {
        if (r.status != PRESK_OK) throw Error({}, status_message(k, r.status, r.err));
    }
}

} // namespace presk::kernel
