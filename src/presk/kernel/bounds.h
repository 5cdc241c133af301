// The interval analysis of PSK-Kernel's integer expressions, which the machine-code backends
// (c_print.cpp, llvm_jit.cpp) share: the values an index or an integer operation can take,
// from the loop bounds and the constants. A backend leaves out exactly the checks this says
// cannot fail (an index whose interval lies within its axis, an operation that cannot leave
// int64, a division whose divisor cannot be 0), so the failures of a compiled kernel are the
// kernel interpreter's (eval.cpp checks every access and every integer operation).
//
// The analysis is interval arithmetic, one node at a time: a backend gives each operation the
// intervals of its operands as it emits them. A loaded integer or an integer variable may be
// anything (the full int64 range).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kernel/ir.h"

namespace presk::kernel {

/// The closed interval [lo, hi] of int64 values (lo <= hi); the full range when nothing is
/// known.
struct Interval {
    int64_t lo = INT64_MIN, hi = INT64_MAX;

    /// The one value v.
    static Interval point(int64_t v) { return {v, v}; }
    /// Whether every value lies in [a, b] (an index within an axis: a = 0, b = size - 1).
    bool within(int64_t a, int64_t b) const { return lo >= a && hi <= b; }
    bool operator==(const Interval&) const = default;
};

/// A comparison's value: 0 or 1.
inline constexpr Interval kTruth{0, 1};

/// The interval of the variable of `for i in lo..hi` while its body runs: [lo, hi - 1];
/// [lo, lo] for a loop of no iteration (its body never runs, so any interval is sound).
Interval loop_interval(int64_t lo, int64_t hi);

/// The smallest interval holding a and b (a select between them).
Interval hull(Interval a, Interval b);

/// One integer operation on operands in given intervals, as the kernel interpreter evaluates
/// it: the interval of its result where it succeeds, and which of the interpreter's failures
/// it may meet (an operation that always fails has the full interval).
struct IntStep {
    Interval value;
    bool overflow = false;      // the result may leave int64 (neg add sub mul; div mod of INT64_MIN by -1)
    bool zero_divisor = false;  // div mod: the divisor may be 0

    /// Whether the operation may fail (the backend must check it).
    bool may_fail() const { return overflow || zero_divisor; }
};

/// The integer `neg` of a; nullopt for another unary operation.
std::optional<IntStep> int_unary(const std::string& op, Interval a);

/// The integer a `op` b for op in add sub mul div mod (truncating, as C) min max; nullopt for
/// another operation (a comparison's value is kTruth).
std::optional<IntStep> int_binary(const std::string& op, Interval a, Interval b);

/// The loops open at a point of a kernel's body and the intervals of their variables.
class LoopIntervals {
public:
    /// Enters the loop `s` (a For): its variable takes loop_interval(s.lo, s.hi) until leave.
    void enter(const Stmt& s);
    /// Leaves the loop `s`: its variable is no longer known.
    void leave(const Stmt& s);
    /// The interval of loop variable i<var>; nullopt when no loop of it is open.
    std::optional<Interval> of(int var) const;

private:
    std::map<int, Interval> open_;
};

/// The interval of an integer expression that evaluates without an access, without a variable
/// other than the open loops' and without a check (no operation in it may fail): constants,
/// loop variables of `loops` and integer operations of them. nullopt for any other expression.
std::optional<Interval> pure_interval(const Expr& e, const LoopIntervals& loops);

} // namespace presk::kernel
