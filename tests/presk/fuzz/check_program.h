// check_program.h - what must hold for any text given to the presk front end, checked by
// the fuzz target (fuzz-presk.cpp) and by the replay of its regressions
// (replay.cpp, ctest presk-fuzz-replay): the parser and the checker either accept the text or
// refuse it with a presk::Error whose message can be formatted; they never crash, hang or
// throw anything else (an uncaught exception aborts the caller, which the fuzzer reports).
#pragma once

#include "core/core.h"
#include "lang/checker.h"
#include "lang/parser.h"

#include <algorithm>
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

/// The generator of deep and long programs: a text whose first line is `# repeat N` (N up to
/// 200 000) stands for the rest with every `[[unit]]` span written N times, `{i}` in a unit
/// being the copy's number from 1 and `{i-1}` the one before it. So a seed of a few lines is a
/// sum of 100 000 terms, 4 000 chained lets or 3 000 nested calls, which the input size limit
/// (16 KiB) would not hold written out; the fuzzer mutates N and the units. Other text is
/// itself.
inline std::string expand(const std::string& text) {
    static const std::string head = "# repeat ";
    if (text.rfind(head, 0) != 0) return text;
    size_t eol = text.find('\n');
    if (eol == std::string::npos) return text;
    const std::string num = text.substr(head.size(), eol - head.size());
    if (num.empty() || num.size() > 6 || num.find_first_not_of("0123456789") != std::string::npos) return text;
    const size_t n = std::min<size_t>(std::stoul(num), 200000);
    std::string out;
    for (size_t pos = eol + 1; pos < text.size();) {
        size_t open = text.find("[[", pos), close = open == std::string::npos ? open : text.find("]]", open + 2);
        if (close == std::string::npos) {
            out += text.substr(pos);
            break;
        }
        out += text.substr(pos, open - pos);
        const std::string unit = text.substr(open + 2, close - open - 2);
        for (size_t i = 1; i <= n && out.size() < (size_t(8) << 20); ++i) {
            std::string u = unit;
            for (const auto& [key, v] : {std::pair<std::string, size_t>{"{i-1}", i - 1}, {"{i}", i}})
                for (size_t at; (at = u.find(key)) != std::string::npos;) u.replace(at, key.size(), std::to_string(v));
            out += u;
        }
        pos = close + 2;
    }
    return out;
}

/// Parses `size` bytes of program text (expanded by `expand`); on success checks its first
/// entries (up to 8), once with no --dim or --const given and once with every_name_two, and
/// prints every accepted one as PSK-Core.
inline void check_program(const uint8_t* data, size_t size) {
    presk::Source src;
    src.path = "fuzz.psk";
    src.text = expand(std::string(reinterpret_cast<const char*>(data), size));
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
