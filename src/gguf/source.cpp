// source.cpp - the file's bytes: mmap, with a checked read as the fallback (source.h).
#include "source.h"

#include "context.h"

#include <algorithm>
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

// Read the file from the descriptor, checking it as it arrives: the metadata is parsed
// each time the bytes read have doubled, so that an input that is not GGUF is refused
// after its first bytes (not after all of them), and once the metadata is complete only
// the bytes its tensors need are read. Nothing past `limit` bytes is read: for a regular
// file that is its size, for a pipe or device GK_GGUF_MAX_STREAM_BYTES (or the limit of
// open_file), beyond which an input whose metadata has not ended is refused.
std::vector<uint8_t> read_checked(int fd, const char * path, uint64_t limit, bool regular) {
    std::vector<uint8_t> bytes;
    uint64_t used   = 0;
    uint64_t wanted = 0;  // the bytes the file takes, once its metadata is known
    uint64_t check  = 8;  // parse again when this many bytes are there
    for (;;) {
        const uint64_t target = wanted ? wanted : limit;
        if (used >= target) {
            break;
        }
        if (bytes.size() == used) {
            const uint64_t grown = wanted ? wanted : std::max<uint64_t>(65536, 2 * bytes.size());
            bytes.resize(static_cast<size_t>(std::min(grown, target)));
        }
        const size_t  room = static_cast<size_t>(std::min<uint64_t>(bytes.size(), target) - used);
        const ssize_t got  = ::read(fd, bytes.data() + used, room);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            io_error(path, "read");
        }
        if (got == 0) {
            break;
        }
        used += static_cast<uint64_t>(got);
        if (!wanted && used >= check) {
            wanted = extent_of_prefix(bytes.data(), used, limit);
            check  = 2 * used;
        }
    }
    if (!wanted && used == limit && !regular && extent_of_prefix(bytes.data(), used, limit + 1) == 0) {
        fail_at(limit, "the input is a pipe or device and its GGUF metadata does not end within its first " +
                           std::to_string(limit) + " bytes, the most read from an input that is not a regular file " +
                           "(GK_GGUF_MAX_STREAM_BYTES); save it to a file");
    }
    bytes.resize(static_cast<size_t>(wanted ? std::min(used, wanted) : used));
    return bytes;
}

} // namespace

std::unique_ptr<byte_source> open_file(const char * path, uint64_t stream_limit) {
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
    const bool regular = S_ISREG(st.st_mode) && st.st_size > 0;
    if (regular) {
        void * p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            return std::make_unique<mapped_file>(p, static_cast<uint64_t>(st.st_size));
        }
    }
    const uint64_t limit = regular ? static_cast<uint64_t>(st.st_size) : stream_limit;
    return std::make_unique<buffer>(read_checked(fd, path, limit, regular));
}

std::unique_ptr<byte_source> copy_bytes(const void * data, size_t size) {
    const auto * p = static_cast<const uint8_t *>(data);
    return std::make_unique<buffer>(std::vector<uint8_t>(p, p + size));
}

} // namespace gk::gguf
