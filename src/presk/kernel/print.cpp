// The text form of a PSK-Kernel (presk dump --stage kernel), as the seed's "PSK-Kernel v0"
// section prints it.
//
//   header     kernel NAME (%0 : f32[batch: 4, 3], %1 : f32[3, 2]) -> %2 : f32[batch: 4, 2] {
//   variables  i<k> loops, s<k> real scalars, n<k> integer scalars, v<k> vectors
//   constants  reals in the shortest text that reads back to the same double (0, 0.5, -inf,
//              nan, 1e+100); integers in decimal
//   load       %1[i1, i2]                 vector load  %1[i1, (i3 * 8)..+4]
//   splat      splat(s0, 4)               vector store %2[i0, (i3 * 8)..+4] = v0
//   unary      exp(x), neg(x), sqrt(x)    to real      real(n0)
//   binary     (a + b) (a - b) (a * b) (a / b) (a % b), max(a, b) min(a, b) pow(a, b)
//   compare    (a < b) (a <= b) (a > b) (a >= b) (a == b) (a != b)
//   select     select(c, a, b)
//   statements for i0 in 0..4 { ... }, s0 = e, %2[i0] = e, if c { ... } else { ... }
//
// A quantised input prints as int8/o[...] or int4/o[...], o the axis its scales are constant
// along (the last: one scale per 32 elements of it, kernel/quant.h).
// A vector load or store writes its last index followed by `..+lanes`: the lanes elements
// from that index along the buffer's last axis. Blocks indent two spaces and close with `}`.
#include <charconv>
#include <string>

#include "kernel/ir.h"

namespace presk::kernel {
namespace {

std::string real_text(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

const char* infix(const std::string& op) {
    if (op == "add") return " + ";
    if (op == "sub") return " - ";
    if (op == "mul") return " * ";
    if (op == "div") return " / ";
    if (op == "mod") return " % ";
    if (op == "lt") return " < ";
    if (op == "le") return " <= ";
    if (op == "gt") return " > ";
    if (op == "ge") return " >= ";
    if (op == "eq") return " == ";
    if (op == "ne") return " != ";
    return nullptr;  // written as a call: max(a, b), pow(a, b)
}

std::string expr(const Expr& e);

// `%b[i, j` + (for a vector access) `..+lanes` + `]`.
std::string access(int buf, const std::vector<ExprP>& index, int lanes) {
    std::string s = "%";
    s += std::to_string(buf) + "[";
    for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + expr(*index[i]);
    if (lanes > 1) s += "..+" + std::to_string(lanes);
    return s + "]";
}

std::string expr(const Expr& e) {
    switch (e.kind) {
    case Expr::Real: return real_text(e.value);
    case Expr::Int: return std::to_string(e.ivalue);
    case Expr::Loop: return "i" + std::to_string(e.ivalue);
    case Expr::Scalar: return (e.integer ? "n" : "s") + std::to_string(e.ivalue);
    case Expr::Vector: return "v" + std::to_string(e.ivalue);
    case Expr::Load: return access(e.buf, e.args, 1);
    case Expr::VLoad: return access(e.buf, e.args, e.lanes);
    case Expr::Splat: return "splat(" + expr(*e.args[0]) + ", " + std::to_string(e.lanes) + ")";
    case Expr::Unary: return e.op + "(" + expr(*e.args[0]) + ")";
    case Expr::Binary:
    case Expr::Compare:
        if (const char* in = infix(e.op)) return "(" + expr(*e.args[0]) + in + expr(*e.args[1]) + ")";
        return e.op + "(" + expr(*e.args[0]) + ", " + expr(*e.args[1]) + ")";
    case Expr::Select:
        return "select(" + expr(*e.args[0]) + ", " + expr(*e.args[1]) + ", " + expr(*e.args[2]) + ")";
    case Expr::ToReal: return "real(" + expr(*e.args[0]) + ")";
    }
    return "?";
}

void block(std::string& out, const std::vector<Stmt>& body, int depth);

void stmt(std::string& out, const Stmt& s, int depth) {
    const std::string pad(2 * depth, ' ');
    switch (s.kind) {
    case Stmt::For:
        out += pad + "for i" + std::to_string(s.var) + " in " + std::to_string(s.lo) + ".." + std::to_string(s.hi) + " {\n";
        block(out, s.body, depth + 1);
        out += pad + "}\n";
        return;
    case Stmt::Assign: {
        const char* ns = s.value->integer ? "n" : s.value->lanes > 1 ? "v" : "s";
        out += pad + ns + std::to_string(s.var) + " = " + expr(*s.value) + "\n";
        return;
    }
    case Stmt::Store:
    case Stmt::VStore:
        out += pad + access(s.buf, s.index, s.kind == Stmt::VStore ? s.value->lanes : 1) + " = " + expr(*s.value) + "\n";
        return;
    case Stmt::If:
        out += pad + "if " + expr(*s.value) + " {\n";
        block(out, s.body, depth + 1);
        if (!s.orelse.empty()) {
            out += pad + "} else {\n";
            block(out, s.orelse, depth + 1);
        }
        out += pad + "}\n";
        return;
    }
}

void block(std::string& out, const std::vector<Stmt>& body, int depth) {
    for (const Stmt& s : body) stmt(out, s, depth);
}

std::string buffer(int k, const BufferType& b) {
    std::string s = "%";
    s += std::to_string(k);
    s += " : ";
    s += dtype_name(b.dtype);
    if (quantised(b.dtype) && !b.axes.empty()) s += "/" + std::to_string(b.axes.size() - 1);  // the scales' axis
    return s + axes_string(b.axes);
}

} // namespace

std::string to_string(const Kernel& k) {
    std::string out = "kernel " + k.name + " (";
    for (size_t i = 0; i < k.inputs.size(); ++i) out += (i ? ", " : "") + buffer((int)i, k.inputs[i]);
    out += ") -> " + buffer(k.out_buf(), k.output) + " {\n";
    block(out, k.body, 1);
    return out + "}\n";
}

} // namespace presk::kernel
