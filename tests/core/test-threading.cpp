// test-threading - every op with a CPU kernel gives bit-identical output at 1, 2, 3, 4,
// 5, 7, 8, 16 and 64 threads, and the pool survives the awkward cases (thread counts
// changing between computes, empty graphs, freeing a context right after a compute).
//
// Each case is one line of k_cases: a name and a function that builds the op's graph
// from random inputs. Before every compute the outputs of all nodes that own storage
// are filled with a byte pattern that differs from run to run, so a kernel that leaves
// part of its output unwritten fails the comparison even if it is deterministic.
#include "op_check.h"

#include "gk/cpu/vec_dot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using gk_test::env;

struct op_case {
    const char *                          name;
    std::function<gk_tensor *(env & e)>   build;
};

gk_tensor * unary_case(env & e, gk_unary_op op) { return gk_unary(e.ctx, e.rand(GK_TYPE_F32, 33, 70, 1, 1, -4, 4), op); }

/// One optimizer step on a fresh parameter of 33 x 70: AdamW (m, v given) or SGD.
gk_tensor * opt_step_case(env & e, bool adamw) {
    gk_tensor * w = e.f32(33, 70);
    gk_set_param(w);
    gk_tensor * p = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, adamw ? 7 : 2);
    const float v[7] = {1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f, 10.0f, 1000.0f};
    std::memcpy(p->data, v, gk_nbytes(p));
    return adamw ? gk_opt_step_adamw(e.ctx, w, e.f32(33, 70), e.f32(33, 70), e.positive(33, 70), p)
                 : gk_opt_step_sgd(e.ctx, w, e.f32(33, 70), p);
}

/// A custom op whose callback splits dst's rows by ith / nth: dst = a * a.
void square_rows(gk_tensor * dst, const gk_tensor * a, int ith, int nth, void *) {
    const int64_t n = gk_nrows(dst);
    for (int64_t r = ith * n / nth; r < (ith + 1) * n / nth; ++r) {
        auto *       y = reinterpret_cast<float *>(static_cast<char *>(dst->data) + r * dst->nb[1]);
        const auto * x = reinterpret_cast<const float *>(static_cast<const char *>(a->data) + r * a->nb[1]);
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            y[i] = x[i] * x[i];
        }
    }
}

// clang-format off
const std::vector<op_case> k_cases = {
    {"add",            [](env & e) { return gk_add(e.ctx, e.f32(37, 10, 3, 2), e.f32(37, 1, 3, 1)); }},
    {"add_f16",        [](env & e) { return gk_add(e.ctx, e.rand(GK_TYPE_F16, 37, 70), e.f32(37, 70)); }},
    {"add_inplace",    [](env & e) { return gk_add_inplace(e.ctx, e.f32(37, 70), e.f32(1, 70)); }},
    {"sub",            [](env & e) { return gk_sub(e.ctx, e.f32(37, 70), e.f32(37)); }},
    {"mul",            [](env & e) { return gk_mul(e.ctx, e.f32(37, 10, 7), e.f32(37, 10, 1)); }},
    {"div",            [](env & e) { return gk_div(e.ctx, e.f32(37, 70), e.positive(37, 1)); }},
    {"sqr",            [](env & e) { return gk_sqr(e.ctx, e.f32(33, 70)); }},
    {"sqrt",           [](env & e) { return gk_sqrt(e.ctx, e.positive(33, 70)); }},
    {"log",            [](env & e) { return gk_log(e.ctx, e.positive(33, 70)); }},
    {"sin",            [](env & e) { return gk_sin(e.ctx, e.f32(33, 70)); }},
    {"cos",            [](env & e) { return gk_cos(e.ctx, e.f32(33, 70)); }},
    {"abs",            [](env & e) { return unary_case(e, GK_UNARY_OP_ABS); }},
    {"sgn",            [](env & e) { return unary_case(e, GK_UNARY_OP_SGN); }},
    {"neg",            [](env & e) { return unary_case(e, GK_UNARY_OP_NEG); }},
    {"step",           [](env & e) { return unary_case(e, GK_UNARY_OP_STEP); }},
    {"tanh",           [](env & e) { return unary_case(e, GK_UNARY_OP_TANH); }},
    {"elu",            [](env & e) { return unary_case(e, GK_UNARY_OP_ELU); }},
    {"relu",           [](env & e) { return unary_case(e, GK_UNARY_OP_RELU); }},
    {"sigmoid",        [](env & e) { return unary_case(e, GK_UNARY_OP_SIGMOID); }},
    {"gelu",           [](env & e) { return unary_case(e, GK_UNARY_OP_GELU); }},
    {"gelu_quick",     [](env & e) { return unary_case(e, GK_UNARY_OP_GELU_QUICK); }},
    {"silu",           [](env & e) { return unary_case(e, GK_UNARY_OP_SILU); }},
    {"hardswish",      [](env & e) { return unary_case(e, GK_UNARY_OP_HARDSWISH); }},
    {"hardsigmoid",    [](env & e) { return unary_case(e, GK_UNARY_OP_HARDSIGMOID); }},
    {"exp",            [](env & e) { return unary_case(e, GK_UNARY_OP_EXP); }},
    {"expm1",          [](env & e) { return unary_case(e, GK_UNARY_OP_EXPM1); }},
    {"softplus",       [](env & e) { return unary_case(e, GK_UNARY_OP_SOFTPLUS); }},
    {"gelu_erf",       [](env & e) { return unary_case(e, GK_UNARY_OP_GELU_ERF); }},
    {"floor",          [](env & e) { return unary_case(e, GK_UNARY_OP_FLOOR); }},
    {"ceil",           [](env & e) { return unary_case(e, GK_UNARY_OP_CEIL); }},
    {"round",          [](env & e) { return unary_case(e, GK_UNARY_OP_ROUND); }},
    {"trunc",          [](env & e) { return unary_case(e, GK_UNARY_OP_TRUNC); }},
    {"silu_bf16",      [](env & e) { return gk_silu(e.ctx, e.rand(GK_TYPE_BF16, 33, 70)); }},
    {"silu_permuted",  [](env & e) { return gk_silu(e.ctx, gk_transpose(e.ctx, e.f32(70, 33))); }},
    {"leaky_relu",     [](env & e) { return gk_leaky_relu(e.ctx, e.f32(33, 70), 0.1f, false); }},
    {"reglu",          [](env & e) { return gk_reglu(e.ctx, e.f32(34, 70)); }},
    {"geglu",          [](env & e) { return gk_geglu(e.ctx, e.f32(34, 70)); }},
    {"swiglu",         [](env & e) { return gk_swiglu(e.ctx, e.f32(34, 70)); }},
    {"swiglu_swapped", [](env & e) { return gk_glu(e.ctx, e.f32(34, 70), GK_GLU_OP_SWIGLU, true); }},
    {"geglu_erf",      [](env & e) { return gk_geglu_erf(e.ctx, e.f32(34, 70)); }},
    {"geglu_quick",    [](env & e) { return gk_geglu_quick(e.ctx, e.f32(34, 70)); }},
    {"swiglu_split",   [](env & e) { return gk_swiglu_split(e.ctx, e.f32(17, 70), e.f32(17, 70)); }},
    {"swiglu_oai",     [](env & e) { return gk_swiglu_oai(e.ctx, e.f32(17, 70), e.f32(17, 70), 1.702f, 0.7f); }},
    {"scale",          [](env & e) { return gk_scale(e.ctx, e.f32(33, 70), 0.37f); }},
    {"scale_bias",     [](env & e) { return gk_scale_bias(e.ctx, e.f32(33, 70), 0.37f, -1.5f); }},
    {"clamp",          [](env & e) { return gk_clamp(e.ctx, e.f32(33, 70), -0.5f, 0.25f); }},
    {"norm",           [](env & e) { return gk_norm(e.ctx, e.f32(64, 70), 1e-5f); }},
    {"rms_norm",       [](env & e) { return gk_rms_norm(e.ctx, e.f32(64, 70), 1e-6f); }},
    {"rms_norm_f16",   [](env & e) { return gk_rms_norm(e.ctx, e.rand(GK_TYPE_F16, 64, 70), 1e-6f); }},
    {"l2_norm",        [](env & e) { return gk_l2_norm(e.ctx, e.f32(64, 70), 1e-12f); }},
    {"group_norm",     [](env & e) { return gk_group_norm(e.ctx, e.f32(9, 5, 70, 2), 7, 1e-5f); }},
    {"mul_mat",        [](env & e) { return gk_mul_mat(e.ctx, e.f32(64, 70), e.f32(64, 19)); }},
    {"mul_mat_vec",    [](env & e) { return gk_mul_mat(e.ctx, e.f32(64, 130), e.f32(64, 1)); }},
    {"mul_mat_bcast",  [](env & e) { return gk_mul_mat(e.ctx, e.f32(32, 9, 2, 1), e.f32(32, 5, 6, 3)); }},
    {"mul_mat_f16",    [](env & e) { return gk_mul_mat(e.ctx, e.rand(GK_TYPE_F16, 64, 70), e.f32(64, 19)); }},
    {"mul_mat_q8_0",   [](env & e) { return gk_mul_mat(e.ctx, e.rand(GK_TYPE_Q8_0, 64, 70), e.f32(64, 19)); }},
    {"mul_mat_q4_K",   [](env & e) { return gk_mul_mat(e.ctx, e.rand(GK_TYPE_Q4_K, 256, 70), e.f32(256, 3)); }},
    {"mul_mat_id",     [](env & e) { return gk_mul_mat_id(e.ctx, e.f32(32, 20, 6), e.f32(32, 1, 9), e.indices(6, 4, 9)); }},
    {"out_prod",       [](env & e) { return gk_out_prod(e.ctx, e.f32(23, 16), e.f32(70, 16)); }},
    {"dup",            [](env & e) { return gk_dup(e.ctx, e.f32(33, 70)); }},
    {"cont",           [](env & e) { return gk_cont(e.ctx, gk_permute(e.ctx, e.f32(5, 14, 3, 2), 2, 0, 1, 3)); }},
    {"cpy_f16",        [](env & e) { return gk_cpy(e.ctx, e.f32(33, 70), gk_new_tensor_2d(e.ctx, GK_TYPE_F16, 33, 70)); }},
    {"cpy_q8_0",       [](env & e) { return gk_cpy(e.ctx, e.f32(64, 70), gk_new_tensor_2d(e.ctx, GK_TYPE_Q8_0, 64, 70)); }},
    {"cpy_reshape",    [](env & e) { return gk_cpy(e.ctx, gk_transpose(e.ctx, e.f32(21, 30)), gk_new_tensor_2d(e.ctx, GK_TYPE_F32, 45, 14)); }},
    {"cast_bf16",      [](env & e) { return gk_cast(e.ctx, e.f32(33, 70), GK_TYPE_BF16); }},
    {"get_rows",       [](env & e) { return gk_get_rows(e.ctx, e.f32(33, 20), e.indices(20, 70)); }},
    {"get_rows_q4_0",  [](env & e) { return gk_get_rows(e.ctx, e.rand(GK_TYPE_Q4_0, 64, 20), e.indices(20, 70)); }},
    {"get_rows_3d",    [](env & e) { return gk_get_rows(e.ctx, e.rand(GK_TYPE_F16, 16, 10, 4), e.indices(10, 20, 4)); }},
    {"set_rows",       [](env & e) { return gk_set_rows(e.ctx, e.f32(16, 90), e.f32(16, 70), e.indices(90, 70)); }},
    {"set_rows_f16",   [](env & e) { return gk_set_rows(e.ctx, e.rand(GK_TYPE_F16, 16, 90, 2), e.f32(16, 70, 2), e.indices(90, 70, 1, 1, GK_TYPE_I64)); }},
    {"set_rows_iq4_nl", [](env & e) { return gk_set_rows(e.ctx, e.rand(GK_TYPE_IQ4_NL, 64, 90), e.f32(64, 70), e.indices(90, 70)); }},
    {"repeat",         [](env & e) { return gk_repeat(e.ctx, e.f32(5, 3, 1, 2), e.f32(10, 9, 4, 2)); }},
    {"concat_0",       [](env & e) { return gk_concat(e.ctx, e.f32(5, 70), e.f32(7, 70), 0); }},
    {"concat_1",       [](env & e) { return gk_concat(e.ctx, e.f32(5, 30), e.f32(5, 40), 1); }},
    {"concat_3",       [](env & e) { return gk_concat(e.ctx, e.f32(5, 7, 3, 2), e.f32(5, 7, 3, 1), 3); }},
    {"pad",            [](env & e) { return gk_pad_ext(e.ctx, e.f32(9, 30, 2), 1, 2, 3, 4, 0, 1, 0, 0); }},
    {"arange",         [](env & e) { return gk_arange(e.ctx, -3.0f, 70.0f, 0.75f); }},
    {"timestep_emb",   [](env & e) { return gk_timestep_embedding(e.ctx, e.rand(GK_TYPE_F32, 70, 1, 1, 1, 0, 1000), 33, 10000); }},
    {"soft_max",       [](env & e) { return gk_soft_max(e.ctx, e.f32(33, 70)); }},
    {"soft_max_mask",  [](env & e) { return gk_soft_max_ext(e.ctx, e.f32(40, 10, 8), e.causal_mask(GK_TYPE_F16, 40, 12), 0.125f, 0.0f); }},
    {"soft_max_alibi", [](env & e) { return gk_soft_max_ext(e.ctx, e.f32(40, 10, 6), e.causal_mask(GK_TYPE_F32, 40, 10), 0.5f, 8.0f); }},
    {"soft_max_sinks", [](env & e) {
        gk_tensor * r = gk_soft_max_ext(e.ctx, e.f32(40, 10, 8), e.causal_mask(GK_TYPE_F16, 40, 10), 0.3f, 0.0f);
        gk_soft_max_add_sinks(r, e.f32(8));
        return r; }},
    {"diag_mask_inf",  [](env & e) { return gk_diag_mask_inf(e.ctx, e.f32(20, 20, 4), 3); }},
    {"diag_mask_zero", [](env & e) { return gk_diag_mask_zero(e.ctx, e.f32(20, 20, 4), 0); }},
    {"rope_normal",    [](env & e) { return gk_rope(e.ctx, e.f32(32, 4, 18), e.indices(100, 18), 32, GK_ROPE_TYPE_NORMAL); }},
    {"rope_neox",      [](env & e) { return gk_rope(e.ctx, e.f32(32, 4, 18), e.indices(100, 18), 32, GK_ROPE_TYPE_NEOX); }},
    {"rope_partial",   [](env & e) { return gk_rope(e.ctx, e.f32(32, 4, 18), e.indices(100, 18), 12, GK_ROPE_TYPE_NEOX); }},
    {"rope_yarn",      [](env & e) { return gk_rope_ext(e.ctx, e.f32(32, 4, 18), e.indices(9000, 18), nullptr, 32, GK_ROPE_TYPE_NEOX, 4096, 10000.0f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f); }},
    {"rope_ff",        [](env & e) { return gk_rope_ext(e.ctx, e.f32(32, 4, 18), e.indices(100, 18), e.positive(16), 32, GK_ROPE_TYPE_NORMAL, 0, 500000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f); }},
    {"sum",            [](env & e) { return gk_sum(e.ctx, e.f32(33, 70)); }},
    {"sum_rows",       [](env & e) { return gk_sum_rows(e.ctx, e.f32(33, 70)); }},
    {"mean",           [](env & e) { return gk_mean(e.ctx, e.f32(33, 70)); }},
    {"argmax",         [](env & e) { return gk_argmax(e.ctx, e.f32(33, 70)); }},
    {"count_equal",    [](env & e) { return gk_count_equal(e.ctx, e.indices(4, 33, 70), e.indices(4, 33, 70)); }},
    {"cumsum",         [](env & e) { return gk_cumsum(e.ctx, e.f32(33, 70)); }},
    {"argsort_asc",    [](env & e) { return gk_argsort(e.ctx, e.rand(GK_TYPE_F16, 33, 70), GK_SORT_ORDER_ASC); }},
    {"argsort_desc",   [](env & e) { return gk_argsort(e.ctx, e.f32(33, 70), GK_SORT_ORDER_DESC); }},
    {"top_k",          [](env & e) { return gk_top_k(e.ctx, e.f32(33, 70), 5); }},
    {"flash_attn",     [](env & e) { return gk_flash_attn_ext(e.ctx, e.f32(16, 9, 8), e.f32(16, 12, 2), e.f32(8, 12, 2), e.causal_mask(GK_TYPE_F16, 12, 9), 0.25f, 0.0f, 0.0f); }},
    {"flash_attn_f16", [](env & e) {
        gk_tensor * r = gk_flash_attn_ext(e.ctx, e.f32(16, 9, 8), e.rand(GK_TYPE_F16, 16, 12, 4), e.rand(GK_TYPE_F16, 16, 12, 4), e.causal_mask(GK_TYPE_F16, 12, 9), 0.25f, 4.0f, 20.0f);
        gk_flash_attn_ext_add_sinks(r, e.f32(8));
        return r; }},
    // a mask of its own per head (ne[2] = H), over heads grouped 4 to a kv head
    {"flash_attn_mask_heads", [](env & e) { return gk_flash_attn_ext(e.ctx, e.f32(16, 9, 8), e.f32(16, 12, 2), e.f32(8, 12, 2), e.rand(GK_TYPE_F16, 12, 9, 8, 1, -3, 1), 0.25f, 0.0f, 0.0f); }},
    {"flash_attn_q4_1_q5_0", [](env & e) { return gk_flash_attn_ext(e.ctx, e.f32(64, 9, 8), e.rand(GK_TYPE_Q4_1, 64, 12, 2), e.rand(GK_TYPE_Q5_0, 64, 12, 2), e.causal_mask(GK_TYPE_F16, 12, 9), 0.25f, 0.0f, 0.0f); }},
    {"set",            [](env & e) { gk_tensor * a = e.f32(33, 70); return gk_set(e.ctx, a, e.f32(20, 30), a->nb[1] * 2, a->nb[2], a->nb[3], a->nb[1] + 12); }},
    {"set_1d_inplace", [](env & e) { return gk_set_1d_inplace(e.ctx, e.f32(33, 70), e.f32(500), 400); }},
    {"acc",            [](env & e) { gk_tensor * a = e.f32(33, 70); return gk_acc(e.ctx, a, e.f32(10, 60), a->nb[1], a->nb[2], a->nb[3], 40); }},
    {"add1",           [](env & e) { return gk_add1(e.ctx, e.f32(33, 70), e.f32(1)); }},
    {"ssm_conv",       [](env & e) { return gk_ssm_conv(e.ctx, e.f32(12, 40, 3), e.f32(4, 40)); }},
    {"ssm_scan",       [](env & e) { return gk_ssm_scan(e.ctx, e.f32(16, 8, 6, 3), e.f32(8, 6, 5, 2), e.f32(6, 5, 2), e.rand(GK_TYPE_F32, 1, 6, 1, 1, -2, -0.1f), e.f32(16, 2, 5, 2), e.f32(16, 2, 5, 2), e.indices(3, 2), 3); }},
    {"ssm_scan_mamba1", [](env & e) { return gk_ssm_scan(e.ctx, e.f32(16, 8, 6, 2), e.f32(8, 6, 5, 2), e.f32(6, 5, 2), e.rand(GK_TYPE_F32, 16, 6, 1, 1, -2, -0.1f), e.f32(16, 1, 5, 2), e.f32(16, 1, 5, 2), e.indices(2, 2), 1); }},
    {"rwkv_wkv6",      [](env & e) { return gk_rwkv_wkv6(e.ctx, e.f32(8, 5, 6), e.f32(8, 5, 6), e.f32(8, 5, 6), e.f32(8, 5), e.positive(8, 5, 6), e.f32(320, 2)); }},
    {"gated_linear_attn", [](env & e) { return gk_gated_linear_attn(e.ctx, e.f32(8, 5, 6), e.f32(8, 5, 6), e.f32(8, 5, 6), e.positive(8, 5, 6), e.f32(320, 2), 0.3f); }},
    {"rwkv_wkv7",      [](env & e) { return gk_rwkv_wkv7(e.ctx, e.f32(8, 5, 6), e.positive(8, 5, 6), e.f32(8, 5, 6), e.f32(8, 5, 6), e.f32(8, 5, 6), e.f32(8, 5, 6), e.f32(320, 2)); }},
    {"gated_delta_net", [](env & e) { return gk_gated_delta_net(e.ctx, e.f32(8, 1, 4, 2), e.f32(8, 1, 4, 2), e.f32(8, 5, 4, 2), e.rand(GK_TYPE_F32, 1, 5, 4, 2, -1, 0), e.f32(1, 5, 4, 2), e.f32(8, 8, 5, 2), 2); }},
    {"gated_delta_net_kda", [](env & e) { return gk_gated_delta_net(e.ctx, e.f32(8, 5, 4, 2), e.f32(8, 5, 4, 2), e.f32(8, 5, 4, 2), e.rand(GK_TYPE_F32, 8, 5, 4, 2, -1, 0), e.f32(1, 5, 4, 2), e.f32(8, 8, 5, 2), 6); }},
    {"rope_mrope",     [](env & e) { int s[4] = {6, 5, 5, 0}; return gk_rope_multi(e.ctx, e.f32(32, 4, 18), e.indices(100, 72), nullptr, 32, s, GK_ROPE_TYPE_MROPE, 0, 1000000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f); }},
    {"rope_imrope",    [](env & e) { int s[4] = {4, 3, 3, 0}; return gk_rope_multi(e.ctx, e.f32(32, 4, 18), e.indices(100, 72), nullptr, 24, s, GK_ROPE_TYPE_IMROPE, 4096, 10000.0f, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f); }},
    {"rope_vision",    [](env & e) { int s[4] = {8, 8, 0, 0}; return gk_rope_multi(e.ctx, e.f32(32, 4, 18), e.indices(100, 72), e.positive(16), 16, s, GK_ROPE_TYPE_VISION, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f); }},
    {"win_part",       [](env & e) { return gk_win_part(e.ctx, e.f32(5, 13, 11), 4); }},
    {"win_unpart",     [](env & e) { return gk_win_unpart(e.ctx, e.f32(5, 4, 4, 12), 13, 11, 4); }},
    {"get_rel_pos",    [](env & e) { return gk_get_rel_pos(e.ctx, e.rand(GK_TYPE_F16, 9, 27), 14, 14); }},
    {"add_rel_pos",    [](env & e) { return gk_add_rel_pos(e.ctx, e.f32(36, 20, 3), e.f32(6, 5, 4, 3), e.f32(6, 5, 4, 3)); }},
    {"map_custom1",    [](env & e) { return gk_map_custom1(e.ctx, e.f32(33, 70), square_rows, GK_N_TASKS_MAX, nullptr); }},
    {"map_custom1_3_tasks", [](env & e) { return gk_map_custom1(e.ctx, e.f32(33, 70), square_rows, 3, nullptr); }},
    {"im2col_f16",     [](env & e) { return gk_im2col(e.ctx, e.f32(3, 3, 4, 2), e.f32(12, 10, 4, 2), 1, 2, 1, 1, 1, 1, true, GK_TYPE_F16); }},
    {"im2col_1d",      [](env & e) { return gk_im2col(e.ctx, e.f32(5, 3, 2), e.f32(40, 3, 2), 2, 0, 2, 0, 1, 0, false, GK_TYPE_F32); }},
    {"im2col_back",    [](env & e) { int64_t ne[4] = {12, 10, 4, 2}; return gk_im2col_back(e.ctx, e.f32(36, 12, 5, 2), e.f32(3, 3, 4, 2), ne, 1, 2, 1, 1, 1, 1, true); }},
    {"col2im_1d",      [](env & e) { return gk_col2im_1d(e.ctx, e.rand(GK_TYPE_F16, 4 * 70, 9), 3, 70, 1); }},
    {"conv_1d",        [](env & e) { return gk_conv_1d(e.ctx, e.f32(5, 3, 4), e.f32(40, 3, 2), 2, 1, 1); }},
    {"conv_1d_dw",     [](env & e) { return gk_conv_1d_dw(e.ctx, e.f32(3, 1, 6), e.f32(40, 6), 1, 1, 1); }},
    {"conv_2d",        [](env & e) { return gk_conv_2d(e.ctx, e.rand(GK_TYPE_F16, 3, 3, 4, 6), e.f32(12, 10, 4, 2), 1, 1, 1, 1, 1, 1); }},
    {"conv_2d_dw",     [](env & e) { return gk_conv_2d_dw(e.ctx, e.f32(3, 3, 1, 5), e.f32(12, 10, 5, 2), 2, 1, 1, 1, 1, 1); }},
    {"conv_2d_direct", [](env & e) { return gk_conv_2d_direct(e.ctx, e.f32(3, 3, 4, 6), e.f32(12, 10, 4, 2), 1, 2, 1, 1, 2, 1); }},
    {"conv_2d_dw_direct", [](env & e) { return gk_conv_2d_dw_direct(e.ctx, e.f32(3, 3, 1, 5), e.rand(GK_TYPE_F16, 12, 10, 5, 2), 1, 1, 1, 1, 1, 1); }},
    {"conv_2d_dw_cwhn", [](env & e) { return gk_conv_2d_dw_direct(e.ctx, e.f32(3, 3, 1, 5), gk_permute(e.ctx, e.f32(5, 12, 10, 2), 2, 0, 1, 3), 1, 1, 1, 1, 1, 1); }},
    {"im2col_3d",      [](env & e) { return gk_im2col_3d(e.ctx, e.f32(3, 2, 2, 6), e.f32(8, 6, 7, 4), 2, 1, 2, 1, 1, 0, 1, 1, 1, 2, GK_TYPE_F16); }},
    {"conv_3d",        [](env & e) { return gk_conv_3d(e.ctx, e.f32(3, 2, 2, 6), e.f32(8, 6, 7, 4), 2, 1, 2, 1, 1, 0, 1, 1, 1, 2); }},
    {"conv_3d_direct", [](env & e) { return gk_conv_3d_direct(e.ctx, e.f32(3, 2, 2, 6), e.f32(8, 6, 7, 4), 1, 2, 1, 1, 0, 1, 1, 1, 2, 2, 2, 3); }},
    {"conv_transpose_1d", [](env & e) { return gk_conv_transpose_1d(e.ctx, e.f32(4, 70, 5), e.f32(9, 5), 3, 0, 1); }},
    {"conv_transpose_1d_f16", [](env & e) { return gk_conv_transpose_1d(e.ctx, e.rand(GK_TYPE_F16, 4, 70, 5), e.f32(9, 5), 2, 0, 1); }},
    {"conv_transpose_2d", [](env & e) { return gk_conv_transpose_2d_p0(e.ctx, e.rand(GK_TYPE_F16, 3, 3, 6, 4), e.f32(7, 6, 4, 2), 2); }},
    {"pool_1d_avg",    [](env & e) { return gk_pool_1d(e.ctx, e.f32(33, 70), GK_OP_POOL_AVG, 3, 2, 1); }},
    {"pool_2d_max",    [](env & e) { return gk_pool_2d(e.ctx, e.rand(GK_TYPE_F16, 15, 14, 5, 2), GK_OP_POOL_MAX, 3, 2, 2, 2, 1.0f, 1.0f); }},
    {"pool_2d_back",   [](env & e) { return gk_pool_2d_back(e.ctx, e.f32(8, 8, 5, 2), e.f32(15, 14, 5, 2), GK_OP_POOL_MAX, 3, 2, 2, 2, 1.0f, 1.0f); }},
    {"upscale_nearest", [](env & e) { return gk_upscale(e.ctx, e.f32(7, 5, 4, 2), 3, GK_SCALE_MODE_NEAREST); }},
    {"interp_bilinear", [](env & e) { return gk_interpolate(e.ctx, e.f32(7, 5, 4, 2), 17, 12, 4, 2, GK_SCALE_MODE_BILINEAR); }},
    {"interp_align",   [](env & e) { return gk_interpolate(e.ctx, e.f32(7, 5, 4, 2), 17, 12, 8, 2, GK_SCALE_MODE_BILINEAR | static_cast<uint32_t>(GK_SCALE_FLAG_ALIGN_CORNERS)); }},
    {"interp_bicubic", [](env & e) { return gk_interpolate(e.ctx, e.f32(7, 5, 4, 2), 11, 12, 4, 2, GK_SCALE_MODE_BICUBIC); }},
    {"interp_antialias", [](env & e) { return gk_interpolate(e.ctx, e.f32(17, 15, 4, 2), 5, 6, 4, 2, GK_SCALE_MODE_BILINEAR | static_cast<uint32_t>(GK_SCALE_FLAG_ANTIALIAS)); }},
    {"pad_reflect_1d", [](env & e) { return gk_pad_reflect_1d(e.ctx, e.f32(9, 70), 4, 8); }},
    {"pad_circular",   [](env & e) { return gk_pad_ext_circular(e.ctx, e.f32(9, 30, 2), 3, 11, 4, 2, 0, 1, 0, 0); }},
    {"silu_back",      [](env & e) { return gk_silu_back(e.ctx, e.f32(33, 70), e.f32(33, 70)); }},
    {"silu_back_f16",  [](env & e) { return gk_silu_back(e.ctx, e.rand(GK_TYPE_F16, 33, 70), e.rand(GK_TYPE_F16, 33, 70)); }},
    {"rms_norm_back",  [](env & e) { return gk_rms_norm_back(e.ctx, e.f32(64, 70), e.f32(64, 70), 1e-6f); }},
    {"soft_max_back",  [](env & e) { return gk_soft_max_ext_back(e.ctx, e.f32(33, 70), gk_soft_max(e.ctx, e.f32(33, 70)), 0.5f, 0.0f); }},
    {"soft_max_back_inplace", [](env & e) { return gk_soft_max_ext_back_inplace(e.ctx, e.f32(33, 70), gk_soft_max(e.ctx, e.f32(33, 70)), 1.0f, 4.0f); }},
    {"rope_back_yarn", [](env & e) { return gk_rope_ext_back(e.ctx, e.f32(32, 4, 18), e.indices(9000, 18), nullptr, 32, GK_ROPE_TYPE_NEOX, 4096, 10000.0f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f); }},
    {"rope_multi_back", [](env & e) { int s[4] = {6, 5, 5, 0}; return gk_rope_multi_back(e.ctx, e.f32(32, 4, 18), e.indices(100, 72), nullptr, 32, s, GK_ROPE_TYPE_MROPE, 0, 1000000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f); }},
    {"get_rows_back",  [](env & e) { return gk_get_rows_back(e.ctx, e.f32(33, 70), e.indices(20, 70), e.f32(33, 20)); }},
    {"repeat_back",    [](env & e) { return gk_repeat_back(e.ctx, e.f32(10, 9, 4, 2), e.f32(5, 3, 1, 2)); }},
    {"cross_entropy_loss", [](env & e) { return gk_cross_entropy_loss(e.ctx, e.f32(33, 70), e.positive(33, 70)); }},
    {"cross_entropy_loss_back", [](env & e) { return gk_cross_entropy_loss_back(e.ctx, e.f32(1), e.f32(33, 70), e.positive(33, 70)); }},
    {"opt_step_adamw", [](env & e) { return opt_step_case(e, true); }},
    {"opt_step_sgd",   [](env & e) { return opt_step_case(e, false); }},
    {"add_id",         [](env & e) { return gk_add_id(e.ctx, e.f32(33, 4, 18), e.f32(33, 8), e.indices(8, 4, 18)); }},
    {"add_cast",       [](env & e) { return gk_add_cast(e.ctx, e.rand(GK_TYPE_F16, 32, 70), e.f32(32), GK_TYPE_F32); }},
    {"fill",           [](env & e) { return gk_fill(e.ctx, e.f32(33, 70), 0.25f); }},
    {"fill_inplace",   [](env & e) { return gk_fill_inplace(e.ctx, e.f32(33, 70), -3.0f); }},
    {"tri",            [](env & e) { return gk_tri(e.ctx, e.f32(33, 33, 3), GK_TRI_TYPE_LOWER_DIAG); }},
    {"diag",           [](env & e) { return gk_diag(e.ctx, e.f32(33, 1, 3)); }},
    {"roll",           [](env & e) { return gk_roll(e.ctx, e.f32(33, 20, 3, 2), 5, -7, 1, 0); }},
    {"count_equal",    [](env & e) { return gk_count_equal(e.ctx, e.indices(3, 33, 70), e.indices(3, 33, 70)); }},
    {"solve_tri",      [](env & e) { return gk_solve_tri(e.ctx, e.positive(20, 20, 3), e.f32(7, 20, 3), true, true, false); }},
    {"xielu",          [](env & e) { return gk_xielu(e.ctx, e.rand(GK_TYPE_F32, 33, 70, 1, 1, -4, 4), 0.8f, 0.8f, 0.5f, -1e-6f); }},
    {"swiglu_clamp",   [](env & e) { return gk_swiglu_clamp(e.ctx, e.rand(GK_TYPE_F32, 34, 70, 1, 1, -9, 9), nullptr, 7.0f); }},
    {"geglu_swapped",  [](env & e) { return gk_geglu_swapped(e.ctx, e.f32(35, 70)); }},
    {"lightning_indexer", [](env & e) { return gk_lightning_indexer(e.ctx, e.f32(16, 4, 9, 2), e.rand(GK_TYPE_F16, 16, 1, 33, 2), e.f32(4, 9, 1, 2), e.rand(GK_TYPE_F16, 33, 9, 1, 1, -2, 0)); }},
    {"dsv4_hc_comb",   [](env & e) { return gk_dsv4_hc_comb(e.ctx, e.f32(24, 70), e.positive(3), e.f32(24), 1e-6f, 3); }},
    {"dsv4_hc_pre",    [](env & e) { return gk_dsv4_hc_pre(e.ctx, e.f32(33, 4, 20), e.f32(4, 20)); }},
    {"dsv4_hc_pre_gated", [](env & e) { return gk_dsv4_hc_pre_gated(e.ctx, e.f32(33, 4, 20), e.f32(33, 4, 20), 0.5f); }},
    {"flash_attn_back", [](env & e) { return gk_flash_attn_back(e.ctx, e.f32(16, 9, 4, 2), e.f32(16, 13, 2, 2), e.f32(13, 16, 2, 2), e.f32(16, 9, 4, 2), true); }},
    {"dsv4_hc_post",   [](env & e) { return gk_dsv4_hc_post(e.ctx, e.f32(33, 20), e.f32(33, 4, 20), e.f32(4, 20), e.f32(4, 4, 20)); }},
    {"rope_offset",    [](env & e) {
        gk_tensor * r = gk_rope(e.ctx, e.f32(32, 4, 18), e.indices(100, 18), 12, GK_ROPE_TYPE_NEOX);
        return r && gk_rope_set_offset(r, 8) ? r : nullptr; }},
};
// clang-format on

constexpr int k_thread_counts[] = {1, 2, 3, 4, 5, 7, 8, 16, 64};

struct built_case {
    const op_case *                 c;
    gk_cgraph *                     graph;
    gk_tensor *                     out;
    std::vector<unsigned char>      reference;  // output bytes at one thread
};

std::vector<unsigned char> bytes_of(const gk_tensor * t) {
    const auto * p = static_cast<const unsigned char *>(t->data);
    return {p, p + gk_nbytes(t)};
}

/// Overwrite every node output that owns its storage (views alias their sources; a
/// parameter is a node with op NONE, an input that no kernel writes).
void scribble(gk_cgraph * g, unsigned char pattern) {
    for (int i = 0; i < gk_graph_n_nodes(g); ++i) {
        gk_tensor * n = gk_graph_node(g, i);
        if (!n->view_src && n->data && n->op != GK_OP_NONE) {
            std::memset(n->data, pattern, gk_nbytes(n));
        }
    }
}

/// A graph that writes into an input (set_rows, cpy, _inplace, an optimizer step) must
/// start each run from the same input bytes: those of the leafs and of the parameters
/// (nodes with op NONE) are saved once and restored before every compute.
struct saved_leafs {
    std::vector<std::pair<gk_tensor *, std::vector<unsigned char>>> leafs;
    explicit saved_leafs(gk_cgraph * g) {
        for (int i = 0; i < gk_graph_n_leafs(g); ++i) {
            leafs.emplace_back(gk_graph_leaf(g, i), bytes_of(gk_graph_leaf(g, i)));
        }
        for (int i = 0; i < gk_graph_n_nodes(g); ++i) {
            if (gk_graph_node(g, i)->op == GK_OP_NONE) {
                leafs.emplace_back(gk_graph_node(g, i), bytes_of(gk_graph_node(g, i)));
            }
        }
    }
    void restore() const {
        for (const auto & [t, b] : leafs) {
            std::memcpy(t->data, b.data(), b.size());
        }
    }
};

TEST(Threading, EveryOpIsBitIdenticalAtEveryThreadCount) {
    env                      e;
    gk_context *             ctx = e.ctx;
    ASSERT_NE(ctx, nullptr);
    std::vector<built_case>  cases;
    std::vector<saved_leafs> inputs;
    for (const op_case & c : k_cases) {
        gk_tensor * out = c.build(e);
        ASSERT_NE(out, nullptr) << c.name << ": " << gk_last_error(ctx);
        gk_cgraph * g = gk_new_graph(ctx);
        ASSERT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS) << c.name;
        cases.push_back({&c, g, out, {}});
        inputs.emplace_back(g);
    }
    unsigned char pattern = 0xFF;
    for (int nth : k_thread_counts) {
        for (size_t i = 0; i < cases.size(); ++i) {
            built_case & bc = cases[i];
            inputs[i].restore();
            scribble(bc.graph, pattern);
            ASSERT_EQ(gk_graph_compute(bc.graph, nth), GK_STATUS_SUCCESS)
                << bc.c->name << " at " << nth << " threads: " << gk_last_error(ctx);
            if (nth == 1) {
                bc.reference = bytes_of(bc.out);
                if (bc.out->type == GK_TYPE_F32) {
                    const auto * v = static_cast<const float *>(bc.out->data);
                    for (int64_t k = 0; k < gk_nelements(bc.out); ++k) {
                        ASSERT_FALSE(std::isnan(v[k])) << bc.c->name << " element " << k;
                    }
                }
            } else {
                EXPECT_TRUE(bytes_of(bc.out) == bc.reference) << bc.c->name << " differs at " << nth << " threads";
            }
        }
        pattern = static_cast<unsigned char>(pattern * 7 + 3);
    }
}

// mul_mat tiles its output on both axes (weight rows x column panels), so consistency
// across thread counts proves little about its index arithmetic: a wrong index is
// usually wrong the same way at every count. This sweep compares against a naive loop
// that calls the same vec_dot on the same converted activations, so the comparison is
// exact and only the indexing is on trial. The shapes include one column panel with
// several slabs (a panel reused across slabs shows), panel edges (16, 17 columns) and
// head broadcast in both dims 2 and 3.
TEST(Threading, MulMatTilingAgainstANaiveLoop) {
    struct shape {
        gk_type type;
        int64_t K, M, N, A2, A3, B2, B3;
    };
    const shape shapes[] = {
        {GK_TYPE_F32, 64, 70, 19, 1, 1, 1, 1},  {GK_TYPE_F32, 32, 9, 5, 2, 1, 6, 3},
        {GK_TYPE_F16, 64, 3, 16, 1, 2, 3, 2},   {GK_TYPE_F32, 16, 130, 17, 1, 1, 2, 1},
        {GK_TYPE_Q8_0, 64, 33, 1, 2, 1, 4, 1},  {GK_TYPE_Q4_K, 256, 5, 40, 1, 1, 2, 1},
        {GK_TYPE_Q1_0, 256, 31, 1, 1, 1, 1, 1},
    };
    for (const shape & sh : shapes) {
        env         e(8u << 20);
        gk_tensor * a = e.rand(sh.type, sh.K, sh.M, sh.A2, sh.A3);
        gk_tensor * b = e.f32(sh.K, sh.N, sh.B2, sh.B3);
        gk_tensor * y = gk_mul_mat(e.ctx, a, b);
        ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
        gk_cgraph * g = gk_new_graph(e.ctx);
        gk_build_forward_expand(g, y);

        const auto *        vd = gk::cpu::get_vec_dot_traits(sh.type);
        const size_t        rb = gk_row_size(vd->vec_dot_type, sh.K);
        std::vector<char>   act(rb);
        std::vector<float>  expect;
        for (int64_t i3 = 0; i3 < sh.B3; ++i3) {
            for (int64_t i2 = 0; i2 < sh.B2; ++i2) {
                for (int64_t n = 0; n < sh.N; ++n) {
                    const char * brow = static_cast<const char *>(b->data) + n * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3];
                    vd->from_float(reinterpret_cast<const float *>(brow), act.data(), sh.K);
                    for (int64_t m = 0; m < sh.M; ++m) {
                        const char * wrow = static_cast<const char *>(a->data) + m * a->nb[1] +
                                            (i2 / (sh.B2 / sh.A2)) * a->nb[2] + (i3 / (sh.B3 / sh.A3)) * a->nb[3];
                        float s;
                        vd->vec_dot(sh.K, &s, wrow, act.data());
                        expect.push_back(s);
                    }
                }
            }
        }
        for (int nth : k_thread_counts) {
            std::memset(y->data, 0xFF, gk_nbytes(y));
            ASSERT_EQ(gk_graph_compute(g, nth), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
            ASSERT_EQ(std::memcmp(y->data, expect.data(), expect.size() * sizeof(float)), 0)
                << gk_type_name(sh.type) << " K=" << sh.K << " M=" << sh.M << " N=" << sh.N << " at " << nth
                << " threads";
        }
    }
}

// A decode mul_mat hands its chunks out at run time from a counter the compute pass
// clears between steps: several in one graph, each of them complete and each element the
// single row's vec_dot, at every thread count (a counter left over from the step before
// would skip chunks, left as the 0xFF fill).
TEST(Threading, DecodeChunksInConsecutiveSteps) {
    const int64_t            K      = 64;
    const int64_t            rows[] = {70, 33, 1, 16, 129};
    env                      e(8u << 20);
    gk_tensor *              b = e.f32(K);
    gk_cgraph *              g = gk_new_graph(e.ctx);
    std::vector<gk_tensor *> as, ys;
    for (int64_t M : rows) {
        as.push_back(e.rand(GK_TYPE_Q8_0, K, M));
        ys.push_back(gk_mul_mat(e.ctx, as.back(), b));
        ASSERT_NE(ys.back(), nullptr) << gk_last_error(e.ctx);
        gk_build_forward_expand(g, ys.back());
    }
    const auto *      vd = gk::cpu::get_vec_dot_traits(GK_TYPE_Q8_0);
    std::vector<char> act(gk_row_size(vd->vec_dot_type, K));
    vd->from_float(static_cast<const float *>(b->data), act.data(), K);
    for (int nth : k_thread_counts) {
        for (gk_tensor * y : ys) {
            std::memset(y->data, 0xFF, gk_nbytes(y));
        }
        ASSERT_EQ(gk_graph_compute(g, nth), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
        for (size_t i = 0; i < ys.size(); ++i) {
            for (int64_t m = 0; m < rows[i]; ++m) {
                float s;
                vd->vec_dot(K, &s, static_cast<const char *>(as[i]->data) + m * as[i]->nb[1], act.data());
                ASSERT_EQ(std::memcmp(static_cast<const float *>(ys[i]->data) + m, &s, sizeof s), 0)
                    << "step " << i << " row " << m << " at " << nth << " threads";
            }
        }
    }
}

// mul_mat_id takes an expert's weight rows two at a time where the type has vec_dot2 (an
// odd row count leaves a last row alone) and, with few destination columns (a decode),
// cuts each expert's rows into parts handed out at run time. Every element must be the
// single row's vec_dot, at every thread count.
TEST(Threading, MulMatIdAgainstVecDot) {
    struct shape {
        int64_t U, T;  // experts used per token, tokens
    };
    for (const shape sh : {shape{4, 9}, shape{2, 1}}) {
        const int64_t K = 64, M = 69, E = 6;
        env           e(8u << 20);
        gk_tensor *   as  = e.rand(GK_TYPE_Q8_0, K, M, E);
        gk_tensor *   b   = e.f32(K, 1, sh.T);
        gk_tensor *   ids = e.indices(E, sh.U, sh.T);
        gk_tensor *   y   = gk_mul_mat_id(e.ctx, as, b, ids);
        ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
        gk_cgraph * g = gk_new_graph(e.ctx);
        gk_build_forward_expand(g, y);

        const auto *       vd = gk::cpu::get_vec_dot_traits(GK_TYPE_Q8_0);
        std::vector<char>  act(gk_row_size(vd->vec_dot_type, K));
        std::vector<float> expect;
        for (int64_t t = 0; t < sh.T; ++t) {
            vd->from_float(reinterpret_cast<const float *>(static_cast<const char *>(b->data) + t * b->nb[2]),
                           act.data(), K);
            for (int64_t u = 0; u < sh.U; ++u) {
                const int64_t x = static_cast<const int32_t *>(ids->data)[t * sh.U + u];
                for (int64_t m = 0; m < M; ++m) {
                    float s;
                    vd->vec_dot(K, &s, static_cast<const char *>(as->data) + m * as->nb[1] + x * as->nb[2], act.data());
                    expect.push_back(s);
                }
            }
        }
        for (int nth : k_thread_counts) {
            std::memset(y->data, 0xFF, gk_nbytes(y));
            ASSERT_EQ(gk_graph_compute(g, nth), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
            ASSERT_EQ(std::memcmp(y->data, expect.data(), expect.size() * sizeof(float)), 0)
                << "U=" << sh.U << " T=" << sh.T << " at " << nth << " threads";
        }
    }
}

TEST(Threading, ThreadCountChangesEmptyGraphsAndEarlyFree) {
    for (int round = 0; round < 3; ++round) {
        auto *       e   = new env(1u << 20);
        gk_context * ctx = e->ctx;
        gk_tensor *  y   = gk_silu(ctx, gk_add(ctx, e->f32(16, 40), e->f32(16, 40)));
        gk_cgraph *  g   = gk_new_graph(ctx);
        gk_cgraph *  g0  = gk_new_graph(ctx);
        gk_build_forward_expand(g, y);
        for (int nth : {8, 1, 3, 64, 2}) {
            ASSERT_EQ(gk_graph_compute(g, nth), GK_STATUS_SUCCESS);
            ASSERT_EQ(gk_graph_compute(g0, nth), GK_STATUS_SUCCESS);
        }
        ASSERT_EQ(gk_graph_compute(g, 0), GK_STATUS_SUCCESS);  // clamped to one thread
        ASSERT_EQ(gk_graph_compute(g, 5 + round), GK_STATUS_SUCCESS);
        delete e;  // gk_free right after a compute: the pool's workers are joined
    }
}

TEST(Threading, AnErrorStopsEveryThreadAtTheSameNode) {
    env          e(1u << 20);
    gk_context * ctx = e.ctx;
    gk_tensor *  idx = e.indices(20, 70);
    gk_tensor *  r   = gk_get_rows(ctx, e.f32(8, 20), idx);
    gk_tensor *  y   = gk_neg(ctx, r);
    gk_cgraph *  g   = gk_new_graph(ctx);
    gk_build_forward_expand(g, y);
    static_cast<int32_t *>(idx->data)[69] = 20;
    for (int nth : k_thread_counts) {
        std::memset(y->data, 0x5A, gk_nbytes(y));
        EXPECT_EQ(gk_graph_compute(g, nth), GK_STATUS_OUT_OF_RANGE) << nth;
        EXPECT_EQ(static_cast<unsigned char *>(y->data)[0], 0x5A) << "the node after the error ran";
    }
}

} // namespace
