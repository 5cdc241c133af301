// source.cpp - the file's bytes: mmap, with a read-whole-file fallback (source.h).
#include "source.h"

#include "failure.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gk::gguf {
namespace {

class mapped_file final : public byte_source {
public:
    mapped_file(void * p, uint64_t n) : p_(p), n_(n) {}
    ~mapped_file() override { munmap(p_, n_); }
    mapped_file(const mapped_file &) = delete;
    mapped_file & operator=(const mapped_file &) = delete;
    const uint8_t * data() const override { return static_cast<const uint8_t *>(p_); }
    uint64_t size() const override { return n_; }

private:
    void *   p_;
    uint64_t n_;
};

class buffer final : public byte_source {
public:
    explicit buffer(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
    const uint8_t * data() const override { return bytes_.data(); }
    uint64_t size() const override { return bytes_.size(); }

private:
    std::vector<uint8_t> bytes_;
};

class fd_guard {
public:
    explicit fd_guard(int fd) : fd_(fd) {}
    ~fd_guard() { close(fd_); }
    fd_guard(const fd_guard &) = delete;
    fd_guard & operator=(const fd_guard &) = delete;

private:
    int fd_;
};

[[noreturn]] void io_error(const char * path, const char * doing) {
    fail(GK_GGUF_ERR_IO, std::string("cannot ") + doing + " " + path + ": " + std::strerror(errno));
}

// Read everything the descriptor yields, growing the buffer as bytes arrive (the
// size of a pipe is not known in advance).
std::vector<uint8_t> read_all(int fd, const char * path) {
    std::vector<uint8_t> bytes;
    size_t used = 0;
    for (;;) {
        if (bytes.size() - used < 65536) {
            bytes.resize(bytes.size() + (bytes.size() > 65536 ? bytes.size() : 65536));
        }
        const ssize_t got = ::read(fd, bytes.data() + used, bytes.size() - used);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            io_error(path, "read");
        }
        if (got == 0) {
            break;
        }
        used += static_cast<size_t>(got);
    }
    bytes.resize(used);
    return bytes;
}

} // namespace

std::unique_ptr<byte_source> open_file(const char * path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        io_error(path, "open");
    }
    fd_guard guard(fd);
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        io_error(path, "stat");
    }
    if (S_ISDIR(st.st_mode)) {
        fail(GK_GGUF_ERR_IO, std::string("cannot read ") + path + ": it is a directory");
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void * p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            return std::make_unique<mapped_file>(p, static_cast<uint64_t>(st.st_size));
        }
    }
    return std::make_unique<buffer>(read_all(fd, path));
}

std::unique_ptr<byte_source> copy_bytes(const void * data, size_t size) {
    const auto * p = static_cast<const uint8_t *>(data);
    return std::make_unique<buffer>(std::vector<uint8_t>(p, p + size));
}

} // namespace gk::gguf
