/* compat_meta.c - ggml_backend_meta_device through compat, over the CPU device listed twice:
 * for every kind of split state of the weight (mirrored, partial sums with and without a
 * contributor mask, split along each axis, unevenly, with segments, all on one device, in
 * whole q8_0 blocks) a matmul graph through ggml_backend_sched on [meta, CPU] gives the
 * plain CPU result bit for bit, and the weight reads back as written; a graph wholly in a
 * meta buffer computed by the meta backend alone does too. The split callback is asked for
 * the weights only (not for compute buffers); states ggml's rules refuse fail the placement
 * with a message naming the tensor; bad arguments give NULL with a message. The scheduler
 * puts the graph input in the last backend's (the CPU's) memory, as ggml's does. */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <string.h>

enum { K = 64, M = 6, N = 3, B = 2 }; /* w [K, M, B] x [K, N, B] -> y [M, N, B] */

typedef struct ggml_backend_meta_split_state split_state;

/* What the split callback answers for "w" (every other tensor: mirrored), and what it saw. */
struct chooser {
    split_state w;
    int         n_asked, n_asked_w;
};

static split_state choose(const struct ggml_tensor * t, void * ud) {
    struct chooser * c = (struct chooser *)ud;
    c->n_asked++;
    if (strcmp(t->name, "w") == 0) {
        c->n_asked_w++;
        return c->w;
    }
    split_state mirrored = {GGML_BACKEND_SPLIT_AXIS_MIRRORED, {0}, {1}, 1};
    return mirrored;
}

static char g_log[512]; /* the last error logged through ggml's log callback */

static void keep_errors(enum ggml_log_level level, const char * text, void * ud) {
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR) {
        snprintf(g_log, sizeof g_log, "%s", text);
    }
}

static float g_w[K * M * B], g_x[K * N * B];

/* Bytes of the weight in type `type` (f32 as it is, else ggml_quantize_chunk's rows). */
static size_t weight_bytes(enum ggml_type type, void * out) {
    if (type == GGML_TYPE_F32) {
        memcpy(out, g_w, sizeof g_w);
        return sizeof g_w;
    }
    return ggml_quantize_chunk(type, g_w, out, 0, M * B, K, NULL);
}

/* y = w x through a scheduler on `dev`'s backend (and the CPU's, unless dev is the CPU), with
 * w placed in dev's buffer type. Returns 0 and y in out, or 1 when placing w failed. With
 * `alone`, every tensor goes in one buffer of dev's backend, computed by that backend alone. */
static int run(ggml_backend_dev_t dev, enum ggml_type type, int alone, float * out) {
    struct ggml_init_params params = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), NULL, true};
    struct ggml_context *   ctx_w  = ggml_init(params);
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_context *   ctx_x  = alone ? ctx_w : ctx;
    struct ggml_tensor *    w      = ggml_new_tensor_3d(ctx_w, type, K, M, B);
    struct ggml_tensor *    x      = ggml_new_tensor_3d(ctx_x, GGML_TYPE_F32, K, N, B);
    ggml_set_name(w, "w");
    ggml_set_name(x, "x");
    ggml_set_input(x);
    struct ggml_tensor * y = ggml_mul_mat(alone ? ctx_w : ctx, w, x);
    ggml_set_name(y, "y");
    ggml_set_output(y);
    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, y);

    ggml_backend_t        backend = ggml_backend_dev_init(dev, NULL);
    ggml_backend_buffer_t weights = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, ggml_backend_dev_buffer_type(dev));
    int                   failed  = weights == NULL;
    if (!failed) {
        static char bytes[sizeof g_w], back[sizeof g_w];
        size_t      n = weight_bytes(type, bytes);
        ggml_backend_tensor_set(w, bytes, 0, n);
        ggml_backend_tensor_get(w, back, 0, n);
        CHECK(memcmp(bytes, back, n) == 0, "the weight reads back as written");
        ggml_backend_t cpu = ggml_backend_cpu_init();
        if (alone) {
            ggml_backend_tensor_set(x, g_x, 0, sizeof g_x);
            CHECK(ggml_backend_graph_compute(backend, graph) == GGML_STATUS_SUCCESS, "computed by the backend alone");
            ggml_backend_tensor_get(y, out, 0, sizeof(float) * M * N * B);
        } else {
            ggml_backend_t       backends[2] = {backend, cpu};
            int                  n_backends  = ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU ? 1 : 2;
            ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, n_backends, GGML_DEFAULT_GRAPH_SIZE,
                                                                false, true);
            CHECK(ggml_backend_sched_alloc_graph(sched, graph), "graph allocated");
            ggml_backend_tensor_set(x, g_x, 0, sizeof g_x);
            CHECK(ggml_backend_sched_graph_compute(sched, graph) == GGML_STATUS_SUCCESS,
                  "computed through the scheduler");
            CHECK(ggml_backend_sched_get_tensor_backend(sched, y) == backend,
                  "the matmul runs on the device's backend");
            CHECK(ggml_backend_buffer_get_type(x->buffer) == ggml_backend_cpu_buffer_type(),
                  "the input x is in the CPU's memory (ggml's place for graph inputs: the last backend)");
            ggml_backend_tensor_get(y, out, 0, sizeof(float) * M * N * B);
            ggml_backend_sched_free(sched);
        }
        ggml_backend_free(cpu);
    }
    ggml_backend_buffer_free(weights);
    ggml_backend_free(backend);
    ggml_free(ctx);
    ggml_free(ctx_w);
    return failed;
}

/* A split state along `axis` with one segment: ne0 on device 0, ne1 on device 1. */
static split_state along(enum ggml_backend_meta_split_axis axis, int64_t ne0, int64_t ne1) {
    split_state s = {axis, {ne0, ne1}, {1}, 1};
    return s;
}

int main(void) {
    for (int i = 0; i < K * M * B; ++i) g_w[i] = (float)((i * 7) % 13) / 8.0f - 0.75f;
    for (int i = 0; i < K * N * B; ++i) g_x[i] = (float)((i * 5) % 11) / 4.0f - 1.25f;
    ggml_log_set(keep_errors, NULL);

    ggml_backend_t     cpu_backend = ggml_backend_cpu_init();
    ggml_backend_dev_t cpu         = ggml_backend_get_device(cpu_backend);
    ggml_backend_free(cpu_backend);
    ggml_backend_dev_t devs[2] = {cpu, cpu};
    struct chooser     c       = {{GGML_BACKEND_SPLIT_AXIS_MIRRORED, {0}, {1}, 1}, 0, 0};

    /* bad arguments */
    ggml_backend_dev_t none[2] = {cpu, NULL};
    ggml_backend_dev_t many[17];
    for (int i = 0; i < 17; ++i) many[i] = cpu;
    CHECK(!ggml_backend_meta_device(NULL, 2, choose, &c) && strstr(g_log, "devs is NULL"), "NULL devs refused");
    CHECK(!ggml_backend_meta_device(devs, 0, choose, &c) && strstr(g_log, "n_devs is 0"), "no devices refused");
    CHECK(!ggml_backend_meta_device(many, 17, choose, &c) && strstr(g_log, "MAX_DEVICES"), "17 devices refused");
    CHECK(!ggml_backend_meta_device(none, 2, choose, &c) && strstr(g_log, "a device is NULL"), "a NULL device refused");
    CHECK(!ggml_backend_meta_device(devs, 2, NULL, &c) && strstr(g_log, "get_split_state is NULL"),
          "no callback refused");

    /* the device */
    ggml_backend_dev_t meta = ggml_backend_meta_device(devs, 2, choose, &c);
    CHECK(meta && ggml_backend_meta_device(devs, 2, choose, &c) == meta, "the same arguments give the same device");
    CHECK(ggml_backend_meta_device(devs, 1, choose, &c) != meta &&
              ggml_backend_meta_device(devs, 2, choose, NULL) != meta,
          "other arguments give another device");
    CHECK(strcmp(ggml_backend_dev_name(meta), "Meta(CPU,CPU)") == 0 &&
              ggml_backend_dev_type(meta) == GGML_BACKEND_DEVICE_TYPE_META,
          "named Meta(CPU,CPU), of type META");
    size_t free_cpu, total_cpu, free_meta, total_meta;
    ggml_backend_dev_memory(cpu, &free_cpu, &total_cpu);
    ggml_backend_dev_memory(meta, &free_meta, &total_meta);
    CHECK(total_meta == 2 * total_cpu, "its memory is the devices' sum");
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(meta);
    CHECK(ggml_backend_buft_get_device(buft) == meta && strncmp(ggml_backend_buft_name(buft), "Meta(", 5) == 0 &&
              ggml_backend_buft_is_host(buft),
          "its buffer type: its own, named Meta(...), host memory");
    CHECK(ggml_backend_dev_supports_buft(meta, buft) &&
              !ggml_backend_dev_supports_buft(meta, ggml_backend_cpu_buffer_type()),
          "it computes on meta buffers only");

    /* the plain CPU result */
    float ref[M * N * B], ref_q8[M * N * B], got[M * N * B];
    CHECK(run(cpu, GGML_TYPE_F32, 0, ref) == 0 && run(cpu, GGML_TYPE_Q8_0, 0, ref_q8) == 0, "CPU reference computed");

    /* every kind of split state of w, each equal to the CPU's result */
    struct {
        const char * what;
        split_state  w;
    } good[] = {
        {"mirrored", {GGML_BACKEND_SPLIT_AXIS_MIRRORED, {0}, {1}, 1}},
        {"partial sums", {GGML_BACKEND_SPLIT_AXIS_PARTIAL, {0}, {1}, 1}},
        {"partial sums, device 1 contributing nothing", {GGML_BACKEND_SPLIT_AXIS_PARTIAL, {1, 0}, {1}, 1}},
        {"axis 0 split in halves", along(GGML_BACKEND_SPLIT_AXIS_0, 32, 32)},
        {"axis 0 split unevenly", along(GGML_BACKEND_SPLIT_AXIS_0, 48, 16)},
        {"axis 1 split unevenly", along(GGML_BACKEND_SPLIT_AXIS_1, 4, 2)},
        {"axis 1 in two segments, the second repeated", {GGML_BACKEND_SPLIT_AXIS_1, {1, 1, 1, 1}, {1, 2}, 2}},
        {"axis 1 all on device 1", along(GGML_BACKEND_SPLIT_AXIS_1, 0, M)},
        {"axis 2 split", along(GGML_BACKEND_SPLIT_AXIS_2, 1, 1)},
        {"axis 3 split (size 1)", along(GGML_BACKEND_SPLIT_AXIS_3, 1, 0)},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        char what[160];
        c.w         = good[i].w;
        c.n_asked_w = 0;
        c.n_asked   = 0;
        memset(got, 0xff, sizeof got);
        CHECK(run(meta, GGML_TYPE_F32, 0, got) == 0, good[i].what);
        snprintf(what, sizeof what, "%s: equal to the CPU, bit for bit", good[i].what);
        CHECK(memcmp(got, ref, sizeof got) == 0, what);
        CHECK(c.n_asked_w == 1 && c.n_asked == 1, "the callback asked for the weight only, once");
    }
    c.w = along(GGML_BACKEND_SPLIT_AXIS_0, 32, 32);
    CHECK(run(meta, GGML_TYPE_Q8_0, 0, got) == 0 && memcmp(got, ref_q8, sizeof got) == 0,
          "q8_0 weight split in whole blocks along axis 0: equal to the CPU");
    c.w       = good[3].w;
    c.n_asked = 0;
    CHECK(run(meta, GGML_TYPE_F32, 1, got) == 0 && memcmp(got, ref, sizeof got) == 0 && c.n_asked == 3,
          "a graph wholly in a meta buffer, computed by the meta backend: equal, every tensor asked");

    /* states ggml's rules refuse: the placement fails with a message naming the tensor */
    struct {
        const char *   what;
        split_state    w;
        enum ggml_type type;
    } bad[] = {
        {"axis 0 sizes adding up to 48 of 64", along(GGML_BACKEND_SPLIT_AXIS_0, 32, 16), GGML_TYPE_F32},
        {"axis 1 sizes adding up to more than ne[1]", along(GGML_BACKEND_SPLIT_AXIS_1, 6, 6), GGML_TYPE_F32},
        {"a negative size", along(GGML_BACKEND_SPLIT_AXIS_1, -2, 8), GGML_TYPE_F32},
        {"axis 7", along((enum ggml_backend_meta_split_axis)7, 32, 32), GGML_TYPE_F32},
        {"axis NONE (ggml's bookkeeping only)", along(GGML_BACKEND_SPLIT_AXIS_NONE, 0, 0), GGML_TYPE_F32},
        {"0 segments", {GGML_BACKEND_SPLIT_AXIS_1, {4, 2}, {1}, 0}, GGML_TYPE_F32},
        {"17 segments", {GGML_BACKEND_SPLIT_AXIS_1, {4, 2}, {1}, 17}, GGML_TYPE_F32},
        {"a segment repeated 0 times", {GGML_BACKEND_SPLIT_AXIS_1, {4, 2}, {0}, 1}, GGML_TYPE_F32},
        {"partial sums in 2 segments", {GGML_BACKEND_SPLIT_AXIS_PARTIAL, {0}, {1, 1}, 2}, GGML_TYPE_F32},
        {"q8_0 split along axis 0 inside a block", along(GGML_BACKEND_SPLIT_AXIS_0, 16, 48), GGML_TYPE_Q8_0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        c.w      = bad[i].w;
        g_log[0] = '\0';
        CHECK(run(meta, bad[i].type, 0, got) == 1 && strstr(g_log, "split state of 'w'"), bad[i].what);
    }
    return 0;
}
