/* gguf.h - reading and writing GGUF files (versions 2 and 3).
 *
 * A GGUF file is: the magic "GGUF", a u32 version, u64 tensor and key/value counts,
 * the key/value pairs, one info record per tensor (name, n_dims, ne[], type, offset),
 * padding up to `general.alignment` (default 32), then the tensor data, each tensor at
 * its offset (a multiple of the alignment) from the start of the data section. All
 * numbers are little-endian. The layout follows ggml's gguf.cpp and the gguf Python
 * package (gguf-py), the two published implementations.
 *
 * The reader validates every count, length, type id, shape and offset against the
 * bytes that are there before it uses or allocates anything; a malformed file gives
 * a gk_gguf_error whose message names the problem and the byte offset. It never
 * aborts and never reads outside the file. See docs/gguf.md for the list of refusals.
 *
 * Pointers returned by the accessors (strings, values, tensor data) stay valid until
 * the context is modified (any gk_gguf_set_* / add / remove) or freed.
 */
#ifndef GK_GGUF_H
#define GK_GGUF_H

#include "gk/gk-type.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_GGUF_MAX_DIMS          4      /* n_dims is 1..4 */
#define GK_GGUF_MAX_NAME          64     /* tensor names: at most 64 bytes */
#define GK_GGUF_MAX_KEY           65535  /* keys: 1..65535 bytes */
#define GK_GGUF_DEFAULT_ALIGNMENT 32
#define GK_GGUF_MAX_ARRAY_DEPTH   8      /* arrays of arrays nest at most this deep */
/* The most bytes read from an input that is not a regular file (a pipe, a character
 * device such as /dev/zero or /dev/stdin): 4 GiB. A larger model must be a file. */
#define GK_GGUF_MAX_STREAM_BYTES  (UINT64_C(4) << 30)

/** Metadata value types; the numbers are the GGUF type ids. */
enum gk_gguf_type {
    GK_GGUF_TYPE_UINT8   = 0,
    GK_GGUF_TYPE_INT8    = 1,
    GK_GGUF_TYPE_UINT16  = 2,
    GK_GGUF_TYPE_INT16   = 3,
    GK_GGUF_TYPE_UINT32  = 4,
    GK_GGUF_TYPE_INT32   = 5,
    GK_GGUF_TYPE_FLOAT32 = 6,
    GK_GGUF_TYPE_BOOL    = 7,  /* one byte, 0 or 1 */
    GK_GGUF_TYPE_STRING  = 8,  /* u64 length + bytes (UTF-8, not NUL-terminated in the file) */
    GK_GGUF_TYPE_ARRAY   = 9,  /* u32 element type + u64 count + elements */
    GK_GGUF_TYPE_UINT64  = 10,
    GK_GGUF_TYPE_INT64   = 11,
    GK_GGUF_TYPE_FLOAT64 = 12,
    GK_GGUF_TYPE_COUNT   = 13
};

enum gk_gguf_status {
    GK_GGUF_OK         = 0,
    GK_GGUF_ERR_IO     = 1,  /* the file cannot be opened, read or written */
    GK_GGUF_ERR_FORMAT = 2,  /* malformed or unsupported file (the message names the byte offset) */
    GK_GGUF_ERR_ARG    = 3,  /* a bad argument: wrong type, unknown name, duplicate, bad size */
    GK_GGUF_ERR_NOMEM  = 4,  /* out of memory */
    GK_GGUF_ERR_CODEC  = 5   /* no decoder for a tensor's type (yet) */
};

/** What went wrong. `offset` is the byte offset in the file for GK_GGUF_ERR_FORMAT
 *  (also written into the message), UINT64_MAX otherwise. */
typedef struct gk_gguf_error {
    enum gk_gguf_status status;
    uint64_t            offset;
    char                message[512];
} gk_gguf_error;

typedef struct gk_gguf       gk_gguf;        /* a GGUF file: metadata and tensors */
typedef struct gk_gguf_value gk_gguf_value;  /* one metadata value (possibly an array) */

/* ---- opening and closing ------------------------------------------------------ */

/** Read the GGUF file at `path`; the tensor data is memory-mapped (or, where mapping
 *  fails, read into memory). Returns NULL and fills `err` (may be NULL) on failure.
 *  A pipe or device is read as its bytes arrive: refused after its first bytes when
 *  they cannot begin a GGUF file, read only as far as its metadata says the file goes,
 *  and refused when that is past GK_GGUF_MAX_STREAM_BYTES. */
gk_gguf * gk_gguf_open(const char * path, gk_gguf_error * err);

/** Read a GGUF file held in memory (`size` bytes, copied). NULL and `err` on failure. */
gk_gguf * gk_gguf_open_memory(const void * data, size_t size, gk_gguf_error * err);

/** Reading options of gk_gguf_open_ex and gk_gguf_open_memory_ex, or-ed together. */
enum gk_gguf_read_flag {
    /** A bool byte other than 0 is true, as ggml's reader takes it (and is kept as 1);
     *  without it a bool byte of 2..255 is an error (GK_GGUF_ERR_FORMAT at its offset). */
    GK_GGUF_READ_BOOL_NONZERO = 1u << 0,
    /** A tensor whose data lies (partly) past the end of the file is read without data
     *  (gk_gguf_tensor_data NULL), as ggml reads a file's metadata alone; without it the
     *  file is refused (GK_GGUF_ERR_FORMAT). */
    GK_GGUF_READ_DATA_OPTIONAL = 1u << 1,
};

/** gk_gguf_open and gk_gguf_open_memory with `flags` (gk_gguf_read_flag values). */
gk_gguf * gk_gguf_open_ex(const char * path, unsigned flags, gk_gguf_error * err);
gk_gguf * gk_gguf_open_memory_ex(const void * data, size_t size, unsigned flags, gk_gguf_error * err);

/** An empty GGUF v3 file to fill with the gk_gguf_set_* and gk_gguf_add_tensor
 *  functions; alignment 32. NULL only when out of memory. */
gk_gguf * gk_gguf_create(void);

/** Free a context (NULL is allowed). */
void gk_gguf_free(gk_gguf * ctx);

/* ---- header --------------------------------------------------------------------- */

uint32_t gk_gguf_version(const gk_gguf * ctx);      /* 2 or 3 */
uint32_t gk_gguf_alignment(const gk_gguf * ctx);    /* general.alignment or 32; bytes */
/** Byte offset of the data section: the end of the tensor infos rounded up to the
 *  alignment. Tensor offsets count from here. */
uint64_t gk_gguf_data_offset(const gk_gguf * ctx);
/** Bytes of the file or buffer the context was read from; 0 for one made by
 *  gk_gguf_create (or NULL). */
uint64_t gk_gguf_source_size(const gk_gguf * ctx);

/* ---- key/value pairs -------------------------------------------------------------- */

int64_t gk_gguf_kv_count(const gk_gguf * ctx);
/** Index of `key`, or -1 when absent. */
int64_t gk_gguf_find_key(const gk_gguf * ctx, const char * key);
/** Key of pair `i` (NUL-terminated), NULL when `i` is out of range. */
const char * gk_gguf_kv_key(const gk_gguf * ctx, int64_t i);
/** Value of pair `i`, NULL when `i` is out of range. */
const gk_gguf_value * gk_gguf_kv_value(const gk_gguf * ctx, int64_t i);
/** Value of `key`, NULL when absent. */
const gk_gguf_value * gk_gguf_get(const gk_gguf * ctx, const char * key);

/** "uint8", "int32", "float32", "bool", "string", "array", ...; "?" when out of range. */
const char * gk_gguf_type_name(enum gk_gguf_type type);
/** Bytes of a fixed-size value type; 0 for string, array and invalid ids. */
size_t gk_gguf_type_size(enum gk_gguf_type type);

enum gk_gguf_type gk_gguf_value_type(const gk_gguf_value * v);

/* Scalar getters: true and *out set when `v` has exactly that type, else false. */
bool gk_gguf_value_u8 (const gk_gguf_value * v, uint8_t  * out);
bool gk_gguf_value_i8 (const gk_gguf_value * v, int8_t   * out);
bool gk_gguf_value_u16(const gk_gguf_value * v, uint16_t * out);
bool gk_gguf_value_i16(const gk_gguf_value * v, int16_t  * out);
bool gk_gguf_value_u32(const gk_gguf_value * v, uint32_t * out);
bool gk_gguf_value_i32(const gk_gguf_value * v, int32_t  * out);
bool gk_gguf_value_f32(const gk_gguf_value * v, float    * out);
bool gk_gguf_value_bool(const gk_gguf_value * v, bool    * out);
bool gk_gguf_value_u64(const gk_gguf_value * v, uint64_t * out);
bool gk_gguf_value_i64(const gk_gguf_value * v, int64_t  * out);
bool gk_gguf_value_f64(const gk_gguf_value * v, double   * out);

/** The bytes of a fixed-size scalar (gk_gguf_type_size(type) of them, host order),
 *  for code that handles every type alike; NULL for strings and arrays. */
const void * gk_gguf_value_data(const gk_gguf_value * v);

/** A string value: its bytes (NUL-terminated for convenience; the string itself may
 *  hold NUL bytes) and, when `len` is not NULL, its length. NULL if not a string. */
const char * gk_gguf_value_str(const gk_gguf_value * v, size_t * len);

/** Element type of an array value; GK_GGUF_TYPE_COUNT when `v` is not an array. */
enum gk_gguf_type gk_gguf_array_type(const gk_gguf_value * v);
/** Element count of an array value; 0 when `v` is not an array. */
uint64_t gk_gguf_array_len(const gk_gguf_value * v);
/** The packed elements of an array of a fixed-size type (bool: one byte each, 0 or 1),
 *  in host order; NULL for arrays of strings or arrays and for non-arrays. */
const void * gk_gguf_array_data(const gk_gguf_value * v);
/** Element `j` of an array of strings (see gk_gguf_value_str); NULL otherwise. */
const char * gk_gguf_array_str(const gk_gguf_value * v, uint64_t j, size_t * len);
/** Element `j` of an array of arrays (itself an array value); NULL otherwise. */
const gk_gguf_value * gk_gguf_array_item(const gk_gguf_value * v, uint64_t j);

/* ---- tensors ---------------------------------------------------------------------- */

int64_t gk_gguf_tensor_count(const gk_gguf * ctx);
/** Index of the tensor called `name`, or -1 when absent. */
int64_t gk_gguf_find_tensor(const gk_gguf * ctx, const char * name);
/* For an index out of range these return NULL / 0. */
const char *   gk_gguf_tensor_name(const gk_gguf * ctx, int64_t i);
enum gk_type   gk_gguf_tensor_type(const gk_gguf * ctx, int64_t i);
uint32_t       gk_gguf_tensor_n_dims(const gk_gguf * ctx, int64_t i);
/** ne[0..3] in elements, ne[0] innermost; dimensions past n_dims are 1. */
const int64_t * gk_gguf_tensor_ne(const gk_gguf * ctx, int64_t i);
int64_t        gk_gguf_tensor_nelements(const gk_gguf * ctx, int64_t i);
/** Offset of the tensor's data from gk_gguf_data_offset(), in bytes. */
uint64_t       gk_gguf_tensor_offset(const gk_gguf * ctx, int64_t i);
/** Bytes of the tensor's data (whole rows of whole blocks). */
uint64_t       gk_gguf_tensor_size(const gk_gguf * ctx, int64_t i);
/** The tensor's bytes as stored; NULL for an empty tensor and for one whose data is
 *  not set (added with NULL data, or retyped, and not given data since). */
const void *   gk_gguf_tensor_data(const gk_gguf * ctx, int64_t i);

/** Rows of the tensor: ne[1] * ne[2] * ne[3] (each row holds ne[0] elements). */
int64_t gk_gguf_tensor_nrows(const gk_gguf * ctx, int64_t i);

/** Decode rows [first_row, first_row + n_rows) of tensor `i` to f32 into `dst`, which
 *  holds n_rows * ne[0] floats; (0, gk_gguf_tensor_nrows) decodes the whole tensor.
 *  GK_GGUF_ERR_CODEC "no decoder for TYPE" while the codec of the tensor's type is
 *  missing; GK_GGUF_ERR_ARG for a bad index or row range. */
enum gk_gguf_status gk_gguf_tensor_to_f32(const gk_gguf * ctx, int64_t i, int64_t first_row, int64_t n_rows,
                                          float * dst, gk_gguf_error * err);

/* ---- writing ---------------------------------------------------------------------- */
/* Setters add a key at the end, or replace the value (and type) of an existing key in
 * place. `general.alignment` may only be set as a uint32 power of two; it re-lays out
 * the tensors. All return GK_GGUF_OK or an error status with `err` filled. */

enum gk_gguf_status gk_gguf_set_u8 (gk_gguf * ctx, const char * key, uint8_t  v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_i8 (gk_gguf * ctx, const char * key, int8_t   v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_u16(gk_gguf * ctx, const char * key, uint16_t v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_i16(gk_gguf * ctx, const char * key, int16_t  v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_u32(gk_gguf * ctx, const char * key, uint32_t v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_i32(gk_gguf * ctx, const char * key, int32_t  v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_f32(gk_gguf * ctx, const char * key, float    v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_bool(gk_gguf * ctx, const char * key, bool    v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_u64(gk_gguf * ctx, const char * key, uint64_t v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_i64(gk_gguf * ctx, const char * key, int64_t  v, gk_gguf_error * err);
enum gk_gguf_status gk_gguf_set_f64(gk_gguf * ctx, const char * key, double   v, gk_gguf_error * err);
/** A string of `len` bytes. */
enum gk_gguf_status gk_gguf_set_str(gk_gguf * ctx, const char * key, const char * s, size_t len,
                                    gk_gguf_error * err);
/** An array of `n` packed elements of the fixed-size type `elem` (bool: bytes 0/1). */
enum gk_gguf_status gk_gguf_set_array(gk_gguf * ctx, const char * key, enum gk_gguf_type elem,
                                      const void * data, uint64_t n, gk_gguf_error * err);
/** An array of `n` strings; `lens` gives their lengths, or is NULL for NUL-terminated. */
enum gk_gguf_status gk_gguf_set_array_str(gk_gguf * ctx, const char * key, const char * const * s,
                                          const size_t * lens, uint64_t n, gk_gguf_error * err);
/** A deep copy of `v` (any type, nested arrays included), e.g. from another context. */
enum gk_gguf_status gk_gguf_set_value(gk_gguf * ctx, const char * key, const gk_gguf_value * v,
                                      gk_gguf_error * err);
/** Remove `key` (GK_GGUF_ERR_ARG when absent). */
enum gk_gguf_status gk_gguf_remove_key(gk_gguf * ctx, const char * key, gk_gguf_error * err);

/** Append a tensor: `ne` holds `n_dims` (1..4) sizes, `data` its `size` bytes, which
 *  must equal the byte size of that shape in `type` (copied). Its offset is the end of
 *  the previous tensor rounded up to the alignment. `data` may be NULL: the tensor's data
 *  is then not set (written as zeros) until gk_gguf_set_tensor_data. */
enum gk_gguf_status gk_gguf_add_tensor(gk_gguf * ctx, const char * name, enum gk_type type, uint32_t n_dims,
                                       const int64_t * ne, const void * data, uint64_t size,
                                       gk_gguf_error * err);

/** Change the type of tensor `i` (its shape stays): its size becomes that shape's in
 *  `type`, and every later tensor's offset moves to the end of the one before it rounded
 *  up to the alignment (ggml's gguf_set_tensor_type; llama-quantize's use). Its data is
 *  no longer set unless `type` is its type already: give the new bytes with
 *  gk_gguf_set_tensor_data. GK_GGUF_ERR_ARG for a bad index or type, or when ne[0] is
 *  not a multiple of the new type's block size. */
enum gk_gguf_status gk_gguf_set_tensor_type(gk_gguf * ctx, int64_t i, enum gk_type type, gk_gguf_error * err);

/** Set the data of tensor `i`: `size` bytes (copied), which must equal
 *  gk_gguf_tensor_size(ctx, i) (ggml's gguf_set_tensor_data, which takes no size). */
enum gk_gguf_status gk_gguf_set_tensor_data(gk_gguf * ctx, int64_t i, const void * data, uint64_t size,
                                            gk_gguf_error * err);

/** Bytes gk_gguf_write would produce. */
uint64_t gk_gguf_write_size(const gk_gguf * ctx);

/** Write the context as a GGUF file of its version: header, pairs, tensor infos,
 *  zero padding to the alignment, the tensors each padded to the alignment. A file
 *  read and written back unchanged is byte-identical when it was laid out this way
 *  (as ggml and gguf-py write). Writes to a temporary file renamed over `path` (over
 *  the file a symlink names); a device or FIFO is written directly. */
enum gk_gguf_status gk_gguf_write(const gk_gguf * ctx, const char * path, gk_gguf_error * err);

/** The same bytes to the open descriptor `fd`, at its position (at the end when it was
 *  opened for append: a shell's `>>`), which is left open; `name` (or NULL) names it in
 *  messages. No temporary file: what a shell opened is written as it was opened. */
enum gk_gguf_status gk_gguf_write_fd(const gk_gguf * ctx, int fd, const char * name, gk_gguf_error * err);

/** The same bytes into `dst` of `size` bytes (>= gk_gguf_write_size). */
enum gk_gguf_status gk_gguf_write_memory(const gk_gguf * ctx, void * dst, uint64_t size, gk_gguf_error * err);

/** The file's first gk_gguf_data_offset() bytes (header, pairs, tensor infos, zero
 *  padding to the alignment: ggml's gguf_get_meta_data) into `dst` of `size` bytes
 *  (>= gk_gguf_data_offset), without the tensor data. */
enum gk_gguf_status gk_gguf_write_meta_memory(const gk_gguf * ctx, void * dst, uint64_t size, gk_gguf_error * err);

#ifdef __cplusplus
}
#endif

#endif /* GK_GGUF_H */
