// Private to the lowering (lower*.cpp): the families of primitives and the pieces of a loop
// nest they share.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel/layout.h"
#include "kernel/lower.h"

namespace presk::kernel::detail {

// The families, one file each. Each is given a node whose type rule has been checked
// (prim_type agrees with n.result) and returns its kernel with the header filled in.
std::vector<Kernel> lower_contract(const Node& n, DType t, const Layout& l);  // dot matmul ein, at the
                                                                             // point l (lower_contract.cpp)
Kernel lower_rows(const Node& n, DType t, int passes = 3);  // sum mean max softmax (in `passes`)
                                                            // cross_entropy argmax max_grad expand
                                                            // (lower_rows.cpp)
Kernel lower_index(const Node& n, DType t);                // embed scatter_add onehot split_heads
                                                           // merge_heads sum_to broadcast_like
                                                           // causal_mask positions zeros_like
                                                           // (lower_index.cpp)

/// Throws presk::Error "lower <prim>: <msg>".
[[noreturn]] void fail(const std::string& prim, const std::string& msg);

/// The buffer of a value of PSK type `ty` in a kernel of storage type `t`: real tensors in
/// `t`, int and bool tensors in i64.
BufferType buffer_of(const Type& ty, DType t);

/// A kernel named `name` of storage type `t` whose inputs are n's operands and whose output is
/// n's result; the body is left empty.
Kernel header(const std::string& name, const Node& n, DType t);

/// Sets k.n_loops, k.n_scalars and k.n_vectors to one past the largest variable of each kind
/// the body uses (scalars s<k> and n<k> share one numbering).
void count_vars(Kernel& k);

/// The sizes of `axes`.
std::vector<int64_t> sizes(const std::vector<Axis>& axes);

/// Loop variables i<first> .. i<first + count - 1>.
std::vector<ExprP> vars(int first, size_t count);

/// `body` inside loops i<first>, i<first+1>, ... over `extent` (outermost first), each from 0;
/// `body` itself when `extent` is empty.
std::vector<Stmt> nest(int first, const std::vector<int64_t>& extent, std::vector<Stmt> body);

/// The index into a value of axes `x` broadcast to axes `r` (the language's alignment:
/// trailing positions when they agree, else by name) at index `ridx` of `r`; throws naming
/// `prim` when `x` does not broadcast to `r`.
std::vector<ExprP> aligned(const std::string& prim, const std::vector<Axis>& x, const std::vector<Axis>& r,
                           const std::vector<ExprP>& ridx);

/// `v` without element `i`.
template <class T>
std::vector<T> without(std::vector<T> v, size_t i) {
    v.erase(v.begin() + (long)i);
    return v;
}

/// a ++ b.
template <class T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// The nest of a sum (lower_rows.cpp): out[...] = the sum of x over the axes `keep` maps to
/// -1, in x's axis order and increasing index, in one accumulator s0 of the arithmetic type,
/// divided by `divisor` when there is one (mean). keep[d] is the output position of x's axis d.
/// x is buffer 0; loop variables: the output's axes, then the summed ones.
std::vector<Stmt> sum_nest(int out_buf, const std::vector<Axis>& x, const std::vector<int>& keep,
                           const std::vector<Axis>& out, std::optional<int64_t> divisor);

} // namespace presk::kernel::detail
