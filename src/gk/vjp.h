// vjp.h - the gradient rule of every op (vector-Jacobian products), used by the backward
// pass (backward.cpp): which sources an op passes a gradient to and the nodes computing it.
#pragma once

#include "gk/gk.h"

#include <cstddef>
#include <cstdint>

namespace gk {

/// How a contribution joins the gradient a source already has (ggml's add_or_set,
/// sub_or_set, add1_or_set, acc_or_set).
enum class grad_join : uint8_t {
    add,   // grad += t (t has the source's shape)
    sub,   // grad -= t
    add1,  // grad += t, t one element broadcast to the source's shape
    acc,   // grad += t placed at (nb1, nb2, nb3, offset) of the source, 0 elsewhere
};

/// One source's share of a node's gradient; t is NULL when a builder failed (its message
/// is in the context).
struct grad_part {
    gk_tensor * t    = nullptr;
    grad_join   join = grad_join::add;
    size_t      nb1 = 0, nb2 = 0, nb3 = 0, offset = 0;  // join acc: where t lies
};

/// d loss / d node->src[j] from grad = d loss / d node (the nodes that compute it, in ctx).
using vjp_fn = grad_part (*)(gk_context * ctx, gk_tensor * node, gk_tensor * grad, int j);

/// True when no gradient flows from node to node->src[j]: an index, a position, an operand
/// read only for its shape, a copy's target, the input of a piecewise constant op.
bool grad_stops(const gk_tensor * node, int j);

/// The gradient of node's source j, or an error recorded in ctx (and t NULL) when the op, or
/// this operand of it, has no gradient.
grad_part vjp(gk_context * ctx, gk_tensor * node, gk_tensor * grad, int j);

}  // namespace gk
