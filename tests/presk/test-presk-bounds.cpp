// The interval analysis of integer expressions (kernel/bounds.h) that both machine-code
// backends use to leave out checks: the intervals of loop variables (nested, of no iteration),
// constants and loads; add sub mul neg at the edges of int64 (may overflow exactly when an
// exact bound leaves it); div and mod with the interpreter's two failures; every interval
// checked against all the operations' results over small operand intervals, at 0 and at both
// ends of int64. Then the C printer's checks follow it: an index whose interval lies within
// its axis is not checked, one that may leave it is.
#include <gtest/gtest.h>

#include <vector>

#include "kernel/bounds.h"
#include "kernel/c_print.h"
#include "kernel/ir.h"

namespace presk::kernel {
namespace {

constexpr int64_t kMin = INT64_MIN, kMax = INT64_MAX;

ExprP i(int v) { return loop_var(v); }

IntStep bin(const std::string& op, Interval a, Interval b) {
    const std::optional<IntStep> s = int_binary(op, a, b);
    EXPECT_TRUE(s) << op;
    return s.value_or(IntStep{});
}

TEST(Bounds, LoopVariablesWhileTheirLoopsRun) {
    EXPECT_EQ(loop_interval(0, 4), (Interval{0, 3}));
    EXPECT_EQ(loop_interval(-3, -2), (Interval{-3, -3}));
    EXPECT_EQ(loop_interval(5, 5), (Interval{5, 5}));  // no iteration: the body never runs
    EXPECT_EQ(loop_interval(5, 2), (Interval{5, 5}));
    EXPECT_EQ(loop_interval(kMin, kMin), (Interval{kMin, kMin}));  // hi - 1 would overflow
    EXPECT_EQ(loop_interval(kMin, kMax), (Interval{kMin, kMax - 1}));

    // for i0 in 0..4 { for i1 in 2..7 { ... } }, then a sibling loop of i1 in 0..2.
    const Stmt inner = for_loop(1, 2, 7, {});
    const Stmt outer = for_loop(0, 0, 4, {inner});
    const Stmt sibling = for_loop(1, 0, 2, {});
    LoopIntervals loops;
    EXPECT_FALSE(loops.of(0));
    loops.enter(outer);
    EXPECT_EQ(loops.of(0), (Interval{0, 3}));
    EXPECT_FALSE(loops.of(1));
    loops.enter(inner);
    EXPECT_EQ(loops.of(1), (Interval{2, 6}));
    const ExprP idx = binary("add", binary("mul", i(0), integer(5)), i(1));  // i0 * 5 + i1
    EXPECT_EQ(pure_interval(*idx, loops), (Interval{2, 21}));
    EXPECT_EQ(pure_interval(*binary("sub", i(1), i(0)), loops), (Interval{-1, 6}));
    loops.leave(inner);
    EXPECT_FALSE(loops.of(1));
    EXPECT_FALSE(pure_interval(*idx, loops));  // i1's loop is closed
    loops.enter(sibling);
    EXPECT_EQ(pure_interval(*idx, loops), (Interval{0, 16}));
    loops.leave(sibling);
    loops.leave(outer);
    EXPECT_FALSE(loops.of(0));
}

TEST(Bounds, ConstantsLoadsAndVariables) {
    LoopIntervals loops;
    loops.enter(for_loop(0, 0, 3, {}));
    EXPECT_EQ(pure_interval(*integer(-7), loops), Interval::point(-7));
    EXPECT_EQ(pure_interval(*compare("lt", i(0), integer(2)), loops), kTruth);
    EXPECT_EQ(pure_interval(*select(compare("lt", i(0), integer(2)), integer(-4), i(0)), loops), (Interval{-4, 2}));
    EXPECT_EQ(pure_interval(*binary("min", i(0), integer(1)), loops), (Interval{0, 1}));
    EXPECT_EQ(pure_interval(*binary("max", i(0), integer(1)), loops), (Interval{1, 2}));
    EXPECT_EQ(pure_interval(*unary("neg", i(0)), loops), (Interval{-2, 0}));
    // A load, an integer variable or a real operand is not known: the full range, no interval.
    EXPECT_FALSE(pure_interval(*load(0, {i(0)}, true), loops));
    EXPECT_FALSE(pure_interval(*binary("add", load(0, {i(0)}, true), integer(1)), loops));
    EXPECT_FALSE(pure_interval(*scalar_var(0, true), loops));
    EXPECT_FALSE(pure_interval(*compare("lt", real(0), real(1)), loops));
    EXPECT_EQ(Interval{}, (Interval{kMin, kMax}));
    EXPECT_TRUE(Interval{}.within(kMin, kMax));
    EXPECT_FALSE(Interval{}.within(0, kMax));
    // An operation that may fail is not pure: its check must stay where it is.
    EXPECT_FALSE(pure_interval(*binary("mul", i(0), integer(kMax)), loops));
    EXPECT_FALSE(pure_interval(*binary("div", integer(1), i(0)), loops));
    EXPECT_EQ(pure_interval(*binary("div", i(0), integer(2)), loops), (Interval{0, 1}));
    EXPECT_FALSE(int_binary("pow", {}, {}));
    EXPECT_FALSE(int_binary("lt", {}, {}));  // a comparison's value is kTruth
    EXPECT_FALSE(int_unary("exp", {}));
}

TEST(Bounds, OverflowAtTheEdgesOfInt64) {
    EXPECT_FALSE(bin("add", {kMax - 1, kMax - 1}, {1, 1}).overflow);
    EXPECT_EQ(bin("add", {kMax - 1, kMax - 1}, {1, 1}).value, Interval::point(kMax));
    EXPECT_TRUE(bin("add", {kMax - 1, kMax - 1}, {1, 2}).overflow);
    EXPECT_EQ(bin("add", {kMax - 1, kMax - 1}, {1, 2}).value, Interval::point(kMax));  // where it succeeds
    EXPECT_FALSE(bin("add", {kMin, kMin}, {0, kMax}).overflow);
    EXPECT_TRUE(bin("add", {kMin, kMin}, {-1, 0}).overflow);
    EXPECT_FALSE(bin("sub", {-1, -1}, {kMax, kMax}).overflow);
    EXPECT_EQ(bin("sub", {-1, -1}, {kMax, kMax}).value, Interval::point(kMin));
    EXPECT_TRUE(bin("sub", {-2, -2}, {kMax, kMax}).overflow);
    EXPECT_TRUE(bin("sub", {0, 0}, {kMin, kMin}).overflow);
    EXPECT_FALSE(bin("mul", {int64_t(1) << 31, int64_t(1) << 31}, {0, int64_t(1) << 31}).overflow);
    EXPECT_FALSE(bin("mul", {-(int64_t(1) << 32), 1}, {0, int64_t(1) << 31}).overflow);  // down to INT64_MIN
    EXPECT_TRUE(bin("mul", {-(int64_t(1) << 32), 1}, {0, (int64_t(1) << 31) + 1}).overflow);
    EXPECT_FALSE(bin("mul", {kMin, kMin}, {1, 1}).overflow);
    EXPECT_TRUE(bin("mul", {kMin, kMin}, {-1, -1}).overflow);
    EXPECT_EQ(bin("mul", {kMin, kMin}, {-1, -1}).value, Interval{});  // always fails
    EXPECT_TRUE(bin("mul", {}, {}).overflow);
    EXPECT_TRUE(int_unary("neg", {kMin, 0})->overflow);
    EXPECT_EQ(int_unary("neg", {kMin, 0})->value, (Interval{0, kMax}));
    EXPECT_FALSE(int_unary("neg", {kMin + 1, kMax})->overflow);
    EXPECT_EQ(int_unary("neg", {kMin + 1, 5})->value, (Interval{-5, kMax}));
    EXPECT_FALSE(bin("min", {}, {}).may_fail());
    EXPECT_FALSE(bin("max", {}, {}).may_fail());
}

TEST(Bounds, DivisionAndRemainder) {
    // The interpreter's failures: a divisor that may be 0, a dividend INT64_MIN by -1.
    for (const char* op : {"div", "mod"}) {
        EXPECT_FALSE(bin(op, {}, {1, kMax}).may_fail()) << op;
        EXPECT_FALSE(bin(op, {}, {kMin, -2}).may_fail()) << op;
        EXPECT_TRUE(bin(op, {0, 5}, {0, 3}).zero_divisor) << op;
        EXPECT_FALSE(bin(op, {0, 5}, {0, 3}).overflow) << op;
        EXPECT_TRUE(bin(op, {kMin, 0}, {-1, -1}).overflow) << op;
        EXPECT_FALSE(bin(op, {kMin, 0}, {-1, -1}).zero_divisor) << op;
        EXPECT_FALSE(bin(op, {kMin + 1, 0}, {-1, -1}).overflow) << op;
        EXPECT_TRUE(bin(op, {0, 0}, {0, 0}).zero_divisor) << op;
    }
    EXPECT_EQ(bin("div", {0, 9}, {2, 4}).value, (Interval{0, 4}));
    EXPECT_EQ(bin("div", {-9, 9}, {-3, 4}).value, (Interval{-9, 9}));  // 0 left out of the divisors
    EXPECT_EQ(bin("div", {3, 9}, {0, 3}).value, (Interval{1, 9}));
    EXPECT_EQ(bin("div", {kMin, kMin}, {-2, -1}).value, (Interval{int64_t(1) << 62, kMax}));
    EXPECT_EQ(bin("mod", {0, 100}, {1, 7}).value, (Interval{0, 6}));
    EXPECT_EQ(bin("mod", {0, 3}, {1, 7}).value, (Interval{0, 3}));
    EXPECT_EQ(bin("mod", {-100, 2}, {-7, 7}).value, (Interval{-6, 2}));
    EXPECT_EQ(bin("mod", {}, {kMin, kMin}).value, (Interval{kMin + 1, kMax}));
}

bool holds(Interval i, int64_t v) { return i.lo <= v && v <= i.hi; }

// The interpreter's integer operation (eval.cpp): false where it fails.
bool apply(const std::string& op, int64_t a, int64_t b, int64_t& r) {
    if (op == "add") return !__builtin_add_overflow(a, b, &r);
    if (op == "sub") return !__builtin_sub_overflow(a, b, &r);
    if (op == "mul") return !__builtin_mul_overflow(a, b, &r);
    if (op == "min") return r = b < a ? b : a, true;
    if (op == "max") return r = a < b ? b : a, true;
    if (b == 0 || (a == kMin && b == -1)) return false;
    r = op == "div" ? a / b : a % b;
    return true;
}

// Every result of every operation over small intervals at 0 and at both ends of int64 lies in
// the operation's interval, and every failure is one the analysis allows; an operation the
// analysis says may overflow does overflow somewhere (the flag is exact for add sub mul neg).
TEST(Bounds, SoundOnEveryPairOfSmallIntervals) {
    std::vector<int64_t> points;
    for (int64_t d = 0; d <= 3; ++d) {
        points.push_back(kMin + d);
        points.push_back(kMax - d);
        points.push_back(d);
        points.push_back(-d);
    }
    points.push_back(int64_t(1) << 32);
    points.push_back(-(int64_t(1) << 31));
    std::vector<Interval> spans;
    for (int64_t lo : points)
        for (int64_t hi : points)
            if (lo <= hi && (hi - (uint64_t)lo) <= 3) spans.push_back({lo, hi});
    for (const char* op : {"add", "sub", "mul", "div", "mod", "min", "max"}) {
        for (Interval a : spans) {
            for (Interval b : spans) {
                const IntStep s = bin(op, a, b);
                bool overflowed = false, divided_by_zero = false;
                for (int64_t x = a.lo;; ++x) {
                    for (int64_t y = b.lo;; ++y) {
                        int64_t r = 0;
                        if (apply(op, x, y, r)) {
                            EXPECT_TRUE(holds(s.value, r)) << x << " " << op << " " << y << " = " << r;
                        } else {
                            (y == 0 ? divided_by_zero : overflowed) = true;
                        }
                        if (y == b.hi) break;
                    }
                    if (x == a.hi) break;
                }
                EXPECT_TRUE(!divided_by_zero || s.zero_divisor) << op << " [" << a.lo << ", " << a.hi << "]";
                EXPECT_TRUE(!overflowed || s.overflow) << op << " [" << a.lo << ", " << a.hi << "]";
                if (std::string(op) == "add" || std::string(op) == "sub" || std::string(op) == "mul") {
                    EXPECT_EQ(s.overflow, overflowed) << op << " [" << a.lo << ", " << a.hi << "]";
                }
            }
        }
    }
    for (Interval a : spans) {
        bool overflowed = false;
        const IntStep s = *int_unary("neg", a);
        for (int64_t x = a.lo;; ++x) {
            int64_t r = 0;
            if (__builtin_sub_overflow((int64_t)0, x, &r)) {
                overflowed = true;
            } else {
                EXPECT_TRUE(holds(s.value, r)) << "neg " << x;
            }
            if (x == a.hi) break;
        }
        EXPECT_EQ(s.overflow, overflowed) << "neg [" << a.lo << ", " << a.hi << "]";
    }
}

// The C printer checks an index exactly where its interval may leave the axis, and an
// operation exactly where it may overflow.
TEST(Bounds, ThePrintersChecksFollowTheIntervals) {
    auto kernel = [](int64_t hi, ExprP index) {
        Kernel k;
        k.name = "shift";
        k.dtype = DType::F32;
        k.inputs = {{DType::F32, {{"", 4}}}};
        k.output = {DType::F32, {{"", 4}}};
        k.body = {for_loop(0, 0, hi, {store(1, {i(0)}, load(0, {std::move(index)}))})};
        k.n_loops = 1;
        return print_c(k, "f");
    };
    const std::string in_range = kernel(3, binary("add", i(0), integer(1)));
    EXPECT_EQ(in_range.find("PRESK_INDEX_OUT_OF_RANGE;"), std::string::npos) << in_range;
    EXPECT_EQ(in_range.find("__builtin_add_overflow"), std::string::npos) << in_range;
    const std::string past_the_end = kernel(4, binary("min", binary("add", i(0), integer(1)), integer(4)));
    EXPECT_NE(past_the_end.find("err[0] = INT64_C(0);"), std::string::npos) << past_the_end;  // the load
    EXPECT_EQ(past_the_end.find("err[0] = INT64_C(1);"), std::string::npos) << past_the_end;  // not the store
    const ExprP product = binary("mul", i(0), integer(int64_t(1) << 61));  // at most 3 * 2^61
    const std::string overflows = kernel(4, binary("sub", integer(kMin + 3), product));
    EXPECT_NE(overflows.find("__builtin_sub_overflow"), std::string::npos) << overflows;
    EXPECT_EQ(overflows.find("__builtin_mul_overflow"), std::string::npos) << overflows;
}

} // namespace
} // namespace presk::kernel
