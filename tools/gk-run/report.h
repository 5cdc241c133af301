// report.h - what gk-run prints to stderr besides errors: the loading progress bar and
// the timing summary.
#pragma once

#include <cstdint>
#include <string>

namespace gk_run_tool {

/** A progress bar on stderr, redrawn in place when the percentage moves. */
class progress_bar {
public:
    explicit progress_bar(std::string label) : label_(std::move(label)) {}
    void update(uint64_t done, uint64_t total);
    /** End the line (only if something was drawn). */
    void finish();

private:
    std::string label_;
    int         last_percent_ = -1;
};

struct timings {
    double  load_ms     = 0;
    int64_t n_prompt    = 0;   // tokens evaluated as prompts
    double  prompt_ms   = 0;
    int64_t n_generated = 0;   // tokens sampled after the prompts (the last of -n N is not evaluated)
    double  generate_ms = 0;   // sampling and evaluating them
};

/** The summary: load time, prompt and generation tokens with tokens/s, peak memory. */
void print_timings(const timings & t);

/** Peak resident memory of the process in bytes. */
uint64_t peak_rss_bytes();

} // namespace gk_run_tool
