/* compat_composed.c - entry points composed from other ops: ggml_repeat_4d equals
 * ggml_repeat to a tensor of that shape, ggml_argsort_top_k is the first k columns of the
 * descending argsort, ggml_cont_1d a contiguous 1-d copy. Exits 1 on the first failure. */
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <string.h>

int main(void) {
    struct ggml_init_params params = {4 * 1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    a      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2);
    const float             v[10]  = {0.5f, -1.0f, 3.0f, 2.0f, -4.0f, 7.0f, 1.0f, 1.5f, -2.0f, 6.0f};
    memcpy(a->data, v, sizeof v);

    struct ggml_tensor * shape  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 10, 4, 3, 1);
    struct ggml_tensor * rep    = ggml_repeat(ctx, a, shape);
    struct ggml_tensor * rep4   = ggml_repeat_4d(ctx, a, 10, 4, 3, 1);
    struct ggml_tensor * top    = ggml_argsort_top_k(ctx, a, 2);
    struct ggml_tensor * flat   = ggml_cont_1d(ctx, ggml_transpose(ctx, a), 10);
    CHECK(rep4->op == GGML_OP_REPEAT && rep4->src[0] == a && rep4->src[1] == NULL, "repeat_4d is a REPEAT node of a alone");
    CHECK(top->ne[0] == 2 && top->ne[1] == 2 && top->type == GGML_TYPE_I32, "argsort_top_k is [k, rows] of I32");
    CHECK(flat->ne[0] == 10 && flat->ne[1] == 1 && ggml_is_contiguous(flat), "cont_1d is [ne0] and contiguous");

    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, rep);
    ggml_build_forward_expand(graph, rep4);
    ggml_build_forward_expand(graph, top);
    ggml_build_forward_expand(graph, flat);
    CHECK(ggml_graph_compute_with_ctx(ctx, graph, 2) == GGML_STATUS_SUCCESS, "compute");
    CHECK(memcmp(rep->data, rep4->data, ggml_nbytes(rep)) == 0, "repeat_4d equals repeat to the same shape");
    CHECK(ggml_get_i32_nd(top, 0, 0, 0, 0) == 2 && ggml_get_i32_nd(top, 1, 0, 0, 0) == 3, "row 0: the two largest are 3.0 (2) and 2.0 (3)");
    CHECK(ggml_get_i32_nd(top, 0, 1, 0, 0) == 0 && ggml_get_i32_nd(top, 1, 1, 0, 0) == 4, "row 1: 7.0 (0) then 6.0 (4)");
    CHECK(ggml_get_f32_1d(flat, 1) == 7.0f && ggml_get_f32_1d(flat, 2) == -1.0f, "cont_1d follows the transposed order");
    ggml_free(ctx);
    return 0;
}
