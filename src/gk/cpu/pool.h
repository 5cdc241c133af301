// pool.h - the persistent fork-join thread pool of the compute pass.
//
// run(nth, fn, arg) forks fn(arg, ith) on nth threads - the caller is thread 0 and
// nth-1 persistent workers are the rest - and joins them before returning. Workers
// live from one run to the next (they sleep between runs), so a graph pays the thread
// start-up once, not per compute. When nth changes the pool is resized: workers are
// started or stopped so that exactly nth-1 exist, and every worker takes part in
// every run.
//
// barrier() is the synchronisation inside a run (the compute pass calls it once per
// node): every one of the nth participants must call it the same number of times.
// It spins briefly and then sleeps, so oversubscribed thread counts (64 threads on two
// cores) stay correct and merely slow.
//
// Not reentrant: one run at a time per pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace gk::cpu {

class thread_pool {
public:
    using job_fn = void (*)(void * arg, int ith);

    thread_pool() = default;
    ~thread_pool();
    thread_pool(const thread_pool &)             = delete;
    thread_pool & operator=(const thread_pool &) = delete;

    /// Run fn(arg, ith) for ith in [0, nth) and wait for all; false (nothing run) when
    /// the worker threads cannot be started.
    bool run(int nth, job_fn fn, void * arg);

    /// Wait until all nth participants of the current run have arrived.
    void barrier();

private:
    bool resize(int n_workers);
    void stop_workers();
    void worker_main(int ith, uint32_t seen);

    std::vector<std::thread> workers_;

    // The current job, published by incrementing generation_.
    job_fn                job_fn_  = nullptr;
    void *                job_arg_ = nullptr;
    std::atomic<uint32_t> generation_{0};
    std::atomic<bool>     stop_{false};
    std::atomic<int>      done_{0};  // workers finished with the current job

    // Barrier state: arrivals in the current phase, and the phase counter waiters watch.
    int                   nth_ = 1;
    std::atomic<int>      arrived_{0};
    std::atomic<uint32_t> phase_{0};

    std::atomic<int> sleepers_{0};  // threads asleep on generation_, done_ or phase_
};

} // namespace gk::cpu
