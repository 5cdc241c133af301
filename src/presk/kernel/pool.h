// The worker pool that divided launches run on (the seed's "Threads": "the executor now keeps
// N - 1 workers for its life ... a launch posts piece t to worker t, runs piece 0 on the
// calling thread and waits for the others"; "a waiting worker spins about two milliseconds
// before it parks ... and a few microseconds when the process's workers outnumber its cores").
//
// The pool only runs numbered tasks; which task computes what is the caller's fixed choice,
// so the results cannot depend on the number of workers or on their timing.
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

namespace presk::kernel {

/// The number of workers a pool gets by default (--threads' default): the CPUs this process
/// may run on (sched_getaffinity, so `taskset` is honoured), else
/// std::thread::hardware_concurrency, at least 1.
int default_threads();

/// A fixed set of persistent worker threads. Pool(n) starts n - 1 threads; the calling thread
/// is the n-th worker, so Pool(1) starts none and runs every task inline. A worker with nothing
/// to do spins a bounded number of pause instructions, then parks on a futex until the next
/// run. The destructor wakes and joins the workers (the pool must be idle).
///
/// One thread at a time calls run(), and not from inside a task. A task must not throw: it
/// runs inside a noexcept frame (an exception ends the process); report failures through the
/// task's own state, as launch() does.
class Pool {
public:
    /// Starts workers - 1 threads. Throws presk::Error when `workers` < 1 or a thread cannot be
    /// started (the threads already started are joined first).
    explicit Pool(int workers);
    ~Pool();
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    /// The number of workers, the calling thread included.
    int size() const { return size_; }

    /// Runs task(0) .. task(n - 1), each exactly once, on the first min(n, size()) workers:
    /// worker w (the caller is worker 0) runs tasks w, w + p, w + 2p, ... in that order, p
    /// = min(n, size()). Returns when every task has returned; the tasks' writes are then
    /// visible to the caller. Allocates nothing. n <= 0 runs nothing.
    template <class F>
    void run(int64_t n, F&& task) {
        using T = std::remove_reference_t<F>;
        run_erased(n, [](void* ctx, int64_t i) noexcept { (*static_cast<T*>(ctx))(i); },
                   const_cast<void*>(static_cast<const void*>(std::addressof(task))));
    }

private:
    using TaskFn = void (*)(void* ctx, int64_t i) noexcept;
    struct State;

    void run_erased(int64_t n, TaskFn fn, void* ctx);

    int size_ = 1;
    std::unique_ptr<State> state_;
};

} // namespace presk::kernel
