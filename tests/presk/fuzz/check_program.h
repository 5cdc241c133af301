// check_program.h - what must hold for any text given to the presk front end, checked by
// the fuzz target (fuzz-presk.cpp) and by the replay of its regressions
// (replay.cpp, ctest presk-fuzz-replay): the parser and the checker either accept the text or
// refuse it with a presk::Error whose message can be formatted; they never crash, hang or
// throw anything else (an uncaught exception aborts the caller, which the fuzzer reports).
#pragma once

#include "core/core.h"
#include "lang/checker.h"
#include "lang/parser.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace presk_check {

inline volatile size_t sink;  // where the printed lengths go, so that the work happens

/// Parses `size` bytes of program text; on success checks its first entries (up to 8,
/// with no --dim or --const given) and prints every accepted one as PSK-Core.
inline void check_program(const uint8_t* data, size_t size) {
    presk::Source src;
    src.path = "fuzz.psk";
    src.text.assign(reinterpret_cast<const char*>(data), size);
    presk::ast::File file;
    try {
        file = presk::parse(src);
    } catch (const presk::Error& e) {
        sink = presk::format_error(src, e).size();
        return;
    }
    size_t checked = 0;
    for (const std::string& entry : presk::list_entries(file)) {
        if (checked++ == 8) break;
        try {
            sink = presk::core::to_string(presk::check(file, entry, {})).size();
        } catch (const presk::Error& e) {
            sink = presk::format_error(src, e).size();
        }
    }
}

} // namespace presk_check
