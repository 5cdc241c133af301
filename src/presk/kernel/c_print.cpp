// The C printer. Every expression node becomes one C statement into a temporary (t<k>, or
// t<k>_<j> per lane of a vector), in the kernel interpreter's order of evaluation: operands left
// to right before the operation, a select's three operands all evaluated, a store's value
// before its index, an access's index before its bounds checks. So a kernel that fails fails at
// the interpreter's first failing step. Accesses are numbered as native.cpp's status_message
// numbers them (text order: a statement's index loads, its value loads, then its store).
//
// Integer expressions carry their interval (kernel/bounds.h: from the loop bounds and the
// constants; a variable or a loaded integer may be anything): an operation that cannot
// overflow on it is a plain C operation, others use __builtin_*_overflow; a division checks
// only the failures its operands' intervals allow; an index whose interval lies within its
// axis is not checked.
#include "kernel/c_print.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "kernel/bounds.h"
#include "kernel/quant.h"
#include "kernel/eval.h"
#include "kernel/native.h"
#include "lang/source.h"

namespace presk::kernel {
namespace {

/// An expression's value: one C operand per lane (a temporary, a variable or a literal) and,
/// for an integer, its interval.
struct Val {
    std::vector<std::string> lane;
    Interval interval;
};

std::string int_lit(int64_t v) {
    if (v == INT64_MIN) return "INT64_MIN";
    if (v < 0) return "(-INT64_C(" + std::to_string(-v) + "))";
    return "INT64_C(" + std::to_string(v) + ")";
}

std::string hex(uint64_t v, int digits) {
    static const char d[] = "0123456789abcdef";
    std::string s((size_t)digits, '0');
    for (int i = digits; i-- > 0; v >>= 4) s[(size_t)i] = d[v & 15];
    return s;
}

/// A finite double as an exact C hexadecimal floating literal ("0x1.8p+1", "-0x0p+0").
std::string hex_double(double x) {
    const auto u = std::bit_cast<uint64_t>(x);
    const int e = (int)((u >> 52) & 0x7ff);
    std::string m = hex(u & ((uint64_t(1) << 52) - 1), 13);
    while (!m.empty() && m.back() == '0') m.pop_back();
    std::string s = u >> 63 ? "-0x" : "0x";
    s += e == 0 ? "0" : "1";
    if (!m.empty()) s += "." + m;
    const int exp = e == 0 ? (m.empty() ? 0 : -1022) : e - 1023;
    return s + "p" + (exp < 0 ? "-" : "+") + std::to_string(exp < 0 ? -exp : exp);
}

bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit((unsigned char)s[0])) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

const char* storage_type(DType t) {
    switch (t) {
    case DType::F64: return "double";
    case DType::F32: return "float";
    case DType::BF16: return "uint16_t";
    case DType::I64: return "int64_t";
    case DType::I8:
    case DType::I4: return "uint8_t";  // the blocks' bytes (kernel/quant.h)
    }
    return "?";
}

int64_t loads_in(const ExprP& e) {
    if (!e) return 0;
    int64_t n = e->kind == Expr::Load || e->kind == Expr::VLoad ? 1 : 0;
    for (const ExprP& a : e->args) n += loads_in(a);
    return n;
}

int64_t loads_in(const std::vector<ExprP>& es) {
    int64_t n = 0;
    for (const ExprP& e : es) n += loads_in(e);
    return n;
}

// What every printed kernel defines before its function: the status codes of native.h, the
// bf16 conversions of src/quant/fp16.h and the reals of given bits (for non-finite constants).
std::string prelude() {
    const std::string checks = R"c(#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pmath.h"

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != 16
#error "presk kernels need float and double arithmetic in their own types (FLT_EVAL_METHOD 0)"
#endif
#if defined(__FAST_MATH__)
#error "presk kernels must not be compiled with -ffast-math"
#endif

)c";
    const std::string helpers = R"c(
/* bf16 bits -> float (exact); float -> bf16 bits, nearest even, a NaN quieted. */
static inline float presk_bf16_widen(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t presk_bf16_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
/* The real of bits u (the constants that are not finite). */
static inline float presk_f32_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline double presk_f64_bits(uint64_t u) {
    double d;
    memcpy(&d, &u, 8);
    return d;
}
/* The f16 scale at the start of a quantised block as a float, exactly: its bits moved into a
   float's ((h & 0x7FFF) << 13, times 2^112 for the exponent's bias), infinities and NaNs set
   apart, the sign put back. */
static inline float presk_quant_scale(const uint8_t* block) {
    uint16_t h;
    memcpy(&h, block, 2);
    const uint32_t mag = (uint32_t)(h & 0x7FFFu) << 13;
    uint32_t bits;
    if ((h & 0x7C00u) == 0x7C00u) {
        bits = mag | 0x7F800000u;
    } else {
        const float f = presk_f32_bits(mag) * 0x1p112f;
        memcpy(&bits, &f, 4);
    }
    return presk_f32_bits(bits | (uint32_t)(h & 0x8000u) << 16);
}
/* Element k of GGUF q8_0 / q4_0 blocks (kernel/quant.h) as float(q) * s, exact. */
static inline float presk_q8_0(const uint8_t* b, int64_t k) {
    const uint8_t* block = b + k / PRESK_QK * (2 + PRESK_QK);
    return (float)(int8_t)block[2 + k % PRESK_QK] * presk_quant_scale(block);
}
static inline float presk_q4_0(const uint8_t* b, int64_t k) {
    const uint8_t* block = b + k / PRESK_QK * (2 + PRESK_QK / 2);
    const int64_t j = k % PRESK_QK;
    return (float)((int32_t)((block[2 + j % (PRESK_QK / 2)] >> (j / (PRESK_QK / 2) * 4)) & 15) - 8) * presk_quant_scale(block);
}
)c";
    return checks + "enum { PRESK_OK = " + std::to_string(PRESK_OK) + ", PRESK_INDEX_OUT_OF_RANGE = " +
           std::to_string(PRESK_INDEX_OUT_OF_RANGE) + ", PRESK_INT_OVERFLOW = " + std::to_string(PRESK_INT_OVERFLOW) +
           ", PRESK_DIV_BY_ZERO = " + std::to_string(PRESK_DIV_BY_ZERO) + ", PRESK_QK = " + std::to_string(kQuantBlock) +
           " };\n" + helpers;
}

class Printer {
public:
    Printer(const Kernel& k, std::string fn) : k_(k), fn_(std::move(fn)), f64_(arith_type(k.dtype) == DType::F64) {}

    /// The kernel's text as a comment, then its function.
    std::string print() {
        split_ = split_loop(k_);
        depth_ = 1;
        block(k_.body);
        std::string s;
        const std::string text = to_string(k_);
        for (size_t at = 0; at < text.size();) {
            size_t end = text.find('\n', at);
            if (end == std::string::npos) end = text.size();
            std::string line = text.substr(at, end - at);
            for (size_t q; (q = line.find("??")) != std::string::npos;) line.replace(q, 2, "? ?");  // no trigraph
            if (!line.empty() && line.back() == '\\') line += '.';                            // no splice
            s += "// " + line + "\n";
            at = end + 1;
        }
        s += "int " + fn_ + "(void* const* bufs, int64_t lo, int64_t hi, int64_t* err) {\n";
        for (int b = 0; b <= k_.out_buf(); ++b) {
            const bool out = b == k_.out_buf();
            const std::string t = storage_type(buffer(b).dtype);
            const std::string ct = out ? t : "const " + t;
            s +=
                "    " + ct + "* restrict b" + std::to_string(b) + " = (" + ct + "*)bufs[" + std::to_string(b) + "];\n";
        }
        if (split_) {
            s += "    const int64_t lo_ = lo < " + int_lit(split_->lo) + " ? " + int_lit(split_->lo) + " : lo;\n";
            s += "    const int64_t hi_ = hi > " + int_lit(split_->hi) + " ? " + int_lit(split_->hi) + " : hi;\n";
        }
        s += "    (void)lo;\n    (void)hi;\n    (void)err;\n";
        for (int v : reals_) s += "    " + R() + " s" + std::to_string(v) + " = 0;\n";
        for (int v : ints_) s += "    int64_t n" + std::to_string(v) + " = 0;\n";
        for (auto [v, lanes] : vecs_)
            for (int j = 0; j < lanes; ++j)
                s += "    " + R() + " v" + std::to_string(v) + "_" + std::to_string(j) + " = 0;\n";
        s += body_;
        s += "    return PRESK_OK;\n}\n";
        return s;
    }

private:
    const Kernel& k_;
    const std::string fn_;
    const bool f64_;  // the arithmetic type is double (else float)
    std::optional<Split> split_;
    std::string body_;
    int depth_ = 1;
    int temps_ = 0;
    int64_t access_ = 0;             // the number of the next access (status_message's numbering)
    LoopIntervals loops_;            // the loops around the statement printed
    std::set<int> reals_, ints_;     // scalar variables used
    std::map<int, int> vecs_;        // vector variables used, with their lanes

    std::string R() const { return f64_ ? "double" : "float"; }
    const BufferType& buffer(int b) const { return b == k_.out_buf() ? k_.output : k_.inputs[(size_t)b]; }

    void line(const std::string& s) { body_.append((size_t)depth_ * 4, ' ').append(s).append("\n"); }

    std::string temp(int lanes, int j, int id) const {
        return "t" + std::to_string(id) + (lanes > 1 ? "_" + std::to_string(j) : std::string());
    }

    // A real constant rounded once to the arithmetic type, exactly.
    std::string real_lit(double v) const {
        if (f64_) {
            if (std::isfinite(v)) return std::signbit(v) ? "(" + hex_double(v) + ")" : hex_double(v);
            return "presk_f64_bits(UINT64_C(0x" + hex(std::bit_cast<uint64_t>(v), 16) + "))";
        }
        const auto f = (float)v;
        if (std::isfinite(f)) return std::signbit(f) ? "(" + hex_double(f) + "f)" : hex_double(f) + "f";
        return "presk_f32_bits(UINT32_C(0x" + hex(std::bit_cast<uint32_t>(f), 8) + "))";
    }

    // One real C value per lane, each a new temporary `R t = f(lane j)`.
    template <class F>
    Val real_lanes(int lanes, F f) {
        Val v;
        const int id = temps_++;
        for (int j = 0; j < lanes; ++j) {
            v.lane.push_back(temp(lanes, j, id));
            line("const " + R() + " " + v.lane.back() + " = " + f(j) + ";");
        }
        return v;
    }

    Val int_val(const std::string& c, Interval r) {
        Val v;
        v.lane = {temp(1, 0, temps_++)};
        v.interval = r;
        line("const int64_t " + v.lane[0] + " = " + c + ";");
        return v;
    }

    // An integer operation that may overflow: __builtin_<op>_overflow into a new temporary.
    Val checked(const char* op, const std::string& a, const std::string& b, Interval r) {
        Val v;
        v.lane = {temp(1, 0, temps_++)};
        v.interval = r;
        line("int64_t " + v.lane[0] + ";");
        line(std::string("if (__builtin_") + op + "_overflow(" + a + ", " + b + ", &" + v.lane[0] +
             ")) return PRESK_INT_OVERFLOW;");
        return v;
    }

    // The checks of an access to `buf` at `idx` (`lanes` elements along the last axis) and its
    // element offset, a new temporary.
    std::string access(int buf, const std::vector<Val>& idx, int lanes, int64_t number) {
        const BufferType& t = buffer(buf);
        std::string off;
        int64_t stride = 1;
        for (size_t j = idx.size(); j-- > 0;) {
            const std::string& x = idx[j].lane[0];
            off = off.empty() ? (stride == 1 ? x : x + " * " + int_lit(stride))
                              : (stride == 1 ? x : x + " * " + int_lit(stride)) + " + " + off;
            stride *= t.axes[j].size;  // cannot overflow: Compiled checked the element counts
        }
        for (size_t j = 0; j < idx.size(); ++j) {
            const int64_t last = t.axes[j].size - (j + 1 == idx.size() ? lanes : 1);
            if (idx[j].interval.within(0, last)) continue;
            const std::string& x = idx[j].lane[0];
            line("if (" + x + " < 0 || " + x + " > " + int_lit(last) + ") {");
            line("    err[0] = " + int_lit(number) + ";");
            line("    err[1] = " + int_lit((int64_t)j) + ";");
            line("    err[2] = " + x + ";");
            line("    return PRESK_INDEX_OUT_OF_RANGE;");
            line("}");
        }
        const std::string o = "o" + std::to_string(temps_++);
        line("const int64_t " + o + " = " + (off.empty() ? "0" : off) + ";");
        return o;
    }

    std::vector<Val> exprs(const std::vector<ExprP>& es) {
        std::vector<Val> v;
        for (const ExprP& e : es) v.push_back(expr(*e));
        return v;
    }

    Val expr(const Expr& e) {
        switch (e.kind) {
        case Expr::Real: return {{real_lit(e.value)}, {}};
        case Expr::Int: return {{int_lit(e.ivalue)}, Interval::point(e.ivalue)};
        case Expr::Loop: return {{"i" + std::to_string(e.ivalue)}, loops_.of((int)e.ivalue).value_or(Interval{})};
        case Expr::Scalar:
            (e.integer ? ints_ : reals_).insert((int)e.ivalue);
            return {{(e.integer ? "n" : "s") + std::to_string(e.ivalue)}, {}};
        case Expr::Vector: {
            vecs_[(int)e.ivalue] = e.lanes;
            Val v;
            for (int j = 0; j < e.lanes; ++j)
                v.lane.push_back("v" + std::to_string(e.ivalue) + "_" + std::to_string(j));
            return v;
        }
        case Expr::Load:
        case Expr::VLoad: {
            const std::vector<Val> idx = exprs(e.args);
            const int64_t number = access_++;
            const std::string o = access(e.buf, idx, e.lanes, number);
            const std::string b = "b" + std::to_string(e.buf);
            if (e.integer) return int_val(b + "[" + o + "]", {});
            const DType t = buffer(e.buf).dtype;
            return real_lanes(e.lanes, [&](int j) {
                const std::string k = o + (j ? " + " + std::to_string(j) : "");
                const std::string at = b + "[" + k + "]";
                std::string f = t == DType::BF16 ? "presk_bf16_widen(" + at + ")" : at;
                if (quantised(t)) f = std::string(t == DType::I8 ? "presk_q8_0(" : "presk_q4_0(") + b + ", " + k + ")";
                return (t == DType::F64) == f64_ && t != DType::BF16 ? f : "(" + R() + ")" + f;
            });
        }
        case Expr::Splat: {
            const Val a = expr(*e.args[0]);
            return {std::vector<std::string>((size_t)e.lanes, a.lane[0]), {}};
        }
        case Expr::Unary:
        case Expr::Binary: return e.integer ? int_op(e) : real_op(e);
        case Expr::Compare: {
            static const std::map<std::string, std::string> c = {{"lt", "<"}, {"le", "<="}, {"gt", ">"},
                                                                {"ge", ">="}, {"eq", "=="}, {"ne", "!="}};
            const Val a = expr(*e.args[0]);
            const Val b = expr(*e.args[1]);
            return int_val("(" + a.lane[0] + " " + c.at(e.op) + " " + b.lane[0] + ")", kTruth);
        }
        case Expr::Select: {
            const Val c = expr(*e.args[0]);
            const Val a = expr(*e.args[1]);
            const Val b = expr(*e.args[2]);
            auto pick = [&](int j) {
                return "(" + c.lane[0] + " != 0 ? " + a.lane[(size_t)j] + " : " + b.lane[(size_t)j] + ")";
            };
            if (e.integer) return int_val(pick(0), hull(a.interval, b.interval));
            return real_lanes(e.lanes, pick);
        }
        case Expr::ToReal: {
            const Val a = expr(*e.args[0]);
            return real_lanes(1, [&](int) { return "(" + R() + ")" + a.lane[0]; });
        }
        }
        throw Error({}, "kernel " + k_.name + ": an unknown expression");
    }

    Val real_op(const Expr& e) {
        const Val a = expr(*e.args[0]);
        const Val b = e.args.size() > 1 ? expr(*e.args[1]) : Val{};
        const std::string f = f64_ ? "" : "f";
        static const std::map<std::string, std::string> infix = {
            {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"div", "/"}};
        return real_lanes(e.lanes, [&](int j) -> std::string {
            const std::string& x = a.lane[(size_t)j];
            if (e.kind == Expr::Unary) {
                if (e.op == "neg") return "(-" + x + ")";
                if (e.op == "sqrt") return "sqrt" + f + "(" + x + ")";
                return "presk_" + e.op + f + "(" + x + ")";  // exp log tanh sin cos erf erfc
            }
            const std::string& y = b.lane[(size_t)j];
            if (infix.count(e.op)) return "(" + x + " " + infix.at(e.op) + " " + y + ")";
            if (e.op == "max") return "(" + y + " > " + x + " ? " + y + " : " + x + ")";
            if (e.op == "min") return "(" + y + " < " + x + " ? " + y + " : " + x + ")";
            return "presk_pow" + f + "(" + x + ", " + y + ")";
        });
    }

    Val int_op(const Expr& e) {
        const Val a = expr(*e.args[0]);
        const std::string& x = a.lane[0];
        if (e.kind == Expr::Unary) {  // neg
            const std::optional<IntStep> s = int_unary(e.op, a.interval);
            if (!s) throw Error({}, "kernel " + k_.name + ": no integer operation `" + e.op + "`");
            if (!s->overflow) return int_val("(-" + x + ")", s->value);
            return checked("sub", "(int64_t)0", x, s->value);
        }
        const Val b = expr(*e.args[1]);
        const std::string& y = b.lane[0];
        const std::optional<IntStep> s = int_binary(e.op, a.interval, b.interval);
        if (!s) throw Error({}, "kernel " + k_.name + ": no integer operation `" + e.op + "`");
        if (e.op == "add" || e.op == "sub" || e.op == "mul") {
            static const std::map<std::string, std::string> infix = {{"add", "+"}, {"sub", "-"}, {"mul", "*"}};
            if (!s->overflow) return int_val("(" + x + " " + infix.at(e.op) + " " + y + ")", s->value);
            return checked(e.op.c_str(), x, y, s->value);
        }
        if (e.op == "min") return int_val("(" + y + " < " + x + " ? " + y + " : " + x + ")", s->value);
        if (e.op == "max") return int_val("(" + x + " < " + y + " ? " + y + " : " + x + ")", s->value);
        // div, mod: a zero divisor, then INT64_MIN by -1, as the interpreter checks them.
        const bool div = e.op == "div";
        if (s->zero_divisor) {
            line("if (" + y + " == 0) {");
            line(std::string("    err[0] = ") + (div ? "0" : "1") + ";");
            line("    return PRESK_DIV_BY_ZERO;");
            line("}");
        }
        if (s->overflow) line("if (" + x + " == INT64_MIN && " + y + " == -1) return PRESK_INT_OVERFLOW;");
        return int_val("(" + x + (div ? " / " : " % ") + y + ")", s->value);
    }

    void block(const std::vector<Stmt>& body) {
        for (const Stmt& s : body) stmt(s);
    }

    void stmt(const Stmt& s) {
        switch (s.kind) {
        case Stmt::For: {
            const bool split = split_ && &s == split_->loop;
            const std::string v = "i" + std::to_string(s.var);
            line("for (int64_t " + v + " = " + (split ? "lo_" : int_lit(s.lo)) + "; " + v + " < " +
                 (split ? "hi_" : int_lit(s.hi)) + "; ++" + v + ") {");
            loops_.enter(s);
            ++depth_;
            block(s.body);
            --depth_;
            loops_.leave(s);
            line("}");
            return;
        }
        case Stmt::Assign: {
            const Expr& e = *s.value;
            const Val v = expr(e);
            if (e.integer) {
                ints_.insert(s.var);
                line("n" + std::to_string(s.var) + " = " + v.lane[0] + ";");
            } else if (e.lanes > 1) {
                vecs_[s.var] = e.lanes;
                for (int j = 0; j < e.lanes; ++j)
                    line("v" + std::to_string(s.var) + "_" + std::to_string(j) + " = " + v.lane[(size_t)j] + ";");
            } else {
                reals_.insert(s.var);
                line("s" + std::to_string(s.var) + " = " + v.lane[0] + ";");
            }
            return;
        }
        case Stmt::Store:
        case Stmt::VStore: {
            const Expr& e = *s.value;
            const int64_t first = access_;
            access_ = first + loads_in(s.index);  // the value's loads are numbered after the index's
            const Val v = expr(e);
            const int64_t number = access_;
            access_ = first;
            const std::vector<Val> idx = exprs(s.index);
            access_ = number + 1;
            const std::string o = access(s.buf, idx, e.lanes, number);
            const DType t = buffer(s.buf).dtype;
            for (int j = 0; j < e.lanes; ++j) {
                const std::string& x = v.lane[(size_t)j];
                const std::string val = t == DType::BF16 ? "presk_bf16_round((float)" + x + ")"
                                        : t == DType::I64 || (t == DType::F64) == f64_
                                            ? x
                                            : "(" + std::string(storage_type(t)) + ")" + x;
                line("b" + std::to_string(s.buf) + "[" + o + (j ? " + " + std::to_string(j) : "") + "] = " + val + ";");
            }
            return;
        }
        case Stmt::If: {
            const Val c = expr(*s.value);
            line("if (" + c.lane[0] + " != 0) {");
            ++depth_;
            block(s.body);
            --depth_;
            if (!s.orelse.empty()) {
                line("} else {");
                ++depth_;
                block(s.orelse);
                --depth_;
            }
            line("}");
            return;
        }
        }
    }
};

} // namespace

std::string print_c(const Kernel& k, const std::string& fn) { return print_c({&k}, {fn}); }

std::string print_c(const std::vector<const Kernel*>& ks, const std::vector<std::string>& fns) {
    std::string s = "// kernel/c_print.cpp: PSK-Kernel as C, computing the kernel interpreter's bits.\n" + prelude();
    for (size_t i = 0; i < ks.size(); ++i) {
        const Kernel& k = *ks[i];
        const std::string fn = i < fns.size() ? fns[i] : "";
        if (!is_identifier(fn)) throw Error({}, "kernel " + k.name + ": `" + fn + "` is not a C identifier");
        Compiled check(k);  // throws for a kernel the interpreter would refuse
        s += "\n" + Printer(k, fn).print();
    }
    return s;
}

} // namespace presk::kernel
