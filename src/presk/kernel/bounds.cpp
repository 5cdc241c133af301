// Interval arithmetic over int64 in 128-bit integers: every bound of a result is computed
// exactly, then compared with int64's range (an operation "may overflow" when its exact
// interval leaves it) and clamped to it (the values the operation has where it succeeds).
#include "kernel/bounds.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace presk::kernel {
namespace {

using i128 = __int128;

constexpr i128 kMin = INT64_MIN, kMax = INT64_MAX;

// The outcome of an operation whose exact results lie in [lo, hi]: it may overflow where that
// leaves int64, and succeeds with the values within int64 (the full interval when there are
// none: the operation always fails).
IntStep exact(i128 lo, i128 hi) {
    IntStep s;
    s.overflow = lo < kMin || hi > kMax;
    if (hi < kMin || lo > kMax) return s;
    s.value = {(int64_t)std::max(lo, kMin), (int64_t)std::min(hi, kMax)};
    return s;
}

// The interval of the values in `cs` (not empty).
IntStep extremes(std::initializer_list<i128> cs) { return exact(std::min(cs), std::max(cs)); }

// The largest |x| over x in r.
i128 magnitude(Interval r) {
    return std::max(r.lo < 0 ? -(i128)r.lo : (i128)r.lo, r.hi < 0 ? -(i128)r.hi : (i128)r.hi);
}

// a div b and a mod b: the interpreter's checks (a divisor 0, then INT64_MIN by -1), and the
// results over the divisors other than 0. Truncating division is monotone in each operand on
// divisors of one sign, so its extremes over each sign's part are at the corners; a remainder
// has the sign of a (or is 0) and |a mod b| <= min(|a|, |b| - 1).
IntStep divide(bool div, Interval a, Interval b) {
    IntStep s;
    s.zero_divisor = b.lo <= 0 && b.hi >= 0;
    s.overflow = a.lo == INT64_MIN && b.lo <= -1 && b.hi >= -1;
    if (b.lo == 0 && b.hi == 0) return s;  // always a division by zero
    if (div) {
        std::vector<i128> q;
        for (Interval p : {Interval{b.lo, std::min<int64_t>(b.hi, -1)}, Interval{std::max<int64_t>(b.lo, 1), b.hi}})
            if (p.lo <= p.hi)
                q.insert(q.end(), {(i128)a.lo / p.lo, (i128)a.lo / p.hi, (i128)a.hi / p.lo, (i128)a.hi / p.hi});
        s.value = exact(*std::min_element(q.begin(), q.end()), *std::max_element(q.begin(), q.end())).value;
    } else {
        const i128 m = magnitude(b) - 1;
        s.value = {a.lo >= 0 ? 0 : (int64_t)std::max<i128>(-m, a.lo), a.hi <= 0 ? 0 : (int64_t)std::min<i128>(m, a.hi)};
    }
    return s;
}

} // namespace

Interval loop_interval(int64_t lo, int64_t hi) { return {lo, hi > lo ? hi - 1 : lo}; }

Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

std::optional<IntStep> int_unary(const std::string& op, Interval a) {
    if (op != "neg") return std::nullopt;
    return exact(-(i128)a.hi, -(i128)a.lo);
}

std::optional<IntStep> int_binary(const std::string& op, Interval a, Interval b) {
    if (op == "add") return exact((i128)a.lo + b.lo, (i128)a.hi + b.hi);
    if (op == "sub") return exact((i128)a.lo - b.hi, (i128)a.hi - b.lo);
    if (op == "mul") return extremes({(i128)a.lo * b.lo, (i128)a.lo * b.hi, (i128)a.hi * b.lo, (i128)a.hi * b.hi});
    if (op == "div" || op == "mod") return divide(op == "div", a, b);
    if (op == "min") return IntStep{{std::min(a.lo, b.lo), std::min(a.hi, b.hi)}};
    if (op == "max") return IntStep{{std::max(a.lo, b.lo), std::max(a.hi, b.hi)}};
    return std::nullopt;
}

void LoopIntervals::enter(const Stmt& s) { open_[s.var] = loop_interval(s.lo, s.hi); }

void LoopIntervals::leave(const Stmt& s) { open_.erase(s.var); }

std::optional<Interval> LoopIntervals::of(int var) const {
    auto it = open_.find(var);
    if (it == open_.end()) return std::nullopt;
    return it->second;
}

std::optional<Interval> pure_interval(const Expr& e, const LoopIntervals& loops) {
    if (!e.integer || e.lanes != 1) return std::nullopt;
    std::vector<Interval> args;
    for (const ExprP& a : e.args) {
        const std::optional<Interval> r = a ? pure_interval(*a, loops) : std::nullopt;
        if (!r) return std::nullopt;
        args.push_back(*r);
    }
    std::optional<IntStep> s;
    switch (e.kind) {
    case Expr::Int: return Interval::point(e.ivalue);
    case Expr::Loop: return loops.of((int)e.ivalue);
    case Expr::Unary:
        if (args.size() == 1) s = int_unary(e.op, args[0]);
        break;
    case Expr::Binary:
        if (args.size() == 2) s = int_binary(e.op, args[0], args[1]);
        break;
    case Expr::Compare:
        if (args.size() == 2) return kTruth;
        break;
    case Expr::Select:
        if (args.size() == 3) return hull(args[1], args[2]);
        break;
    default: break;
    }
    if (!s || s->may_fail()) return std::nullopt;
    return s->value;
}

} // namespace presk::kernel
