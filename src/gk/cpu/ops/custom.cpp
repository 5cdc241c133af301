// custom.cpp - the CPU kernel of the custom-op hooks: calls the node's callback.
//
// With n tasks (n_tasks, or the thread count for GK_N_TASKS_MAX, at most the thread
// count) the pass's threads 0 .. n-1 each call the callback once with ith = its index and
// nth = n; the other threads do nothing. Which part of the output each call writes, and so
// whether the result depends on the thread count, is the callback's business: gk's
// guarantee (bits independent of threads, every output written) holds only for callbacks
// that split their work that way.
#include "../../custom_op.h"
#include "../dispatch.h"

namespace gk::cpu {
namespace {

/// The number of callback calls for this compute.
template <class Fun>
int tasks(const compute_params & p, const custom_op_params<Fun> & cp) {
    return cp.n_tasks == GK_N_TASKS_MAX || cp.n_tasks > p.nth ? p.nth : cp.n_tasks;
}

void map_custom1(const compute_params & p, gk_tensor * dst) {
    const auto cp = custom_params_of<gk_custom1_op_t>(dst);
    const int  n  = tasks(p, cp);
    if (p.ith < n) {
        cp.fun(dst, dst->src[0], p.ith, n, cp.userdata);
    }
}

void map_custom2(const compute_params & p, gk_tensor * dst) {
    const auto cp = custom_params_of<gk_custom2_op_t>(dst);
    const int  n  = tasks(p, cp);
    if (p.ith < n) {
        cp.fun(dst, dst->src[0], dst->src[1], p.ith, n, cp.userdata);
    }
}

void map_custom3(const compute_params & p, gk_tensor * dst) {
    const auto cp = custom_params_of<gk_custom3_op_t>(dst);
    const int  n  = tasks(p, cp);
    if (p.ith < n) {
        cp.fun(dst, dst->src[0], dst->src[1], dst->src[2], p.ith, n, cp.userdata);
    }
}

void custom(const compute_params & p, gk_tensor * dst) {
    const auto cp = custom_params_of<gk_custom_op_t>(dst);
    const int  n  = tasks(p, cp);
    if (p.ith < n) {
        cp.fun(dst, p.ith, n, cp.userdata);
    }
}

size_t no_scratch(const gk_tensor *) { return 0; }

} // namespace

void register_custom(kernel_table & t) {
    t.ops[GK_OP_MAP_CUSTOM1] = {map_custom1, no_scratch};
    t.ops[GK_OP_MAP_CUSTOM2] = {map_custom2, no_scratch};
    t.ops[GK_OP_MAP_CUSTOM3] = {map_custom3, no_scratch};
    t.ops[GK_OP_CUSTOM]      = {custom, no_scratch};
}

} // namespace gk::cpu
