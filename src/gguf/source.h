// source.h - the bytes of a GGUF file: memory-mapped, or read into memory where
// mapping is not possible (an empty file, a pipe, a device, a file system without
// mmap), checked as they arrive.
#pragma once

#include "gk/gguf.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gk::gguf {

class byte_source {
public:
    virtual ~byte_source() = default;
    virtual const uint8_t * data() const = 0;
    virtual uint64_t size() const = 0;
};

/// Map or read the file at `path`; throws a GK_GGUF_ERR_IO failure naming the cause.
/// An input that is not a regular file (a pipe, a character device) is read only as far
/// as its GGUF metadata says the file goes, and refused (a GK_GGUF_ERR_FORMAT failure)
/// as soon as its first bytes cannot begin a GGUF file, when a size it declares goes
/// past `stream_limit` bytes, or when its metadata does not end within them.
std::unique_ptr<byte_source> open_file(const char * path, uint64_t stream_limit = GK_GGUF_MAX_STREAM_BYTES);

/// A copy of `size` bytes at `data`.
std::unique_ptr<byte_source> copy_bytes(const void * data, size_t size);

} // namespace gk::gguf
