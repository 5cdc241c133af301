// cursor.h - a bounds-checked little-endian reader over the bytes of a file.
// Every read checks the bytes that remain first and refuses (failure.h) with the
// offset and what was being read; nothing is read past `size`.
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

class cursor {
public:
    cursor(const uint8_t * data, uint64_t size) : data_(data), size_(size) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t remaining() const { return size_ - pos_; }
    const uint8_t * here() const { return data_ + pos_; }

    /// Refuse unless `n` more bytes remain for `what`.
    void need(uint64_t n, const char * what) const {
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
    uint64_t        pos_ = 0;
};

} // namespace gk::gguf
