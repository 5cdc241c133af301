// The lowering's entry point: which primitives have kernels, their cache keys, the dispatch
// to the families (lower_contract.cpp, lower_rows.cpp, lower_index.cpp; the elementwise ones
// through lower_group in lower_elementwise.cpp) and the pieces of a nest they share.
#include "kernel/lower.h"

#include "kernel/layout.h"

#include <algorithm>
#include <optional>

#include "core/prims.h"
#include "kernel/lower_util.h"
#include "lang/source.h"

namespace presk::kernel {
namespace {

using core::Prim;

/// A type as the key needs it: element kind and axes (an int's bound does not change a kernel).
std::string type_key(const TypeP& t) {
    if (!t) return "?";
    if (t->kind != Type::Tensor) return to_string(*t);
    const char* e = t->elem == Elem::Int ? "int" : t->elem == Elem::Bool ? "bool" : "";
    return e + axes_string(t->axes);
}

/// An elementwise primitive alone: the group of its one member.
Kernel elementwise(const Node& n, DType t, int) {
    Group g;
    g.members = {n};
    g.from.emplace_back();
    for (size_t k = 0; k < n.operands.size(); ++k) g.from[0].push_back(-1 - (int)k);
    g.inputs = n.operands;
    return lower_group(g, t);
}

Kernel contraction(const Node& n, DType t, int lanes) {
    Layout l;
    l.lanes = lanes;
    Kernel k = std::move(detail::lower_contract(n, t, l).back());
    detail::count_vars(k);
    return k;
}

Kernel row_wise(const Node& n, DType t, int) {
    Kernel k = detail::lower_rows(n, t);
    detail::count_vars(k);
    return k;
}

Kernel indexing(const Node& n, DType t, int) {
    Kernel k = detail::lower_index(n, t);
    detail::count_vars(k);
    return k;
}

/// The lowering of each primitive, in the order of PRESK_PRIMS: its family (lower_group for
/// the elementwise ones, lower_contract.cpp, lower_rows.cpp, lower_index.cpp), or on_host (null)
/// for a host primitive, which realize/host.cpp evaluates.
struct Lowering {
    Prim prim;
    Kernel (*lower)(const Node&, DType, int lanes);
};

constexpr Kernel (*on_host)(const Node&, DType, int) = nullptr;

constexpr Lowering kLowerings[] = {
    {Prim::Add, elementwise}, {Prim::Sub, elementwise}, {Prim::Mul, elementwise}, {Prim::Div, elementwise},
    {Prim::Pow, elementwise}, {Prim::Neg, elementwise}, {Prim::Exp, elementwise}, {Prim::Log, elementwise},
    {Prim::Tanh, elementwise}, {Prim::Sin, elementwise}, {Prim::Cos, elementwise}, {Prim::Sqrt, elementwise},
    {Prim::Erf, elementwise}, {Prim::Erfc, elementwise}, {Prim::Gelu, elementwise},
    {Prim::Abs, elementwise}, {Prim::Sign, elementwise}, {Prim::Maximum, elementwise}, {Prim::Minimum, elementwise},
    {Prim::Where, elementwise},
    {Prim::Dot, contraction}, {Prim::Matmul, contraction}, {Prim::Ein, contraction},
    {Prim::Sum, row_wise}, {Prim::Mean, row_wise}, {Prim::Max, row_wise},
    {Prim::Softmax, row_wise}, {Prim::CrossEntropy, row_wise}, {Prim::Embed, indexing},
    {Prim::Argmax, row_wise}, {Prim::Sample, on_host},
    {Prim::SplitHeads, indexing}, {Prim::MergeHeads, indexing},
    {Prim::Split, on_host}, {Prim::Merge, on_host},
    {Prim::SumTo, indexing}, {Prim::BroadcastLike, indexing},
    {Prim::CausalMask, indexing}, {Prim::Positions, indexing},
    {Prim::Slice, on_host}, {Prim::Index, on_host}, {Prim::Stack, on_host}, {Prim::Dropout, on_host},
    {Prim::ScatterAdd, indexing}, {Prim::Expand, row_wise}, {Prim::Unslice, on_host}, {Prim::Unindex, on_host},
    {Prim::ZerosLike, indexing}, {Prim::Onehot, indexing}, {Prim::MaxGrad, row_wise}, {Prim::Retype, on_host},
};
static_assert(core::complete(kLowerings), "kLowerings: one lowering (or on_host) per primitive, in PRESK_PRIMS' order");

/// The elementwise primitives are exactly the ones lowered as groups, and the random ones are
/// evaluated on the host (they draw from the reference's streams).
constexpr bool lowerings_agree() {
    for (const Lowering& l : kLowerings) {
        if ((l.lower == elementwise) != core::has(l.prim, core::kElementwise)) return false;
        if (core::has(l.prim, core::kRandom) && l.lower) return false;
    }
    return true;
}
static_assert(lowerings_agree(), "kLowerings disagrees with the properties of core/prims.h");

} // namespace

bool is_host_prim(Prim p) { return kLowerings[(size_t)p].lower == nullptr; }

bool is_host_prim(const std::string& prim) {
    const std::optional<Prim> p = core::find_prim(prim);
    return p && is_host_prim(*p);
}

bool is_elementwise(const std::string& prim) {
    const std::optional<Prim> p = core::find_prim(prim);
    return p && core::has(*p, core::kElementwise);
}

std::string signature(const Node& n, DType t) {
    std::string s = n.prim + "{";
    for (size_t i = 0; i < n.ints.size(); ++i) s += (i ? "," : "") + std::to_string(n.ints[i]);
    s += "}\"" + n.text + "\"(";
    for (size_t i = 0; i < n.operands.size(); ++i) s += (i ? ", " : "") + type_key(n.operands[i]);
    return s + ") -> " + type_key(n.result) + " " + dtype_name(t);
}

std::string signature(const Group& g, DType t) {
    std::string s = "group(";
    for (size_t i = 0; i < g.inputs.size(); ++i) s += (i ? ", " : "") + type_key(g.inputs[i]);
    s += ")";
    for (size_t m = 0; m < g.members.size(); ++m) {
        s += " ; " + signature(g.members[m], t) + " <-";
        if (m < g.from.size())
            for (int f : g.from[m]) s += " " + std::to_string(f);
    }
    return s;
}

Kernel lower(const Node& n, DType t, int lanes) {
    if (lanes != 1 && lanes != 2 && lanes != 4)
        detail::fail(n.prim, "lanes must be 1, 2 or 4, not " + std::to_string(lanes));
    if (t == DType::I64) detail::fail(n.prim, "a kernel's storage type is f64, f32 or bf16, not i64");
    const std::optional<Prim> p = core::find_prim(n.prim);
    if (p && is_host_prim(*p)) detail::fail(n.prim, "a host primitive, evaluated on the host and not as a kernel");
    if (!p) detail::fail(n.prim, "not a primitive");
    if (!n.result) detail::fail(n.prim, "the node has no result type");
    TypeP rule;
    try {
        rule = core::prim_type(*p, n.operands, n.ints, n.text);
    } catch (const Error& e) {
        detail::fail(n.prim, e.what());
    }
    if (!same_type(*rule, *n.result))
        detail::fail(n.prim, "the result type " + to_string(*n.result) + " is not the rule's " + to_string(*rule));
    return kLowerings[(size_t)*p].lower(n, t, lanes);
}

namespace detail {

void fail(const std::string& prim, const std::string& msg) { throw Error({}, "lower " + prim + ": " + msg); }

BufferType buffer_of(const Type& ty, DType t) {
    return BufferType{ty.elem == Elem::Real ? t : DType::I64, ty.axes};
}

Kernel header(const std::string& name, const Node& n, DType t) {
    Kernel k;
    k.name = name;
    k.dtype = t;
    for (const TypeP& o : n.operands) k.inputs.push_back(buffer_of(*o, t));
    k.output = buffer_of(*n.result, t);
    return k;
}

namespace {

void count(const std::vector<Stmt>& body, Kernel& k) {
    for (const Stmt& s : body) {
        if (s.kind == Stmt::For) k.n_loops = std::max(k.n_loops, s.var + 1);
        if (s.kind == Stmt::Assign) {
            int& n = s.value->lanes > 1 ? k.n_vectors : k.n_scalars;
            n = std::max(n, s.var + 1);
        }
        count(s.body, k);
        count(s.orelse, k);
    }
}

} // namespace

void count_vars(Kernel& k) {
    k.n_loops = k.n_scalars = k.n_vectors = 0;
    count(k.body, k);
}

std::vector<int64_t> sizes(const std::vector<Axis>& axes) {
    std::vector<int64_t> s;
    for (const Axis& a : axes) s.push_back(a.size);
    return s;
}

std::vector<ExprP> vars(int first, size_t count) {
    std::vector<ExprP> v;
    for (size_t i = 0; i < count; ++i) v.push_back(loop_var(first + (int)i));
    return v;
}

std::vector<Stmt> nest(int first, const std::vector<int64_t>& extent, std::vector<Stmt> body) {
    for (size_t i = extent.size(); i-- > 0;) body = {for_loop(first + (int)i, 0, extent[i], std::move(body))};
    return body;
}

std::vector<ExprP> aligned(const std::string& prim, const std::vector<Axis>& x, const std::vector<Axis>& r,
                           const std::vector<ExprP>& ridx) {
    auto pos = align_axes(x, r);
    if (!pos) fail(prim, axes_string(x) + " does not broadcast to " + axes_string(r));
    std::vector<ExprP> idx;
    for (int p : *pos) idx.push_back(ridx[(size_t)p]);
    return idx;
}

} // namespace detail
} // namespace presk::kernel
