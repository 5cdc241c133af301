// Medians of repeated timings for the bench programs: median_of a list, and the median wall
// time of repeated calls (presk-native-ablation, presk-sgemm-peer, exp-bench, gk-bench).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

/// The median of `v` (not empty); of an even count, the mean of the two middle values.
inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/// The median, in microseconds, of `repeat` (>= 1) timed calls of `call`, after one untimed call
/// that faults the output's pages in and warms the caches; of an even count, the mean of the
/// two middle times.
template <class F>
double median_call_us(int64_t repeat, F&& call) {
    call();
    std::vector<double> us;
    for (int64_t r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    return median_of(std::move(us));
}
