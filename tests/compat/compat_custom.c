/* compat_custom.c - ggml's custom-op hooks through the compat layer: map_custom1,
 * map_custom2_inplace, map_custom3 and custom_4d call their C callbacks (taking
 * ggml_tensor pointers) with ith / nth and userdata, and the values they write come back.
 * Exits 1 on the first failure. */
#include "check.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include <string.h>

enum { N0 = 6, N1 = 10 };

static float * row(const struct ggml_tensor * t, int64_t r) { return (float *) ((char *) t->data + r * t->nb[1]); }

static int calls_nth; /* the nth the callbacks were given */

static void square(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    const float scale = *(const float *) userdata;
    calls_nth         = nth;
    for (int64_t r = ith * N1 / nth; r < (ith + 1) * N1 / nth; ++r) {
        for (int64_t i = 0; i < N0; ++i) {
            row(dst, r)[i] = row(a, r)[i] * row(a, r)[i] * scale;
        }
    }
}

static void subtract(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                     int nth, void * userdata) {
    (void) userdata;
    for (int64_t r = ith * N1 / nth; r < (ith + 1) * N1 / nth; ++r) {
        for (int64_t i = 0; i < N0; ++i) {
            row(dst, r)[i] = row(a, r)[i] - row(b, r)[i];
        }
    }
}

static void select3(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                    const struct ggml_tensor * c, int ith, int nth, void * userdata) {
    (void) userdata;
    for (int64_t r = ith * N1 / nth; r < (ith + 1) * N1 / nth; ++r) {
        for (int64_t i = 0; i < N0; ++i) {
            row(dst, r)[i] = row(c, r)[i] > 0 ? row(a, r)[i] : row(b, r)[i];
        }
    }
}

static void sum_args(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    for (int64_t r = ith * N1 / nth; r < (ith + 1) * N1 / nth; ++r) {
        for (int64_t i = 0; i < N0; ++i) {
            row(dst, r)[i] = row(dst->src[0], r)[i] + row(dst->src[1], r)[i];
        }
    }
}

static struct ggml_tensor * filled(struct ggml_context * ctx, float base) {
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N0, N1);
    for (int i = 0; i < N0 * N1; ++i) {
        ((float *) t->data)[i] = base + 0.25f * (float) (i % 7) - 0.5f * (float) (i % 3);
    }
    return t;
}

int main(void) {
    struct ggml_init_params params = {16 * 1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    a      = filled(ctx, 1.0f);
    struct ggml_tensor *    b      = filled(ctx, -2.0f);
    struct ggml_tensor *    c      = filled(ctx, -0.5f);
    float                   scale  = 3.0f;
    struct ggml_tensor *    args[] = {a, b};

    struct ggml_tensor * sq   = ggml_map_custom1(ctx, a, square, 2, &scale);
    struct ggml_tensor * sel  = ggml_map_custom3(ctx, a, b, c, select3, GGML_N_TASKS_MAX, NULL);
    struct ggml_tensor * sum  = ggml_custom_4d(ctx, GGML_TYPE_F32, N0, N1, 1, 1, args, 2, sum_args, GGML_N_TASKS_MAX, NULL);
    struct ggml_tensor * diff = ggml_map_custom2_inplace(ctx, c, b, subtract, GGML_N_TASKS_MAX, NULL);
    CHECK(sq->op == GGML_OP_MAP_CUSTOM1 && sel->op == GGML_OP_MAP_CUSTOM3 && sum->op == GGML_OP_CUSTOM, "node ops");
    CHECK(diff->data == c->data && diff->view_src == c, "map_custom2_inplace is a view of a");

    float c_before[N0 * N1];
    memcpy(c_before, c->data, sizeof(c_before));
    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, sq);
    ggml_build_forward_expand(graph, sel);
    ggml_build_forward_expand(graph, sum);
    ggml_build_forward_expand(graph, diff);
    CHECK(ggml_graph_compute_with_ctx(ctx, graph, 3) == GGML_STATUS_SUCCESS, "compute");
    CHECK(calls_nth == 2, "n_tasks caps the callback's nth");

    int ok = 1;
    for (int i = 0; i < N0 * N1; ++i) {
        const float x = ((float *) a->data)[i], y = ((float *) b->data)[i];
        ok &= ((float *) sq->data)[i] == x * x * scale;
        ok &= ((float *) sel->data)[i] == (c_before[i] > 0 ? x : y);
        ok &= ((float *) sum->data)[i] == x + y;
        ok &= ((float *) c->data)[i] == c_before[i] - y;
    }
    CHECK(ok, "values written by the callbacks");
    ggml_free(ctx);
    return 0;
}
