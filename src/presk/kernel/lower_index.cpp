// Gathers, scatters and remaps of indices, following ref/interp.cpp: embed (a gather of
// table rows), scatter_add (its derivative), onehot, split_heads / merge_heads, sum_to,
// broadcast_like, causal_mask, positions, zeros_like.
//
// embed reads row n0 = ids[...] of the table, and scatter_add and onehot write row or column
// n0, so an id outside the table is a load or store outside that axis, which the kernel
// interpreter refuses (the reference's "index out of range"). scatter_add zeroes its output,
// then adds each id's row in the order of the ids, keeping its running sums in the output as
// the reference does (so a bf16 output accumulates in bf16). sum_to is the nest of a sum over
// the axes the target lacks, in one accumulator of the arithmetic type per output element;
// each element adds its terms in the reference's order (increasing index of the operand).
#include "kernel/lower_util.h"

namespace presk::kernel::detail {
namespace {

Kernel lower_embed(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& tab = n.operands[0]->axes;
    const auto& ids = n.operands[1]->axes;
    const std::vector<ExprP> iv = vars(0, ids.size()), rv = vars(ids.size(), tab.size() - 1);
    std::vector<Stmt> each{assign(0, load(1, iv, true))};
    auto row = nest((int)ids.size(), sizes(without(tab, 0)),
                    {store(k.out_buf(), concat(iv, rv), load(0, concat({scalar_var(0, true)}, rv)))});
    each.insert(each.end(), row.begin(), row.end());
    k.body = nest(0, sizes(ids), std::move(each));
    return k;
}

Kernel lower_scatter_add(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& ct = n.operands[0]->axes;
    const auto& ids = n.operands[1]->axes;
    const auto& tab = n.result->axes;
    if (ct != concat(ids, without(tab, 0)))
        fail(n.prim, "the cotangent " + to_string(*n.operands[0]) + " is not of the ids' axes then the table row's: " +
                         to_string(*n.operands[1]) + " and " + to_string(*n.result));
    const int out = k.out_buf();
    k.body = nest(0, sizes(tab), {store(out, vars(0, tab.size()), real(0))});
    const std::vector<ExprP> iv = vars(0, ids.size()), rv = vars(ids.size(), tab.size() - 1);
    const std::vector<ExprP> at = concat({scalar_var(0, true)}, rv);
    std::vector<Stmt> each{assign(0, load(1, iv, true))};
    auto row = nest((int)ids.size(), sizes(without(tab, 0)),
                    {store(out, at, binary("add", load(out, at), load(0, concat(iv, rv))))});
    each.insert(each.end(), row.begin(), row.end());
    auto scatter = nest(0, sizes(ids), std::move(each));
    k.body.insert(k.body.end(), scatter.begin(), scatter.end());
    return k;
}

Kernel lower_onehot(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& ids = n.operands[0]->axes;
    const auto& out = n.result->axes;
    if (n.operands[0]->elem != Elem::Int || out.size() != ids.size() + 1 || without(out, out.size() - 1) != ids)
        fail(n.prim, "the result " + to_string(*n.result) + " is not the indices' axes " + to_string(*n.operands[0]) + " and one more");
    const std::vector<ExprP> iv = vars(0, ids.size());
    const int jv = (int)ids.size();
    k.body = nest(0, sizes(ids), {assign(0, load(0, iv, true)),
                                  for_loop(jv, 0, out.back().size, {store(k.out_buf(), concat(iv, {loop_var(jv)}), real(0))}),
                                  store(k.out_buf(), concat(iv, {scalar_var(0, true)}), real(1))});
    return k;
}

/// split_heads: x[o..., t, h * Dh + j] -> out[o..., h, t, j]; merge_heads the inverse. Loops:
/// the outer axes, then (h, t, j) for a split and (t, h, j) for a merge, so that both walk
/// their output in order.
Kernel lower_heads(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const bool split = n.prim == "split_heads";
    const auto& heads = split ? n.result->axes : n.operands[0]->axes;  // [o..., H, T, Dh]
    const size_t no = heads.size() - 3;
    const int64_t H = heads[no].size, T = heads[no + 1].size, Dh = heads[no + 2].size;
    const std::vector<ExprP> ov = vars(0, no);
    const int first = (int)no;
    const ExprP h = loop_var(first + (split ? 0 : 1)), tv = loop_var(first + (split ? 1 : 0)), j = loop_var(first + 2);
    const std::vector<ExprP> hi = concat(ov, {h, tv, j});
    const std::vector<ExprP> fl = concat(ov, {tv, binary("add", binary("mul", h, integer(Dh)), j)});
    std::vector<int64_t> extent = sizes(std::vector<Axis>(heads.begin(), heads.begin() + (long)no));
    if (split) extent.insert(extent.end(), {H, T, Dh});
    else extent.insert(extent.end(), {T, H, Dh});
    k.body = nest(0, extent, {split ? store(k.out_buf(), hi, load(0, fl)) : store(k.out_buf(), fl, load(0, hi))});
    return k;
}

Kernel lower_sum_to(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& x = n.operands[0]->axes;
    const auto& out = n.result->axes;
    auto pos = align_axes(out, x);
    if (!pos) fail(n.prim, to_string(*n.result) + " does not broadcast to " + to_string(*n.operands[0]));
    std::vector<int> keep(x.size(), -1);
    for (size_t p = 0; p < pos->size(); ++p) keep[(size_t)(*pos)[p]] = (int)p;
    k.body = sum_nest(k.out_buf(), x, keep, out, std::nullopt);
    return k;
}

Kernel lower_broadcast_like(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& out = n.result->axes;
    const std::vector<ExprP> ov = vars(0, out.size());
    k.body = nest(0, sizes(out), {store(k.out_buf(), ov, load(0, aligned(n.prim, n.operands[0]->axes, out, ov)))});
    return k;
}

/// causal_mask: out[i, j] = j <= i + (B - A) over the last two axes [A, B] of the operand.
Kernel lower_causal_mask(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& out = n.result->axes;
    const int64_t shift = out[1].size - out[0].size;
    ExprP allowed = compare("le", loop_var(1), binary("add", loop_var(0), integer(shift)));
    k.body = nest(0, sizes(out), {store(k.out_buf(), vars(0, 2), allowed)});
    return k;
}

Kernel lower_fill(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& out = n.result->axes;
    const std::vector<ExprP> ov = vars(0, out.size());
    k.body = nest(0, sizes(out), {store(k.out_buf(), ov, n.prim == "positions" ? ov[0] : real(0))});
    return k;
}

} // namespace

Kernel lower_index(const Node& n, DType t) {
    if (n.prim == "embed") return lower_embed(n, t);
    if (n.prim == "scatter_add") return lower_scatter_add(n, t);
    if (n.prim == "onehot") return lower_onehot(n, t);
    if (n.prim == "split_heads" || n.prim == "merge_heads") return lower_heads(n, t);
    if (n.prim == "sum_to") return lower_sum_to(n, t);
    if (n.prim == "broadcast_like") return lower_broadcast_like(n, t);
    if (n.prim == "causal_mask") return lower_causal_mask(n, t);
    if (n.prim == "positions" || n.prim == "zeros_like") return lower_fill(n, t);
    fail(n.prim, "not an index primitive");
}

} // namespace presk::kernel::detail
