// test-gguf-stream: GGUF input that is not a regular file (a pipe, /dev/zero). It is
// checked as its bytes arrive: refused after the first bytes when they cannot begin a
// GGUF file, read only as far as its metadata says the file goes (so a pipe that never
// ends still loads), and refused past a limit when its metadata never ends. The same
// for the three tools that read models (gk-gguf, gk-quantize, gk-run).
//
// Each open and each tool runs in a child process under a 1 GiB address-space limit
// (not under AddressSanitizer, which reserves far more): a reader that read such an
// input to its end would fail there with "out of memory" instead of taking the machine.
#include "gguf/failure.h"
#include "gguf/source.h"
#include "gguf_bytes.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool k_asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool k_asan = true;
#else
constexpr bool k_asan = false;
#endif
#else
constexpr bool k_asan = false;
#endif

const fs::path k_model = fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf";

fs::path scratch() {
    static const fs::path d = [] {
        auto p = fs::temp_directory_path() / ("gguf-stream-" + std::to_string(getpid()));
        fs::create_directories(p);
        return p;
    }();
    return d;
}

std::string slurp(const fs::path & p) {
    std::ifstream      f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void limit_memory() {
    if (!k_asan) {
        const rlimit lim{rlim_t(1) << 30, rlim_t(1) << 30};
        setrlimit(RLIMIT_AS, &lim);
    }
}

struct outcome {
    int         exit_code = -1;  // -1: killed by a signal
    std::string out, err;
};

// `body` in a child process under the memory limit; what it writes to stdout and stderr
// and its exit status come back.
// `close_fd` (when >= 0) is closed in the child first: the write end of a pipe_feed.
outcome in_child(const std::function<int()> & body, int close_fd = -1) {
    static int n = 0;
    const fs::path out = scratch() / ("out" + std::to_string(n));
    const fs::path err = scratch() / ("err" + std::to_string(n++));
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        if (close_fd >= 0) close(close_fd);
        const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0) _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        limit_memory();
        const int rc = body();
        std::fflush(nullptr);
        _exit(rc);
    }
    outcome r;
    int     status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

// gk_gguf_open(path) in a child: exit 0 and "tensors N" on stdout when accepted, exit 3
// and the message on stderr when refused.
outcome open_in_child(const std::string & path, int close_fd = -1) {
    return in_child([&] {
        gk_gguf_error err{};
        gk_gguf *     g = gk_gguf_open(path.c_str(), &err);
        if (!g) {
            std::fprintf(stderr, "%s\n", err.message);
            return 3;
        }
        std::printf("tensors %lld\n", static_cast<long long>(gk_gguf_tensor_count(g)));
        gk_gguf_free(g);
        return 0;
    }, close_fd);
}

// Run a program; stdin from `in` (/dev/null when empty).
outcome run_program(const std::vector<std::string> & args, const std::string & in = "", int close_fd = -1) {
    return in_child([&] {
        const int i = open(in.empty() ? "/dev/null" : in.c_str(), O_RDONLY);
        if (i < 0) return 126;
        dup2(i, 0);
        std::vector<char *> argv;
        for (const std::string & a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        return 127;
    }, close_fd);
}

// A pipe that a child process fills with `head` and `tail` and then, when `endless`, with
// copies of `tail` until every reader has gone (the readers never see an end of file);
// otherwise it ends after them. Read it through path() (/dev/fd/N), here or in a child of
// in_child(). A process, not a thread: in_child() forks, and a fork taken while a thread
// is starting (ASan registers it under its allocator's lock) leaves the child waiting on
// that lock forever; the feeder itself only writes and exits, so it allocates nothing.
class pipe_feed {
public:
    pipe_feed(const std::string & head, const std::string & tail, bool endless) {
        std::signal(SIGPIPE, SIG_IGN);  // inherited: a write to a pipe without readers fails
        if (pipe(fds_) != 0) throw std::runtime_error("pipe failed");
        std::fflush(nullptr);
        writer_ = fork();
        if (writer_ == 0) {
            close(fds_[0]);
            bool ok = put(head) && put(tail);
            while (ok && endless) ok = put(tail);
            _exit(0);
        }
        close(fds_[1]);  // only the feeder writes: readers see the end when it stops
        fds_[1] = -1;
        if (writer_ < 0) throw std::runtime_error("fork failed");
    }
    ~pipe_feed() {
        close(fds_[0]);  // the last reader gone, the feeder's next write fails and it stops
        int status = 0;
        waitpid(writer_, &status, 0);
    }
    pipe_feed(const pipe_feed &) = delete;
    pipe_feed & operator=(const pipe_feed &) = delete;

    std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }
    /// The write end a reader must close: none here (only the feeder holds it).
    int         write_end() const { return fds_[1]; }

private:
    bool put(const std::string & s) const {
        for (size_t done = 0; done < s.size();) {
            const ssize_t n = write(fds_[1], s.data() + done, s.size() - done);
            if (n <= 0) return false;
            done += static_cast<size_t>(n);
        }
        return true;
    }

    int   fds_[2] = {-1, -1};
    pid_t writer_ = -1;
};

std::string as_string(const gguf_test::bytes & b) { return {b.data().begin(), b.data().end()}; }

// "GGUF", version 3, the two counts.
gguf_test::bytes header(uint64_t n_tensors, uint64_t n_kv) {
    gguf_test::bytes b;
    b.raw("GGUF", 4).put<uint32_t>(3).put<uint64_t>(n_tensors).put<uint64_t>(n_kv);
    return b;
}

const std::string k_zeros(65536, '\0');

bool has(const std::string & text, const std::string & part) { return text.find(part) != std::string::npos; }

} // namespace

TEST(GgufStream, DevZeroIsRefusedAtTheMagic) {
    const outcome r = open_in_child("/dev/zero");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "not a GGUF file: magic is '\\x00\\x00\\x00\\x00'")) << r.err;
}

TEST(GgufStream, EndlessZerosAfterAHeaderAreRefusedAtTheFirstBadField) {
    pipe_feed feed(as_string(header(0, 1)), k_zeros, true);  // key 0 of length 0
    const outcome r = open_in_child(feed.path(), feed.write_end());
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "key 0 is empty (at byte 24)")) << r.err;
}

TEST(GgufStream, BadVersionIsRefusedBeforeTheRestArrives) {
    gguf_test::bytes b;
    b.raw("GGUF", 4).put<uint32_t>(7);
    pipe_feed feed(as_string(b), k_zeros, true);
    const outcome r = open_in_child(feed.path(), feed.write_end());
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "unsupported GGUF version 7")) << r.err;
}

TEST(GgufStream, ATensorLargerThanTheLimitIsRefusedBeforeItsData) {
    // One f32 tensor of 2^31 x 2 elements: 16 GiB, past GK_GGUF_MAX_STREAM_BYTES.
    gguf_test::bytes b = header(1, 0);
    b.str("big").put<uint32_t>(2).put<uint64_t>(uint64_t(1) << 31).put<uint64_t>(2).put<uint32_t>(0).put<uint64_t>(0);
    pipe_feed feed(as_string(b), k_zeros, true);
    const outcome r = open_in_child(feed.path(), feed.write_end());
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "data of tensor 'big' (17179869184 bytes at data offset 0) ends past the " +
                               std::to_string(GK_GGUF_MAX_STREAM_BYTES) + " bytes the input may hold"))
        << r.err;
}

TEST(GgufStream, AModelFollowedByEndlessZerosLoads) {
    // The reader stops where the last tensor ends; the pipe is never read to its end.
    pipe_feed feed(slurp(k_model), k_zeros, true);
    const outcome r = open_in_child(feed.path(), feed.write_end());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "tensors 48\n");
}

TEST(GgufStream, AModelThroughAPipeEqualsTheFile) {
    const std::string model = slurp(k_model);
    pipe_feed         feed(model, "", false);
    gk_gguf_error     e1{}, e2{};
    gk_gguf *         piped = gk_gguf_open(feed.path().c_str(), &e1);
    gk_gguf *         file  = gk_gguf_open(k_model.c_str(), &e2);
    ASSERT_TRUE(piped) << e1.message;
    ASSERT_TRUE(file) << e2.message;
    ASSERT_EQ(gk_gguf_tensor_count(piped), gk_gguf_tensor_count(file));
    ASSERT_EQ(gk_gguf_kv_count(piped), gk_gguf_kv_count(file));
    for (int64_t i = 0; i < gk_gguf_tensor_count(file); ++i) {
        ASSERT_EQ(gk_gguf_tensor_size(piped, i), gk_gguf_tensor_size(file, i));
        EXPECT_EQ(0, std::memcmp(gk_gguf_tensor_data(piped, i), gk_gguf_tensor_data(file, i),
                                 gk_gguf_tensor_size(file, i)))
            << gk_gguf_tensor_name(file, i);
    }
    gk_gguf_free(piped);
    gk_gguf_free(file);
}

TEST(GgufStream, ATruncatedPipeIsRefusedAsATruncatedFile) {
    const std::string model = slurp(k_model);
    pipe_feed         feed(model.substr(0, model.size() - 100), "", false);
    const outcome     r = open_in_child(feed.path(), feed.write_end());
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "lies outside the file of " + std::to_string(model.size() - 100) + " bytes")) << r.err;
}

TEST(GgufStream, MetadataThatNeverEndsIsRefusedAtTheLimit) {
    // Valid pairs without end under a 1 MiB limit (the library's is GK_GGUF_MAX_STREAM_BYTES).
    constexpr uint64_t k_limit = 1 << 20;
    gguf_test::bytes   pairs;
    for (int i = 0; i < 200000; ++i) {
        std::string key = "k";
        key += std::to_string(i);
        pairs.str(key).put<uint32_t>(0).put<uint8_t>(1);
    }
    pipe_feed     feed(as_string(header(0, 70000)), as_string(pairs), false);
    const outcome r = in_child([&] {
        try {
            gk::gguf::open_file(feed.path().c_str(), k_limit);
        } catch (const gk::gguf::failure & f) {
            std::fprintf(stderr, "%s\n", f.message.c_str());
            return 3;
        }
        return 0;
    }, feed.write_end());
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "the input is a pipe or device and its GGUF metadata does not end within its first 1048576 "
                           "bytes"))
        << r.err;
}

TEST(GgufStream, ARegularFileIsStillMapped) {
    const outcome r = open_in_child(k_model.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "tensors 48\n");
}

// ---- the tools ---------------------------------------------------------------------------

#if defined(GK_GGUF_TOOL) && defined(GK_QUANTIZE) && defined(GK_RUN)

TEST(GgufStreamTools, DevZeroIsRefusedByEachTool) {
    const std::string out = (scratch() / "q.gguf").string();
    const std::vector<std::vector<std::string>> commands = {
        {GK_GGUF_TOOL, "/dev/zero"},
        {GK_QUANTIZE, "/dev/zero", out, "q8_0"},
        {GK_RUN, "-m", "/dev/zero", "-p", "hello", "-n", "1"},
    };
    for (const auto & cmd : commands) {
        SCOPED_TRACE(cmd[0]);
        const outcome r = run_program(cmd);
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_TRUE(has(r.err, "not a GGUF file: magic is '\\x00\\x00\\x00\\x00'")) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    EXPECT_FALSE(fs::exists(out));
}

TEST(GgufStreamTools, APipeWithoutEndIsReadAsFarAsTheModelGoes) {
    pipe_feed     feed(slurp(k_model), k_zeros, true);
    const outcome r = run_program({GK_GGUF_TOOL, "/dev/stdin"}, feed.path(), feed.write_end());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "GGUF v3, 19 key/value pairs, 48 tensors")) << r.out;
}

#else

TEST(GgufStreamTools, DevZeroIsRefusedByEachTool) { GTEST_SKIP() << "GK-SKIP: gk-gguf, gk-quantize or gk-run not built"; }

#endif
