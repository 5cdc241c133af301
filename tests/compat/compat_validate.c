/* compat_validate.c - ggml_validate_row_data accepts rows ggml accepts and refuses what ggml
 * refuses: a Q8_0/Q4_1/Q4_K/Q6_K row whose f16 scale (d, dmin or m) is NaN or infinite, a Q8_K
 * row with a NaN f32 scale, F16/BF16/F32 rows holding NaN or infinity, MXFP4 with exponent
 * 0xff, a byte count that is not whole blocks, an invalid type; integer rows always pass.
 * Prints one line per check; exits 1 on the first failure. */
#include "ggml.h"

#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { ROW = 512 };

static const uint16_t F16_NAN = 0x7e00, F16_INF = 0x7c00;

/* A valid row of `type` (ROW values encoded by ggml_quantize_chunk) in buf; returns its bytes. */
static size_t encode(enum ggml_type type, uint8_t * buf) {
    float x[ROW];
    for (int i = 0; i < ROW; ++i) x[i] = sinf((float) i * 0.37f) * 3.0f;
    return ggml_quantize_chunk(type, x, buf, 0, 1, ROW, NULL);
}

/* The row stays valid, then is refused once the 2-byte field at `offset` of block `block`
 * holds `bits`. */
static void refuses_bad_f16(enum ggml_type type, size_t offset, int block, uint16_t bits, const char * what) {
    static uint8_t buf[4096];
    const size_t   n = encode(type, buf);
    CHECK(ggml_validate_row_data(type, buf, n), ggml_type_name(type));
    memcpy(buf + (size_t) block * ggml_type_size(type) + offset, &bits, sizeof bits);
    CHECK(!ggml_validate_row_data(type, buf, n), what);
}

int main(void) {
    refuses_bad_f16(GGML_TYPE_Q8_0, 0, 3, F16_NAN, "q8_0 row with a NaN scale d in block 3 is refused");
    refuses_bad_f16(GGML_TYPE_Q8_0, 0, 0, F16_INF, "q8_0 row with an infinite scale is refused");
    refuses_bad_f16(GGML_TYPE_Q4_1, 2, 1, F16_NAN, "q4_1 row with a NaN offset m is refused");
    refuses_bad_f16(GGML_TYPE_Q4_K, 2, 1, F16_NAN, "q4_K row with a NaN dmin is refused");
    refuses_bad_f16(GGML_TYPE_Q6_K, 208, 0, F16_NAN, "q6_K row with a NaN d (after the quants) is refused");

    {
        /* Q8_K (no encoder in ggml_quantize_chunk): two blocks with scale 1 and zero quants */
        static uint8_t buf[2 * 292];
        const size_t   n   = 2 * ggml_type_size(GGML_TYPE_Q8_K);
        const float    one = 1.0f, nan = NAN;
        CHECK(n == sizeof buf, "q8_K block is 292 bytes");
        memcpy(buf, &one, sizeof one);
        memcpy(buf + n / 2, &one, sizeof one);
        CHECK(ggml_validate_row_data(GGML_TYPE_Q8_K, buf, n), "q8_K");
        memcpy(buf + n / 2, &nan, sizeof nan);
        CHECK(!ggml_validate_row_data(GGML_TYPE_Q8_K, buf, n), "q8_K row with a NaN f32 scale is refused");
    }
    {
        float f[4] = {1.0f, 2.0f, 3.0f, 4.0f};
        CHECK(ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f), "finite f32 row");
        f[2] = INFINITY;
        CHECK(!ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f), "f32 row with infinity is refused");
        CHECK(!ggml_validate_row_data(GGML_TYPE_F32, f, 6), "6 bytes are not whole f32 values");
        uint16_t h[3] = {0x3c00, F16_NAN, 0};
        CHECK(!ggml_validate_row_data(GGML_TYPE_F16, h, sizeof h), "f16 row with NaN is refused");
        uint16_t b[2] = {0x3f80, 0x7f80};
        CHECK(!ggml_validate_row_data(GGML_TYPE_BF16, b, sizeof b), "bf16 row with infinity is refused");
        b[1] = 0x4000;
        CHECK(ggml_validate_row_data(GGML_TYPE_BF16, b, sizeof b), "finite bf16 row");
        int32_t ints[2] = {-1, 0x7fc00000};
        CHECK(ggml_validate_row_data(GGML_TYPE_I32, ints, sizeof ints), "i32 rows are not checked");
        CHECK(!ggml_validate_row_data((enum ggml_type) 4, ints, sizeof ints), "removed type 4 is invalid");
        CHECK(!ggml_validate_row_data(GGML_TYPE_COUNT, ints, sizeof ints), "GGML_TYPE_COUNT is invalid");
    }
    {
        uint8_t mx[17] = {0};
        mx[0]          = 127;
        CHECK(ggml_validate_row_data(GGML_TYPE_MXFP4, mx, sizeof mx), "mxfp4 block with exponent 127");
        mx[0] = 0xff;
        CHECK(!ggml_validate_row_data(GGML_TYPE_MXFP4, mx, sizeof mx), "mxfp4 block with exponent 0xff is refused");
    }
    return 0;
}
