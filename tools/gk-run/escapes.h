// escapes.h - llama.cpp's escape processing of the texts given on its command line
// (-e / --escape, on by default; --no-escape): `\n`, `\r`, `\t`, `\'`, `\"`, `\\` and
// `\xHH` become the characters they name, any other backslash stays as it is.
#pragma once

#include <string>
#include <string_view>

namespace gk_run_tool {

/** `text` with its escapes replaced (see above). A `\x` without two hex digits after it,
 *  a backslash before any other character and a final backslash are kept. */
std::string process_escapes(std::string_view text);

} // namespace gk_run_tool
