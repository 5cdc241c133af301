// chat_input.cpp - see chat_input.h.
#include "chat_input.h"

namespace gk::run {

input_status read_user_input(std::istream & in, bool multiline, std::string & text) {
    text.clear();
    bool read_any = false;
    for (std::string line; std::getline(in, line);) {
        read_any  = true;
        bool more = multiline;
        if (!line.empty() && line.back() == '/') {
            line.pop_back();
            text += line;
            return input_status::ok;
        }
        if (!line.empty() && line.back() == '\\') {
            line.pop_back();
            more = !more;
        }
        text += line;
        text += '\n';
        if (!more) return input_status::ok;
    }
    if (in.bad()) return input_status::error;
    return read_any ? input_status::ok : input_status::end;
}

const std::string * ends_with_reverse_prompt(std::string_view text, const std::vector<std::string> & prompts) {
    for (const std::string & p : prompts) {
        if (!p.empty() && text.size() >= p.size() && text.substr(text.size() - p.size()) == p) return &p;
    }
    return nullptr;
}

} // namespace gk::run
