#include "ref/interp.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "core/prims.h"
#include "lang/stack.h"
#include "ref/chacha.h"

namespace presk::ref {
namespace {

using core::Let;
using core::Op;
constexpr mpfr_rnd_t N = MPFR_RNDN;

/// Row-major strides of `axes`.
std::vector<int64_t> strides(const std::vector<Axis>& axes) {
    std::vector<int64_t> s(axes.size());
    int64_t k = 1;
    for (size_t i = axes.size(); i-- > 0;) { s[i] = k; k *= axes[i].size; }
    return s;
}

/// For each element of `r`, the offset of the element of `x` broadcast to it.
std::vector<int64_t> broadcast_offsets(const std::vector<Axis>& x, const std::vector<Axis>& r) {
    auto pos = align_axes(x, r);
    if (!pos) throw Error({}, "cannot broadcast " + axes_string(x) + " to " + axes_string(r));
    std::vector<int64_t> xs = strides(x), map(r.size(), 0);
    for (size_t i = 0; i < x.size(); ++i) map[(*pos)[i]] = xs[i];
    int64_t n = 1;
    for (const Axis& a : r) n *= a.size;
    std::vector<int64_t> out(n);
    std::vector<int64_t> idx(r.size(), 0);
    int64_t off = 0;
    for (int64_t k = 0; k < n; ++k) {
        out[k] = off;
        for (size_t d = r.size(); d-- > 0;) {
            if (++idx[d] < r[d].size) { off += map[d]; break; }
            off -= map[d] * (r[d].size - 1);
            idx[d] = 0;
        }
    }
    return out;
}

using Fn1 = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
using Fn2 = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

/// |x| (mpfr_abs is a macro).
int abs_of(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) { return mpfr_abs(r, x, rnd); }

/// sign(x): -1, 1, x itself at either zero and at NaN.
int sign_of(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) {
    if (mpfr_nan_p(x) || mpfr_zero_p(x)) return mpfr_set(r, x, rnd);
    return mpfr_set_si(r, mpfr_sgn(x), rnd);
}

/// maximum (Max) or minimum of a and b: NaN when either is; a on a tie (so maximum(-0, +0) is -0).
template <bool Max>
int extremum(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_rnd_t rnd) {
    if (mpfr_nan_p(a)) return mpfr_set(r, a, rnd);
    if (mpfr_nan_p(b)) return mpfr_set(r, b, rnd);
    int c = mpfr_cmp(a, b);
    return mpfr_set(r, (Max ? c >= 0 : c <= 0) ? a : b, rnd);
}

} // namespace

Real Interp::lit(const std::string& text) const {
    Real r(o_.bits);
    if (text == "pi") mpfr_const_pi(r.get(), N);
    else if (mpfr_set_str(r.get(), text.c_str(), 10, N) != 0) throw Error({}, "bad literal '" + text + "'");
    return r;
}

std::string Interp::key(const std::string& text) const {
    std::string k = text;
    for (const auto& c : ctx_) k += "[" + c + "]";
    return k;
}

Tensor Interp::fresh(const TypeP& t, const std::string& site) {
    int64_t n = t->numel();
    if (n > o_.max_elements) throw Error({}, site + ": a tensor of " + std::to_string(n) + " elements is too large for the interpreter");
    Tensor r;
    r.type = t;
    if (t->elem == Elem::Real) r.re.assign(n, Real(o_.bits));
    else r.in.assign(n, 0);
    return r;
}

Value Interp::call(const std::string& name, const std::vector<Value>& args) {
    const core::Function* f = p_.find(name);
    if (!f) throw Error({}, "no function '" + name + "'");
    if ((int)args.size() != f->arity()) throw Error({}, name + ": wrong number of arguments");
    struct Depth {  // bounds the nesting of calls, also when one throws
        int& d;
        ~Depth() { --d; }
    } guard{++depth_};
    if (depth_ > kMaxCallDepth) throw Error({}, name + ": calls nested deeper than " + std::to_string(kMaxCallDepth));
    check_stack({}, "calls");
    std::vector<Value> env(args);
    env.resize(f->next_id());
    for (const Let& l : f->body) {
        std::vector<const Value*> a;
        for (int id : l.args) a.push_back(&env[id]);
        std::string site = f->name + "/%" + std::to_string(l.id);
        try {
            switch (l.op) {
            case Op::Lit: {
                Tensor t;
                t.type = l.type;
                t.re.push_back(lit(l.text));
                env[l.id] = make_tensor(std::move(t));
                break;
            }
            case Op::Tuple:
            case Op::Record: {
                std::vector<Value> items;
                for (const Value* v : a) items.push_back(*v);
                env[l.id] = make_tree(l.type, std::move(items));
                break;
            }
            case Op::Get: env[l.id] = a[0]->items.at(l.ints[0]); break;
            case Op::Call: {
                std::vector<Value> cargs;
                for (const Value* v : a) cargs.push_back(*v);
                env[l.id] = call(l.name, cargs);
                break;
            }
            case Op::Loop: env[l.id] = loop(l, a); break;
            case Op::Prim: env[l.id] = prim(*f, l, a); break;
            }
        } catch (const Error& e) {
            std::string msg = e.what();
            if (msg.find("/%") == std::string::npos) msg = site + ": " + msg;
            throw Error(l.loc, msg);
        }
    }
    return env[f->result];
}

Value Interp::loop(const Let& l, const std::vector<const Value*>& a) {
    int64_t s = l.ints[0], rev = l.ints[1], ys = l.ints[2], L = l.ints[3];
    Value carry = *a[s];
    std::vector<Value> out(ys ? L : 0);
    for (int64_t k = 0; k < L; ++k) {
        int64_t i = rev ? L - 1 - k : k;
        std::vector<Value> args;
        for (int64_t j = 0; j < s; ++j) args.push_back(slice_first(*a[j], i));
        args.push_back(carry);
        for (size_t j = s + 1; j < a.size(); ++j) args.push_back(*a[j]);
        ctx_.push_back(std::to_string(i));
        Value r = call(l.name, args);
        ctx_.pop_back();
        if (ys == 3) out[i] = carry;
        if (ys == 2) {
            carry = r.items[0];
            out[i] = r.items[1];
        } else {
            carry = r;
        }
        if (ys == 1) out[i] = carry;
    }
    if (!ys) return carry;
    return make_tree(l.type, {carry, stack_first(out)});
}

namespace {

/// One primitive let being evaluated: its operands, its result (zeros of its type, made by
/// Interp::fresh) and what the rules read of the interpreter's options.
struct Eval {
    core::Prim p;
    const Let& l;
    const std::vector<const Value*>& a;
    Tensor& r;
    int64_t total;             // the result's element count
    long bits;
    int64_t max_elements;
    uint64_t seed;
    bool train;
    const std::string& key;    // a random primitive's stream key (empty for the others)

    const Tensor& T(size_t i) const { return *a[i]->t; }
    /// The result as a value, once the rule has written r.
    Value result() { return make_tensor(std::move(r)); }
    std::string name() const { return core::info(p).name; }
};

// The reference rules, one per primitive or per family sharing one (the family's members
// told apart by e.p): each writes e.r, or returns another value of the let's type.

template <Fn1 F>
Value unary(Eval& e) {
    for (int64_t k = 0; k < e.total; ++k) F(e.r.re[k].get(), e.T(0).re[k].get(), N);
    return e.result();
}

/// x Phi(x) = x erfc(-x / sqrt 2) / 2: erfc has no cancellation where 1 + erf(x / sqrt 2)
/// loses every bit (x < -20 already needs more than 256 bits that way).
Value gelu(Eval& e) {
    Real s2(e.bits), t(e.bits);
    mpfr_sqrt_ui(s2.get(), 2, N);
    for (int64_t k = 0; k < e.total; ++k) {
        mpfr_div(t.get(), e.T(0).re[k].get(), s2.get(), N);
        mpfr_neg(t.get(), t.get(), N);
        mpfr_erfc(t.get(), t.get(), N);
        mpfr_mul(t.get(), t.get(), e.T(0).re[k].get(), N);
        mpfr_div_2ui(e.r.re[k].get(), t.get(), 1, N);
    }
    return e.result();
}

template <Fn2 F>
Value binary(Eval& e) {
    auto oa = broadcast_offsets(e.T(0).type->axes, e.l.type->axes);
    auto ob = broadcast_offsets(e.T(1).type->axes, e.l.type->axes);
    for (int64_t k = 0; k < e.total; ++k) F(e.r.re[k].get(), e.T(0).re[oa[k]].get(), e.T(1).re[ob[k]].get(), N);
    return e.result();
}

/// where(c, a, b): a where c != 0 (a NaN c too), else b.
Value where(Eval& e) {
    auto oc = broadcast_offsets(e.T(0).type->axes, e.l.type->axes);
    auto oa = broadcast_offsets(e.T(1).type->axes, e.l.type->axes);
    auto ob = broadcast_offsets(e.T(2).type->axes, e.l.type->axes);
    for (int64_t k = 0; k < e.total; ++k) {
        bool pick_a = !mpfr_zero_p(e.T(0).re[oc[k]].get());
        mpfr_set(e.r.re[k].get(), pick_a ? e.T(1).re[oa[k]].get() : e.T(2).re[ob[k]].get(), N);
    }
    return e.result();
}

/// The ein spec a dot or matmul is: dot contracts the first operand's last axis with the
/// second's first, matmul the last two of each over equal batch axes.
std::string contraction_spec(const Eval& e) {
    size_t ra = e.T(0).type->axes.size(), rb = e.T(1).type->axes.size();
    auto lt = [](size_t k) { return k < 26 ? char('a' + k) : char('A' + (k - 26)); };
    std::string A, B, O;
    if (e.p == core::Prim::Dot) {
        for (size_t i = 0; i < ra; ++i) A += lt(i);
        B += A.back();
        for (size_t i = 1; i < rb; ++i) B += lt(ra + i);
        O = A.substr(0, ra - 1) + B.substr(1);
    } else {
        for (size_t i = 0; i + 2 < ra; ++i) A += lt(i);
        B = O = A;
        A += lt(ra);
        A += lt(ra + 1);
        B += lt(ra + 1);
        B += lt(ra + 2);
        O += lt(ra);
        O += lt(ra + 2);
    }
    return A + "," + B + "->" + O;
}

/// ein, dot and matmul: every product of the operands added to its output element in the
/// order of the labels (the output's, then the summed ones in order of appearance).
Value contract(Eval& e) {
    const auto& a = e.a;
    const std::string spec = e.p == core::Prim::Ein ? e.l.text : contraction_spec(e);
    core::EinSpec es = core::parse_ein(spec);
    std::string labels = es.output;
    for (const auto& in : es.inputs)
        for (char c : in)
            if (labels.find(c) == std::string::npos) labels += c;
    std::vector<int64_t> size(labels.size());
    std::vector<std::vector<int64_t>> stride(a.size() + 1, std::vector<int64_t>(labels.size(), 0));
    auto fill = [&](const std::string& lab, const std::vector<Axis>& axes, std::vector<int64_t>& st) {
        auto s = strides(axes);
        for (size_t k = 0; k < lab.size(); ++k) {
            size_t j = labels.find(lab[k]);
            size[j] = axes[k].size;
            st[j] += s[k];
        }
    };
    for (size_t i = 0; i < a.size(); ++i) fill(es.inputs[i], e.T(i).type->axes, stride[i]);
    fill(es.output, e.l.type->axes, stride[a.size()]);
    int64_t steps = 1;
    for (int64_t s : size) {
        if (s != 0 && steps > e.max_elements * 64 / s) throw Error({}, "contraction too large for the interpreter");
        steps *= s;
    }
    std::vector<int64_t> idx(labels.size(), 0), off(a.size() + 1, 0);
    Real prod(e.bits);
    for (int64_t k = 0; k < steps; ++k) {
        mpfr_set(prod.get(), e.T(0).re[off[0]].get(), N);
        for (size_t i = 1; i < a.size(); ++i) mpfr_mul(prod.get(), prod.get(), e.T(i).re[off[i]].get(), N);
        mpfr_add(e.r.re[off[a.size()]].get(), e.r.re[off[a.size()]].get(), prod.get(), N);
        for (size_t d = labels.size(); d-- > 0;) {
            if (++idx[d] < size[d]) {
                for (size_t i = 0; i <= a.size(); ++i) off[i] += stride[i][d];
                break;
            }
            for (size_t i = 0; i <= a.size(); ++i) off[i] -= stride[i][d] * (size[d] - 1);
            idx[d] = 0;
        }
    }
    return e.result();
}

/// sum, mean and max over an axis (sum and mean over everything without one), in index order.
Value reduce(Eval& e) {
    const Tensor& x = e.T(0);
    const bool max = e.p == core::Prim::Max;
    AxisSplit s = e.l.ints.empty() ? AxisSplit{1, x.type->numel(), 1} : split_at(x.type->axes, e.l.ints[0]);
    if (max && s.n == 0) throw Error({}, "max over an empty axis");
    for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
            mpfr_ptr out = e.r.re[o * s.inner + i].get();
            for (int64_t j = 0; j < s.n; ++j) {
                mpfr_srcptr v = x.re[(o * s.n + j) * s.inner + i].get();
                if (max) { if (j == 0 || mpfr_greater_p(v, out)) mpfr_set(out, v, N); }
                else mpfr_add(out, out, v, N);
            }
            if (e.p == core::Prim::Mean) mpfr_div_si(out, out, s.n, N);
        }
    return e.result();
}

/// softmax (masked where a mask is given) and cross_entropy, row by row of the last axis:
/// the row maximum m, e_j = exp(x_j - m) and their sum; softmax is e_j / sum,
/// cross_entropy log(sum) + m - x[target].
Value softmax_rows(Eval& e) {
    const Tensor& x = e.T(0);
    const bool softmax = e.p == core::Prim::Softmax;
    int64_t V = x.type->axes.back().size, rows = x.type->numel() / std::max<int64_t>(V, 1);
    std::vector<int64_t> mask;
    if (softmax && e.a.size() == 2) {
        auto off = broadcast_offsets(e.T(1).type->axes, x.type->axes);
        for (int64_t k = 0; k < (int64_t)off.size(); ++k) mask.push_back(e.T(1).in[off[k]]);
    }
    Real m(e.bits), sum(e.bits), t(e.bits);
    std::vector<Real> ex(V, Real(e.bits));
    for (int64_t row = 0; row < rows; ++row) {
        const Real* xr = &x.re[row * V];
        auto allowed = [&](int64_t j) { return mask.empty() || mask[row * V + j]; };
        bool any = false;
        for (int64_t j = 0; j < V; ++j)
            if (allowed(j) && (!any || mpfr_greater_p(xr[j].get(), m.get()))) {
                mpfr_set(m.get(), xr[j].get(), N);
                any = true;
            }
        if (!any) throw Error({}, "softmax: row " + std::to_string(row) + " has every position masked");
        mpfr_set_zero(sum.get(), 1);
        for (int64_t j = 0; j < V; ++j) {
            if (!allowed(j)) { mpfr_set_zero(ex[j].get(), 1); continue; }
            mpfr_sub(ex[j].get(), xr[j].get(), m.get(), N);
            mpfr_exp(ex[j].get(), ex[j].get(), N);
            mpfr_add(sum.get(), sum.get(), ex[j].get(), N);
        }
        if (softmax) {
            for (int64_t j = 0; j < V; ++j) mpfr_div(e.r.re[row * V + j].get(), ex[j].get(), sum.get(), N);
        } else {  // log(sum) + m - x[target]
            int64_t tg = e.T(1).in[row];
            if (tg < 0 || tg >= V)
                throw Error({}, "cross_entropy: target " + std::to_string(tg) + " out of range 0.." + std::to_string(V - 1));
            mpfr_log(t.get(), sum.get(), N);
            mpfr_add(t.get(), t.get(), m.get(), N);
            mpfr_sub(e.r.re[row].get(), t.get(), xr[tg].get(), N);
        }
    }
    return e.result();
}

/// embed (rows of the table gathered by the ids) and scatter_add (the rows of operand 0 added
/// into zeros of the table's shape at the ids, in order).
Value gather_scatter(Eval& e) {
    const bool embed = e.p == core::Prim::Embed;
    const Tensor& tab = embed ? e.T(0) : e.T(2);
    const Tensor& ids = e.T(1);
    int64_t rows = tab.type->axes[0].size, D = tab.type->numel() / std::max<int64_t>(rows, 1);
    for (int64_t k = 0; k < (int64_t)ids.in.size(); ++k) {
        int64_t id = ids.in[k];
        if (id < 0 || id >= rows)
            throw Error({}, e.name() + ": index " + std::to_string(id) + " out of range 0.." + std::to_string(rows - 1));
        for (int64_t d = 0; d < D; ++d) {
            if (embed) mpfr_set(e.r.re[k * D + d].get(), tab.re[id * D + d].get(), N);
            else mpfr_add(e.r.re[id * D + d].get(), e.r.re[id * D + d].get(), e.T(0).re[k * D + d].get(), N);
        }
    }
    return e.result();
}

/// argmax (the last of equal maxima) and sample (the first class whose cumulative softmax
/// probability exceeds u, a uniform of the site's stream), per row of the last axis.
Value pick(Eval& e) {
    const Tensor& x = e.T(0);
    const bool argmax = e.p == core::Prim::Argmax;
    int64_t V = x.type->axes.back().size, rows = e.total;
    ChaCha rng(e.seed, e.key);
    Real m(e.bits), acc(e.bits), u(e.bits), sum(e.bits);
    if (V == 0) {  // empty rows: argmax writes 0 (r is zeroed), sample has nothing to draw
        if (!argmax) throw Error({}, "sample: sampling needs a non-empty last axis");
        return e.result();
    }
    for (int64_t row = 0; row < rows; ++row) {
        const Real* xr = &x.re[row * V];
        int64_t best = 0;
        for (int64_t j = 1; j < V; ++j)
            if (!mpfr_less_p(xr[j].get(), xr[best].get())) best = j;  // the last of equal maxima
        if (argmax) { e.r.in[row] = best; continue; }
        // sample: the first j whose cumulative softmax probability exceeds u
        mpfr_set(m.get(), xr[best].get(), N);
        std::vector<Real> ex(V, Real(e.bits));
        mpfr_set_zero(sum.get(), 1);
        for (int64_t j = 0; j < V; ++j) {
            mpfr_sub(ex[j].get(), xr[j].get(), m.get(), N);
            mpfr_exp(ex[j].get(), ex[j].get(), N);
            mpfr_add(sum.get(), sum.get(), ex[j].get(), N);
        }
        mpfr_set_d(u.get(), rng.next_unit(), N);
        mpfr_mul(u.get(), u.get(), sum.get(), N);
        mpfr_set_zero(acc.get(), 1);
        int64_t choice = V - 1;
        for (int64_t j = 0; j < V; ++j) {
            mpfr_add(acc.get(), acc.get(), ex[j].get(), N);
            if (mpfr_greater_p(acc.get(), u.get())) { choice = j; break; }
        }
        e.r.in[row] = choice;
    }
    return e.result();
}

/// split_heads: x[..., t, h*Dh + j] -> r[..., h, t, j]; merge_heads is the inverse.
Value heads(Eval& e) {
    const bool split = e.p == core::Prim::SplitHeads;
    const auto& big = split ? e.l.type->axes : e.T(0).type->axes;  // [..., H, T, Dh]
    size_t k = big.size();
    int64_t H = big[k - 3].size, Tn = big[k - 2].size, Dh = big[k - 1].size;
    int64_t outer = e.total / std::max<int64_t>(1, H * Tn * Dh);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < Tn; ++t)
                for (int64_t j = 0; j < Dh; ++j) {
                    int64_t hd = ((o * H + h) * Tn + t) * Dh + j;
                    int64_t flat = (o * Tn + t) * (H * Dh) + h * Dh + j;
                    if (split) mpfr_set(e.r.re[hd].get(), e.T(0).re[flat].get(), N);
                    else mpfr_set(e.r.re[flat].get(), e.T(0).re[hd].get(), N);
                }
    return e.result();
}

Value sum_to(Eval& e) {
    auto off = broadcast_offsets(e.l.type->axes, e.T(0).type->axes);
    for (int64_t k = 0; k < (int64_t)off.size(); ++k)
        mpfr_add(e.r.re[off[k]].get(), e.r.re[off[k]].get(), e.T(0).re[k].get(), N);
    return e.result();
}

Value broadcast_like(Eval& e) {
    auto off = broadcast_offsets(e.T(0).type->axes, e.l.type->axes);
    for (int64_t k = 0; k < e.total; ++k) mpfr_set(e.r.re[k].get(), e.T(0).re[off[k]].get(), N);
    return e.result();
}

/// expand (operand 0 repeated along the new axis ints[0]) and max_grad (operand 1 where
/// operand 0 has the last of its equal maxima along the axis, else 0).
Value along_axis(Eval& e) {
    const bool expand = e.p == core::Prim::Expand;
    AxisSplit s = split_at(e.l.type->axes, e.l.ints[0]);
    for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
            int64_t best = 0;
            if (!expand)
                for (int64_t j = 1; j < s.n; ++j)
                    if (!mpfr_less_p(e.T(0).re[(o * s.n + j) * s.inner + i].get(),
                                     e.T(0).re[(o * s.n + best) * s.inner + i].get()))
                        best = j;
            for (int64_t j = 0; j < s.n; ++j) {
                int64_t at = (o * s.n + j) * s.inner + i;
                if (expand) mpfr_set(e.r.re[at].get(), e.T(0).re[o * s.inner + i].get(), N);
                else if (j == best) mpfr_set(e.r.re[at].get(), e.T(1).re[at].get(), N);
            }
        }
    return e.result();
}

Value causal_mask(Eval& e) {
    int64_t A = e.l.type->axes[0].size, B = e.l.type->axes[1].size;
    for (int64_t i = 0; i < A; ++i)
        for (int64_t j = 0; j < B; ++j) e.r.in[i * B + j] = j <= i + (B - A);
    return e.result();
}

Value positions(Eval& e) {
    for (int64_t k = 0; k < e.total; ++k) e.r.in[k] = k;
    return e.result();
}

/// slice, index (down: the part of the operand at `start` along `axis`) and unslice, unindex
/// (up: the operand placed there in zeros of the result's shape).
Value part(Eval& e) {
    const core::Prim p = e.p;
    bool down = p == core::Prim::Slice || p == core::Prim::Index;
    const Tensor& x = e.T(0);
    const auto& big = down ? x.type->axes : e.l.type->axes;
    const auto& small = down ? e.l.type->axes : x.type->axes;
    int64_t axis = e.l.ints[0], start = e.l.ints[1];
    AxisSplit sb = split_at(big, axis);
    bool keep = p == core::Prim::Slice || p == core::Prim::Unslice;
    int64_t len = keep ? small[axis].size : 1;
    for (int64_t o = 0; o < sb.outer; ++o)
        for (int64_t j = 0; j < len; ++j)
            for (int64_t i = 0; i < sb.inner; ++i) {
                int64_t b = (o * sb.n + start + j) * sb.inner + i, s = (o * len + j) * sb.inner + i;
                int64_t from = down ? b : s, to = down ? s : b;
                if (x.type->elem == Elem::Real) mpfr_set(e.r.re[to].get(), x.re[from].get(), N);
                else e.r.in[to] = x.in[from];
            }
    return e.result();
}

Value stack(Eval& e) {
    std::vector<Value> parts;
    for (const Value* v : e.a) parts.push_back(*v);
    Value s = stack_first(parts);
    Tensor t = *s.t;
    t.type = e.l.type;
    return make_tensor(std::move(t));
}

/// Outside training the operand; in training x / (1 - p) where the stream's uniform u has
/// p <= u, else 0.
Value dropout(Eval& e) {
    Real p(e.bits), keep(e.bits);
    mpfr_set(p.get(), e.T(1).re[0].get(), N);
    if (mpfr_nan_p(p.get()) || mpfr_sgn(p.get()) < 0 || mpfr_cmp_ui(p.get(), 1) >= 0) {
        std::ostringstream m;
        m << "dropout: the rate " << mpfr_get_d(p.get(), N) << " is not in [0, 1)";
        throw Error({}, m.str());
    }
    mpfr_ui_sub(keep.get(), 1, p.get(), N);
    ChaCha rng(e.seed, e.key);
    for (int64_t k = 0; k < e.total; ++k) {
        if (!e.train) { mpfr_set(e.r.re[k].get(), e.T(0).re[k].get(), N); continue; }
        bool on = mpfr_cmp_d(p.get(), rng.next_unit()) <= 0;
        if (on) mpfr_div(e.r.re[k].get(), e.T(0).re[k].get(), keep.get(), N);
    }
    return e.result();
}

Value zeros_like(Eval& e) { return e.result(); }

Value onehot(Eval& e) {
    int64_t V = e.l.type->axes.back().size;
    for (int64_t k = 0; k < (int64_t)e.T(0).in.size(); ++k) {
        int64_t t = e.T(0).in[k];
        if (t < 0 || t >= V) throw Error({}, "onehot: index " + std::to_string(t) + " out of range");
        mpfr_set_ui(e.r.re[k * V + t].get(), 1, N);
    }
    return e.result();
}

/// retype, split and merge: the operand's elements in their order under the result's type.
Value retype(Eval& e) {
    Tensor t = e.T(0);
    t.type = e.l.type;
    return make_tensor(std::move(t));
}

/// The reference rule of each primitive, in the order of PRESK_PRIMS.
struct RefRule {
    core::Prim prim;
    Value (*rule)(Eval&);
};

using core::Prim;
constexpr RefRule kRefRules[] = {
    {Prim::Add, binary<mpfr_add>}, {Prim::Sub, binary<mpfr_sub>}, {Prim::Mul, binary<mpfr_mul>},
    {Prim::Div, binary<mpfr_div>}, {Prim::Pow, binary<mpfr_pow>},
    {Prim::Neg, unary<mpfr_neg>}, {Prim::Exp, unary<mpfr_exp>}, {Prim::Log, unary<mpfr_log>},
    {Prim::Tanh, unary<mpfr_tanh>}, {Prim::Sin, unary<mpfr_sin>}, {Prim::Cos, unary<mpfr_cos>},
    {Prim::Sqrt, unary<mpfr_sqrt>}, {Prim::Erf, unary<mpfr_erf>}, {Prim::Erfc, unary<mpfr_erfc>},
    {Prim::Gelu, gelu}, {Prim::Abs, unary<abs_of>}, {Prim::Sign, unary<sign_of>},
    {Prim::Maximum, binary<extremum<true>>}, {Prim::Minimum, binary<extremum<false>>}, {Prim::Where, where},
    {Prim::Dot, contract}, {Prim::Matmul, contract}, {Prim::Ein, contract},
    {Prim::Sum, reduce}, {Prim::Mean, reduce}, {Prim::Max, reduce},
    {Prim::Softmax, softmax_rows}, {Prim::CrossEntropy, softmax_rows}, {Prim::Embed, gather_scatter},
    {Prim::Argmax, pick}, {Prim::Sample, pick}, {Prim::SplitHeads, heads}, {Prim::MergeHeads, heads},
    {Prim::Split, retype}, {Prim::Merge, retype},
    {Prim::SumTo, sum_to}, {Prim::BroadcastLike, broadcast_like},
    {Prim::CausalMask, causal_mask}, {Prim::Positions, positions},
    {Prim::Slice, part}, {Prim::Index, part}, {Prim::Stack, stack}, {Prim::Dropout, dropout},
    {Prim::ScatterAdd, gather_scatter}, {Prim::Expand, along_axis}, {Prim::Unslice, part}, {Prim::Unindex, part},
    {Prim::ZerosLike, zeros_like}, {Prim::Onehot, onehot}, {Prim::MaxGrad, along_axis}, {Prim::Retype, retype},
};
static_assert(core::complete(kRefRules), "kRefRules: one reference rule per primitive, in the order of PRESK_PRIMS");

} // namespace

Value Interp::prim(const core::Function& f, const Let& l, const std::vector<const Value*>& a) {
    const std::optional<core::Prim> p = core::find_prim(l.name);
    std::string site = f.name + "/%" + std::to_string(l.id);
    Tensor r = fresh(l.type, site);
    if (!p) throw Error({}, "the interpreter has no rule for '" + l.name + "'");
    const std::string k = core::has(*p, core::kRandom) ? key(l.text) : std::string();
    Eval e{*p, l, a, r, l.type->numel(), o_.bits, o_.max_elements, o_.seed, o_.train, k};
    return kRefRules[(size_t)*p].rule(e);
}

namespace {

void eval_scalar(const core::Scalar& s, Real& out, long bits) {
    switch (s.kind) {
    case core::Scalar::Num:
        if (mpfr_set_str(out.get(), s.text.c_str(), 10, N) != 0) throw Error({}, "bad number '" + s.text + "'");
        return;
    case core::Scalar::Neg: eval_scalar(*s.args[0], out, bits); mpfr_neg(out.get(), out.get(), N); return;
    case core::Scalar::Call:
        eval_scalar(*s.args[0], out, bits);
        if (s.text == "sqrt") mpfr_sqrt(out.get(), out.get(), N);
        else if (s.text == "exp") mpfr_exp(out.get(), out.get(), N);
        else mpfr_log(out.get(), out.get(), N);
        return;
    case core::Scalar::Bin: {
        Real b(bits);
        eval_scalar(*s.args[0], out, bits);
        eval_scalar(*s.args[1], b, bits);
        Fn2 f = s.text == "+" ? mpfr_add : s.text == "-" ? mpfr_sub : s.text == "*" ? mpfr_mul : mpfr_div;
        f(out.get(), out.get(), b.get(), N);
        return;
    }
    }
}

/// normal(mean, std) by Box-Muller, one pair of uniforms per value: z = sqrt(-2 ln(1 - u1)) cos(2 pi u2).
void draw(const std::string& init, const std::vector<Real>& args, ChaCha& rng, Real& out, long bits) {
    if (init == "zeros") { mpfr_set_zero(out.get(), 1); return; }
    if (init == "ones") { mpfr_set_ui(out.get(), 1, N); return; }
    Real u(bits), v(bits);
    mpfr_set_d(u.get(), rng.next_unit(), N);
    if (init == "uniform") {  // a + (b - a) u
        mpfr_sub(v.get(), args[1].get(), args[0].get(), N);
        mpfr_mul(v.get(), v.get(), u.get(), N);
        mpfr_add(out.get(), v.get(), args[0].get(), N);
        return;
    }
    mpfr_ui_sub(u.get(), 1, u.get(), N);
    mpfr_log(u.get(), u.get(), N);
    mpfr_mul_si(u.get(), u.get(), -2, N);
    mpfr_sqrt(u.get(), u.get(), N);
    mpfr_set_d(v.get(), rng.next_unit(), N);
    Real pi(bits);
    mpfr_const_pi(pi.get(), N);
    mpfr_mul(v.get(), v.get(), pi.get(), N);
    mpfr_mul_2ui(v.get(), v.get(), 1, N);
    mpfr_cos(v.get(), v.get(), N);
    mpfr_mul(u.get(), u.get(), v.get(), N);
    mpfr_mul(u.get(), u.get(), args[1].get(), N);
    mpfr_add(out.get(), u.get(), args[0].get(), N);
}

} // namespace

Value Interp::init_params() {
    std::map<std::string, Value> leaves;
    for (const core::ParamSpec& ps : p_.params) {
        std::vector<Real> args;
        for (const auto& s : ps.args) {
            args.emplace_back(o_.bits);
            eval_scalar(*s, args.back(), o_.bits);
        }
        Tensor t = fresh(ps.type, ps.path);
        ChaCha rng(o_.seed, ps.path);
        for (Real& x : t.re) draw(ps.init, args, rng, x, o_.bits);
        leaves[ps.path] = make_tensor(std::move(t));
    }
    std::function<Value(const TypeP&, const std::string&)> tree = [&](const TypeP& t, const std::string& path) -> Value {
        if (t->kind == Type::Tensor) return leaves.at(path);
        std::vector<Value> items;
        for (size_t i = 0; i < t->items.size(); ++i)
            items.push_back(tree(t->items[i], path.empty() ? t->names[i] : path + "." + t->names[i]));
        return make_tree(t, std::move(items));
    };
    return tree(p_.params_type, "");
}

Value Interp::synthesize(const TypeP& type, const std::string& name) {
    if (type->kind != Type::Tensor) {
        std::vector<Value> items;
        for (size_t i = 0; i < type->items.size(); ++i)
            items.push_back(synthesize(type->items[i], name + "." + (type->kind == Type::Record ? type->names[i] : std::to_string(i))));
        return make_tree(type, std::move(items));
    }
    Tensor t = fresh(type, "input " + name);
    ChaCha rng(o_.seed, "input." + name);
    std::vector<Real> nargs{lit("0"), lit("1")};
    if (type->elem == Elem::Real) {
        for (Real& x : t.re) draw("normal", nargs, rng, x, o_.bits);
    } else if (type->elem == Elem::Bool) {
        for (int64_t& x : t.in) x = rng.next_unit() < 0.5;
    } else {
        if (type->bound <= 0) throw Error({}, "input " + name + " : " + to_string(*type) + " needs a bound (int<V>[...]) to be synthesised");
        for (int64_t& x : t.in) x = (int64_t)(rng.next_unit() * (double)type->bound);
    }
    return make_tensor(std::move(t));
}

std::vector<Value> Interp::entry_args(const std::map<std::string, std::string>& given) {
    const core::Function* f = p_.find(p_.entry);
    if (!f) throw Error({}, "no entry function");
    std::vector<Value> args;
    int first = 0;
    if (p_.params_type) {
        args.push_back(init_params());
        first = 1;
    }
    for (int i = first; i < f->arity(); ++i) {
        auto it = given.find(f->param_names[i]);
        if (it == given.end()) {
            args.push_back(synthesize(f->param_types[i], f->param_names[i]));
            continue;
        }
        const TypeP& t = f->param_types[i];
        if (!(t->kind == Type::Tensor && t->elem == Elem::Real && t->axes.empty()))
            throw Error({}, "--input " + it->first + ": only real scalar inputs can be given, it is " + to_string(*t));
        Tensor v;
        v.type = t;
        v.re.push_back(lit(it->second));
        args.push_back(make_tensor(std::move(v)));
    }
    for (const auto& [name, value] : given)
        if (std::find(f->param_names.begin(), f->param_names.end(), name) == f->param_names.end())
            throw Error({}, "--input " + name + ": the entry has no such input");
    return args;
}

} // namespace presk::ref
