// pool.cpp - the fork-join pool of pool.h.
//
// Publication protocol: the caller writes the job (function, argument, thread count)
// and then increments generation_ with release order; a worker that observes the new
// generation with acquire order therefore sees the job. Each worker reports completion
// by incrementing done_ (release); the caller returns once it has seen nth-1 of them
// (acquire), so everything the workers wrote is visible to it. The caller cannot
// publish the next generation before every worker has finished the current one, so no
// worker ever misses or repeats a job.
#include "pool.h"

#include <system_error>

namespace gk::cpu {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/// Wait until `a` no longer holds `old`: spin a little (a barrier is usually short),
/// then sleep on the atomic.
template <class T>
void wait_while_equal(const std::atomic<T> & a, T old) {
    for (int spin = 0; spin < 2048; ++spin) {
        if (a.load(std::memory_order_acquire) != old) {
            return;
        }
        cpu_relax();
    }
    while (a.load(std::memory_order_acquire) == old) {
        a.wait(old, std::memory_order_acquire);
    }
}

} // namespace

thread_pool::~thread_pool() { stop_workers(); }

void thread_pool::stop_workers() {
    if (workers_.empty()) {
        return;
    }
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (std::thread & w : workers_) {
        w.join();
    }
    workers_.clear();
    stop_.store(false, std::memory_order_relaxed);
}

bool thread_pool::resize(int n_workers) {
    stop_workers();
    try {
        workers_.reserve(static_cast<size_t>(n_workers));
        // A worker may start running after the first job is published, so it is told the
        // generation to wait past rather than reading it itself.
        const uint32_t now = generation_.load(std::memory_order_relaxed);
        for (int i = 0; i < n_workers; ++i) {
            workers_.emplace_back(&thread_pool::worker_main, this, i + 1, now);
        }
    } catch (const std::exception &) {
        stop_workers();
        return false;
    }
    return true;
}

void thread_pool::worker_main(int ith, uint32_t seen) {
    for (;;) {
        wait_while_equal(generation_, seen);
        seen = generation_.load(std::memory_order_acquire);
        if (stop_.load(std::memory_order_relaxed)) {
            return;
        }
        job_fn_(job_arg_, ith);
        done_.fetch_add(1, std::memory_order_release);
        done_.notify_one();
    }
}

bool thread_pool::run(int nth, job_fn fn, void * arg) {
    if (nth < 1) {
        nth = 1;
    }
    if (static_cast<size_t>(nth - 1) != workers_.size() && !resize(nth - 1)) {
        return false;
    }
    nth_ = nth;
    arrived_.store(0, std::memory_order_relaxed);
    if (nth == 1) {
        fn(arg, 0);
        return true;
    }
    job_fn_  = fn;
    job_arg_ = arg;
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    fn(arg, 0);
    for (int d = done_.load(std::memory_order_acquire); d != nth - 1; d = done_.load(std::memory_order_acquire)) {
        wait_while_equal(done_, d);
    }
    return true;
}

void thread_pool::barrier() {
    if (nth_ == 1) {
        return;
    }
    const uint32_t phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == nth_) {
        arrived_.store(0, std::memory_order_relaxed);
        phase_.fetch_add(1, std::memory_order_release);
        phase_.notify_all();
    } else {
        wait_while_equal(phase_, phase);
    }
}

} // namespace gk::cpu
