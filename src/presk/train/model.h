// The backend seam of presk train: the state of a run (parameters θ, AdamW's moments m and s,
// the last gradient g) held in one backend's values, and the three entries run on it: the
// objective, its gradient and the AdamW step. The reference interpreter holds MPFR numbers;
// the kernel backends (kernel, native, cc) hold buffers in the realization's types, so that
// their runs compute the same bits.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/core.h"
#include "realize/plan.h"
#include "realize/realization.h"
#include "ref/values.h"
#include "train/checkpoint.h"

namespace presk::train {

/// The three programs of a run: the objective (returns []), its gradient (returns the
/// parameter tree) and the AdamW step over that tree (step(p, g, m, s, t, lr) -> (p, m, s)).
struct Programs {
    core::Program loss, grad, adamw;
};

class Model {
public:
    virtual ~Model() = default;
    /// θ = theta0 (the reference's draw, converted to the backend's values), m = s = 0.
    virtual void start(const ref::Value& theta0) = 0;
    /// The objective at θ on `inputs` (the entry's inputs after its parameters).
    virtual double loss(const std::vector<ref::Value>& inputs) = 0;
    /// g = the gradient at θ on `inputs`; returns its Euclidean norm (every element widened to
    /// double, squares summed in tree order, then each leaf's elements in order).
    virtual double gradient(const std::vector<ref::Value>& inputs) = 0;
    /// The AdamW step number t (1-based) with learning rate lr on θ, m, s and g.
    virtual void update(int64_t t, double lr) = 0;
    /// θ, m and s as checkpoint tensors ("params.<path>", "m.<path>", "s.<path>").
    virtual std::vector<Blob> save() const = 0;
    /// Sets θ, m and s from a checkpoint's tensors. Throws presk::Error naming a tensor that
    /// is missing, extra, or of another type or size than this run's.
    virtual void load(const std::vector<Blob>& blobs) = 0;
};

/// The reference interpreter at `bits`.
std::unique_ptr<Model> interp_model(const Programs& p, long bits, uint64_t seed);
/// A kernel backend ("kernel", "native", "cc") in realization `r` (for the gradient's sites;
/// the objective and the AdamW step run in its default type) on `threads` workers, the
/// gradient entry's kernels laid out as `plan` says (Executor: E7002 for a point it refuses).
std::unique_ptr<Model> kernel_model(const Programs& p, const std::string& backend, const realize::Realization& r,
                                    uint64_t seed, int threads, const realize::Plan& plan = {});

} // namespace presk::train
