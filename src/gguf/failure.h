// failure.h - how src/gguf reports a refusal: a `failure` is thrown inside the
// library and turned into a gk_gguf_error at the C API boundary (api.cpp), so no
// exception ever leaves the library.
#pragma once

#include "gk/gguf.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace gk::gguf {

struct failure {
    gk_gguf_status status;
    uint64_t       offset;   // byte offset in the file, UINT64_MAX when none
    std::string    message;
};

/// A malformed file: `what` is wrong at byte `offset` (appended to the message).
[[noreturn]] void fail_at(uint64_t offset, const std::string & what);

/// Any other refusal (bad argument, I/O, missing codec).
[[noreturn]] void fail(gk_gguf_status status, const std::string & what);

/// `s` in single quotes, non-printable bytes as \xNN, cut to 80 bytes with "...".
std::string quoted(std::string_view s);

} // namespace gk::gguf
