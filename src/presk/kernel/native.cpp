// What every machine-code backend shares about a kernel: the loop a thread split divides, the
// work estimate that decides whether to split, the numbering of accesses that a failure
// reports, and the failure's message.
#include "kernel/native.h"

#include <algorithm>
#include <functional>

#include "kernel/pmath_ops.h"
#include <iterator>
#include <set>

namespace presk::kernel {
namespace {

bool is_loop_var(const ExprP& e, int var) { return e && e->kind == Expr::Loop && e->ivalue == var; }

bool is_int(const ExprP& e) { return e && e->kind == Expr::Int; }

// Whether `e` covers elements [c * i<var> + t, c * i<var> + t + width) with 0 <= t and t +
// width <= c, so that different iterations of the loop touch different elements: i<var> itself
// (c = 1, t = 0) or (i<var> * c) + t with constants.
bool block_of(const ExprP& e, int var, int64_t width) {
    if (is_loop_var(e, var)) return width == 1;
    if (!e || e->kind != Expr::Binary || e->op != "add" || !is_int(e->args[1])) return false;
    const ExprP& m = e->args[0];
    if (m->kind != Expr::Binary || m->op != "mul" || !is_loop_var(m->args[0], var) || !is_int(m->args[1])) return false;
    const int64_t c = m->args[1]->ivalue, t = e->args[1]->ivalue;
    return t >= 0 && width <= c - t;
}

// The positions of the output's axes at which an access indexes it by i<var> (block_of). `ok`
// keeps the positions every access so far shares; a vector access covers `lanes` elements
// along the last axis.
void keep_positions(const std::vector<ExprP>& index, int lanes, int var, std::vector<bool>& ok) {
    for (size_t j = 0; j < ok.size(); ++j)
        ok[j] = ok[j] && j < index.size() && block_of(index[j], var, j + 1 == index.size() ? lanes : 1);
}

void keep_positions(const ExprP& e, int out, int var, std::vector<bool>& ok) {
    if (!e) return;
    if ((e->kind == Expr::Load || e->kind == Expr::VLoad) && e->buf == out) keep_positions(e->args, e->lanes, var, ok);
    for (const ExprP& a : e->args) keep_positions(a, out, var, ok);
}

// Over every load and store of the output in `body`; a store to another buffer (which the
// interpreter refuses) keeps no position.
void keep_positions(const std::vector<Stmt>& body, int out, int var, std::vector<bool>& ok) {
    for (const Stmt& s : body) {
        keep_positions(s.value, out, var, ok);
        for (const ExprP& i : s.index) keep_positions(i, out, var, ok);
        if (s.kind == Stmt::Store || s.kind == Stmt::VStore) {
            if (s.buf == out)
                keep_positions(s.index, s.value->lanes, var, ok);
            else
                ok.assign(ok.size(), false);
        }
        keep_positions(s.body, out, var, ok);
        keep_positions(s.orelse, out, var, ok);
    }
}

// Scalar and vector variables as (0 real, 1 integer, 2 vector; number).
using Var = std::pair<int, int64_t>;

bool reads_assigned(const ExprP& e, const std::set<Var>& assigned) {
    if (!e) return true;
    if (e->kind == Expr::Scalar && !assigned.count({e->integer ? 1 : 0, e->ivalue})) return false;
    if (e->kind == Expr::Vector && !assigned.count({2, e->ivalue})) return false;
    for (const ExprP& a : e->args) {
        if (!reads_assigned(a, assigned)) return false;
    }
    return true;
}

// Whether `body` reads only scalar and vector variables assigned before the read on every
// path through it, `assigned` holding those assigned on entry (and, on return, on exit).
bool assigns_before_reads(const std::vector<Stmt>& body, std::set<Var>& assigned) {
    for (const Stmt& s : body) {
        if (!reads_assigned(s.value, assigned)) return false;
        for (const ExprP& i : s.index) {
            if (!reads_assigned(i, assigned)) return false;
        }
        if (s.kind == Stmt::Assign) assigned.insert({s.value->integer ? 1 : s.value->lanes > 1 ? 2 : 0, s.var});
        if (s.kind == Stmt::For) {
            std::set<Var> inner = assigned;
            if (!assigns_before_reads(s.body, inner)) return false;
            if (s.hi > s.lo) assigned = std::move(inner);
        }
        if (s.kind == Stmt::If) {
            std::set<Var> then = assigned, orelse = assigned;
            if (!assigns_before_reads(s.body, then) || !assigns_before_reads(s.orelse, orelse)) return false;
            assigned.clear();
            std::set_intersection(then.begin(), then.end(), orelse.begin(), orelse.end(),
                                  std::inserter(assigned, assigned.end()));
        }
    }
    return true;
}

double expr_work(const ExprP& e) {
    if (!e) return 0;
    double w = (e->kind == Expr::Unary || e->kind == Expr::Binary) && pmath_op(e->op) ? 16 : 1;
    for (const ExprP& a : e->args) w += expr_work(a);
    return w;
}

double body_work(const std::vector<Stmt>& body) {
    double w = 0;
    for (const Stmt& s : body) {
        switch (s.kind) {
        case Stmt::For: w += (double)(s.hi > s.lo ? s.hi - s.lo : 0) * (1 + body_work(s.body)); break;
        case Stmt::If: w += expr_work(s.value) + std::max(body_work(s.body), body_work(s.orelse)); break;
        default:
            w += 1 + expr_work(s.value);
            for (const ExprP& i : s.index) w += expr_work(i);
        }
    }
    return w;
}

} // namespace

std::optional<Split> split_loop(const Kernel& k) {
    const std::vector<Stmt>* level = &k.body;
    for (int d = 0; d < k.split_depth; ++d) {
        if (level->size() != 1 || (*level)[0].kind != Stmt::For) return std::nullopt;
        level = &(*level)[0].body;
    }
    if (k.split_depth < 0 || level->size() != 1 || (*level)[0].kind != Stmt::For) return std::nullopt;
    const Stmt& f = (*level)[0];
    if (f.hi - f.lo < 2) return std::nullopt;
    std::vector<bool> ok(k.output.axes.size(), true);
    keep_positions(f.body, k.out_buf(), f.var, ok);
    if (std::find(ok.begin(), ok.end(), true) == ok.end()) return std::nullopt;
    std::set<Var> assigned;
    if (!assigns_before_reads(f.body, assigned)) return std::nullopt;
    return Split{f.var, f.lo, f.hi, &f};
}

double work(const Kernel& k) { return body_work(k.body); }

std::string status_message(const Kernel& k, int status, const int64_t* err) {
    const std::string head = "kernel " + k.name + ": ";
    switch (status) {
    case PRESK_OK: return head + "no failure";
    case PRESK_INDEX_OUT_OF_RANGE: {
        // Find access err[0] in text order (statements in order; an expression's loads
        // depth first, left to right; a store's index and value before the store itself).
        int64_t n = 0;
        int buf = -1;
        int64_t size = -1;
        std::function<void(const ExprP&)> ex = [&](const ExprP& e) {
            if (!e || buf >= 0) return;
            for (const ExprP& a : e->args) ex(a);
            if (e->kind == Expr::Load || e->kind == Expr::VLoad) {
                if (n++ == err[0]) buf = e->buf;
            }
        };
        std::function<void(const std::vector<Stmt>&)> st = [&](const std::vector<Stmt>& body) {
            for (const Stmt& s : body) {
                if (buf >= 0) return;
                for (const ExprP& i : s.index) ex(i);
                ex(s.value);
                if ((s.kind == Stmt::Store || s.kind == Stmt::VStore) && buf < 0 && n++ == err[0]) buf = s.buf;
                st(s.body);
                st(s.orelse);
            }
        };
        st(k.body);
        if (buf >= 0) {
            const BufferType& t = buf == k.out_buf() ? k.output : k.inputs[(size_t)buf];
            if (err[1] >= 0 && (size_t)err[1] < t.axes.size()) size = t.axes[(size_t)err[1]].size;
        }
        return head + "%" + std::to_string(buf) + " index " + std::to_string(err[2]) + " out of range: axis " +
               std::to_string(err[1]) + " has size " + std::to_string(size);
    }
    case PRESK_INT_OVERFLOW: return head + "integer overflow";
    case PRESK_DIV_BY_ZERO: return head + (err[0] == 0 ? "integer division by zero" : "integer remainder by zero");
    default: return head + "failed with status " + std::to_string(status);
    }
}

} // namespace presk::kernel
