// report.cpp - see report.h.
#include "report.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace gk_run_tool {

void progress_bar::update(uint64_t done, uint64_t total) {
    constexpr int k_width = 40;
    // Drawn on a terminal only, at every percent: in a log or a pipe, stderr keeps to the
    // messages (an error stays one line).
    static const bool on_terminal = isatty(STDERR_FILENO);
    if (!on_terminal) return;
    constexpr int step    = 1;
    const int        percent = total ? static_cast<int>(done * 100 / total) / step * step : 100;
    if (percent == last_percent_) return;
    last_percent_ = percent;
    const int filled = percent * k_width / 100;
    std::fprintf(stderr, "\r%s [%.*s%*s] %3d%%", label_.c_str(), filled, "========================================",
                 k_width - filled, "", percent);
    std::fflush(stderr);
}

void progress_bar::finish() {
    if (last_percent_ >= 0) std::fprintf(stderr, "\n");
}

uint64_t peak_rss_bytes() {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

void print_timings(const timings & t) {
    const auto rate = [](int64_t n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; };
    std::fprintf(stderr, "\ngk-run: load        %10.2f ms\n", t.load_ms);
    std::fprintf(stderr, "gk-run: prompt      %10.2f ms / %5lld tokens (%8.2f tokens/s)\n", t.prompt_ms,
                 static_cast<long long>(t.n_prompt), rate(t.n_prompt, t.prompt_ms));
    std::fprintf(stderr, "gk-run: generation  %10.2f ms / %5lld tokens (%8.2f tokens/s)\n", t.generate_ms,
                 static_cast<long long>(t.n_generated), rate(t.n_generated, t.generate_ms));
    std::fprintf(stderr, "gk-run: peak memory %10.1f MiB\n", peak_rss_bytes() / (1024.0 * 1024.0));
}

} // namespace gk_run_tool
