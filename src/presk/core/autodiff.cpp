#include "core/autodiff.h"

#include <algorithm>

#include "core/prims.h"
#include "lang/stack.h"

namespace presk::core {
namespace {

bool has_real(const Type& t) {
    if (t.kind == Type::Tensor) return t.elem == Elem::Real;
    for (const TypeP& i : t.items)
        if (has_real(*i)) return true;
    return false;
}

/// A cotangent being accumulated: a whole value (`id`), or some components of a tree.
struct Adj {
    int id = -1;
    std::vector<Adj> parts;
    bool empty() const {
        if (id >= 0) return false;
        for (const Adj& a : parts)
            if (!a.empty()) return false;
        return true;
    }
};

/// Emits lets into one function.
struct Emitter {
    Function& g;

    int let(Let l) { return g.emit(std::move(l)); }
    int prim(Prim p, std::vector<int> args, std::vector<int64_t> ints = {}, std::string text = {}) {
        std::vector<TypeP> ts;
        for (int a : args) ts.push_back(g.type_of(a));
        Let l;
        l.op = Op::Prim;
        l.name = info(p).name;
        l.type = prim_type(p, ts, ints, text);
        l.args = std::move(args);
        l.ints = std::move(ints);
        l.text = std::move(text);
        return let(std::move(l));
    }
    int lit(const std::string& text) {
        Let l;
        l.op = Op::Lit;
        l.text = text;
        l.type = scalar_type();
        return let(std::move(l));
    }
    int get(int v, size_t i) {
        TypeP t = g.type_of(v);
        Let l;
        l.op = Op::Get;
        l.args = {v};
        l.ints = {(int64_t)i};
        if (t->kind == Type::Record) l.name = t->names[i];
        l.type = t->items[i];
        return let(std::move(l));
    }
    int tuple(const std::vector<int>& parts) {
        Let l;
        l.op = Op::Tuple;
        l.args = parts;
        std::vector<TypeP> ts;
        for (int p : parts) ts.push_back(g.type_of(p));
        l.type = tuple_type(ts);
        return let(std::move(l));
    }
    int build(const Type& shape, const std::vector<int>& parts) {
        if (shape.kind == Type::Tuple) return tuple(parts);
        Let l;
        l.op = Op::Record;
        l.args = parts;
        l.names = shape.names;
        std::vector<TypeP> ts;
        for (int p : parts) ts.push_back(g.type_of(p));
        l.type = record_type(shape.names, ts);
        return let(std::move(l));
    }
    /// The zero cotangent of forward value `fwd`: zeros for real leaves, () for the others.
    int zeros(int fwd) {
        TypeP t = g.type_of(fwd);
        if (t->kind == Type::Tensor) return t->elem == Elem::Real ? prim(Prim::ZerosLike, {fwd}) : tuple({});
        std::vector<int> parts;
        for (size_t i = 0; i < t->items.size(); ++i) parts.push_back(zeros(get(fwd, i)));
        return build(*t, parts);
    }
    /// `a` as one value, zeros where nothing was accumulated; `fwd` is the forward value.
    int materialize(const Adj& a, int fwd) {
        if (a.id >= 0) return a.id;
        TypeP t = g.type_of(fwd);
        if (a.parts.empty() || t->kind == Type::Tensor) return zeros(fwd);
        std::vector<int> parts;
        for (size_t i = 0; i < t->items.size(); ++i) {
            int fi = get(fwd, i);
            parts.push_back(a.parts[i].empty() ? zeros(fi) : materialize(a.parts[i], fi));
        }
        return build(*t, parts);
    }
    /// a + b for cotangents of a value of type `t`.
    Adj combine(const Adj& a, const Adj& b, const Type& t) {
        if (a.empty()) return b;
        if (b.empty()) return a;
        if (t.kind == Type::Tensor) {
            if (t.elem != Elem::Real) return a;
            return Adj{prim(Prim::Add, {a.id, b.id}), {}};
        }
        Adj sa = split(a, t), sb = split(b, t), r;
        r.parts.resize(t.items.size());
        for (size_t i = 0; i < t.items.size(); ++i) r.parts[i] = combine(sa.parts[i], sb.parts[i], *t.items[i]);
        return r;
    }
    Adj split(const Adj& a, const Type& t) {
        if (a.id < 0) {
            Adj r = a;
            r.parts.resize(t.items.size());
            return r;
        }
        Adj r;
        for (size_t i = 0; i < t.items.size(); ++i) r.parts.push_back(Adj{get(a.id, i), {}});
        return r;
    }
};

std::string letters(size_t n, size_t from) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        size_t k = from + i;
        s += k < 26 ? char('a' + k) : char('A' + (k - 26));
    }
    return s;
}

struct Rule;

class Vjp {
public:
    Vjp(Program& p, Function f) : p_(p), f_(std::move(f)) {}

    Function run(const std::string& name) {
        g_.name = name;
        g_.param_names = f_.param_names;
        g_.param_types = f_.param_types;
        g_.param_names.push_back("ct");
        g_.param_types.push_back(f_.type_of(f_.result));
        for (int i = 0; i < f_.arity(); ++i) map_[i] = i;
        int ct = f_.arity();
        for (const Let& l : f_.body) {
            Let c = l;
            for (int& a : c.args) a = map_.at(a);
            map_[l.id] = g_.emit(std::move(c));
        }
        adj_[f_.result] = Adj{ct, {}};
        for (size_t k = f_.body.size(); k-- > 0;) {
            const Let& l = f_.body[k];
            auto it = adj_.find(l.id);
            if (it == adj_.end() || it->second.empty() || !has_real(*l.type)) continue;
            Adj a = it->second;
            back(l, a);
        }
        std::vector<int> outs;
        for (int i = 0; i < f_.arity(); ++i) {
            auto it = adj_.find(i);
            outs.push_back(it == adj_.end() ? e_.zeros(i) : e_.materialize(it->second, i));
        }
        g_.result = e_.tuple(outs);
        return std::move(g_);
    }

private:
    friend struct Rule;

    Program& p_;
    Function f_;
    Function g_;
    Emitter e_{g_};
    std::map<int, int> map_;  // forward id in F -> id in G
    std::map<int, Adj> adj_;  // forward id in F -> its cotangent

    void add(int fid, Adj a) {
        auto& slot = adj_[fid];
        slot = e_.combine(slot, a, *f_.type_of(fid));
    }
    void add(int fid, int gid) { add(fid, Adj{gid, {}}); }
    /// Adds a cotangent computed for operand `fid` after reducing it to the operand's type.
    void add_to(int fid, int gid) {
        TypeP want = f_.type_of(fid);
        TypeP have = g_.type_of(gid);
        if (!same_type(*want, *have)) gid = e_.prim(Prim::SumTo, {gid, map_.at(fid)});
        add(fid, gid);
    }
    void add_as(int fid, int gid) {  // the same elements in the operand's axes
        if (!same_type(*f_.type_of(fid), *g_.type_of(gid))) gid = e_.prim(Prim::Retype, {gid, map_.at(fid)});
        add(fid, gid);
    }
    std::string site(const Let& l) const { return f_.name + "/%" + std::to_string(l.id); }

    void back(const Let& l, const Adj& a) {
        switch (l.op) {
        case Op::Lit: return;
        case Op::Get: {
            Adj part;
            part.parts.resize(f_.type_of(l.args[0])->items.size());
            part.parts[l.ints[0]] = a;
            add(l.args[0], part);
            return;
        }
        case Op::Tuple:
        case Op::Record: {
            Adj s = e_.split(a, *l.type);
            for (size_t i = 0; i < l.args.size(); ++i)
                if (!s.parts[i].empty()) add(l.args[i], s.parts[i]);
            return;
        }
        case Op::Call: {
            std::string v = vjp(p_, l.name);
            int ct = e_.materialize(a, map_.at(l.id));
            Let c;
            c.op = Op::Call;
            c.name = v;
            for (int x : l.args) c.args.push_back(map_.at(x));
            c.args.push_back(ct);
            c.type = p_.find(v)->type_of(p_.find(v)->result);
            int r = e_.let(std::move(c));
            for (size_t i = 0; i < l.args.size(); ++i)
                if (has_real(*f_.type_of(l.args[i]))) add(l.args[i], e_.get(r, i));
            return;
        }
        case Op::Loop: return loop(l, a);
        case Op::Prim: return prim(l, e_.materialize(a, map_.at(l.id)));
        }
    }

    /// The derivative of a fold or scan: a trace of the carries before each step, then a fold in
    /// reverse over the stacks and the trace whose carry is (the carry's cotangent, the
    /// constants' cotangents) and whose per-step output is the slices' cotangents.
    void loop(const Let& l, const Adj& a) {
        int64_t s = l.ints[0], ys = l.ints[2], L = l.ints[3];
        if (l.ints[1] || ys > 1) throw Error(l.loc, "no derivative of a transform's own loop at " + site(l));
        std::vector<int> ga;
        for (int x : l.args) ga.push_back(map_.at(x));
        Let tr = l;
        tr.args = ga;
        tr.ints = {s, 0, 3, L};
        tr.text = "trace";
        TypeP carry_t = f_.type_of(l.args[s]);
        tr.type = tuple_type({carry_t, stacked(carry_t, L)});
        int trace = e_.let(std::move(tr));
        int cts_out = -1, ct_final;
        int fwd = map_.at(l.id);
        if (ys == 1) {
            Adj sa = e_.split(a, *l.type);
            ct_final = e_.materialize(sa.parts[0], e_.get(fwd, 0));
            cts_out = e_.materialize(sa.parts[1], e_.get(fwd, 1));
        } else {
            ct_final = e_.materialize(a, fwd);
        }
        std::string body = step_fn(l, ys == 1);
        std::vector<int> consts(l.args.begin() + s + 1, l.args.end());
        std::vector<int> zc;
        for (int c : consts) zc.push_back(e_.zeros(map_.at(c)));
        int init = e_.tuple({ct_final, e_.tuple(zc)});
        Let r;
        r.op = Op::Loop;
        r.name = body;
        r.text = "fold_rev";
        for (int64_t j = 0; j < s; ++j) r.args.push_back(ga[j]);
        r.args.push_back(e_.get(trace, 1));
        if (cts_out >= 0) r.args.push_back(cts_out);
        r.args.push_back(init);
        for (int c : consts) r.args.push_back(map_.at(c));
        int64_t ns = s + 1 + (cts_out >= 0);
        r.ints = {ns, 1, 2, L};
        const Function* B = p_.find(body);
        TypeP bt = B->type_of(B->result);
        r.type = tuple_type({bt->items[0], stacked(bt->items[1], L)});
        int res = e_.let(std::move(r));
        int carry = e_.get(res, 0), ys_out = e_.get(res, 1);
        add(l.args[s], e_.get(carry, 0));
        int dconsts = e_.get(carry, 1);
        for (size_t k = 0; k < consts.size(); ++k)
            if (has_real(*f_.type_of(consts[k]))) add(consts[k], e_.get(dconsts, k));
        for (int64_t j = 0; j < s; ++j)
            if (has_real(*f_.type_of(l.args[j]))) add(l.args[j], e_.get(ys_out, j));
    }

    /// B(slices..., carry_in, [ct_out,] (ct, dconsts), consts...) -> ((d carry_in, dconsts'), d slices)
    std::string step_fn(const Let& l, bool with_out) {
        int64_t s = l.ints[0];
        const Function* F = p_.find(l.name);
        std::string name = "step_vjp(" + l.name + (with_out ? ",scan)" : ")");
        if (p_.find(name)) return name;
        std::string fv = vjp(p_, l.name);
        F = p_.find(l.name);
        Function b;
        b.name = name;
        for (int64_t j = 0; j < s; ++j) {
            b.param_names.push_back(F->param_names[j]);
            b.param_types.push_back(F->param_types[j]);
        }
        TypeP carry_t = F->param_types[s];
        b.param_names.push_back("carry_in");
        b.param_types.push_back(carry_t);
        if (with_out) {
            b.param_names.push_back("ct_out");
            b.param_types.push_back(carry_t);
        }
        std::vector<int> const_ids;
        int base = (int)b.param_types.size() + 1;
        b.param_names.push_back("acc");
        b.param_types.push_back(nullptr);  // set below
        for (int k = s + 1; k < F->arity(); ++k) {
            b.param_names.push_back(F->param_names[k]);
            b.param_types.push_back(F->param_types[k]);
            const_ids.push_back(base + (k - s - 1));
        }
        // The accumulator's type: (the carry's cotangent, the constants' cotangents), read off
        // the vjp's result type.
        const Function* V = p_.find(fv);
        TypeP vt = V->type_of(V->result);
        std::vector<TypeP> dct(vt->items.begin() + s + 1, vt->items.end());
        b.param_types[base - 1] = tuple_type({vt->items[s], tuple_type(dct)});
        Emitter e{b};
        int acc = base - 1;
        int ct = e.get(acc, 0);
        if (with_out) ct = add_tree(e, ct, (int)s + 1);
        Let c;
        c.op = Op::Call;
        c.name = fv;
        for (int64_t j = 0; j <= s; ++j) c.args.push_back((int)j);
        for (int id : const_ids) c.args.push_back(id);
        c.args.push_back(ct);
        c.type = vt;
        int r = e.let(std::move(c));
        int dacc = e.get(acc, 1);
        std::vector<int> dconsts;
        for (size_t k = 0; k < dct.size(); ++k) {
            int d = e.get(r, s + 1 + k);
            int prev = e.get(dacc, k);
            dconsts.push_back(has_real(*dct[k]) ? add_tree(e, prev, d) : d);
        }
        int carry = e.tuple({e.get(r, s), e.tuple(dconsts)});
        std::vector<int> dslices;
        for (int64_t j = 0; j < s; ++j) dslices.push_back(e.get(r, j));
        b.result = e.tuple({carry, e.tuple(dslices)});
        p_.add(std::move(b));
        return name;
    }

    static int add_tree(Emitter& e, int a, int b) {
        TypeP t = e.g.type_of(a);
        if (t->kind == Type::Tensor) return t->elem == Elem::Real ? e.prim(Prim::Add, {a, b}) : a;
        std::vector<int> parts;
        for (size_t i = 0; i < t->items.size(); ++i) parts.push_back(add_tree(e, e.get(a, i), e.get(b, i)));
        return e.build(*t, parts);
    }

    /// The reverse rule of primitive let `l` (kVjpRules) given its cotangent `ct`.
    void prim(const Let& l, int ct);
};

/// A primitive's reverse rule at work on let `l` of F (primitive `p`): its operands and value in G, the
/// cotangent `ct` of its value, and the cotangents it adds to its operands.
struct Rule {
    Vjp& v;
    Prim p;
    const Let& l;
    int ct;

    /// Operand i in G, and the let's own value there.
    int x(size_t i) const { return v.map_.at(l.args[i]); }
    int y() const { return v.map_.at(l.id); }
    /// Emits a primitive let into G.
    int P(Prim p, std::vector<int> args, std::vector<int64_t> ints = {}, std::string text = {}) const {
        return v.e_.prim(p, std::move(args), std::move(ints), std::move(text));
    }
    int mul(int a, int b) const { return P(Prim::Mul, {a, b}); }
    int lit(const std::string& text) const { return v.e_.lit(text); }
    /// The type of value `id` of G.
    const Type& type(int id) const { return *v.g_.type_of(id); }
    /// Is operand i a real tensor?
    bool real(size_t i) const { return v.f_.type_of(l.args[i])->elem == Elem::Real; }
    /// The last axis of value `id` of G.
    int64_t last(int id) const { return (int64_t)type(id).axes.size() - 1; }
    /// Adds cotangent `g` to operand i: as it is, reduced to the operand's type by sum_to
    /// (a broadcast operand), or retyped to the operand's axes (the same elements).
    void add(size_t i, int g) const { v.add(l.args[i], g); }
    void add_to(size_t i, int g) const { v.add_to(l.args[i], g); }
    void add_as(size_t i, int g) const { v.add_as(l.args[i], g); }
    [[noreturn]] void fail(const std::string& what) const { throw Error(l.loc, what + " at " + v.site(l)); }
};

// The reverse rules, one per differentiable primitive (docs/language.md, "PSK-Core"), each
// named as its primitive.
namespace rules {

void add_sub(const Rule& r) {
    r.add_to(0, r.ct);
    r.add_to(1, r.p == Prim::Add ? r.ct : r.P(Prim::Neg, {r.ct}));
}

void mul(const Rule& r) {
    r.add_to(0, r.mul(r.ct, r.x(1)));
    r.add_to(1, r.mul(r.ct, r.x(0)));
}

void div(const Rule& r) {
    r.add_to(0, r.P(Prim::Div, {r.ct, r.x(1)}));
    r.add_to(1, r.P(Prim::Neg, {r.P(Prim::Div, {r.mul(r.ct, r.y()), r.x(1)})}));
}

void pow(const Rule& r) {
    int em1 = r.P(Prim::Sub, {r.x(1), r.lit("1")});
    r.add_to(0, r.mul(r.ct, r.mul(r.x(1), r.P(Prim::Pow, {r.x(0), em1}))));
    r.add_to(1, r.mul(r.ct, r.mul(r.y(), r.P(Prim::Log, {r.x(0)}))));
}

void neg(const Rule& r) { r.add(0, r.P(Prim::Neg, {r.ct})); }

void exp(const Rule& r) { r.add(0, r.mul(r.ct, r.y())); }

void log(const Rule& r) { r.add(0, r.P(Prim::Div, {r.ct, r.x(0)})); }

void tanh(const Rule& r) { r.add(0, r.mul(r.ct, r.P(Prim::Sub, {r.lit("1"), r.mul(r.y(), r.y())}))); }

void sin(const Rule& r) { r.add(0, r.mul(r.ct, r.P(Prim::Cos, {r.x(0)}))); }

void cos(const Rule& r) { r.add(0, r.P(Prim::Neg, {r.mul(r.ct, r.P(Prim::Sin, {r.x(0)}))})); }

void sqrt(const Rule& r) { r.add(0, r.P(Prim::Div, {r.ct, r.mul(r.lit("2"), r.y())})); }

/// 2/sqrt(pi) exp(-x^2), the derivative of erf at operand 0.
int erf_slope(const Rule& r) {
    int c = r.P(Prim::Div, {r.lit("2"), r.P(Prim::Sqrt, {r.lit("pi")})});
    return r.mul(c, r.P(Prim::Exp, {r.P(Prim::Neg, {r.mul(r.x(0), r.x(0))})}));
}

void erf(const Rule& r) { r.add(0, r.mul(r.ct, erf_slope(r))); }

void erfc(const Rule& r) { r.add(0, r.P(Prim::Neg, {r.mul(r.ct, erf_slope(r))})); }

/// d/dx x*Phi(x) = Phi(x) + x*phi(x), Phi(x) = erfc(-x/sqrt 2)/2 (1 + erf(x/sqrt 2) would
/// cancel for x << 0), phi(x) = exp(-x^2/2)/sqrt(2 pi).
void gelu(const Rule& r) {
    const int x = r.x(0);
    int half = r.lit("0.5");
    int Phi = r.mul(half, r.P(Prim::Erfc, {r.P(Prim::Neg, {r.P(Prim::Div, {x, r.P(Prim::Sqrt, {r.lit("2")})})})}));
    int e = r.P(Prim::Exp, {r.P(Prim::Neg, {r.mul(half, r.mul(x, x))})});
    int pi = r.lit("pi");
    int two_pi = r.mul(r.lit("2"), pi);
    int phi = r.P(Prim::Div, {e, r.P(Prim::Sqrt, {two_pi})});
    r.add(0, r.mul(r.ct, r.P(Prim::Add, {Phi, r.mul(x, phi)})));
}

/// abs' = sign(x): 0 at either zero.
void abs(const Rule& r) { r.add(0, r.mul(r.ct, r.P(Prim::Sign, {r.x(0)}))); }

/// maximum and minimum: the cotangent goes to the operand chosen, the first on a tie (and where
/// either operand is NaN): s = sign(sign(d) + 1), d = a - b (maximum) or b - a (minimum), is 1
/// where a is chosen and 0 where b is; a gets ct s, b gets ct - ct s.
void extremum(const Rule& r) {
    int d = r.p == Prim::Maximum ? r.P(Prim::Sub, {r.x(0), r.x(1)}) : r.P(Prim::Sub, {r.x(1), r.x(0)});
    int s = r.P(Prim::Sign, {r.P(Prim::Add, {r.P(Prim::Sign, {d}), r.lit("1")})});
    int ga = r.mul(r.ct, s);
    r.add_to(0, ga);
    r.add_to(1, r.P(Prim::Sub, {r.ct, ga}));
}

/// where(c, a, b): the cotangent goes to the branch selected; c gets none.
void where(const Rule& r) {
    r.add_to(1, r.P(Prim::Where, {r.x(0), r.ct, r.lit("0")}));
    r.add_to(2, r.P(Prim::Where, {r.x(0), r.lit("0"), r.ct}));
}

void dot(const Rule& r) {
    size_t ra = r.type(r.x(0)).axes.size() - 1, rm = r.type(r.x(1)).axes.size() - 1;
    if (ra + rm + 1 > 52) r.fail("dot with too many axes to differentiate");
    std::string A = letters(ra, 0), k = letters(1, ra), M = letters(rm, ra + 1);
    r.add_as(0, r.P(Prim::Ein, {r.ct, r.x(1)}, {}, A + M + "," + k + M + "->" + A + k));
    r.add_as(1, r.P(Prim::Ein, {r.x(0), r.ct}, {}, A + k + "," + A + M + "->" + k + M));
}

void matmul(const Rule& r) {
    size_t rb = r.type(r.x(0)).axes.size() - 2;
    if (rb + 3 > 52) r.fail("matmul with too many axes");
    std::string B = letters(rb, 0), i = letters(1, rb), k = letters(1, rb + 1), j = letters(1, rb + 2);
    r.add_as(0, r.P(Prim::Ein, {r.ct, r.x(1)}, {}, B + i + j + "," + B + k + j + "->" + B + i + k));
    r.add_as(1, r.P(Prim::Ein, {r.x(0), r.ct}, {}, B + i + k + "," + B + i + j + "->" + B + k + j));
}

void ein(const Rule& r) {
    EinSpec s = parse_ein(r.l.text);
    for (size_t i = 0; i < s.inputs.size(); ++i) {
        std::string spec = s.output;
        std::vector<int> ops{r.ct};
        std::string seen = s.output;
        for (size_t j = 0; j < s.inputs.size(); ++j) {
            if (j == i) continue;
            spec += "," + s.inputs[j];
            seen += s.inputs[j];
            ops.push_back(r.x(j));
        }
        bool summed_here = false;  // a label only this operand has: a ones operand supplies it
        for (char c : s.inputs[i]) {
            if (std::count(s.inputs[i].begin(), s.inputs[i].end(), c) > 1)
                r.fail("no derivative of ein '" + r.l.text + "' (a label repeated in one operand)");
            if (seen.find(c) == std::string::npos) summed_here = true;
        }
        if (summed_here) {
            spec += "," + s.inputs[i];
            ops.push_back(r.P(Prim::Add, {r.P(Prim::ZerosLike, {r.x(i)}), r.lit("1")}));
        }
        r.add_as(i, r.P(Prim::Ein, ops, {}, spec + "->" + s.inputs[i]));
    }
}

/// sum and mean: the cotangent broadcast back (divided by the count for mean).
void sum_mean(const Rule& r) {
    const Let& l = r.l;
    int g = l.ints.empty() ? r.P(Prim::BroadcastLike, {r.ct, r.x(0)}) : r.P(Prim::Expand, {r.ct, r.x(0)}, l.ints);
    if (r.p == Prim::Mean) {
        int64_t cnt = r.type(r.x(0)).numel() / std::max<int64_t>(1, r.type(r.y()).numel());
        g = r.P(Prim::Div, {g, r.lit(std::to_string(cnt))});
    }
    r.add(0, g);
}

void max(const Rule& r) {
    r.add(0, r.P(Prim::MaxGrad, {r.x(0), r.P(Prim::Expand, {r.ct, r.x(0)}, r.l.ints)}, r.l.ints));
}

/// y (ct - sum(ct y)) along the last axis.
void softmax(const Rule& r) {
    const int y = r.y();
    int s = r.P(Prim::Sum, {r.mul(r.ct, y)}, {r.last(y)});
    r.add(0, r.mul(y, r.P(Prim::Sub, {r.ct, r.P(Prim::Expand, {s, y}, {r.last(y)})})));
}

/// (softmax(l) - onehot(t)) ct.
void cross_entropy(const Rule& r) {
    int d = r.P(Prim::Sub, {r.P(Prim::Softmax, {r.x(0)}), r.P(Prim::Onehot, {r.x(1), r.x(0)})});
    r.add(0, r.mul(d, r.P(Prim::Expand, {r.ct, r.x(0)}, {r.last(r.x(0))})));
}

void embed(const Rule& r) { r.add(0, r.P(Prim::ScatterAdd, {r.ct, r.x(1), r.x(0)})); }

void split_heads(const Rule& r) { r.add_as(0, r.P(Prim::MergeHeads, {r.ct})); }

void merge_heads(const Rule& r) {
    const auto& ax = r.type(r.x(0)).axes;
    r.add_as(0, r.P(Prim::SplitHeads, {r.ct}, {ax[ax.size() - 3].size}));
}

void sum_to(const Rule& r) { r.add(0, r.P(Prim::BroadcastLike, {r.ct, r.x(0)})); }

void broadcast_like(const Rule& r) { r.add(0, r.P(Prim::SumTo, {r.ct, r.x(0)})); }

void expand(const Rule& r) { r.add(0, r.P(Prim::Sum, {r.ct}, r.l.ints)); }

void slice(const Rule& r) {
    if (r.real(0)) r.add(0, r.P(Prim::Unslice, {r.ct, r.x(0)}, {r.l.ints[0], r.l.ints[1]}));
}

void index(const Rule& r) {
    if (r.real(0)) r.add(0, r.P(Prim::Unindex, {r.ct, r.x(0)}, r.l.ints));
}

void stack(const Rule& r) {
    for (size_t i = 0; i < r.l.args.size(); ++i)
        if (r.real(i)) r.add(i, r.P(Prim::Index, {r.ct}, {0, (int64_t)i}));
}

/// The same mask (the same key) applied to the cotangent.
void dropout(const Rule& r) { r.add(0, r.P(Prim::Dropout, {r.ct, r.x(1)}, {}, r.l.text)); }

/// retype, split and merge: the cotangent's elements, in their order, under the operand's type.
void retype(const Rule& r) { r.add(0, r.P(Prim::Retype, {r.ct, r.x(0)})); }

/// A value that does not depend on its operands' reals (zeros_like, onehot): no cotangent.
void constant(const Rule&) {}

/// The reverse rule of each primitive, in the order of PRESK_PRIMS; null: no derivative (the
/// int and bool results never need one; a let of the transforms' own scatter_add, expand's
/// inverse and max_grad is refused, so a derivative of a derivative through them is an error).
struct VjpRule {
    Prim prim;
    void (*rule)(const Rule&);
};

constexpr VjpRule kVjpRules[] = {
    {Prim::Add, add_sub}, {Prim::Sub, add_sub}, {Prim::Mul, mul}, {Prim::Div, div}, {Prim::Pow, pow},
    {Prim::Neg, neg}, {Prim::Exp, exp}, {Prim::Log, log}, {Prim::Tanh, tanh}, {Prim::Sin, sin},
    {Prim::Cos, cos}, {Prim::Sqrt, sqrt}, {Prim::Erf, erf}, {Prim::Erfc, erfc}, {Prim::Gelu, gelu},
    {Prim::Abs, abs}, {Prim::Sign, constant}, {Prim::Maximum, extremum}, {Prim::Minimum, extremum},
    {Prim::Where, where},
    {Prim::Dot, dot}, {Prim::Matmul, matmul}, {Prim::Ein, ein},
    {Prim::Sum, sum_mean}, {Prim::Mean, sum_mean}, {Prim::Max, max},
    {Prim::Softmax, softmax}, {Prim::CrossEntropy, cross_entropy}, {Prim::Embed, embed},
    {Prim::Argmax, nullptr}, {Prim::Sample, nullptr},
    {Prim::SplitHeads, split_heads}, {Prim::MergeHeads, merge_heads},
    {Prim::Split, retype}, {Prim::Merge, retype},
    {Prim::SumTo, sum_to}, {Prim::BroadcastLike, broadcast_like},
    {Prim::CausalMask, nullptr}, {Prim::Positions, nullptr},
    {Prim::Slice, slice}, {Prim::Index, index}, {Prim::Stack, stack}, {Prim::Dropout, dropout},
    {Prim::ScatterAdd, nullptr}, {Prim::Expand, expand}, {Prim::Unslice, nullptr}, {Prim::Unindex, nullptr},
    {Prim::ZerosLike, constant}, {Prim::Onehot, constant}, {Prim::MaxGrad, nullptr}, {Prim::Retype, retype},
};
static_assert(complete(kVjpRules), "kVjpRules: one reverse rule (or null) per primitive, in the order of PRESK_PRIMS");

} // namespace rules

void Vjp::prim(const Let& l, int ct) {
    const std::optional<Prim> p = find_prim(l.name);
    void (*rule)(const Rule&) = p ? rules::kVjpRules[(size_t)*p].rule : nullptr;
    if (!rule) throw Error(l.loc, "no derivative for " + l.name + " at " + site(l));
    rule(Rule{*this, *p, l, ct});
}

} // namespace

bool has_vjp(Prim p) { return rules::kVjpRules[(size_t)p].rule != nullptr; }

std::string vjp(Program& p, const std::string& fn) {
    std::string name = "vjp(" + fn + ")";
    if (p.find(name)) return name;
    const Function* f = p.find(fn);
    if (!f) throw Error({}, "vjp: no function '" + fn + "'");
    check_stack({}, "calls");
    Vjp v(p, *f);
    Function g = v.run(name);
    if (p.find(name)) return name;
    p.add(std::move(g));
    return name;
}

} // namespace presk::core
