// The learning-rate schedule of presk train: a linear warm-up, then a cosine decay
// (docs/presk.md, "presk train").
#pragma once
#include <cstdint>

namespace presk::train {

struct Schedule {
    double lr = 0.001;    // the peak learning rate
    int64_t warmup = 0;   // steps of linear warm-up, 0..steps
    int64_t steps = 1;    // the run's length, at least 1
};

/// The learning rate of step n (1..s.steps): lr·n/warmup while n <= warmup, then
/// lr·(1 + cos(π·(n − warmup − 1)/(steps − warmup)))/2, which is lr at the first step after the
/// warm-up and falls towards 0 without reaching it at the last step. Computed in double.
double learning_rate(const Schedule& s, int64_t n);

} // namespace presk::train
