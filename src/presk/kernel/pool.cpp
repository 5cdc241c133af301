// The worker pool. Each worker owns a cache line with a posting counter (`go`); the caller
// writes the job, bumps the counters of the workers it needs (release) and runs its own share;
// each posted worker runs its share and decrements `pending`, the last one waking the caller.
// A worker reads the job only after its counter moved and before it decrements `pending`, and
// the caller writes the next job only once `pending` is zero, so the job needs no lock.
//
// Waiting, both for a post and for `pending`, spins on pause instructions for a bounded time,
// then parks in std::atomic::wait (a futex on Linux; its notify makes no system call when
// nobody is parked). The seed's spin: about two milliseconds, as OpenMP's runtime does, and a
// few microseconds when the pool has more workers than the process has CPUs.
#include "kernel/pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>
#include <vector>

#include "lang/source.h"

namespace presk::kernel {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::nanoseconds kSpin = std::chrono::milliseconds(2);
constexpr std::chrono::nanoseconds kSpinOversubscribed = std::chrono::microseconds(5);

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#else
    std::this_thread::yield();
#endif
}

// Waits until a.load() != old (acquire), spinning for `budget` before parking; returns the
// new value.
template <class T>
T wait_change(const std::atomic<T>& a, T old, std::chrono::nanoseconds budget) {
    T v = a.load(std::memory_order_acquire);
    if (v != old) return v;
    const Clock::time_point start = Clock::now();
    for (uint32_t i = 1;; ++i) {
        cpu_pause();
        if ((v = a.load(std::memory_order_acquire)) != old) return v;
        if (i % 64 == 0 && Clock::now() - start > budget) break;
    }
    for (;;) {
        a.wait(old, std::memory_order_acquire);
        if ((v = a.load(std::memory_order_acquire)) != old) return v;
    }
}

} // namespace

int default_threads() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n >= 1) return n;
    }
    return std::max(1, (int)std::thread::hardware_concurrency());
}

struct alignas(64) Slot {
    std::atomic<uint32_t> go{0};
};

struct Pool::State {
    std::chrono::nanoseconds spin{};
    std::vector<Slot> slots;  // slots[w] for worker w >= 1 (slots[0] unused: the caller)
    std::vector<std::thread> threads;
    std::atomic<bool> stop{false};
    // The job, written by the caller before it posts, read by the posted workers.
    TaskFn fn = nullptr;
    void* ctx = nullptr;
    int64_t n = 0;
    int64_t p = 0;
    alignas(64) std::atomic<uint32_t> pending{0};

    explicit State(int workers) : slots((size_t)workers) {}

    void post(int w) {
        slots[(size_t)w].go.fetch_add(1, std::memory_order_release);
        slots[(size_t)w].go.notify_one();
    }

    void work(int w) {
        uint32_t seen = 0;
        for (;;) {
            seen = wait_change(slots[(size_t)w].go, seen, spin);
            if (stop.load(std::memory_order_acquire)) return;
            const TaskFn f = fn;
            void* const c = ctx;
            const int64_t count = n, step = p;
            for (int64_t i = w; i < count; i += step) f(c, i);
            if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) pending.notify_one();
        }
    }

    void stop_and_join() {
        stop.store(true, std::memory_order_release);
        for (size_t w = 1; w <= threads.size(); ++w) post((int)w);
        for (std::thread& t : threads) t.join();
        threads.clear();
    }
};

Pool::Pool(int workers) {
    if (workers < 1) throw Error({}, "worker pool: " + std::to_string(workers) + " workers (at least 1)");
    size_ = workers;
    state_ = std::make_unique<State>(workers);
    state_->spin = workers > default_threads() ? kSpinOversubscribed : kSpin;
    state_->threads.reserve((size_t)workers - 1);
    for (int w = 1; w < workers; ++w) {
        try {
            state_->threads.emplace_back([s = state_.get(), w] { s->work(w); });
        } catch (const std::system_error& e) {
            state_->stop_and_join();
            throw Error({}, "worker pool: cannot start worker " + std::to_string(w) + " of " + std::to_string(workers) +
                                ": " + e.what());
        }
    }
}

Pool::~Pool() { state_->stop_and_join(); }

void Pool::run_erased(int64_t n, TaskFn fn, void* ctx) {
    if (n <= 0) return;
    const int64_t p = std::min<int64_t>(n, size_);
    if (p == 1) {
        for (int64_t i = 0; i < n; ++i) fn(ctx, i);
        return;
    }
    State& s = *state_;
    s.fn = fn;
    s.ctx = ctx;
    s.n = n;
    s.p = p;
    s.pending.store((uint32_t)(p - 1), std::memory_order_relaxed);
    for (int w = 1; w < p; ++w) s.post(w);
    for (int64_t i = 0; i < n; i += p) fn(ctx, i);
    for (uint32_t left = s.pending.load(std::memory_order_acquire); left != 0;) left = wait_change(s.pending, left, s.spin);
}

} // namespace presk::kernel
