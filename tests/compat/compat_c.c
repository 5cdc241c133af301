/* compat_c.c - a C program written only against the ggml compat headers: a matmul graph
 * run through ggml_backend_sched on the CPU backend, a GGUF file written and read back,
 * quantize/dequantize round trips, and hostile GGUF files refused with NULL.
 * Prints one line per check; exits 1 on the first failure. argv[1]: a scratch directory. */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "gguf.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* C = A B^T in ggml's convention: a [K, M], b [K, N] -> [M, N]; checked against a loop. */
static void matmul_through_sched(void) {
    enum { K = 64, M = 5, N = 3 };
    struct ggml_init_params params = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), NULL, true};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    a      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor *    b      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    ggml_set_input(a);
    ggml_set_input(b);
    struct ggml_tensor * c = ggml_mul_mat(ctx, a, b);
    ggml_set_output(c);
    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, c);

    ggml_backend_t       cpu   = ggml_backend_cpu_init();
    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    CHECK(ggml_backend_sched_alloc_graph(sched, graph), "sched allocates the graph");

    float av[K * M], bv[K * N];
    for (int i = 0; i < K * M; ++i) av[i] = (float) ((i * 7) % 13) / 8.0f - 0.75f;
    for (int i = 0; i < K * N; ++i) bv[i] = (float) ((i * 5) % 11) / 4.0f - 1.25f;
    ggml_backend_tensor_set(a, av, 0, sizeof av);
    ggml_backend_tensor_set(b, bv, 0, sizeof bv);
    CHECK(ggml_backend_sched_graph_compute(sched, graph) == GGML_STATUS_SUCCESS, "sched computes the graph");

    float cv[M * N];
    ggml_backend_tensor_get(c, cv, 0, sizeof cv);
    int exact = c->ne[0] == M && c->ne[1] == N;
    for (int n = 0; n < N; ++n) {
        for (int m = 0; m < M; ++m) {
            double sum = 0;
            for (int k = 0; k < K; ++k) sum += (double) av[m * K + k] * bv[n * K + k];
            exact = exact && fabs(cv[n * M + m] - sum) < 1e-4;
        }
    }
    CHECK(exact, "mul_mat result equals the reference loop");
    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
    ggml_free(ctx);
}

static void gguf_round_trip(const char * dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/compat_c.gguf", dir);

    struct ggml_init_params params = {1 << 20, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    t      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    ggml_set_name(t, "weights");
    for (int i = 0; i < 12; ++i) ((float *) t->data)[i] = (float) i * 0.5f;

    struct gguf_context * out = gguf_init_empty();
    gguf_set_val_str(out, "general.name", "compat");
    gguf_set_val_u32(out, "answer", 42);
    const char * words[] = {"a", "bc"};
    gguf_set_arr_str(out, "words", words, 2);
    gguf_add_tensor(out, t);
    CHECK(gguf_write_to_file(out, path, false), "gguf file written");
    gguf_free(out);

    struct ggml_context *   tctx = NULL;
    struct gguf_init_params ip   = {false, &tctx};
    struct gguf_context *   in   = gguf_init_from_file(path, ip);
    CHECK(in != NULL, "gguf file read back");
    CHECK(strcmp(gguf_get_val_str(in, gguf_find_key(in, "general.name")), "compat") == 0, "string value read back");
    CHECK(gguf_get_val_u32(in, gguf_find_key(in, "answer")) == 42, "u32 value read back");
    CHECK(gguf_get_arr_n(in, gguf_find_key(in, "words")) == 2 &&
              strcmp(gguf_get_arr_str(in, gguf_find_key(in, "words"), 1), "bc") == 0, "string array read back");
    CHECK(gguf_find_key(in, "absent") == -1, "absent key is -1");
    CHECK(strcmp(gguf_type_name(gguf_get_kv_type(in, gguf_find_key(in, "answer"))), "u32") == 0 &&
              strcmp(gguf_type_name(GGUF_TYPE_ARRAY), "arr") == 0 && gguf_type_name(GGUF_TYPE_COUNT) == NULL,
          "value type names are ggml's");
    CHECK(gguf_get_n_tensors(in) == 1 && gguf_get_tensor_type(in, 0) == GGML_TYPE_F32 &&
              gguf_get_tensor_ne(in, 0)[1] == 3, "tensor info read back");
    struct ggml_tensor * back = ggml_get_tensor(tctx, "weights");
    CHECK(back && memcmp(back->data, t->data, 12 * sizeof(float)) == 0, "tensor data read back into a ggml context");
    gguf_free(in);
    ggml_free(tctx);

    /* Hostile files: truncated, and a huge tensor count. */
    FILE * f = fopen(path, "rb");
    char   bytes[4096];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/compat_c_truncated.gguf", dir);
    f = fopen(path, "wb");
    fwrite(bytes, 1, n / 2, f);
    fclose(f);
    struct gguf_init_params np = {true, NULL};
    CHECK(gguf_init_from_file(path, np) == NULL, "truncated gguf refused with NULL");
    memset(bytes + 8, 0xff, 8); /* n_tensors = 2^64 - 1 */
    snprintf(path, sizeof path, "%s/compat_c_hostile.gguf", dir);
    f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    CHECK(gguf_init_from_file(path, np) == NULL, "hostile tensor count refused with NULL");
    CHECK(gguf_init_from_file("/nonexistent/compat.gguf", np) == NULL, "missing file gives NULL");
    ggml_free(ctx);
}

static void quant_round_trips(void) {
    const enum ggml_type types[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_F16, GGML_TYPE_BF16};
    const double bounds[]        = {0.02, 0.2, 0.2, 0.05, 1e-3, 1e-2};
    enum { N = 512 };
    float src[N], back[N];
    for (int i = 0; i < N; ++i) src[i] = sinf((float) i * 0.37f) * 2.0f;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
        const struct ggml_type_traits * tt = ggml_get_type_traits(types[t]);
        void * q = malloc(ggml_row_size(types[t], N));
        size_t written = ggml_quantize_chunk(types[t], src, q, 0, 2, N / 2, NULL);
        tt->to_float(q, back, N);
        double worst = 0;
        for (int i = 0; i < N; ++i) worst = fmax(worst, fabs(back[i] - src[i]));
        char what[128];
        snprintf(what, sizeof what, "%s quantize/dequantize round trip (max error %.4g)", ggml_type_name(types[t]), worst);
        CHECK(written == ggml_row_size(types[t], N) && worst < bounds[t], what);
        /* from_float_ref writes the same bytes as quantize_chunk without an imatrix for these types */
        void * r = malloc(written);
        tt->from_float_ref(src, r, N);
        snprintf(what, sizeof what, "%s from_float_ref equals quantize_chunk", ggml_type_name(types[t]));
        CHECK(memcmp(q, r, written) == 0, what);
        free(r);
        free(q);
    }
    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XXS) && !ggml_quantize_requires_imatrix(GGML_TYPE_Q4_K),
          "requires_imatrix as ggml");
}

int main(int argc, char ** argv) {
    const char * dir = argc > 1 ? argv[1] : ".";
    matmul_through_sched();
    gguf_round_trip(dir);
    quant_round_trips();
    printf("compat C program: all checks passed\n");
    return 0;
}
