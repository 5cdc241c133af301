/* compat_async.c - ggml's asynchronous backend calls on compat's CPU backend: set/get_async
 * and graph_compute_async finish before returning, event_new gives NULL (the CPU device has
 * no events) and freeing NULL is harmless; ggml_build_forward_select computes the selected
 * candidate only. Exits 1 on the first failure. */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

int main(void) {
    struct ggml_init_params params = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), NULL, true};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    x      = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *    ids    = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    struct ggml_tensor *    pick   = ggml_get_rows(ctx, ggml_reshape_2d(ctx, x, 1, 4), ids); /* reads ids */
    struct ggml_tensor *    neg    = ggml_neg(ctx, ggml_reshape_2d(ctx, x, 1, 4));
    struct ggml_tensor *    cands[2] = {pick, neg};
    struct ggml_cgraph *    graph  = ggml_new_graph(ctx);
    CHECK(ggml_build_forward_select(graph, cands, 2, 1) == neg, "select returns the chosen candidate");

    ggml_backend_t        cpu = ggml_backend_cpu_init();
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    const float           in[4] = {1.5f, -2.0f, 0.25f, 8.0f};
    const int             bad_ids[2] = {1000, -5}; /* would fail get_rows if it were computed */
    ggml_backend_tensor_set_async(cpu, x, in, 0, sizeof in);
    ggml_backend_tensor_set(ids, bad_ids, 0, sizeof bad_ids);
    CHECK(ggml_backend_graph_compute_async(cpu, graph) == GGML_STATUS_SUCCESS, "compute_async of the selected candidate");
    float out[4] = {0};
    ggml_backend_tensor_get_async(cpu, neg, out, 0, sizeof out);
    CHECK(out[0] == -1.5f && out[1] == 2.0f && out[2] == -0.25f && out[3] == -8.0f, "get_async reads the finished result");

    ggml_backend_event_t ev = ggml_backend_event_new(ggml_backend_get_device(cpu));
    CHECK(ev == NULL, "the CPU device has no events");
    ggml_backend_event_free(ev);

    ggml_backend_buffer_free(buf);
    ggml_backend_free(cpu);
    ggml_free(ctx);
    return 0;
}
