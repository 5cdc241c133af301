// gk-bench.h - the pieces of gk-bench: one mul_mat problem (a weight of one type and the
// activations of each shape) and a library that computes it (gk, and ggml when built
// against a reference).
#pragma once

#include "gk/gk-type.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gk::bench {

/// One product: weight rows [0, m) of k elements times n activation columns of k elements
/// -> m x n f32 results (m fastest). 2 k m n floating-point operations.
struct shape {
    int64_t k = 0;
    int64_t m = 0;
    int64_t n = 0;
};

/// The inputs shared by every library: the weight, already encoded, and one activation
/// matrix per shape. Every shape has the weight's k and m <= rows.
struct problem {
    gk_type                         type = GK_TYPE_F32;
    int64_t                         k    = 0;
    int64_t                         rows = 0;
    std::vector<uint8_t>            weight;  // rows * gk_row_size(type, k) bytes, row-major
    std::vector<shape>              shapes;
    std::vector<std::vector<float>> act;     // act[s]: shapes[s].n columns of k floats
    int                             copies = 1;  // of the weight each library holds and runs
                                                 // in turn (gk-bench's --stream-mb)
};

/// The memory each library's context lives in: `bytes` rounded up to 2 MiB, 2 MiB-aligned
/// and advised as transparent huge pages (Linux), so that both libraries' weights sit in
/// the same kind of pages. Without it, whichever weight was allocated second read faster
/// (at n = 1 on a virtual machine the f32 / f16 ratios flipped from 0.86 / 0.80 to 1.09 /
/// 1.26 when ggml's weight was made first instead of gk's): the benchmark measured the
/// pages, not the kernels. data() is nullptr when the allocation fails.
class arena {
public:
    explicit arena(size_t bytes);
    ~arena();
    arena(const arena &)             = delete;
    arena & operator=(const arena &) = delete;
    void * data() const { return data_; }
    size_t size() const { return size_; }

private:
    void * data_ = nullptr;
    size_t size_ = 0;
};

/// Which copy of the weight each shape's runs take: in turn, graph copy * shapes + s.
class copy_turns {
public:
    copy_turns(size_t shapes, size_t copies) : copies_(copies), next_(shapes, 0), last_(shapes, 0) {}
    /// The graph of shape s's next run (it becomes its last).
    size_t take(size_t s) {
        last_[s] = next_[s] * next_.size() + s;
        next_[s] = (next_[s] + 1) % copies_;
        return last_[s];
    }
    /// The graph of shape s's last run.
    size_t last(size_t s) const { return last_[s]; }

private:
    size_t              copies_;
    std::vector<size_t> next_;  // per shape: the copy its next run takes
    std::vector<size_t> last_;  // per shape: the graph of its last run
};

/// One library's graphs for a problem: one mul_mat node per shape and copy of the weight,
/// built once and run many times.
class matmul {
public:
    virtual ~matmul() = default;
    /// Compute shape s on n_threads threads, on the next copy of the weight (they take
    /// turns). False with `err` set when the library reports an error.
    virtual bool run(size_t s, int n_threads, std::string & err) = 0;
    /// The end of a burst of runs: stop the library's threads from polling for work.
    virtual void rest() {}
    /// The m x n results of the last run of shape s (every copy gives the same).
    virtual const float * result(size_t s) const = 0;
};

/// gk's graphs (gk_mul_mat, gk_graph_compute). nullptr with `err` set when gk cannot
/// build them (no dot product for the type, arena too small).
std::unique_ptr<matmul> make_gk_matmul(const problem & p, std::string & err);

/// ggml's graphs (ggml_mul_mat, ggml_graph_compute) on the same bytes; present only in
/// builds against a reference (GK_HAVE_REFERENCE_CPU). nullptr with `err` set when ggml
/// has no CPU dot product for the type.
std::unique_ptr<matmul> make_ggml_matmul(const problem & p, std::string & err);

} // namespace gk::bench
