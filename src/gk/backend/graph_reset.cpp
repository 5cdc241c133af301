// graph_reset.cpp - gk_graph_reset: the start values of a training step's gradient
// accumulators and optimizer moments (ggml's ggml_graph_reset), written through the
// backend API so that they may live in any buffer.
#include "gk/gk-backend.h"

#include "../graph.h"
#include "../internal.h"

namespace {

/// All bytes of t set to 0; false (message in ctx) when t has no data.
bool zero(gk_context * ctx, gk_tensor * t) {
    if (gk_is_empty(t)) {
        return true;
    }
    if (!t->data) {
        gk::set_error(ctx, "graph_reset: '%s' has no data", t->name);
        return false;
    }
    return gk_backend_tensor_memset(t, 0, 0, gk_nbytes(t)) == GK_STATUS_SUCCESS;
}

}  // namespace

extern "C" gk_status gk_graph_reset(gk_cgraph * graph) {
    if (!graph) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    gk_context * ctx = graph->ctx;
    if (!graph->grads) {
        gk::set_error(ctx, "graph_reset: the graph was made without gradients");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    for (int i = 0; i < graph->n_nodes; ++i) {
        gk_tensor * node = graph->nodes[i];
        if (node->op == GK_OP_OPT_STEP_ADAMW && (!zero(ctx, node->src[2]) || !zero(ctx, node->src[3]))) {
            return GK_STATUS_INVALID_ARGUMENT;
        }
        gk_tensor * acc = gk_graph_get_grad_acc(graph, node);
        if (!acc) {
            continue;
        }
        if (!(node->flags & GK_TENSOR_FLAG_LOSS)) {
            if (!zero(ctx, acc)) {
                return GK_STATUS_INVALID_ARGUMENT;
            }
            continue;
        }
        const float one = 1.0f;
        if (acc->type != GK_TYPE_F32 || gk_nelements(acc) != 1 || !acc->data) {
            gk::set_error(ctx, "graph_reset: the loss accumulator '%s' %s must be one F32 element with data", acc->name,
                          gk::describe(acc).c_str());
            return GK_STATUS_INVALID_ARGUMENT;
        }
        if (gk_backend_tensor_set(acc, &one, 0, sizeof one) != GK_STATUS_SUCCESS) {
            return GK_STATUS_INVALID_ARGUMENT;
        }
    }
    return GK_STATUS_SUCCESS;
}
