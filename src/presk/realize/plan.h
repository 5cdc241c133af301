// Realization plans (--plan @FILE.json): a layout point per nest, keyed by site
// (../shared/seeds/presk-native.txt, "Contractions: one builder, a layout space" and "A split
// at a depth"; docs/presk.md, "Plans"). A site is the one realizations key on,
// "<function>/%<let>", the root of a fusion group.
#pragma once
#include <map>
#include <string>

#include "kernel/layout.h"

namespace presk::realize {

/// A plan: the realization it was made for (empty when it names none) and a point per site.
/// A point's lanes are 0 when the plan does not state them (the run's width where the point
/// admits it, else 1).
struct Plan {
    std::string realization;
    std::map<std::string, kernel::Layout> layout;
    std::string spelling;  // "@FILE", for messages
};

/// Parses `@FILE`: a JSON object with the keys "realization" (a realization's spelling) and
/// "layout" (an object of sites, each an object with any of "form" ("tiled" or "row-wise"),
/// "tile" ([m_i, n_j]), "k_block" (32, 128 or "none"), "order", "lanes" (1, 2 or 4), "pack"
/// (a boolean), "passes" (2 or 3) and "split" ({"depth": d, "workers": p} or "none")). Throws
/// presk::Error "E7002: plan @FILE: ..." naming the key and value on an unreadable file,
/// malformed JSON, an unknown key, a value of the wrong kind, a tile or k-block outside the
/// space, an order that is not a permutation, a row-wise form with a tile. What needs the
/// program (the site, the nest's shapes, the split's loop, the worker count) the executor
/// checks (realize/executor.h).
Plan parse_plan(const std::string& arg);
/// The same from JSON text; `origin` names it in messages.
Plan parse_plan_json(const std::string& text, const std::string& origin);

} // namespace presk::realize
