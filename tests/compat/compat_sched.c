/* compat_sched.c - ggml_backend_sched's hooks through compat (gk_sched underneath):
 * the eval callback (asked in graph order, an observed node shown with its value as soon
 * as it is computed, a false return cancels the rest without failing the compute, as
 * ggml), ggml_backend_sched_reserve, and a node set to a backend. */
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <string.h>

struct seen {
    int   n_asked, n_shown, stop_at;
    float first_value;  /* element 0 of the first node shown */
    char  names[8][GGML_MAX_NAME];
};

static bool observe(struct ggml_tensor * t, bool ask, void * user) {
    struct seen * s = (struct seen *) user;
    if (ask) {
        s->n_asked++;
        return t->op == GGML_OP_MUL_MAT || t->op == GGML_OP_SCALE;
    }
    if (s->n_shown == 0) {
        ggml_backend_tensor_get(t, &s->first_value, 0, sizeof(float));
    }
    strcpy(s->names[s->n_shown++ % 8], t->name);
    return s->n_shown != s->stop_at;
}

int main(void) {
    enum { K = 32, M = 4, N = 2 };
    struct ggml_init_params params = {ggml_tensor_overhead() * 16 + ggml_graph_overhead(), NULL, true};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    a      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor *    b      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    ggml_set_input(a);
    ggml_set_input(b);
    struct ggml_tensor * c = ggml_mul_mat(ctx, a, b);
    ggml_set_name(c, "c");
    struct ggml_tensor * d = ggml_silu(ctx, c);
    ggml_set_name(d, "d");
    struct ggml_tensor * e = ggml_scale(ctx, d, 2.0f);
    ggml_set_name(e, "e");
    ggml_set_output(e);
    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, e);

    ggml_backend_t       cpu   = ggml_backend_cpu_init();
    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    CHECK(ggml_backend_sched_reserve(sched, graph) && ggml_backend_sched_get_buffer_size(sched, cpu) > 0,
          "reserve sizes the compute buffer");
    CHECK(a->data == NULL && e->data == NULL, "reserve places nothing");

    ggml_backend_sched_split_graph(sched, graph);
    CHECK(ggml_backend_sched_get_tensor_backend(sched, e) == cpu && e->data == NULL,
          "split_graph assigns the nodes, places nothing");
    ggml_backend_sched_reset(sched);

    ggml_backend_sched_set_tensor_backend(sched, d, cpu);
    CHECK(ggml_backend_sched_alloc_graph(sched, graph), "allocated");
    CHECK(ggml_backend_sched_get_tensor_backend(sched, d) == cpu && ggml_backend_sched_get_n_splits(sched) == 1,
          "node set to the CPU backend, one split");

    float av[K * M], bv[K * N];
    for (int i = 0; i < K * M; ++i) av[i] = (float) ((i * 7) % 13) / 8.0f - 0.75f;
    for (int i = 0; i < K * N; ++i) bv[i] = (float) ((i * 5) % 11) / 4.0f - 1.25f;
    ggml_backend_tensor_set(a, av, 0, sizeof av);
    ggml_backend_tensor_set(b, bv, 0, sizeof bv);

    struct seen s = {0, 0, -1, 0.0f, {{0}}};
    ggml_backend_sched_set_eval_callback(sched, observe, &s);
    CHECK(ggml_backend_sched_graph_compute(sched, graph) == GGML_STATUS_SUCCESS, "computed with the callback");
    CHECK(s.n_asked == 3 && s.n_shown == 2 && strcmp(s.names[0], "c") == 0 && strcmp(s.names[1], "e") == 0,
          "every node asked, the asked ones shown in order");
    float c0 = 0;
    for (int k = 0; k < K; ++k) c0 += av[k] * bv[k];
    CHECK(s.first_value > c0 - 1e-4f && s.first_value < c0 + 1e-4f, "the shown matmul holds its value");

    memset(&s, 0, sizeof s);
    s.stop_at = 1;
    CHECK(ggml_backend_sched_graph_compute(sched, graph) == GGML_STATUS_SUCCESS && s.n_shown == 1 && s.n_asked == 1,
          "a false return cancels the rest, not a failure");

    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
    ggml_free(ctx);
    return 0;
}
