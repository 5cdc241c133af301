// source.h - the bytes of a GGUF file: memory-mapped, or read into memory where
// mapping is not possible (an empty file, a pipe, a file system without mmap).
#pragma once

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
std::unique_ptr<byte_source> open_file(const char * path);

/// A copy of `size` bytes at `data`.
std::unique_ptr<byte_source> copy_bytes(const void * data, size_t size);

} // namespace gk::gguf
