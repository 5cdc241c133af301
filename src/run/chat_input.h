// chat_input.h - what the user types in gk-run's interactive modes, read as llama-cli
// reads it (common/console.cpp), and the reverse prompts (-r) that hand control back.
//
// Input is read a line at a time. A line normally ends the input; one that ends with
// '\' continues it on the next line (the '\' is dropped). With multiline input (-mli)
// the default is reversed: lines accumulate until one ends with '\' (dropped: that line
// ends the input). In both modes a line that ends with '/' ends the input at once, the
// '/' and the line's newline dropped. Every other line keeps its newline.
#pragma once

#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace gk::run {

enum class input_status {
    ok,     // `text` holds the input (possibly just "\n": an empty line)
    end,    // end of input before anything was read
    error,  // the stream could not be read (a directory, an I/O error)
    too_long,  // the input passed `max_bytes` (a stream without newlines, such as /dev/zero)
};

/** One input of the user from `in` (see the file comment), of at most `max_bytes` bytes.
 *  At the end of the stream an unfinished input is returned as it is. */
input_status read_user_input(std::istream & in, bool multiline, size_t max_bytes, std::string & text);

/** The reverse prompt that `text` ends with, or nullptr. An empty prompt never matches. */
const std::string * ends_with_reverse_prompt(std::string_view text, const std::vector<std::string> & prompts);

} // namespace gk::run
