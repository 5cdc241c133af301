// The lowering of every primitive (kernel/lower.h) run by the kernel interpreter
// (kernel/eval.h) against the reference interpreter at 256 bits on the same operands, in
// f64, f32 and bf16, within the seed's bands |x - x̂| <= eps (|x| + a) (Conformance):
// f64 eps = 2^-40, a = 2^-50; f32 2^-15, 2^-20; bf16 2^-4, 2^-5. Integer results exactly.
// Also: argmax keeps the last of equal maxima, a masked softmax row with nothing allowed
// gives zeros, an id or target out of range is an error, the seed's dot kernel text, fusion
// groups against the unfused chain, and the lanes of the tiled dot bit for bit.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <fstream>
#include <sstream>

#include "core/prims.h"
#include "kernel/eval.h"
#include "kernel/lower.h"
#include "seed_kernels.h"
#include "ref/chacha.h"
#include "ref/interp.h"
#include "presk_test.h"

namespace presk {
namespace {

using kernel::Data;
using kernel::DType;
using kernel::Kernel;
using kernel::Node;

constexpr long kBits = 256;
constexpr DType kTypes[] = {DType::F64, DType::F32, DType::BF16};

TypeP real_t(std::vector<Axis> axes) { return tensor_type(Elem::Real, std::move(axes)); }
TypeP int_t(std::vector<Axis> axes, int64_t bound) { return tensor_type(Elem::Int, std::move(axes), bound); }
TypeP bool_t(std::vector<Axis> axes) { return tensor_type(Elem::Bool, std::move(axes)); }

/// How an operand's elements are drawn.
enum class Draw {
    Normal,    // normal(0, 1)
    Positive,  // 0.25 + |normal|: log, sqrt, pow's base
    Gelu,      // uniform on [-12, 12]: far into the tail where x (1 + erf(x / sqrt(2))) / 2
               // would cancel (it left the f32 band below -3), and where gelu(x) = x
    Away,      // +-(0.5 + |normal|): divisors
    Ints,      // uniform below the type's bound
    Mask,      // fair coins, at least one allowed position along the last axis
};

struct Case {
    std::string label;
    std::string prim;
    std::vector<TypeP> ops;
    std::vector<Draw> draws;
    std::vector<int64_t> ints = {};
    std::string text = {};

    Node node() const { return Node{prim, ints, text, ops, core::prim_type(prim, ops, ints, text)}; }
};

/// The operands of a case: each one's kernel buffer in storage type t (reals drawn in f64 and
/// rounded to t, so that both interpreters see the same values).
std::vector<Data> draw_operands(const Case& c, DType t, uint64_t seed = 1) {
    ref::ChaCha rng(seed, c.label);
    auto normal = [&] {
        double u1 = rng.next_unit(), u2 = rng.next_unit();
        return std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * M_PI * u2);
    };
    std::vector<Data> out;
    for (size_t i = 0; i < c.ops.size(); ++i) {
        const Type& ty = *c.ops[i];
        int64_t n = ty.numel();
        if (ty.elem != Elem::Real) {
            std::vector<int64_t> ids;
            for (int64_t k = 0; k < n; ++k)
                ids.push_back(c.draws[i] == Draw::Mask ? (int64_t)(rng.next_unit() < 0.5)
                                                       : (int64_t)(rng.next_unit() * (double)ty.bound));
            if (c.draws[i] == Draw::Mask) {
                int64_t V = ty.axes.back().size;
                for (int64_t r = 0; r < n / V; ++r) ids[(size_t)(r * V + (int64_t)(rng.next_unit() * (double)V))] = 1;
            }
            out.push_back(Data::from_ints(ids));
        } else {
            std::vector<double> re;
            for (int64_t k = 0; k < n; ++k) {
                double v = c.draws[i] == Draw::Gelu ? 24 * rng.next_unit() - 12 : normal();
                if (c.draws[i] == Draw::Positive) v = 0.25 + std::fabs(v);
                if (c.draws[i] == Draw::Away) v = (v < 0 ? -0.5 : 0.5) + v;
                re.push_back(v);
            }
            out.push_back(Data::from_reals(t, re));  // each rounded to t
        }
    }
    return out;
}

Data run_kernel(const Kernel& k, const std::vector<Data>& in) {
    std::vector<const Data*> p;
    for (const Data& d : in) p.push_back(&d);
    Data out;
    kernel::run(k, p, out);
    return out;
}

/// The reference's value of `n` on the operands: a one-let PSK-Core function run by ref::Interp.
ref::Tensor reference(const Node& n, const std::vector<Data>& in) {
    core::Program p;
    core::Function f;
    f.name = "f";
    std::vector<ref::Value> args;
    for (size_t i = 0; i < n.operands.size(); ++i) {
        f.param_names.push_back("x" + std::to_string(i));
        f.param_types.push_back(n.operands[i]);
        ref::Tensor t;
        t.type = n.operands[i];
        if (in[i].dtype() == DType::I64) t.in = in[i].ints();
        else
            for (double v : in[i].reals()) {
                t.re.emplace_back(kBits);
                mpfr_set_d(t.re.back().get(), v, MPFR_RNDN);
            }
        args.push_back(ref::make_tensor(std::move(t)));
    }
    core::Let l;
    l.op = core::Op::Prim;
    l.name = n.prim;
    l.ints = n.ints;
    l.text = n.text;
    l.type = n.result;
    for (int i = 0; i < (int)n.operands.size(); ++i) l.args.push_back(i);
    f.result = f.emit(l);
    p.add(f);
    p.entry = "f";
    ref::Interp interp(p, {kBits, 0, false});
    return *interp.call("f", args).t;
}

double eps_of(DType t) { return t == DType::F64 ? std::ldexp(1, -40) : t == DType::F32 ? std::ldexp(1, -15) : std::ldexp(1, -4); }
double floor_of(DType t) { return t == DType::F64 ? std::ldexp(1, -50) : t == DType::F32 ? std::ldexp(1, -20) : std::ldexp(1, -5); }

/// Checks `got` against the reference within t's band (integers exactly); returns the worst
/// relative gap |x - x̂| / (|x| + a).
double compare(const ref::Tensor& want, const Data& got, DType t, const std::string& what) {
    if (want.type->elem != Elem::Real) {
        EXPECT_EQ(got.ints(), want.in) << what;
        return 0;
    }
    EXPECT_EQ((size_t)got.size(), want.re.size()) << what;
    if ((size_t)got.size() != want.re.size() || got.dtype() == DType::I64) return INFINITY;
    double worst = 0;
    ref::Real d(kBits), den(kBits);
    const std::vector<double> g = got.reals();
    for (size_t k = 0; k < want.re.size(); ++k) {
        mpfr_sub_d(d.get(), want.re[k].get(), g[k], MPFR_RNDN);
        mpfr_abs(d.get(), d.get(), MPFR_RNDN);
        mpfr_abs(den.get(), want.re[k].get(), MPFR_RNDN);
        mpfr_add_d(den.get(), den.get(), floor_of(t), MPFR_RNDN);
        mpfr_div(d.get(), d.get(), den.get(), MPFR_RNDN);
        double gap = mpfr_nan_p(want.re[k].get()) && std::isnan(g[k]) ? 0 : mpfr_get_d(d.get(), MPFR_RNDU);
        EXPECT_LE(gap, eps_of(t)) << what << " element " << k << ": kernel " << g[k] << ", reference "
                                  << want.re[k].text(20);
        if (!(gap <= worst)) worst = gap;
    }
    return worst;
}

std::vector<Case> cases() {
    const Axis B{"B", 3}, B2{"B", 2}, T{"T", 3}, T4{"T", 4}, S4{"S", 4}, N{"N", 2}, M{"M", 4}, batch{"batch", 4};
    auto p = [](int64_t n) { return Axis{"", n}; };
    const auto X = Draw::Normal;
    std::vector<Case> c;
    for (const char* u : {"neg", "exp", "tanh", "sin", "cos", "erf", "erfc", "abs", "sign"})
        c.push_back({u, u, {real_t({B, p(5)})}, {X}});
    c.push_back({"maximum trailing", "maximum", {real_t({B, p(5)}), real_t({p(5)})}, {X, X}});
    c.push_back({"where", "where", {real_t({B, p(5)}), real_t({B, p(5)}), real_t({p(5)})}, {X, X, X}});
    c.push_back({"minimum by name", "minimum", {real_t({N, p(3), M}), real_t({M, N})}, {X, X}});
    c.push_back({"log", "log", {real_t({B, p(5)})}, {Draw::Positive}});
    c.push_back({"sqrt", "sqrt", {real_t({B, p(5)})}, {Draw::Positive}});
    c.push_back({"gelu", "gelu", {real_t({B, p(32)})}, {Draw::Gelu}});
    c.push_back({"add trailing", "add", {real_t({B, p(5)}), real_t({p(5)})}, {X, X}});
    c.push_back({"sub trailing left", "sub", {real_t({p(5)}), real_t({B, p(5)})}, {X, X}});
    c.push_back({"mul by name", "mul", {real_t({N, p(3), M}), real_t({M, N})}, {X, X}});
    c.push_back({"mul scalars", "mul", {real_t({}), real_t({})}, {X, X}});
    c.push_back({"div scalar", "div", {real_t({B, p(5)}), real_t({})}, {X, Draw::Away}});
    c.push_back({"pow", "pow", {real_t({B, p(5)}), real_t({p(5)})}, {Draw::Positive, X}});
    c.push_back({"dot row-wise", "dot", {real_t({batch, p(3)}), real_t({p(3), p(2)})}, {X, X}});
    c.push_back({"dot tiled", "dot", {real_t({B, p(5)}), real_t({p(5), p(16)})}, {X, X}});
    c.push_back({"dot tiled two rows", "dot", {real_t({B2, T, p(4)}), real_t({p(4), p(8)})}, {X, X}});
    c.push_back({"dot vector by rank 3", "dot", {real_t({p(4)}), real_t({p(4), p(3), p(2)})}, {X, X}});
    c.push_back({"matmul row-wise", "matmul", {real_t({p(2), p(3), p(4)}), real_t({p(2), p(4), p(5)})}, {X, X}});
    c.push_back({"matmul tiled", "matmul", {real_t({p(2), p(3), p(4)}), real_t({p(2), p(4), p(8)})}, {X, X}});
    c.push_back({"ein scores", "ein", {real_t({Axis{"B", 1}, p(2), T, p(4)}), real_t({Axis{"B", 1}, p(2), T, p(4)})}, {X, X},
                 {}, "bhid,bhjd->bhij"});
    c.push_back({"ein three operands", "ein", {real_t({p(2), p(3)}), real_t({p(3), p(4)}), real_t({p(4)})}, {X, X, X}, {},
                 "ij,jk,k->i"});
    c.push_back({"ein diagonal", "ein", {real_t({p(3), p(3), p(2)})}, {X}, {}, "iij->j"});
    c.push_back({"ein dot_vjp_l", "ein", {real_t({B2, T, p(5)}), real_t({p(4), p(5)})}, {X, X}, {}, "abd,cd->abc"});
    c.push_back({"ein dot_vjp_r", "ein", {real_t({B2, T, p(4)}), real_t({B2, T, p(5)})}, {X, X}, {}, "abc,abd->cd"});
    c.push_back({"sum axis", "sum", {real_t({B, p(4), p(5)})}, {X}, {1}});
    c.push_back({"sum all", "sum", {real_t({B, p(4)})}, {X}});
    c.push_back({"sum of a scalar", "sum", {real_t({})}, {X}});
    c.push_back({"mean axis", "mean", {real_t({B, p(4), p(5)})}, {X}, {2}});
    c.push_back({"mean all", "mean", {real_t({B, p(4)})}, {X}});
    c.push_back({"max axis 0", "max", {real_t({B, p(4), p(5)})}, {X}, {0}});
    c.push_back({"max last", "max", {real_t({B, p(6)})}, {X}, {1}});
    c.push_back({"softmax", "softmax", {real_t({B2, p(3), p(6)})}, {X}});
    c.push_back({"softmax masked", "softmax", {real_t({B2, T4, S4}), bool_t({T4, S4})}, {X, Draw::Mask}});
    c.push_back({"cross_entropy", "cross_entropy", {real_t({B, p(7)}), int_t({B}, 7)}, {X, Draw::Ints}});
    c.push_back({"embed", "embed", {real_t({p(7), p(4)}), int_t({B2, T}, 7)}, {X, Draw::Ints}});
    c.push_back({"scatter_add", "scatter_add", {real_t({B2, T, p(4)}), int_t({B2, T}, 3), real_t({p(7), p(4)})},
                 {X, Draw::Ints, X}});
    c.push_back({"onehot", "onehot", {int_t({B}, 6), real_t({B, p(6)})}, {Draw::Ints, X}});
    c.push_back({"argmax", "argmax", {real_t({B, p(6)})}, {X}});
    c.push_back({"max_grad last", "max_grad", {real_t({B, p(6)}), real_t({B, p(6)})}, {X, X}, {1}});
    c.push_back({"max_grad axis 0", "max_grad", {real_t({B, p(6)}), real_t({B, p(6)})}, {X, X}, {0}});
    c.push_back({"expand", "expand", {real_t({B, p(5)}), real_t({B, p(4), p(5)})}, {X, X}, {1}});
    c.push_back({"split_heads", "split_heads", {real_t({B2, T, p(8)})}, {X}, {2}});
    c.push_back({"merge_heads", "merge_heads", {real_t({B2, p(2), T, p(4)})}, {X}});
    c.push_back({"sum_to trailing", "sum_to", {real_t({B, p(4), p(5)}), real_t({p(4), p(5)})}, {X, X}});
    c.push_back({"sum_to by name", "sum_to", {real_t({N, p(3), M}), real_t({M, N})}, {X, X}});
    c.push_back({"broadcast_like trailing", "broadcast_like", {real_t({p(5)}), real_t({B, p(5)})}, {X, X}});
    c.push_back({"broadcast_like by name", "broadcast_like", {real_t({M, N}), real_t({N, p(3), M})}, {X, X}});
    c.push_back({"causal_mask", "causal_mask", {real_t({Axis{"B", 1}, T, Axis{"S", 5}})}, {X}});
    c.push_back({"positions", "positions", {real_t({B2, Axis{"T", 5}})}, {X}, {1}});
    c.push_back({"zeros_like", "zeros_like", {real_t({p(3), p(4)})}, {X}});
    return c;
}

// Every primitive of core/prims.cpp.
const char* const kAllPrims[] = {
    "neg", "exp", "log", "tanh", "sin", "cos", "sqrt", "erf", "erfc", "gelu", "abs", "sign", "maximum", "minimum",
    "where", "add", "sub", "mul", "div", "pow", "dot", "matmul", "ein", "sum", "mean", "max", "softmax",
    "cross_entropy", "embed", "argmax", "split_heads",
    "merge_heads", "split", "merge", "sum_to", "broadcast_like", "causal_mask", "positions", "slice", "index", "stack", "dropout",
    "sample", "scatter_add", "expand", "unslice", "unindex", "zeros_like", "onehot", "max_grad", "retype"};

TEST(PreskLower, EveryPrimitiveAgreesWithTheReference) {
    std::map<std::string, std::array<double, 3>> worst;
    std::set<std::string> covered;
    for (const Case& c : cases()) {
        covered.insert(c.prim);
        for (int ti = 0; ti < 3; ++ti) {
            DType t = kTypes[ti];
            std::string what = c.label + " " + kernel::dtype_name(t);
            SCOPED_TRACE(what);
            Node n = c.node();
            std::vector<Data> in = draw_operands(c, t);
            Kernel k;
            ASSERT_NO_THROW(k = kernel::lower(n, t)) << what;
            Data out;
            try {
                out = run_kernel(k, in);
            } catch (const Error& e) {
                ADD_FAILURE() << what << ": " << e.what() << "\n" << kernel::to_string(k);
                continue;
            }
            double gap = compare(reference(n, in), out, t, what);
            auto& w = worst[c.prim];
            w[ti] = std::max(w[ti], gap);
        }
    }
    for (const char* p : kAllPrims) {
        EXPECT_TRUE(core::is_prim(p)) << p;
        EXPECT_TRUE(kernel::is_host_prim(p) || covered.count(p)) << p << " is lowered by no case";
    }
    std::printf("worst relative gap |x - x^| / (|x| + a) per primitive\n%-16s %10s %10s %10s\n", "primitive", "f64", "f32", "bf16");
    for (const auto& [p, w] : worst) std::printf("%-16s %10.2e %10.2e %10.2e\n", p.c_str(), w[0], w[1], w[2]);
}


Node node(const std::string& prim, std::vector<TypeP> ops, std::vector<int64_t> ints = {}, std::string text = {}) {
    TypeP r = core::prim_type(prim, ops, ints, text);
    return Node{prim, std::move(ints), std::move(text), std::move(ops), r};
}

// The NaN and zero rules of abs, sign, maximum, minimum and where (docs/language.md): the
// kernel gives the reference's value, NaN where it is NaN, and the sign of each zero, in every
// storage type, on every pair of NaN, infinities, zeros of both signs and finite values.
TEST(PreskLower, ExtremaNaNAndZeros) {
    const std::vector<double> v = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.5, -2.0};
    std::vector<double> a, b;
    for (double x : v)
        for (double y : v) {
            a.push_back(x);
            b.push_back(y);
        }
    const Axis K{"", (int64_t)a.size()};
    for (DType t : kTypes)
        for (const char* prim : {"abs", "sign", "maximum", "minimum", "where"}) {
            SCOPED_TRACE(std::string(prim) + " " + kernel::dtype_name(t));
            const std::string pn = prim;
            std::vector<TypeP> ops(pn == "abs" || pn == "sign" ? 1 : pn == "where" ? 3 : 2, real_t({K}));
            Node n = node(prim, ops);
            std::vector<Data> in = {Data::from_reals(t, a), Data::from_reals(t, b), Data::from_reals(t, b)};
            in.resize(ops.size());
            const std::vector<double> got = run_kernel(kernel::lower(n, t), in).reals();
            const ref::Tensor want = reference(n, in);
            for (size_t k = 0; k < a.size(); ++k) {
                const double w = mpfr_get_d(want.re[k].get(), MPFR_RNDN);
                EXPECT_TRUE(std::isnan(w) ? std::isnan(got[k]) : w == got[k] && std::signbit(w) == std::signbit(got[k]))
                    << a[k] << ", " << b[k] << ": kernel " << got[k] << ", reference " << w;
            }
        }
}

// Axes of size 0: nothing is read out of bounds, and the results are the reference's (the
// mean of nothing is NaN in both).
TEST(PreskLower, ZeroSizedAxes) {
    const Axis B{"B", 2}, Z{"", 0};
    const std::vector<Case> zs = {
        {"dot K 0", "dot", {real_t({B, Z}), real_t({Z, {"", 8}})}, {Draw::Normal, Draw::Normal}},
        {"dot J 0", "dot", {real_t({B, {"", 3}}), real_t({{"", 3}, Z})}, {Draw::Normal, Draw::Normal}},
        {"softmax V 0", "softmax", {real_t({B, Z})}, {Draw::Normal}},
        {"sum over 0", "sum", {real_t({B, Z})}, {Draw::Normal}, {1}},
        {"mean over 0", "mean", {real_t({B, Z})}, {Draw::Normal}, {1}},
        {"max of no rows", "max", {real_t({Z, {"", 3}})}, {Draw::Normal}, {1}},
        {"cross_entropy V 0", "cross_entropy", {real_t({B, Z}), int_t({B}, 0)}, {Draw::Normal, Draw::Ints}},
        {"max_grad n 0", "max_grad", {real_t({B, Z}), real_t({B, Z})}, {Draw::Normal, Draw::Normal}, {1}},
        {"embed of no ids", "embed", {real_t({{"", 3}, {"", 2}}), int_t({Z}, 3)}, {Draw::Normal, Draw::Ints}},
    };
    for (const Case& c : zs)
        for (DType t : kTypes) {
            SCOPED_TRACE(c.label + " " + kernel::dtype_name(t));
            Node n = c.node();
            std::vector<Data> in = draw_operands(c, t);
            compare(reference(n, in), run_kernel(kernel::lower(n, t), in), t, c.label);
        }
    // argmax of empty rows is 0, as the reference writes it.
    Node am = node("argmax", {real_t({B, Z})});
    EXPECT_EQ(run_kernel(kernel::lower(am, DType::F32), {Data(DType::F32, 0)}).ints(), (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(reference(am, {Data(DType::F32, 0)}).in, (std::vector<int64_t>{0, 0}));
}

// Every primitive let of the examples' entries (gradients included) lowers in every type, and
// its kernel runs on drawn operands of the let's types without leaving a buffer.
TEST(PreskLower, EveryLetOfTheExamplesLowersAndRuns) {
    struct Entry {
        const char* file;
        const char* entry;
        std::map<std::string, int64_t> dims;
    };
    const Entry entries[] = {
        {"tutorial/01_linear.psk", "Linear{3, 2}.apply", {{"batch", 4}}},
        {"tutorial/02_mlp_regression.psk", "MLP{2, 4, 1}.loss_grad", {{"batch", 3}}},
        {"tutorial/03_attention.psk", "Attention{8, 2}.apply", {{"B", 1}, {"T", 4}}},
        {"norms.psk", "LayerNorm{8}.apply", {{"N", 3}}},
        {"norms.psk", "RMSNorm{8}.apply", {{"N", 3}}},
        {"minigpt.psk", "MiniGPT{16, 8, 2, 2}.loss_grad", {{"B", 2}, {"T", 4}}},
        {"minigpt.psk", "MiniGPT{16, 8, 2, 2}.next_token", {{"B", 2}, {"T", 4}}},
        {"adamw.psk", "adamw.step", {}},
        {"mse.psk", "mse_grad", {{"batch", 4}, {"n", 3}}},
    };
    std::set<std::string> seen;
    for (const Entry& e : entries) {
        SCOPED_TRACE(e.entry);
        std::ifstream f(std::string(PRESK_SOURCE_DIR) + "/examples/" + e.file);
        std::stringstream text;
        text << f.rdbuf();
        std::string err;
        core::Program prog = test::compile(text.str(), e.entry, {e.dims, {}}, &err);
        ASSERT_EQ(err, "");
        for (const core::Function& fn : prog.functions)
            for (const core::Let& l : fn.body) {
                if (l.op != core::Op::Prim || kernel::is_host_prim(l.name)) continue;
                std::vector<TypeP> ops;
                std::vector<Draw> draws;
                for (int a : l.args) {
                    ops.push_back(fn.type_of(a));
                    const Type& t = *ops.back();
                    draws.push_back(t.elem == Elem::Real ? Draw::Normal : t.elem == Elem::Bool ? Draw::Mask : Draw::Ints);
                }
                Case c{fn.name + "/%" + std::to_string(l.id), l.name, ops, draws, l.ints, l.text};
                seen.insert(l.name);
                for (DType t : kTypes) {
                    SCOPED_TRACE(c.label + " " + kernel::dtype_name(t));
                    Node n{l.name, l.ints, l.text, ops, l.type};
                    std::vector<Data> in = draw_operands(c, t);
                    for (size_t i = 0; i < in.size(); ++i)  // an int of unknown bound: zeros
                        if (ops[i]->elem == Elem::Int && ops[i]->bound == 0)
                            in[i] = Data::from_ints(std::vector<int64_t>((size_t)in[i].size(), 0));
                    try {
                        Data out = run_kernel(kernel::lower(n, t), in);
                        EXPECT_EQ(out.size(), l.type->numel());
                    } catch (const Error& x) {
                        ADD_FAILURE() << x.what();
                    }
                }
            }
    }
    std::string all;
    for (const auto& p : seen) all += p + " ";
    std::printf("primitives in the examples: %s\n", all.c_str());
}

TEST(PreskLower, TheSeedsDotKernel) {
    Node n = node("dot", {real_t({{"batch", 4}, {"", 3}}), real_t({{"", 3}, {"", 2}})});
    EXPECT_EQ(kernel::to_string(kernel::lower(n, DType::F32)), test::kSeedDot);
    Node add = node("add", {real_t({{"batch", 4}, {"", 2}}), real_t({{"", 2}})});
    EXPECT_EQ(kernel::to_string(kernel::lower(add, DType::F32)), test::kSeedAdd);
}

TEST(PreskLower, EinIsNamedByItsOutputAxes) {
    const Axis B{"batch", 1}, H{"heads", 2}, S{"seq", 4}, S2{"seq2", 4}, D{"hd", 4};
    Node n = node("ein", {real_t({B, H, S, D}), real_t({B, H, S2, D})}, {}, "bhid,bhjd->bhij");
    Kernel k = kernel::lower(n, DType::F32);
    EXPECT_EQ(k.name, "ein[batch, heads, seq, seq2]");
    EXPECT_NE(kernel::to_string(k).find("s0 = (s0 + (%0[i0, i1, i2, i4] * %1[i0, i1, i3, i4]))"), std::string::npos)
        << kernel::to_string(k);
}

TEST(PreskLower, Bf16DotOfOddWidthAccumulatesInOneScalar) {
    Node n = node("dot", {real_t({{"batch", 4}, {"", 3}}), real_t({{"", 3}, {"", 2}})});
    std::string text = kernel::to_string(kernel::lower(n, DType::BF16));
    EXPECT_NE(text.find("s0 = (s0 + (%0[i0, i2] * %1[i2, i1]))"), std::string::npos) << text;
    EXPECT_NE(text.find("%2[i0, i1] = s0"), std::string::npos) << text;
}

TEST(PreskLower, ArgmaxKeepsTheLastOfEqualMaxima) {
    Node n = node("argmax", {real_t({{"", 2}, {"", 5}})});
    std::vector<Data> in(1);
    for (DType t : kTypes) {
        in[0] = Data::from_reals(t, {1, 3, 2, 3, 0, 7, 7, 7, -1, 7});
        Data out = run_kernel(kernel::lower(n, t), in);
        EXPECT_EQ(out.ints(), (std::vector<int64_t>{3, 9 - 5}));
        EXPECT_EQ(out.ints(), reference(n, in).in);
    }
    Node g = node("max_grad", {real_t({{"", 2}, {"", 5}}), real_t({{"", 2}, {"", 5}})}, {1});
    in.push_back(Data::from_reals(DType::F64, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
    in[0] = Data::from_reals(DType::F64, in[0].reals());
    Data out = run_kernel(kernel::lower(g, DType::F64), in);
    EXPECT_EQ(out.reals(), (std::vector<double>{0, 0, 0, 4, 0, 0, 0, 0, 0, 10}));
}

TEST(PreskLower, MaskedSoftmaxRowWithNothingAllowedGivesZeros) {
    Node n = node("softmax", {real_t({{"", 3}, {"", 4}}), bool_t({{"", 3}, {"", 4}})});
    for (DType t : kTypes) {
        std::vector<Data> in{Data::from_reals(t, {1, 2, 3, 4, 5, 6, 7, 8, -1, 0, 1, 2}),
                             Data::from_ints({1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0})};
        Data out = run_kernel(kernel::lower(n, t), in);
        ASSERT_EQ(out.size(), 12u);
        for (int j = 4; j < 8; ++j) EXPECT_EQ(out.real((size_t)j), 0.0) << j;
        EXPECT_EQ(out.real(1), 0.0);
        EXPECT_EQ(out.real(9), 1.0);
        double s = out.real(0) + out.real(2) + out.real(3);
        EXPECT_NEAR(s, 1.0, t == DType::BF16 ? 1e-2 : 1e-6);
        // The allowed rows agree with the reference on those rows alone.
        Node r = node("softmax", {real_t({{"", 1}, {"", 4}}), bool_t({{"", 1}, {"", 4}})});
        std::vector<Data> row{Data::from_reals(t, {1, 2, 3, 4}), Data::from_ints({1, 0, 1, 1})};
        ref::Tensor want = reference(r, row);
        Data got = Data::from_reals(t, {out.real(0), out.real(1), out.real(2), out.real(3)});
        compare(want, got, t, "masked softmax row 0");
    }
}

/// Runs `n` on operands where operand `bad` holds `id` at position `at`; expects an error.
void expect_out_of_range(const Node& n, std::vector<Data> in, size_t bad, size_t at, int64_t id) {
    in[bad].set_integer((int64_t)at, id);
    SCOPED_TRACE(n.prim + " with index " + std::to_string(id));
    EXPECT_THROW(run_kernel(kernel::lower(n, DType::F32), in), Error);
}

TEST(PreskLower, AnIndexOutOfRangeIsAnError) {
    for (const Case& c : cases()) {
        if (c.prim != "embed" && c.prim != "cross_entropy" && c.prim != "scatter_add" && c.prim != "onehot") continue;
        Node n = c.node();
        std::vector<Data> in = draw_operands(c, DType::F32);
        size_t bad = c.prim == "onehot" ? 0 : 1;
        int64_t rows = c.prim == "embed" ? n.operands[0]->axes[0].size
                     : c.prim == "scatter_add" ? n.result->axes[0].size
                     : c.prim == "onehot" ? n.result->axes.back().size
                                          : n.operands[0]->axes.back().size;
        EXPECT_NO_THROW(run_kernel(kernel::lower(n, DType::F32), in)) << c.label;
        // The first position: a flat offset there would still land inside the buffer.
        expect_out_of_range(n, in, bad, 0, rows);
        expect_out_of_range(n, in, bad, 0, -1);
        expect_out_of_range(n, in, bad, (size_t)in[bad].size() - 1, rows);
        EXPECT_THROW(reference(n, [&] { auto v = in; v[bad].set_integer(0, rows); return v; }()), Error);
    }
}

/// exp(x) * y + z with y broadcast, as one group, against the chain of its three kernels.
TEST(PreskLower, FusionGroupStoresOnlyItsRoot) {
    const Axis B{"B", 3};
    TypeP x = real_t({B, {"", 5}}), y = real_t({{"", 5}}), z = real_t({B, {"", 5}});
    Node e = node("exp", {x}), m = node("mul", {x, y}), a = node("add", {x, z});
    kernel::Group g{{e, m, a}, {{-1}, {0, -2}, {1, -3}}, {x, y, z}};
    Case c{"fusion", "add", {x, y, z}, {Draw::Normal, Draw::Normal, Draw::Normal}};
    for (DType t : kTypes) {
        SCOPED_TRACE(kernel::dtype_name(t));
        Kernel k = kernel::lower_group(g, t);
        EXPECT_EQ(k.name, "exp+mul+add");
        std::string text = kernel::to_string(k);
        EXPECT_NE(text.find("%3[i0, i1] = ((exp(%0[i0, i1]) * %1[i1]) + %2[i0, i1])"), std::string::npos) << text;
        size_t stores = 0;
        for (size_t p = text.find("] = "); p != std::string::npos; p = text.find("] = ", p + 1)) ++stores;
        EXPECT_EQ(stores, 1u) << text;
        std::vector<Data> in = draw_operands(c, t);
        Data fused = run_kernel(k, in);
        Data ex = run_kernel(kernel::lower(e, t), {in[0]});
        Data mu = run_kernel(kernel::lower(m, t), {ex, in[1]});
        Data chain = run_kernel(kernel::lower(a, t), {mu, in[2]});
        if (t != DType::BF16) {
            EXPECT_EQ(fused.reals(), chain.reals());  // the storage is the arithmetic type
        }
        // Both within the band of the exact exp(x) * y + z.
        std::vector<Data> exact_in{in[0]};
        ref::Tensor rx = reference(e, exact_in);
        std::vector<double> rxv, rmv;
        for (const auto& r : rx.re) rxv.push_back(r.to_double());
        ref::Tensor rm = reference(m, {Data::from_reals(DType::F64, rxv), in[1]});
        for (const auto& r : rm.re) rmv.push_back(r.to_double());
        const Data rmd = Data::from_reals(DType::F64, rmv);
        ref::Tensor want = reference(a, {rmd, in[2]});
        compare(want, fused, t, "fused");
        compare(want, chain, t, "chain");
    }
}

/// A member read twice at one index is computed once; a member of fewer axes is read at the
/// root's index through the broadcasting alignment.
TEST(PreskLower, FusionGroupBindsSharedMembers) {
    TypeP x = real_t({{"B", 2}, {"", 3}}), y = real_t({{"", 3}}), one = real_t({});
    Node th = node("tanh", {y}), sq = node("mul", {y, y}), sub = node("sub", {one, y}), mul = node("mul", {x, y});
    kernel::Group g{{th, sq, sub, mul}, {{-2}, {0, 0}, {-3, 1}, {-1, 2}}, {x, y, one}};
    Kernel k = kernel::lower_group(g, DType::F64);
    std::string text = kernel::to_string(k);
    EXPECT_NE(text.find("s0 = tanh(%1[i1])"), std::string::npos) << text;
    EXPECT_NE(text.find("%3[i0, i1] = (%0[i0, i1] * (%2[] - (s0 * s0)))"), std::string::npos) << text;
    std::vector<Data> in{Data::from_reals(DType::F64, {1, 2, 3, 4, 5, 6}), Data::from_reals(DType::F64, {0.5, -1, 2}),
                         Data::from_reals(DType::F64, {1})};
    Data out = run_kernel(k, in);
    for (int i = 0; i < 6; ++i) {
        double t = std::tanh(in[1].real((size_t)(i % 3)));
        EXPECT_NEAR(out.real((size_t)i), in[0].real((size_t)i) * (1 - t * t), 1e-15);
    }
    kernel::Group bad = g;
    bad.members[1].prim = "dot";
    EXPECT_THROW(kernel::lower_group(bad, DType::F64), Error);
    bad = g;
    bad.from[3] = {-1, 3};
    EXPECT_THROW(kernel::lower_group(bad, DType::F64), Error);
}

/// gelu reads its operand twice: a member under it is bound once, so a chain of n gelus is n
/// bindings, not 2^n inlined copies (40 of them once took hours and gigabytes to lower).
TEST(PreskLower, FusedGeluChainStaysLinear) {
    TypeP x = real_t({{"B", 2}, {"", 3}});
    kernel::Group g;
    g.inputs = {x};
    const int n = 40;
    for (int m = 0; m < n; ++m) {
        g.members.push_back(node("gelu", {x}));
        g.from.push_back({m == 0 ? -1 : m - 1});
    }
    Kernel k = kernel::lower_group(g, DType::F64);
    const std::string text = kernel::to_string(k);
    EXPECT_LT(text.size(), 200u * n) << text.substr(0, 2000);
    EXPECT_NE(text.find("s0 = ((%0[i0, i1] * erfc((neg(%0[i0, i1]) / sqrt(2)))) / 2)"), std::string::npos) << text;
    // The same bits as the gelus launched one by one.
    Data in = Data::from_reals(DType::F64, {-2, -0.5, 0, 0.25, 1, 3});
    Data fused = run_kernel(k, {in});
    Data chain = in;
    for (int m = 0; m < n; ++m) chain = run_kernel(kernel::lower(node("gelu", {x}), DType::F64), {chain});
    EXPECT_EQ(fused.reals(), chain.reals());
}

TEST(PreskLower, LanesAreBitIdenticalToTheScalarTile) {
    for (const Case& c : cases()) {
        if (c.prim != "dot" && c.prim != "matmul") continue;
        for (DType t : {DType::F64, DType::F32}) {
            SCOPED_TRACE(c.label + " " + kernel::dtype_name(t));
            std::vector<Data> in = draw_operands(c, t, 5);
            Kernel k1 = kernel::lower(c.node(), t, 1);
            Data scalar = run_kernel(k1, in);
            for (int lanes : {2, 4}) {
                Kernel kv = kernel::lower(c.node(), t, lanes);
                if (c.label.find("tiled") != std::string::npos) {
                    EXPECT_GT(kv.n_vectors, 0) << kernel::to_string(kv);
                    EXPECT_EQ(kv.n_vectors, 8 / lanes) << kernel::to_string(kv);
                }
                Data v = run_kernel(kv, in);
                ASSERT_EQ(v.size(), scalar.size());
                for (int64_t i = 0; i < v.size(); ++i)
                    EXPECT_EQ(std::bit_cast<uint64_t>(v.real(i)), std::bit_cast<uint64_t>(scalar.real(i))) << i;
            }
        }
    }
}

TEST(PreskLower, Refusals) {
    Node n = node("dot", {real_t({{"", 2}, {"", 3}}), real_t({{"", 3}, {"", 8}})});
    auto message = [](auto&& f) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message([&] { kernel::lower(n, DType::F32, 3); }), "lower dot: lanes must be 1, 2 or 4, not 3");
    Node s = node("slice", {real_t({{"", 4}})}, {0, 1, 2});
    EXPECT_EQ(message([&] { kernel::lower(s, DType::F32); }),
              "lower slice: a host primitive, evaluated on the host and not as a kernel");
    Node wrong = n;
    wrong.result = real_t({{"", 2}, {"", 9}});
    EXPECT_EQ(message([&] { kernel::lower(wrong, DType::F32); }), "lower dot: the result type [2, 9] is not the rule's [2, 8]");
    Node bad = node("dot", {real_t({{"", 2}, {"", 3}}), real_t({{"", 3}, {"", 8}})});
    bad.operands[1] = real_t({{"", 4}, {"", 8}});
    EXPECT_NE(message([&] { kernel::lower(bad, DType::F32); }).find("lower dot: dot: the last axis"), std::string::npos);
    Node mx = node("max", {real_t({{"", 2}, {"", 0}})}, {1});
    EXPECT_EQ(message([&] { kernel::lower(mx, DType::F32); }), "lower max: the maximum over an empty axis");
    EXPECT_TRUE(kernel::is_host_prim("sample"));
    EXPECT_FALSE(kernel::is_host_prim("embed"));
    EXPECT_TRUE(kernel::is_elementwise("gelu"));
    EXPECT_FALSE(kernel::is_elementwise("softmax"));
}

TEST(PreskLower, SignaturesTellKernelsApart) {
    Node a = node("dot", {real_t({{"batch", 4}, {"", 3}}), real_t({{"", 3}, {"", 2}})});
    Node b = node("dot", {real_t({{"rows", 4}, {"", 3}}), real_t({{"", 3}, {"", 2}})});
    Node c = node("sum", {real_t({{"", 4}, {"", 3}})}, {0});
    Node d = node("sum", {real_t({{"", 4}, {"", 3}})}, {1});
    EXPECT_NE(kernel::signature(a, DType::F32), kernel::signature(b, DType::F32));
    EXPECT_NE(kernel::signature(a, DType::F32), kernel::signature(a, DType::F64));
    EXPECT_NE(kernel::signature(c, DType::F32), kernel::signature(d, DType::F32));
    EXPECT_EQ(kernel::signature(a, DType::F32), kernel::signature(node("dot", a.operands), DType::F32));
    kernel::Group g1{{node("exp", {c.operands[0]})}, {{-1}}, {c.operands[0]}};
    kernel::Group g2{{node("neg", {c.operands[0]})}, {{-1}}, {c.operands[0]}};
    EXPECT_NE(kernel::signature(g1, DType::F32), kernel::signature(g2, DType::F32));
    // One member gives lower()'s kernel.
    EXPECT_EQ(kernel::to_string(kernel::lower_group(g1, DType::F32)), kernel::to_string(kernel::lower(g1.members[0], DType::F32)));
}

} // namespace
} // namespace presk
