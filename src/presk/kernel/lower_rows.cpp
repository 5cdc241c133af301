// Reductions along an axis and the row-wise primitives, following ref/interp.cpp: sum and
// mean (sum / n), max (the first of equal maxima, a comparison and a selection), softmax and
// cross_entropy row-wise over the last axis with the row maximum subtracted, the masked
// softmax, argmax and max_grad (the last of equal maxima), expand.
//
// Every reduction keeps its running value in a scalar of the arithmetic type (so a bf16
// kernel accumulates in f32) and visits the reduced axis in increasing index. Loop variables:
// the kept axes in order, then the reduced one, reused by each pass over a row.
//
// softmax: s0 = the row maximum, s2 = the sum of exp(x - s0), each output exp(x - s0) / s2
// (the exponential is computed again in the last pass: the same bits, and nothing rounded to
// the storage type in between). Its two passes (the layout space's, f64 and f32 only): the
// exponentials stored into the output while their sum is taken, then divided in place, the
// same operations on the same values since the store rounds nothing. The masked softmax reads its mask (broadcast to the scores)
// in conditions: its maximum from the first allowed position (n0 says one was seen), its sum
// over the allowed ones, 0 where it refuses; a row it empties gives zeros, where the
// reference refuses the row. cross_entropy is log(s2) + s0 - x[target]: a target outside the
// row is a load outside the logits' last axis, which the kernel interpreter refuses.
#include <functional>

#include "kernel/lower_util.h"

namespace presk::kernel::detail {
namespace {

using XAt = std::function<ExprP(const ExprP&)>;

/// s<m> = the maximum of x_at(j) over j in 0..n, the first of equal maxima (n >= 1); loop
/// variable i<jv>, scratch s<tmp>.
std::vector<Stmt> row_max(const XAt& x_at, int64_t n, int jv, int m, int tmp) {
    const ExprP v = scalar_var(tmp), best = scalar_var(m);
    return {assign(m, x_at(integer(0))),
            for_loop(jv, 1, n, {assign(tmp, x_at(loop_var(jv))), assign(m, select(compare("gt", v, best), v, best))})};
}

/// s0 = the maximum of x_at(j) over j in 0..n (scratch s1), then s2 = the sum of
/// exp(x_at(j) - s0) in increasing j (n >= 1): softmax's and cross_entropy's row; loop
/// variable i<jv>.
std::vector<Stmt> row_max_and_sum_exp(const XAt& x_at, int64_t n, int jv) {
    std::vector<Stmt> row = row_max(x_at, n, jv, 0, 1);
    row.push_back(assign(2, real(0)));
    const ExprP e = unary("exp", binary("sub", x_at(loop_var(jv)), scalar_var(0)));
    row.push_back(for_loop(jv, 0, n, {assign(2, binary("add", scalar_var(2), e))}));
    return row;
}

/// n<at> = the position of the maximum of x_at(j) over j in 0..n, the last of equal maxima
/// (n >= 1), s<val> its value; loop variable i<jv>, scratch s<tmp> and n<less>.
std::vector<Stmt> row_argmax(const XAt& x_at, int64_t n, int jv, int at, int val, int tmp, int less) {
    const ExprP v = scalar_var(tmp), best = scalar_var(val), pos = scalar_var(at, true), lt = scalar_var(less, true);
    return {assign(at, integer(0)), assign(val, x_at(integer(0))),
            for_loop(jv, 1, n,
                     {assign(tmp, x_at(loop_var(jv))), assign(less, compare("lt", v, best)),
                      assign(at, select(lt, pos, loop_var(jv))), assign(val, select(lt, best, v))})};
}

/// The row layout of x around `axis`: loops over the other axes (variables 0..r-2), then the
/// axis (variable r-1).
struct Rows {
    std::vector<Axis> x;
    size_t axis;
    int jv() const { return (int)x.size() - 1; }
    std::vector<int64_t> kept() const { return sizes(without(x, axis)); }
    std::vector<ExprP> kept_vars() const { return vars(0, x.size() - 1); }
    int64_t n() const { return x[axis].size; }
    /// The index of x at position j of the axis.
    std::vector<ExprP> at(const ExprP& j) const {
        std::vector<ExprP> idx = kept_vars();
        idx.insert(idx.begin() + (long)axis, j);
        return idx;
    }
    XAt loader(int buf) const {
        return [this, buf](const ExprP& j) { return load(buf, at(j)); };
    }
};

Kernel lower_reduce(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& x = n.operands[0]->axes;
    if (n.ints.empty() && n.prim != "max") {  // the whole tensor to a scalar
        k.body = sum_nest(k.out_buf(), x, std::vector<int>(x.size(), -1), n.result->axes,
                          n.prim == "mean" ? std::optional(n.operands[0]->numel()) : std::nullopt);
        return k;
    }
    const size_t a = (size_t)n.ints[0];
    if (n.prim != "max") {
        std::vector<int> keep;
        for (size_t d = 0; d < x.size(); ++d) keep.push_back(d < a ? (int)d : d == a ? -1 : (int)d - 1);
        k.body = sum_nest(k.out_buf(), x, keep, n.result->axes, n.prim == "mean" ? std::optional(x[a].size) : std::nullopt);
        return k;
    }
    Rows r{x, a};
    if (r.n() == 0) {
        if (n.result->numel() > 0) fail(n.prim, "the maximum over an empty axis");
        return k;
    }
    std::vector<Stmt> row = row_max(r.loader(0), r.n(), r.jv(), 0, 1);
    row.push_back(store(k.out_buf(), r.kept_vars(), scalar_var(0)));
    k.body = nest(0, r.kept(), std::move(row));
    return k;
}

Kernel lower_softmax(const Node& n, DType t, int passes) {
    if (passes != 2 && passes != 3) fail(n.prim, "a softmax has 2 or 3 passes, not " + std::to_string(passes));
    Kernel k = header(n.prim, n, t);
    Rows r{n.operands[0]->axes, n.operands[0]->axes.size() - 1};
    if (r.n() == 0) return k;  // no element
    const int jv = r.jv(), out = k.out_buf();
    const ExprP j = loop_var(jv);
    const XAt x = r.loader(0);
    const ExprP stored = load(out, r.at(j));
    std::vector<Stmt> row;
    auto pass = [&](std::vector<Stmt> body) { row.push_back(for_loop(jv, 0, r.n(), std::move(body))); };
    if (n.operands.size() == 1) {
        const ExprP e = unary("exp", binary("sub", x(j), scalar_var(0)));
        if (passes == 3) {
            row = row_max_and_sum_exp(x, r.n(), jv);
            pass({store(out, r.at(j), binary("div", e, scalar_var(2)))});
        } else {
            row = row_max(x, r.n(), jv, 0, 1);
            row.push_back(assign(2, real(0)));
            pass({assign(1, e), store(out, r.at(j), scalar_var(1)), assign(2, binary("add", scalar_var(2), scalar_var(1)))});
            pass({store(out, r.at(j), binary("div", stored, scalar_var(2)))});
        }
    } else {
        const ExprP allowed = load(1, aligned(n.prim, n.operands[1]->axes, r.x, r.at(j)), true);
        const ExprP seen = scalar_var(0, true), m = scalar_var(1), v = scalar_var(2);
        const ExprP e = unary("exp", binary("sub", x(j), m));
        row = {assign(0, integer(0)), assign(1, real(0))};
        pass({if_else(allowed, {assign(2, x(j)), assign(1, select(seen, select(compare("gt", v, m), v, m), v)),
                                assign(0, integer(1))})});
        row.push_back(assign(3, real(0)));
        if (passes == 3) {
            pass({if_else(allowed, {assign(3, binary("add", scalar_var(3), e))})});
            pass({if_else(allowed, {store(out, r.at(j), binary("div", e, scalar_var(3)))}, {store(out, r.at(j), real(0))})});
        } else {
            pass({if_else(allowed,
                          {assign(4, e), store(out, r.at(j), scalar_var(4)), assign(3, binary("add", scalar_var(3), scalar_var(4)))},
                          {store(out, r.at(j), real(0))})});
            pass({if_else(allowed, {store(out, r.at(j), binary("div", stored, scalar_var(3)))})});
        }
    }
    k.body = nest(0, r.kept(), std::move(row));
    return k;
}

Kernel lower_cross_entropy(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    Rows r{n.operands[0]->axes, n.operands[0]->axes.size() - 1};
    std::vector<Stmt> row;
    if (r.n() == 0) {  // the reference's rows are then empty and its result zeros
        row.push_back(store(k.out_buf(), r.kept_vars(), real(0)));
    } else {
        const int jv = r.jv();
        const XAt x = r.loader(0);
        row = row_max_and_sum_exp(x, r.n(), jv);
        row.push_back(assign(3, load(1, r.kept_vars(), true)));
        ExprP lse = binary("add", unary("log", scalar_var(2)), scalar_var(0));
        row.push_back(store(k.out_buf(), r.kept_vars(), binary("sub", lse, x(scalar_var(3, true)))));
    }
    k.body = nest(0, r.kept(), std::move(row));
    return k;
}

Kernel lower_argmax(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    Rows r{n.operands[0]->axes, n.operands[0]->axes.size() - 1};
    std::vector<Stmt> row;
    if (r.n() > 0) row = row_argmax(r.loader(0), r.n(), r.jv(), 0, 1, 2, 3);
    row.push_back(store(k.out_buf(), r.kept_vars(), r.n() > 0 ? scalar_var(0, true) : integer(0)));
    k.body = nest(0, r.kept(), std::move(row));
    return k;
}

Kernel lower_max_grad(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    if (n.ints.size() != 1 || n.ints[0] < 0 || n.ints[0] >= (int64_t)n.operands[0]->axes.size())
        fail(n.prim, "needs one axis of " + to_string(*n.operands[0]));
    if (n.operands[1]->axes != n.operands[0]->axes)
        fail(n.prim, "the cotangent " + to_string(*n.operands[1]) + " is not of the operand's axes " + to_string(*n.operands[0]));
    Rows r{n.operands[0]->axes, (size_t)n.ints[0]};
    if (r.n() == 0) return k;  // no element
    const ExprP j = loop_var(r.jv());
    std::vector<Stmt> row = row_argmax(r.loader(0), r.n(), r.jv(), 0, 1, 2, 3);
    row.push_back(for_loop(r.jv(), 0, r.n(),
                           {store(k.out_buf(), r.at(j), select(compare("eq", j, scalar_var(0, true)), load(1, r.at(j)), real(0)))}));
    k.body = nest(0, r.kept(), std::move(row));
    return k;
}

Kernel lower_expand(const Node& n, DType t) {
    Kernel k = header(n.prim, n, t);
    const auto& out = n.result->axes;
    const std::vector<ExprP> ov = vars(0, out.size());
    k.body = nest(0, sizes(out), {store(k.out_buf(), ov, load(0, without(ov, (size_t)n.ints[0])))});
    return k;
}

} // namespace

std::vector<Stmt> sum_nest(int out_buf, const std::vector<Axis>& x, const std::vector<int>& keep,
                           const std::vector<Axis>& out, std::optional<int64_t> divisor) {
    const int no = (int)out.size();
    std::vector<ExprP> xi;
    std::vector<int64_t> summed;
    for (size_t d = 0; d < x.size(); ++d) {
        if (keep[d] >= 0) {
            xi.push_back(loop_var(keep[d]));
        } else {
            xi.push_back(loop_var(no + (int)summed.size()));
            summed.push_back(x[d].size);
        }
    }
    std::vector<Stmt> each{assign(0, real(0))};
    auto acc = nest(no, summed, {assign(0, binary("add", scalar_var(0), load(0, xi)))});
    each.insert(each.end(), acc.begin(), acc.end());
    ExprP v = divisor ? binary("div", scalar_var(0), real((double)*divisor)) : scalar_var(0);
    each.push_back(store(out_buf, vars(0, out.size()), v));
    return nest(0, sizes(out), std::move(each));
}

Kernel lower_rows(const Node& n, DType t, int passes) {
    if (passes != 3 && n.prim != "softmax") fail(n.prim, "only a softmax has a choice of passes");
    if (n.prim == "sum" || n.prim == "mean" || n.prim == "max") return lower_reduce(n, t);
    if (n.prim == "softmax") return lower_softmax(n, t, passes);
    if (n.prim == "cross_entropy") return lower_cross_entropy(n, t);
    if (n.prim == "argmax") return lower_argmax(n, t);
    if (n.prim == "max_grad") return lower_max_grad(n, t);
    if (n.prim == "expand") return lower_expand(n, t);
    fail(n.prim, "not a row-wise primitive");
}

} // namespace presk::kernel::detail
