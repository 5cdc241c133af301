// stop_text.h - stop strings for generated text (OpenAI's `stop`): generation ends where
// the text first contains one of them, and the text is cut in front of it.
//
// While a reply streams, the text after the last safe point may still turn into a stop
// string, so it is held back: stream_end() is how much of the text can be sent now (the
// text minus its longest end that begins some stop string). The texts are UTF-8 and so
// are the stop strings, so the cuts fall between characters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gk::run {

class StopText {
public:
    /** The stop strings (empty ones are ignored). */
    explicit StopText(std::vector<std::string> stops = {});

    /** Where the first stop string in `text` begins, looking only at occurrences that end
     *  at or after `from` (the length of the text already checked), or std::string::npos. */
    size_t find(std::string_view text, size_t from) const;

    /** How many bytes of `text` (in which no stop string occurs) can be sent: all but the
     *  longest end of it that is the beginning of a stop string. */
    size_t stream_end(std::string_view text) const;

private:
    std::vector<std::string> stops_;
    size_t                   longest_ = 0;
};

} // namespace gk::run
