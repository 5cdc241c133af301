/* compat_elements.c - ggml-cpu.h's element accessors on every type they accept: integers
 * (I8, I16, I32) are read and written exactly, including values a float cannot hold
 * (2^24 + 1, INT32_MIN + 1), with the low bits kept on narrowing as a C cast does; float
 * types convert; 1d indices follow a non-contiguous view's strides.
 * Prints one line per check; exits 1 on the first failure. */
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>


int main(void) {
    struct ggml_init_params params = {1024 * 1024, NULL, false};
    struct ggml_context *   ctx    = ggml_init(params);

    struct ggml_tensor * i32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2);
    ggml_set_i32_nd(i32, 2, 1, 0, 0, 16777217);
    ggml_set_i32_1d(i32, 0, INT32_MIN + 1);
    CHECK(ggml_get_i32_nd(i32, 2, 1, 0, 0) == 16777217, "I32 2^24+1 round trips through set/get_i32_nd");
    CHECK(((const int32_t *) i32->data)[5] == 16777217, "set_i32_nd writes the exact I32 bits");
    CHECK(ggml_get_i32_1d(i32, 0) == INT32_MIN + 1, "I32 INT32_MIN+1 round trips through set/get_i32_1d");
    CHECK(ggml_get_i32_1d(i32, 5) == 16777217, "get_i32_1d reads element 5 as element (2, 1)");

    struct ggml_tensor * i16 = ggml_new_tensor_1d(ctx, GGML_TYPE_I16, 4);
    ggml_set_i32_1d(i16, 1, -32768);
    ggml_set_i32_1d(i16, 2, 65537); /* low 16 bits: 1 */
    CHECK(ggml_get_i32_1d(i16, 1) == -32768 && ((const int16_t *) i16->data)[1] == -32768, "I16 -32768 exact");
    CHECK(ggml_get_i32_nd(i16, 2, 0, 0, 0) == 1, "I16 keeps the low 16 bits of 65537");

    struct ggml_tensor * i8 = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 4);
    ggml_set_i32_nd(i8, 3, 0, 0, 0, -128);
    ggml_set_f32_1d(i8, 0, -7.75f); /* truncated toward zero */
    CHECK(ggml_get_i32_1d(i8, 3) == -128, "I8 -128 exact");
    CHECK(ggml_get_i32_1d(i8, 0) == -7 && ggml_get_f32_1d(i8, 0) == -7.0f, "I8 set_f32 truncates -7.75 to -7");

    struct ggml_tensor * f16 = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 2);
    ggml_set_f32_1d(f16, 0, 0.333333f);
    ggml_set_i32_1d(f16, 1, 2049); /* not a half: rounds to even, 2048 */
    CHECK(ggml_get_f32_1d(f16, 0) == ggml_fp16_to_fp32(ggml_fp32_to_fp16(0.333333f)), "F16 stores the rounded half");
    CHECK(ggml_get_i32_1d(f16, 1) == 2048, "F16 set_i32 2049 reads back 2048");

    struct ggml_tensor * bf16 = ggml_new_tensor_1d(ctx, GGML_TYPE_BF16, 1);
    ggml_set_f32_nd(bf16, 0, 0, 0, 0, 1.0f + 1.0f / 128.0f);
    CHECK(ggml_get_f32_nd(bf16, 0, 0, 0, 0) == 1.0f + 1.0f / 128.0f, "BF16 1+2^-7 exact");

    struct ggml_tensor * f32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    for (int i = 0; i < 12; ++i) ggml_set_f32_1d(f32, i, (float) i + 0.5f);
    struct ggml_tensor * t = ggml_transpose(ctx, f32); /* [3, 4], non-contiguous */
    CHECK(ggml_get_f32_1d(t, 1) == 4.5f, "get_f32_1d on a transposed view follows its strides");
    CHECK(ggml_get_i32_1d(t, 4) == 5, "get_i32_1d reads (1, 1) of the view, 5.5, truncated");
    CHECK(ggml_get_i32_nd(f32, 3, 2, 0, 0) == 11, "get_i32_nd truncates 11.5");

    ggml_set_i32(i32, -5);
    CHECK(ggml_get_i32_1d(i32, 4) == -5, "set_i32 fills every I32 element");
    ggml_free(ctx);
    return 0;
}
