#include "lang/checker.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

#include "core/autodiff.h"
#include "core/prims.h"
#include "lang/lexer.h"
#include "lang/stack.h"

namespace presk {
namespace {

using core::Let;
using core::Op;
using core::Prim;
using ast::Expr;

constexpr int64_t kMaxSize = int64_t(1) << 40;
constexpr int kMaxInitDepth = 200;  // an initializer argument's depth (docs/presk.md, "Limits")

/// A module at bound dims.
struct Inst {
    const ast::Module* mod = nullptr;
    std::vector<int64_t> dims;
    std::string key;  // "Linear{3,2}"
    TypeP params;     // record type of its parameter tree
};

/// An elaborated value: a Core id with its type; a submodule or a stack of them carries its
/// instance (and stack length).
struct Val {
    int id = -1;
    TypeP type;
    const Inst* inst = nullptr;
    int64_t stack = 0;
};

/// Sizes bound to named axes and to a leading `...` while checking one signature.
struct Bindings {
    std::map<std::string, int64_t> named;
    bool has_ellipsis = false;
    std::vector<Axis> ellipsis;
};

bool is_int_text(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

/// How a call of a primitive is written in source (docs/language.md, "Primitives").
enum class Form {
    Internal,  // emitted by the transforms only: refused in source
    Lifted,    // elementwise: f(x...), leaf by leaf over trees
    Reduce,    // f(x[, a]): over axis a, or over everything
    Axis,      // f(x, a, k...): an axis, then integer literals (`args` arguments in all)
    Heads,     // split_heads(x, H): H a nat expression
    Reshape,   // split(x, a -> n: s, ...), merge(x, a, ..., b -> n): axes by name or integer
    Rows,      // softmax(x[, a][, mask]), argmax(x[, a]), cross_entropy(l, t[, a]): along axis a
    Spec,      // ein("spec", x...)
    Keyed,     // f(x...) whose text is the site, its random stream's key
    Plain,     // f(x...)
};

struct CallForm {
    Prim prim;
    Form form;
    size_t args = 0;  // Axis: the call's argument count
};

constexpr CallForm kCallForms[] = {
    {Prim::Add, Form::Lifted}, {Prim::Sub, Form::Lifted}, {Prim::Mul, Form::Lifted}, {Prim::Div, Form::Lifted},
    {Prim::Pow, Form::Lifted}, {Prim::Neg, Form::Lifted}, {Prim::Exp, Form::Lifted}, {Prim::Log, Form::Lifted},
    {Prim::Tanh, Form::Lifted}, {Prim::Sin, Form::Lifted}, {Prim::Cos, Form::Lifted}, {Prim::Sqrt, Form::Lifted},
    {Prim::Erf, Form::Lifted}, {Prim::Erfc, Form::Lifted}, {Prim::Gelu, Form::Lifted},
    {Prim::Abs, Form::Lifted}, {Prim::Sign, Form::Lifted}, {Prim::Maximum, Form::Lifted}, {Prim::Minimum, Form::Lifted},
    {Prim::Where, Form::Lifted},
    {Prim::Dot, Form::Plain}, {Prim::Matmul, Form::Plain}, {Prim::Ein, Form::Spec},
    {Prim::Sum, Form::Reduce}, {Prim::Mean, Form::Reduce}, {Prim::Max, Form::Reduce},
    {Prim::Softmax, Form::Rows}, {Prim::CrossEntropy, Form::Rows}, {Prim::Embed, Form::Plain},
    {Prim::Argmax, Form::Rows}, {Prim::Sample, Form::Keyed},
    {Prim::SplitHeads, Form::Heads}, {Prim::MergeHeads, Form::Plain},
    {Prim::Split, Form::Reshape}, {Prim::Merge, Form::Reshape},
    {Prim::SumTo, Form::Plain}, {Prim::BroadcastLike, Form::Plain},
    {Prim::CausalMask, Form::Plain}, {Prim::Positions, Form::Axis, 2},
    {Prim::Slice, Form::Axis, 4}, {Prim::Index, Form::Axis, 3},
    {Prim::Stack, Form::Plain}, {Prim::Dropout, Form::Keyed},
    {Prim::ScatterAdd, Form::Internal}, {Prim::Expand, Form::Internal}, {Prim::Unslice, Form::Internal},
    {Prim::Unindex, Form::Internal}, {Prim::ZerosLike, Form::Internal}, {Prim::Onehot, Form::Internal},
    {Prim::MaxGrad, Form::Internal}, {Prim::Retype, Form::Internal},
};
static_assert(core::complete(kCallForms), "kCallForms: one call form per primitive, in the order of PRESK_PRIMS");

/// The forms agree with the primitives' properties: internal ones are refused, elementwise
/// ones lifted, random ones keyed by their site.
constexpr bool forms_agree() {
    for (const CallForm& f : kCallForms) {
        if ((f.form == Form::Internal) != core::has(f.prim, core::kInternal)) return false;
        if ((f.form == Form::Lifted) != core::has(f.prim, core::kElementwise)) return false;
        if ((f.form == Form::Keyed) != core::has(f.prim, core::kRandom)) return false;
    }
    return true;
}
static_assert(forms_agree(), "kCallForms disagrees with the properties of core/prims.h");

class Checker {
public:
    Checker(const ast::File& f, const CheckOptions& o) : file_(f), opts_(o) {}

    core::Program run(const std::string& entry) {
        for (const ast::Fn& f : file_.fns) not_builtin(f);
        for (const ast::Module& m : file_.modules)
            for (const ast::Fn& f : m.fns) not_builtin(f);
        auto [inst, fn] = parse_entry(entry);
        Bindings b;
        std::vector<TypeP> types;
        for (const ast::Param& p : fn->params) {
            types.push_back(resolve(*p.type, inst, &b, true));
            // int<0> (the type of sample over an empty axis) holds no index: no input can be drawn.
            if (p.type->kind == ast::Type::Tensor && p.type->bound && eval_nat(*p.type->bound, inst) == 0)
                throw Error(p.type->bound->loc, "int<0>: input " + p.name + " would hold indices below 0, of which there are"
                                                " none (an input's bound is at least 1)");
        }
        if (opts_.strict) strict_options(inst, entry);
        std::string name = instantiate(inst, *fn, types, fn->loc);
        prog_.entry = name;
        if (inst) {
            prog_.params_type = inst->params;
            param_specs(*inst, "", 0);
        }
        return std::move(prog_);
    }

private:
    /// Refuses a function named as a primitive or a built-in form (`fn exp(...)`), which would
    /// hide it from every call in its scope.
    static void not_builtin(const ast::Fn& f) {
        static const char* const kForms[] = {"fold",  "scan", "grad", "vjp", "set_field",  "transpose",
                                             "permute", "relu", "clamp", "min", "log_softmax"};
        bool builtin = core::find_prim(f.name).has_value();
        for (const char* b : kForms) builtin |= f.name == b;
        if (builtin) throw Error(f.loc, "a function cannot be named '" + f.name + "': it is a primitive");
    }

    /// CheckOptions::strict: every --dim is used by the entry (or agrees with its module's dim
    /// of that name), every --const is declared.
    void strict_options(const Inst* inst, const std::string& entry) {
        for (const auto& [k, v] : opts_.dims) {
            if (inst)
                for (size_t i = 0; i < inst->mod->dims.size(); ++i)
                    if (inst->mod->dims[i] == k && inst->dims[i] != v)
                        throw Error({}, "--dim " + k + "=" + std::to_string(v) + " contradicts the entry " + entry +
                                            ", where " + k + " is " + std::to_string(inst->dims[i]));
            const auto& mdims = inst ? inst->mod->dims : std::vector<std::string>{};
            bool module_dim = std::find(mdims.begin(), mdims.end(), k) != mdims.end();
            if (!used_dims_.count(k) && !module_dim)
                throw Error({}, "--dim " + k + "=" + std::to_string(v) + ": the entry " + entry +
                                    " has no axis or dim '" + k + "'");
        }
        for (const auto& [k, v] : opts_.consts)
            if (!find_const(k))
                throw Error({}, "--const " + k + "=" + v + ": the file declares no constant '" + k + "'");
    }

    const ast::File& file_;
    const CheckOptions& opts_;
    std::set<std::string> used_dims_;  // --dim names the entry read
    core::Program prog_;
    std::map<std::string, std::unique_ptr<Inst>> insts_;
    std::map<std::string, std::string> memo_;  // instance key of a function -> Core name
    std::set<std::string> active_;
    std::set<std::string> resolving_;          // modules whose parameter types are being built

    // ---------- names and static values ----------

    const ast::Module* find_module(const std::string& n) const {
        for (const auto& m : file_.modules) if (m.name == n) return &m;
        return nullptr;
    }
    const ast::Fn* find_fn(const std::vector<ast::Fn>& fns, const std::string& n) const {
        for (const auto& f : fns) if (f.name == n) return &f;
        return nullptr;
    }
    const ast::Const* find_const(const std::string& n) const {
        for (const auto& c : file_.consts) if (c.name == n) return &c;
        return nullptr;
    }

    /// The value of a static (nat) name in `inst`: a dim or a nat const.
    std::optional<int64_t> static_name(const std::string& n, const Inst* inst) {
        if (inst)
            for (size_t i = 0; i < inst->mod->dims.size(); ++i)
                if (inst->mod->dims[i] == n) return inst->dims[i];
        if (const ast::Const* c = find_const(n); c && c->nat) {
            auto it = opts_.consts.find(n);
            if (it != opts_.consts.end()) {
                if (!is_int_text(it->second)) throw Error(c->loc, "--const " + n + "=" + it->second + " is not a nat");
                return std::stoll(it->second);
            }
            if (!active_.insert("const " + n).second) throw Error(c->loc, "constant '" + n + "' depends on itself");
            int64_t v = eval_nat(*c->value, nullptr);
            active_.erase("const " + n);
            return v;
        }
        return std::nullopt;
    }

    /// A nat expression's value: numbers, dims and nat constants of `inst`, and, where `b` is
    /// given, the sizes of the named axes it binds (a written axis size `[seq: seq - 1]`).
    int64_t eval_nat(const Expr& e, const Inst* inst, const Bindings* b = nullptr) {
        check_stack(e.loc, "expression");
        switch (e.kind) {
        case Expr::Num:
            if (!is_int_text(e.text)) throw Error(e.loc, "expected a natural number, found '" + e.text + "'");
            if (e.text.size() > 13 || std::stoll(e.text) > kMaxSize)
                throw Error(e.loc, "the size " + e.text + " is too large (sizes are at most 2^40)");
            return std::stoll(e.text);
        case Expr::Var: {
            auto v = static_name(e.text, inst);
            if (!v && b) {
                auto it = b->named.find(e.text);
                if (it != b->named.end()) return it->second;
                throw Error(e.loc, "'" + e.text + "' is not a dim, a nat constant or an axis bound by the parameters");
            }
            if (!v) throw Error(e.loc, "'" + e.text + "' is not a dim or a nat constant");
            return *v;
        }
        case Expr::Binary: {
            const Bindings* bs = b;
            int64_t a = eval_nat(*e.args[0], inst, bs);
            int64_t b = eval_nat(*e.args[1], inst, bs);
            int64_t r = 0;
            if (e.text == "+") r = a + b;
            else if (e.text == "-") r = a - b;
            else if (e.text == "*") {
                if (a != 0 && b > kMaxSize / a) throw Error(e.loc, "size too large");
                r = a * b;
            } else {
                if (b == 0 || a % b) throw Error(e.loc, std::to_string(a) + " / " + std::to_string(b) + " is not a natural number");
                r = a / b;
            }
            if (r < 0 || r > kMaxSize) throw Error(e.loc, "size out of range: " + std::to_string(r));
            return r;
        }
        default: throw Error(e.loc, "expected a natural number expression");
        }
    }

    /// An f64 const's literal text, overridden by --const.
    std::string f64_text(const ast::Const& c) {
        auto it = opts_.consts.find(c.name);
        std::string s = it != opts_.consts.end() ? it->second : literal_text(*c.value);
        char* end = nullptr;
        std::strtod(s.c_str(), &end);
        if (s.empty() || *end) throw Error(c.loc, "constant " + c.name + " = '" + s + "' is not a number");
        return s;
    }
    std::string literal_text(const Expr& e) {
        if (e.kind == Expr::Num) return e.text;
        if (e.kind == Expr::Neg && e.args[0]->kind == Expr::Num) return "-" + e.args[0]->text;
        throw Error(e.loc, "an f64 constant is a number literal");
    }

    // ---------- instances and types ----------

    const Inst* instance(const Expr& modref, const Inst* ctx) {
        const ast::Module* m = find_module(modref.text);
        if (!m) throw Error(modref.loc, "unknown module '" + modref.text + "'");
        std::vector<int64_t> dims;
        for (const auto& d : modref.args) dims.push_back(eval_nat(*d, ctx));
        return instance(m, dims, modref.loc);
    }

    const Inst* instance(const ast::Module* m, const std::vector<int64_t>& dims, Loc loc) {
        if (dims.size() != m->dims.size())
            throw Error(loc, "module " + m->name + " takes " + std::to_string(m->dims.size()) + " dims, given " +
                                 std::to_string(dims.size()));
        for (size_t i = 0; i < dims.size(); ++i)
            if (dims[i] < 1 || dims[i] > kMaxSize)
                throw Error(loc, "module " + m->name + ": dim " + m->dims[i] + " is " + std::to_string(dims[i]) +
                                     " (dims are 1 to 2^40)");
        std::string key = m->name;
        if (!m->dims.empty()) {
            key += "{";
            for (size_t i = 0; i < dims.size(); ++i) key += (i ? "," : "") + std::to_string(dims[i]);
            key += "}";
        }
        auto& slot = insts_[key];
        if (slot) return slot.get();
        if (!resolving_.insert(m->name).second) throw Error(loc, "module " + m->name + " contains itself");
        auto inst = std::make_unique<Inst>();
        inst->mod = m;
        inst->dims = dims;
        inst->key = key;
        std::vector<std::string> names;
        std::vector<TypeP> items;
        for (const ast::ParamDecl& d : m->params) {
            for (const auto& n : names)
                if (n == d.name) throw Error(d.loc, "parameter '" + d.name + "' declared twice");
            names.push_back(d.name);
            items.push_back(param_type(d, inst.get()));
        }
        inst->params = record_type(names, items);
        resolving_.erase(m->name);
        slot = std::move(inst);
        return slot.get();
    }

    TypeP param_type(const ast::ParamDecl& d, const Inst* inst) {
        if (d.type) {
            TypeP t = resolve(*d.type, inst, nullptr, false);
            if (!t->is_real_tensor()) throw Error(d.loc, "a parameter is a real tensor, found " + to_string(*t));
            static const std::set<std::string> inits = {"normal", "uniform", "zeros", "ones"};
            if (d.init.empty()) throw Error(d.loc, "parameter '" + d.name + "' needs an initializer");
            if (!inits.count(d.init)) throw Error(d.init_loc, "unknown initializer '" + d.init + "' (normal, uniform, zeros, ones)");
            size_t want = d.init == "normal" || d.init == "uniform" ? 2 : 0;
            if (d.init_args.size() != want)
                throw Error(d.init_loc, d.init + " takes " + std::to_string(want) + " arguments");
            return t;
        }
        if (!d.init.empty()) throw Error(d.init_loc, "a submodule parameter takes no initializer");
        const Inst* sub = instance(*d.mod, inst);
        if (!d.stack) return sub->params;
        int64_t n = eval_nat(*d.stack, inst);
        if (n < 1) throw Error(d.stack->loc, "a stack holds at least one copy");
        return stacked(sub->params, n);
    }

    /// Resolves a written type. Named axes take their size from `b` (binding it from --dim when
    /// `entry`); `b` null means named axes are not allowed (parameter types).
    TypeP resolve(const ast::Type& t, const Inst* inst, Bindings* b, bool entry) {
        switch (t.kind) {
        case ast::Type::F64: return scalar_type();
        case ast::Type::Nat: throw Error(t.loc, "nat is a static type: it can be a constant, not a function parameter");
        case ast::Type::Params: return instance(*t.mod, inst)->params;
        case ast::Type::Alias: {
            for (const auto& a : file_.types)
                if (a.name == t.name) {
                    if (!active_.insert("type " + t.name).second) throw Error(t.loc, "type '" + t.name + "' refers to itself");
                    TypeP r = resolve(*a.type, nullptr, b, entry);
                    active_.erase("type " + t.name);
                    return r;
                }
            throw Error(t.loc, "unknown type '" + t.name + "'");
        }
        case ast::Type::Tuple:
        case ast::Type::Record: {
            std::vector<TypeP> items;
            for (const auto& i : t.items) items.push_back(resolve(*i, inst, b, entry));
            return t.kind == ast::Type::Tuple ? tuple_type(items) : record_type(t.names, items);
        }
        case ast::Type::Tensor: {
            std::vector<Axis> axes;
            if (t.ellipsis) {
                if (!b || !b->has_ellipsis) throw Error(t.loc, entry ? "an entry's parameters cannot use '...'" : "'...' is only allowed in function signatures");
                axes = b->ellipsis;
            }
            for (const auto& a : t.axes) axes.push_back(resolve_axis(*a, inst, b, entry));
            Elem e = t.elem == "int" ? Elem::Int : t.elem == "bool" ? Elem::Bool : Elem::Real;
            int64_t bound = t.bound ? eval_nat(*t.bound, inst) : 0;
            return tensor_type(e, axes, bound);
        }
        }
        throw Error(t.loc, "bad type");
    }

    Axis resolve_axis(const Expr& a, const Inst* inst, Bindings* b, bool entry) {
        if (a.kind == Expr::Sized) {
            if (!b) throw Error(a.loc, "axis '" + a.text + "' is named: a parameter's axes are dims or numbers");
            return {a.text, axis_size(a, inst, b)};
        }
        if (a.kind == Expr::Var && !static_name(a.text, inst)) {
            if (!b) throw Error(a.loc, "'" + a.text + "' is not a dim: a parameter's axes are dims or numbers");
            auto it = b->named.find(a.text);
            if (it == b->named.end() && entry) {
                auto d = opts_.dims.find(a.text);
                if (d == opts_.dims.end()) throw Error(a.loc, "axis '" + a.text + "' has no size: pass --dim " + a.text + "=<size>");
                if (d->second < 1 || d->second > kMaxSize) throw Error(a.loc, "--dim " + a.text + " out of range");
                it = b->named.emplace(a.text, d->second).first;
                used_dims_.insert(a.text);
            }
            if (it == b->named.end()) throw Error(a.loc, "axis '" + a.text + "' is not bound by the parameters");
            return {a.text, it->second};
        }
        return {"", eval_nat(a, inst)};
    }

    /// The written size of a named axis `seq: T - 1`, at least 1.
    int64_t axis_size(const Expr& a, const Inst* inst, const Bindings* b) {
        int64_t n = eval_nat(*a.args[0], inst, b);
        if (n < 1) throw Error(a.args[0]->loc, "axis '" + a.text + "' of size " + std::to_string(n) + ": sizes are at least 1");
        return n;
    }

    /// Does `actual` match the declared `t`? Binds named axes and `...` in `b`.
    bool match(const ast::Type& t, const TypeP& actual, const Inst* inst, Bindings& b) {
        if (t.kind == ast::Type::Tensor) {
            if (actual->kind != Type::Tensor) return false;
            Elem e = t.elem == "int" ? Elem::Int : t.elem == "bool" ? Elem::Bool : Elem::Real;
            if (actual->elem != e) return false;
            size_t n = t.axes.size();
            if (t.ellipsis ? actual->axes.size() < n : actual->axes.size() != n) return false;
            size_t lead = actual->axes.size() - n;
            if (t.ellipsis) {
                std::vector<Axis> e2(actual->axes.begin(), actual->axes.begin() + (long)lead);
                if (b.has_ellipsis && b.ellipsis != e2) return false;
                b.has_ellipsis = true;
                b.ellipsis = e2;
            }
            for (size_t i = 0; i < n; ++i) {
                const Expr& a = *t.axes[i];
                const Axis& x = actual->axes[lead + i];
                if (a.kind == Expr::Sized) {
                    if (x.name != a.text || x.size != axis_size(a, inst, &b)) return false;
                } else if (a.kind == Expr::Var && !static_name(a.text, inst)) {
                    if (x.name != a.text) return false;
                    auto [it, fresh] = b.named.emplace(a.text, x.size);
                    if (!fresh && it->second != x.size) return false;
                } else if (!x.name.empty() || x.size != eval_nat(a, inst)) {
                    return false;
                }
            }
            return true;
        }
        if (t.kind == ast::Type::Tuple || t.kind == ast::Type::Record) {
            if (actual->kind != (t.kind == ast::Type::Tuple ? Type::Tuple : Type::Record)) return false;
            if (actual->items.size() != t.items.size() || (t.kind == ast::Type::Record && actual->names != t.names)) return false;
            for (size_t i = 0; i < t.items.size(); ++i)
                if (!match(*t.items[i], actual->items[i], inst, b)) return false;
            return true;
        }
        if (t.kind == ast::Type::Alias) {  // `type V = [batch, n]` as a parameter's type binds as its text does
            for (const auto& a : file_.types)
                if (a.name == t.name) {
                    if (!active_.insert("type " + t.name).second)
                        throw Error(t.loc, "type '" + t.name + "' refers to itself");
                    bool ok = match(*a.type, actual, nullptr, b);
                    active_.erase("type " + t.name);
                    return ok;
                }
            throw Error(t.loc, "unknown type '" + t.name + "'");
        }
        return same_type(*resolve(t, inst, &b, false), *actual);
    }

    // ---------- entries and functions ----------

    std::pair<const Inst*, const ast::Fn*> parse_entry(const std::string& entry) {
        Source src{"<entry>", entry};
        std::vector<Token> toks;
        try {
            toks = lex(src);
        } catch (const Error&) {
            throw Error({}, "bad entry '" + entry + "'");
        }
        size_t i = 0;
        auto is = [&](const char* p) { return toks[i].kind == Tok::Punct && toks[i].text == p; };
        auto bad = [&]() -> Error { return Error({}, "bad entry '" + entry + "': expected Fn, Module.fn or 'Module{dims}.fn'"); };
        if (toks[i].kind != Tok::Ident) throw bad();
        std::string first = toks[i++].text;
        if (toks[i].kind == Tok::End) {
            const ast::Fn* f = find_fn(file_.fns, first);
            if (!f) throw Error({}, "no function '" + first + "' in the file (entries: " + join(list_entries(file_)) + ")");
            return {nullptr, f};
        }
        std::vector<int64_t> dims;
        if (is("{")) {
            ++i;
            while (!is("}")) {
                if (toks[i].kind == Tok::Number && is_int_text(toks[i].text) && toks[i].text.size() < 14 &&
                    std::stoll(toks[i].text) <= kMaxSize)
                    dims.push_back(std::stoll(toks[i].text));
                else if (toks[i].kind == Tok::Number && is_int_text(toks[i].text))
                    throw Error({}, "entry '" + entry + "': dim " + toks[i].text +
                                        " is too large (sizes are at most 2^40)");
                else if (toks[i].kind == Tok::Ident && opts_.dims.count(toks[i].text)) {
                    dims.push_back(opts_.dims.at(toks[i].text));
                    used_dims_.insert(toks[i].text);
                } else if (toks[i].kind == Tok::Ident && static_name(toks[i].text, nullptr))
                    dims.push_back(*static_name(toks[i].text, nullptr));
                else if (toks[i].kind == Tok::Ident)
                    throw Error({}, "entry '" + entry + "': dim '" + toks[i].text + "' has no size: pass --dim " +
                                        toks[i].text + "=<size>");
                else throw bad();
                ++i;
                if (is(",")) ++i;
                else if (!is("}")) throw bad();
            }
            ++i;
        }
        if (!is(".")) throw bad();
        ++i;
        if (toks[i].kind != Tok::Ident || toks[i + 1].kind != Tok::End) throw bad();
        const ast::Module* m = find_module(first);
        if (!m) throw Error({}, "no module '" + first + "' in the file");
        const Inst* inst = instance(m, dims, m->loc);
        const ast::Fn* f = find_fn(m->fns, toks[i].text);
        if (!f) throw Error({}, "module " + first + " has no function '" + toks[i].text + "'");
        return {inst, f};
    }

    static std::string join(const std::vector<std::string>& v) {
        std::string s;
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
        return s;
    }

    /// Elaborates `fn` of `inst` (null: a top-level function) on arguments of `types`
    /// (without self), once per distinct signature; returns the Core function's name.
    std::string instantiate(const Inst* inst, const ast::Fn& fn, const std::vector<TypeP>& types, Loc call) {
        std::string base = (inst ? inst->key + "." : "") + fn.name;
        std::string key = base + "(";
        for (const TypeP& t : types) key += to_string(*t) + ";";
        if (auto it = memo_.find(key); it != memo_.end()) return it->second;
        if (!active_.insert(key).second) throw Error(call, "recursive call of " + base);
        if (calls_ >= kMaxCallDepth)
            throw Error(call, "calls nested deeper than " + std::to_string(kMaxCallDepth) + " (the call of " + base +
                                  ")");
        check_stack(call, "calls");
        struct Depth {
            int& n;
            ~Depth() { --n; }
        } depth{++calls_};
        if (types.size() != fn.params.size())
            throw Error(call, base + " takes " + std::to_string(fn.params.size()) + " arguments, given " + std::to_string(types.size()));
        Bindings b;
        core::Function f;
        if (inst) {
            f.param_names.push_back("self");
            f.param_types.push_back(inst->params);
        }
        for (size_t i = 0; i < types.size(); ++i) {
            if (!match(*fn.params[i].type, types[i], inst, b))
                throw Error(call, "argument " + std::to_string(i + 1) + " of " + base + ": expected " +
                                      describe(*fn.params[i].type, inst, b) + ", found " + to_string(*types[i]));
            f.param_names.push_back(fn.params[i].name);
            f.param_types.push_back(types[i]);
        }
        std::string name = base;
        for (int k = 2; prog_.find(name) || reserved_.count(name); ++k) name = base + "#" + std::to_string(k);
        reserved_.insert(name);
        f.name = name;
        Scope sc{inst, &f, {}, {}};
        for (size_t i = 0; i < types.size(); ++i) sc.vars[fn.params[i].name] = Val{(int)i + (inst ? 1 : 0), types[i]};
        for (const ast::Let& l : fn.body.lets) {
            Val v = expr(sc, *l.value);
            if (!l.tuple) {
                sc.vars[l.names[0]] = v;
                continue;
            }
            if (v.type->kind != Type::Tuple || v.type->items.size() != l.names.size())
                throw Error(l.loc, "cannot bind " + std::to_string(l.names.size()) + " names to " + to_string(*v.type));
            for (size_t i = 0; i < l.names.size(); ++i) sc.vars[l.names[i]] = get(sc, v, i, l.loc);
        }
        Val r = expr(sc, *fn.body.result);
        f.result = r.id;
        if (fn.ret) {
            TypeP want = resolve(*fn.ret, inst, &b, false);
            if (!same_type(*want, *r.type))
                throw Error(fn.body.result->loc, base + " returns " + to_string(*r.type) + " but is declared to return " + to_string(*want));
        }
        prog_.add(std::move(f));
        active_.erase(key);
        memo_[key] = name;
        return name;
    }
    std::set<std::string> reserved_;
    int calls_ = 0;  // instantiations in progress

    std::string describe(const ast::Type& t, const Inst* inst, Bindings& b) {
        try {
            Bindings c = b;
            c.has_ellipsis = true;
            return to_string(*resolve(t, inst, &c, false));
        } catch (const Error&) {
            return "a value of the declared type";
        }
    }

    // ---------- expressions ----------

    struct Scope {
        const Inst* inst;
        core::Function* f;
        std::map<std::string, Val> vars;
        std::map<std::string, Val> fields;  // module parameters read so far
    };

    int emit(Scope& sc, Let l) { return sc.f->emit(std::move(l)); }

    Val lit(Scope& sc, const std::string& text, Loc loc) {
        Let l;
        l.op = Op::Lit;
        l.text = text;
        l.type = scalar_type();
        l.loc = loc;
        return Val{emit(sc, l), l.type};
    }

    Val prim(Scope& sc, Prim p, const std::vector<Val>& args, std::vector<int64_t> ints, const std::string& text,
             Loc loc) {
        std::vector<TypeP> ts;
        Let l;
        for (const Val& a : args) {
            ts.push_back(a.type);
            l.args.push_back(a.id);
        }
        try {
            l.type = core::prim_type(p, ts, ints, text);
        } catch (const Error& e) {
            throw Error(loc, e.what());
        }
        l.op = Op::Prim;
        l.name = core::info(p).name;
        l.ints = std::move(ints);
        l.text = text;
        l.loc = loc;
        return Val{emit(sc, l), l.type};
    }

    Val get(Scope& sc, const Val& v, size_t i, Loc loc) {
        Let l;
        l.op = Op::Get;
        l.args = {v.id};
        l.ints = {(int64_t)i};
        if (v.type->kind == Type::Record) l.name = v.type->names[i];
        l.type = v.type->items[i];
        l.loc = loc;
        return Val{emit(sc, l), l.type};
    }

    Val build(Scope& sc, const TypeP& shape, const std::vector<Val>& parts, Loc loc = {}) {
        Let l;
        l.op = shape->kind == Type::Record ? Op::Record : Op::Tuple;
        std::vector<TypeP> ts;
        for (const Val& p : parts) {
            l.args.push_back(p.id);
            ts.push_back(p.type);
        }
        if (l.op == Op::Record) l.names = shape->names;
        l.type = l.op == Op::Record ? record_type(shape->names, ts) : tuple_type(ts);
        l.loc = loc;
        return Val{emit(sc, l), l.type};
    }

    /// An elementwise primitive over trees: componentwise on trees of one shape, a tensor
    /// operand combined with every leaf of a tree.
    Val lift(Scope& sc, Prim p, const std::vector<Val>& args, Loc loc) {
        const Val* tree = nullptr;
        for (const Val& a : args)
            if (a.type->kind != Type::Tensor) { tree = &a; break; }
        if (!tree) return prim(sc, p, args, {}, "", loc);
        std::vector<Val> parts;
        for (size_t i = 0; i < tree->type->items.size(); ++i) {
            std::vector<Val> sub;
            for (const Val& a : args) {
                if (a.type->kind == Type::Tensor) { sub.push_back(a); continue; }
                if (a.type->kind != tree->type->kind || a.type->items.size() != tree->type->items.size() || a.type->names != tree->type->names)
                    throw Error(loc, std::string(core::info(p).name) + ": trees of different shapes: " +
                                         to_string(*tree->type) + " and " + to_string(*a.type));
                sub.push_back(get(sc, a, i, loc));
            }
            parts.push_back(lift(sc, p, sub, loc));
        }
        return build(sc, tree->type, parts, loc);
    }

    Val var(Scope& sc, const Expr& e) {
        if (auto it = sc.vars.find(e.text); it != sc.vars.end()) return it->second;
        if (sc.inst) {
            if (auto it = sc.fields.find(e.text); it != sc.fields.end()) return it->second;
            const auto& ps = sc.inst->mod->params;
            for (size_t i = 0; i < ps.size(); ++i) {
                if (ps[i].name != e.text) continue;
                Val v = get(sc, Val{0, sc.inst->params}, i, e.loc);
                if (ps[i].mod) {
                    v.inst = instance(*ps[i].mod, sc.inst);
                    v.stack = ps[i].stack ? eval_nat(*ps[i].stack, sc.inst) : 0;
                }
                return sc.fields[e.text] = v;
            }
        }
        if (const ast::Const* c = find_const(e.text); c && !c->nat) return lit(sc, f64_text(*c), e.loc);
        if (auto v = static_name(e.text, sc.inst)) return lit(sc, std::to_string(*v), e.loc);
        throw Error(e.loc, "unknown name '" + e.text + "'");
    }

    Val expr(Scope& sc, const Expr& e) {
        check_stack(e.loc, "expression");
        switch (e.kind) {
        case Expr::Num: return lit(sc, e.text, e.loc);
        case Expr::Str: throw Error(e.loc, "a string is only the spec of ein or a field name of set_field");
        case Expr::Var: return var(sc, e);
        case Expr::ModRef: throw Error(e.loc, "a module is not a value");
        case Expr::Neg: return lift(sc, Prim::Neg, {expr(sc, *e.args[0])}, e.loc);
        case Expr::Binary: {
            static const std::map<std::string, Prim> ops = {
                {"+", Prim::Add}, {"-", Prim::Sub}, {"*", Prim::Mul}, {"/", Prim::Div}};
            Val a = expr(sc, *e.args[0]);
            Val b = expr(sc, *e.args[1]);
            return lift(sc, ops.at(e.text), {a, b}, e.loc);
        }
        case Expr::Tuple:
        case Expr::Record: {
            std::vector<Val> parts;
            std::vector<TypeP> ts;
            for (const auto& a : e.args) {
                parts.push_back(expr(sc, *a));
                ts.push_back(parts.back().type);
            }
            if (e.kind == Expr::Record) {
                std::set<std::string> seen;
                for (const auto& n : e.names)
                    if (!seen.insert(n).second) throw Error(e.loc, "field '" + n + "' given twice");
            }
            return build(sc, e.kind == Expr::Record ? record_type(e.names, ts) : tuple_type(ts), parts, e.loc);
        }
        case Expr::Field: {
            Val v = expr(sc, *e.args[0]);
            if (is_int_text(e.text)) return project(sc, v, e);
            if (v.type->kind == Type::Record && !v.stack)
                for (size_t i = 0; i < v.type->names.size(); ++i)
                    if (v.type->names[i] == e.text) {
                        Val r = get(sc, v, i, e.loc);
                        if (v.inst) {  // a submodule's parameter: keep its instance if it is one
                            const auto& ps = v.inst->mod->params;
                            if (ps[i].mod) {
                                r.inst = instance(*ps[i].mod, v.inst);
                                r.stack = ps[i].stack ? eval_nat(*ps[i].stack, v.inst) : 0;
                            }
                        }
                        return r;
                    }
            throw Error(e.loc, "no field '" + e.text + "' in " + to_string(*v.type));
        }
        case Expr::Call: return call(sc, e);
        case Expr::Subscript: return subscript(sc, e);
        case Expr::Sized:
            throw Error(e.loc, "'" + e.text + ": ...' is a new axis and its size: only split takes one, as in "
                               "split(x, feat -> head: H, dh: D / H)");
        case Expr::Arrow:
            throw Error(e.loc, "'->' is only in split and merge: split(x, feat -> head: H, dh: D / H), "
                               "merge(x, head, dh -> feat)");
        case Expr::Select: break;
        }
        throw Error(e.loc, "bad expression");
    }

    /// `t.i`: item i of a tuple (a vjp's cotangents, scan's (carry, stack)).
    Val project(Scope& sc, const Val& t, const Expr& e) {
        if (t.type->kind != Type::Tuple)
            throw Error(e.loc, "'." + e.text + "' takes an item of a tuple, found " + to_string(*t.type));
        const size_t n = t.type->items.size();
        if (e.text.size() > 6 || std::stoul(e.text) >= n)
            throw Error(e.loc, "'." + e.text + "' is out of range for " + to_string(*t.type) + ", a tuple of " +
                                   std::to_string(n) + " item" + (n == 1 ? "" : "s") +
                                   (n ? " (.0 to ." + std::to_string(n - 1) + ")" : std::string()));
        return get(sc, t, std::stoul(e.text), e.loc);
    }

    // ---------- calls ----------

    /// A function reference: (instance or null, the function, the self value if a method).
    struct FnRef {
        const Inst* inst = nullptr;
        const ast::Fn* fn = nullptr;
        std::optional<Val> self;
    };

    std::optional<FnRef> fn_ref(Scope& sc, const Expr& callee) {
        if (callee.kind == Expr::Var) {
            if (sc.vars.count(callee.text)) return std::nullopt;
            if (sc.inst)
                if (const ast::Fn* f = find_fn(sc.inst->mod->fns, callee.text))
                    return FnRef{sc.inst, f, Val{0, sc.inst->params}};
            if (const ast::Fn* f = find_fn(file_.fns, callee.text)) return FnRef{nullptr, f, std::nullopt};
            return std::nullopt;
        }
        if (callee.kind == Expr::Field) {
            Val m = expr(sc, *callee.args[0]);
            if (!m.inst) throw Error(callee.loc, "'." + callee.text + "' is not a method: " + to_string(*m.type) + " is not a module");
            const ast::Fn* f = find_fn(m.inst->mod->fns, callee.text);
            if (!f) throw Error(callee.loc, "module " + m.inst->mod->name + " has no function '" + callee.text + "'");
            if (m.stack) throw Error(callee.loc, "a stack's functions are called through fold or scan");
            return FnRef{m.inst, f, m};
        }
        return std::nullopt;
    }

    Val call_fn(Scope& sc, const FnRef& r, const std::vector<Val>& args, Loc loc) {
        std::vector<TypeP> ts;
        for (const Val& a : args) ts.push_back(a.type);
        std::string name = instantiate(r.inst, *r.fn, ts, loc);
        Let l;
        l.op = Op::Call;
        l.name = name;
        if (r.self) l.args.push_back(r.self->id);
        for (const Val& a : args) l.args.push_back(a.id);
        l.type = prog_.find(name)->type_of(prog_.find(name)->result);
        l.loc = loc;
        return Val{emit(sc, l), l.type};
    }

    std::vector<Val> eval_args(Scope& sc, const Expr& e, size_t from) {
        std::vector<Val> v;
        for (size_t i = from; i < e.args.size(); ++i) v.push_back(expr(sc, *e.args[i]));
        return v;
    }

    /// An axis argument: an integer (negative counts from the end) or the name of an axis of `t`.
    int64_t axis_arg(const Expr& a, const Type& t) {
        int64_t rank = (int64_t)t.axes.size();
        if (a.kind == Expr::Var) {
            for (int64_t i = 0; i < rank; ++i)
                if (t.axes[i].name == a.text) return i;
            throw Error(a.loc, "no axis '" + a.text + "' in " + to_string(t));
        }
        int64_t k = static_int(a);
        if (k < -rank || k >= rank) throw Error(a.loc, "axis " + std::to_string(k) + " out of range for " + to_string(t));
        return k < 0 ? k + rank : k;
    }

    int64_t static_int(const Expr& a) {
        if (a.kind == Expr::Neg) return -static_int(*a.args[0]);
        if (a.kind == Expr::Num && is_int_text(a.text) && a.text.size() < 12) return std::stoll(a.text);
        if (a.kind == Expr::Num && is_int_text(a.text)) throw Error(a.loc, "the integer " + a.text + " is too large");
        throw Error(a.loc, "expected an integer literal");
    }

    void arity(const Expr& e, const std::string& n, size_t lo, size_t hi) {
        size_t k = e.args.size() - 1;
        if (k < lo || k > hi)
            throw Error(e.loc, n + " takes " + std::to_string(lo) + (hi > lo ? " to " + std::to_string(hi) : "") +
                                   " arguments, given " + std::to_string(k));
    }

    std::string site(Scope& sc) { return sc.f->name + "/%" + std::to_string(sc.f->next_id()); }

    Val call(Scope& sc, const Expr& e) {
        const Expr& callee = *e.args[0];
        if (callee.kind == Expr::Var && !sc.vars.count(callee.text)) {
            const std::string& n = callee.text;
            if (n == "fold" || n == "scan") return loop(sc, e, n == "scan");
            if (n == "grad" || n == "vjp") return derivative(sc, e, n == "grad");
            if ((n == "transpose" || n == "permute") && !fn_ref(sc, callee)) return permute(sc, e, n == "transpose");
            if ((n == "relu" || n == "clamp" || n == "min" || n == "log_softmax") && !fn_ref(sc, callee))
                return composite(sc, e, n);
            if (n == "set_field") {
                arity(e, n, 3, 3);
                Val r = expr(sc, *e.args[1]);
                if (e.args[2]->kind != Expr::Str) throw Error(e.args[2]->loc, "set_field's field name is a string");
                Val v = expr(sc, *e.args[3]);
                if (r.type->kind != Type::Record) throw Error(e.args[1]->loc, "set_field needs a record, found " + to_string(*r.type));
                std::vector<Val> parts;
                bool found = false;
                for (size_t i = 0; i < r.type->names.size(); ++i) {
                    if (r.type->names[i] == e.args[2]->text) {
                        if (!same_type(*r.type->items[i], *v.type))
                            throw Error(e.args[3]->loc, "set_field: field " + e.args[2]->text + " is " + to_string(*r.type->items[i]) + ", given " + to_string(*v.type));
                        parts.push_back(v);
                        found = true;
                    } else {
                        parts.push_back(get(sc, r, i, e.loc));
                    }
                }
                if (!found) throw Error(e.args[2]->loc, "no field '" + e.args[2]->text + "' in " + to_string(*r.type));
                return build(sc, r.type, parts, e.loc);
            }
            if (std::optional<Prim> p = core::find_prim(n); p && !fn_ref(sc, callee)) return prim_call(sc, e, *p);
        }
        auto r = fn_ref(sc, callee);
        if (!r) throw Error(callee.loc, callee.kind == Expr::Var ? "unknown function '" + callee.text + "'" : "this expression is not a function");
        return call_fn(sc, *r, eval_args(sc, e, 1), e.loc);
    }

    /// An axis of `t` for a message: its name, or its position.
    static std::string axis_label(const Type& t, int64_t a) {
        return t.axes[a].name.empty() ? "axis " + std::to_string(a) : "axis '" + t.axes[a].name + "'";
    }

    /// A subscript bound as written: a nat expression, or minus one (counting from the end).
    int64_t subscript_bound(const Expr& b, const Inst* inst) {
        return b.kind == Expr::Neg ? -eval_nat(*b.args[0], inst) : eval_nat(b, inst);
    }

    /// `x[a: i, b: lo..hi, ...]`, each axis once: an index drops its axis (`index`), a half-open
    /// range keeps it with size hi - lo (`slice`); omitted bounds are 0 and the axis's size.
    Val subscript(Scope& sc, const Expr& e) {
        Val x = expr(sc, *e.args[0]);
        if (x.type->kind != Type::Tensor) throw Error(e.args[0]->loc, "a subscript needs a tensor, found " + to_string(*x.type));
        const TypeP t = x.type;
        std::vector<std::pair<int64_t, const Expr*>> sels;
        for (size_t i = 1; i < e.args.size(); ++i) {
            const Expr& s = *e.args[i];
            int64_t a = axis_arg(*s.args[0], *t);
            for (const auto& o : sels)
                if (o.first == a) throw Error(s.loc, axis_label(*t, a) + " of " + to_string(*t) + " is subscripted twice");
            sels.emplace_back(a, &s);
        }
        // The ranges first (they keep every axis in place), then the indices from the last axis back.
        std::stable_sort(sels.begin(), sels.end(), [](const auto& p, const auto& q) {
            bool pr = p.second->text == "..", qr = q.second->text == "..";
            if (pr != qr) return pr;
            return !pr && p.first > q.first;
        });
        for (const auto& [a, s] : sels) {
            int64_t n = t->axes[a].size;
            std::string where = axis_label(*t, a) + " of size " + std::to_string(n) + " in " + to_string(*t);
            if (s->text == "..") {
                int64_t lo0 = s->args[1] ? subscript_bound(*s->args[1], sc.inst) : 0;
                int64_t hi0 = s->args[2] ? subscript_bound(*s->args[2], sc.inst) : n;
                int64_t lo = lo0 < 0 ? lo0 + n : lo0, hi = hi0 < 0 ? hi0 + n : hi0;
                if (lo < 0 || hi > n || lo >= hi)
                    throw Error(s->loc, "range " + std::to_string(lo0) + ".." + std::to_string(hi0) +
                                            (lo >= hi && lo >= 0 && hi <= n ? " is empty" : " is out of bounds") + " for " + where);
                x = prim(sc, Prim::Slice, {x}, {a, lo, hi - lo}, "", s->loc);
            } else {
                int64_t i0 = subscript_bound(*s->args[1], sc.inst), i = i0 < 0 ? i0 + n : i0;
                if (i < 0 || i >= n) throw Error(s->loc, "index " + std::to_string(i0) + " out of bounds for " + where);
                x = prim(sc, Prim::Index, {x}, {a, i}, "", s->loc);
            }
        }
        return x;
    }

    /// `transpose(x, a, b)` swaps two axes; `permute(x, a1, ..., an)` lists every axis once in its
    /// new order. Axes are names or integers; both elaborate to a one-operand `ein`.
    Val permute(Scope& sc, const Expr& e, bool transpose) {
        const std::string n = transpose ? "transpose" : "permute";
        if (e.args.size() < 2) throw Error(e.loc, n + " takes a tensor and axes");
        Val x = expr(sc, *e.args[1]);
        if (x.type->kind != Type::Tensor) throw Error(e.args[1]->loc, n + " needs a tensor, found " + to_string(*x.type));
        const Type& t = *x.type;
        size_t rank = t.axes.size();
        if (rank > 26) throw Error(e.loc, n + " handles at most 26 axes, found " + to_string(t));
        std::vector<int64_t> order;
        for (size_t i = 2; i < e.args.size(); ++i) {
            int64_t a = axis_arg(*e.args[i], t);
            for (int64_t o : order)
                if (o == a) throw Error(e.args[i]->loc, n + ": " + axis_label(t, a) + " of " + to_string(t) + " is given twice");
            order.push_back(a);
        }
        if (transpose) {
            arity(e, n, 3, 3);
            std::vector<int64_t> swapped;
            for (size_t i = 0; i < rank; ++i) swapped.push_back((int64_t)i);
            std::swap(swapped[order[0]], swapped[order[1]]);
            order = swapped;
        } else if (order.size() != rank) {
            throw Error(e.loc, "permute lists every axis of " + to_string(t) + " once: " + std::to_string(rank) +
                                   " axes, given " + std::to_string(order.size()));
        }
        std::string in, out;
        for (size_t i = 0; i < rank; ++i) {
            in += (char)('a' + i);
            out += (char)('a' + order[i]);
        }
        return prim(sc, Prim::Ein, {x}, {}, in + "->" + out, e.loc);
    }

    /// The forms written with other primitives: relu(x) = maximum(0, x) (so relu'(0) = 0),
    /// clamp(x, lo, hi) = minimum(maximum(x, lo), hi), min(x, a) = -max(-x, a) and
    /// log_softmax(x[, a]) = d - log(sum(exp(d), a)) with d = x - max(x, a), a the last axis if
    /// not given (the row maximum and the log broadcast back along a by `expand`).
    Val composite(Scope& sc, const Expr& e, const std::string& n) {
        if (n == "relu" || n == "clamp") {
            arity(e, n, n == "relu" ? 1 : 3, n == "relu" ? 1 : 3);
            std::vector<Val> a = eval_args(sc, e, 1);
            if (n == "relu") return lift(sc, Prim::Maximum, {lit(sc, "0", e.loc), a[0]}, e.loc);
            return lift(sc, Prim::Minimum, {lift(sc, Prim::Maximum, {a[0], a[1]}, e.loc), a[2]}, e.loc);
        }
        arity(e, n, n == "min" ? 2 : 1, 2);
        Val x = expr(sc, *e.args[1]);
        if (x.type->kind != Type::Tensor || x.type->elem != Elem::Real)
            throw Error(e.args[1]->loc, n + " needs a real tensor, found " + to_string(*x.type));
        std::vector<int64_t> ints;
        if (e.args.size() == 3) ints.push_back(axis_arg(*e.args[2], *x.type));
        if (n == "min") {
            Val m = prim(sc, Prim::Max, {prim(sc, Prim::Neg, {x}, {}, "", e.loc)}, ints, "", e.loc);
            return prim(sc, Prim::Neg, {m}, {}, "", e.loc);
        }
        if (x.type->axes.empty()) throw Error(e.args[1]->loc, "log_softmax needs an axis, found " + to_string(*x.type));
        if (ints.empty()) ints.push_back((int64_t)x.type->axes.size() - 1);
        Val m = prim(sc, Prim::Expand, {prim(sc, Prim::Max, {x}, ints, "", e.loc), x}, ints, "", e.loc);
        Val d = prim(sc, Prim::Sub, {x, m}, {}, "", e.loc);
        Val s = prim(sc, Prim::Sum, {prim(sc, Prim::Exp, {d}, {}, "", e.loc)}, ints, "", e.loc);
        Val l = prim(sc, Prim::Expand, {prim(sc, Prim::Log, {s}, {}, "", e.loc), x}, ints, "", e.loc);
        return prim(sc, Prim::Sub, {d, l}, {}, "", e.loc);
    }

    Val prim_call(Scope& sc, const Expr& e, Prim p) {
        const std::string n = core::info(p).name;
        const CallForm& form = kCallForms[(size_t)p];
        switch (form.form) {
        case Form::Internal: throw Error(e.args[0]->loc, "'" + n + "' is internal to the transforms");
        case Form::Lifted: return lift(sc, p, eval_args(sc, e, 1), e.loc);
        case Form::Reduce: {
            arity(e, n, 1, 2);
            Val x = expr(sc, *e.args[1]);
            if (x.type->kind != Type::Tensor) throw Error(e.args[1]->loc, n + " needs a tensor, found " + to_string(*x.type));
            std::vector<int64_t> ints;
            if (e.args.size() == 3) ints.push_back(axis_arg(*e.args[2], *x.type));
            return prim(sc, p, {x}, ints, "", e.loc);
        }
        case Form::Axis: {
            arity(e, n, form.args, form.args);
            Val x = expr(sc, *e.args[1]);
            if (x.type->kind != Type::Tensor) throw Error(e.args[1]->loc, n + " needs a tensor, found " + to_string(*x.type));
            std::vector<int64_t> ints{axis_arg(*e.args[2], *x.type)};
            for (size_t i = 3; i < e.args.size(); ++i) ints.push_back(static_int(*e.args[i]));
            if (p == Prim::Index && ints[1] < 0) ints[1] += x.type->axes[ints[0]].size;  // from the end
            return prim(sc, p, {x}, ints, "", e.loc);
        }
        case Form::Reshape: return reshape(sc, e, p == Prim::Split);
        case Form::Rows: return rows(sc, e, p);
        case Form::Heads: {
            arity(e, n, 2, 2);
            Val x = expr(sc, *e.args[1]);
            return prim(sc, p, {x}, {eval_nat(*e.args[2], sc.inst)}, "", e.loc);
        }
        case Form::Spec:
            if (e.args.size() < 3 || e.args[1]->kind != Expr::Str) throw Error(e.loc, "ein takes a spec string and operands: ein(\"ij,jk->ik\", a, b)");
            return prim(sc, p, eval_args(sc, e, 2), {}, e.args[1]->text, e.loc);
        case Form::Keyed: {
            std::string key = site(sc);
            return prim(sc, p, eval_args(sc, e, 1), {}, key, e.loc);
        }
        case Form::Plain: break;
        }
        std::vector<Val> args;
        for (size_t i = 1; i < e.args.size(); ++i) {
            const Expr& a = *e.args[i];
            try {
                args.push_back(expr(sc, a));
            } catch (const Error& err) {
                // dot(x, batch): an axis where the primitive takes a value.
                if (i == 1 || a.kind != Expr::Var || std::string(err.what()).rfind("unknown name", 0) != 0 ||
                    args[0].type->kind != Type::Tensor)
                    throw;
                const Type& t = *args[0].type;
                bool axis = std::any_of(t.axes.begin(), t.axes.end(), [&](const Axis& x) { return x.name == a.text; });
                const std::string what = axis ? "an axis of " + to_string(t) + ", not a value: " + n +
                                                    " takes no axis argument"
                                              : "neither a value nor an axis of " + to_string(t);
                throw Error(a.loc, n + ": '" + a.text + "' is " + what);
            }
        }
        return prim(sc, p, args, {}, "", e.loc);
    }

    /// `x` with its axes in `order` (order[i]: the axis of x that becomes axis i), a one-operand
    /// ein; x itself when the order is the identity.
    Val reorder(Scope& sc, const Val& x, const std::vector<int64_t>& order, Loc loc) {
        bool same = true;
        std::string in, out;
        for (size_t i = 0; i < order.size(); ++i) {
            same &= order[i] == (int64_t)i;
            in += (char)('a' + i);
            out += (char)('a' + order[i]);
        }
        return same ? x : prim(sc, Prim::Ein, {x}, {}, in + "->" + out, loc);
    }

    /// Is argument `a` of a row primitive over `t` an axis (an integer, or the name of one of
    /// t's axes that no local value shadows) rather than a value?
    bool is_axis(Scope& sc, const Expr& a, const Type& t) {
        if (a.kind == Expr::Num || (a.kind == Expr::Neg && a.args[0]->kind == Expr::Num)) return true;
        if (a.kind != Expr::Var || sc.vars.count(a.text)) return false;
        return std::any_of(t.axes.begin(), t.axes.end(), [&](const Axis& x) { return x.name == a.text; });
    }

    /// softmax(x[, a][, mask]), argmax(x[, a]) and cross_entropy(l, t[, a]) over axis a (a name or
    /// an integer; the last axis when omitted). The primitives work along the last axis, so a
    /// call over another axis moves it last first (a one-operand ein, which copies the elements
    /// exactly), and softmax moves its result back.
    Val rows(Scope& sc, const Expr& e, Prim p) {
        const std::string n = core::info(p).name;
        const bool ce = p == Prim::CrossEntropy, sm = p == Prim::Softmax;
        arity(e, n, ce ? 2 : 1, ce ? 3 : sm ? 3 : 2);
        std::vector<Val> vals{expr(sc, *e.args[1])};
        if (ce) vals.push_back(expr(sc, *e.args[2]));
        const Val x = vals[0];
        if (x.type->kind != Type::Tensor) return prim(sc, p, eval_rest(sc, e, vals), {}, "", e.loc);  // its message
        const Type& t = *x.type;
        const size_t first = ce ? 3 : 2;  // where the axis may be
        std::optional<int64_t> axis;
        // softmax's one argument after x is an axis or a mask; any other's is an axis.
        if (e.args.size() > first && (!sm || e.args.size() > first + 1 || is_axis(sc, *e.args[first], t)))
            axis = axis_arg(*e.args[first], t);
        for (size_t i = first + (axis ? 1 : 0); i < e.args.size(); ++i) vals.push_back(value_arg(sc, *e.args[i], n, t));
        const int64_t last = (int64_t)t.axes.size() - 1, a = axis.value_or(last);
        if (a == last) return prim(sc, p, vals, {}, "", e.loc);
        if (t.axes.size() > 26) throw Error(e.loc, n + " over an axis but the last handles at most 26 axes, found " + to_string(t));
        if (sm && vals.size() == 2)
            throw Error(e.args[first]->loc, "softmax with a mask normalises along the last axis only; " + axis_label(t, a) +
                                                " of " + to_string(t) + " is not last (transpose the scores first)");
        if (ce && vals[1].type->kind == Type::Tensor && vals[1].type->axes != core_drop(t.axes, a))
            throw Error(e.loc, "cross_entropy: the targets must have the logits' axes but " + axis_label(t, a) + ": " +
                                   to_string(t) + " and " + to_string(*vals[1].type));
        std::vector<int64_t> to_last, back((size_t)last + 1);
        for (int64_t i = 0; i <= last; ++i)
            if (i != a) to_last.push_back(i);
        to_last.push_back(a);
        for (int64_t i = 0; i <= last; ++i) back[(size_t)to_last[(size_t)i]] = i;
        vals[0] = reorder(sc, x, to_last, e.loc);
        Val r = prim(sc, p, vals, {}, "", e.loc);
        return sm ? reorder(sc, r, back, e.loc) : r;
    }

    static std::vector<Axis> core_drop(std::vector<Axis> v, int64_t i) {
        v.erase(v.begin() + i);
        return v;
    }

    std::vector<Val> eval_rest(Scope& sc, const Expr& e, std::vector<Val> vals) {
        for (size_t i = vals.size() + 1; i < e.args.size(); ++i) vals.push_back(expr(sc, *e.args[i]));
        return vals;
    }

    /// A value argument of a row primitive; a name that is neither a value nor an axis of `t` says so.
    Val value_arg(Scope& sc, const Expr& a, const std::string& n, const Type& t) {
        try {
            return expr(sc, a);
        } catch (const Error& err) {
            if (a.kind != Expr::Var || std::string(err.what()).rfind("unknown name", 0) != 0) throw;
            if (std::any_of(t.axes.begin(), t.axes.end(), [&](const Axis& x) { return x.name == a.text; }))
                throw Error(a.loc, n + ": '" + a.text + "' is an axis of " + to_string(t) + " where a value (" +
                                       (n == "softmax" ? "the mask" : "an operand") + ") is expected: " + n +
                                       " takes one axis");
            throw Error(a.loc, n + ": '" + a.text + "' is neither a value nor an axis of " + to_string(t));
        }
    }

    /// split(x, a -> n1: s1, ..., nk: sk): axis a (a name or an integer) replaced by the axes n1..nk
    /// (a bare size: a positional axis), sizes nat expressions that may read the sizes of x's
    /// named axes. merge(x, a1, ..., ak -> n): the adjacent axes a1..ak, in order, replaced by
    /// axis n of their sizes' product. Both keep the elements in row-major order.
    Val reshape(Scope& sc, const Expr& e, bool split) {
        const std::string n = split ? "split" : "merge";
        const std::string usage = split ? "split(x, feat -> head: H, dh: D / H)" : "merge(x, head, dh -> feat)";
        size_t arrow = 0;
        for (size_t i = 2; i < e.args.size(); ++i)
            if (e.args[i]->kind == Expr::Arrow) {
                if (arrow) throw Error(e.args[i]->loc, n + " takes one '->': " + usage);
                arrow = i;
            }
        if (e.args.size() < 3 || !arrow || (split && arrow != 2) || (!split && arrow + 1 != e.args.size()))
            throw Error(e.loc, n + " is written " + usage);
        Val x = expr(sc, *e.args[1]);
        if (x.type->kind != Type::Tensor || x.type->elem != Elem::Real || x.type->axes.empty())
            throw Error(e.args[1]->loc, n + " needs a real tensor with axes, found " + to_string(*x.type));
        const Type& t = *x.type;
        const Expr& ar = *e.args[arrow];
        if (split) {
            if (ar.args[0]->kind == Expr::Sized) throw Error(ar.args[0]->loc, "split: the axis to split comes before '->': " + usage);
            const int64_t a = axis_arg(*ar.args[0], t);
            Bindings b;  // the sizes of x's named axes, by name
            for (const Axis& ax : t.axes)
                if (!ax.name.empty()) b.named.emplace(ax.name, ax.size);
            std::vector<int64_t> ints{a};
            std::string names, shown;
            int64_t prod = 1;
            for (size_t i = arrow; i < e.args.size(); ++i) {
                const Expr& s = i == arrow ? *ar.args[1] : *e.args[i];
                if (s.kind == Expr::Arrow) throw Error(s.loc, "split takes one '->': " + usage);
                const bool named = s.kind == Expr::Sized;
                const int64_t size = eval_nat(named ? *s.args[0] : s, sc.inst, &b);
                if (size < 1) throw Error(s.loc, "split: axis " + (named ? "'" + s.text + "' " : std::string()) + "of size " +
                                                     std::to_string(size) + ": sizes are at least 1");
                prod = prod > kMaxSize / size ? kMaxSize + 1 : prod * size;
                ints.push_back(size);
                names += (i == arrow ? "" : ",") + (named ? s.text : std::string());
                shown += (i == arrow ? "" : ", ") + (named ? s.text + ": " : std::string()) + std::to_string(size);
            }
            if (prod != t.axes[a].size)
                throw Error(e.loc, "split: " + axis_label(t, a) + " of " + to_string(t) + " has size " +
                                       std::to_string(t.axes[a].size) + ", which [" + shown + "] does not divide into (" +
                                       "their product is " + (prod > kMaxSize ? "above 2^40" : std::to_string(prod)) + ")");
            return prim(sc, Prim::Split, {x}, ints, names, e.loc);
        }
        if (ar.args[1]->kind != Expr::Var)
            throw Error(ar.args[1]->loc, "merge: after '->' comes the merged axis's name: " + usage);
        std::vector<int64_t> axes;
        for (size_t i = 2; i <= arrow; ++i) {
            const Expr& s = i == arrow ? *ar.args[0] : *e.args[i];
            if (s.kind == Expr::Sized) throw Error(s.loc, "merge: the axes to merge are names or integers: " + usage);
            axes.push_back(axis_arg(s, t));
        }
        std::string listed;
        for (int64_t a : axes)
            listed += (listed.empty() ? "" : ", ") + (t.axes[a].name.empty() ? std::to_string(a) : "'" + t.axes[a].name + "'");
        for (size_t i = 1; i < axes.size(); ++i)
            if (axes[i] != axes[i - 1] + 1)
                throw Error(e.loc, "merge: axes " + listed + " are not adjacent and in order in " + to_string(t) +
                                       " (permute them next to each other first)");
        return prim(sc, Prim::Merge, {x}, {axes[0], (int64_t)axes.size()}, ar.args[1]->text, e.loc);
    }

    Val loop(Scope& sc, const Expr& e, bool scan) {
        const char* n = scan ? "scan" : "fold";
        if (e.args.size() < 3 || e.args[1]->kind != Expr::Field)
            throw Error(e.loc, std::string(n) + " takes a stack's function and an initial value: " + n + "(blocks.apply, x)");
        const Expr& fr = *e.args[1];
        Val s = expr(sc, *fr.args[0]);
        if (!s.stack) throw Error(fr.args[0]->loc, std::string(n) + " runs over a stack of modules, found " + to_string(*s.type));
        const ast::Fn* f = find_fn(s.inst->mod->fns, fr.text);
        if (!f) throw Error(fr.loc, "module " + s.inst->mod->name + " has no function '" + fr.text + "'");
        std::vector<Val> rest = eval_args(sc, e, 2);
        std::vector<TypeP> ts;
        for (const Val& a : rest) ts.push_back(a.type);
        std::string name = instantiate(s.inst, *f, ts, e.loc);
        TypeP out = prog_.find(name)->type_of(prog_.find(name)->result);
        if (!same_type(*out, *rest[0].type))
            throw Error(e.loc, std::string(n) + ": " + name + " must return its first argument's type " + to_string(*rest[0].type) + ", returns " + to_string(*out));
        Let l;
        l.op = Op::Loop;
        l.name = name;
        l.text = n;
        l.args.push_back(s.id);
        for (const Val& a : rest) l.args.push_back(a.id);
        l.ints = {1, 0, scan ? 1 : 0, s.stack};
        l.type = scan ? tuple_type({out, stacked(out, s.stack)}) : out;
        l.loc = e.loc;
        return Val{emit(sc, l), l.type};
    }

    /// grad(f, args...): the gradient of a scalar f with respect to its module's parameters (a
    /// method) or its first argument. vjp(f, args..., ct): the tuple of cotangents of every
    /// parameter of f (self first for a method).
    Val derivative(Scope& sc, const Expr& e, bool grad) {
        if (e.args.size() < 2) throw Error(e.loc, grad ? "grad takes a function and its arguments" : "vjp takes a function, its arguments and a cotangent");
        auto r = fn_ref(sc, *e.args[1]);
        if (!r) throw Error(e.args[1]->loc, "expected a function");
        std::vector<Val> args = eval_args(sc, e, 2);
        Val ct;
        if (!grad) {
            if (args.empty()) throw Error(e.loc, "vjp needs a cotangent after the arguments");
            ct = args.back();
            args.pop_back();
        } else if (!r->self && args.empty()) {
            throw Error(e.loc, "grad of a function needs its arguments");
        }
        if (!grad && args.size() + 1 == r->fn->params.size())
            throw Error(e.loc, "vjp(" + r->fn->name + ", ...) takes " + r->fn->name + "'s " +
                                   std::to_string(r->fn->params.size()) +
                                   " argument(s) and then a cotangent of its result; given " +
                                   std::to_string(args.size() + 1) + " value(s) in all");
        std::vector<TypeP> ts;
        for (const Val& a : args) ts.push_back(a.type);
        std::string fname = instantiate(r->inst, *r->fn, ts, e.loc);
        const core::Function* F = prog_.find(fname);
        TypeP out = F->type_of(F->result);
        if (grad) {
            if (!(out->kind == Type::Tensor && out->elem == Elem::Real && out->axes.empty()))
                throw Error(e.loc, "grad needs a function returning a real scalar [], " + fname + " returns " + to_string(*out));
            ct = lit(sc, "1", e.loc);
        } else if (!same_type(*out, *ct.type)) {
            throw Error(e.loc, "vjp: the cotangent must have the result's type " + to_string(*out) + ", found " + to_string(*ct.type));
        }
        std::string vname;
        try {
            vname = core::vjp(prog_, fname);
        } catch (const Error& err) {
            throw Error(err.loc.line ? err.loc : e.loc, err.what());
        }
        const core::Function* V = prog_.find(vname);
        Let l;
        l.op = Op::Call;
        l.name = vname;
        if (r->self) l.args.push_back(r->self->id);
        for (const Val& a : args) l.args.push_back(a.id);
        l.args.push_back(ct.id);
        l.type = V->type_of(V->result);
        l.loc = e.loc;
        Val all{emit(sc, l), l.type};
        return grad ? get(sc, all, 0, e.loc) : all;
    }

    // ---------- the parameter tree ----------

    core::ScalarP scalar(const Expr& e, const Inst& inst) {
        check_stack(e.loc, "initializer");
        auto s = std::make_shared<core::Scalar>();
        switch (e.kind) {
        case Expr::Num: s->text = e.text; return s;
        case Expr::Var: {
            if (auto v = static_name(e.text, &inst)) { s->text = std::to_string(*v); return s; }
            if (const ast::Const* c = find_const(e.text)) { s->text = f64_text(*c); return s; }
            throw Error(e.loc, "unknown name '" + e.text + "' in an initializer");
        }
        case Expr::Neg: s->kind = core::Scalar::Neg; s->args = {scalar(*e.args[0], inst)}; return s;
        case Expr::Binary:
            s->kind = core::Scalar::Bin;
            s->text = e.text;
            s->args = {scalar(*e.args[0], inst), scalar(*e.args[1], inst)};
            return s;
        case Expr::Call:
            if (e.args[0]->kind == Expr::Var && e.args.size() == 2 &&
                (e.args[0]->text == "sqrt" || e.args[0]->text == "exp" || e.args[0]->text == "log")) {
                s->kind = core::Scalar::Call;
                s->text = e.args[0]->text;
                s->args = {scalar(*e.args[1], inst)};
                return s;
            }
            [[fallthrough]];
        default: throw Error(e.loc, "an initializer's argument is a number expression (+ - * /, sqrt, exp, log)");
        }
    }

    /// An initializer argument's value in f64 (a check only: the reference draws at --bits).
    static double scalar_value(const core::Scalar& s) {
        switch (s.kind) {
        case core::Scalar::Num: return std::strtod(s.text.c_str(), nullptr);
        case core::Scalar::Neg: return -scalar_value(*s.args[0]);
        case core::Scalar::Bin: {
            double a = scalar_value(*s.args[0]), b = scalar_value(*s.args[1]);
            return s.text == "+" ? a + b : s.text == "-" ? a - b : s.text == "*" ? a * b : a / b;
        }
        case core::Scalar::Call: {
            double a = scalar_value(*s.args[0]);
            return s.text == "sqrt" ? std::sqrt(a) : s.text == "exp" ? std::exp(a) : std::log(a);
        }
        }
        return 0;
    }

    /// Refuses an initializer that would draw non-finite numbers or none at all: an argument
    /// that is not finite (`1 / sqrt(0)`), normal's standard deviation below 0, uniform's low
    /// bound above its high bound.
    static void check_init(const ast::ParamDecl& d, const core::ParamSpec& ps) {
        std::vector<double> v;
        for (size_t i = 0; i < ps.args.size(); ++i) {
            v.push_back(scalar_value(*ps.args[i]));
            if (!std::isfinite(v.back()))
                throw Error(d.init_args[i]->loc, d.init + ": argument " + to_string(*ps.args[i]) + " of parameter " +
                                                     d.name + " is not finite (" + std::to_string(v.back()) + ")");
        }
        if (d.init == "normal" && v[1] < 0)
            throw Error(d.init_args[1]->loc, "normal: the standard deviation " + to_string(*ps.args[1]) +
                                                 " of parameter " + d.name + " is negative");
        if (d.init == "uniform" && v[0] > v[1])
            throw Error(d.init_loc, "uniform: the low bound " + to_string(*ps.args[0]) + " of parameter " + d.name +
                                        " is above the high bound " + to_string(*ps.args[1]));
    }

    void param_specs(const Inst& inst, const std::string& prefix, int64_t stack) {
        for (const ast::ParamDecl& d : inst.mod->params) {
            std::string path = prefix.empty() ? d.name : prefix + "." + d.name;
            if (d.type) {
                core::ParamSpec ps;
                ps.path = path;
                ps.type = resolve(*d.type, &inst, nullptr, false);
                if (stack) ps.type = stacked(ps.type, stack);
                ps.init = d.init;
                for (const auto& a : d.init_args) {
                    // The initializer is kept as a tree that every printer and the reference walk.
                    if (a->depth > kMaxInitDepth)
                        throw Error(a->loc, "an initializer's argument nested deeper than " +
                                                std::to_string(kMaxInitDepth) + " levels");
                    ps.args.push_back(scalar(*a, inst));
                }
                check_init(d, ps);
                prog_.params.push_back(std::move(ps));
                continue;
            }
            const Inst* sub = instance(*d.mod, &inst);
            int64_t n = d.stack ? eval_nat(*d.stack, &inst) : 0;
            if (n && stack) throw Error(d.loc, "a stack inside a stack is not supported");
            param_specs(*sub, path, n ? n : stack);
        }
    }
};

} // namespace

core::Program check(const ast::File& file, const std::string& entry, const CheckOptions& opts) {
    Checker c(file, opts);
    return c.run(entry);
}

std::vector<std::string> list_entries(const ast::File& file) {
    std::vector<std::string> out;
    for (const auto& f : file.fns) out.push_back(f.name);
    for (const auto& m : file.modules) {
        std::string key = m.name;
        if (!m.dims.empty()) {
            key += "{";
            for (size_t i = 0; i < m.dims.size(); ++i) key += (i ? ", " : "") + m.dims[i];
            key += "}";
        }
        for (const auto& f : m.fns) out.push_back(key + "." + f.name);
    }
    return out;
}

} // namespace presk
