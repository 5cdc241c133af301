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
// 3. Small nodes run alone: a node whose work (node_cost) is below k_solo_cost is run by
//    thread 0 with nth = 1, and a run of such nodes needs one barrier at its end instead
//    of one per node (the other threads go straight to it). A barrier costs a few
//    microseconds; the norms, element-wise ops and small products of a token's decode
//    cost less than that. Every kernel gives the same bits at every thread count
//    (test-threading, and test-threading-partitioned with GK_NO_SOLO=1 so that small
//    nodes are partitioned too), so this changes no result.
#include "../debug.h"
#include "../graph.h"
#include "../internal.h"
#include "compute.h"
#include "dispatch.h"
#include "pool.h"
#include "rows.h"

#include <cmath>
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
    bool           solo;  // run by thread 0 alone (step 3 of the file comment)
};

// Work below which a node runs on one thread: about what a barrier costs, in the units
// of node_cost (multiply-adds or elements; about a nanosecond each).
constexpr double k_solo_cost = 16384;

/// A rough count of a node's work: multiply-adds for the products and attention, twice
/// the elements of the rows get_rows and set_rows move (not of the whole table: a
/// decode's cache writes are small nodes), else the elements it writes and reads. A
/// custom op is never small: its callback is promised the thread count (or its n_tasks),
/// as ggml's.
double node_cost(const gk_tensor * node) {
    const double out = static_cast<double>(gk_nelements(node));
    switch (node->op) {
    case GK_OP_MAP_CUSTOM1:
    case GK_OP_MAP_CUSTOM2:
    case GK_OP_MAP_CUSTOM3:
    case GK_OP_CUSTOM: return INFINITY;
    case GK_OP_MUL_MAT:
    case GK_OP_MUL_MAT_ID:
    case GK_OP_OUT_PROD: return out * static_cast<double>(node->src[0]->ne[0]);
    case GK_OP_FLASH_ATTN_EXT: return out * 2.0 * static_cast<double>(node->src[1]->ne[1]);
    case GK_OP_GET_ROWS: return 2.0 * out;
    case GK_OP_SET_ROWS: return 2.0 * static_cast<double>(gk_nelements(node->src[0]));
    default: break;
    }
    double in = 0.0;
    for (const gk_tensor * s : node->src) {
        in += s ? static_cast<double>(gk_nelements(s)) : 0.0;
    }
    return out + in;
}

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
    compute_params alone = p;  // a solo step's: thread 0 as the only thread
    alone.nth            = 1;
    const auto & steps   = *st.steps;
    // Runs steps [j, end): all threads on a parallel step, thread 0 alone on a run of solo
    // ones; then the barrier and the error check.
    for (size_t j = 0; j < steps.size();) {
        size_t end = j + 1;
        while (steps[j].solo && end < steps.size() && steps[end].solo) {
            ++end;
        }
        if (!steps[j].solo || ith == 0) {
            for (size_t k = j; k < end && !st.error.failed(); ++k) {
                compute_params & q = steps[k].solo ? alone : p;
                q.claimed          = &st.claimed[k % 2];
                if (ith == 0) {
                    st.claimed[(k + 1) % 2].store(0, std::memory_order_relaxed);
                }
                steps[k].k->run(q, steps[k].node);
                if (st.error.failed() && ith == 0) {
                    st.failed = &steps[k];  // a solo step's error; a parallel one's is set below
                }
            }
        }
        st.pool->barrier();
        if (st.error.failed()) {
            if (ith == 0 && !steps[j].solo) {
                st.failed = &steps[j];
            }
            return;
        }
        if (debug().node_hash) {
            if (ith == 0) {
                std::fprintf(stderr, "gk: node %d %s %s %016llx\n", steps[j].index, gk_op_symbol(steps[j].node->op),
                             steps[j].node->name, static_cast<unsigned long long>(hash_tensor(steps[j].node)));
            }
            st.pool->barrier();  // the next node may overwrite this one (in place)
        }
        j = end;
    }
}

/// Checks a node before anything runs and adds its step; an error status (message in
/// ctx) when it cannot run.
gk_status plan_node(gk_context * ctx, gk_tensor * node, int index, int nth, std::vector<step> & steps, size_t & work) {
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
    // (GK_NODE_HASH hashes each node after its step: every step is its own run there;
    // GK_NO_SOLO turns step 3 off)
    const bool solo = nth > 1 && !debug().node_hash && !debug().no_solo && node_cost(node) < k_solo_cost;
    steps.push_back({node, index, &k, solo});
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
        const gk_status planned = plan_node(ctx, node, i, nth, steps, work);
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
