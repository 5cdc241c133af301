// presk plan (planner.h): the candidates of each nest lowered, priced and the cheapest written.
#include "realize/planner.h"

#include <nlohmann/json.hpp>

#include "kernel/cost.h"
#include "kernel/layout.h"
#include "kernel/llvm_jit.h"
#include "lang/source.h"

namespace presk::realize {
namespace {

/// The point with its split chosen (see choose_plan), lowered; nothing when the builder
/// refuses it.
std::optional<std::pair<kernel::Layout, std::vector<kernel::Kernel>>> lowered(const kernel::Node& n, kernel::DType t,
                                                                             kernel::Layout l, int threads) {
    std::vector<kernel::Kernel> ks;
    try {
        ks = kernel::lower_layout(n, t, l);
    } catch (const Error&) {
        return std::nullopt;
    }
    if (threads < 2) return std::pair{l, ks};
    for (int depth = 0; depth < 4; ++depth) {
        kernel::Kernel k = ks.back();
        k.split_depth = depth;
        k.split_workers = threads;
        const std::optional<kernel::Split> sp = kernel::split_loop(k);
        if (!sp || sp->hi - sp->lo < threads) continue;
        l.split_depth = depth;
        l.split_workers = threads;
        ks.back() = std::move(k);
        break;
    }
    return std::pair{l, ks};
}

} // namespace

std::vector<Choice> choose_plan(const core::Program& p, const Realization& r, int threads, int registers,
                                int (*width)(kernel::DType)) {
    Executor ex(p, r);
    std::vector<Choice> out;
    for (const auto& [site, nest] : ex.nests()) {
        const kernel::Node& n = nest.node;
        const kernel::DType t = nest.dtype;
        const int w = t == kernel::DType::BF16 ? 1 : width(t);
        // Read by a bias add: a point without the epilogue pays for the add's own launch too.
        std::optional<kernel::Kernel> add;
        if (nest.bias_add) add = kernel::lower(*nest.bias_add, t, std::min(w, kernel::native_lanes(t)));
        std::optional<Choice> best;
        for (kernel::Layout l : kernel::layout_space(n, w, add.has_value())) {
            if (l.form == kernel::Layout::Form::Default && n.prim != "softmax")  // a run's default lanes
                l.lanes = std::min(w, kernel::native_lanes(t));
            auto point = lowered(n, t, l, threads);
            if (!point) continue;
            if (add && !l.bias) point->second.push_back(*add);
            const kernel::Cost c = kernel::cost(point->second, registers);
            if (!best) {
                best = Choice{site, point->first, c, c};
                continue;
            }
            if (c.cycles < best->cost.cycles) {
                best->point = point->first;
                best->cost = c;
            }
        }
        if (best) out.push_back(*best);
    }
    return out;
}

std::string plan_json(const std::vector<Choice>& choices, const std::string& realization) {
    nlohmann::ordered_json layout = nlohmann::ordered_json::object();
    for (const Choice& c : choices) {
        const kernel::Layout& l = c.point;
        nlohmann::ordered_json o = nlohmann::ordered_json::object();
        if (l.form == kernel::Layout::Form::RowWise) o["form"] = "row-wise";
        if (l.form == kernel::Layout::Form::Tiled) {
            o["form"] = "tiled";
            o["tile"] = {l.tile_m, l.tile_n};
            if (l.kblock) o["k_block"] = l.kblock;
            if (!l.order.empty()) o["order"] = l.order;
            o["pack"] = l.pack;
            if (l.bias) o["epilogue"] = "bias";
        }
        if (l.form == kernel::Layout::Form::Tiled || l.lanes > 1) o["lanes"] = l.lanes;
        if (l.passes != 3) o["passes"] = l.passes;
        if (l.split_workers > 1) o["split"] = {{"depth", l.split_depth}, {"workers", l.split_workers}};
        else o["split"] = "none";
        layout[c.site] = o;
    }
    nlohmann::ordered_json plan = {{"realization", realization}, {"layout", layout}};
    return plan.dump(2) + "\n";
}

} // namespace presk::realize
