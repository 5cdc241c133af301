/* compat_conv.c - the convolution, pooling and resampling entry points through the ggml
 * API: ggml_conv_2d_sk_p0 (a composed entry point), ggml_pool_2d, ggml_upscale and
 * ggml_pad_reflect_1d on a 4x4 image of 1..16, checked against values worked out by hand.
 * Exits 1 on the first failure. */
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

int main(void) {
    struct ggml_init_params params = {4 * 1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    img    = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 4, 1, 1);
    struct ggml_tensor *    ker    = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 2, 2, 1, 1);
    for (int i = 0; i < 16; ++i) {
        ggml_set_f32_1d(img, i, (float)(i + 1));
    }
    for (int i = 0; i < 4; ++i) {
        ggml_set_f32_1d(ker, i, 1.0f);
    }
    struct ggml_tensor * conv = ggml_conv_2d_sk_p0(ctx, ker, img);
    struct ggml_tensor * pool = ggml_pool_2d(ctx, img, GGML_OP_POOL_MAX, 2, 2, 2, 2, 0.0f, 0.0f);
    struct ggml_tensor * up   = ggml_upscale(ctx, img, 2, GGML_SCALE_MODE_NEAREST);
    struct ggml_tensor * refl = ggml_pad_reflect_1d(ctx, img, 2, 1);
    CHECK(conv->ne[0] == 2 && conv->ne[1] == 2 && conv->ne[2] == 1, "conv_2d_sk_p0 of a 2x2 kernel over 4x4 is 2x2");
    CHECK(up->ne[0] == 8 && up->ne[1] == 8, "upscale by 2 is 8x8");
    CHECK(refl->ne[0] == 7 && refl->ne[1] == 4, "pad_reflect_1d adds 2 + 1 to dim 0");

    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, conv);
    ggml_build_forward_expand(graph, pool);
    ggml_build_forward_expand(graph, up);
    ggml_build_forward_expand(graph, refl);
    CHECK(ggml_graph_compute_with_ctx(ctx, graph, 2) == GGML_STATUS_SUCCESS, "compute");
    CHECK(ggml_get_f32_1d(conv, 0) == 14.0f && ggml_get_f32_1d(conv, 3) == 54.0f,
          "window sums 1+2+5+6 and 11+12+15+16");
    CHECK(ggml_get_f32_1d(pool, 0) == 6.0f && ggml_get_f32_1d(pool, 3) == 16.0f, "window maxima 6 and 16");
    CHECK(ggml_get_f32_1d(up, 0) == 1.0f && ggml_get_f32_1d(up, 1) == 1.0f && ggml_get_f32_1d(up, 2) == 2.0f,
          "nearest repeats");
    CHECK(ggml_get_f32_1d(refl, 0) == 3.0f && ggml_get_f32_1d(refl, 2) == 1.0f && ggml_get_f32_1d(refl, 6) == 3.0f,
          "row 1 2 3 4 reflects to 3 2 1 2 3 4 3");
    ggml_free(ctx);
    return 0;
}
