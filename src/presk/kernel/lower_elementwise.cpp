// Elementwise primitives and their fusion groups: one loop nest over the root's axes, each
// member an expression in the arithmetic type at the index its consumer reads it at (the
// broadcasting alignment of ref/interp.cpp, applied member by member), only the root stored.
//
// A member read at the same index more than once (tanh's y in `1 - y * y`, say, or gelu's
// operand, which its formula reads twice) is computed once into a scalar s<k>; every other
// member is inlined into its consumer. A group's kernel
// is named by its members' primitives in evaluation order joined by `+` (`exp+mul+add`); a
// single member gives the primitive's own name and the kernel lower() gives for it.
//
// gelu is x Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2, i.e. x * erfc(-x / sqrt(2)) / 2: the
// reference's x (1 + erf(x / sqrt(2))) / 2 cancels in 1 + erf for x << 0 (below -3 that sum is
// under 3e-3 and an f32 erf's rounding alone left the f32 band), erfc does not, so gelu keeps
// its relative accuracy down to where erfc underflows. sqrt(2) is written as the kernel
// operation sqrt(2): the correctly rounded square root of 2 in the arithmetic type, the same
// value in every backend, rather than a decimal constant to be rounded.
#include <map>

#include "core/prims.h"
#include "kernel/lower_util.h"
#include "lang/source.h"
#include "lang/stack.h"

namespace presk::kernel {
namespace {

using detail::fail;

/// How many times elementwise(prim, a) reads each operand: gelu reads its x twice, so an
/// operand computed by another member is bound to a scalar rather than inlined twice (inlined,
/// a chain of n gelus would be 2^n operations).
int reads_of(const std::string& prim) {
    return prim == "gelu" || prim == "abs" || prim == "sign" || prim == "maximum" || prim == "minimum" ? 2 : 1;
}

/// The expression of elementwise primitive `prim` on operand expressions `a`.
ExprP elementwise(const std::string& prim, const std::vector<ExprP>& a) {
    if (prim == "gelu") {
        ExprP phi2 = unary("erfc", binary("div", unary("neg", a[0]), unary("sqrt", real(2))));
        return binary("div", binary("mul", a[0], phi2), real(2));
    }
    // abs sign maximum minimum by comparisons and selects, with the reference's NaN and zero rules:
    // abs(x) = x <= 0 ? 0 - x : x (abs(-0) = +0, NaN stays), sign(x) = x > 0 ? 1 : x < 0 ? -1 : x,
    // maximum(a, b) = a >= b ? a : a != a ? a : b (a NaN operand gives NaN, a tie a).
    if (prim == "abs") return select(compare("le", a[0], real(0)), binary("sub", real(0), a[0]), a[0]);
    if (prim == "sign")
        return select(compare("gt", a[0], real(0)), real(1), select(compare("lt", a[0], real(0)), real(-1), a[0]));
    if (prim == "maximum" || prim == "minimum")
        return select(compare(prim == "maximum" ? "ge" : "le", a[0], a[1]), a[0],
                      select(compare("ne", a[0], a[0]), a[0], a[1]));
    if (prim == "where") return select(compare("ne", a[0], real(0)), a[1], a[2]);  // a NaN c selects a
    if (a.size() == 1) return unary(prim, a[0]);
    return binary(prim, a[0], a[1]);
}

/// Builds the group's root expression, binding members read more than once.
class GroupBuilder {
public:
    GroupBuilder(const Group& g) : g_(g) {}

    /// Counts the reads of (member, index); `idx` holds loop variable numbers.
    void count(int m, const std::vector<int>& idx) {
        check_stack({}, "fusion group");
        if (uses_[{m, idx}]++ > 0) return;
        const Node& n = g_.members[(size_t)m];
        for (size_t k = 0; k < n.operands.size(); ++k) {
            int f = g_.from[(size_t)m][k];
            if (f < 0) continue;
            const std::vector<int> oi = operand_index(m, k, idx);
            for (int r = 0; r < reads_of(n.prim); ++r) count(f, oi);
        }
    }

    /// The expression of member m at `idx`; appends the assignments it needs to `out`.
    ExprP emit(int m, const std::vector<int>& idx, std::vector<Stmt>& out) {
        check_stack({}, "fusion group");
        auto key = std::make_pair(m, idx);
        if (auto it = bound_.find(key); it != bound_.end()) return it->second;
        const Node& n = g_.members[(size_t)m];
        std::vector<ExprP> args;
        for (size_t k = 0; k < n.operands.size(); ++k) {
            int f = g_.from[(size_t)m][k];
            std::vector<int> oi = operand_index(m, k, idx);
            if (f >= 0) {
                args.push_back(emit(f, oi, out));
                continue;
            }
            std::vector<ExprP> at;
            for (int v : oi) at.push_back(loop_var(v));
            args.push_back(load(-1 - f, at));
        }
        ExprP e = elementwise(n.prim, args);
        if (m + 1 < (int)g_.members.size() && uses_[key] > 1) {
            int s = scalars_++;
            out.push_back(assign(s, e));
            e = scalar_var(s);
            bound_[key] = e;
        }
        return e;
    }

    /// Members whose values nothing read (none in a well-formed group).
    std::vector<int> unread() const {
        std::vector<int> r;
        for (size_t m = 0; m < g_.members.size(); ++m) {
            bool read = false;
            for (const auto& [key, n] : uses_) read |= key.first == (int)m;
            if (!read) r.push_back((int)m);
        }
        return r;
    }

private:
    const Group& g_;
    std::map<std::pair<int, std::vector<int>>, int> uses_;
    std::map<std::pair<int, std::vector<int>>, ExprP> bound_;
    int scalars_ = 0;

    /// The loop variables operand k of member m is read at, when m is at `idx`.
    std::vector<int> operand_index(int m, size_t k, const std::vector<int>& idx) const {
        const Node& n = g_.members[(size_t)m];
        auto pos = align_axes(n.operands[k]->axes, n.result->axes);
        std::vector<int> r;
        for (int p : *pos) r.push_back(idx[(size_t)p]);  // aligned: lower_group checked the type rule
        return r;
    }
};

} // namespace

Kernel lower_group(const Group& g, DType t) {
    if (g.members.empty()) fail("group", "a group without members");
    std::string name;
    for (const Node& n : g.members) name += (name.empty() ? "" : "+") + n.prim;
    if (t == DType::I64) fail(name, "a kernel's storage type is f64, f32 or bf16, not i64");
    if (g.from.size() != g.members.size()) fail(name, "the wiring has " + std::to_string(g.from.size()) +
                                                          " entries for " + std::to_string(g.members.size()) + " members");
    for (const TypeP& in : g.inputs)
        if (!in || !in->is_real_tensor()) fail(name, "a group input must be a real tensor");
    for (size_t m = 0; m < g.members.size(); ++m) {
        const Node& n = g.members[m];
        const std::string who = "member " + std::to_string(m) + " (" + n.prim + ")";
        if (!is_elementwise(n.prim)) fail(name, who + " is not elementwise");
        if (!n.result) fail(name, who + " has no result type");
        if (g.from[m].size() != n.operands.size()) fail(name, who + ": the wiring does not give each operand");
        TypeP rule;
        try {
            rule = core::prim_type(n.prim, n.operands, n.ints, n.text);
        } catch (const Error& e) {
            fail(name, who + ": " + e.what());
        }
        if (!same_type(*rule, *n.result)) fail(name, who + " has result " + to_string(*n.result) + ", not the rule's " + to_string(*rule));
        for (size_t k = 0; k < n.operands.size(); ++k) {
            const int f = g.from[m][k];
            const TypeP* src = nullptr;
            if (f < 0 && -1 - f < (int)g.inputs.size()) src = &g.inputs[(size_t)(-1 - f)];
            if (f >= 0 && f < (int)m) src = &g.members[(size_t)f].result;
            if (!src) fail(name, who + " reads " + std::to_string(f) + ", which is neither an input nor an earlier member");
            if ((*src)->axes != n.operands[k]->axes)
                fail(name, who + " operand " + std::to_string(k) + " is " + to_string(*n.operands[k]) + " but is given " +
                               to_string(**src));
        }
    }
    const Node& root = g.members.back();
    Kernel k;
    k.name = name;
    k.dtype = t;
    for (const TypeP& in : g.inputs) k.inputs.push_back(detail::buffer_of(*in, t));
    k.output = detail::buffer_of(*root.result, t);

    const int r = (int)root.result->axes.size();
    std::vector<int> idx;
    for (int i = 0; i < r; ++i) idx.push_back(i);
    GroupBuilder b(g);
    b.count((int)g.members.size() - 1, idx);
    if (auto u = b.unread(); !u.empty()) fail(name, "member " + std::to_string(u[0]) + " does not reach the root");
    std::vector<Stmt> body;
    ExprP e = b.emit((int)g.members.size() - 1, idx, body);
    body.push_back(store(k.out_buf(), detail::vars(0, (size_t)r), e));
    k.body = detail::nest(0, detail::sizes(root.result->axes), std::move(body));
    detail::count_vars(k);
    return k;
}

} // namespace presk::kernel
