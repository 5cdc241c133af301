// presk plan: a point per nest chosen by the layout cost model (kernel/cost.h), written as the
// plan --plan reads (realize/plan.h; docs/presk.md, "presk plan").
#pragma once
#include <string>
#include <vector>

#include "kernel/cost.h"
#include "realize/executor.h"

namespace presk::realize {

/// One nest's choice: its site, the point, and the model's figures for it and for the default.
struct Choice {
    std::string site;
    kernel::Layout point;
    kernel::Cost cost, default_cost;
};

/// For each nest of `p`'s entry (Executor::nests) in realization `r`: every candidate of its
/// space (kernel::layout_space, lanes 1 or `width(type)`; with the bias epilogue where a bias
/// add reads the nest, the points without it priced with the add's kernel) the builder admits, each split at
/// the outermost parallel depth whose loop has at least `threads` iterations over `threads`
/// workers when `threads` > 1, the one of fewest predicted cycles (kernel/cost.h; the first
/// of equal ones, so the default where nothing is better), on a machine of `registers` vector
/// registers. Throws presk::Error as the executor does on a realization it refuses.
std::vector<Choice> choose_plan(const core::Program& p, const Realization& r, int threads, int registers,
                                int (*width)(kernel::DType));

/// The plan of `choices` as JSON text (realize/plan.h's format), made for `realization`.
std::string plan_json(const std::vector<Choice>& choices, const std::string& realization);

} // namespace presk::realize
