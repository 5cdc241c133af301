/* A find_package(ggml) consumer: one tensor, one op, computed. */
#include "ggml-cpu.h"
#include "ggml.h"
int main(void) {
    struct ggml_init_params p = {1 << 20, 0, 0};
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * a = ggml_new_f32(ctx, 3.0f);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, ggml_scale(ctx, a, 2.0f));
    int ok = ggml_graph_compute_with_ctx(ctx, g, 1) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(ggml_graph_node(g, -1), 0) == 6.0f;
    ggml_free(ctx);
    return ok ? 0 : 1;
}
