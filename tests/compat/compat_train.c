/* compat_train.c - the training entry points through the ggml API (silu_back,
 * get_rows_back, cross_entropy_loss, opt_step_adamw, opt_step_sgd) on inputs whose results
 * are worked out by hand: ggml's operand order (the gradient first) and op semantics.
 * Exits 1 on the first failure. */
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <math.h>

static void fill(struct ggml_tensor * t, const float * v) {
    for (int i = 0; i < (int)ggml_nelements(t); ++i) {
        ggml_set_f32_1d(t, i, v[i]);
    }
}

int main(void) {
    struct ggml_init_params params = {4 * 1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);

    /* silu_back(dy, x) at x = 0: silu'(0) = 1/2. */
    struct ggml_tensor * dy = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * x  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    fill(dy, (const float[]){2.0f, -6.0f});
    fill(x, (const float[]){0.0f, 0.0f});
    struct ggml_tensor * dsilu = ggml_silu_back(ctx, dy, x);

    /* get_rows_back: gradient rows 0, 1, 2 picked rows 1, 1, 0 of a 2 x 2 table. */
    struct ggml_tensor * grows = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 3);
    struct ggml_tensor * ids   = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    struct ggml_tensor * table = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2);
    fill(grows, (const float[]){1, 2, 10, 20, 100, 200});
    ggml_set_i32_1d(ids, 0, 1);
    ggml_set_i32_1d(ids, 1, 1);
    ggml_set_i32_1d(ids, 2, 0);
    struct ggml_tensor * dtable = ggml_get_rows_back(ctx, grows, ids, table);

    /* cross_entropy_loss of equal logits against one-hot labels: ln 2 per row. */
    struct ggml_tensor * logits = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2);
    struct ggml_tensor * labels = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2);
    fill(logits, (const float[]){0.5f, 0.5f, -1.0f, -1.0f});
    fill(labels, (const float[]){1, 0, 0, 1});
    struct ggml_tensor * loss = ggml_cross_entropy_loss(ctx, logits, labels);

    /* The first AdamW step (m = v = 0, beta1h = 1/(1 - beta1), beta2h = 1/(1 - beta2))
     * moves each weight by about alpha against its gradient's sign; SGD by alpha * g. */
    struct ggml_tensor * w  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * g  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * m  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * v  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * pa = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    struct ggml_tensor * ws = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    struct ggml_tensor * gs = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    struct ggml_tensor * ps = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    fill(w, (const float[]){1.0f, 1.0f});
    fill(g, (const float[]){0.5f, -0.25f});
    fill(m, (const float[]){0.0f, 0.0f});
    fill(v, (const float[]){0.0f, 0.0f});
    fill(pa, (const float[]){0.1f, 0.9f, 0.999f, 1e-8f, 0.0f, 1.0f / (1.0f - 0.9f), 1.0f / (1.0f - 0.999f)});
    fill(ws, (const float[]){1.0f});
    fill(gs, (const float[]){1.0f});
    fill(ps, (const float[]){0.5f, 0.0f});
    ggml_set_param(w);
    ggml_set_param(ws);
    struct ggml_tensor * adamw = ggml_opt_step_adamw(ctx, w, g, m, v, pa);
    struct ggml_tensor * sgd   = ggml_opt_step_sgd(ctx, ws, gs, ps);

    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, dsilu);
    ggml_build_forward_expand(graph, dtable);
    ggml_build_forward_expand(graph, loss);
    ggml_build_forward_expand(graph, adamw);
    ggml_build_forward_expand(graph, sgd);
    CHECK(ggml_graph_compute_with_ctx(ctx, graph, 2) == GGML_STATUS_SUCCESS, "compute");
    CHECK(ggml_get_f32_1d(dsilu, 0) == 1.0f && ggml_get_f32_1d(dsilu, 1) == -3.0f, "silu_back(dy, 0) = dy / 2");
    CHECK(dtable->ne[0] == 2 && dtable->ne[1] == 2, "get_rows_back has the table's shape");
    CHECK(ggml_get_f32_1d(dtable, 0) == 100.0f && ggml_get_f32_1d(dtable, 1) == 200.0f, "row 0 gets gradient row 2");
    CHECK(ggml_get_f32_1d(dtable, 2) == 11.0f && ggml_get_f32_1d(dtable, 3) == 22.0f, "row 1 sums gradient rows 0, 1");
    CHECK(fabsf(ggml_get_f32_1d(loss, 0) - 0.6931472f) < 1e-6f, "cross_entropy_loss = ln 2");
    CHECK(fabsf(ggml_get_f32_1d(w, 0) - 0.9f) < 1e-6f && fabsf(ggml_get_f32_1d(w, 1) - 1.1f) < 1e-6f,
          "adamw moves w by alpha against the gradient");
    CHECK(fabsf(ggml_get_f32_1d(m, 0) - 0.05f) < 1e-7f && fabsf(ggml_get_f32_1d(v, 0) - 0.00025f) < 1e-8f,
          "adamw updates m and v in place");
    CHECK(ggml_get_f32_1d(ws, 0) == 0.5f, "sgd: w - alpha g");
    ggml_free(ctx);
    return 0;
}
