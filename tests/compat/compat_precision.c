/* compat_precision.c - precision and hint requests are recorded in the node's op_params
 * slots ggml uses (and refused for ops that take none), and a mul_mat with a precision
 * request computes the same values as without. Exits 1 on the first failure. */
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <string.h>

int main(void) {
    struct ggml_init_params params = {4 * 1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    a      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 4);
    struct ggml_tensor *    b      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 3);
    for (int i = 0; i < 64; ++i) ggml_set_f32_1d(a, i, (float) (i % 7) - 3.0f);
    for (int i = 0; i < 48; ++i) ggml_set_f32_1d(b, i, (float) (i % 5) * 0.25f);

    struct ggml_tensor * plain = ggml_mul_mat(ctx, a, b);
    struct ggml_tensor * asked = ggml_mul_mat(ctx, a, b);
    CHECK(ggml_prec_set_acc(asked, GGML_PREC_F32) && asked->op_params[0] == GGML_PREC_F32, "mul_mat accumulation precision in op_params[0]");
    CHECK(ggml_prec_set_src(asked, GGML_PREC_F16, 1) && asked->op_params[3] == GGML_PREC_F16, "mul_mat source 1 precision in op_params[3]");
    CHECK(!ggml_prec_set_src(asked, GGML_PREC_F16, 0), "mul_mat source 0 precision is refused");
    ggml_mul_mat_set_hint(asked, GGML_HINT_SRC0_IS_HADAMARD);
    CHECK(asked->op_params[1] == GGML_HINT_SRC0_IS_HADAMARD, "mul_mat hint in op_params[1]");

    struct ggml_tensor * sum = ggml_add(ctx, a, a);
    CHECK(!ggml_prec_set_acc(sum, GGML_PREC_F32), "add takes no precision");

    struct ggml_tensor * q  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 2, 1);
    struct ggml_tensor * k  = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 16, 4, 1);
    struct ggml_tensor * fa = ggml_flash_attn_ext(ctx, q, k, k, NULL, 0.25f, 0.0f, 0.0f);
    CHECK(ggml_prec_set_acc(fa, GGML_PREC_F32) && ggml_flash_attn_ext_get_prec(fa) == GGML_PREC_F32, "flash_attn_ext precision in op_params[3]");
    ggml_flash_attn_ext_set_n_kv_max(fa, 3);
    CHECK(fa->op_params[4] == 3, "flash_attn_ext n_kv_max in op_params[4]");

    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, plain);
    ggml_build_forward_expand(graph, asked);
    CHECK(ggml_graph_compute_with_ctx(ctx, graph, 2) == GGML_STATUS_SUCCESS, "compute");
    CHECK(memcmp(plain->data, asked->data, ggml_nbytes(plain)) == 0, "the precision request leaves the values unchanged");
    ggml_free(ctx);
    return 0;
}
