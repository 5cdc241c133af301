// PSK-Kernel v0: type names and the checked constructors of expressions and statements.
//
// The constructors set `integer` and `lanes` from their operands and refuse what no kernel
// may hold (a real index, a vector condition, an integer `pow`), throwing presk::Error with a
// message that starts "kernel IR:". An expression is a vector exactly when lanes > 1.
#include "kernel/ir.h"

#include <algorithm>

#include "lang/source.h"

namespace presk::kernel {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error({}, "kernel IR: " + msg); }

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return op == n; });
}

ExprP make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

void need(const ExprP& e, const char* what) {
    if (!e) fail(std::string(what) + ": a null operand");
}

// Index expressions are scalar integers.
void check_index(const std::vector<ExprP>& index, const char* what) {
    for (const ExprP& e : index) {
        need(e, what);
        if (!e->integer || e->lanes != 1) fail(std::string(what) + ": an index must be a scalar integer");
    }
}

void check_lanes(int lanes, const char* what) {
    if (lanes < 2) fail(std::string(what) + ": a vector has at least 2 lanes, not " + std::to_string(lanes));
}

} // namespace

const char* dtype_name(DType t) {
    switch (t) {
    case DType::F64: return "f64";
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
    case DType::I64: return "i64";
    case DType::I8: return "int8";
    case DType::I4: return "int4";
    }
    return "?";
}

bool quantised(DType t) { return t == DType::I8 || t == DType::I4; }

DType arith_type(DType t) { return t == DType::F64 ? DType::F64 : t == DType::I64 ? DType::I64 : DType::F32; }

ExprP real(double v) {
    Expr e;
    e.kind = Expr::Real;
    e.value = v;
    return make(std::move(e));
}

ExprP integer(int64_t v) {
    Expr e;
    e.kind = Expr::Int;
    e.ivalue = v;
    e.integer = true;
    return make(std::move(e));
}

ExprP loop_var(int i) {
    if (i < 0) fail("loop variable i" + std::to_string(i));
    Expr e;
    e.kind = Expr::Loop;
    e.ivalue = i;
    e.integer = true;
    return make(std::move(e));
}

ExprP scalar_var(int s, bool is_integer) {
    if (s < 0) fail("scalar variable " + std::to_string(s));
    Expr e;
    e.kind = Expr::Scalar;
    e.ivalue = s;
    e.integer = is_integer;
    return make(std::move(e));
}

ExprP vector_var(int v, int lanes) {
    if (v < 0) fail("vector variable " + std::to_string(v));
    check_lanes(lanes, "vector variable");
    Expr e;
    e.kind = Expr::Vector;
    e.ivalue = v;
    e.lanes = lanes;
    return make(std::move(e));
}

ExprP load(int buf, std::vector<ExprP> index, bool is_integer) {
    if (buf < 0) fail("load from buffer " + std::to_string(buf));
    check_index(index, "load");
    Expr e;
    e.kind = Expr::Load;
    e.buf = buf;
    e.integer = is_integer;
    e.args = std::move(index);
    return make(std::move(e));
}

ExprP vload(int buf, std::vector<ExprP> index, int lanes) {
    if (buf < 0) fail("vector load from buffer " + std::to_string(buf));
    check_lanes(lanes, "vector load");
    if (index.empty()) fail("vector load: a buffer without axes has no last axis");
    check_index(index, "vector load");
    Expr e;
    e.kind = Expr::VLoad;
    e.buf = buf;
    e.lanes = lanes;
    e.args = std::move(index);
    return make(std::move(e));
}

ExprP splat(ExprP x, int lanes) {
    need(x, "splat");
    check_lanes(lanes, "splat");
    if (x->integer || x->lanes != 1) fail("splat: the operand must be a scalar real");
    Expr e;
    e.kind = Expr::Splat;
    e.lanes = lanes;
    e.args = {std::move(x)};
    return make(std::move(e));
}

ExprP unary(const std::string& op, ExprP x) {
    need(x, "unary");
    if (x->integer ? op != "neg" : !one_of(op, {"neg", "exp", "log", "tanh", "sin", "cos", "sqrt", "erf", "erfc"}))
        fail("unary `" + op + "` on " + (x->integer ? "an integer" : "a real"));
    Expr e;
    e.kind = Expr::Unary;
    e.op = op;
    e.integer = x->integer;
    e.lanes = x->lanes;
    e.args = {std::move(x)};
    return make(std::move(e));
}

ExprP binary(const std::string& op, ExprP a, ExprP b) {
    need(a, "binary");
    need(b, "binary");
    if (a->integer != b->integer) fail("binary `" + op + "` of an integer and a real");
    if (a->lanes != b->lanes)
        fail("binary `" + op + "` of " + std::to_string(a->lanes) + " and " + std::to_string(b->lanes) + " lanes");
    const bool ok = a->integer ? one_of(op, {"add", "sub", "mul", "div", "mod", "min", "max"})
                               : one_of(op, {"add", "sub", "mul", "div", "pow", "max", "min"});
    if (!ok) fail("binary `" + op + "` on " + (a->integer ? "integers" : "reals"));
    Expr e;
    e.kind = Expr::Binary;
    e.op = op;
    e.integer = a->integer;
    e.lanes = a->lanes;
    e.args = {std::move(a), std::move(b)};
    return make(std::move(e));
}

ExprP compare(const std::string& op, ExprP a, ExprP b) {
    need(a, "compare");
    need(b, "compare");
    if (!one_of(op, {"lt", "le", "gt", "ge", "eq", "ne"})) fail("comparison `" + op + "`");
    if (a->integer != b->integer) fail("comparison `" + op + "` of an integer and a real");
    if (a->lanes != 1 || b->lanes != 1) fail("comparison `" + op + "` of vectors");
    Expr e;
    e.kind = Expr::Compare;
    e.op = op;
    e.integer = true;
    e.args = {std::move(a), std::move(b)};
    return make(std::move(e));
}

ExprP select(ExprP cond, ExprP a, ExprP b) {
    need(cond, "select");
    need(a, "select");
    need(b, "select");
    if (!cond->integer || cond->lanes != 1) fail("select: the condition must be a scalar integer");
    if (a->integer != b->integer || a->lanes != b->lanes) fail("select: the two branches differ in type");
    Expr e;
    e.kind = Expr::Select;
    e.integer = a->integer;
    e.lanes = a->lanes;
    e.args = {std::move(cond), std::move(a), std::move(b)};
    return make(std::move(e));
}

ExprP to_real(ExprP i) {
    need(i, "real");
    if (!i->integer || i->lanes != 1) fail("real: the operand must be a scalar integer");
    Expr e;
    e.kind = Expr::ToReal;
    e.args = {std::move(i)};
    return make(std::move(e));
}

Stmt for_loop(int var, int64_t lo, int64_t hi, std::vector<Stmt> body) {
    if (var < 0) fail("loop variable i" + std::to_string(var));
    if (lo > hi) fail("for i" + std::to_string(var) + " in " + std::to_string(lo) + ".." + std::to_string(hi));
    Stmt s;
    s.kind = Stmt::For;
    s.var = var;
    s.lo = lo;
    s.hi = hi;
    s.body = std::move(body);
    return s;
}

Stmt assign(int var, ExprP value) {
    need(value, "assignment");
    if (var < 0) fail("assignment to variable " + std::to_string(var));
    Stmt s;
    s.kind = Stmt::Assign;
    s.var = var;
    s.value = std::move(value);
    return s;
}

Stmt store(int buf, std::vector<ExprP> index, ExprP value) {
    need(value, "store");
    if (buf < 0) fail("store to buffer " + std::to_string(buf));
    if (value->lanes != 1) fail("store of a vector (a vector store is vstore)");
    check_index(index, "store");
    Stmt s;
    s.kind = Stmt::Store;
    s.buf = buf;
    s.index = std::move(index);
    s.value = std::move(value);
    return s;
}

Stmt vstore(int buf, std::vector<ExprP> index, ExprP value) {
    need(value, "vector store");
    if (buf < 0) fail("vector store to buffer " + std::to_string(buf));
    if (value->lanes < 2) fail("vector store of a scalar");
    if (index.empty()) fail("vector store: a buffer without axes has no last axis");
    check_index(index, "vector store");
    Stmt s;
    s.kind = Stmt::VStore;
    s.buf = buf;
    s.index = std::move(index);
    s.value = std::move(value);
    return s;
}

Stmt if_else(ExprP cond, std::vector<Stmt> then, std::vector<Stmt> orelse) {
    need(cond, "if");
    if (!cond->integer || cond->lanes != 1) fail("if: the condition must be a scalar integer");
    Stmt s;
    s.kind = Stmt::If;
    s.value = std::move(cond);
    s.body = std::move(then);
    s.orelse = std::move(orelse);
    return s;
}

} // namespace presk::kernel
