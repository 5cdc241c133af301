// The layout cost model (cost.h).
#include "kernel/cost.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "kernel/native.h"

namespace presk::kernel {
namespace {

struct Count {
    double cycles = 0, ops = 0, loads = 0, macs = 0, arith = 0;
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
    if (e->kind == Expr::Binary || e->kind == Expr::Unary) c.arith += 1;
    if (e->kind == Expr::Binary && e->op == "mul") c.macs += e->lanes;
    for (const ExprP& a : e->args) expr(a, c);
}

bool innermost(const Stmt& s) {
    return std::none_of(s.body.begin(), s.body.end(), [](const Stmt& b) { return b.kind == Stmt::For; });
}

using Var = std::pair<bool, int64_t>;  // (vector, number) of a real variable

/// The real operations on the path from a `leaf` to `e`'s value; -1 when `e` reads none.
int chain(const ExprP& e, const std::function<bool(const Expr&)>& leaf) {
    if (!e || e->integer) return -1;
    if (leaf(*e)) return 0;
    int d = -1;
    for (const ExprP& a : e->args) d = std::max(d, chain(a, leaf));
    return d < 0 ? -1 : d + (e->kind == Expr::Binary || e->kind == Expr::Unary);
}

int chain(const ExprP& e, const Var& v) {
    return chain(e, [&](const Expr& x) {
        return (x.kind == Expr::Scalar || x.kind == Expr::Vector) && Var{x.kind == Expr::Vector, x.ivalue} == v;
    });
}

bool same(const ExprP& a, const ExprP& b) {
    if (a->kind != b->kind || a->op != b->op || a->ivalue != b->ivalue || a->buf != b->buf || a->args.size() != b->args.size())
        return false;
    for (size_t i = 0; i < a->args.size(); ++i)
        if (!same(a->args[i], b->args[i])) return false;
    return true;
}

/// The cycles of an innermost loop's chain through memory: a store whose value reads the element
/// it stores to (a running sum kept in memory, as in the row-wise form) waits, at the loop's next
/// run, for this one's store: the operations on that path and the store's forwarding to the
/// load, kLatency each.
double memory_chain(const std::vector<Stmt>& body) {
    double cycles = 0;
    for (const Stmt& s : body) {
        if (s.kind != Stmt::Store && s.kind != Stmt::VStore) continue;
        const int d = chain(s.value, [&](const Expr& x) {
            if ((x.kind != Expr::Load && x.kind != Expr::VLoad) || x.buf != s.buf || x.args.size() != s.index.size()) return false;
            for (size_t i = 0; i < x.args.size(); ++i)
                if (!same(x.args[i], s.index[i])) return false;
            return true;
        });
        if (d >= 0) cycles = std::max(cycles, (d + 1) * kLatency);
    }
    return cycles;
}

/// An innermost loop's registers: the values it keeps (accumulators it carries from one
/// iteration to the next, and each value it assigns) and its longest carried chain.
struct Registers {
    double live = 0, chain = 0;
};

Registers registers_of(const std::vector<Stmt>& body) {
    std::map<Var, double> carried;
    double values = 0;
    for (const Stmt& s : body) {
        if (s.kind != Stmt::Assign || s.value->integer) continue;
        const Var v{s.value->lanes > 1, s.var};
        const int d = chain(s.value, v);
        if (d >= 0) carried[v] += d;
        else values += 1;
    }
    Registers r{values + (double)carried.size(), 0};
    for (const auto& [v, d] : carried) r.chain = std::max(r.chain, d);
    return r;
}

/// The cycles of one iteration of the innermost loop whose body counts `in`.
double iteration(const std::vector<Stmt>& body, Count& in, int registers) {
    const Registers r = registers_of(body);
    const double free = (double)registers - r.live;
    if (free < 2) {  // no room for an operand and a product: every value stored and reloaded
        in.ops += 2 * r.live;
        in.loads += r.live;
        return (in.ops + 1) / kIssue + r.chain * kLatency;
    }
    const double stall = std::max(1.0, kLatency * kPipes / free);
    return std::max({(in.ops + 1) / kIssue, in.arith / kPipes * stall, r.chain * kLatency});
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
            const double each = innermost(s) ? iteration(s.body, in, registers) : in.cycles + 1 / kIssue;
            const double critical = &s == split ? std::ceil(n / pieces) : n;
            one.cycles = std::max(critical * each, innermost(s) ? memory_chain(s.body) : 0.0);
            one.ops = critical * (in.ops + 1);
            one.loads = n * in.loads;
            one.macs = n * in.macs;
            break;
        }
        case Stmt::If: {
            Count a = block(s.body, registers, split, pieces), b = block(s.orelse, registers, split, pieces);
            one = a.ops >= b.ops ? a : b;
            one.ops += 1;
            one.cycles += 1 / kIssue;
            break;
        }
        case Stmt::Assign:
            expr(s.value, one);
            one.cycles = one.ops / kIssue;
            break;
        case Stmt::Store:
        case Stmt::VStore:
            expr(s.value, one);
            one.ops += 1;
            one.cycles = one.ops / kIssue;
            break;
        }
        c.cycles += one.cycles;
        c.ops += one.ops;
        c.loads += one.loads;
        c.macs += one.macs;
        c.arith += one.arith;
    }
    return c;
}

// Memory: every load and store with the loops around it and the bytes it moves per iteration
// of each (its stride; kUnknown where the index is not linear in the loop's variable).

constexpr double kUnknown = 1e18;

struct Loop {
    const Stmt* s;
    double n, critical;  // iterations; on the critical worker
};

struct Access {
    std::vector<Loop> loops;     // outermost first
    std::vector<double> stride;  // bytes per iteration of each loop
    double width;                // bytes read or written at once
};

/// The coefficient of loop variable `v` in the index `e`, if `e` is linear in it.
std::optional<double> coefficient(const ExprP& e, int64_t v) {
    switch (e->kind) {
    case Expr::Int: return 0.0;
    case Expr::Loop: return e->ivalue == v ? 1.0 : 0.0;
    case Expr::Binary: {
        const auto a = coefficient(e->args[0], v), b = coefficient(e->args[1], v);
        if (!a || !b) return std::nullopt;
        if (e->op == "add") return *a + *b;
        if (e->op == "sub") return *a - *b;
        if (e->op == "mul" && e->args[0]->kind == Expr::Int) return (double)e->args[0]->ivalue * *b;
        if (e->op == "mul" && e->args[1]->kind == Expr::Int) return *a * (double)e->args[1]->ivalue;
        break;
    }
    default: break;
    }
    bool reads = false;
    for (const ExprP& a : e->args) reads = reads || coefficient(a, v) != std::optional<double>(0.0);
    return reads ? std::nullopt : std::optional<double>(0.0);
}

/// The index `e` at the first iteration of every loop (0 for an index that is not arithmetic).
double first(const ExprP& e) {
    if (e->kind == Expr::Int) return (double)e->ivalue;
    if (e->kind != Expr::Binary) return 0;
    const double a = first(e->args[0]), b = first(e->args[1]);
    return e->op == "add" ? a + b : e->op == "sub" ? a - b : e->op == "mul" ? a * b : 0;
}

double element_bytes(DType t) {
    switch (t) {
    case DType::F64:
    case DType::I64: return 8;
    case DType::F32: return 4;
    case DType::BF16: return 2;
    default: return 1;
    }
}

struct Accesses {
    const Kernel& k;
    const Stmt* split;
    double pieces;
    std::vector<Loop> open;
    std::vector<Access> all;
    std::set<std::pair<std::vector<const void*>, std::vector<double>>> seen;  // (buffer, loops), (strides, line)

    void access(int buf, const std::vector<ExprP>& index, int lanes) {
        const BufferType& b = buf < (int)k.inputs.size() ? k.inputs[(size_t)buf] : k.output;
        const double e = element_bytes(b.dtype);
        Access a{open, {}, e * lanes};
        for (const Loop& l : open) {
            double bytes = 0, step = e;
            for (size_t d = index.size(); d-- > 0;) {
                const auto c = coefficient(index[d], l.s->var);
                bytes = c ? bytes + std::abs(*c) * step : kUnknown;
                if (!c) break;
                step *= d < b.axes.size() ? (double)b.axes[d].size : 1;
            }
            a.stride.push_back(bytes);
        }
        // An access moving as one already counted, from the same line, fetches its lines.
        double offset = 0, step = e;
        for (size_t d = index.size(); d-- > 0;) {
            offset += first(index[d]) * step;
            step *= d < b.axes.size() ? (double)b.axes[d].size : 1;
        }
        std::vector<const void*> where{&b};
        for (const Loop& l : open) where.push_back(l.s);
        std::vector<double> how = a.stride;
        how.push_back(std::floor(offset / kLine));
        if (seen.insert({where, how}).second) all.push_back(std::move(a));
    }
    void expr(const ExprP& e) {
        if (!e) return;
        if (e->kind == Expr::Load || e->kind == Expr::VLoad) access(e->buf, e->args, e->lanes);
        for (const ExprP& a : e->args) expr(a);
    }
    void stmts(const std::vector<Stmt>& body) {
        for (const Stmt& s : body) {
            for (const ExprP& i : s.index) expr(i);
            expr(s.value);
            if (s.kind == Stmt::Store || s.kind == Stmt::VStore) access(s.buf, s.index, s.value->lanes);
            if (s.kind == Stmt::For) {
                const double n = (double)std::max<int64_t>(0, s.hi - s.lo);
                open.push_back({&s, n, &s == split ? std::ceil(n / pieces) : n});
            }
            stmts(s.body);
            stmts(s.orelse);
            if (s.kind == Stmt::For) open.pop_back();
        }
    }
};

/// The lines `a` touches in one iteration of its loop `at` (all loops inside it run in full).
/// The lines `a` touches in one iteration of its loop `at` (all loops inside it run in full),
/// as they fill the level-1 cache: lines that fall into fewer than all of its sets (a stride
/// of a power of two lines maps the rows of a panel to a few sets) count as many times more.
double lines_within(const Access& a, size_t at) {
    const double all_sets = kL1Lines / kWays;
    double lines = std::max(1.0, a.width / kLine), sets = lines;
    for (size_t i = at + 1; i < a.loops.size(); ++i) {
        const double s = a.stride[i], n = a.loops[i].n;
        if (s == 0) continue;
        const double step = s < kLine ? 1 : std::fmod(s / kLine, all_sets);  // sets from one line to the next
        const double reached = step == 0 ? 1 : all_sets / (double)std::gcd((int64_t)all_sets, (int64_t)step);
        lines *= s < kLine ? std::max(1.0, n * s / kLine) : n;
        sets *= s < kLine ? std::max(1.0, n * s / kLine) : std::min(n, reached);
    }
    return lines * all_sets / std::min(all_sets, sets);
}

/// The memory's cycles of kernel `k` on the critical worker; adds its lines and jumps to `c`.
double memory(const Kernel& k, const Stmt* split, double pieces, Cost& c) {
    Accesses acc{k, split, pieces, {}, {}, {}};
    acc.stmts(k.body);
    std::map<const Stmt*, double> footprint;  // lines one iteration of a loop touches
    for (const Access& a : acc.all)
        for (size_t i = 0; i < a.loops.size(); ++i) footprint[a.loops[i].s] += lines_within(a, i);
    struct Fetch {
        double lines;
        const Stmt* walk;  // the innermost loop along which the access walks within a page
        double run;        // the lines one such walk fetches
    };
    std::vector<Fetch> fetches;
    std::map<const Stmt*, double> walks;  // the walks interleaved along each loop
    for (const Access& a : acc.all) {
        double total = 1, reuse = 1, interleaved = 1;
        for (const Loop& l : a.loops) total *= l.critical;
        bool moved = false, reusing = true;
        Fetch f{0, nullptr, 1};
        for (size_t i = a.loops.size(); i-- > 0;) {
            const double s = a.stride[i], n = a.loops[i].critical;
            if (reusing && s < kLine) {  // the same line again: the same element, or the next in it
                reusing = (s > 0 && !moved) || footprint[a.loops[i].s] <= kL1Lines;
                if (reusing) reuse *= s == 0 ? n : std::min(n, kLine / s);
            }
            if (s > 0 && s < kPage && !f.walk)
                f = {0, a.loops[i].s, std::max(1.0, std::min(a.loops[i].n * s, kPage) / std::max(s, kLine))};
            if (s >= kPage && !f.walk) interleaved *= a.loops[i].n;
            moved = moved || s > 0;
        }
        f.lines = total / reuse;
        if (f.walk) walks[f.walk] += interleaved;
        fetches.push_back(f);
    }
    double cycles = 0;
    for (const Fetch& f : fetches) {
        const double jumps = !f.walk || walks[f.walk] > kStreams ? f.lines : f.lines / f.run;
        cycles += jumps * kJump + (f.lines - jumps) * kStreamed;
        c.lines += f.lines;
        c.jumps += jumps;
    }
    return cycles;
}

} // namespace

Cost cost(const std::vector<Kernel>& ks, int registers) {
    Cost total;
    for (const Kernel& k : ks) {
        const std::optional<Split> sp = k.split_workers > 1 ? split_loop(k) : std::nullopt;
        const Stmt* split = sp ? sp->loop : nullptr;
        const double pieces = sp ? k.split_workers : 1;
        const Count c = block(k.body, registers, split, pieces);
        const double lines = memory(k, split, pieces, total);
        total.cycles += c.cycles + lines;
        total.memory += lines;
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
