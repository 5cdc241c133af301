// stop_text.cpp - see stop_text.h.
#include "stop_text.h"

#include <algorithm>

namespace gk::run {

StopText::StopText(std::vector<std::string> stops) {
    for (std::string & s : stops) {
        if (s.empty()) continue;
        longest_ = std::max(longest_, s.size());
        stops_.push_back(std::move(s));
    }
}

size_t StopText::find(std::string_view text, size_t from) const {
    size_t best = std::string::npos;
    for (const std::string & s : stops_) {
        // An occurrence ending at or after `from` starts at or after from - (size - 1).
        const size_t start = from + 1 > s.size() ? from + 1 - s.size() : 0;
        const size_t at    = text.find(s, start);
        if (at < best) best = at;
    }
    return best;
}

size_t StopText::stream_end(std::string_view text) const {
    const size_t max_keep = std::min(text.size(), longest_ > 0 ? longest_ - 1 : 0);
    for (size_t keep = max_keep; keep > 0; --keep) {
        const std::string_view tail = text.substr(text.size() - keep);
        for (const std::string & s : stops_) {
            if (s.size() > keep && std::string_view(s).substr(0, keep) == tail) return text.size() - keep;
        }
    }
    return text.size();
}

} // namespace gk::run
