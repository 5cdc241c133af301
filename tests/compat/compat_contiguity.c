/* compat_contiguity.c - ggml's layout queries on compat: the is_contiguous_* family on a
 * packed tensor, a row-strided view, a permuted view and a transposed view;
 * ggml_get_max_tensor_size; ggml_set_zero. Exits 1 on the first failure. */
#include "ggml.h"

#include "check.h"

#include <string.h>

int main(void) {
    struct ggml_init_params params = {1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);
    struct ggml_tensor *    t      = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 4, 3);
    CHECK(ggml_is_contiguous_1(t) && ggml_is_contiguous_2(t) && ggml_is_contiguous_to_3(t), "packed tensor");
    CHECK(ggml_is_contiguously_allocated(t), "packed tensor is contiguously allocated");

    /* rows of 5 of the 8 elements: dimension 1 strided */
    struct ggml_tensor * rows = ggml_view_3d(ctx, t, 5, 4, 3, t->nb[1], t->nb[2], 0);
    CHECK(!ggml_is_contiguous(rows) && ggml_is_contiguous_1(rows) && ggml_is_contiguous_2(rows),
          "row-strided view: contiguous_1 and _2, not contiguous");
    CHECK(!ggml_is_contiguous_to_2(rows) && !ggml_is_contiguously_allocated(rows), "row-strided view: not packed to 2");

    struct ggml_tensor * p = ggml_permute(ctx, t, 0, 2, 1, 3); /* dims 1 and 2 swapped */
    CHECK(!ggml_is_contiguous_1(p) && ggml_is_contiguous_to_1(p), "permuted view: packed in dim 0 only");
    CHECK(ggml_is_contiguously_allocated(p), "permuted view covers its memory without gaps");

    struct ggml_tensor * tr = ggml_transpose(ctx, t);
    CHECK(!ggml_is_contiguous_to_1(tr) && !ggml_is_contiguous_channels(tr), "transposed view");
    struct ggml_tensor * ch = ggml_permute(ctx, t, 2, 0, 1, 3); /* t's packed dim 0 becomes dim 2 */
    CHECK(ggml_is_contiguous_channels(ch), "channels-innermost view");

    struct ggml_tensor * big = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 100, 7);
    CHECK(ggml_get_max_tensor_size(ctx) == 1400, "largest tensor: 100x7 f16 = 1400 bytes");

    memset(big->data, 0x5a, ggml_nbytes(big));
    ggml_set_zero(big);
    int zero = 1;
    for (size_t i = 0; i < ggml_nbytes(big); ++i) zero = zero && ((const unsigned char *) big->data)[i] == 0;
    CHECK(zero, "set_zero clears every byte");
    ggml_free(ctx);
    return 0;
}
