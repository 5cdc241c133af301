// windows.h - which of a row of strided windows hold a position: what the gathering
// kernels (transposed convolutions, pool_2d_back) use to turn a scatter into a gather.
#pragma once

#include "../kernel.h"

#include <cstdint>

namespace gk::cpu {

/// The windows o in [0, n), window o covering [o*s, o*s + k) (s >= 1, k >= 1), that hold
/// position t, as the range [begin, end) (empty when none does).
inline row_range windows_holding(int64_t t, int64_t k, int64_t s, int64_t n) {
    if (t < 0) {
        return {0, 0};
    }
    const int64_t lo = t >= k ? (t - k + s) / s : 0;
    const int64_t hi = t / s + 1 < n ? t / s + 1 : n;
    return {lo, hi < lo ? lo : hi};
}

}  // namespace gk::cpu
