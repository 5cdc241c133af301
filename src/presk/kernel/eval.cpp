// The kernel interpreter. A kernel is compiled once (Compiled) into a flat register machine
// (instructions over a real and an integer register file, buffer accesses with precomputed
// strides, jumps for loops and conditions), which is then executed in the arithmetic type R
// (double for f64 kernels, float for f32 and bf16 ones).
//
// Arithmetic: every real operation is one operation on R values, so in an f32 kernel each
// is rounded to float (the build compiles with -ffp-contract=off: nothing is fused). Real
// constants and real(n) are rounded to R once. sqrt is IEEE sqrt; exp, log, tanh, sin, cos,
// erf, erfc and pow are pmath.h's, the functions every backend shares. max(a, b) is b when b > a,
// else a, and min(a, b) is b when b < a, else a: the reference interpreter's rule for a
// running maximum with a the accumulator, so a NaN in a is kept, a NaN in b is passed over,
// and of two equal values (+0 and -0) a is kept. Comparisons are IEEE (a NaN compares false
// except under !=). Integers are int64; overflow, division or remainder by zero are errors;
// division truncates toward zero as in C (the lowering divides non-negatives only).
//
// Memory: buffers are in their storage types (kernel/data.h). A real load gives R (a bf16 or
// f32 element widens exactly; an f64 element in an f32 kernel rounds once); a store rounds R to
// the buffer's storage type (f32: one rounding; bf16: to f32, then to nearest even bf16, which
// for an f64 kernel is the language's two roundings). Every index is checked against its axis.
#include <bit>
#include <cmath>
#include <map>

#include "../../quant/fp16.h"
#include "kernel/quant.h"
#include "kernel/eval.h"
#include "kernel/pmath.h"
#include "lang/source.h"
#include "lang/stack.h"

namespace presk::kernel {
namespace {

// pmath.h's functions by the arithmetic type.
inline double m_exp(double x) { return presk_exp(x); }
inline float m_exp(float x) { return presk_expf(x); }
inline double m_log(double x) { return presk_log(x); }
inline float m_log(float x) { return presk_logf(x); }
inline double m_tanh(double x) { return presk_tanh(x); }
inline float m_tanh(float x) { return presk_tanhf(x); }
inline double m_sin(double x) { return presk_sin(x); }
inline float m_sin(float x) { return presk_sinf(x); }
inline double m_cos(double x) { return presk_cos(x); }
inline float m_cos(float x) { return presk_cosf(x); }
inline double m_erf(double x) { return presk_erf(x); }
inline float m_erf(float x) { return presk_erff(x); }
inline double m_erfc(double x) { return presk_erfc(x); }
inline float m_erfc(float x) { return presk_erfcf(x); }
inline double m_pow(double x, double y) { return presk_pow(x, y); }
inline float m_pow(float x, float y) { return presk_powf(x, y); }

// Instructions. R* act on `lanes` consecutive real registers; the rest on scalars.
enum class Op : uint8_t {
    RMov, RNeg, RExp, RLog, RTanh, RSin, RCos, RSqrt, RErf,  // d = f(a)
    RErfc,                                                   // d = f(a)
    RAdd, RSub, RMul, RDiv, RPow, RMax, RMin,               // d = a op b
    RSplat,                                                  // d[0..lanes) = a
    RSel,                                                    // d = int c ? a : b
    RFromI,                                                  // d = real(int a)
    RLt, RLe, RGt, RGe, REq, RNe,                            // int d = real a op real b
    IMov, INeg, IAdd, ISub, IMul, IDiv, IMod, IMin, IMax,
    ILt, ILe, IGt, IGe, IEq, INe,
    ISel,                                                    // d = c ? a : b
    RLoad64, RLoad32, RLoad16, ILoad,                        // access k: d = buf[...] (f64, f32, bf16, i64)
    RLoadQ8, RLoadQ4,                                        // access k: d = f32(q) * s (int8, int4: kernel/quant.h)
    RStore64, RStore32, RStore16, IStore,                    // access k: buf[...] = a
    For,                                                     // int d = k; if d >= k2 goto c
    Next,                                                    // if ++d < k2 goto c
    Jz,                                                      // if int a == 0 goto c
    Jmp,                                                     // goto c
    Halt,
};

struct Ins {
    Op op;
    int32_t lanes = 1;
    int32_t d = 0, a = 0, b = 0, c = 0;
    int64_t k = 0, k2 = 0;
};

// A buffer access: `n` index registers with their axes' sizes and strides (from `first` in
// the flat tables), `lanes` elements along the last axis.
struct Access {
    int buf = 0, n = 0, first = 0, lanes = 1;
};

struct Program {
    std::vector<Ins> code;
    std::vector<Access> acc;
    std::vector<int32_t> idx;           // index registers, per access
    std::vector<int64_t> size, stride;  // per access and axis
    std::vector<int64_t> last;          // per access and axis: the largest index allowed
    std::vector<std::pair<int32_t, double>> rconst;
    std::vector<std::pair<int32_t, int64_t>> iconst;
    int n_real = 0, n_int = 0;
};

// The load and store of a real buffer of type `t`.
Op real_load(DType t) {
    switch (t) {
    case DType::F64: return Op::RLoad64;
    case DType::F32: return Op::RLoad32;
    case DType::I8: return Op::RLoadQ8;
    case DType::I4: return Op::RLoadQ4;
    default: return Op::RLoad16;
    }
}
Op real_store(DType t) { return t == DType::F64 ? Op::RStore64 : t == DType::F32 ? Op::RStore32 : Op::RStore16; }

// "%3": buffer 3 as the kernel text names it.
std::string pct(int64_t b) {
    std::string s(1, '%');
    return s += std::to_string(b);
}

[[noreturn]] void fail(const Kernel& k, const std::string& msg) { throw Error({}, "kernel " + k.name + ": " + msg); }

int64_t numel(const Kernel& k, const BufferType& b, int id) {
    int64_t n = 1;
    for (const Axis& a : b.axes) {
        if (a.size < 0 || __builtin_mul_overflow(n, a.size, &n))
            fail(k, pct(id) + " has too many elements");
    }
    return n;
}

const std::map<std::string, Op>& real_ops() {
    static const std::map<std::string, Op> m = {
        {"neg", Op::RNeg}, {"exp", Op::RExp}, {"log", Op::RLog}, {"tanh", Op::RTanh}, {"sin", Op::RSin},
        {"cos", Op::RCos}, {"sqrt", Op::RSqrt}, {"erf", Op::RErf}, {"erfc", Op::RErfc}, {"add", Op::RAdd},
        {"sub", Op::RSub}, {"mul", Op::RMul}, {"div", Op::RDiv}, {"pow", Op::RPow}, {"max", Op::RMax}, {"min", Op::RMin},
        {"lt", Op::RLt}, {"le", Op::RLe}, {"gt", Op::RGt}, {"ge", Op::RGe}, {"eq", Op::REq}, {"ne", Op::RNe}};
    return m;
}

const std::map<std::string, Op>& int_ops() {
    static const std::map<std::string, Op> m = {
        {"neg", Op::INeg}, {"add", Op::IAdd}, {"sub", Op::ISub}, {"mul", Op::IMul}, {"div", Op::IDiv},
        {"mod", Op::IMod}, {"min", Op::IMin}, {"max", Op::IMax}, {"lt", Op::ILt}, {"le", Op::ILe},
        {"gt", Op::IGt}, {"ge", Op::IGe}, {"eq", Op::IEq}, {"ne", Op::INe}};
    return m;
}

// Kernel -> Program, checking what the constructors could not see: buffer numbers, index
// counts, element types of loads and stores, loops nested in themselves or variables used
// outside their loop, vector variables used at two lane counts.
class Compiler {
public:
    explicit Compiler(const Kernel& k) : k_(k) {
        for (int b = 0; b <= k.out_buf(); ++b) {
            const BufferType& t = b == k.out_buf() ? k.output : k.inputs[(size_t)b];
            std::vector<int64_t> st(t.axes.size());
            int64_t s = 1;
            for (size_t j = t.axes.size(); j-- > 0;) {
                st[j] = s;
                s *= t.axes[j].size;  // cannot overflow: numel() was checked
            }
            strides_.push_back(std::move(st));
        }
    }

    Program compile() {
        block_vars(k_.body);
        temp_base_real_ = p_.n_real;
        temp_base_int_ = p_.n_int;
        block(k_.body);
        emit({Op::Halt});
        return std::move(p_);
    }

private:
    const Kernel& k_;
    Program p_;
    std::vector<std::vector<int64_t>> strides_;
    std::map<int, int> loops_, ints_, reals_, vecs_, vec_lanes_;
    std::map<uint64_t, int> rconst_;  // by the constant's bits
    std::map<int64_t, int> iconst_;
    std::vector<bool> open_;  // loop variables whose loop encloses the current statement
    // Registers: variables and constants first, then the temporaries of one statement.
    int temp_base_real_ = 0, temp_base_int_ = 0, real_top_ = 0, int_top_ = 0;

    int emit(Ins x) {
        p_.code.push_back(x);
        return (int)p_.code.size() - 1;
    }
    int here() const { return (int)p_.code.size(); }

    int temp_real(int lanes) {
        int r = real_top_;
        real_top_ += lanes;
        p_.n_real = std::max(p_.n_real, real_top_);
        return r;
    }
    int temp_int() {
        int r = int_top_++;
        p_.n_int = std::max(p_.n_int, int_top_);
        return r;
    }

    template <class K>
    static int reg(std::map<K, int>& m, K id, int& top, int lanes = 1) {
        auto it = m.find(id);
        if (it != m.end()) return it->second;
        const int r = top;
        top += lanes;
        m.emplace(id, r);
        return r;
    }
    int loop_reg(int id) { return reg(loops_, id, p_.n_int); }
    int int_reg(int id) { return reg(ints_, id, p_.n_int); }
    int real_reg(int id) { return reg(reals_, id, p_.n_real); }
    int vec_reg(int id, int lanes) {
        auto [it, fresh] = vec_lanes_.emplace(id, lanes);
        if (!fresh && it->second != lanes)
            fail(k_, "v" + std::to_string(id) + " is used with " + std::to_string(it->second) + " and " +
                         std::to_string(lanes) + " lanes");
        return reg(vecs_, id, p_.n_real, lanes);
    }
    // The first pass: a register for every variable and constant.
    void vars(const Expr& e) {
        switch (e.kind) {
        case Expr::Real:
            if (!rconst_.count(std::bit_cast<uint64_t>(e.value)))
                p_.rconst.emplace_back(reg(rconst_, std::bit_cast<uint64_t>(e.value), p_.n_real), e.value);
            break;
        case Expr::Int:
            if (!iconst_.count(e.ivalue)) p_.iconst.emplace_back(reg(iconst_, e.ivalue, p_.n_int), e.ivalue);
            break;
        case Expr::Loop: loop_reg((int)e.ivalue); break;
        case Expr::Scalar: e.integer ? int_reg((int)e.ivalue) : real_reg((int)e.ivalue); break;
        case Expr::Vector: vec_reg((int)e.ivalue, e.lanes); break;
        default: break;
        }
        for (const ExprP& a : e.args) vars(*a);
    }

    void block_vars(const std::vector<Stmt>& body) {
        for (const Stmt& s : body) {
            if (s.kind == Stmt::For) loop_reg(s.var);
            if (s.kind == Stmt::Assign) {
                const Expr& e = *s.value;
                e.integer ? int_reg(s.var) : e.lanes > 1 ? vec_reg(s.var, e.lanes) : real_reg(s.var);
            }
            for (const ExprP& i : s.index) vars(*i);
            if (s.value) vars(*s.value);
            block_vars(s.body);
            block_vars(s.orelse);
        }
    }

    const BufferType& buffer(int b) const { return b == k_.out_buf() ? k_.output : k_.inputs[(size_t)b]; }

    int access(int buf, const std::vector<ExprP>& index, int lanes, bool integer, bool is_store) {
        if (buf < 0 || buf > k_.out_buf()) fail(k_, pct(buf) + " is not a buffer of the kernel");
        const std::string name = pct(buf);
        if (is_store && buf != k_.out_buf()) fail(k_, "a store to the input " + name);
        if (is_store && quantised(k_.output.dtype)) fail(k_, "a store to the " + std::string(dtype_name(k_.output.dtype)) + " output " + name);
        const BufferType& t = buffer(buf);
        if (index.size() != t.axes.size())
            fail(k_, name + " has " + std::to_string(t.axes.size()) + " axes, accessed with " +
                         std::to_string(index.size()) + " indices");
        if (integer != (t.dtype == DType::I64))
            fail(k_, std::string(integer ? "an integer" : "a real") + " access to " + name + " : " + dtype_name(t.dtype));
        std::vector<int32_t> regs;  // compiled first: an index may hold an access of its own
        for (const ExprP& e : index) regs.push_back(expr(*e));
        Access a{buf, (int)index.size(), (int)p_.idx.size(), lanes};
        for (size_t j = 0; j < index.size(); ++j) {
            p_.idx.push_back(regs[j]);
            p_.size.push_back(t.axes[j].size);
            p_.last.push_back(t.axes[j].size - (j + 1 == index.size() ? lanes : 1));
            p_.stride.push_back(strides_[(size_t)buf][j]);
        }
        p_.acc.push_back(a);
        return (int)p_.acc.size() - 1;
    }

    // Compiles `e`; returns the register holding its value (its first lane). When `dest` is
    // given the value ends up there.
    int expr(const Expr& e, int dest = -1) {
        check_stack({}, "kernel expression");
        const int lanes = e.lanes;
        auto out = [&] { return dest >= 0 ? dest : e.integer ? temp_int() : temp_real(lanes); };
        auto into = [&](int r) {  // a value already in register r
            if (dest < 0 || dest == r) return r;
            emit({e.integer ? Op::IMov : Op::RMov, lanes, dest, r});
            return dest;
        };
        switch (e.kind) {
        case Expr::Real: return into(rconst_.at(std::bit_cast<uint64_t>(e.value)));
        case Expr::Int: return into(iconst_.at(e.ivalue));
        case Expr::Loop: {
            const int id = (int)e.ivalue;
            if ((size_t)id >= open_.size() || !open_[(size_t)id]) fail(k_, "i" + std::to_string(id) + " is used outside its loop");
            return into(loop_reg(id));
        }
        case Expr::Scalar: return into(e.integer ? int_reg((int)e.ivalue) : real_reg((int)e.ivalue));
        case Expr::Vector: return into(vec_reg((int)e.ivalue, lanes));
        case Expr::Load:
        case Expr::VLoad: {
            const int a = access(e.buf, e.args, lanes, e.integer, false);
            const int d = out();
            emit({e.integer ? Op::ILoad : real_load(buffer(e.buf).dtype), lanes, d, 0, 0, 0, a});
            return d;
        }
        case Expr::Splat: {
            const int a = expr(*e.args[0]);
            const int d = out();
            emit({Op::RSplat, lanes, d, a});
            return d;
        }
        case Expr::Unary:
        case Expr::Binary:
        case Expr::Compare: {
            const auto& ops = e.args[0]->integer ? int_ops() : real_ops();
            auto it = ops.find(e.op);
            if (it == ops.end()) fail(k_, "no operation `" + e.op + "`");
            const int a = expr(*e.args[0]);
            const int b = e.args.size() > 1 ? expr(*e.args[1]) : 0;
            const int d = out();
            emit({it->second, e.args[0]->lanes, d, a, b});
            return d;
        }
        case Expr::Select: {
            const int c = expr(*e.args[0]);
            const int a = expr(*e.args[1]);
            const int b = expr(*e.args[2]);
            const int d = out();
            emit({e.integer ? Op::ISel : Op::RSel, lanes, d, a, b, c});
            return d;
        }
        case Expr::ToReal: {
            const int a = expr(*e.args[0]);
            const int d = out();
            emit({Op::RFromI, 1, d, a});
            return d;
        }
        }
        fail(k_, "an unknown expression");
    }

    void block(const std::vector<Stmt>& body) {
        for (const Stmt& s : body) stmt(s);
    }

    void stmt(const Stmt& s) {
        real_top_ = temp_base_real_;
        int_top_ = temp_base_int_;
        switch (s.kind) {
        case Stmt::For: {
            if ((size_t)s.var >= open_.size()) open_.resize((size_t)s.var + 1);
            if (open_[(size_t)s.var]) fail(k_, "the loop of i" + std::to_string(s.var) + " is nested in itself");
            const int v = loop_reg(s.var);
            const int head = emit({Op::For, 1, v, 0, 0, 0, s.lo, s.hi});
            open_[(size_t)s.var] = true;
            block(s.body);
            open_[(size_t)s.var] = false;
            emit({Op::Next, 1, v, 0, 0, head + 1, 0, s.hi});
            p_.code[(size_t)head].c = here();
            return;
        }
        case Stmt::Assign: {
            const Expr& e = *s.value;
            expr(e, e.integer ? int_reg(s.var) : e.lanes > 1 ? vec_reg(s.var, e.lanes) : real_reg(s.var));
            return;
        }
        case Stmt::Store:
        case Stmt::VStore: {
            const Expr& e = *s.value;
            const int v = expr(e);
            const int a = access(s.buf, s.index, e.lanes, e.integer, true);
            emit({e.integer ? Op::IStore : real_store(buffer(s.buf).dtype), e.lanes, 0, v, 0, 0, a});
            return;
        }
        case Stmt::If: {
            const int c = expr(*s.value);
            const int jz = emit({Op::Jz, 1, 0, c});
            block(s.body);
            if (s.orelse.empty()) {
                p_.code[(size_t)jz].c = here();
                return;
            }
            const int jmp = emit({Op::Jmp});
            p_.code[(size_t)jz].c = here();
            block(s.orelse);
            p_.code[(size_t)jmp].c = here();
            return;
        }
        }
    }
};

// A run's buffers: the first element of each (the inputs', then the output's), in its storage
// type; the machine writes only the output's.
template <class R>
class Machine {
public:
    Machine(const Kernel& k, const Program& p, const std::vector<void*>& bufs)
        : k_(k), p_(p), rr_((size_t)p.n_real), ir_((size_t)p.n_int) {
        acc_.reserve(p.acc.size());
        for (const Access& c : p.acc) {
            const auto f = (size_t)c.first;
            acc_.push_back({bufs[(size_t)c.buf], p.idx.data() + f, p.last.data() + f, p.stride.data() + f, c.n, &c});
        }
        for (auto [r, v] : p.rconst) rr_[(size_t)r] = (R)v;
        for (auto [r, v] : p.iconst) ir_[(size_t)r] = v;
    }

    void run() {
        R* r = rr_.data();
        int64_t* n = ir_.data();
        const Ins* code = p_.code.data();
        for (const Ins* x = code;; ++x) {
            const int L = x->lanes;
            R* d = r + x->d;
            const R* a = r + x->a;
            const R* b = r + x->b;
            switch (x->op) {
            case Op::RMov: for (int j = 0; j < L; ++j) d[j] = a[j]; break;
            case Op::RNeg: for (int j = 0; j < L; ++j) d[j] = -a[j]; break;
            case Op::RExp: for (int j = 0; j < L; ++j) d[j] = m_exp(a[j]); break;
            case Op::RLog: for (int j = 0; j < L; ++j) d[j] = m_log(a[j]); break;
            case Op::RTanh: for (int j = 0; j < L; ++j) d[j] = m_tanh(a[j]); break;
            case Op::RSin: for (int j = 0; j < L; ++j) d[j] = m_sin(a[j]); break;
            case Op::RCos: for (int j = 0; j < L; ++j) d[j] = m_cos(a[j]); break;
            case Op::RSqrt: for (int j = 0; j < L; ++j) d[j] = std::sqrt(a[j]); break;
            case Op::RErf: for (int j = 0; j < L; ++j) d[j] = m_erf(a[j]); break;
            case Op::RErfc: for (int j = 0; j < L; ++j) d[j] = m_erfc(a[j]); break;
            case Op::RAdd: for (int j = 0; j < L; ++j) d[j] = a[j] + b[j]; break;
            case Op::RSub: for (int j = 0; j < L; ++j) d[j] = a[j] - b[j]; break;
            case Op::RMul: for (int j = 0; j < L; ++j) d[j] = a[j] * b[j]; break;
            case Op::RDiv: for (int j = 0; j < L; ++j) d[j] = a[j] / b[j]; break;
            case Op::RPow: for (int j = 0; j < L; ++j) d[j] = m_pow(a[j], b[j]); break;
            case Op::RMax: for (int j = 0; j < L; ++j) d[j] = b[j] > a[j] ? b[j] : a[j]; break;
            case Op::RMin: for (int j = 0; j < L; ++j) d[j] = b[j] < a[j] ? b[j] : a[j]; break;
            case Op::RSplat: for (int j = 0; j < L; ++j) d[j] = a[0]; break;
            case Op::RSel: {
                const R* s = n[x->c] != 0 ? a : b;
                for (int j = 0; j < L; ++j) d[j] = s[j];
                break;
            }
            case Op::RFromI: d[0] = (R)n[x->a]; break;
            case Op::RLt: n[x->d] = a[0] < b[0]; break;
            case Op::RLe: n[x->d] = a[0] <= b[0]; break;
            case Op::RGt: n[x->d] = a[0] > b[0]; break;
            case Op::RGe: n[x->d] = a[0] >= b[0]; break;
            case Op::REq: n[x->d] = a[0] == b[0]; break;
            case Op::RNe: n[x->d] = a[0] != b[0]; break;
            case Op::IMov: n[x->d] = n[x->a]; break;
            case Op::INeg: n[x->d] = checked(x, 0, n[x->a]); break;
            case Op::IAdd:
            case Op::ISub:
            case Op::IMul:
            case Op::IDiv:
            case Op::IMod: n[x->d] = checked(x, n[x->a], n[x->b]); break;
            case Op::IMin: n[x->d] = std::min(n[x->a], n[x->b]); break;
            case Op::IMax: n[x->d] = std::max(n[x->a], n[x->b]); break;
            case Op::ILt: n[x->d] = n[x->a] < n[x->b]; break;
            case Op::ILe: n[x->d] = n[x->a] <= n[x->b]; break;
            case Op::IGt: n[x->d] = n[x->a] > n[x->b]; break;
            case Op::IGe: n[x->d] = n[x->a] >= n[x->b]; break;
            case Op::IEq: n[x->d] = n[x->a] == n[x->b]; break;
            case Op::INe: n[x->d] = n[x->a] != n[x->b]; break;
            case Op::ISel: n[x->d] = n[x->c] != 0 ? n[x->a] : n[x->b]; break;
            case Op::RLoad64: {
                const double* src = at<double>(acc_[(size_t)x->k], n);
                for (int j = 0; j < L; ++j) d[j] = (R)src[j];
                break;
            }
            case Op::RLoad32: {
                const float* src = at<float>(acc_[(size_t)x->k], n);
                for (int j = 0; j < L; ++j) d[j] = (R)src[j];
                break;
            }
            case Op::RLoad16: {
                const uint16_t* src = at<uint16_t>(acc_[(size_t)x->k], n);
                for (int j = 0; j < L; ++j) d[j] = (R)gk::bf16_to_fp32(src[j]);
                break;
            }
            case Op::ILoad: n[x->d] = *at<int64_t>(acc_[(size_t)x->k], n); break;
            case Op::RLoadQ8:
            case Op::RLoadQ4: {
                const Bound& c = acc_[(size_t)x->k];
                const DType t = x->op == Op::RLoadQ8 ? DType::I8 : DType::I4;
                const int64_t e = offset(c, n);
                for (int j = 0; j < L; ++j)
                    d[j] = (R)quant_int(t, c.base, e + j) * (R)gk::fp16_to_fp32(quant_scale_bits(t, c.base, e + j));
                break;
            }
            case Op::RStore64: {
                double* dst = at<double>(acc_[(size_t)x->k], n);
                for (int j = 0; j < L; ++j) dst[j] = (double)a[j];
                break;
            }
            case Op::RStore32: {
                float* dst = at<float>(acc_[(size_t)x->k], n);
                for (int j = 0; j < L; ++j) dst[j] = (float)a[j];
                break;
            }
            case Op::RStore16: {
                uint16_t* dst = at<uint16_t>(acc_[(size_t)x->k], n);
                for (int j = 0; j < L; ++j) dst[j] = gk::fp32_to_bf16((float)a[j]);
                break;
            }
            case Op::IStore: *at<int64_t>(acc_[(size_t)x->k], n) = n[x->a]; break;
            case Op::For:
                n[x->d] = x->k;
                if (x->k >= x->k2) x = code + x->c - 1;
                break;
            case Op::Next:
                if (++n[x->d] < x->k2) x = code + x->c - 1;
                break;
            case Op::Jz:
                if (n[x->a] == 0) x = code + x->c - 1;
                break;
            case Op::Jmp: x = code + x->c - 1; break;
            case Op::Halt: return;
            }
        }
    }

private:
    const Kernel& k_;
    const Program& p_;
    // An access bound to its buffer and its rows of the index tables.
    struct Bound {
        void* base;
        const int32_t* idx;
        const int64_t* last;
        const int64_t* stride;
        int n;
        const Access* c;
    };
    std::vector<Bound> acc_;
    std::vector<R> rr_;
    std::vector<int64_t> ir_;

    // The element of access `c` (of storage type T) at the current index registers, every
    // index checked.
    // The element number of access `c` at the index registers `n`, checked.
    int64_t offset(const Bound& c, const int64_t* n) const {
        int64_t off = 0;
        for (int j = 0; j < c.n; ++j) {
            const int64_t i = n[c.idx[j]];
            if (i < 0 || i > c.last[j]) out_of_range(*c.c, n, j);
            off += i * c.stride[j];
        }
        return off;
    }

    template <class T>
    T* at(const Bound& c, const int64_t* n) const {
        return static_cast<T*>(c.base) + offset(c, n);
    }

    [[noreturn]] void out_of_range(const Access& c, const int64_t* n, int axis) const {
        std::string at = pct(c.buf) + "[";
        for (int j = 0; j < c.n; ++j) at += (j ? ", " : "") + std::to_string(n[p_.idx[(size_t)(c.first + j)]]);
        if (c.lanes > 1) at += "..+" + std::to_string(c.lanes);
        at += "]";
        fail(k_, at + " index " + std::to_string(n[p_.idx[(size_t)(c.first + axis)]]) + " out of range: axis " +
                     std::to_string(axis) + " has size " + std::to_string(p_.size[(size_t)(c.first + axis)]));
    }

    int64_t checked(const Ins* x, int64_t a, int64_t b) const {
        int64_t r = 0;
        bool bad = false;
        switch (x->op) {
        case Op::INeg: bad = __builtin_sub_overflow(a, b, &r); break;
        case Op::IAdd: bad = __builtin_add_overflow(a, b, &r); break;
        case Op::ISub: bad = __builtin_sub_overflow(a, b, &r); break;
        case Op::IMul: bad = __builtin_mul_overflow(a, b, &r); break;
        case Op::IDiv:
        case Op::IMod:
            if (b == 0) fail(k_, std::string("integer ") + (x->op == Op::IDiv ? "division" : "remainder") + " by zero");
            if (a == INT64_MIN && b == -1) bad = true;
            else r = x->op == Op::IDiv ? a / b : a % b;
            break;
        default: break;
        }
        if (bad) fail(k_, "integer overflow");
        return r;
    }
};

// `in` against the declaration `k` (`n`: the element count of every buffer, the output's last).
void check_inputs(const Kernel& k, const std::vector<int64_t>& n, const std::vector<const Data*>& in, const Data& out) {
    if (in.size() != k.inputs.size())
        fail(k, "given " + std::to_string(in.size()) + " inputs, declared " + std::to_string(k.inputs.size()));
    for (size_t i = 0; i < in.size(); ++i) {
        const Data* d = in[i];
        const BufferType& t = k.inputs[i];
        if (!d) fail(k, pct(i) + " is missing");
        if (d == &out) fail(k, pct(i) + " is also the output");
        if (d->dtype() != t.dtype)
            fail(k, pct(i) + " is " + dtype_name(d->dtype()) + ", declared " + dtype_name(t.dtype));
        if (d->size() != n[i])
            fail(k, pct(i) + " has " + std::to_string(d->size()) + " elements, declared " + std::to_string(n[i]));
    }
}

} // namespace

std::vector<int64_t> buffer_counts(const Kernel& k) {
    std::vector<int64_t> n;
    n.reserve((size_t)k.out_buf() + 1);
    for (int b = 0; b <= k.out_buf(); ++b) n.push_back(numel(k, b == k.out_buf() ? k.output : k.inputs[(size_t)b], b));
    return n;
}

void check_buffers(const Kernel& k, const std::vector<const Data*>& in, const Data& out) {
    check_buffers(k, buffer_counts(k), in, out);
}

void check_buffers(const Kernel& k, const std::vector<int64_t>& n, const std::vector<const Data*>& in,
                   const Data& out) {
    check_inputs(k, n, in, out);
    if (out.dtype() != k.output.dtype || out.size() != n.back() || out.shared())
        fail(k, "the output buffer is " + std::string(dtype_name(out.dtype())) + " of " + std::to_string(out.size()) +
                    " elements" + (out.shared() ? ", shared" : "") + ", declared " + dtype_name(k.output.dtype) +
                    " of " + std::to_string(n.back()));
}

// The kernel's declaration (its name and buffer types: what the checks and messages read) and
// its program.
struct Compiled::Impl {
    Kernel decl;               // without the body
    std::vector<int64_t> n;    // the element count of every buffer, the output's last
    Program p;
};

Compiled::Compiled(const Kernel& k) {
    auto c = std::make_unique<Impl>();
    c->n = buffer_counts(k);
    c->decl.name = k.name;
    c->decl.dtype = k.dtype;
    c->decl.inputs = k.inputs;
    c->decl.output = k.output;
    c->p = Compiler(k).compile();
    impl_ = std::move(c);
}

Compiled::~Compiled() = default;
Compiled::Compiled(Compiled&&) noexcept = default;
Compiled& Compiled::operator=(Compiled&&) noexcept = default;

void Compiled::run(const std::vector<const Data*>& in, Data& out) const {
    const Kernel& k = impl_->decl;
    check_inputs(k, impl_->n, in, out);
    const int64_t n_out = impl_->n.back();
    if (out.dtype() != k.output.dtype || out.size() != n_out || out.shared()) out = Data(k.output.dtype, n_out);
    std::vector<void*> bufs;
    bufs.reserve(in.size() + 1);
    for (const Data* d : in) bufs.push_back(const_cast<void*>(d->raw()));  // only the output is written
    bufs.push_back(out.raw());
    if (arith_type(k.dtype) == DType::F64) Machine<double>(k, impl_->p, bufs).run();
    else Machine<float>(k, impl_->p, bufs).run();
}

void run(const Kernel& k, const std::vector<const Data*>& in, Data& out) { Compiled(k).run(in, out); }

} // namespace presk::kernel
