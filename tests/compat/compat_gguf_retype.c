/* compat_gguf_retype.c - llama-quantize's use of gguf_*: tensor infos added from a
 * no_alloc context, retyped one by one (gguf_set_tensor_type: the size follows the type,
 * later offsets move), given their quantized data (gguf_set_tensor_data), written; the
 * file laid out by hand as llama-quantize writes it (metadata from gguf_get_meta_data,
 * each tensor padded to the alignment) equals gguf_write_to_file_ptr's, and reads back. */
#include "check.h"
#include "ggml.h"
#include "gguf.h"

#include <string.h>

enum { N_TENSORS = 3, NE0 = 64, NE1 = 3 };

static size_t pad(size_t n, size_t a) { return (n + a - 1) / a * a; }

int main(void) {
    struct ggml_init_params p    = {N_TENSORS * ggml_tensor_overhead(), NULL, true};
    struct ggml_context *   meta = ggml_init(p);
    const enum ggml_type    types[N_TENSORS] = {GGML_TYPE_Q8_0, GGML_TYPE_F32, GGML_TYPE_Q4_0};
    const char *            names[N_TENSORS] = {"blk.0.w", "blk.0.norm", "blk.1.w"};
    struct gguf_context *   out = gguf_init_empty();
    gguf_set_val_str(out, "general.name", "retype");
    for (int i = 0; i < N_TENSORS; ++i) {
        struct ggml_tensor * t = ggml_new_tensor_2d(meta, GGML_TYPE_F32, NE0, NE1);
        ggml_set_name(t, names[i]);
        gguf_add_tensor(out, t);  // no data yet
    }
    CHECK(gguf_get_tensor_size(out, 0) == NE0 * NE1 * 4 && gguf_get_tensor_offset(out, 2) == 2 * NE0 * NE1 * 4,
          "infos added from a no_alloc context");
    const size_t meta_size = gguf_get_meta_size(out);

    float src[NE0 * NE1];
    for (int i = 0; i < NE0 * NE1; ++i) {
        src[i] = (float) ((i * 37) % 101) / 13.0f - 3.5f;
    }
    static unsigned char data[N_TENSORS][NE0 * NE1 * 4];
    size_t               sizes[N_TENSORS];
    for (int i = 0; i < N_TENSORS; ++i) {
        sizes[i] = ggml_quantize_chunk(types[i], src, data[i], 0, NE1, NE0, NULL);
        gguf_set_tensor_type(out, names[i], types[i]);
        gguf_set_tensor_data(out, names[i], data[i]);
        CHECK(gguf_get_tensor_size(out, i) == sizes[i], "size follows the new type");
    }
    const size_t align = gguf_get_alignment(out);
    CHECK(gguf_get_tensor_offset(out, 1) == pad(sizes[0], align) &&
              gguf_get_tensor_offset(out, 2) == pad(sizes[0], align) + pad(sizes[1], align),
          "later offsets moved");
    CHECK(gguf_get_meta_size(out) == meta_size, "metadata size unchanged by retyping");

    // llama-quantize's file: metadata, then each tensor's data padded to the alignment
    static unsigned char by_hand[1 << 16];
    size_t               n = meta_size;
    gguf_get_meta_data(out, by_hand);
    for (int i = 0; i < N_TENSORS; ++i) {
        memcpy(by_hand + n, data[i], sizes[i]);
        memset(by_hand + n + sizes[i], 0, pad(sizes[i], align) - sizes[i]);
        n += pad(sizes[i], align);
    }
    FILE * f = tmpfile();
    CHECK(f && gguf_write_to_file_ptr(out, f, false), "written");
    static unsigned char written[1 << 16];
    rewind(f);
    const size_t got = fread(written, 1, sizeof written, f);
    CHECK(got == n && memcmp(written, by_hand, n) == 0, "equals the file laid out as llama-quantize does");

    rewind(f);
    struct ggml_context *   tctx = NULL;
    struct gguf_init_params ip   = {false, &tctx};
    struct gguf_context *   in   = gguf_init_from_file_ptr(f, ip);
    CHECK(in != NULL, "read back");
    for (int i = 0; i < N_TENSORS; ++i) {
        struct ggml_tensor * t = ggml_get_tensor(tctx, names[i]);
        CHECK(t && t->type == types[i] && ggml_nbytes(t) == sizes[i] && memcmp(t->data, data[i], sizes[i]) == 0,
              "tensor read back with its type and data");
    }
    fclose(f);
    gguf_free(in);
    ggml_free(tctx);
    gguf_free(out);
    ggml_free(meta);
    return 0;
}
