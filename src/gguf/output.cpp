// output.cpp - where the writer's bytes go: a file (through a temporary file renamed
// over the target, so that a reader of the old file never sees a half-written one,
// and a context mapped from `path` can be written back to `path`; a device or FIFO
// directly) or a buffer.
#include "context.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gk::gguf {
namespace {

class file_sink final : public sink {
public:
    explicit file_sink(FILE * f) : f_(f) {}
    void put(const void * p, size_t n) override {
        if (!errno_ && std::fwrite(p, 1, n, f_) != n) {
            errno_ = errno ? errno : EIO;
        }
    }
    int error() const { return errno_; }  // 0 while every write succeeded

private:
    FILE * f_;
    int    errno_ = 0;
};

class memory_sink final : public sink {
public:
    memory_sink(void * dst, uint64_t size) : dst_(static_cast<uint8_t *>(dst)), room_(size) {}
    void put(const void * p, size_t n) override {
        if (n > room_ - used_) {
            fail(GK_GGUF_ERR_ARG, "output buffer too small");
        }
        std::memcpy(dst_ + used_, p, n);
        used_ += n;
    }

private:
    uint8_t * dst_;
    uint64_t  room_;
    uint64_t  used_ = 0;
};

[[noreturn]] void io_error(const std::string & path, const char * doing, int err) {
    fail(GK_GGUF_ERR_IO, std::string("cannot ") + doing + " " + path + ": " + std::strerror(err));
}

// A new file next to `path` (O_EXCL, so never one that exists), mode 0666 less umask.
int create_temporary(const char * path, std::string & name) {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        name = std::string(path) + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
        const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) {
            return fd;
        }
    }
    return -1;
}

// Write the file to the open descriptor `fd` (named `name` in messages), which is closed;
// on failure `discard` (a temporary file, or "" for none) is removed.
void write_fd(const gk_gguf & ctx, int fd, const std::string & name, const std::string & discard) {
    const auto drop = [&] {
        if (!discard.empty()) {
            unlink(discard.c_str());
        }
    };
    FILE * f = fdopen(fd, "wb");
    if (!f) {
        const int e = errno;
        close(fd);
        drop();
        io_error(name, "open", e);
    }
    file_sink out(f);
    try {
        write_to(ctx, out, false);
    } catch (...) {
        std::fclose(f);
        drop();
        throw;
    }
    int e = out.error();
    if (std::fflush(f) != 0 && !e) {
        e = errno;
    }
    if (std::fclose(f) != 0 && !e) {
        e = errno;
    }
    if (e) {
        drop();
        io_error(name, "write", e);
    }
}

} // namespace

void write_file(const gk_gguf & ctx, const char * path) {
    // A device, FIFO or socket (/dev/stdout, a pipe) is written in place: renaming a
    // file over it would replace the node itself. A symlink is followed, so that the
    // file it names is replaced and the link kept.
    struct stat st {};
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            io_error(path, "open", errno);
        }
        write_fd(ctx, fd, path, "");
        return;
    }
    std::string target = path;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (char * real = realpath(path, nullptr)) {
            target = real;
            std::free(real);
        }
    }
    std::string tmp;
    const int fd = create_temporary(target.c_str(), tmp);
    if (fd < 0) {
        io_error(tmp, "create", errno);
    }
    write_fd(ctx, fd, tmp, tmp);
    if (std::rename(tmp.c_str(), target.c_str()) != 0) {
        const int e = errno;
        unlink(tmp.c_str());
        io_error(target, "rename a temporary file to", e);
    }
}

void write_descriptor(const gk_gguf & ctx, int fd, const char * name) {
    // A duplicate, closed when done, so that `fd` stays open; it shares the position and
    // the flags (O_APPEND included) of `fd`.
    const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) {
        io_error(name, "write", errno);
    }
    write_fd(ctx, copy, name, "");
}

void write_memory(const gk_gguf & ctx, void * dst, uint64_t size, bool meta_only) {
    const uint64_t need = meta_only ? pad_to(meta_bytes(ctx), ctx.alignment) : file_bytes(ctx);
    if (size < need) {
        fail(GK_GGUF_ERR_ARG, "output buffer of " + std::to_string(size) + " bytes is smaller than the " +
                                  std::to_string(need) + (meta_only ? " bytes of the metadata" : " bytes of the file"));
    }
    memory_sink out(dst, size);
    write_to(ctx, out, meta_only);
}

} // namespace gk::gguf
