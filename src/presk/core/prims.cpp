// The type rule of every primitive (kTypeRules, one entry per primitive of core/prims.h) and the
// lookup of a primitive by name.
#include "core/prims.h"

#include <algorithm>
#include <map>
#include <set>

#include "lang/source.h"

namespace presk::core {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error({}, msg); }

std::string show(const std::vector<TypeP>& args) {
    std::string s;
    for (size_t i = 0; i < args.size(); ++i) s += (i ? " and " : "") + to_string(*args[i]);
    return s;
}

void need_args(const std::string& name, const std::vector<TypeP>& args, size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi)
        fail(name + " takes " + std::to_string(lo) + (hi > lo ? " to " + std::to_string(hi) : "") +
             " operand(s), given " + std::to_string(args.size()));
}

const Type& tensor(const std::string& name, const std::vector<TypeP>& args, size_t i, Elem e, size_t min_rank = 0) {
    const Type& t = *args[i];
    const char* want = e == Elem::Real ? "a real tensor" : e == Elem::Int ? "an int tensor" : "a bool tensor";
    if (t.kind != Type::Tensor || t.elem != e)
        fail(name + ": operand " + std::to_string(i + 1) + " must be " + want + ", found " + to_string(t));
    if (t.axes.size() < min_rank)
        fail(name + ": operand " + std::to_string(i + 1) + " needs at least " + std::to_string(min_rank) +
             " axes, found " + to_string(t));
    return t;
}

int64_t axis_attr(const std::string& name, const std::vector<int64_t>& ints, size_t k, const Type& t) {
    if (ints.size() <= k || ints[k] < 0 || ints[k] >= (int64_t)t.axes.size())
        fail(name + ": axis out of range for " + to_string(t));
    return ints[k];
}

std::vector<Axis> drop(std::vector<Axis> a, size_t i) {
    a.erase(a.begin() + (long)i);
    return a;
}

/// One application of a type rule: the primitive, its name for messages, and what prim_type
/// was given (every operand a tensor, the count within the primitive's bounds).
struct Use {
    Prim p;
    const std::string& n;
    const std::vector<TypeP>& args;
    const std::vector<int64_t>& ints;
    const std::string& text;
};

TypeP unary(const Use& u) {
    tensor(u.n, u.args, 0, Elem::Real);
    return u.args[0];
}

TypeP binary(const Use& u) {
    tensor(u.n, u.args, 0, Elem::Real);
    tensor(u.n, u.args, 1, Elem::Real);
    auto r = broadcast_axes(u.args[0]->axes, u.args[1]->axes);
    if (!r) fail(u.n + ": cannot broadcast " + show(u.args));
    return tensor_type(Elem::Real, *r);
}

/// where(c, a, b): three real tensors broadcast together (a and b first, then c).
TypeP where(const Use& u) {
    for (size_t i = 0; i < 3; ++i) tensor(u.n, u.args, i, Elem::Real);
    auto ab = broadcast_axes(u.args[1]->axes, u.args[2]->axes);
    auto r = ab ? broadcast_axes(u.args[0]->axes, *ab) : std::nullopt;
    if (!r) fail(u.n + ": cannot broadcast " + show(u.args));
    for (size_t i = 0; i < 3; ++i)
        if (!align_axes(u.args[i]->axes, *r)) fail(u.n + ": cannot broadcast " + show(u.args));
    return tensor_type(Elem::Real, *r);
}

TypeP dot(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, 1);
    const Type& w = tensor(u.n, u.args, 1, Elem::Real, 1);
    if (x.axes.back().size != w.axes.front().size)
        fail("dot: the last axis of the first operand and the first of the second differ in " + show(u.args));
    std::vector<Axis> r(x.axes.begin(), x.axes.end() - 1);
    r.insert(r.end(), w.axes.begin() + 1, w.axes.end());
    return tensor_type(Elem::Real, r);
}

TypeP matmul(const Use& u) {
    const Type& a = tensor(u.n, u.args, 0, Elem::Real, 2);
    const Type& b = tensor(u.n, u.args, 1, Elem::Real, 2);
    std::vector<Axis> ba(a.axes.begin(), a.axes.end() - 2), bb(b.axes.begin(), b.axes.end() - 2);
    if (ba != bb || a.axes.back().size != b.axes[b.axes.size() - 2].size)
        fail("matmul: operands do not agree: " + show(u.args));
    ba.push_back(a.axes[a.axes.size() - 2]);
    ba.push_back(b.axes.back());
    return tensor_type(Elem::Real, ba);
}

TypeP ein(const Use& u) {
    const std::string& text = u.text;
    EinSpec e = parse_ein(text);
    if (e.inputs.size() != u.args.size())
        fail("ein spec '" + text + "' names " + std::to_string(e.inputs.size()) + " operands, given " +
             std::to_string(u.args.size()));
    std::map<char, Axis> lab;
    for (size_t i = 0; i < u.args.size(); ++i) {
        const Type& t = tensor(u.n, u.args, i, Elem::Real);
        if (e.inputs[i].size() != t.axes.size())
            fail("ein spec '" + text + "': operand " + std::to_string(i + 1) + " is " + to_string(t));
        for (size_t k = 0; k < t.axes.size(); ++k) {
            auto [it, fresh] = lab.emplace(e.inputs[i][k], t.axes[k]);
            if (fresh) continue;
            const Axis& a = it->second;
            const Axis& b = t.axes[k];
            const std::string label(1, e.inputs[i][k]);
            // A label joins axes of one name; a positional (unnamed) axis may meet a named one.
            if (!a.name.empty() && !b.name.empty() && a.name != b.name)
                fail("ein spec '" + text + "': label '" + label + "' binds axis '" + a.name + "' and axis '" + b.name +
                     "' in " + show(u.args));
            if (a.size != b.size)
                fail("ein spec '" + text + "': label '" + label + "' has two sizes in " + show(u.args));
        }
    }
    std::vector<Axis> r;
    for (char c : e.output) {
        auto it = lab.find(c);
        if (it == lab.end()) fail("ein spec '" + text + "': output label '" + std::string(1, c) + "' is in no operand");
        r.push_back(it->second);
    }
    return tensor_type(Elem::Real, r);
}

/// sum, mean (over an axis, or everything to a scalar) and max (over an axis).
TypeP reduce(const Use& u) {
    const bool max = u.p == Prim::Max;
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, max ? 1 : 0);
    if (u.ints.empty()) return max ? (fail("max needs an axis"), nullptr) : scalar_type();
    return tensor_type(Elem::Real, drop(x.axes, (size_t)axis_attr(u.n, u.ints, 0, x)));
}

TypeP softmax(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, 1);
    if (u.args.size() == 2) {
        const Type& m = tensor(u.n, u.args, 1, Elem::Bool);
        if (!align_axes(m.axes, x.axes)) fail("softmax: the mask does not broadcast to the scores: " + show(u.args));
    }
    return u.args[0];
}

TypeP cross_entropy(const Use& u) {
    const Type& l = tensor(u.n, u.args, 0, Elem::Real, 1);
    const Type& t = tensor(u.n, u.args, 1, Elem::Int);
    if (drop(l.axes, l.axes.size() - 1) != t.axes)
        fail("cross_entropy: the targets must have the logits' axes but the last: " + show(u.args));
    return tensor_type(Elem::Real, t.axes);
}

TypeP embed(const Use& u) {
    const Type& tab = tensor(u.n, u.args, 0, Elem::Real, 1);
    const Type& ids = tensor(u.n, u.args, 1, Elem::Int);
    if (ids.bound > tab.axes[0].size)
        fail("embed: indices below " + std::to_string(ids.bound) + " do not fit a table of " +
             std::to_string(tab.axes[0].size) + " rows: " + show(u.args));
    std::vector<Axis> r = ids.axes;
    r.insert(r.end(), tab.axes.begin() + 1, tab.axes.end());
    return tensor_type(Elem::Real, r);
}

TypeP scatter_add(const Use& u) {
    tensor(u.n, u.args, 0, Elem::Real);
    tensor(u.n, u.args, 1, Elem::Int);
    tensor(u.n, u.args, 2, Elem::Real, 1);
    return u.args[2];
}

/// argmax and sample: a class of the last axis per row.
TypeP pick(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, 1);
    return tensor_type(Elem::Int, drop(x.axes, x.axes.size() - 1), x.axes.back().size);
}

TypeP split_heads(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, 2);
    int64_t h = u.ints.empty() ? 0 : u.ints[0];
    int64_t d = x.axes.back().size;
    if (h <= 0 || d % h) fail("split_heads: " + std::to_string(h) + " heads do not divide the last axis of " + to_string(x));
    std::vector<Axis> r(x.axes.begin(), x.axes.end() - 2);
    r.push_back({"", h});
    r.push_back(x.axes[x.axes.size() - 2]);
    r.push_back({"", d / h});
    return tensor_type(Elem::Real, r);
}

TypeP merge_heads(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, 3);
    size_t k = x.axes.size();
    std::vector<Axis> r(x.axes.begin(), x.axes.end() - 3);
    r.push_back(x.axes[k - 2]);
    r.push_back({"", x.axes[k - 3].size * x.axes[k - 1].size});
    return tensor_type(Elem::Real, r);
}

/// The names of split's new axes, its text "head,dh" (an empty name: a positional axis).
std::vector<std::string> split_names(const std::string& text) {
    std::vector<std::string> r(1);
    for (char c : text) {
        if (c == ',') r.emplace_back();
        else r.back() += c;
    }
    return r;
}

/// split[a, s1, ..., sk, "n1,...,nk"](x): axis a replaced by k axes of sizes s1..sk (product
/// the size of a) and names n1..nk, the elements in place (row-major order is unchanged).
TypeP split(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, 1);
    const int64_t a = axis_attr(u.n, u.ints, 0, x);
    const std::vector<std::string> names = split_names(u.text);
    if (u.ints.size() < 2 || names.size() != u.ints.size() - 1)
        fail("split: " + std::to_string(u.ints.size() > 0 ? u.ints.size() - 1 : 0) + " sizes and " +
             std::to_string(names.size()) + " names");
    int64_t n = 1;
    std::vector<Axis> parts;
    for (size_t i = 1; i < u.ints.size() && n <= x.axes[a].size; ++i) {
        if (u.ints[i] < 1) fail("split: a size " + std::to_string(u.ints[i]) + " below 1");
        n = n > x.axes[a].size / u.ints[i] ? x.axes[a].size + 1 : n * u.ints[i];  // past the axis: stop
        parts.push_back({names[i - 1], u.ints[i]});
    }
    if (n != x.axes[a].size || parts.size() != names.size())
        fail("split: the new sizes do not multiply to the size " + std::to_string(x.axes[a].size) + " of axis " +
             std::to_string(a) + " of " + to_string(x));
    std::vector<Axis> r(x.axes.begin(), x.axes.begin() + a);
    r.insert(r.end(), parts.begin(), parts.end());
    r.insert(r.end(), x.axes.begin() + a + 1, x.axes.end());
    return tensor_type(Elem::Real, r);
}

/// merge[a, k, "name"](x): the k adjacent axes from a replaced by one of their sizes' product.
TypeP merge(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real, 1);
    const int64_t a = axis_attr(u.n, u.ints, 0, x);
    if (u.ints.size() != 2 || u.ints[1] < 1 || a + u.ints[1] > (int64_t)x.axes.size())
        fail("merge: the axes from " + std::to_string(a) + " are not in " + to_string(x));
    int64_t n = 1;
    for (int64_t i = a; i < a + u.ints[1]; ++i) {
        if (x.axes[i].size && n > (int64_t(1) << 62) / x.axes[i].size) fail("merge: the size of " + to_string(x) + " overflows");
        n *= x.axes[i].size;
    }
    std::vector<Axis> r(x.axes.begin(), x.axes.begin() + a);
    r.push_back({u.text, n});
    r.insert(r.end(), x.axes.begin() + a + u.ints[1], x.axes.end());
    return tensor_type(Elem::Real, r);
}

/// sum_to (x's broadcast axes summed away to like's) and broadcast_like (x broadcast to like's).
TypeP to_like(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real);
    const Type& like = *u.args[1];
    bool ok = u.p == Prim::SumTo ? (bool)align_axes(like.axes, x.axes) : (bool)align_axes(x.axes, like.axes);
    if (!ok) fail(u.n + ": " + show(u.args) + " do not broadcast");
    return tensor_type(Elem::Real, like.axes);
}

TypeP expand(const Use& u) {
    const Type& x = tensor(u.n, u.args, 0, Elem::Real);
    const Type& like = *u.args[1];
    if (drop(like.axes, (size_t)axis_attr(u.n, u.ints, 0, like)) != x.axes) fail("expand: " + show(u.args));
    return tensor_type(Elem::Real, like.axes);
}

TypeP causal_mask(const Use& u) {
    const Type& x = *u.args[0];
    if (x.axes.size() < 2) fail("causal_mask needs at least 2 axes, found " + to_string(x));
    return tensor_type(Elem::Bool, {x.axes[x.axes.size() - 2], x.axes.back()});
}

TypeP positions(const Use& u) {
    const Type& x = *u.args[0];
    int64_t a = axis_attr(u.n, u.ints, 0, x);
    return tensor_type(Elem::Int, {x.axes[a]}, x.axes[a].size);
}

TypeP slice(const Use& u) {
    const Type& x = *u.args[0];
    const std::vector<int64_t>& ints = u.ints;
    int64_t a = axis_attr(u.n, ints, 0, x);
    if (ints.size() != 3 || ints[1] < 0 || ints[2] < 0 || ints[1] + ints[2] > x.axes[a].size)
        fail("slice: range out of bounds for " + to_string(x));
    auto r = x.axes;
    r[a].size = ints[2];
    return tensor_type(x.elem, r, x.bound);
}

TypeP index(const Use& u) {
    const Type& x = *u.args[0];
    const std::vector<int64_t>& ints = u.ints;
    int64_t a = axis_attr(u.n, ints, 0, x);
    if (ints.size() != 2 || ints[1] < 0 || ints[1] >= x.axes[a].size) fail("index: out of bounds for " + to_string(x));
    return tensor_type(x.elem, drop(x.axes, a), x.bound);
}

/// unslice and unindex: the operand placed in zeros of the second operand's axes.
TypeP place(const Use& u) {
    tensor(u.n, u.args, 0, Elem::Real);
    return tensor_type(Elem::Real, u.args[1]->axes);
}

TypeP stack(const Use& u) {
    const std::vector<TypeP>& args = u.args;
    if (args.empty()) fail("stack needs at least one operand");
    for (const TypeP& a : args)
        if (!same_type(*a, *args[0])) fail("stack: operands differ: " + show(args));
    std::vector<Axis> r = args[0]->axes;
    r.insert(r.begin(), Axis{"", (int64_t)args.size()});
    return tensor_type(args[0]->elem, r, args[0]->bound);
}

TypeP dropout(const Use& u) {
    tensor(u.n, u.args, 0, Elem::Real);
    if (!tensor(u.n, u.args, 1, Elem::Real).axes.empty())
        fail("dropout: the rate must be a scalar, found " + to_string(*u.args[1]));
    return u.args[0];
}

TypeP zeros_like(const Use& u) { return tensor_type(Elem::Real, u.args[0]->axes); }

TypeP onehot(const Use& u) { return tensor_type(Elem::Real, u.args[1]->axes); }

TypeP retype(const Use& u) {
    if (u.args[0]->numel() != u.args[1]->numel()) fail("retype: " + show(u.args) + " differ in size");
    return tensor_type(u.args[0]->elem, u.args[1]->axes, u.args[0]->bound);
}

TypeP max_grad(const Use& u) { return u.args[0]; }

/// The type rule of each primitive, in the order of PRESK_PRIMS.
struct TypeRule {
    Prim prim;
    TypeP (*rule)(const Use&);
};

constexpr TypeRule kTypeRules[] = {
    {Prim::Add, binary}, {Prim::Sub, binary}, {Prim::Mul, binary}, {Prim::Div, binary}, {Prim::Pow, binary},
    {Prim::Neg, unary}, {Prim::Exp, unary}, {Prim::Log, unary}, {Prim::Tanh, unary}, {Prim::Sin, unary},
    {Prim::Cos, unary}, {Prim::Sqrt, unary}, {Prim::Erf, unary}, {Prim::Erfc, unary}, {Prim::Gelu, unary},
    {Prim::Abs, unary}, {Prim::Sign, unary}, {Prim::Maximum, binary}, {Prim::Minimum, binary},
    {Prim::Where, where},
    {Prim::Dot, dot}, {Prim::Matmul, matmul}, {Prim::Ein, ein},
    {Prim::Sum, reduce}, {Prim::Mean, reduce}, {Prim::Max, reduce},
    {Prim::Softmax, softmax}, {Prim::CrossEntropy, cross_entropy}, {Prim::Embed, embed},
    {Prim::Argmax, pick}, {Prim::Sample, pick},
    {Prim::SplitHeads, split_heads}, {Prim::MergeHeads, merge_heads},
    {Prim::Split, split}, {Prim::Merge, merge},
    {Prim::SumTo, to_like}, {Prim::BroadcastLike, to_like},
    {Prim::CausalMask, causal_mask}, {Prim::Positions, positions},
    {Prim::Slice, slice}, {Prim::Index, index}, {Prim::Stack, stack}, {Prim::Dropout, dropout},
    {Prim::ScatterAdd, scatter_add}, {Prim::Expand, expand}, {Prim::Unslice, place}, {Prim::Unindex, place},
    {Prim::ZerosLike, zeros_like}, {Prim::Onehot, onehot}, {Prim::MaxGrad, max_grad}, {Prim::Retype, retype},
};
static_assert(complete(kTypeRules), "kTypeRules: one type rule per primitive, in the order of PRESK_PRIMS");

/// Every operand of a primitive is a tensor.
void tensors_only(const std::string& n, const std::vector<TypeP>& args) {
    for (const TypeP& a : args)
        if (!a || a->kind != Type::Tensor) fail(n + " takes tensors, given " + (a ? to_string(*a) : "?"));
}

} // namespace

std::optional<Prim> find_prim(std::string_view name) {
    for (const PrimInfo& i : kPrims)
        if (name == i.name) return i.prim;
    return std::nullopt;
}

bool is_prim(const std::string& n) { return find_prim(n).has_value(); }

EinSpec parse_ein(const std::string& spec) {
    EinSpec e;
    size_t arrow = spec.find("->");
    if (arrow == std::string::npos) fail("ein spec '" + spec + "' has no '->'");
    std::string lhs = spec.substr(0, arrow);
    e.output = spec.substr(arrow + 2);
    size_t start = 0;
    for (;;) {
        size_t c = lhs.find(',', start);
        e.inputs.push_back(lhs.substr(start, c == std::string::npos ? std::string::npos : c - start));
        if (c == std::string::npos) break;
        start = c + 1;
    }
    auto strip = [](std::string& s) { s.erase(std::remove(s.begin(), s.end(), ' '), s.end()); };
    for (auto& s : e.inputs) strip(s);
    strip(e.output);
    for (auto* s : {&e.output}) {
        std::set<char> seen;
        for (char c : *s)
            if (!seen.insert(c).second) fail("ein spec '" + spec + "' repeats '" + std::string(1, c) + "' in its output");
    }
    for (auto& s : e.inputs)
        for (char c : s)
            if (!std::isalpha((unsigned char)c)) fail("ein spec '" + spec + "': labels are letters");
    return e;
}

TypeP prim_type(Prim p, const std::vector<TypeP>& args, const std::vector<int64_t>& ints, const std::string& text) {
    const PrimInfo& pi = info(p);
    const std::string n = pi.name;
    tensors_only(n, args);
    if (pi.max_args != kAnyCount) need_args(n, args, (size_t)pi.min_args, (size_t)pi.max_args);
    return kTypeRules[(size_t)p].rule(Use{p, n, args, ints, text});
}

TypeP prim_type(const std::string& n, const std::vector<TypeP>& args, const std::vector<int64_t>& ints,
                const std::string& text) {
    if (std::optional<Prim> p = find_prim(n)) return prim_type(*p, args, ints, text);
    tensors_only(n, args);
    fail("unknown primitive '" + n + "'");
}

} // namespace presk::core
