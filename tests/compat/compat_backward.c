/* compat_backward.c - ggml's automatic differentiation through the ggml API: a least-squares
 * fit of w in y = w . x built with ggml_build_backward_expand, the gradient after one
 * evaluation against the hand-derived 2 sum_j (w . x_j - y_j) x_j, ggml_graph_reset's seed
 * (the loss's gradient 1), and SGD steps (ggml_opt_step_sgd on the gradient) lowering the
 * loss. Exits 1 on the first failure. */
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <math.h>

int main(void) {
    struct ggml_init_params ip  = {16u << 20, NULL, false};
    struct ggml_context *   ctx = ggml_init(ip);
    struct ggml_tensor *    w   = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor *    x   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    struct ggml_tensor *    y   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 4);
    const float             xv[12] = {1, 0, 2, -1, 1, 0, 0.5f, 2, 1, 3, -1, 1};
    const float             yv[4]  = {3, -1, 2.5f, 1};
    const float             wv[3]  = {0.5f, -0.25f, 0.125f};
    for (int i = 0; i < 12; ++i) {
        ((float *) x->data)[i] = xv[i];
    }
    for (int i = 0; i < 4; ++i) {
        ((float *) y->data)[i] = yv[i];
    }
    for (int i = 0; i < 3; ++i) {
        ((float *) w->data)[i] = wv[i];
    }
    ggml_set_param(w);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_sqr(ctx, ggml_sub(ctx, ggml_mul_mat(ctx, w, x), y)));
    ggml_set_loss(loss);

    struct ggml_cgraph * gb = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(gb, loss);
    ggml_build_backward_expand(ctx, gb, NULL);
    struct ggml_tensor * grad = ggml_graph_get_grad(gb, w);
    CHECK(grad != NULL && ggml_are_same_shape(grad, w), "w has a gradient of its shape");
    CHECK(ggml_graph_get_grad_acc(gb, w) == NULL, "w has no accumulator (none was given)");
    CHECK(ggml_graph_get_grad_acc(gb, loss) != NULL, "the loss has an accumulator");
    CHECK(ggml_graph_get_grad(gb, x) == NULL, "the input x has no gradient");

    struct ggml_tensor * sgd = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    ((float *) sgd->data)[0] = 0.02f;  // alpha
    ((float *) sgd->data)[1] = 0.0f;   // weight decay
    ggml_build_forward_expand(gb, ggml_opt_step_sgd(ctx, w, grad, sgd));
    ggml_graph_reset(gb);
    CHECK(*(const float *) ggml_graph_get_grad_acc(gb, loss)->data == 1.0f, "ggml_graph_reset seeds the loss with 1");

    double expect[3] = {0, 0, 0};
    for (int j = 0; j < 4; ++j) {
        const double d = wv[0] * xv[3 * j] + wv[1] * xv[3 * j + 1] + wv[2] * xv[3 * j + 2] - yv[j];
        for (int k = 0; k < 3; ++k) {
            expect[k] += 2 * d * xv[3 * j + k];
        }
    }
    CHECK(ggml_graph_compute_with_ctx(ctx, gb, 2) == GGML_STATUS_SUCCESS, "compute the gradient and one step");
    for (int k = 0; k < 3; ++k) {
        CHECK(fabs(((const float *) grad->data)[k] - expect[k]) <= 1e-5 * (1 + fabs(expect[k])),
              "the gradient is 2 sum_j (w . x_j - y_j) x_j");
    }
    const float first = *(const float *) loss->data;
    for (int step = 0; step < 30; ++step) {
        CHECK(ggml_graph_compute_with_ctx(ctx, gb, 2) == GGML_STATUS_SUCCESS, "an SGD step");
    }
    CHECK(*(const float *) loss->data < 0.5f * first, "30 SGD steps more than halve the loss");
    ggml_graph_reset(NULL);
    ggml_free(ctx);
    return 0;
}
