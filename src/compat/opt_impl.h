// opt_impl.h - the objects of ggml-opt.h on compat (datasets, optimisation contexts,
// results), shared by opt_dataset.cpp, opt_result.cpp and opt.cpp.
#pragma once

#include "ggml-opt.h"

#include <cstdint>
#include <random>
#include <vector>

/// ndata datapoints (and labels) in a CPU buffer, handed out in shards of ndata_shard in the
/// order of a permutation of the shards.
struct ggml_opt_dataset {
    ggml_context *        ctx         = nullptr;
    ggml_backend_buffer_t buf         = nullptr;
    ggml_tensor *         data        = nullptr;  // [ne_datapoint, ndata]
    ggml_tensor *         labels      = nullptr;  // [ne_label, ndata], NULL without labels
    int64_t               ndata       = 0;
    int64_t               ndata_shard = 0;
    size_t                nbs_data    = 0;  // bytes of one shard of data / labels
    size_t                nbs_labels  = 0;
    std::vector<int64_t>  permutation;
};

/// The graphs of one model: gf (forward and loss), gb_grad (+ gradients), gb_opt (+ the
/// optimizer steps), and the state that outlives them (gradient accumulators, moments).
struct ggml_opt_context {
    ggml_backend_sched_t  backend_sched = nullptr;
    ggml_context *        ctx_static    = nullptr;  // accumulators, moments (static graphs: loss, labels...)
    ggml_context *        ctx_cpu       = nullptr;  // the optimizer's parameters
    ggml_context *        ctx_compute   = nullptr;
    ggml_context *        ctx_copy      = nullptr;  // the copy of a static graph given to the scheduler
    ggml_backend_buffer_t buf_static    = nullptr;
    ggml_backend_buffer_t buf_cpu       = nullptr;
    std::mt19937          rng;

    ggml_opt_loss_type      loss_type        = GGML_OPT_LOSS_TYPE_SUM;
    ggml_opt_build_type     build_type       = GGML_OPT_BUILD_TYPE_OPT;  // the graph the next eval runs
    ggml_opt_build_type     build_type_alloc = GGML_OPT_BUILD_TYPE_OPT;  // the largest graph built
    ggml_opt_optimizer_type optimizer        = GGML_OPT_OPTIMIZER_TYPE_ADAMW;

    ggml_tensor * inputs          = nullptr;
    ggml_tensor * outputs         = nullptr;
    ggml_tensor * labels          = nullptr;
    ggml_tensor * loss            = nullptr;
    ggml_tensor * pred            = nullptr;
    ggml_tensor * ncorrect        = nullptr;
    ggml_tensor * opt_step_params = nullptr;  // AdamW's 7 or SGD's 2 values, set before each step

    ggml_cgraph * gf                   = nullptr;
    ggml_cgraph * gb_grad              = nullptr;
    ggml_cgraph * gb_opt               = nullptr;
    ggml_cgraph * allocated_graph      = nullptr;  // gf, gb_grad or gb_opt
    ggml_cgraph * allocated_graph_copy = nullptr;  // what the scheduler allocated for it

    bool                       static_graphs = false;
    bool                       eval_ready    = false;
    std::vector<ggml_tensor *> grad_accs;  // per node of gf
    std::vector<ggml_tensor *> grad_m;
    std::vector<ggml_tensor *> grad_v;

    int64_t iter               = 1;  // the optimizer step to come (AdamW's t)
    int32_t opt_period         = 1;  // physical batches per optimizer step
    int32_t opt_i              = 0;  // physical batches since the last step
    bool    loss_per_datapoint = false;

    ggml_opt_get_optimizer_params get_opt_pars    = nullptr;
    void *                        get_opt_pars_ud = nullptr;
};

/// Losses, predictions and correct counts gathered over evaluations.
struct ggml_opt_result {
    int64_t              ndata = 0;
    std::vector<float>   loss;  // one per physical batch
    std::vector<int32_t> pred;
    int64_t              ncorrect           = 0;  // -1: not counted
    int64_t              opt_period         = -1;
    bool                 loss_per_datapoint = false;
};
