/* gk-type.h - the tensor element types of gk and their block geometry.
 *
 * The numeric values are the GGUF / ggml type ids as published in GGUF files
 * (ggml.h `enum ggml_type`); ids 4, 5 and 31..33, 36..38 were removed upstream and
 * are not valid here. A quantized type stores a row as a whole number of blocks of
 * gk_blck_size(t) elements, each gk_type_size(t) bytes.
 */
#ifndef GK_TYPE_H
#define GK_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum gk_type {
    GK_TYPE_F32     = 0,
    GK_TYPE_F16     = 1,
    GK_TYPE_Q4_0    = 2,
    GK_TYPE_Q4_1    = 3,
    GK_TYPE_Q5_0    = 6,
    GK_TYPE_Q5_1    = 7,
    GK_TYPE_Q8_0    = 8,
    GK_TYPE_Q8_1    = 9,
    GK_TYPE_Q2_K    = 10,
    GK_TYPE_Q3_K    = 11,
    GK_TYPE_Q4_K    = 12,
    GK_TYPE_Q5_K    = 13,
    GK_TYPE_Q6_K    = 14,
    GK_TYPE_Q8_K    = 15,
    GK_TYPE_IQ2_XXS = 16,
    GK_TYPE_IQ2_XS  = 17,
    GK_TYPE_IQ3_XXS = 18,
    GK_TYPE_IQ1_S   = 19,
    GK_TYPE_IQ4_NL  = 20,
    GK_TYPE_IQ3_S   = 21,
    GK_TYPE_IQ2_S   = 22,
    GK_TYPE_IQ4_XS  = 23,
    GK_TYPE_I8      = 24,
    GK_TYPE_I16     = 25,
    GK_TYPE_I32     = 26,
    GK_TYPE_I64     = 27,
    GK_TYPE_F64     = 28,
    GK_TYPE_IQ1_M   = 29,
    GK_TYPE_BF16    = 30,
    GK_TYPE_TQ1_0   = 34,
    GK_TYPE_TQ2_0   = 35,
    GK_TYPE_MXFP4   = 39,
    GK_TYPE_NVFP4   = 40,
    GK_TYPE_Q1_0    = 41,
    GK_TYPE_Q2_0    = 42,
    GK_TYPE_COUNT   = 43
};

/** True when `id` names a type gk carries (not a removed or unknown id). */
bool gk_type_is_valid(int id);

/** Lower-case name as ggml prints it ("q4_K", "iq2_xxs", "bf16"); "?" for an invalid id. */
const char * gk_type_name(enum gk_type type);

/** Parse a name (case-insensitive, "Q4_K" or "q4_k"); returns false when unknown. */
bool gk_type_from_name(const char * name, enum gk_type * out);

/** Elements per block (1 for the plain types); 0 for an invalid id. */
int64_t gk_blck_size(enum gk_type type);

/** Bytes per block; 0 for an invalid id. */
size_t gk_type_size(enum gk_type type);

/** True for the block formats (every type whose block holds more than one element). */
bool gk_is_quantized(enum gk_type type);

/** True when a row of `ne` elements is a whole number of blocks (ne >= 0) of at most
 *  2^63 - 1 bytes. */
bool gk_row_len_ok(enum gk_type type, int64_t ne);

/** Bytes of a row of `ne` elements; 0 if gk_row_len_ok() is false. Units: bytes. */
size_t gk_row_size(enum gk_type type, int64_t ne);

#ifdef __cplusplus
}
#endif

#endif /* GK_TYPE_H */
