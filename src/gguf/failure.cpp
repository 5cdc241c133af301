// failure.cpp - refusal helpers (see failure.h).
#include "failure.h"

#include <cstdio>

namespace gk::gguf {

void fail_at(uint64_t offset, const std::string & what) {
    throw failure{GK_GGUF_ERR_FORMAT, offset, what + " (at byte " + std::to_string(offset) + ")"};
}

void fail(gk_gguf_status status, const std::string & what) {
    throw failure{status, UINT64_MAX, what};
}

std::string quoted(std::string_view s) {
    constexpr size_t k_max = 80;
    std::string out = "'";
    for (size_t i = 0; i < s.size() && i < k_max; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'') {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            out += buf;
        }
    }
    if (s.size() > k_max) {
        out += "...";
    }
    return out + "'";
}

} // namespace gk::gguf
