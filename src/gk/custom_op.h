// custom_op.h - the op_params of the custom-op nodes (MAP_CUSTOM1/2/3, CUSTOM), shared by
// their builders (ops_custom.cpp) and the CPU kernel (cpu/ops/custom.cpp).
#pragma once

#include "gk/gk.h"

#include <cstring>

namespace gk {

/// ggml's struct ggml_map_custom{1,2,3}_op_params / ggml_custom_op_params: the callback,
/// the task count (GK_N_TASKS_MAX: one per thread) and the caller's pointer, at the start
/// of op_params. The bytes after it are unused by gk (the compat layer keeps its ggml
/// callback there).
template <class Fun>
struct custom_op_params {
    Fun    fun;
    int    n_tasks;
    void * userdata;
};

static_assert(sizeof(custom_op_params<gk_custom_op_t>) <= GK_MAX_OP_PARAMS);

/// The custom-op parameters of node t.
template <class Fun>
custom_op_params<Fun> custom_params_of(const gk_tensor * t) {
    custom_op_params<Fun> p;
    std::memcpy(&p, t->op_params, sizeof(p));
    return p;
}

} // namespace gk
