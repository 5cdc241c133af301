// codec.h - the codec's dispatch table: for every gk_type, its block geometry and
// the row decoder/encoder of its format.
//
// Each format family lives in its own file (legacy.cpp, k_quants.cpp, iq_quants.cpp,
// fp4.cpp, ternary.cpp, ...) with its block structs and value tables; the family
// fills its rows of the table through a register_* function called once from
// traits.cpp. Nothing outside src/quant restates a block layout.
#pragma once

#include "gk/gk-type.h"

#include <cstddef>
#include <cstdint>

namespace gk::quant {

/// Decode `n` elements (a whole number of blocks) starting at `src` to f32.
/// A pure function of the bytes: the same bytes always give the same bits.
using to_float_fn = void (*)(const void * src, float * dst, int64_t n);

/// Encode one row of `n` elements (a whole number of blocks) into blocks at `dst`.
/// `imatrix` is null or holds `n` non-negative importance weights, one per column
/// (llama.cpp's imatrix convention); encoders that take no weights ignore it.
using from_float_fn = void (*)(const float * src, void * dst, int64_t n, const float * imatrix);

/// Encode one row of `n` elements (a whole number of blocks) as ggml's CPU backend does when
/// it stores a row (its from_float, as in set_rows into a quantized KV cache): on x86 the
/// reference encoder of the type (quantize_row_*_ref: one pass, no search), except q8_0 and
/// q8_1, whose x86 from_float rounds by its own rule (legacy.h's quantize_row_q8_0_dot).
using from_float_ref_fn = void (*)(const float * src, void * dst, int64_t n);

struct type_traits {
    const char *  name       = "?";
    int64_t       blck_size  = 0;   // elements per block
    size_t        type_size  = 0;   // bytes per block
    bool          valid      = false;
    to_float_fn   to_float   = nullptr;
    from_float_fn from_float = nullptr;
    bool          takes_imatrix = false;  // the encoder uses importance weights when given
    // ggml's CPU encoder of a stored row, where it differs from from_float (q4_0 q4_1 q5_0
    // q5_1 q8_0 q8_1 iq4_nl); nullptr elsewhere: the plain types, whose from_float is already
    // the conversion ggml makes, and the types the codec has no such encoder for.
    from_float_ref_fn from_float_ref = nullptr;
};

/// The traits of `type`, or nullptr for an invalid id. Thread-safe (built once).
const type_traits * get_type_traits(int type);

/// The table the families fill; index = gk_type id.
struct codec_table {
    type_traits rows[GK_TYPE_COUNT];
};

// One per family file; each sets to_float/from_float/takes_imatrix of its types.
void register_plain(codec_table & t);     // f32 f16 bf16 f64 i8 i16 i32 i64   (plain.cpp)
void register_legacy(codec_table & t);    // q4_0 q4_1 q5_0 q5_1 q8_0 q8_1     (legacy.cpp)
void register_low_bit(codec_table & t);   // q1_0 q2_0 tq1_0 tq2_0             (low_bit.cpp)
void register_fp4(codec_table & t);       // mxfp4 nvfp4 iq4_nl iq4_xs         (fp4.cpp)
void register_k_quants(codec_table & t);  // q2_K q3_K q4_K q5_K q6_K q8_K     (k_quants.cpp)
void register_iq_quants(codec_table & t); // iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq1_s iq1_m (iq_quants.cpp)

/// Encode `nrows` rows of `n_per_row` elements; returns bytes written, 0 when the
/// type has no encoder or n_per_row is not a whole number of blocks.
size_t quantize_rows(int type, const float * src, void * dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix);

/// Decode `nrows` rows of `n_per_row` elements; false when the type has no decoder
/// or n_per_row is not a whole number of blocks.
bool dequantize_rows(int type, const void * src, float * dst, int64_t nrows, int64_t n_per_row);

/// ASCII case-insensitive string equality.
bool equal_ignoring_case(const char * a, const char * b);

} // namespace gk::quant
