#include "train/schedule.h"

#include <cmath>
#include <numbers>

namespace presk::train {

double learning_rate(const Schedule& s, int64_t n) {
    if (n <= s.warmup) return s.lr * (double)n / (double)s.warmup;
    const double progress = (double)(n - s.warmup - 1) / (double)(s.steps - s.warmup);
    return s.lr * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

} // namespace presk::train
