// kernel.h - what a CPU kernel is: its signature, the parameters it is called with, the
// partition helper every kernel uses, its scratch memory, and how it reports an error.
//
// The compute pass calls a node's kernel once on every thread of the pool (ith = 0 ..
// nth-1) and then waits at a barrier before the next node. A kernel computes the share
// of the output that split_rows() (or its own documented partition) gives thread ith,
// and nothing else. The partition may depend on nth; the arithmetic that produces an
// output element must not: each element is computed by one thread, by the same
// operations in the same order whatever nth is. That is what makes results bit
// identical at every thread count.
//
// A kernel never aborts: a bad value found at compute time (an index out of range) is
// reported with p.error->set() and the kernel returns; the pass stops after the node.
#pragma once

#include "gk/gk.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gk::cpu {

/// The first error of a compute (shared by all threads).
class compute_error {
public:
    /// Record status and message unless an error was already recorded.
    void set(gk_status status, const char * fmt, ...) __attribute__((format(printf, 3, 4)));
    bool failed() const { return status_.load(std::memory_order_acquire) != GK_STATUS_SUCCESS; }
    gk_status   status() const { return static_cast<gk_status>(status_.load(std::memory_order_acquire)); }
    const char * message() const { return message_; }

private:
    std::atomic<int> status_{GK_STATUS_SUCCESS};
    std::atomic<bool> claimed_{false};
    char             message_[256] = {};
};

/// Bump allocator over one thread's scratch memory (64-byte aligned pieces).
class scratch {
public:
    scratch(void * base, size_t size) : base_(static_cast<unsigned char *>(base)), size_(size) {}
    /// n floats; the kernel's work_size guaranteed they fit.
    float * floats(int64_t n) { return static_cast<float *>(take(static_cast<size_t>(n) * sizeof(float))); }
    void *  take(size_t bytes);

private:
    unsigned char * base_;
    size_t          size_;
    size_t          used_ = 0;
};

/// Bytes scratch::take() reserves for a request of `bytes` (alignment included).
constexpr size_t scratch_bytes(size_t bytes) { return (bytes + 63) / 64 * 64; }

struct compute_params {
    int                    ith;      // this thread, 0 .. nth-1
    int                    nth;      // threads taking part
    void *                 wdata;    // this thread's scratch
    size_t                 wsize;    // its size in bytes (at least the kernel's work_size)
    compute_error *        error;    // report with error->set(status, fmt, ...)
    std::atomic<int64_t> * claimed;  // chunks claimed beyond the first nth (next_chunk); 0 at the step's start

    scratch work() const { return scratch(wdata, wsize); }
};

/// The chunk thread p.ith computes after chunk `done` (-1 before its first), of n chunks
/// a kernel cut its output into; n or more when none is left. Thread ith first takes
/// chunk ith, then the lowest one nobody has claimed, so a thread that is slowed down
/// (a busy core, a stolen virtual CPU) holds up the others by one chunk at most. Which
/// thread computes a chunk then varies from run to run: a kernel that uses this must
/// compute each element the same way on any thread, as every kernel does.
inline int64_t next_chunk(const compute_params & p, int64_t done) {
    if (done < 0) {
        return p.ith;
    }
    return p.nth + p.claimed->fetch_add(1, std::memory_order_relaxed);
}

/// Computes (this thread's share of) dst from dst->src[...].
using kernel_fn = void (*)(const compute_params & p, gk_tensor * dst);
/// Scratch bytes one thread needs for dst; nullptr in a table entry means
/// default_work_size.
using work_size_fn = size_t (*)(const gk_tensor * dst);

struct kernel {
    kernel_fn    run       = nullptr;
    work_size_fn work_size = nullptr;
};

/// Room for one f32 row of dst and of each source (each rounded up to 64 bytes): what
/// the row-at-a-time kernels need for read_row / out_row.
size_t default_work_size(const gk_tensor * dst);

/// Rows [begin, end) of n that thread ith of nth computes: contiguous blocks of
/// ceil(n / nth), so a thread's rows are adjacent in memory.
struct row_range {
    int64_t begin;
    int64_t end;
};

inline row_range split_rows(int64_t n, int ith, int nth) {
    const int64_t per   = (n + nth - 1) / nth;
    const int64_t begin = per * ith < n ? per * ith : n;
    const int64_t end   = begin + per < n ? begin + per : n;
    return {begin, end};
}

/// Row index r of a tensor's ne[1]*ne[2]*ne[3] rows -> (i1, i2, i3).
struct row_index {
    int64_t i1, i2, i3;
};

inline row_index unflatten_row(const gk_tensor * t, int64_t r) {
    const int64_t i1 = r % t->ne[1];
    const int64_t i2 = (r / t->ne[1]) % t->ne[2];
    const int64_t i3 = r / (t->ne[1] * t->ne[2]);
    return {i1, i2, i3};
}

/// Call f(i1, i2, i3) for every row of dst in thread ith's share (split_rows over
/// gk_nrows(dst)): the partition of the row-at-a-time kernels.
template <class F>
void for_each_row(const compute_params & p, const gk_tensor * dst, F && f) {
    const row_range rr = split_rows(dst->ne[1] * dst->ne[2] * dst->ne[3], p.ith, p.nth);
    for (int64_t r = rr.begin; r < rr.end; ++r) {
        const row_index ri = unflatten_row(dst, r);
        f(ri.i1, ri.i2, ri.i3);
    }
}

} // namespace gk::cpu
