// text_input.cpp - see text_input.h.
#include "text_input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace gk_run_tool {

namespace {

struct file_closer {
    void operator()(std::FILE * f) const { std::fclose(f); }
};

} // namespace

bool read_text_input(const std::string & path, const char * what, std::string & out, std::string * error) {
    const auto fail = [&](const std::string & why) {
        if (error) *error = std::string("cannot read ") + what + " '" + path + "': " + why;
        return false;
    };
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return fail(std::strerror(errno));
    if (S_ISDIR(st.st_mode)) return fail("it is a directory");
    std::unique_ptr<std::FILE, file_closer> f(std::fopen(path.c_str(), "rb"));
    if (!f) return fail(std::strerror(errno));
    out.clear();
    char buf[65536];
    for (;;) {
        const size_t n = std::fread(buf, 1, sizeof buf, f.get());
        if (out.size() + n > k_max_text_input) {
            return fail("more than " + std::to_string(k_max_text_input >> 20) + " MiB");
        }
        out.append(buf, n);
        if (n < sizeof buf) break;
    }
    if (std::ferror(f.get())) return fail(std::strerror(errno));
    return true;
}

bool stdin_is_text(std::string * error) {
    struct stat st {};
    if (fstat(STDIN_FILENO, &st) != 0) {
        if (error) *error = std::string("cannot read standard input: ") + std::strerror(errno);
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        if (error) *error = "cannot read standard input: it is a directory";
        return false;
    }
    return true;
}

} // namespace gk_run_tool
