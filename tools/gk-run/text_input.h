// text_input.h - the text inputs of gk-run besides the model: prompt files (-f, -sysf)
// and standard input in chat mode, refused with a message when they cannot be text (a
// directory, an unreadable file, a stream without end such as /dev/zero).
#pragma once

#include <cstddef>
#include <string>

namespace gk_run_tool {

/** The most bytes a prompt file may hold (a prompt that long fills any context many times). */
inline constexpr size_t k_max_text_input = size_t(64) << 20;

/** Read all of `path` into `out`. false and a message naming `what` ("prompt file") and
 *  the path when it is a directory, cannot be opened or read, or holds more than
 *  k_max_text_input bytes. A pipe or device is read as it arrives (the cap bounds it). */
bool read_text_input(const std::string & path, const char * what, std::string & out, std::string * error);

/** Whether standard input can be read as text: false and a message when it is a
 *  directory (reading it fails at once) or closed. */
bool stdin_is_text(std::string * error);

} // namespace gk_run_tool
