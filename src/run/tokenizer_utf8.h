// tokenizer_utf8.h - UTF-8 checking and the GPT-2 byte <-> character map (internal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gk::run::utf8 {

inline constexpr uint32_t k_replacement = 0xFFFD;

/** Append code point `cp` (<= 0x10FFFF) to `out` as UTF-8. */
void append(uint32_t cp, std::string & out);

/** Bytes of the sequence that lead byte `lead` starts (1 for a stray byte); at most 4. */
size_t sequence_length(unsigned char lead);

/** Append `in` to `out` as well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or
 *  values past U+10FFFF): each maximal ill-formed subsequence becomes one U+FFFD, as the
 *  Unicode standard recommends. When `keep_tail` is true, a sequence that is well-formed
 *  so far but cut short by the end of `in` is not replaced; the number of its bytes is
 *  returned (they are not appended). Otherwise returns 0. */
size_t append_valid(std::string_view in, std::string & out, bool keep_tail);

/** The code point at `pos` of well-formed UTF-8 `s`; advances `pos` past it. */
uint32_t next(std::string_view s, size_t & pos);

/** GPT-2's byte-level alphabet: the printable stand-in character of byte `b` (bytes
 *  0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF stand for themselves; the other 68 bytes take
 *  U+0100, U+0101, ... in byte order), as UTF-8. */
std::string_view byte_to_char(uint8_t b);

/** The byte that character `cp` stands for in GPT-2's alphabet, or -1. */
int char_to_byte(uint32_t cp);

} // namespace gk::run::utf8
