// Helpers shared by the presk tests: compile a PSK text to Core.
#pragma once
#include <string>

#include "lang/checker.h"
#include "lang/parser.h"

namespace presk::test {

/// Parses and checks `text` at `entry`; on an error returns an empty program and sets `err`
/// to the formatted message.
inline core::Program compile(const std::string& text, const std::string& entry, const CheckOptions& o,
                             std::string* err = nullptr) {
    Source src{"test.psk", text};
    try {
        return check(parse(src), entry, o);
    } catch (const Error& e) {
        if (err) *err = format_error(src, e);
        return {};
    }
}

/// The message of the presk::Error `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace presk::test
