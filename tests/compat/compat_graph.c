/* compat_graph.c - ggml's graph functions and the small rope and buffer entry points
 * added for test-backend-ops and llama-server: ggml_graph_add_node appends a node that
 * is then computed, ggml_graph_cpy / ggml_graph_dup copy nodes and leafs,
 * ggml_build_forward_order adds a tensor with its sources, ggml_graph_print goes through
 * the log callback, ggml_graph_dump_dot writes a Graphviz file; ggml_rope_set_offset moves
 * the rotated window (the elements outside it are copied), ggml_rope_yarn_corr_dims gives
 * ggml's correction dims, ggml_rope_custom is ggml_rope_ext without frequency factors; a
 * 0-byte buffer has no base; the arena functions (new_buffer, get_mem_buffer, print_objects,
 * reset), gallocr_reserve_n_size, backend_register and the meta split axis names. Exits 1
 * on the first failure. */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int g_log_lines = 0;

static void count_lines(enum ggml_log_level level, const char * text, void * user) {
    (void) level;
    (void) text;
    (void) user;
    ++g_log_lines;
}

int main(int argc, char ** argv) {
    struct ggml_init_params params = {16 * 1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    a      = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    for (int i = 0; i < 8; ++i) ggml_set_f32_1d(a, i, (float) i - 3.0f);

    // build_forward_order, add_node, cpy, dup
    struct ggml_tensor * sq  = ggml_sqr(ctx, a);
    struct ggml_tensor * neg = ggml_neg(ctx, a);
    struct ggml_cgraph * g   = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_order(g, sq);
    CHECK(ggml_graph_n_nodes(g) == 1 && ggml_graph_node(g, 0) == sq, "build_forward_order adds the tensor");
    ggml_graph_add_node(g, neg);
    CHECK(ggml_graph_n_nodes(g) == 2 && ggml_graph_node(g, 1) == neg, "graph_add_node appends");
    CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "compute");
    CHECK(ggml_get_f32_1d(neg, 0) == 3.0f && ggml_get_f32_1d(sq, 0) == 9.0f, "the added node is computed");
    struct ggml_cgraph * big = ggml_new_graph_custom(ctx, 64, false);
    ggml_graph_cpy(g, big);
    CHECK(ggml_graph_n_nodes(big) == 2 && ggml_graph_node(big, 1) == neg, "graph_cpy copies the nodes");
    struct ggml_cgraph * dup = ggml_graph_dup(ctx, g, false);
    CHECK(dup != g && ggml_graph_n_nodes(dup) == 2 && ggml_graph_size(dup) == 16, "graph_dup: same nodes and size");

    // print and dump_dot
    ggml_log_set(count_lines, NULL);
    ggml_graph_print(g);
    ggml_log_set(NULL, NULL);
    CHECK(g_log_lines >= 6, "graph_print writes its lines through the log callback");
    char path[512];
    snprintf(path, sizeof path, "%s/compat-graph.dot", argc > 1 ? argv[1] : ".");
    ggml_graph_dump_dot(g, NULL, path);
    FILE * f = fopen(path, "r");
    char   head[16] = {0};
    CHECK(f && fread(head, 1, 7, f) == 7 && strcmp(head, "digraph") == 0, "graph_dump_dot writes a digraph");
    fclose(f);

    // rope at an offset: 16 rotated dims from element 8 of rows of 32
    struct ggml_tensor * x   = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 32, 2, 3);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    for (int i = 0; i < 32 * 2 * 3; ++i) ggml_set_f32_1d(x, i, sinf((float) i));
    for (int i = 0; i < 3; ++i) ggml_set_i32_1d(pos, i, 5 * i + 1);
    struct ggml_tensor * off = ggml_rope_set_offset(ggml_rope_ext(ctx, x, pos, NULL, 16, GGML_ROPE_TYPE_NEOX, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f), 8);
    struct ggml_tensor * win = ggml_view_3d(ctx, x, 16, 2, 3, x->nb[1], x->nb[2], 8 * sizeof(float));
    struct ggml_tensor * ref = ggml_rope_ext(ctx, ggml_cont(ctx, win), pos, NULL, 16, GGML_ROPE_TYPE_NEOX, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the deprecated name is what is tested
    struct ggml_tensor * cus = ggml_rope_custom(ctx, x, pos, 16, GGML_ROPE_TYPE_NEOX, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
#pragma GCC diagnostic pop
    struct ggml_tensor * ext = ggml_rope_ext(ctx, x, pos, NULL, 16, GGML_ROPE_TYPE_NEOX, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    struct ggml_cgraph * rg  = ggml_new_graph(ctx);
    ggml_build_forward_expand(rg, off);
    ggml_build_forward_expand(rg, ref);
    ggml_build_forward_expand(rg, cus);
    ggml_build_forward_expand(rg, ext);
    CHECK(ggml_graph_compute_with_ctx(ctx, rg, 2) == GGML_STATUS_SUCCESS, "rope compute");
    int same_window = 1, same_rest = 1;
    for (int r = 0; r < 6; ++r) {
        for (int i = 0; i < 32; ++i) {
            const float got = ggml_get_f32_1d(off, r * 32 + i);
            if (i >= 8 && i < 24) {
                same_window &= memcmp(&got, (const float *) ref->data + r * 16 + (i - 8), sizeof got) == 0;
            } else {
                same_rest &= got == ggml_get_f32_1d(x, r * 32 + i);
            }
        }
    }
    CHECK(same_window, "rope_set_offset: the window is rope of those 16 elements, bit for bit");
    CHECK(same_rest, "rope_set_offset: the elements outside the window are copied");
    CHECK(memcmp(cus->data, ext->data, ggml_nbytes(ext)) == 0, "rope_custom equals rope_ext without frequency factors");
    float dims[2];
    ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 32.0f, 1.0f, dims);
    CHECK(dims[0] == 20.0f && dims[1] == 46.0f, "rope_yarn_corr_dims(128, 4096, 1e4, 32, 1) = [20, 46]");

    // a 0-byte buffer (llama.cpp's no_alloc model load) has no base
    ggml_backend_buffer_t empty = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 0);
    CHECK(empty && ggml_backend_buffer_get_base(empty) == NULL, "a 0-byte buffer's base is NULL");
    ggml_backend_buffer_free(empty);
    ggml_free(ctx);

    // the arena: new_buffer, get_mem_buffer, print_objects, reset
    char                    arena[4096];
    struct ggml_init_params small = {sizeof arena, arena, true};
    struct ggml_context *   sctx  = ggml_init(small);
    CHECK(ggml_get_mem_buffer(sctx) == arena, "get_mem_buffer is the caller's arena");
    unsigned char * raw = ggml_new_buffer(sctx, 100);
    CHECK(raw >= (unsigned char *) arena && raw + 100 <= (unsigned char *) arena + sizeof arena,
          "new_buffer carves from the arena (also in a no_alloc context)");
    memset(raw, 7, 100);
    ggml_new_tensor_1d(sctx, GGML_TYPE_F32, 4);
    const size_t used = ggml_used_mem(sctx);
    g_log_lines       = 0;
    ggml_log_set(count_lines, NULL);
    ggml_print_objects(sctx);
    ggml_log_set(NULL, NULL);
    CHECK(g_log_lines == 4, "print_objects: a header, the buffer, the tensor, the end");
    ggml_reset(sctx);
    CHECK(ggml_used_mem(sctx) == 0 && ggml_get_first_tensor(sctx) == NULL, "reset empties the context");
    CHECK(ggml_new_buffer(sctx, 100) == raw && ggml_used_mem(sctx) < used, "after reset the arena is reused");
    ggml_free(sctx);

    // gallocr_reserve_n_size measures without allocating: the same bytes reserve_n allocates
    struct ggml_init_params mp   = {1024 * 1024, NULL, true};
    struct ggml_context *   mctx = ggml_init(mp);
    struct ggml_tensor *    in   = ggml_new_tensor_2d(mctx, GGML_TYPE_F32, 256, 16);
    ggml_set_input(in);
    struct ggml_tensor * out = ggml_sum_rows(mctx, ggml_sqr(mctx, ggml_scale(mctx, in, 2.0f)));
    ggml_set_output(out);
    struct ggml_cgraph * mg = ggml_new_graph(mctx);
    ggml_build_forward_expand(mg, out);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    size_t         need   = 0;
    ggml_gallocr_reserve_n_size(galloc, mg, NULL, NULL, &need);
    CHECK(need >= 256 * 16 * 4 && ggml_gallocr_get_buffer_size(galloc, 0) == 0,
          "gallocr_reserve_n_size measures and allocates nothing");
    CHECK(ggml_gallocr_reserve(galloc, mg) && ggml_gallocr_get_buffer_size(galloc, 0) == need,
          "gallocr_reserve allocates the size measured");
    ggml_gallocr_free(galloc);
    ggml_free(mctx);

    // the registry: compat's own entries are registered already; the meta split axis names
    ggml_backend_register(ggml_backend_reg_get(0));
    ggml_backend_register(NULL);
    CHECK(ggml_backend_reg_count() >= 1, "backend_register of a registered entry or NULL is a no-op");
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_1), "1") == 0 &&
              strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_MIRRORED), "MIRRORED") == 0,
          "meta_split_axis_name");
    return 0;
}
