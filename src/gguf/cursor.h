// cursor.h - a bounds-checked little-endian reader over the bytes of a file.
// Every read checks the bytes that remain first and refuses (failure.h) with the
// offset and what was being read; nothing is read past `size`.
//
// A cursor may also walk the first bytes of an input still arriving (a pipe): then
// counts and lengths are bounded by the most the input may hold (`limit`), and a read
// past the bytes there so far throws `more_bytes` instead of refusing the file.
#pragma once

#include "failure.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace gk::gguf {

static_assert(std::endian::native == std::endian::little, "gk reads GGUF (little-endian) on little-endian hosts only");

/// Thrown by a cursor over a prefix when a read needs bytes that have not arrived yet.
struct more_bytes {};

class cursor {
public:
    /// The whole file: `size` bytes at `data`.
    cursor(const uint8_t * data, uint64_t size) : data_(data), size_(size), limit_(size) {}
    /// The first `size` bytes of an input that may hold up to `limit` (>= size) bytes.
    cursor(const uint8_t * data, uint64_t size, uint64_t limit) : data_(data), size_(size), limit_(limit) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return size_; }
    /// The most bytes that can follow the position: the rest of the file, or of the
    /// limit for a prefix. Counts and lengths are checked against this.
    uint64_t remaining() const { return limit_ - pos_; }
    const uint8_t * here() const { return data_ + pos_; }

    /// Refuse unless `n` more bytes remain for `what` (a prefix: wait for them).
    void need(uint64_t n, const char * what) const {
        if (n > size_ - pos_ && n <= remaining()) {
            throw more_bytes{};
        }
        if (n > remaining()) {
            fail_at(pos_, std::string("file ends inside ") + what + ": " + std::to_string(n) +
                              " bytes needed, " + std::to_string(remaining()) + " remain");
        }
    }

    /// A fixed-size little-endian number.
    template <class T>
    T read(const char * what) {
        static_assert(std::is_trivially_copyable_v<T>);
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    /// `n` raw bytes (checked first).
    std::string_view bytes(uint64_t n, const char * what) {
        need(n, what);
        std::string_view s(reinterpret_cast<const char *>(data_ + pos_), static_cast<size_t>(n));
        pos_ += n;
        return s;
    }

    /// A GGUF string: u64 length, then that many bytes. The length is checked against
    /// the bytes that remain before anything is allocated.
    std::string_view string(const char * what) {
        const uint64_t at  = pos_;
        const uint64_t len = read<uint64_t>(what);
        if (len > remaining()) {
            fail_at(at, std::string("length ") + std::to_string(len) + " of " + what + " exceeds the " +
                            std::to_string(remaining()) + " bytes that remain");
        }
        return bytes(len, what);
    }

private:
    const uint8_t * data_;
    uint64_t        size_;
    uint64_t        limit_;
    uint64_t        pos_ = 0;
};

} // namespace gk::gguf
