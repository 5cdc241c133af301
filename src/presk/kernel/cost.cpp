// The layout cost model (cost.h).
#include "kernel/cost.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "kernel/native.h"

namespace presk::kernel {
namespace {

struct Count {
    double ops = 0, loads = 0, macs = 0;
};

/// Counts one evaluation of `e`; index arithmetic is free (the addresses come from the loops).
void expr(const ExprP& e, Count& c) {
    if (!e || e->integer) return;
    if (e->kind == Expr::Load || e->kind == Expr::VLoad) {
        c.ops += 1;
        c.loads += 1;
        return;
    }
    if (e->kind == Expr::Binary || e->kind == Expr::Unary || e->kind == Expr::Splat || e->kind == Expr::Select) c.ops += 1;
    if (e->kind == Expr::Binary && e->op == "mul") c.macs += e->lanes;
    for (const ExprP& a : e->args) expr(a, c);
}

bool innermost(const Stmt& s) {
    return std::none_of(s.body.begin(), s.body.end(), [](const Stmt& b) { return b.kind == Stmt::For; });
}

/// The values an innermost loop keeps in registers: the variables it assigns and reads.
size_t live(const std::vector<Stmt>& body) {
    std::set<std::pair<int, int64_t>> vars;
    for (const Stmt& s : body)
        if (s.kind == Stmt::Assign) vars.insert({s.value->lanes > 1 ? 1 : 0, s.var});
    return vars.size();
}

/// `body` run once; `split` the loop a split divides among `pieces`.
Count block(const std::vector<Stmt>& body, int registers, const Stmt* split, double pieces) {
    Count c;
    for (const Stmt& s : body) {
        Count one;
        switch (s.kind) {
        case Stmt::For: {
            const double n = (double)std::max<int64_t>(0, s.hi - s.lo);
            Count in = block(s.body, registers, split, pieces);
            in.ops += 1;
            if (innermost(s) && (int)live(s.body) + 4 > registers) {
                const double spills = 2.0 * (double)live(s.body);
                in.ops += spills;
                in.loads += spills / 2;
            }
            const double critical = &s == split ? std::ceil(n / pieces) : n;
            one.ops = critical * in.ops;
            one.loads = n * in.loads;
            one.macs = n * in.macs;
            break;
        }
        case Stmt::If: {
            Count a = block(s.body, registers, split, pieces), b = block(s.orelse, registers, split, pieces);
            one = a.ops >= b.ops ? a : b;
            one.ops += 1;
            break;
        }
        case Stmt::Assign: expr(s.value, one); break;
        case Stmt::Store:
        case Stmt::VStore:
            expr(s.value, one);
            one.ops += 1;
            break;
        }
        c.ops += one.ops;
        c.loads += one.loads;
        c.macs += one.macs;
    }
    return c;
}

} // namespace

Cost cost(const std::vector<Kernel>& ks, int registers) {
    Cost total;
    for (const Kernel& k : ks) {
        const std::optional<Split> sp = k.split_workers > 1 ? split_loop(k) : std::nullopt;
        const Count c = block(k.body, registers, sp ? sp->loop : nullptr, sp ? k.split_workers : 1);
        total.ops += c.ops;
        total.loads += c.loads;
        total.multiply_adds += c.macs;
    }
    return total;
}

int host_registers() {
#if defined(__aarch64__)
    return 32;
#elif defined(__x86_64__)
    return __builtin_cpu_supports("avx512f") ? 32 : 16;
#else
    return 16;
#endif
}

} // namespace presk::kernel
