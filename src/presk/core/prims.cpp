#include "core/prims.h"

#include <algorithm>
#include <map>
#include <set>

#include "lang/source.h"

namespace presk::core {
namespace {

const std::set<std::string> kUnary = {"neg", "exp", "log", "tanh", "sin", "cos", "sqrt", "erf", "erfc", "gelu"};
const std::set<std::string> kBinary = {"add", "sub", "mul", "div", "pow"};
const std::set<std::string> kOther = {
    "dot", "matmul", "ein", "sum", "mean", "max", "softmax", "cross_entropy", "embed", "argmax",
    "split_heads", "merge_heads", "sum_to", "broadcast_like", "causal_mask", "positions", "slice",
    "index", "stack", "dropout", "sample",
    // internal to the transforms
    "scatter_add", "expand", "unslice", "unindex", "zeros_like", "onehot", "max_grad", "retype"};

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

} // namespace

bool is_prim(const std::string& n) { return kUnary.count(n) || kBinary.count(n) || kOther.count(n); }

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

TypeP prim_type(const std::string& n, const std::vector<TypeP>& args, const std::vector<int64_t>& ints,
                const std::string& text) {
    for (const TypeP& a : args)
        if (!a || a->kind != Type::Tensor) fail(n + " takes tensors, given " + (a ? to_string(*a) : "?"));
    if (kUnary.count(n)) {
        need_args(n, args, 1, 1);
        tensor(n, args, 0, Elem::Real);
        return args[0];
    }
    if (kBinary.count(n)) {
        need_args(n, args, 2, 2);
        tensor(n, args, 0, Elem::Real);
        tensor(n, args, 1, Elem::Real);
        auto r = broadcast_axes(args[0]->axes, args[1]->axes);
        if (!r) fail(n + ": cannot broadcast " + show(args));
        return tensor_type(Elem::Real, *r);
    }
    if (n == "dot") {
        need_args(n, args, 2, 2);
        const Type& x = tensor(n, args, 0, Elem::Real, 1);
        const Type& w = tensor(n, args, 1, Elem::Real, 1);
        if (x.axes.back().size != w.axes.front().size)
            fail("dot: the last axis of the first operand and the first of the second differ in " + show(args));
        std::vector<Axis> r(x.axes.begin(), x.axes.end() - 1);
        r.insert(r.end(), w.axes.begin() + 1, w.axes.end());
        return tensor_type(Elem::Real, r);
    }
    if (n == "matmul") {
        need_args(n, args, 2, 2);
        const Type& a = tensor(n, args, 0, Elem::Real, 2);
        const Type& b = tensor(n, args, 1, Elem::Real, 2);
        std::vector<Axis> ba(a.axes.begin(), a.axes.end() - 2), bb(b.axes.begin(), b.axes.end() - 2);
        if (ba != bb || a.axes.back().size != b.axes[b.axes.size() - 2].size)
            fail("matmul: operands do not agree: " + show(args));
        ba.push_back(a.axes[a.axes.size() - 2]);
        ba.push_back(b.axes.back());
        return tensor_type(Elem::Real, ba);
    }
    if (n == "ein") {
        EinSpec e = parse_ein(text);
        if (e.inputs.size() != args.size())
            fail("ein spec '" + text + "' names " + std::to_string(e.inputs.size()) + " operands, given " +
                 std::to_string(args.size()));
        std::map<char, Axis> lab;
        for (size_t i = 0; i < args.size(); ++i) {
            const Type& t = tensor(n, args, i, Elem::Real);
            if (e.inputs[i].size() != t.axes.size())
                fail("ein spec '" + text + "': operand " + std::to_string(i + 1) + " is " + to_string(t));
            for (size_t k = 0; k < t.axes.size(); ++k) {
                auto [it, fresh] = lab.emplace(e.inputs[i][k], t.axes[k]);
                if (!fresh && it->second.size != t.axes[k].size)
                    fail("ein spec '" + text + "': label '" + std::string(1, e.inputs[i][k]) + "' has two sizes in " + show(args));
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
    if (n == "sum" || n == "mean" || n == "max") {
        need_args(n, args, 1, 1);
        const Type& x = tensor(n, args, 0, Elem::Real, n == "max" ? 1 : 0);
        if (ints.empty()) return n == "max" ? (fail("max needs an axis"), nullptr) : scalar_type();
        return tensor_type(Elem::Real, drop(x.axes, (size_t)axis_attr(n, ints, 0, x)));
    }
    if (n == "softmax") {
        need_args(n, args, 1, 2);
        const Type& x = tensor(n, args, 0, Elem::Real, 1);
        if (args.size() == 2) {
            const Type& m = tensor(n, args, 1, Elem::Bool);
            if (!align_axes(m.axes, x.axes)) fail("softmax: the mask does not broadcast to the scores: " + show(args));
        }
        return args[0];
    }
    if (n == "cross_entropy") {
        need_args(n, args, 2, 2);
        const Type& l = tensor(n, args, 0, Elem::Real, 1);
        const Type& t = tensor(n, args, 1, Elem::Int);
        if (drop(l.axes, l.axes.size() - 1) != t.axes)
            fail("cross_entropy: the targets must have the logits' axes but the last: " + show(args));
        return tensor_type(Elem::Real, t.axes);
    }
    if (n == "embed") {
        need_args(n, args, 2, 2);
        const Type& tab = tensor(n, args, 0, Elem::Real, 1);
        const Type& ids = tensor(n, args, 1, Elem::Int);
        if (ids.bound > tab.axes[0].size)
            fail("embed: indices below " + std::to_string(ids.bound) + " do not fit a table of " +
                 std::to_string(tab.axes[0].size) + " rows: " + show(args));
        std::vector<Axis> r = ids.axes;
        r.insert(r.end(), tab.axes.begin() + 1, tab.axes.end());
        return tensor_type(Elem::Real, r);
    }
    if (n == "scatter_add") {
        need_args(n, args, 3, 3);
        tensor(n, args, 0, Elem::Real);
        tensor(n, args, 1, Elem::Int);
        tensor(n, args, 2, Elem::Real, 1);
        return args[2];
    }
    if (n == "argmax" || n == "sample") {
        need_args(n, args, 1, 1);
        const Type& x = tensor(n, args, 0, Elem::Real, 1);
        return tensor_type(Elem::Int, drop(x.axes, x.axes.size() - 1), x.axes.back().size);
    }
    if (n == "split_heads") {
        need_args(n, args, 1, 1);
        const Type& x = tensor(n, args, 0, Elem::Real, 2);
        int64_t h = ints.empty() ? 0 : ints[0];
        int64_t d = x.axes.back().size;
        if (h <= 0 || d % h) fail("split_heads: " + std::to_string(h) + " heads do not divide the last axis of " + to_string(x));
        std::vector<Axis> r(x.axes.begin(), x.axes.end() - 2);
        r.push_back({"", h});
        r.push_back(x.axes[x.axes.size() - 2]);
        r.push_back({"", d / h});
        return tensor_type(Elem::Real, r);
    }
    if (n == "merge_heads") {
        need_args(n, args, 1, 1);
        const Type& x = tensor(n, args, 0, Elem::Real, 3);
        size_t k = x.axes.size();
        std::vector<Axis> r(x.axes.begin(), x.axes.end() - 3);
        r.push_back(x.axes[k - 2]);
        r.push_back({"", x.axes[k - 3].size * x.axes[k - 1].size});
        return tensor_type(Elem::Real, r);
    }
    if (n == "sum_to" || n == "broadcast_like") {
        need_args(n, args, 2, 2);
        const Type& x = tensor(n, args, 0, Elem::Real);
        const Type& like = *args[1];
        bool ok = n == "sum_to" ? (bool)align_axes(like.axes, x.axes) : (bool)align_axes(x.axes, like.axes);
        if (!ok) fail(n + ": " + show(args) + " do not broadcast");
        return tensor_type(Elem::Real, like.axes);
    }
    if (n == "expand") {
        need_args(n, args, 2, 2);
        const Type& x = tensor(n, args, 0, Elem::Real);
        const Type& like = *args[1];
        if (drop(like.axes, (size_t)axis_attr(n, ints, 0, like)) != x.axes) fail("expand: " + show(args));
        return tensor_type(Elem::Real, like.axes);
    }
    if (n == "causal_mask") {
        need_args(n, args, 1, 1);
        const Type& x = *args[0];
        if (x.axes.size() < 2) fail("causal_mask needs at least 2 axes, found " + to_string(x));
        return tensor_type(Elem::Bool, {x.axes[x.axes.size() - 2], x.axes.back()});
    }
    if (n == "positions") {
        need_args(n, args, 1, 1);
        const Type& x = *args[0];
        int64_t a = axis_attr(n, ints, 0, x);
        return tensor_type(Elem::Int, {x.axes[a]}, x.axes[a].size);
    }
    if (n == "slice") {
        need_args(n, args, 1, 1);
        const Type& x = *args[0];
        int64_t a = axis_attr(n, ints, 0, x);
        if (ints.size() != 3 || ints[1] < 0 || ints[2] < 0 || ints[1] + ints[2] > x.axes[a].size)
            fail("slice: range out of bounds for " + to_string(x));
        auto r = x.axes;
        r[a].size = ints[2];
        return tensor_type(x.elem, r, x.bound);
    }
    if (n == "index") {
        need_args(n, args, 1, 1);
        const Type& x = *args[0];
        int64_t a = axis_attr(n, ints, 0, x);
        if (ints.size() != 2 || ints[1] < 0 || ints[1] >= x.axes[a].size) fail("index: out of bounds for " + to_string(x));
        return tensor_type(x.elem, drop(x.axes, a), x.bound);
    }
    if (n == "unslice" || n == "unindex") {
        need_args(n, args, 2, 2);
        tensor(n, args, 0, Elem::Real);
        return tensor_type(Elem::Real, args[1]->axes);
    }
    if (n == "stack") {
        if (args.empty()) fail("stack needs at least one operand");
        for (const TypeP& a : args)
            if (!same_type(*a, *args[0])) fail("stack: operands differ: " + show(args));
        std::vector<Axis> r = args[0]->axes;
        r.insert(r.begin(), Axis{"", (int64_t)args.size()});
        return tensor_type(args[0]->elem, r, args[0]->bound);
    }
    if (n == "dropout") {
        need_args(n, args, 2, 2);
        tensor(n, args, 0, Elem::Real);
        if (!tensor(n, args, 1, Elem::Real).axes.empty()) fail("dropout: the rate must be a scalar, found " + to_string(*args[1]));
        return args[0];
    }
    if (n == "zeros_like") {
        need_args(n, args, 1, 1);
        return tensor_type(Elem::Real, args[0]->axes);
    }
    if (n == "onehot") {
        need_args(n, args, 2, 2);
        return tensor_type(Elem::Real, args[1]->axes);
    }
    if (n == "retype") {
        need_args(n, args, 2, 2);
        if (args[0]->numel() != args[1]->numel()) fail("retype: " + show(args) + " differ in size");
        return tensor_type(args[0]->elem, args[1]->axes, args[0]->bound);
    }
    if (n == "max_grad") {
        need_args(n, args, 2, 2);
        return args[0];
    }
    fail("unknown primitive '" + n + "'");
}

} // namespace presk::core
