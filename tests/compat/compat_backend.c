/* compat_backend.c - the backend calls test-backend-ops and other ggml programs use beyond
 * plain compute: ggml_backend_graph_copy / _compare_graph_backend (a graph with a view, a
 * matmul and a softmax copied to a second CPU backend, compared node by node and by test
 * node, the callback seeing equal results and able to stop early), the 2-D set/get and
 * their async forms, tensor_copy_async, graph plans, guids, offload_op and
 * ggml_ftype_to_ggml_type. Exits 1 on the first failure. */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <string.h>

struct seen {
    int n_calls, n_equal, stop_after;
};

static int same_bytes(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const size_t n = ggml_nbytes(a);
    if (n != ggml_nbytes(b) || n > 4096) {
        return 0;
    }
    unsigned char x[4096], y[4096];
    ggml_backend_tensor_get(a, x, 0, n);
    ggml_backend_tensor_get(b, y, 0, n);
    return memcmp(x, y, n) == 0;
}

static bool compare_cb(int i, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user) {
    struct seen * s = (struct seen *) user;
    (void) i;
    s->n_calls++;
    s->n_equal += t1 != t2 && t1->op == t2->op && strcmp(t1->name, t2->name) == 0 && same_bytes(t1, t2);
    return s->stop_after == 0 || s->n_calls < s->stop_after;
}

int main(void) {
    struct ggml_init_params params = {ggml_tensor_overhead() * 16 + ggml_graph_overhead(), NULL, true};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    w      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 6);
    struct ggml_tensor *    x      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 3);
    ggml_set_name(w, "w");
    ggml_set_name(x, "x");
    struct ggml_tensor * xv  = ggml_view_2d(ctx, x, 8, 2, x->nb[1], x->nb[1]); /* rows 1..2 */
    struct ggml_tensor * mm  = ggml_mul_mat(ctx, w, xv);
    struct ggml_tensor * out = ggml_soft_max(ctx, ggml_scale(ctx, mm, 0.5f));
    ggml_set_name(out, "out");
    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);

    ggml_backend_t        cpu1 = ggml_backend_cpu_init();
    ggml_backend_t        cpu2 = ggml_backend_cpu_init();
    ggml_backend_buffer_t buf  = ggml_backend_alloc_ctx_tensors(ctx, cpu1);
    float                 wv[48], xv_in[24];
    for (int i = 0; i < 48; ++i) wv[i] = (float) ((i * 37) % 11) / 7.0f - 0.6f;
    for (int i = 0; i < 24; ++i) xv_in[i] = (float) ((i * 13) % 9) / 5.0f - 0.8f;
    ggml_backend_tensor_set(w, wv, 0, sizeof wv);
    ggml_backend_tensor_set(x, xv_in, 0, sizeof xv_in);

    /* graph copy: same nodes, same names, the data copied */
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(cpu2, graph);
    CHECK(copy.buffer != NULL && copy.graph != NULL, "graph_copy makes a buffer and a graph");
    CHECK(ggml_graph_n_nodes(copy.graph) == ggml_graph_n_nodes(graph), "the copy has the graph's nodes");
    struct ggml_tensor * out_copy = ggml_graph_node(copy.graph, -1);
    CHECK(out_copy != out && strcmp(out_copy->name, "out") == 0 && out_copy->op == GGML_OP_SOFT_MAX,
          "the copy's last node is a new softmax named out");
    struct ggml_tensor * w_copy = out_copy->src[0]->src[0]->src[0];
    CHECK(w_copy != w && same_bytes(w, w_copy), "a weight's copy holds its bytes");
    struct ggml_tensor * xv_copy = out_copy->src[0]->src[0]->src[1];
    CHECK(xv_copy->view_src != NULL && xv_copy->view_offs == xv->view_offs && same_bytes(xv, xv_copy),
          "a view's copy is a view of the copied storage at the same offset");
    ggml_backend_graph_copy_free(copy);

    /* node by node: every non-view node compared, all equal on two CPU backends */
    struct seen s = {0, 0, 0};
    CHECK(ggml_backend_compare_graph_backend(cpu1, cpu2, graph, compare_cb, &s, NULL, 0), "compare runs");
    const int n_compared = s.n_calls;
    CHECK(n_compared >= 3 && s.n_equal == n_compared, "every compared node has equal bytes on both backends");
    struct seen stop = {0, 0, 1};
    CHECK(ggml_backend_compare_graph_backend(cpu1, cpu2, graph, compare_cb, &stop, NULL, 0) && stop.n_calls == 1,
          "a false from the callback stops the comparison");
    const struct ggml_tensor * tests[1] = {out};
    struct seen                one      = {0, 0, 0};
    CHECK(ggml_backend_compare_graph_backend(cpu1, cpu2, graph, compare_cb, &one, tests, 1) && one.n_calls == 1 &&
              one.n_equal == 1,
          "with test nodes only those are compared");

    /* 2-D transfers: rows 0 and 2 of x, 3 floats each, from a packed source */
    const float rows[6] = {10, 11, 12, 20, 21, 22};
    ggml_backend_tensor_set_2d(x, rows, 0, 3 * sizeof(float), 2, 2 * x->nb[1], 3 * sizeof(float));
    float back[6] = {0};
    ggml_backend_tensor_get_2d(x, back, 0, 3 * sizeof(float), 2, 2 * x->nb[1], 3 * sizeof(float));
    CHECK(memcmp(rows, back, sizeof rows) == 0, "set_2d then get_2d give the runs back");
    float all[24];
    ggml_backend_tensor_get(x, all, 0, sizeof all);
    CHECK(all[0] == 10 && all[2] == 12 && all[3] == xv_in[3] && all[16] == 20 && all[8] == xv_in[8],
          "set_2d writes only its runs");
    float back_async[6] = {0};
    ggml_backend_tensor_set_2d_async(cpu1, x, rows, 4 * sizeof(float), 3 * sizeof(float), 2, 2 * x->nb[1],
                                     3 * sizeof(float));
    ggml_backend_tensor_get_2d_async(cpu1, x, back_async, 4 * sizeof(float), 3 * sizeof(float), 2, 2 * x->nb[1],
                                     3 * sizeof(float));
    CHECK(memcmp(rows, back_async, sizeof rows) == 0, "the async forms at an offset");

    /* copy_async, plans, guids, offload_op, ftype */
    struct ggml_context * ctx2  = ggml_init(params);
    struct ggml_tensor *  w_dst = ggml_new_tensor_2d(ctx2, GGML_TYPE_F32, 8, 6);
    ggml_backend_buffer_t buf2  = ggml_backend_alloc_ctx_tensors(ctx2, cpu2);
    ggml_backend_tensor_copy_async(cpu1, cpu2, w, w_dst);
    CHECK(same_bytes(w, w_dst), "copy_async copies across backends");
    ggml_backend_buffer_free(buf2);
    ggml_free(ctx2);
    ggml_backend_graph_plan_t plan = ggml_backend_graph_plan_create(cpu1, graph);
    CHECK(ggml_backend_graph_plan_compute(cpu1, plan) == GGML_STATUS_SUCCESS, "a plan computes its graph");
    ggml_backend_graph_plan_free(cpu1, plan);
    CHECK(ggml_backend_guid(cpu1) != NULL && ggml_guid_matches(ggml_backend_guid(cpu1), ggml_backend_guid(cpu2)),
          "two CPU backends share their kind's guid");
    CHECK(ggml_backend_guid(NULL) == NULL, "no guid for NULL");
    CHECK(!ggml_backend_offload_op(cpu1, out), "the CPU wants nothing offloaded");
    CHECK(ggml_ftype_to_ggml_type(GGML_FTYPE_MOSTLY_Q4_K) == GGML_TYPE_Q4_K &&
              ggml_ftype_to_ggml_type(GGML_FTYPE_ALL_F32) == GGML_TYPE_F32 &&
              ggml_ftype_to_ggml_type(GGML_FTYPE_MOSTLY_Q2_0) == GGML_TYPE_Q2_0,
          "ftype to type");

    ggml_backend_buffer_free(buf);
    ggml_backend_free(cpu1);
    ggml_backend_free(cpu2);
    ggml_free(ctx);
    return 0;
}
