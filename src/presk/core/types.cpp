#include "core/types.h"

#include <cstdint>

namespace presk {

int64_t Type::numel() const {
    int64_t n = 1;
    for (const Axis& a : axes) {
        if (a.size != 0 && n > INT64_MAX / a.size) return INT64_MAX;  // saturates: too large anyway
        n *= a.size;
    }
    return n;
}

TypeP tensor_type(Elem e, std::vector<Axis> axes, int64_t bound) {
    auto t = std::make_shared<Type>();
    t->elem = e;
    t->axes = std::move(axes);
    t->bound = bound;
    return t;
}

TypeP scalar_type() { return tensor_type(Elem::Real, {}); }

TypeP tuple_type(std::vector<TypeP> items) {
    auto t = std::make_shared<Type>();
    t->kind = Type::Tuple;
    t->items = std::move(items);
    return t;
}

TypeP record_type(std::vector<std::string> names, std::vector<TypeP> items) {
    auto t = std::make_shared<Type>();
    t->kind = Type::Record;
    t->names = std::move(names);
    t->items = std::move(items);
    return t;
}

TypeP stacked(const TypeP& t, int64_t n) {
    if (t->kind == Type::Tensor) {
        auto axes = t->axes;
        axes.insert(axes.begin(), Axis{"", n});
        return tensor_type(t->elem, axes, t->bound);
    }
    std::vector<TypeP> items;
    for (const TypeP& i : t->items) items.push_back(stacked(i, n));
    return t->kind == Type::Tuple ? tuple_type(items) : record_type(t->names, items);
}

TypeP unstacked(const Type& t) {
    if (t.kind == Type::Tensor) return tensor_type(t.elem, std::vector<Axis>(t.axes.begin() + 1, t.axes.end()), t.bound);
    std::vector<TypeP> items;
    for (const TypeP& i : t.items) items.push_back(unstacked(*i));
    return t.kind == Type::Tuple ? tuple_type(items) : record_type(t.names, items);
}

AxisSplit split_at(const std::vector<Axis>& axes, size_t axis) {
    AxisSplit s;
    for (size_t i = 0; i < axes.size(); ++i) {
        if (i < axis) s.outer *= axes[i].size;
        else if (i == axis) s.n = axes[i].size;
        else s.inner *= axes[i].size;
    }
    return s;
}

bool same_type(const Type& a, const Type& b) {
    if (&a == &b) return true;  // one shared type
    if (a.kind != b.kind) return false;
    if (a.kind == Type::Tensor) return a.elem == b.elem && a.axes == b.axes;
    if (a.items.size() != b.items.size() || a.names != b.names) return false;
    for (size_t i = 0; i < a.items.size(); ++i)
        if (!same_type(*a.items[i], *b.items[i])) return false;
    return true;
}

std::string axes_string(const std::vector<Axis>& axes) {
    std::string s = "[";
    for (size_t i = 0; i < axes.size(); ++i) {
        if (i) s += ", ";
        if (!axes[i].name.empty()) s += axes[i].name + ": ";
        s += std::to_string(axes[i].size);
    }
    return s + "]";
}

std::string to_string(const Type& t) {
    switch (t.kind) {
    case Type::Tensor: {
        std::string p = t.elem == Elem::Int ? "int" : t.elem == Elem::Bool ? "bool" : "";
        if (t.elem == Elem::Int && t.bound > 0) p += "<" + std::to_string(t.bound) + ">";
        return p + axes_string(t.axes);
    }
    case Type::Tuple: {
        std::string s = "(";
        for (size_t i = 0; i < t.items.size(); ++i) s += (i ? ", " : "") + to_string(*t.items[i]);
        return s + ")";
    }
    case Type::Record: {
        std::string s = "{";
        for (size_t i = 0; i < t.items.size(); ++i)
            s += (i ? ", " : "") + t.names[i] + ": " + to_string(*t.items[i]);
        return s + "}";
    }
    }
    return "?";
}

namespace {

std::optional<std::vector<int>> align_trailing(const std::vector<Axis>& x, const std::vector<Axis>& r) {
    if (x.size() > r.size()) return std::nullopt;
    std::vector<int> pos(x.size());
    size_t off = r.size() - x.size();
    for (size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] == r[off + i])) return std::nullopt;
        pos[i] = (int)(off + i);
    }
    return pos;
}

std::optional<std::vector<int>> align_by_name(const std::vector<Axis>& x, const std::vector<Axis>& r) {
    std::vector<int> pos(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        if (x[i].name.empty()) return std::nullopt;
        int found = -1;
        for (size_t j = 0; j < r.size(); ++j) {
            if (r[j].name != x[i].name) continue;
            if (found >= 0 || r[j].size != x[i].size) return std::nullopt;
            found = (int)j;
        }
        if (found < 0) return std::nullopt;
        for (size_t k = 0; k < i; ++k)
            if (pos[k] == found) return std::nullopt;
        pos[i] = found;
    }
    return pos;
}

} // namespace

std::optional<std::vector<int>> align_axes(const std::vector<Axis>& x, const std::vector<Axis>& r) {
    if (auto p = align_trailing(x, r)) return p;
    return align_by_name(x, r);
}

std::optional<std::vector<Axis>> broadcast_axes(const std::vector<Axis>& a, const std::vector<Axis>& b) {
    const auto& lo = a.size() >= b.size() ? a : b;
    const auto& sh = a.size() >= b.size() ? b : a;
    if (align_axes(sh, lo)) return lo;
    return std::nullopt;
}

} // namespace presk
