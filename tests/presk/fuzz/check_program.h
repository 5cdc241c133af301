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

/// Options that size every identifier of `text` 2 (up to 256 names), as `--dim k=2` would:
/// then the entries' dims and named axes are bound and the checker goes past them.
inline presk::CheckOptions every_name_two(const std::string& text) {
    presk::CheckOptions o;
    auto is_start = [](char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    auto is_part = [&](char c) { return is_start(c) || (c >= '0' && c <= '9'); };
    for (size_t i = 0; i < text.size() && o.dims.size() < 256;) {
        if (!is_start(text[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && is_part(text[j])) ++j;
        o.dims[text.substr(i, j - i)] = 2;
        i = j;
    }
    return o;
}

/// Parses `size` bytes of program text; on success checks its first entries (up to 8),
/// once with no --dim or --const given and once with every_name_two, and prints every
/// accepted one as PSK-Core.
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
        for (const presk::CheckOptions& opts : {presk::CheckOptions{}, every_name_two(src.text)}) {
            try {
                sink = presk::core::to_string(presk::check(file, entry, opts)).size();
            } catch (const presk::Error& e) {
                sink = presk::format_error(src, e).size();
            }
        }
    }
}

} // namespace presk_check
