// The layout space's entry point (layout.h): a point's name, and the lowering of a node at a
// point, dispatched to the contraction builder (lower_contract.cpp) or the softmax's passes
// (lower_rows.cpp).
#include "kernel/layout.h"

#include "kernel/lower_util.h"
#include "lang/source.h"

namespace presk::kernel {

std::string to_string(const Layout& l) {
    std::string s;
    auto add = [&](const std::string& part) {
        if (!s.empty()) s += ", ";
        s += part;
    };
    if (l.form == Layout::Form::RowWise) add("row-wise");
    if (l.form == Layout::Form::Tiled) add("tile [" + std::to_string(l.tile_m) + ", " + std::to_string(l.tile_n) + "]");
    if (l.kblock) add("k-block " + std::to_string(l.kblock));
    if (!l.order.empty()) add("order " + l.order);
    if (l.lanes > 1) add("lanes " + std::to_string(l.lanes));
    if (l.pack) add("pack");
    if (l.bias) add("bias");
    if (l.passes != 3) add(std::to_string(l.passes) + " passes");
    if (l.split_workers == 1) add("no split");
    if (l.split_workers > 1)
        add("split at depth " + std::to_string(l.split_depth) + " over " + std::to_string(l.split_workers) + " workers");
    return s.empty() ? "default" : s;
}

std::vector<Layout> layout_space(const Node& n, int width, bool bias) {
    std::vector<Layout> out{Layout{}};
    if (bias) out.emplace_back().bias = true;  // the default's tile with the epilogue
    if (n.prim == "softmax") {
        out.emplace_back().passes = 2;
        return out;
    }
    if (!is_contraction(n.prim)) return out;
    out.emplace_back().form = Layout::Form::RowWise;
    std::vector<std::pair<int, int>> tiles{{1, 1}};
    for (int m : kTileRows)
        for (int nj : kTileCols) tiles.emplace_back(m, nj);
    for (auto [m, nj] : tiles)
        for (int kb : {0, 32, 128})
            for (const char* order : kb ? std::vector<const char*>{"IJK", "IKJ", "JIK", "JKI", "KIJ", "KJI"}
                                        : std::vector<const char*>{"IJ", "JI"})
                for (int lanes : {1, width})
                    for (bool pack : {false, true}) {
                        Layout l;
                        l.form = Layout::Form::Tiled;
                        l.tile_m = m;
                        l.tile_n = nj;
                        l.kblock = kb;
                        l.order = order;
                        l.lanes = lanes;
                        l.pack = pack;
                        out.push_back(l);
                        if (!bias) continue;
                        l.bias = true;  // the same point with the epilogue
                        out.push_back(l);
                    }
    return out;
}

bool shapes(const Layout& l) {
    return l.form != Layout::Form::Default || l.tile_m != 1 || l.tile_n != 1 || l.kblock || !l.order.empty() ||
           l.lanes > 1 || l.pack || l.passes != 3 || l.bias;
}

std::vector<Kernel> lower_layout(const Node& n, DType t, const Layout& l) {
    const bool contraction = is_contraction(n.prim);
    Layout rest = l;
    rest.passes = 3;
    if (!contraction && (shapes(rest) || l.lanes != 1))
        throw Error({}, "layout: " + n.prim +
                            " is not a contraction: it has no form, tile, k-block, order, lanes, pack or bias");
    if (n.prim != "softmax" && l.passes != 3) throw Error({}, "layout: passes are a softmax's, not " + n.prim + "'s");
    if (l.passes == 2 && arith_type(t) != t)
        throw Error({}, std::string("layout: a softmax's 2 passes on ") + dtype_name(t) +
                            " storage round the exponentials to it before the division");
    if (l.split_depth < 0 || l.split_workers < 0) throw Error({}, "layout: a split's depth and workers are not negative");
    Kernel plain = lower(n, t);  // the type rule's checks and the default kernel
    std::vector<Kernel> out;
    if (contraction) out = detail::lower_contract(n, t, l);
    else if (n.prim == "softmax") out = {detail::lower_rows(n, t, l.passes)};
    else out = {std::move(plain)};
    for (Kernel& k : out) detail::count_vars(k);
    out.back().split_depth = l.split_depth;
    out.back().split_workers = l.split_workers;
    return out;
}

} // namespace presk::kernel
