// compute.cpp - the CPU compute pass: gk_graph_compute.
//
// 1. Plan: walk the nodes, skip the layout ops and empty tensors, look up each
//    remaining node's kernel, check that it and its sources have data, and size the
//    per-thread scratch (the largest work size of any step).
// 2. Run: fork the pool; every thread walks the steps, calls the step's kernel with its
//    ith, and meets the others at a barrier before the next step - one barrier per
//    node, because a node may read anything an earlier node wrote. After the barrier
//    every thread sees the same error state, so all stop at the same node. A kernel
//    that hands out its chunks at run time (next_chunk) counts them on a counter the
//    pass clears for it.
#include "../debug.h"
#include "../graph.h"
#include "../internal.h"
#include "compute.h"
#include "dispatch.h"
#include "pool.h"
#include "rows.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace gk::cpu {

void compute_error::set(gk_status status, const char * fmt, ...) {
    bool expected = false;
    if (!claimed_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(message_, sizeof(message_), fmt, ap);
    va_end(ap);
    status_.store(status, std::memory_order_release);
}

void * scratch::take(size_t bytes) {
    void * p = base_ + used_;
    used_ += scratch_bytes(bytes);
    return used_ <= size_ ? p : nullptr;
}

size_t default_work_size(const gk_tensor * dst) {
    size_t bytes = scratch_bytes(static_cast<size_t>(dst->ne[0]) * sizeof(float));
    for (const gk_tensor * s : dst->src) {
        if (s) {
            bytes += scratch_bytes(static_cast<size_t>(s->ne[0]) * sizeof(float));
        }
    }
    return bytes;
}

namespace {

struct step {
    gk_tensor *    node;
    int            index;  // in the graph, for messages
    const kernel * k;
};

struct run_state {
    const std::vector<step> * steps;
    thread_pool *             pool;
    unsigned char *           work;
    size_t                    work_stride;
    int                       nth;
    compute_error             error;
    const step *              failed = nullptr;  // the step that reported the error
    // next_chunk's counters, alternating by step: thread 0 clears the next step's while
    // the others may still use this step's; the barrier between them orders the clearing
    // before the next step's first claim.
    std::atomic<int64_t> claimed[2] = {0, 0};
};

/// FNV-1a over the tensor's bytes in index order (strides followed), for GK_NODE_HASH.
uint64_t hash_tensor(const gk_tensor * t) {
    uint64_t     h     = 0xcbf29ce484222325ull;
    const auto   mix   = [&h](const char * p, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            h = (h ^ static_cast<unsigned char>(p[i])) * 0x100000001b3ull;
        }
    };
    const bool   dense = t->nb[0] == gk_type_size(t->type);
    for (int64_t i3 = 0; i3 < t->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < t->ne[2]; ++i2) {
            for (int64_t i1 = 0; i1 < t->ne[1]; ++i1) {
                if (dense) {
                    mix(element_ptr(t, 0, i1, i2, i3), gk_row_size(t->type, t->ne[0]));
                    continue;
                }
                for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) {  // strided rows exist only for plain types
                    mix(element_ptr(t, i0, i1, i2, i3), gk_type_size(t->type));
                }
            }
        }
    }
    return h;
}

void worker(void * arg, int ith) {
    auto &         st = *static_cast<run_state *>(arg);
    compute_params p{ith,       st.nth, st.work + static_cast<size_t>(ith) * st.work_stride, st.work_stride,
                     &st.error, nullptr};
    size_t         j = 0;  // the step's position
    for (const step & s : *st.steps) {
        p.claimed = &st.claimed[j % 2];
        if (ith == 0) {
            st.claimed[(j + 1) % 2].store(0, std::memory_order_relaxed);
        }
        ++j;
        s.k->run(p, s.node);
        st.pool->barrier();
        if (st.error.failed()) {
            if (ith == 0) {
                st.failed = &s;
            }
            return;
        }
        if (debug().node_hash) {
            if (ith == 0) {
                std::fprintf(stderr, "gk: node %d %s %s %016llx\n", s.index, gk_op_symbol(s.node->op), s.node->name,
                             static_cast<unsigned long long>(hash_tensor(s.node)));
            }
            st.pool->barrier();  // the next node may overwrite this one (in place)
        }
    }
}

/// Checks a node before anything runs and adds its step; an error status (message in
/// ctx) when it cannot run.
gk_status plan_node(gk_context * ctx, gk_tensor * node, int index, std::vector<step> & steps, size_t & work) {
    char why[160];
    if (!supports(node, why, sizeof why)) {
        set_error(ctx, "compute: node %d '%s': %s", index, node->name, why);
        return GK_STATUS_UNSUPPORTED;
    }
    if (!node->data) {
        set_error(ctx, "compute: node %d '%s' (%s) has no data", index, node->name, gk_op_name(node->op));
        return GK_STATUS_INVALID_ARGUMENT;
    }
    for (int i = 0; i < GK_MAX_SRC; ++i) {
        const gk_tensor * s = node->src[i];
        if (s && !s->data && !gk_is_empty(s)) {
            set_error(ctx, "compute: node %d '%s' (%s): source %d '%s' has no data", index, node->name,
                      gk_op_name(node->op), i, s->name);
            return GK_STATUS_INVALID_ARGUMENT;
        }
    }
    const kernel & k = kernels().ops[node->op];
    const size_t   w = k.work_size ? k.work_size(node) : default_work_size(node);
    work             = w > work ? w : work;
    steps.push_back({node, index, &k});
    return GK_STATUS_SUCCESS;
}

gk_status compute(gk_cgraph * g, int n_threads, thread_pool & pool) {
    gk_context * ctx = g->ctx;
    const int    nth = n_threads < 1 ? 1 : (n_threads > 512 ? 512 : n_threads);

    std::vector<step> steps;
    size_t            work = 0;
    steps.reserve(static_cast<size_t>(g->n_nodes));
    for (int i = 0; i < g->n_nodes; ++i) {
        gk_tensor * node = g->nodes[i];
        if (is_layout_op(node->op) || gk_is_empty(node)) {
            continue;
        }
        const gk_status planned = plan_node(ctx, node, i, steps, work);
        if (planned != GK_STATUS_SUCCESS) {
            return planned;
        }
    }
    if (steps.empty()) {
        return GK_STATUS_SUCCESS;
    }
    const size_t stride = scratch_bytes(work);
    std::unique_ptr<unsigned char, decltype(&std::free)> buffer(
        static_cast<unsigned char *>(std::aligned_alloc(64, stride * static_cast<size_t>(nth) + 64)), &std::free);
    if (!buffer) {
        set_error(ctx, "compute: cannot allocate %zu bytes of scratch", stride * static_cast<size_t>(nth));
        return GK_STATUS_ALLOC_FAILED;
    }
    run_state st{&steps, &pool, buffer.get(), stride, nth, {}};
    if (!pool.run(nth, worker, &st)) {
        set_error(ctx, "compute: cannot start %d threads", nth);
        return GK_STATUS_FAILED;
    }
    if (st.error.failed()) {
        const step * f = st.failed;
        set_error(ctx, "compute: node %d '%s' (%s): %s", f->index, f->node->name, gk_op_name(f->node->op),
                  st.error.message());
        return st.error.status();
    }
    return GK_STATUS_SUCCESS;
}

} // namespace

gk_status graph_compute(gk_cgraph * graph, int n_threads, thread_pool & pool) {
    if (!graph) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    try {
        return compute(graph, n_threads, pool);
    } catch (const std::bad_alloc &) {
        set_error(graph->ctx, "compute: out of memory");
        return GK_STATUS_ALLOC_FAILED;
    }
}

} // namespace gk::cpu

extern "C" {

gk_status gk_graph_compute(gk_cgraph * graph, int n_threads) {
    // Without a backend the calling thread's pool does the work: its workers live until
    // the thread ends, so repeated computes pay the thread start-up once.
    thread_local gk::cpu::thread_pool pool;
    return gk::cpu::graph_compute(graph, n_threads, pool);
}

bool gk_cpu_supports_op(const gk_tensor * node) { return gk::cpu::supports(node, nullptr, 0); }

} // extern "C"
