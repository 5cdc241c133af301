// What every machine-code backend shares about a kernel: the loop a thread split divides, the
// work estimate that decides whether to split, the numbering of accesses that a failure
// reports, and the failure's message.
#include "kernel/native.h"

#include <functional>

namespace presk::kernel {
namespace {

bool is_loop_var(const ExprP& e, int var) { return e && e->kind == Expr::Loop && e->ivalue == var; }

// Whether every store to the output in `body` has `var` itself as one index component.
bool stores_by(const std::vector<Stmt>& body, int out, int var) {
    for (const Stmt& s : body) {
        if (s.kind == Stmt::Store || s.kind == Stmt::VStore) {
            if (s.buf != out) return false;  // not reached: only the output is stored to
            bool found = false;
            for (const ExprP& i : s.index) found = found || is_loop_var(i, var);
            if (!found) return false;
        }
        if (!stores_by(s.body, out, var) || !stores_by(s.orelse, out, var)) return false;
    }
    return true;
}

// Whether a load of the output in `body` (or its expressions) indexes it other than by `var`
// in the same component a store does. The output may be read only where this iteration writes.
bool reads_other(const ExprP& e, int out, int var) {
    if (!e) return false;
    if ((e->kind == Expr::Load || e->kind == Expr::VLoad) && e->buf == out) {
        bool found = false;
        for (const ExprP& i : e->args) found = found || is_loop_var(i, var);
        if (!found) return true;
    }
    for (const ExprP& a : e->args) {
        if (reads_other(a, out, var)) return true;
    }
    return false;
}

bool reads_other(const std::vector<Stmt>& body, int out, int var) {
    for (const Stmt& s : body) {
        if (reads_other(s.value, out, var)) return true;
        for (const ExprP& i : s.index) {
            if (reads_other(i, out, var)) return true;
        }
        if (reads_other(s.body, out, var) || reads_other(s.orelse, out, var)) return true;
    }
    return false;
}

bool is_pmath(const std::string& op) {
    return op == "exp" || op == "log" || op == "tanh" || op == "sin" || op == "cos" || op == "erf" || op == "erfc" ||
           op == "pow";
}

double expr_work(const ExprP& e) {
    if (!e) return 0;
    double w = (e->kind == Expr::Unary || e->kind == Expr::Binary) && is_pmath(e->op) ? 16 : 1;
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
    if (k.body.size() != 1 || k.body[0].kind != Stmt::For) return std::nullopt;
    const Stmt& f = k.body[0];
    if (f.hi - f.lo < 2) return std::nullopt;
    if (!stores_by(f.body, k.out_buf(), f.var) || reads_other(f.body, k.out_buf(), f.var)) return std::nullopt;
    return Split{f.var, f.lo, f.hi};
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
