// backward.cpp - automatic differentiation of a graph (ggml's ggml_build_backward_expand):
// mark the nodes whose gradient is needed (those depending on a parameter, and the
// losses), then walk the forward nodes in reverse and add each needed source's share of a
// node's gradient (vjp.cpp) to that source's gradient, growing the graph as it goes.
#include "graph.h"
#include "internal.h"
#include "vjp.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace gk {
namespace {

/// The ops allowed to alias their result onto a source on the gradient's path: views, and
/// the writes whose gradient ignores the target's old values.
bool aliases_ok(const gk_tensor * n) {
    switch (n->op) {
    case GK_OP_CPY:
    case GK_OP_SET_ROWS:
    case GK_OP_VIEW:
    case GK_OP_RESHAPE:
    case GK_OP_PERMUTE:
    case GK_OP_TRANSPOSE: return true;
    default: return !n->view_src;
    }
}

class backward_pass {
public:
    backward_pass(gk_context * ctx, gk_cgraph * g) : ctx_(ctx), g_(g), needed_(g->hash_size, 0) {}

    /// Flags the nodes that need a gradient and gives the losses (and the nodes grad_accs
    /// names) their accumulators.
    bool mark(gk_tensor ** grad_accs) {
        for (int i = 0; i < g_->n_nodes; ++i) {
            gk_tensor * node = g_->nodes[i];
            if (node->type == GK_TYPE_I32) {
                continue;
            }
            const bool loss = node->flags & GK_TENSOR_FLAG_LOSS;
            bool       need = loss || (node->flags & GK_TENSOR_FLAG_PARAM);
            for (int j = 0; j < GK_MAX_SRC && !need; ++j) {
                need = node->src[j] && !grad_stops(node, j) && needed_[graph_slot(g_, node->src[j])];
            }
            if (!need) {
                continue;
            }
            if (!aliases_ok(node)) {
                return fail("'%s' (%s) writes in place into '%s', which the gradient needs", node->name,
                            gk_op_name(node->op), node->view_src->name);
            }
            const size_t slot = graph_slot(g_, node);
            gk_tensor *  acc  = grad_accs ? grad_accs[i] : nullptr;
            if (!acc && loss) {
                if (node->type != GK_TYPE_F32 || gk_nelements(node) != 1) {
                    return fail("the loss '%s' %s must be one F32 element", node->name, describe(node).c_str());
                }
                acc = new_tensor(ctx_, GK_TYPE_F32, node->ne, true);
                if (!acc) {
                    return false;
                }
                gk_format_name(acc, "grad acc for %.40s", node->name);
            }
            if (acc && !gk_are_same_shape(acc, node)) {
                return fail("gradient accumulator %s of '%s' must have its shape %s", describe(acc).c_str(), node->name,
                            describe(node).c_str());
            }
            g_->grads[slot] = g_->grad_accs[slot] = acc;
            needed_[slot]                         = 1;
        }
        return true;
    }

    /// Adds, for nodes n_forward-1 .. 0, each needed source's share of the node's gradient.
    bool run(int n_forward) {
        for (int i = n_forward - 1; i >= 0; --i) {
            gk_tensor * node = g_->nodes[i];
            gk_tensor * grad = g_->grads[graph_slot(g_, node)];
            if (!grad) {
                continue;
            }
            for (int j = 0; j < GK_MAX_SRC; ++j) {
                gk_tensor * src = node->src[j];
                if (!src || grad_stops(node, j) || !needed_[graph_slot(g_, src)]) {
                    continue;
                }
                if (!gk::is_float_type(src->type)) {
                    return fail("'%s' (%s) needs the gradient of '%s', of type %s", node->name, gk_op_name(node->op),
                                src->name, gk_type_name(src->type));
                }
                if (!join(src, vjp(ctx_, node, grad, j))) {
                    return false;
                }
            }
        }
        return true;
    }

private:
    bool fail(const char * fmt, ...) __attribute__((format(printf, 2, 3))) {
        va_list ap;
        va_start(ap, fmt);
        char msg[400];
        std::vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        set_error(ctx_, "build_backward_expand: %s", msg);
        return false;
    }

    /// src's gradient joined with the share p (in place into src's accumulator when it has
    /// one), then added to the graph.
    bool join(gk_tensor * src, const grad_part & p) {
        if (!p.t) {
            return false;
        }
        const size_t slot = graph_slot(g_, src);
        gk_tensor *  old  = g_->grads[slot];
        const bool   acc  = g_->grad_accs[slot] != nullptr;
        gk_tensor *  sum  = nullptr;
        switch (p.join) {
        case grad_join::add: sum = !old ? p.t : acc ? gk_add_inplace(ctx_, old, p.t) : gk_add(ctx_, old, p.t); break;
        case grad_join::sub:
            sum = !old ? gk_neg(ctx_, p.t) : acc ? gk_sub_inplace(ctx_, old, p.t) : gk_sub(ctx_, old, p.t);
            break;
        case grad_join::add1:
            sum = !old ? gk_repeat(ctx_, p.t, src) : acc ? gk_add1_inplace(ctx_, old, p.t) : gk_add1(ctx_, old, p.t);
            break;
        case grad_join::acc: {
            // the view's strides and offset are in src's elements; the gradient may be of another type
            gk_tensor *  into = old ? old : gk_scale(ctx_, src, 0.0f);
            const size_t from = gk_type_size(src->type), to = into ? gk_type_size(into->type) : from;
            const auto   conv = [&](size_t v) { return v / from * to; };
            sum               = !into ? nullptr
                                : acc ? gk_acc_inplace(ctx_, into, p.t, conv(p.nb1), conv(p.nb2), conv(p.nb3), conv(p.offset))
                                      : gk_acc(ctx_, into, p.t, conv(p.nb1), conv(p.nb2), conv(p.nb3), conv(p.offset));
            break;
        }
        }
        if (!sum) {
            return false;
        }
        if (!gk_are_same_shape(sum, src)) {
            return fail("the gradient %s of '%s' does not have its shape %s", describe(sum).c_str(), src->name,
                        describe(src).c_str());
        }
        gk_format_name(sum, "grad for %.50s", src->name);
        g_->grads[slot] = sum;
        return gk_build_forward_expand(g_, sum) == GK_STATUS_SUCCESS;
    }

    gk_context *      ctx_;
    gk_cgraph *       g_;
    std::vector<char> needed_;  // per hash slot of a forward node: its gradient is needed
};

/// Nodes flagged as parameter and as loss; false with a message when either is missing.
bool has_param_and_loss(gk_context * ctx, const gk_cgraph * g) {
    bool param = false, loss = false;
    for (int i = 0; i < g->n_nodes; ++i) {
        param = param || (g->nodes[i]->flags & GK_TENSOR_FLAG_PARAM);
        loss  = loss || (g->nodes[i]->flags & GK_TENSOR_FLAG_LOSS);
    }
    if (!param || !loss) {
        set_error(ctx, "build_backward_expand: the graph has no %s (gk_set_%s)", param ? "loss" : "parameter",
                  param ? "loss" : "param");
    }
    return param && loss;
}

}  // namespace
}  // namespace gk

extern "C" {

gk_status gk_build_backward_expand(gk_context * ctx, gk_cgraph * graph, gk_tensor ** grad_accs) {
    if (!ctx || !graph) {
        gk::set_error(ctx ? ctx : gk_graph_context(graph), "build_backward_expand: %s is NULL", ctx ? "graph" : "ctx");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (!graph->grads) {
        gk::set_error(ctx,
                      "build_backward_expand: the graph was made without gradients "
                      "(gk_new_graph_custom(ctx, size, true))");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (!gk::has_param_and_loss(ctx, graph)) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    const int         n_nodes = graph->n_nodes, n_leafs = graph->n_leafs;
    gk::backward_pass pass(ctx, graph);
    std::memset(graph->grads, 0, graph->hash_size * sizeof(graph->grads[0]));
    std::memset(graph->grad_accs, 0, graph->hash_size * sizeof(graph->grad_accs[0]));
    if (pass.mark(grad_accs) && pass.run(n_nodes)) {
        return GK_STATUS_SUCCESS;
    }
    gk::graph_truncate(graph, n_nodes, n_leafs);
    std::memset(graph->grads, 0, graph->hash_size * sizeof(graph->grads[0]));
    std::memset(graph->grad_accs, 0, graph->hash_size * sizeof(graph->grad_accs[0]));
    return GK_STATUS_INVALID_ARGUMENT;
}

gk_tensor * gk_graph_get_grad(const gk_cgraph * graph, const gk_tensor * node) {
    const size_t slot = graph && graph->grads && node ? gk::graph_slot(graph, node) : SIZE_MAX;
    return slot != SIZE_MAX ? graph->grads[slot] : nullptr;
}

gk_tensor * gk_graph_get_grad_acc(const gk_cgraph * graph, const gk_tensor * node) {
    const size_t slot = graph && graph->grads && node ? gk::graph_slot(graph, node) : SIZE_MAX;
    return slot != SIZE_MAX ? graph->grad_accs[slot] : nullptr;
}

}  // extern "C"
