// gk-bench-ggml.cpp - gk-bench's reference side: the same graphs as gk-bench-gk.cpp built
// with a reference ggml and run by its CPU compute pass (ggml_graph_plan +
// ggml_graph_compute, one work buffer kept between runs) on a thread pool kept between runs,
// as llama.cpp keeps one per context (ggml_threadpool_new with its default polling; paused at
// the end of a burst). The tensors live in a plain context, so ggml computes through its
// vec_dot kernels or its tiled path (no repacked weights).
#include "gk-bench.h"

#include "ggml-cpu.h"
#include "ggml.h"

#include <cstdlib>
#include <cstring>

namespace gk::bench {
namespace {

constexpr size_t k_graph_nodes = 8;

/// True when ggml's CPU pass has a dot product for weight type t and rows of k elements
/// are whole blocks of it and of its activation type (ggml asserts otherwise).
bool ggml_can_dot(ggml_type t, int64_t k) {
    const ggml_type_traits_cpu * cpu = ggml_get_type_traits_cpu(t);
    return cpu && cpu->vec_dot && k % ggml_blck_size(t) == 0 && k % ggml_blck_size(cpu->vec_dot_type) == 0;
}

class ggml_matmul final : public matmul {
public:
    ~ggml_matmul() override {
        if (pool_) {
            ggml_threadpool_free(pool_);
        }
        ggml_free(ctx_);
        std::free(work_);
    }

    bool build(const problem & p, std::string & err) {
        const auto t = static_cast<ggml_type>(p.type);
        if (!ggml_can_dot(t, p.k)) {
            err = std::string("ggml has no CPU dot product for ") + ggml_type_name(t) + " rows of " +
                  std::to_string(p.k);
            return false;
        }
        const auto copies = static_cast<size_t>(p.copies);
        size_t     mem    = copies * (ggml_tensor_overhead() + p.weight.size() + 256) + (1u << 16);
        for (const shape & s : p.shapes) {
            mem += copies * (3 * ggml_tensor_overhead() + ggml_graph_overhead_custom(k_graph_nodes, false) +
                             static_cast<size_t>(s.k * s.n + s.m * s.n) * sizeof(float) + 256);
        }
        mem_ = std::make_unique<arena>(mem);
        ctx_ = mem_->data() ? ggml_init({mem_->size(), mem_->data(), false}) : nullptr;
        if (!ctx_) {
            err = "ggml_init: cannot allocate " + std::to_string(mem) + " bytes";
            return false;
        }
        for (size_t c = 0; c < copies; ++c) {
            build_copy(p);
        }
        turns_ = std::make_unique<copy_turns>(p.shapes.size(), copies);
        return true;
    }

    /// One copy of the weight and its graphs, appended: graphs_[copy * shapes + s].
    void build_copy(const problem & p) {
        ggml_tensor * w = ggml_new_tensor_2d(ctx_, static_cast<ggml_type>(p.type), p.k, p.rows);
        std::memcpy(w->data, p.weight.data(), p.weight.size());
        for (size_t i = 0; i < p.shapes.size(); ++i) {
            const shape & s  = p.shapes[i];
            ggml_tensor * wv = s.m == p.rows ? w : ggml_view_2d(ctx_, w, s.k, s.m, w->nb[1], 0);
            ggml_tensor * b  = ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, s.k, s.n);
            std::memcpy(b->data, p.act[i].data(), p.act[i].size() * sizeof(float));
            ggml_tensor * out = ggml_mul_mat(ctx_, wv, b);
            ggml_cgraph * g   = ggml_new_graph_custom(ctx_, k_graph_nodes, false);
            ggml_build_forward_expand(g, out);
            graphs_.push_back(g);
            outs_.push_back(out);
        }
    }

    bool run(size_t s, int n_threads, std::string & err) override {
        if (!pool_ || pool_threads_ != n_threads) {
            if (pool_) {
                ggml_threadpool_free(pool_);
            }
            ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
            pool_                      = ggml_threadpool_new(&tpp);
            pool_threads_              = n_threads;
            if (!pool_) {
                err = "ggml_threadpool_new failed for " + std::to_string(n_threads) + " threads";
                return false;
            }
        }
        const size_t g    = turns_->take(s);
        ggml_cplan   plan = ggml_graph_plan(graphs_[g], n_threads, pool_);
        if (plan.work_size > work_size_) {
            std::free(work_);
            work_size_ = (plan.work_size + 63) / 64 * 64;
            work_      = std::aligned_alloc(64, work_size_);
            if (!work_) {
                work_size_ = 0;
                err        = "cannot allocate " + std::to_string(plan.work_size) + " bytes of ggml work buffer";
                return false;
            }
        }
        plan.work_data          = static_cast<uint8_t *>(work_);
        const ggml_status st    = ggml_graph_compute(graphs_[g], &plan);
        if (st != GGML_STATUS_SUCCESS) {
            err = std::string("ggml_graph_compute: ") + ggml_status_to_string(st);
            return false;
        }
        return true;
    }

    void rest() override {
        if (pool_) {
            ggml_threadpool_pause(pool_);
        }
    }

    const float * result(size_t s) const override { return static_cast<const float *>(outs_[turns_->last(s)]->data); }

private:
    std::unique_ptr<arena>      mem_;  // the context's memory; freed after ggml_free (declared first)
    ggml_context *              ctx_       = nullptr;
    std::vector<ggml_cgraph *>  graphs_;
    std::vector<ggml_tensor *>  outs_;
    std::unique_ptr<copy_turns> turns_;
    ggml_threadpool *           pool_         = nullptr;  // for the thread count of the last run
    int                         pool_threads_ = 0;
    void *                      work_      = nullptr;
    size_t                      work_size_ = 0;
};

} // namespace

std::unique_ptr<matmul> make_ggml_matmul(const problem & p, std::string & err) {
    ggml_cpu_init();
    auto mm = std::make_unique<ggml_matmul>();
    if (!mm->build(p, err)) {
        return nullptr;
    }
    return mm;
}

} // namespace gk::bench
