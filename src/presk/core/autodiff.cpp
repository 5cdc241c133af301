#include "core/autodiff.h"

#include <algorithm>

#include "core/prims.h"

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
    int prim(const std::string& n, std::vector<int> args, std::vector<int64_t> ints = {}, std::string text = {}) {
        std::vector<TypeP> ts;
        for (int a : args) ts.push_back(g.type_of(a));
        Let l;
        l.op = Op::Prim;
        l.name = n;
        l.type = prim_type(n, ts, ints, text);
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
        if (t->kind == Type::Tensor) return t->elem == Elem::Real ? prim("zeros_like", {fwd}) : tuple({});
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
            return Adj{prim("add", {a.id, b.id}), {}};
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
        if (!same_type(*want, *have)) gid = e_.prim("sum_to", {gid, map_.at(fid)});
        add(fid, gid);
    }
    void add_as(int fid, int gid) {  // the same elements in the operand's axes
        if (!same_type(*f_.type_of(fid), *g_.type_of(gid))) gid = e_.prim("retype", {gid, map_.at(fid)});
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
        if (t->kind == Type::Tensor) return t->elem == Elem::Real ? e.prim("add", {a, b}) : a;
        std::vector<int> parts;
        for (size_t i = 0; i < t->items.size(); ++i) parts.push_back(add_tree(e, e.get(a, i), e.get(b, i)));
        return e.build(*t, parts);
    }

    void prim(const Let& l, int ct) {
        const std::string& n = l.name;
        auto x = [&](size_t i) { return map_.at(l.args[i]); };
        int y = map_.at(l.id);
        auto P = [&](const std::string& name, std::vector<int> args, std::vector<int64_t> ints = {}, std::string text = {}) {
            return e_.prim(name, std::move(args), std::move(ints), std::move(text));
        };
        auto mul = [&](int a, int b) { return P("mul", {a, b}); };
        auto real = [&](size_t i) { return f_.type_of(l.args[i])->elem == Elem::Real; };
        auto last = [&](int id) { return (int64_t)g_.type_of(id)->axes.size() - 1; };
        if (n == "add" || n == "sub") {
            add_to(l.args[0], ct);
            add_to(l.args[1], n == "add" ? ct : P("neg", {ct}));
        } else if (n == "mul") {
            add_to(l.args[0], mul(ct, x(1)));
            add_to(l.args[1], mul(ct, x(0)));
        } else if (n == "div") {
            add_to(l.args[0], P("div", {ct, x(1)}));
            add_to(l.args[1], P("neg", {P("div", {mul(ct, y), x(1)})}));
        } else if (n == "pow") {
            int em1 = P("sub", {x(1), e_.lit("1")});
            add_to(l.args[0], mul(ct, mul(x(1), P("pow", {x(0), em1}))));
            add_to(l.args[1], mul(ct, mul(y, P("log", {x(0)}))));
        } else if (n == "neg") {
            add(l.args[0], P("neg", {ct}));
        } else if (n == "exp") {
            add(l.args[0], mul(ct, y));
        } else if (n == "log") {
            add(l.args[0], P("div", {ct, x(0)}));
        } else if (n == "tanh") {
            add(l.args[0], mul(ct, P("sub", {e_.lit("1"), mul(y, y)})));
        } else if (n == "sin") {
            add(l.args[0], mul(ct, P("cos", {x(0)})));
        } else if (n == "cos") {
            add(l.args[0], P("neg", {mul(ct, P("sin", {x(0)}))}));
        } else if (n == "sqrt") {
            add(l.args[0], P("div", {ct, mul(e_.lit("2"), y)}));
        } else if (n == "erf") {
            int c = P("div", {e_.lit("2"), P("sqrt", {e_.lit("pi")})});
            int g = mul(c, P("exp", {P("neg", {mul(x(0), x(0))})}));
            add(l.args[0], mul(ct, g));
        } else if (n == "erfc") {
            int c = P("div", {e_.lit("2"), P("sqrt", {e_.lit("pi")})});
            int g = mul(c, P("exp", {P("neg", {mul(x(0), x(0))})}));
            add(l.args[0], P("neg", {mul(ct, g)}));
        } else if (n == "gelu") {
            // d/dx x*Phi(x) = Phi(x) + x*phi(x), Phi(x) = erfc(-x/sqrt 2)/2 (1 + erf(x/sqrt 2) would
            // cancel for x << 0), phi(x) = exp(-x^2/2)/sqrt(2 pi)
            int half = e_.lit("0.5");
            int Phi = mul(half, P("erfc", {P("neg", {P("div", {x(0), P("sqrt", {e_.lit("2")})})})}));
            int phi = P("div", {P("exp", {P("neg", {mul(half, mul(x(0), x(0)))})}), P("sqrt", {mul(e_.lit("2"), e_.lit("pi"))})});
            add(l.args[0], mul(ct, P("add", {Phi, mul(x(0), phi)})));
        } else if (n == "dot") {
            size_t ra = g_.type_of(x(0))->axes.size() - 1, rm = g_.type_of(x(1))->axes.size() - 1;
            if (ra + rm + 1 > 52) throw Error(l.loc, "dot with too many axes to differentiate at " + site(l));
            std::string A = letters(ra, 0), k = letters(1, ra), M = letters(rm, ra + 1);
            add_as(l.args[0], P("ein", {ct, x(1)}, {}, A + M + "," + k + M + "->" + A + k));
            add_as(l.args[1], P("ein", {x(0), ct}, {}, A + k + "," + A + M + "->" + k + M));
        } else if (n == "matmul") {
            size_t rb = g_.type_of(x(0))->axes.size() - 2;
            if (rb + 3 > 52) throw Error(l.loc, "matmul with too many axes at " + site(l));
            std::string B = letters(rb, 0), i = letters(1, rb), k = letters(1, rb + 1), j = letters(1, rb + 2);
            add_as(l.args[0], P("ein", {ct, x(1)}, {}, B + i + j + "," + B + k + j + "->" + B + i + k));
            add_as(l.args[1], P("ein", {x(0), ct}, {}, B + i + k + "," + B + i + j + "->" + B + k + j));
        } else if (n == "ein") {
            EinSpec s = parse_ein(l.text);
            for (size_t i = 0; i < s.inputs.size(); ++i) {
                std::string spec = s.output;
                std::vector<int> ops{ct};
                std::string seen = s.output;
                for (size_t j = 0; j < s.inputs.size(); ++j) {
                    if (j == i) continue;
                    spec += "," + s.inputs[j];
                    seen += s.inputs[j];
                    ops.push_back(x(j));
                }
                bool summed_here = false;  // a label only this operand has: a ones operand supplies it
                for (char c : s.inputs[i]) {
                    if (std::count(s.inputs[i].begin(), s.inputs[i].end(), c) > 1)
                        throw Error(l.loc, "no derivative of ein '" + l.text + "' (a label repeated in one operand) at " + site(l));
                    if (seen.find(c) == std::string::npos) summed_here = true;
                }
                if (summed_here) {
                    spec += "," + s.inputs[i];
                    ops.push_back(P("add", {P("zeros_like", {x(i)}), e_.lit("1")}));
                }
                add_as(l.args[i], P("ein", ops, {}, spec + "->" + s.inputs[i]));
            }
        } else if (n == "sum" || n == "mean") {
            int g = l.ints.empty() ? P("broadcast_like", {ct, x(0)}) : P("expand", {ct, x(0)}, l.ints);
            if (n == "mean") {
                int64_t cnt = g_.type_of(x(0))->numel() / std::max<int64_t>(1, g_.type_of(y)->numel());
                g = P("div", {g, e_.lit(std::to_string(cnt))});
            }
            add(l.args[0], g);
        } else if (n == "max") {
            add(l.args[0], P("max_grad", {x(0), P("expand", {ct, x(0)}, l.ints)}, l.ints));
        } else if (n == "softmax") {
            int s = P("sum", {mul(ct, y)}, {last(y)});
            add(l.args[0], mul(y, P("sub", {ct, P("expand", {s, y}, {last(y)})})));
        } else if (n == "cross_entropy") {
            int d = P("sub", {P("softmax", {x(0)}), P("onehot", {x(1), x(0)})});
            add(l.args[0], mul(d, P("expand", {ct, x(0)}, {last(x(0))})));
        } else if (n == "embed") {
            add(l.args[0], P("scatter_add", {ct, x(1), x(0)}));
        } else if (n == "split_heads") {
            add_as(l.args[0], P("merge_heads", {ct}));
        } else if (n == "merge_heads") {
            const auto& ax = g_.type_of(x(0))->axes;
            add_as(l.args[0], P("split_heads", {ct}, {ax[ax.size() - 3].size}));
        } else if (n == "sum_to") {
            add(l.args[0], P("broadcast_like", {ct, x(0)}));
        } else if (n == "broadcast_like") {
            add(l.args[0], P("sum_to", {ct, x(0)}));
        } else if (n == "expand") {
            add(l.args[0], P("sum", {ct}, l.ints));
        } else if (n == "slice") {
            if (real(0)) add(l.args[0], P("unslice", {ct, x(0)}, {l.ints[0], l.ints[1]}));
        } else if (n == "index") {
            if (real(0)) add(l.args[0], P("unindex", {ct, x(0)}, l.ints));
        } else if (n == "stack") {
            for (size_t i = 0; i < l.args.size(); ++i)
                if (real(i)) add(l.args[i], P("index", {ct}, {0, (int64_t)i}));
        } else if (n == "dropout") {
            add(l.args[0], P("dropout", {ct, x(1)}, {}, l.text));
        } else if (n == "retype") {
            add(l.args[0], P("retype", {ct, x(0)}));
        } else if (n == "zeros_like" || n == "onehot") {
            return;
        } else {
            throw Error(l.loc, "no derivative for " + n + " at " + site(l));
        }
    }
};

} // namespace

std::string vjp(Program& p, const std::string& fn) {
    std::string name = "vjp(" + fn + ")";
    if (p.find(name)) return name;
    const Function* f = p.find(fn);
    if (!f) throw Error({}, "vjp: no function '" + fn + "'");
    Vjp v(p, *f);
    Function g = v.run(name);
    if (p.find(name)) return name;
    p.add(std::move(g));
    return name;
}

} // namespace presk::core
