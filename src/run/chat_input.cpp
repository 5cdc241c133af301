// chat_input.cpp - see chat_input.h.
#include "chat_input.h"

namespace gk::run {

namespace {

/** std::getline, stopping (false, `too_long` set) once `text` and the line pass `max_bytes`. */
bool read_line(std::istream & in, const std::string & text, size_t max_bytes, std::string & line, bool & too_long) {
    line.clear();
    bool got = false;
    for (int c; (c = in.get()) != std::char_traits<char>::eof();) {
        got = true;
        if (c == '\n') return true;
        if (text.size() + line.size() >= max_bytes) {
            too_long = true;
            return false;
        }
        line += static_cast<char>(c);
    }
    return got;
}

} // namespace

input_status read_user_input(std::istream & in, bool multiline, size_t max_bytes, std::string & text) {
    text.clear();
    bool read_any = false, too_long = false;
    for (std::string line; read_line(in, text, max_bytes, line, too_long);) {
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
    if (too_long) return input_status::too_long;
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
