#include "ref/interp.h"

#include <algorithm>
#include <functional>
#include <map>

#include "core/prims.h"
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
    if (depth_ > 1000) throw Error({}, name + ": calls nested too deeply");
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

Value Interp::prim(const core::Function& f, const Let& l, const std::vector<const Value*>& a) {
    const std::string& n = l.name;
    std::string site = f.name + "/%" + std::to_string(l.id);
    Tensor r = fresh(l.type, site);
    auto T = [&](size_t i) -> const Tensor& { return *a[i]->t; };
    const int64_t total = l.type->numel();

    static const std::map<std::string, Fn1> unary = {
        {"neg", mpfr_neg}, {"exp", mpfr_exp}, {"log", mpfr_log}, {"tanh", mpfr_tanh}, {"sin", mpfr_sin},
        {"cos", mpfr_cos}, {"sqrt", mpfr_sqrt}, {"erf", mpfr_erf}, {"erfc", mpfr_erfc}};
    static const std::map<std::string, Fn2> binary = {
        {"add", mpfr_add}, {"sub", mpfr_sub}, {"mul", mpfr_mul}, {"div", mpfr_div}, {"pow", mpfr_pow}};
    if (auto it = unary.find(n); it != unary.end()) {
        for (int64_t k = 0; k < total; ++k) it->second(r.re[k].get(), T(0).re[k].get(), N);
    } else if (n == "gelu") {
        // x Phi(x) = x erfc(-x / sqrt 2) / 2: erfc has no cancellation where 1 + erf(x / sqrt 2)
        // loses every bit (x < -20 already needs more than 256 bits that way).
        Real s2(o_.bits), t(o_.bits);
        mpfr_sqrt_ui(s2.get(), 2, N);
        for (int64_t k = 0; k < total; ++k) {
            mpfr_div(t.get(), T(0).re[k].get(), s2.get(), N);
            mpfr_neg(t.get(), t.get(), N);
            mpfr_erfc(t.get(), t.get(), N);
            mpfr_mul(t.get(), t.get(), T(0).re[k].get(), N);
            mpfr_div_2ui(r.re[k].get(), t.get(), 1, N);
        }
    } else if (auto it2 = binary.find(n); it2 != binary.end()) {
        auto oa = broadcast_offsets(T(0).type->axes, l.type->axes);
        auto ob = broadcast_offsets(T(1).type->axes, l.type->axes);
        for (int64_t k = 0; k < total; ++k) it2->second(r.re[k].get(), T(0).re[oa[k]].get(), T(1).re[ob[k]].get(), N);
    } else if (n == "ein" || n == "dot" || n == "matmul") {
        std::string spec = l.text;
        if (n != "ein") {  // the same contraction written as an ein
            size_t ra = T(0).type->axes.size(), rb = T(1).type->axes.size();
            auto lt = [](size_t k) { return k < 26 ? char('a' + k) : char('A' + (k - 26)); };
            std::string A, B, O;
            if (n == "dot") {
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
            spec = A + "," + B + "->" + O;
        }
        core::EinSpec e = core::parse_ein(spec);
        std::string labels = e.output;
        for (const auto& in : e.inputs)
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
        for (size_t i = 0; i < a.size(); ++i) fill(e.inputs[i], T(i).type->axes, stride[i]);
        fill(e.output, l.type->axes, stride[a.size()]);
        int64_t steps = 1;
        for (int64_t s : size) {
            if (s != 0 && steps > o_.max_elements * 64 / s) throw Error({}, "contraction too large for the interpreter");
            steps *= s;
        }
        std::vector<int64_t> idx(labels.size(), 0), off(a.size() + 1, 0);
        Real prod(o_.bits);
        for (int64_t k = 0; k < steps; ++k) {
            mpfr_set(prod.get(), T(0).re[off[0]].get(), N);
            for (size_t i = 1; i < a.size(); ++i) mpfr_mul(prod.get(), prod.get(), T(i).re[off[i]].get(), N);
            mpfr_add(r.re[off[a.size()]].get(), r.re[off[a.size()]].get(), prod.get(), N);
            for (size_t d = labels.size(); d-- > 0;) {
                if (++idx[d] < size[d]) {
                    for (size_t i = 0; i <= a.size(); ++i) off[i] += stride[i][d];
                    break;
                }
                for (size_t i = 0; i <= a.size(); ++i) off[i] -= stride[i][d] * (size[d] - 1);
                idx[d] = 0;
            }
        }
    } else if (n == "sum" || n == "mean" || n == "max") {
        const Tensor& x = T(0);
        AxisSplit s = l.ints.empty() ? AxisSplit{1, x.type->numel(), 1} : split_at(x.type->axes, l.ints[0]);
        if (n == "max" && s.n == 0) throw Error({}, "max over an empty axis");
        for (int64_t o = 0; o < s.outer; ++o)
            for (int64_t i = 0; i < s.inner; ++i) {
                mpfr_ptr out = r.re[o * s.inner + i].get();
                for (int64_t j = 0; j < s.n; ++j) {
                    mpfr_srcptr v = x.re[(o * s.n + j) * s.inner + i].get();
                    if (n == "max") { if (j == 0 || mpfr_greater_p(v, out)) mpfr_set(out, v, N); }
                    else mpfr_add(out, out, v, N);
                }
                if (n == "mean") mpfr_div_si(out, out, s.n, N);
            }
    } else if (n == "softmax" || n == "cross_entropy") {
        const Tensor& x = T(0);
        int64_t V = x.type->axes.back().size, rows = x.type->numel() / std::max<int64_t>(V, 1);
        std::vector<int64_t> mask;
        if (n == "softmax" && a.size() == 2) {
            auto off = broadcast_offsets(T(1).type->axes, x.type->axes);
            for (int64_t k = 0; k < (int64_t)off.size(); ++k) mask.push_back(T(1).in[off[k]]);
        }
        Real m(o_.bits), sum(o_.bits), t(o_.bits);
        std::vector<Real> e(V, Real(o_.bits));
        for (int64_t row = 0; row < rows; ++row) {
            const Real* xr = &x.re[row * V];
            auto allowed = [&](int64_t j) { return mask.empty() || mask[row * V + j]; };
            bool any = false;
            for (int64_t j = 0; j < V; ++j)
                if (allowed(j) && (!any || mpfr_greater_p(xr[j].get(), m.get()))) { mpfr_set(m.get(), xr[j].get(), N); any = true; }
            if (!any) throw Error({}, "softmax: row " + std::to_string(row) + " has every position masked");
            mpfr_set_zero(sum.get(), 1);
            for (int64_t j = 0; j < V; ++j) {
                if (!allowed(j)) { mpfr_set_zero(e[j].get(), 1); continue; }
                mpfr_sub(e[j].get(), xr[j].get(), m.get(), N);
                mpfr_exp(e[j].get(), e[j].get(), N);
                mpfr_add(sum.get(), sum.get(), e[j].get(), N);
            }
            if (n == "softmax") {
                for (int64_t j = 0; j < V; ++j) mpfr_div(r.re[row * V + j].get(), e[j].get(), sum.get(), N);
            } else {  // log(sum) + m - x[target]
                int64_t tg = T(1).in[row];
                if (tg < 0 || tg >= V) throw Error({}, "cross_entropy: target " + std::to_string(tg) + " out of range 0.." + std::to_string(V - 1));
                mpfr_log(t.get(), sum.get(), N);
                mpfr_add(t.get(), t.get(), m.get(), N);
                mpfr_sub(r.re[row].get(), t.get(), xr[tg].get(), N);
            }
        }
    } else if (n == "embed" || n == "scatter_add") {
        const Tensor& tab = n == "embed" ? T(0) : T(2);
        const Tensor& ids = T(1);
        int64_t rows = tab.type->axes[0].size, D = tab.type->numel() / std::max<int64_t>(rows, 1);
        for (int64_t k = 0; k < (int64_t)ids.in.size(); ++k) {
            int64_t id = ids.in[k];
            if (id < 0 || id >= rows) throw Error({}, n + ": index " + std::to_string(id) + " out of range 0.." + std::to_string(rows - 1));
            for (int64_t d = 0; d < D; ++d) {
                if (n == "embed") mpfr_set(r.re[k * D + d].get(), tab.re[id * D + d].get(), N);
                else mpfr_add(r.re[id * D + d].get(), r.re[id * D + d].get(), T(0).re[k * D + d].get(), N);
            }
        }
    } else if (n == "argmax" || n == "sample") {
        const Tensor& x = T(0);
        int64_t V = x.type->axes.back().size, rows = total;
        ChaCha rng(o_.seed, key(l.text));
        Real m(o_.bits), acc(o_.bits), u(o_.bits), sum(o_.bits);
        if (V == 0) {  // empty rows: argmax writes 0 (r is zeroed), sample has nothing to draw
            if (n == "sample") throw Error({}, "sample: sampling needs a non-empty last axis");
            return make_tensor(std::move(r));
        }
        for (int64_t row = 0; row < rows; ++row) {
            const Real* xr = &x.re[row * V];
            int64_t best = 0;
            for (int64_t j = 1; j < V; ++j)
                if (!mpfr_less_p(xr[j].get(), xr[best].get())) best = j;  // the last of equal maxima
            if (n == "argmax") { r.in[row] = best; continue; }
            // sample: the first j whose cumulative softmax probability exceeds u
            mpfr_set(m.get(), xr[best].get(), N);
            std::vector<Real> e(V, Real(o_.bits));
            mpfr_set_zero(sum.get(), 1);
            for (int64_t j = 0; j < V; ++j) {
                mpfr_sub(e[j].get(), xr[j].get(), m.get(), N);
                mpfr_exp(e[j].get(), e[j].get(), N);
                mpfr_add(sum.get(), sum.get(), e[j].get(), N);
            }
            mpfr_set_d(u.get(), rng.next_unit(), N);
            mpfr_mul(u.get(), u.get(), sum.get(), N);
            mpfr_set_zero(acc.get(), 1);
            int64_t pick = V - 1;
            for (int64_t j = 0; j < V; ++j) {
                mpfr_add(acc.get(), acc.get(), e[j].get(), N);
                if (mpfr_greater_p(acc.get(), u.get())) { pick = j; break; }
            }
            r.in[row] = pick;
        }
    } else if (n == "split_heads" || n == "merge_heads") {
        // split: x[..., t, h*Dh + j] -> r[..., h, t, j]; merge is the inverse
        const auto& big = n == "split_heads" ? l.type->axes : T(0).type->axes;  // [..., H, T, Dh]
        size_t k = big.size();
        int64_t H = big[k - 3].size, Tn = big[k - 2].size, Dh = big[k - 1].size, outer = total / std::max<int64_t>(1, H * Tn * Dh);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t t = 0; t < Tn; ++t)
                    for (int64_t j = 0; j < Dh; ++j) {
                        int64_t heads = ((o * H + h) * Tn + t) * Dh + j;
                        int64_t flat = (o * Tn + t) * (H * Dh) + h * Dh + j;
                        if (n == "split_heads") mpfr_set(r.re[heads].get(), T(0).re[flat].get(), N);
                        else mpfr_set(r.re[flat].get(), T(0).re[heads].get(), N);
                    }
    } else if (n == "sum_to") {
        auto off = broadcast_offsets(l.type->axes, T(0).type->axes);
        for (int64_t k = 0; k < (int64_t)off.size(); ++k) mpfr_add(r.re[off[k]].get(), r.re[off[k]].get(), T(0).re[k].get(), N);
    } else if (n == "broadcast_like") {
        auto off = broadcast_offsets(T(0).type->axes, l.type->axes);
        for (int64_t k = 0; k < total; ++k) mpfr_set(r.re[k].get(), T(0).re[off[k]].get(), N);
    } else if (n == "expand" || n == "max_grad") {
        AxisSplit s = split_at(l.type->axes, l.ints[0]);
        for (int64_t o = 0; o < s.outer; ++o)
            for (int64_t i = 0; i < s.inner; ++i) {
                int64_t best = 0;
                if (n == "max_grad")
                    for (int64_t j = 1; j < s.n; ++j)
                        if (!mpfr_less_p(T(0).re[(o * s.n + j) * s.inner + i].get(), T(0).re[(o * s.n + best) * s.inner + i].get())) best = j;
                for (int64_t j = 0; j < s.n; ++j) {
                    int64_t at = (o * s.n + j) * s.inner + i;
                    if (n == "expand") mpfr_set(r.re[at].get(), T(0).re[o * s.inner + i].get(), N);
                    else if (j == best) mpfr_set(r.re[at].get(), T(1).re[at].get(), N);
                }
            }
    } else if (n == "causal_mask") {
        int64_t A = l.type->axes[0].size, B = l.type->axes[1].size;
        for (int64_t i = 0; i < A; ++i)
            for (int64_t j = 0; j < B; ++j) r.in[i * B + j] = j <= i + (B - A);
    } else if (n == "positions") {
        for (int64_t k = 0; k < total; ++k) r.in[k] = k;
    } else if (n == "slice" || n == "index" || n == "unslice" || n == "unindex") {
        // The part of the big tensor at `start` along `axis` is the small one.
        bool down = n == "slice" || n == "index";
        const Tensor& x = T(0);
        const auto& big = down ? x.type->axes : l.type->axes;
        const auto& small = down ? l.type->axes : x.type->axes;
        int64_t axis = l.ints[0], start = l.ints[1];
        AxisSplit sb = split_at(big, axis);
        bool keep = n == "slice" || n == "unslice";
        int64_t len = keep ? small[axis].size : 1;
        for (int64_t o = 0; o < sb.outer; ++o)
            for (int64_t j = 0; j < len; ++j)
                for (int64_t i = 0; i < sb.inner; ++i) {
                    int64_t b = (o * sb.n + start + j) * sb.inner + i, s = (o * len + j) * sb.inner + i;
                    int64_t from = down ? b : s, to = down ? s : b;
                    if (x.type->elem == Elem::Real) mpfr_set(r.re[to].get(), x.re[from].get(), N);
                    else r.in[to] = x.in[from];
                }
    } else if (n == "stack") {
        std::vector<Value> parts;
        for (const Value* v : a) parts.push_back(*v);
        Value s = stack_first(parts);
        Tensor t = *s.t;
        t.type = l.type;
        return make_tensor(std::move(t));
    } else if (n == "dropout") {
        Real p(o_.bits), keep(o_.bits);
        mpfr_set(p.get(), T(1).re[0].get(), N);
        mpfr_ui_sub(keep.get(), 1, p.get(), N);
        ChaCha rng(o_.seed, key(l.text));
        for (int64_t k = 0; k < total; ++k) {
            if (!o_.train) { mpfr_set(r.re[k].get(), T(0).re[k].get(), N); continue; }
            bool on = mpfr_cmp_d(p.get(), rng.next_unit()) <= 0;
            if (on) mpfr_div(r.re[k].get(), T(0).re[k].get(), keep.get(), N);
        }
    } else if (n == "zeros_like") {
    } else if (n == "onehot") {
        int64_t V = l.type->axes.back().size;
        for (int64_t k = 0; k < (int64_t)T(0).in.size(); ++k) {
            int64_t t = T(0).in[k];
            if (t < 0 || t >= V) throw Error({}, "onehot: index " + std::to_string(t) + " out of range");
            mpfr_set_ui(r.re[k * V + t].get(), 1, N);
        }
    } else if (n == "retype") {
        Tensor t = T(0);
        t.type = l.type;
        return make_tensor(std::move(t));
    } else {
        throw Error({}, "the interpreter has no rule for '" + n + "'");
    }
    return make_tensor(std::move(r));
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
