/* compat_inplace.c - every *_inplace builder of the ggml compat layer, checked on the CPU:
 * the result is a view of a (same data pointer, view_src == a), its values equal the
 * out-of-place op's bit for bit, and a's memory holds them after compute.
 * Prints one line per op; exits 1 on the first failure. */
#include "ggml-cpu.h"
#include "ggml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NE0 = 8, NE1 = 3, NE2 = 2 }; /* rope reads [head dim, heads, tokens] */

static struct ggml_tensor * positions; /* I32 [NE2], for rope */

typedef struct ggml_tensor * (*build_fn)(struct ggml_context *, struct ggml_tensor *);

/* One op: its out-of-place and in-place builders, each taking (ctx, a). */
struct op_case {
    const char * name;
    build_fn     out_of_place;
    build_fn     in_place;
};

#define UNARY(op) {#op, ggml_##op, ggml_##op##_inplace}
#define WITH_ARGS(label, op, ...)                                                                              \
    static struct ggml_tensor * label##_out(struct ggml_context * c, struct ggml_tensor * a) { return ggml_##op(c, a, __VA_ARGS__); } \
    static struct ggml_tensor * label##_in(struct ggml_context * c, struct ggml_tensor * a) { return ggml_##op##_inplace(c, a, __VA_ARGS__); }
#define CASE(label) {#label, label##_out, label##_in}

WITH_ARGS(norm, norm, 1e-5f)
WITH_ARGS(rms_norm, rms_norm, 1e-6f)
WITH_ARGS(l2_norm, l2_norm, 1e-6f)
WITH_ARGS(group_norm, group_norm, 2, 1e-6f)
WITH_ARGS(scale, scale, 0.375f)
WITH_ARGS(scale_bias, scale_bias, 0.375f, -1.5f)
WITH_ARGS(clamp, clamp, -0.5f, 0.75f)
WITH_ARGS(diag_mask_inf, diag_mask_inf, 1)
WITH_ARGS(diag_mask_zero, diag_mask_zero, 1)
WITH_ARGS(soft_max_ext, soft_max_ext, NULL, 0.5f, 0.0f)
WITH_ARGS(unary_silu, unary, GGML_UNARY_OP_SILU)
WITH_ARGS(rope, rope, positions, NE0, GGML_ROPE_TYPE_NEOX)
WITH_ARGS(rope_ext, rope_ext, positions, NULL, NE0, GGML_ROPE_TYPE_NORMAL, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f)

static struct ggml_tensor * soft_max_out(struct ggml_context * c, struct ggml_tensor * a) { return ggml_soft_max(c, a); }
static struct ggml_tensor * soft_max_in(struct ggml_context * c, struct ggml_tensor * a) { return ggml_soft_max_inplace(c, a); }
static struct ggml_tensor * leaky_relu_out(struct ggml_context * c, struct ggml_tensor * a) { return ggml_leaky_relu(c, a, 0.125f, false); }
static struct ggml_tensor * leaky_relu_in(struct ggml_context * c, struct ggml_tensor * a) { return ggml_leaky_relu(c, a, 0.125f, true); }

/* Binary ops: b is a fixed second operand of a's shape. */
static struct ggml_tensor * operand;
#define BINARY(op)                                                                                              \
    static struct ggml_tensor * op##_out(struct ggml_context * c, struct ggml_tensor * a) { return ggml_##op(c, a, operand); } \
    static struct ggml_tensor * op##_in(struct ggml_context * c, struct ggml_tensor * a) { return ggml_##op##_inplace(c, a, operand); }
BINARY(add)
BINARY(sub)
BINARY(mul)
BINARY(div)

static const struct op_case cases[] = {
    UNARY(dup), UNARY(sqr), UNARY(sqrt), UNARY(log), UNARY(expm1), UNARY(softplus), UNARY(sin), UNARY(cos),
    UNARY(abs), UNARY(sgn), UNARY(neg), UNARY(step), UNARY(tanh), UNARY(elu), UNARY(relu), UNARY(sigmoid),
    UNARY(gelu), UNARY(gelu_erf), UNARY(gelu_quick), UNARY(silu), UNARY(exp), UNARY(floor), UNARY(ceil),
    UNARY(round), UNARY(trunc),
    CASE(norm), CASE(rms_norm), CASE(l2_norm), CASE(group_norm), CASE(scale), CASE(scale_bias), CASE(clamp),
    CASE(diag_mask_inf), CASE(diag_mask_zero), CASE(soft_max), CASE(soft_max_ext), CASE(unary_silu), CASE(rope),
    CASE(rope_ext), CASE(leaky_relu), CASE(add), CASE(sub), CASE(mul), CASE(div),
};

static void fill(struct ggml_tensor * t, float phase) {
    float * v = (float *) t->data;
    for (int64_t i = 0; i < ggml_nelements(t); ++i) v[i] = (float) ((i * 37 + 11) % 29) / 7.0f - 2.0f + phase;
}

static int check(const struct op_case * c) {
    struct ggml_init_params params = {16 * 1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    a      = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
    struct ggml_tensor *    copy   = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
    operand                        = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
    positions                      = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, NE2);
    fill(a, 0.0f);
    fill(copy, 0.0f);
    fill(operand, 2.5f); /* no zero divisors */
    for (int i = 0; i < NE2; ++i) ggml_set_i32_1d(positions, i, 3 + 5 * i);

    struct ggml_tensor * expected = c->out_of_place(ctx, copy);
    struct ggml_tensor * result   = c->in_place(ctx, a);
    struct ggml_cgraph * graph    = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, expected);
    ggml_build_forward_expand(graph, result);
    const enum ggml_status status = ggml_graph_compute_with_ctx(ctx, graph, 2);

    const size_t bytes = ggml_nbytes(a);
    const char * why   = status != GGML_STATUS_SUCCESS              ? "compute failed"
                       : result->data != a->data || result->view_src != a ? "the result is not a view of a"
                       : !ggml_are_same_shape(result, a)                 ? "the result's shape differs from a's"
                       : memcmp(result->data, expected->data, bytes) != 0 ? "values differ from the out-of-place op"
                       : memcmp(a->data, expected->data, bytes) != 0      ? "a was not overwritten"
                                                                          : NULL;
    ggml_free(ctx);
    if (why) {
        fprintf(stderr, "FAIL %s_inplace: %s\n", c->name, why);
        return 0;
    }
    printf("ok   %s_inplace\n", c->name);
    return 1;
}

int main(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (!check(&cases[i])) return 1;
    }
    return 0;
}
