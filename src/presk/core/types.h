// PSK types at bound dims: named-axis tensors, tuples and records; the broadcasting rule.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace presk {

enum class Elem { Real, Int, Bool };

/// One axis: `name` empty for a positional axis (a module dim or a number), else a named axis.
struct Axis {
    std::string name;
    int64_t size = 0;
    bool operator==(const Axis&) const = default;
};

struct Type;
using TypeP = std::shared_ptr<const Type>;

/// A value's type. Tensors list axes outermost first; `bound` (ints only, 0 = unknown) says
/// every element is below it, which is what input synthesis draws from. f64 is Real[], nat Int[].
struct Type {
    enum Kind { Tensor, Tuple, Record } kind = Tensor;
    Elem elem = Elem::Real;
    std::vector<Axis> axes;
    int64_t bound = 0;
    std::vector<TypeP> items;
    std::vector<std::string> names;

    int64_t numel() const;  // saturates at INT64_MAX
    bool is_real_tensor() const { return kind == Tensor && elem == Elem::Real; }
};

TypeP tensor_type(Elem e, std::vector<Axis> axes, int64_t bound = 0);
TypeP scalar_type();  // Real[]
TypeP tuple_type(std::vector<TypeP> items);
TypeP record_type(std::vector<std::string> names, std::vector<TypeP> items);

/// The type of `n` stacked copies of `t`: a leading positional axis of size n on every tensor leaf.
TypeP stacked(const TypeP& t, int64_t n);
/// The inverse: `t` without the leading axis of every tensor leaf (one layer of a stack).
TypeP unstacked(const Type& t);

/// Element counts of `axes` around position `axis`: the product of the sizes before it
/// (`outer`), its size (`n`) and the product of those after it (`inner`).
struct AxisSplit {
    int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const std::vector<Axis>& axes, size_t axis);

/// Structural equality (bounds ignored).
bool same_type(const Type& a, const Type& b);

/// `[batch: 4, 3]`, `int[T: 4]`, `(A, B)`, `{w: [3, 2], b: [2]}`.
std::string to_string(const Type& t);
std::string axes_string(const std::vector<Axis>& axes);

/// The broadcasting rule: trailing positions aligned when they agree (same name, or both
/// positional, and the same size); otherwise, when every axis of one side is named and found
/// once by name in the other with the same size, the other's axes. nullopt: a type error.
std::optional<std::vector<Axis>> broadcast_axes(const std::vector<Axis>& a, const std::vector<Axis>& b);

/// Where each axis of `x` sits in `r` when `x` broadcasts to `r` (by the rule above); empty
/// optional when it does not.
std::optional<std::vector<int>> align_axes(const std::vector<Axis>& x, const std::vector<Axis>& r);

/// Calls `f(leaf_type, path)` for every tensor of a tree type, in order; path joins fields with '.'
/// and tuple components as numbers.
template <class F>
void for_each_leaf(const Type& t, const std::string& path, F&& f) {
    if (t.kind == Type::Tensor) { f(t, path); return; }
    for (size_t i = 0; i < t.items.size(); ++i) {
        std::string p = t.kind == Type::Record ? t.names[i] : std::to_string(i);
        for_each_leaf(*t.items[i], path.empty() ? p : path + "." + p, f);
    }
}

} // namespace presk
