// unary.cpp - element-wise kernels of one source: sqr sqrt log sin cos, the
// activations of GK_OP_UNARY, leaky_relu. Split by destination row; the output has the
// source's shape (possibly the source itself, in place).
#include "../dispatch.h"
#include "../rows.h"
#include "../vec_exp.h"
#include "activations.h"

#include <cmath>

namespace gk::cpu {
namespace {

float act_abs(float x) { return std::fabs(x); }
float act_sgn(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }
float act_neg(float x) { return -x; }
float act_step(float x) { return x > 0.0f ? 1.0f : 0.0f; }
float act_tanh(float x) { return std::tanh(x); }
float act_elu(float x) { return x > 0.0f ? x : std::expm1(x); }
float act_hardsigmoid(float x) { return std::fmin(1.0f, std::fmax(0.0f, (x + 3.0f) / 6.0f)); }
float act_hardswish(float x) { return x * act_hardsigmoid(x); }
float act_exp(float x) { return std::exp(x); }
float act_expm1(float x) { return std::expm1(x); }
float act_softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
float act_floor(float x) { return std::floor(x); }
float act_ceil(float x) { return std::ceil(x); }
float act_round(float x) { return std::round(x); }
float act_trunc(float x) { return std::trunc(x); }
float math_sqr(float x) { return x * x; }
float math_sqrt(float x) { return std::sqrt(x); }
float math_log(float x) { return std::log(x); }
float math_sin(float x) { return std::sin(x); }
float math_cos(float x) { return std::cos(x); }

template <float (*F)(float)>
void math_kernel(const compute_params & p, gk_tensor * dst) {
    map_rows(p, dst, [](float x, int64_t, int64_t) { return F(x); });
}

void unary(const compute_params & p, gk_tensor * dst) {
    if (gk_get_unary_op(dst) == GK_UNARY_OP_SILU) {  // silu_f32's bits (vec_exp.h), vectorised
        scratch w = p.work();
        transform_rows(p, w, dst, [dst](const float * x, float * y, int64_t, int64_t, int64_t) {
            get_exp_kernels().silu(y, x, dst->ne[0]);
        });
        return;
    }
    if (gk_get_unary_op(dst) == GK_UNARY_OP_XIELU) {  // op_params: see gk_xielu
        const float an = gk_get_op_params_f32(dst, 1), ap = gk_get_op_params_f32(dst, 2);
        const float beta = gk_get_op_params_f32(dst, 3), eps = gk_get_op_params_f32(dst, 4);
        map_rows(p, dst, [=](float x, int64_t, int64_t) {
            return x > 0.0f ? ap * x * x + beta * x : (std::expm1(std::fmin(x, eps)) - x) * an + beta * x;
        });
        return;
    }
    const act_fn f = unary_activation(gk_get_unary_op(dst), dst->src[0]->type);
    if (f == act_gelu_f32) {
        scratch  w = p.work();
        fp16_t * h = static_cast<fp16_t *>(w.take(static_cast<size_t>(dst->ne[0]) * sizeof(fp16_t)));
        transform_rows(p, w, dst, [dst, h](const float * x, float * y, int64_t, int64_t, int64_t) {
            gelu_f32_row(y, x, dst->ne[0], h);
        });
        return;
    }
    map_rows(p, dst, [f](float x, int64_t, int64_t) { return f(x); });
}

/// The rows of default_work_size and the f16 row of gelu_f32_row.
size_t unary_work_size(const gk_tensor * dst) {
    return default_work_size(dst) + scratch_bytes(static_cast<size_t>(dst->ne[0]) * sizeof(fp16_t));
}

void leaky_relu(const compute_params & p, gk_tensor * dst) {
    const float slope = gk_get_op_params_f32(dst, 0);
    map_rows(p, dst, [slope](float x, int64_t, int64_t) { return x > 0.0f ? x : slope * x; });
}

} // namespace

act_fn unary_activation(gk_unary_op op, gk_type type) {
    switch (op) {
    case GK_UNARY_OP_ABS: return act_abs;
    case GK_UNARY_OP_SGN: return act_sgn;
    case GK_UNARY_OP_NEG: return act_neg;
    case GK_UNARY_OP_STEP: return act_step;
    case GK_UNARY_OP_TANH: return act_tanh;
    case GK_UNARY_OP_ELU: return act_elu;
    case GK_UNARY_OP_RELU: return act_relu;
    case GK_UNARY_OP_SIGMOID: return act_sigmoid;
    case GK_UNARY_OP_GELU:
        return type == GK_TYPE_BF16 ? act_gelu : (type == GK_TYPE_F16 ? act_gelu_f16 : act_gelu_f32);
    case GK_UNARY_OP_GELU_QUICK: return type == GK_TYPE_BF16 ? act_gelu_quick : act_gelu_quick_f16;
    case GK_UNARY_OP_HARDSWISH: return act_hardswish;
    case GK_UNARY_OP_HARDSIGMOID: return act_hardsigmoid;
    case GK_UNARY_OP_EXP: return act_exp;
    case GK_UNARY_OP_EXPM1: return act_expm1;
    case GK_UNARY_OP_SOFTPLUS: return act_softplus;
    case GK_UNARY_OP_GELU_ERF: return act_gelu_erf;
    case GK_UNARY_OP_FLOOR: return act_floor;
    case GK_UNARY_OP_CEIL: return act_ceil;
    case GK_UNARY_OP_ROUND: return act_round;
    case GK_UNARY_OP_TRUNC: return act_trunc;
    default: return nullptr;
    }
}

void register_unary(kernel_table & t) {
    t.ops[GK_OP_SQR]        = {math_kernel<math_sqr>, nullptr};
    t.ops[GK_OP_SQRT]       = {math_kernel<math_sqrt>, nullptr};
    t.ops[GK_OP_LOG]        = {math_kernel<math_log>, nullptr};
    t.ops[GK_OP_SIN]        = {math_kernel<math_sin>, nullptr};
    t.ops[GK_OP_COS]        = {math_kernel<math_cos>, nullptr};
    t.ops[GK_OP_UNARY]      = {unary, unary_work_size};
    t.ops[GK_OP_LEAKY_RELU] = {leaky_relu, nullptr};
}

} // namespace gk::cpu
