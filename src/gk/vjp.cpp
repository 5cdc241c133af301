// vjp.cpp - the gradient rule of every op: one table keyed by gk_op (and one each for the
// sub-ops of GK_OP_UNARY and GK_OP_GLU) saying whether the op passes a gradient to each of
// its sources and which nodes compute it. Every entry must be filled, as a rule or as an
// explicit "no gradient": a static_assert below fails the build on a new op left out.
//
// The rules are ggml's (ggml.c, ggml_compute_backward), with these differences: add1's b
// gets sum(dy) (ggml takes the mean), mean's gradient is dy / ne0 broadcast to the input
// (ggml's add1 form needs a single row), the b of sub and div is reduced over broadcast
// dimensions as for add and mul, tanh and sigmoid have gradients, and floor, ceil, round
// and trunc pass none (they are piecewise constant, like sgn and step).
#include "vjp.h"

#include "internal.h"

#include <array>
#include <cstring>

namespace gk {
namespace {

enum class rule : uint8_t {
    unset,  // not written in the table: a build error
    none,   // no gradient: an error when one is needed
    stop,   // piecewise constant: no gradient flows to the input
    vjp,    // the sources in `grads` get gradients from `fn`
};

struct op_rule {
    rule     kind  = rule::unset;
    uint16_t grads = 0;  // bit j: source j gets a gradient
    uint16_t stops = 0;  // bit j: no gradient flows to source j
    vjp_fn   fn    = nullptr;
};

constexpr uint16_t src_bit(int j) { return static_cast<uint16_t>(1u << j); }

grad_part add(gk_tensor * t) { return {t, grad_join::add}; }
grad_part sub(gk_tensor * t) { return {t, grad_join::sub}; }

/// t (of a binary op's result shape) summed down to b's shape when b was broadcast.
gk_tensor * unbroadcast(gk_context * ctx, gk_tensor * t, gk_tensor * b) {
    return !t || gk_are_same_shape(t, b) ? t : gk_repeat_back(ctx, t, b);
}

/// t's values in src's shape (same element count).
gk_tensor * as_shape(gk_context * ctx, gk_tensor * t, gk_tensor * src) {
    if (gk_are_same_shape(t, src)) {
        return t;
    }
    return gk_reshape(ctx, gk_is_contiguous(t) ? t : gk_cont(ctx, t), src);
}

/// The part of dy that a (dup, cont, cpy, reshape) copied from src0.
grad_part vjp_copy(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) { return add(as_shape(ctx, g, n->src[0])); }

grad_part vjp_add(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    return add(j == 0 ? g : unbroadcast(ctx, g, n->src[1]));
}

grad_part vjp_sub(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    return j == 0 ? add(g) : sub(unbroadcast(ctx, g, n->src[1]));
}

grad_part vjp_mul(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    return add(j == 0 ? gk_mul(ctx, g, n->src[1]) : unbroadcast(ctx, gk_mul(ctx, n->src[0], g), n->src[1]));
}

grad_part vjp_div(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    // d(a/b)/db = -(a/b)/b
    return j == 0 ? add(gk_div(ctx, g, n->src[1]))
                  : sub(unbroadcast(ctx, gk_mul(ctx, g, gk_div(ctx, n, n->src[1])), n->src[1]));
}

grad_part vjp_add1(gk_context * ctx, gk_tensor *, gk_tensor * g, int j) { return add(j == 0 ? g : gk_sum(ctx, g)); }

/// The region of a node's gradient that acc / set wrote b to (op_params i32 nb1, nb2, nb3,
/// offset), in b's shape.
gk_tensor * written_region(gk_context * ctx, gk_tensor * n, gk_tensor * g) {
    const gk_tensor * b = n->src[1];
    return gk_view_4d(ctx, g, b->ne[0], b->ne[1], b->ne[2], b->ne[3], static_cast<size_t>(n->op_params[0]),
                      static_cast<size_t>(n->op_params[1]), static_cast<size_t>(n->op_params[2]),
                      static_cast<size_t>(n->op_params[3]));
}

grad_part vjp_acc(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    if (j == 0) {
        return add(g);
    }
    gk_tensor * region = written_region(ctx, n, g);
    return add(region ? gk_reshape(ctx, gk_cont(ctx, region), n->src[1]) : nullptr);
}

grad_part vjp_set(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    gk_tensor * region = written_region(ctx, n, g);
    if (!region) {
        return {};
    }
    if (j == 1) {
        return add(gk_reshape(ctx, gk_cont(ctx, region), n->src[1]));
    }
    // a's gradient is dy with the overwritten region zeroed: dy + (-dy there)
    return add(gk_acc(ctx, g, gk_neg(ctx, region), static_cast<size_t>(n->op_params[0]),
                      static_cast<size_t>(n->op_params[1]), static_cast<size_t>(n->op_params[2]),
                      static_cast<size_t>(n->op_params[3])));
}

grad_part vjp_sqr(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_scale(ctx, gk_mul(ctx, n->src[0], g), 2.0f));
}

grad_part vjp_sqrt(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_scale(ctx, gk_div(ctx, g, n), 0.5f));
}

grad_part vjp_log(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) { return add(gk_div(ctx, g, n->src[0])); }

grad_part vjp_sin(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_mul(ctx, g, gk_cos(ctx, n->src[0])));
}

grad_part vjp_cos(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return sub(gk_mul(ctx, g, gk_sin(ctx, n->src[0])));
}

grad_part vjp_sum(gk_context *, gk_tensor *, gk_tensor * g, int) { return {g, grad_join::add1}; }

grad_part vjp_sum_rows(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_repeat(ctx, g, n->src[0]));
}

grad_part vjp_mean(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    const float inv_n = 1.0f / static_cast<float>(n->src[0]->ne[0]);
    return add(gk_repeat(ctx, gk_scale(ctx, g, inv_n), n->src[0]));
}

grad_part vjp_repeat(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_repeat_back(ctx, g, n->src[0]));
}

grad_part vjp_repeat_back(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_repeat(ctx, g, n->src[0]));
}

grad_part vjp_rms_norm(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_rms_norm_back(ctx, g, n->src[0], gk_get_op_params_f32(n, 0)));
}

/// mul_mat: y [M, N, B2, B3] = a [K, M, A2, A3] . b [K, N, B2, B3], so da = sum_n b dy^T
/// (out_prod(b, dy), [K, M, B2, B3], then summed over the heads b broadcast a to: head i2
/// of b read head i2 / (B2/A2) of a) and db = a dy (out_prod(a, dy^T)).
grad_part vjp_mul_mat(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    gk_tensor * a = n->src[0];
    gk_tensor * b = n->src[1];
    if (j == 1) {
        return add(gk_out_prod(ctx, a, gk_transpose(ctx, g)));
    }
    gk_tensor * t = gk_out_prod(ctx, b, g);
    if (!t || gk_are_same_shape(t, a)) {
        return add(t);
    }
    if (t->ne[3] != 1) {
        set_error(ctx,
                  "build_backward_expand: the gradient of mul_mat's a %s broadcast to b %s over dimension 3 "
                  "is not supported",
                  describe(a).c_str(), describe(b).c_str());
        return {};
    }
    // view [K, M, B2] as [K, M, A2, r2] (head i2 = a2 * r2 + r), then sum over r
    const int64_t r2 = t->ne[2] / a->ne[2];
    gk_tensor *   v = gk_view_4d(ctx, t, a->ne[0], a->ne[1], a->ne[2], r2, t->nb[1], t->nb[2] * static_cast<size_t>(r2),
                                 t->nb[2], 0);
    return add(v ? gk_repeat_back(ctx, v, a) : nullptr);
}

grad_part vjp_scale(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_scale(ctx, g, gk_get_op_params_f32(n, 0)));
}

grad_part vjp_view(gk_context *, gk_tensor * n, gk_tensor * g, int) {
    size_t offset = 0;
    std::memcpy(&offset, n->op_params, sizeof(offset));
    return {g, grad_join::acc, n->nb[1], n->nb[2], n->nb[3], offset};
}

grad_part vjp_permute(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    int back[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; ++i) {
        back[n->op_params[i] & 3] = i;
    }
    return add(gk_permute(ctx, g, back[0], back[1], back[2], back[3]));
}

grad_part vjp_transpose(gk_context * ctx, gk_tensor *, gk_tensor * g, int) { return add(gk_transpose(ctx, g)); }

grad_part vjp_get_rows(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_get_rows_back(ctx, g, n->src[1], n->src[0]));
}

grad_part vjp_diag_mask(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_diag_mask_zero(ctx, g, n->op_params[0]));
}

grad_part vjp_soft_max(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_soft_max_ext_back(ctx, g, n, gk_get_op_params_f32(n, 0), gk_get_op_params_f32(n, 1)));
}

grad_part vjp_rope(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    const int32_t * p    = n->op_params;
    const int       mode = p[2];
    const auto      f    = [n](int i) { return gk_get_op_params_f32(n, i); };
    if (mode & GK_ROPE_TYPE_MROPE) {
        int sections[GK_MROPE_SECTIONS] = {p[11], p[12], p[13], p[14]};
        return add(gk_rope_multi_back(ctx, g, n->src[1], n->src[2], p[1], sections, mode, p[4], f(5), f(6), f(7), f(8),
                                      f(9), f(10)));
    }
    return add(gk_rope_ext_back(ctx, g, n->src[1], n->src[2], p[1], mode, p[4], f(5), f(6), f(7), f(8), f(9), f(10)));
}

grad_part vjp_im2col(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    const int32_t * p = n->op_params;
    return add(gk_im2col_back(ctx, g, n->src[0], n->src[1]->ne, p[0], p[1], p[2], p[3], p[4], p[5], p[6] == 1));
}

grad_part vjp_pool_2d(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    const int32_t * p = n->op_params;
    return add(gk_pool_2d_back(ctx, g, n->src[0], static_cast<gk_op_pool>(p[0]), p[1], p[2], p[3], p[4],
                               static_cast<float>(p[5]), static_cast<float>(p[6])));
}

grad_part vjp_cross_entropy_loss(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_cross_entropy_loss_back(ctx, g, n->src[0], n->src[1]));
}

// ---- unary ops (GK_OP_UNARY, op_params[0]); n = f(x), x = n->src[0] ----------------------

grad_part vjp_abs(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_mul(ctx, gk_sgn(ctx, n->src[0]), g));
}

grad_part vjp_neg(gk_context *, gk_tensor *, gk_tensor * g, int) { return sub(g); }

grad_part vjp_tanh(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_sub(ctx, g, gk_mul(ctx, g, gk_sqr(ctx, n))));  // dy (1 - y^2)
}

grad_part vjp_sigmoid(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_mul(ctx, g, gk_sub(ctx, n, gk_sqr(ctx, n))));  // dy y (1 - y)
}

grad_part vjp_relu(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_mul(ctx, gk_step(ctx, n->src[0]), g));
}

grad_part vjp_silu(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) { return add(gk_silu_back(ctx, g, n->src[0])); }

grad_part vjp_exp(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) { return add(gk_mul(ctx, n, g)); }

grad_part vjp_expm1(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_mul(ctx, g, gk_exp(ctx, n->src[0])));
}

grad_part vjp_softplus(gk_context * ctx, gk_tensor * n, gk_tensor * g, int) {
    return add(gk_mul(ctx, g, gk_sigmoid(ctx, n->src[0])));
}

// ---- gated linear units (GK_OP_GLU, op_params[0]) ----------------------------------------

/// swiglu with separate gate: y = silu(a) * b; da = silu_back(dy * b, a), db = silu(a) dy.
grad_part vjp_swiglu(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    gk_tensor * a = n->src[0];
    gk_tensor * b = n->src[1];
    if (!b) {
        set_error(ctx, "build_backward_expand: '%s': only the split form of swiglu (gk_swiglu_split) has a gradient",
                  n->name);
        return {};
    }
    return add(j == 0 ? gk_silu_back(ctx, gk_mul(ctx, g, b), a) : gk_mul(ctx, gk_silu(ctx, a), g));
}

struct sub_rule {
    rule   kind = rule::unset;
    vjp_fn fn   = nullptr;
};

template <size_t N>
constexpr size_t first_unset(const std::array<sub_rule, N> & t) {
    size_t i = 0;
    while (i < N && t[i].kind != rule::unset) {
        ++i;
    }
    return i;
}

constexpr std::array<sub_rule, GK_UNARY_OP_COUNT> make_unary_rules() {
    std::array<sub_rule, GK_UNARY_OP_COUNT> t{};
    t[GK_UNARY_OP_ABS]      = {rule::vjp, vjp_abs};
    t[GK_UNARY_OP_NEG]      = {rule::vjp, vjp_neg};
    t[GK_UNARY_OP_TANH]     = {rule::vjp, vjp_tanh};
    t[GK_UNARY_OP_RELU]     = {rule::vjp, vjp_relu};
    t[GK_UNARY_OP_SIGMOID]  = {rule::vjp, vjp_sigmoid};
    t[GK_UNARY_OP_SILU]     = {rule::vjp, vjp_silu};
    t[GK_UNARY_OP_EXP]      = {rule::vjp, vjp_exp};
    t[GK_UNARY_OP_EXPM1]    = {rule::vjp, vjp_expm1};
    t[GK_UNARY_OP_SOFTPLUS] = {rule::vjp, vjp_softplus};
    for (gk_unary_op op : {GK_UNARY_OP_SGN, GK_UNARY_OP_STEP, GK_UNARY_OP_FLOOR, GK_UNARY_OP_CEIL, GK_UNARY_OP_ROUND,
                           GK_UNARY_OP_TRUNC}) {
        t[op] = {rule::stop, nullptr};
    }
    for (gk_unary_op op : {GK_UNARY_OP_ELU, GK_UNARY_OP_GELU, GK_UNARY_OP_GELU_QUICK, GK_UNARY_OP_HARDSWISH,
                           GK_UNARY_OP_HARDSIGMOID, GK_UNARY_OP_GELU_ERF, GK_UNARY_OP_XIELU}) {
        t[op] = {rule::none, nullptr};
    }
    return t;
}

constexpr std::array<sub_rule, GK_GLU_OP_COUNT> make_glu_rules() {
    std::array<sub_rule, GK_GLU_OP_COUNT> t{};
    t[GK_GLU_OP_SWIGLU] = {rule::vjp, vjp_swiglu};
    for (gk_glu_op op : {GK_GLU_OP_REGLU, GK_GLU_OP_GEGLU, GK_GLU_OP_SWIGLU_OAI, GK_GLU_OP_GEGLU_ERF,
                         GK_GLU_OP_GEGLU_QUICK, GK_GLU_OP_SWIGLU_CLAMP}) {
        t[op] = {rule::none, nullptr};
    }
    return t;
}

constexpr auto k_unary_rules = make_unary_rules();
constexpr auto k_glu_rules   = make_glu_rules();
static_assert(first_unset(k_unary_rules) == GK_UNARY_OP_COUNT, "a gk_unary_op has no gradient rule (vjp.cpp)");
static_assert(first_unset(k_glu_rules) == GK_GLU_OP_COUNT, "a gk_glu_op has no gradient rule (vjp.cpp)");

/// The sub-op rule of a UNARY or GLU node (an unset rule for an out-of-range sub-op).
sub_rule sub_rule_of(const gk_tensor * n) {
    const int32_t sub = n->op_params[0];
    if (n->op == GK_OP_UNARY) {
        return sub >= 0 && sub < GK_UNARY_OP_COUNT ? k_unary_rules[static_cast<size_t>(sub)] : sub_rule{};
    }
    return sub >= 0 && sub < GK_GLU_OP_COUNT ? k_glu_rules[static_cast<size_t>(sub)] : sub_rule{};
}

/// UNARY and GLU: the rule of the sub-op.
grad_part vjp_sub_op(gk_context * ctx, gk_tensor * n, gk_tensor * g, int j) {
    const sub_rule r = sub_rule_of(n);
    if (r.kind != rule::vjp) {
        set_error(ctx, "build_backward_expand: '%s' (%s %s) has no gradient", n->name, gk_op_name(n->op),
                  n->op == GK_OP_UNARY ? gk_unary_op_name(gk_get_unary_op(n)) : gk_glu_op_name(gk_get_glu_op(n)));
        return {};
    }
    return r.fn(ctx, n, g, j);
}

constexpr op_rule grads_to(uint16_t grads, vjp_fn fn, uint16_t stops = 0) { return {rule::vjp, grads, stops, fn}; }

constexpr std::array<op_rule, GK_OP_COUNT> make_op_rules() {
    const uint16_t s0 = src_bit(0), s1 = src_bit(1), s01 = s0 | s1;

    std::array<op_rule, GK_OP_COUNT> t{};
    t[GK_OP_NONE]               = grads_to(0, nullptr);  // a parameter: nothing to pass on
    t[GK_OP_DUP]                = grads_to(s0, vjp_copy);
    t[GK_OP_ADD]                = grads_to(s01, vjp_add);
    t[GK_OP_ADD1]               = grads_to(s01, vjp_add1);
    t[GK_OP_ACC]                = grads_to(s01, vjp_acc);
    t[GK_OP_SUB]                = grads_to(s01, vjp_sub);
    t[GK_OP_MUL]                = grads_to(s01, vjp_mul);
    t[GK_OP_DIV]                = grads_to(s01, vjp_div);
    t[GK_OP_SQR]                = grads_to(s0, vjp_sqr);
    t[GK_OP_SQRT]               = grads_to(s0, vjp_sqrt);
    t[GK_OP_LOG]                = grads_to(s0, vjp_log);
    t[GK_OP_SIN]                = grads_to(s0, vjp_sin);
    t[GK_OP_COS]                = grads_to(s0, vjp_cos);
    t[GK_OP_SUM]                = grads_to(s0, vjp_sum);
    t[GK_OP_SUM_ROWS]           = grads_to(s0, vjp_sum_rows);
    t[GK_OP_MEAN]               = grads_to(s0, vjp_mean);
    t[GK_OP_REPEAT]             = grads_to(s0, vjp_repeat);
    t[GK_OP_REPEAT_BACK]        = grads_to(s0, vjp_repeat_back);
    t[GK_OP_RMS_NORM]           = grads_to(s0, vjp_rms_norm);
    t[GK_OP_MUL_MAT]            = grads_to(s01, vjp_mul_mat);
    t[GK_OP_SCALE]              = grads_to(s0, vjp_scale);
    t[GK_OP_SET]                = grads_to(s01, vjp_set);
    t[GK_OP_CPY]                = grads_to(s0, vjp_copy, s1);  // the target's old values do not reach the result
    t[GK_OP_CONT]               = grads_to(s0, vjp_copy);
    t[GK_OP_RESHAPE]            = grads_to(s0, vjp_copy);
    t[GK_OP_VIEW]               = grads_to(s0, vjp_view);
    t[GK_OP_PERMUTE]            = grads_to(s0, vjp_permute);
    t[GK_OP_TRANSPOSE]          = grads_to(s0, vjp_transpose);
    t[GK_OP_GET_ROWS]           = grads_to(s0, vjp_get_rows, s1);  // row indices
    t[GK_OP_DIAG_MASK_INF]      = grads_to(s0, vjp_diag_mask);
    t[GK_OP_DIAG_MASK_ZERO]     = grads_to(s0, vjp_diag_mask);
    t[GK_OP_SOFT_MAX]           = grads_to(s0, vjp_soft_max);    // not the mask's, nor the sinks'
    t[GK_OP_ROPE]               = grads_to(s0, vjp_rope, s1);    // positions; not the frequency factors'
    t[GK_OP_IM2COL]             = grads_to(s1, vjp_im2col, s0);  // the kernel gives only its shape
    t[GK_OP_POOL_2D]            = grads_to(s0, vjp_pool_2d);
    t[GK_OP_UNARY]              = grads_to(s0, vjp_sub_op);
    t[GK_OP_GLU]                = grads_to(s01, vjp_sub_op);
    t[GK_OP_CROSS_ENTROPY_LOSS] = grads_to(s0, vjp_cross_entropy_loss);  // not the labels'

    // operands that carry no gradient into ops that have none either
    t[GK_OP_GET_ROWS_BACK] = {rule::none, 0, s1, nullptr};
    t[GK_OP_IM2COL_BACK]   = {rule::none, 0, s0, nullptr};
    for (gk_op op : {GK_OP_ADD_ID,
                     GK_OP_CUMSUM,
                     GK_OP_ARGMAX,
                     GK_OP_COUNT_EQUAL,
                     GK_OP_CONCAT,
                     GK_OP_SILU_BACK,
                     GK_OP_NORM,
                     GK_OP_RMS_NORM_BACK,
                     GK_OP_GROUP_NORM,
                     GK_OP_L2_NORM,
                     GK_OP_MUL_MAT_ID,
                     GK_OP_OUT_PROD,
                     GK_OP_SET_ROWS,
                     GK_OP_DIAG,
                     GK_OP_SOFT_MAX_BACK,
                     GK_OP_ROPE_BACK,
                     GK_OP_CLAMP,
                     GK_OP_CONV_TRANSPOSE_1D,
                     GK_OP_IM2COL_3D,
                     GK_OP_COL2IM_1D,
                     GK_OP_CONV_2D,
                     GK_OP_CONV_3D,
                     GK_OP_CONV_2D_DW,
                     GK_OP_CONV_TRANSPOSE_2D,
                     GK_OP_POOL_1D,
                     GK_OP_POOL_2D_BACK,
                     GK_OP_UPSCALE,
                     GK_OP_PAD,
                     GK_OP_PAD_REFLECT_1D,
                     GK_OP_ROLL,
                     GK_OP_ARANGE,
                     GK_OP_TIMESTEP_EMBEDDING,
                     GK_OP_ARGSORT,
                     GK_OP_TOP_K,
                     GK_OP_LEAKY_RELU,
                     GK_OP_TRI,
                     GK_OP_FILL,
                     GK_OP_FLASH_ATTN_EXT,
                     GK_OP_FLASH_ATTN_BACK,
                     GK_OP_SSM_CONV,
                     GK_OP_SSM_SCAN,
                     GK_OP_WIN_PART,
                     GK_OP_WIN_UNPART,
                     GK_OP_GET_REL_POS,
                     GK_OP_ADD_REL_POS,
                     GK_OP_RWKV_WKV6,
                     GK_OP_GATED_LINEAR_ATTN,
                     GK_OP_RWKV_WKV7,
                     GK_OP_SOLVE_TRI,
                     GK_OP_GATED_DELTA_NET,
                     GK_OP_LIGHTNING_INDEXER,
                     GK_OP_DSV4_HC_COMB,
                     GK_OP_DSV4_HC_PRE,
                     GK_OP_DSV4_HC_POST,
                     GK_OP_MAP_CUSTOM1,
                     GK_OP_MAP_CUSTOM2,
                     GK_OP_MAP_CUSTOM3,
                     GK_OP_CUSTOM,
                     GK_OP_CROSS_ENTROPY_LOSS_BACK,
                     GK_OP_OPT_STEP_ADAMW,
                     GK_OP_OPT_STEP_SGD}) {
        t[op] = {rule::none, 0, 0, nullptr};
    }
    return t;
}

constexpr auto k_op_rules = make_op_rules();

constexpr size_t first_unset_op() {
    size_t i = 0;
    while (i < k_op_rules.size() && k_op_rules[i].kind != rule::unset) {
        ++i;
    }
    return i;
}
// A failure here names the index of the first gk_op without a rule: give it one above.
static_assert(first_unset_op() == GK_OP_COUNT, "a gk_op has no gradient rule (vjp.cpp)");

const op_rule & rule_of(gk_op op) {
    static const op_rule unknown{};
    return op >= 0 && op < GK_OP_COUNT ? k_op_rules[static_cast<size_t>(op)] : unknown;
}

}  // namespace

bool grad_stops(const gk_tensor * node, int j) {
    if (rule_of(node->op).stops & src_bit(j)) {
        return true;
    }
    return node->op == GK_OP_UNARY && sub_rule_of(node).kind == rule::stop;
}

grad_part vjp(gk_context * ctx, gk_tensor * node, gk_tensor * grad, int j) {
    const op_rule & r = rule_of(node->op);
    if (r.kind != rule::vjp) {
        set_error(ctx, "build_backward_expand: '%s' (%s) has no gradient", node->name, gk_op_name(node->op));
        return {};
    }
    if (!(r.grads & src_bit(j))) {
        set_error(ctx, "build_backward_expand: '%s' (%s) has no gradient for its operand %d '%s'", node->name,
                  gk_op_name(node->op), j, node->src[j]->name);
        return {};
    }
    return r.fn(ctx, node, grad, j);
}

}  // namespace gk

extern "C" bool gk_op_has_grad(gk_op op, int sub_op) {
    const gk::op_rule & r = gk::rule_of(op);
    if (r.kind != gk::rule::vjp) {
        return false;
    }
    if (op != GK_OP_UNARY && op != GK_OP_GLU) {
        return true;
    }
    gk_tensor probe{};
    probe.op           = op;
    probe.op_params[0] = sub_op;
    return gk::sub_rule_of(&probe).kind != gk::rule::unset && gk::sub_rule_of(&probe).kind != gk::rule::none;
}
