// presk train (docs/presk.md, "presk train"): the training loop on the host over one backend.
// Each step draws its batch (train/pipeline.h), runs the objective and its gradient entry at
// the parameters, takes the learning rate of the schedule (train/schedule.h) and runs the AdamW
// step, compiled as a PSK entry over the parameter tree (examples/adamw.psk's update), on the
// same backend; checkpoints (train/checkpoint.h) resume to the bits of an uninterrupted run.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "lang/checker.h"
#include "lang/source.h"
#include "realize/plan.h"
#include "train/schedule.h"

namespace presk::train {

struct TrainOptions {
    std::string entry;   // the gradient entry M{dims}.F_grad (empty: the file's one *.loss_grad)
    std::string backend = "native";  // interp | kernel | native | cc
    std::string realize = "f64";     // kernel backends: f64 | f32 | bf16 | @FILE.json
    long bits = 256;                 // interp's precision, and the draw of θ₀
    int64_t steps = 0;               // the run's length (the schedule's too)
    uint64_t seed = 0;               // θ₀, the batches, dropout
    int64_t batch = 0;               // the size of the inputs' first (named) axis; 0: --dim's
    std::string data;                // a token file (empty: synthesised inputs)
    double lr = 0.001;
    int64_t warmup = 0;
    int64_t log_every = 1;           // a log line every K steps (and at the last)
    std::string checkpoint;          // save into DIR/step-<n>
    int64_t save_every = 0;          // ... every K steps (0: at the last step only)
    std::string resume;              // a checkpoint folder to continue from
    int threads = 1;                 // workers of native and cc kernels
    realize::Plan plan;              // --plan @FILE: a layout point per site of the gradient entry
};

/// The AdamW module presk train appends to a file whose model is module `m`: module
/// presk_train_adamw with m's dims and fn step(p, g, m, s, t, lr) over params(m{dims}), the
/// update of examples/adamw.psk (β1 0.9, β2 0.999, ε 1e-8, weight decay 0.01; the second
/// moment kept as its square root).
std::string adamw_module(const ast::Module& m);

/// Trains the model of `src` as the options say, writing a line `step N  epoch E  loss X  lr Y
/// |g| Z` per logged step to `log`. `dims` holds --dim and --const (checked strictly against
/// the gradient entry). Appends the AdamW module to src.text, so that an error's position in
/// the file is formatted from `src` as before. Throws presk::Error for bad options (named), an
/// entry that is not an objective's gradient, a token file that does not fit, a checkpoint
/// that is corrupt, truncated or of another run (what differs), and a runtime failure.
void train(Source& src, const TrainOptions& o, const CheckOptions& dims, std::ostream& log);

} // namespace presk::train
