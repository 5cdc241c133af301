// UTF-8 checking and the GPT-2 byte-level alphabet.
#include "tokenizer_utf8.h"

#include <array>

namespace gk::run::utf8 {

void append(uint32_t cp, std::string & out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

size_t sequence_length(unsigned char lead) {
    if (lead < 0xC0) return 1;
    if (lead < 0xE0) return 2;
    if (lead < 0xF0) return 3;
    return lead < 0xF8 ? 4 : 1;
}

namespace {

// Well-formed byte sequences (Unicode table 3-7): the length a lead byte announces and
// the range its second byte must fall in; continuation bytes after that are 80..BF.
struct lead_rule {
    size_t        length;  // 0: not a lead byte
    unsigned char lo, hi;  // range of the second byte
};

lead_rule rule_of(unsigned char b) {
    if (b < 0x80) return {1, 0, 0};
    if (b < 0xC2) return {0, 0, 0};
    if (b < 0xE0) return {2, 0x80, 0xBF};
    if (b == 0xE0) return {3, 0xA0, 0xBF};
    if (b == 0xED) return {3, 0x80, 0x9F};
    if (b < 0xF0) return {3, 0x80, 0xBF};
    if (b == 0xF0) return {4, 0x90, 0xBF};
    if (b < 0xF4) return {4, 0x80, 0xBF};
    if (b == 0xF4) return {4, 0x80, 0x8F};
    return {0, 0, 0};
}

} // namespace

size_t append_valid(std::string_view in, std::string & out, bool keep_tail) {
    size_t i = 0;
    while (i < in.size()) {
        const auto b = static_cast<unsigned char>(in[i]);
        const lead_rule r = rule_of(b);
        if (r.length == 1) {
            out += static_cast<char>(b);
            ++i;
            continue;
        }
        if (r.length == 0) {
            append(k_replacement, out);
            ++i;
            continue;
        }
        // how many bytes of the sequence are well-formed
        size_t good = 1;
        while (good < r.length && i + good < in.size()) {
            const auto c = static_cast<unsigned char>(in[i + good]);
            const bool ok = good == 1 ? (c >= r.lo && c <= r.hi) : (c >= 0x80 && c <= 0xBF);
            if (!ok) break;
            ++good;
        }
        if (good == r.length) {
            out.append(in.substr(i, good));
        } else if (i + good == in.size() && keep_tail) {
            return good;
        } else {
            append(k_replacement, out);
        }
        i += good;
    }
    return 0;
}

uint32_t next(std::string_view s, size_t & pos) {
    const auto b = static_cast<unsigned char>(s[pos]);
    const size_t n = sequence_length(b);
    if (n == 1 || pos + n > s.size()) {
        ++pos;
        return b < 0x80 ? b : k_replacement;
    }
    uint32_t cp = b & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
        cp = (cp << 6) | (static_cast<unsigned char>(s[pos + k]) & 0x3F);
    }
    pos += n;
    return cp;
}

namespace {

struct byte_alphabet {
    std::array<std::string, 256> text;   // UTF-8 of the stand-in of each byte
    std::array<int16_t, 324> byte_of;    // stand-in code point -> byte, or -1

    byte_alphabet() {
        byte_of.fill(-1);
        uint32_t next_extra = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            const uint32_t cp = printable ? static_cast<uint32_t>(b) : next_extra++;
            append(cp, text[b]);
            byte_of[cp] = static_cast<int16_t>(b);
        }
    }
};

const byte_alphabet & alphabet() {
    static const byte_alphabet a;
    return a;
}

} // namespace

std::string_view byte_to_char(uint8_t b) {
    return alphabet().text[b];
}

int char_to_byte(uint32_t cp) {
    const auto & a = alphabet();
    return cp < a.byte_of.size() ? a.byte_of[cp] : -1;
}

} // namespace gk::run::utf8
