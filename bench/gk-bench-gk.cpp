// gk-bench-gk.cpp - gk-bench's gk side: one context per problem holding the weight (or
// its copies), and per shape and copy a view of its first m rows, the activations and a
// one-node mul_mat graph.
#include "gk-bench.h"

#include "gk/gk.h"

#include <cstring>

namespace gk::bench {
namespace {

constexpr size_t k_graph_nodes = 8;  // one mul_mat (and its view) per graph

class gk_matmul final : public matmul {
public:
    ~gk_matmul() override { gk_free(ctx_); }

    bool build(const problem & p, std::string & err) {
        const auto copies = static_cast<size_t>(p.copies);
        size_t     mem    = copies * (gk_tensor_overhead() + p.weight.size() + GK_MEM_ALIGN) + (1u << 16);
        for (const shape & s : p.shapes) {
            mem += copies * (3 * gk_tensor_overhead() + gk_graph_overhead_custom(k_graph_nodes, false) +
                             static_cast<size_t>(s.k * s.n + s.m * s.n) * sizeof(float) + 2 * GK_MEM_ALIGN);
        }
        mem_ = std::make_unique<arena>(mem);
        ctx_ = mem_->data() ? gk_init({mem_->size(), mem_->data(), false}) : nullptr;
        if (!ctx_) {
            err = "gk_init: cannot allocate " + std::to_string(mem) + " bytes";
            return false;
        }
        for (size_t c = 0; c < copies; ++c) {
            if (!build_copy(p, err)) {
                return false;
            }
        }
        turns_ = std::make_unique<copy_turns>(p.shapes.size(), copies);
        return true;
    }

    /// One copy of the weight and its graphs, appended: graphs_[copy * shapes + s].
    bool build_copy(const problem & p, std::string & err) {
        gk_tensor * w = gk_new_tensor_2d(ctx_, p.type, p.k, p.rows);
        if (!w) {
            return fail(err);
        }
        std::memcpy(w->data, p.weight.data(), p.weight.size());
        for (size_t i = 0; i < p.shapes.size(); ++i) {
            const shape & s  = p.shapes[i];
            gk_tensor *   wv = s.m == p.rows ? w : gk_view_2d(ctx_, w, s.k, s.m, w->nb[1], 0);
            gk_tensor *   b  = gk_new_tensor_2d(ctx_, GK_TYPE_F32, s.k, s.n);
            if (b) {
                std::memcpy(b->data, p.act[i].data(), p.act[i].size() * sizeof(float));
            }
            gk_tensor *  out = gk_mul_mat(ctx_, wv, b);
            gk_cgraph *  g   = out ? gk_new_graph_custom(ctx_, k_graph_nodes, false) : nullptr;
            if (!g || gk_build_forward_expand(g, out) != GK_STATUS_SUCCESS) {
                return fail(err);
            }
            graphs_.push_back(g);
            outs_.push_back(out);
        }
        return true;
    }

    bool run(size_t s, int n_threads, std::string & err) override {
        const gk_status st = gk_graph_compute(graphs_[turns_->take(s)], n_threads);
        if (st != GK_STATUS_SUCCESS) {
            err = std::string("gk_graph_compute: ") + gk_status_name(st) + ": " + gk_last_error(ctx_);
            return false;
        }
        return true;
    }

    const float * result(size_t s) const override { return gk_get_data_f32(outs_[turns_->last(s)]); }

private:
    bool fail(std::string & err) const {
        err = gk_last_error(ctx_);
        return false;
    }

    std::unique_ptr<arena>    mem_;  // the context's memory; freed after gk_free (declared first)
    gk_context *              ctx_ = nullptr;
    std::vector<gk_cgraph *>  graphs_;
    std::vector<gk_tensor *>  outs_;
    std::unique_ptr<copy_turns> turns_;
};

} // namespace

std::unique_ptr<matmul> make_gk_matmul(const problem & p, std::string & err) {
    auto mm = std::make_unique<gk_matmul>();
    if (!mm->build(p, err)) {
        return nullptr;
    }
    return mm;
}

} // namespace gk::bench
