// pool.cpp - the fork-join pool of pool.h.
//
// Publication protocol: the caller writes the job (function, argument, thread count)
// and then increments generation_ with release order; a worker that observes the new
// generation with acquire order therefore sees the job. Each worker reports completion
// by incrementing done_ (release); the caller returns once it has seen nth-1 of them
// (acquire), so everything the workers wrote is visible to it. The caller cannot
// publish the next generation before every worker has finished the current one, so no
// worker ever misses or repeats a job.
//
// Sleeping: a waiter spins briefly, then sleeps on the word itself (a futex on Linux),
// counted in sleepers_; whoever changes a word wakes its sleepers when there are any.
// Dekker's pattern makes that safe: the waiter counts itself (seq_cst) and then reads the
// word, the changer changes the word, fences (seq_cst) and then reads the count - so either
// the waiter sees the change or the changer sees the sleeper. On Linux the futex is called
// directly because std::atomic::wait spins with sched_yield before it sleeps, and on a
// machine with more runnable threads than cores each yield can wait out every other
// thread's time slice (llama-simple on stories260K through compat, 2 cores, load 16:
// 33 s with std::atomic::wait, 2.8 s with the futex).
#include "pool.h"

#include <system_error>

#if defined(__linux__)
#include <climits>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace gk::cpu {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/// Sleep while `a` holds `old` (the kernel compares, so a change just before is seen);
/// may return early, the caller checks again.
template <class T>
void sleep_on(const std::atomic<T> & a, T old) {
#if defined(__linux__)
    static_assert(sizeof(std::atomic<T>) == sizeof(uint32_t), "a futex is a 32-bit word");
    syscall(SYS_futex, &a, FUTEX_WAIT_PRIVATE, static_cast<uint32_t>(old), nullptr, nullptr, 0);
#else
    a.wait(old, std::memory_order_acquire);
#endif
}

/// Wait until `a` no longer holds `old`: spin a little (a barrier is usually short),
/// then sleep on the word, counted in `sleepers`.
template <class T>
void wait_while_equal(const std::atomic<T> & a, T old, std::atomic<int> & sleepers) {
    for (int spin = 0; spin < 2048; ++spin) {
        if (a.load(std::memory_order_acquire) != old) {
            return;
        }
        cpu_relax();
    }
    while (a.load(std::memory_order_acquire) == old) {
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        if (a.load(std::memory_order_seq_cst) == old) {
            sleep_on(a, old);
        }
        sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
}

/// After changing `a`: wake one or all of the threads asleep on it, when any sleeps.
template <class T>
void wake(std::atomic<T> & a, bool all, const std::atomic<int> & sleepers) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_relaxed) == 0) {
        return;
    }
#if defined(__linux__)
    syscall(SYS_futex, &a, FUTEX_WAKE_PRIVATE, all ? INT_MAX : 1, nullptr, nullptr, 0);
#else
    if (all) {
        a.notify_all();
    } else {
        a.notify_one();
    }
#endif
}

} // namespace

thread_pool::~thread_pool() { stop_workers(); }

void thread_pool::stop_workers() {
    if (workers_.empty()) {
        return;
    }
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    wake(generation_, true, sleepers_);
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
        wait_while_equal(generation_, seen, sleepers_);
        seen = generation_.load(std::memory_order_acquire);
        if (stop_.load(std::memory_order_relaxed)) {
            return;
        }
        job_fn_(job_arg_, ith);
        done_.fetch_add(1, std::memory_order_release);
        wake(done_, false, sleepers_);
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
    wake(generation_, true, sleepers_);
    fn(arg, 0);
    for (int d = done_.load(std::memory_order_acquire); d != nth - 1; d = done_.load(std::memory_order_acquire)) {
        wait_while_equal(done_, d, sleepers_);
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
        wake(phase_, true, sleepers_);
    } else {
        wait_while_equal(phase_, phase, sleepers_);
    }
}

} // namespace gk::cpu
