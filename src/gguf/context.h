// context.h - the in-memory form of a GGUF file, shared by the reader, the writer
// and the C API. Nothing here is visible outside src/gguf.
#pragma once

#include "failure.h"
#include "gk/gguf.h"
#include "source.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

/// One metadata value. Fixed-size scalars keep their little-endian bytes in `bits`;
/// arrays keep their elements in the one member that fits the element type.
struct gk_gguf_value {
    gk_gguf_type type = GK_GGUF_TYPE_UINT8;
    uint64_t     bits = 0;                       // fixed-size scalar, zero-extended
    std::string  str;                            // GK_GGUF_TYPE_STRING
    gk_gguf_type elem = GK_GGUF_TYPE_COUNT;      // array: element type
    uint64_t     n    = 0;                       // array: element count
    std::vector<uint8_t>       packed;           // array of a fixed-size type
    std::vector<std::string>   strs;             // array of strings
    std::vector<gk_gguf_value> items;            // array of arrays
};

namespace gk::gguf {

struct kv_pair {
    std::string   key;
    gk_gguf_value value;
    uint64_t      nbytes = 0;        // bytes in the file: key, type id and value
    uint64_t      value_at = 0;      // file offset of the value (for messages)
};

struct tensor_info {
    std::string name;
    gk_type     type   = GK_TYPE_F32;
    uint32_t    n_dims = 1;
    int64_t     ne[GK_GGUF_MAX_DIMS] = {1, 1, 1, 1};
    int64_t     nelements = 1;
    uint64_t    offset = 0;          // from the start of the data section
    uint64_t    nbytes = 0;
    const uint8_t *      mapped = nullptr;  // data inside the source file
    std::vector<uint8_t> owned;             // or data added through the writer

    const uint8_t * data() const { return owned.empty() ? mapped : owned.data(); }
    /// Bytes of this record in the file: name, n_dims, ne[], type, offset.
    uint64_t info_bytes() const { return 8 + name.size() + 4 + 8ull * n_dims + 4 + 8; }
};

/// `n` rounded up to the multiple of `alignment` (a power of two; no overflow for
/// the file sizes the reader accepts).
inline uint64_t pad_to(uint64_t n, uint64_t alignment) { return (n + alignment - 1) & ~(alignment - 1); }

} // namespace gk::gguf

struct gk_gguf {
    uint32_t version     = 3;
    uint32_t alignment   = GK_GGUF_DEFAULT_ALIGNMENT;
    uint64_t data_offset = 0;
    bool     tail_padded = true;  // the file ends padded to the alignment (see writer.cpp)

    std::vector<gk::gguf::kv_pair>           kv;
    std::unordered_map<std::string, int64_t> key_index;
    std::vector<gk::gguf::tensor_info>       tensors;
    std::unordered_map<std::string, int64_t> tensor_index;

    std::unique_ptr<gk::gguf::byte_source> source;  // the file's bytes (reader only)
};

namespace gk::gguf {

/// Fill t.nelements and t.nbytes from t.type, t.n_dims (1..4) and t.ne (each >= 0);
/// returns what is wrong ("" when nothing): elements or byte strides past int64, a row
/// that is not a whole number of blocks (tensor_info.cpp).
std::string size_tensor(tensor_info & t);

/// Rows of `t` (ne[1] * ne[2] * ne[3]) and rows [first_row, first_row + n_rows)
/// decoded into `dst` of n_rows * ne[0] floats (decode.cpp).
int64_t tensor_rows(const tensor_info & t);
void tensor_to_f32(const tensor_info & t, int64_t first_row, int64_t n_rows, float * dst);

/// Parse and validate a whole GGUF file held in `src` (reader.cpp).
std::unique_ptr<gk_gguf> parse(std::unique_ptr<byte_source> src, unsigned flags = 0);

/// For the first `size` bytes of an input that may hold up to `limit` bytes (a pipe
/// still being read): 0 while its metadata is incomplete, else the bytes the whole file
/// takes (the end of its last tensor's data rounded up to the alignment, at most
/// `limit`). Throws a failure as soon as the bytes so far cannot begin a GGUF file
/// (magic, version, a count or length beyond `limit`, any malformed field) (reader.cpp).
uint64_t extent_of_prefix(const uint8_t * data, uint64_t size, uint64_t limit);

/// Bytes of a value in the file, after its type id (value.cpp).
uint64_t value_bytes(const gk_gguf_value & v);

/// Bytes from the magic to the end of the tensor infos.
uint64_t meta_bytes(const gk_gguf & ctx);

/// Recompute data_offset and every tensor offset as the writer will lay them out.
void relayout(gk_gguf & ctx);

/// Total bytes the writer produces.
uint64_t file_bytes(const gk_gguf & ctx);

/// Serialize the context through `put` (writer.cpp).
class sink {
public:
    virtual ~sink() = default;
    virtual void put(const void * p, size_t n) = 0;
};
/// The whole file, or with `meta_only` its first data_offset bytes (no tensor data).
void write_to(const gk_gguf & ctx, sink & out, bool meta_only);

/// Write the context to `path` through a temporary file renamed over it, or into
/// `dst` of `size` bytes (the whole file, or its metadata with `meta_only`) (output.cpp).
/// Throw failures.
void write_file(const gk_gguf & ctx, const char * path);
void write_descriptor(const gk_gguf & ctx, int fd, const char * name);
void write_memory(const gk_gguf & ctx, void * dst, uint64_t size, bool meta_only);

} // namespace gk::gguf
