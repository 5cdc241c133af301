// Internals of the kernel backend's executor shared by its files (not a public interface):
// runtime values' helpers (value.cpp), the partition of a function into fusion groups
// (fusion.cpp) and the primitives evaluated on the host (host.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/core.h"
#include "kernel/lower.h"
#include "realize/executor.h"

namespace presk::realize::detail {

// ---- values (value.cpp) ----

/// from_ref with the real leaves whose tree path (`blocks.ff.up.w`, as Type's for_each_leaf
/// joins it) is in `by_path` stored in that type instead of `t`; a quantised one encoded by
/// gk's encoder, or taken as `blocks` holds it (ExecOptions::blocks). Throws presk::Error when
/// those blocks are of another type than `by_path`'s or do not decode to the leaf's values.
Value from_ref(const ref::Value& v, kernel::DType t, const std::map<std::string, kernel::DType>& by_path,
               const std::string& path, const std::map<std::string, kernel::Data>* blocks = nullptr);
/// A tensor value of `type` holding `d`.
Value tensor_value(const TypeP& type, kernel::Data d);
/// `d` with every real rounded to `t` (round_to) in a buffer of its own (from `pool` when
/// given); `d` itself (sharing its elements) when it is already of type `t`. An i64 buffer is
/// returned unchanged.
kernel::Data convert(const kernel::Data& d, kernel::DType t, kernel::BufferPool* pool = nullptr);
/// The wider of two real storage types (f64 > f32 > bf16): a value of either is exact in it.
kernel::DType wider(kernel::DType a, kernel::DType b);

/// The types of a stack's layers and of stacks, made once per distinct type and shared by
/// every later value of it (a call of the executor constructs no Type). Keyed by the address
/// of the type a result is made from, which the memo keeps alive (so an address names one
/// type); emptied when it holds more than a few thousand (types made afresh by every call, as
/// from_ref makes them, would otherwise accumulate).
class TypeMemo {
public:
    /// unstacked(*t): `t` without the leading axis of every tensor leaf.
    TypeP unstacked(const TypeP& t);
    /// The type of `n` values of tensor type `t` stacked: stacked(t, n).
    TypeP stacked(const TypeP& t, int64_t n);
    /// The type of `n` values of tree type `t` stacked, given its components' stacked types
    /// `items`: a tuple of them, or a record with t's names.
    TypeP stacked_tree(const TypeP& t, int64_t n, const std::vector<TypeP>& items);

private:
    struct Entry {
        TypeP from, to;
    };
    struct Key {
        const Type* t;
        int64_t n;
        bool operator==(const Key&) const = default;
    };
    struct Hash {
        size_t operator()(const Key& k) const {
            return std::hash<const Type*>()(k.t) ^ (size_t)k.n * 0x9E3779B97F4A7C15u;
        }
    };
    /// The entry of (t, n), n = -1 for unstacked; `to` null when new.
    Entry& at(const TypeP& t, int64_t n);
    std::unordered_map<Key, Entry, Hash> memo_;
};

/// Component `l` of every leaf along its first axis (a stack's layer l): a view of the
/// stack's elements, no copy; its types from `types`.
Value slice_first(const Value& v, int64_t l, TypeMemo& types);
/// Stacks values of one type along a new first axis (reals in the widest storage type found):
/// each leaf laid out once in one buffer (from `pool` when given), a part of the same type
/// copied as a block; its types from `types`.
Value stack_first(const std::vector<Value>& parts, TypeMemo& types, kernel::BufferPool* pool = nullptr);

// ---- fusion groups (fusion.cpp) ----

/// One launch of a function's body: a kernel primitive alone, a group of elementwise ones, or
/// a contraction with the bias add that reads it (its epilogue, kernel::Layout::bias).
struct FusionGroup {
    std::vector<int> lets;       // positions in the body of the members, in order; the root last
    std::vector<int> inputs;     // value ids read from outside the group, in order of first use
                                 // (an epilogue's: the contraction's operands, then the bias)
    std::vector<bool> literal;   // per input: the value of a literal let of the function
    bool elementwise = false;    // `group` is set (else `node`)
    bool epilogue = false;       // lets = {the contraction, its add}; `node` the contraction
    kernel::Group group;         // the members wired as lower_group reads them
    kernel::Node node;           // the primitive of a group that is not elementwise
    /// The position whose site names the group (a plan's and a realization's key): the root,
    /// or an epilogue's contraction.
    int named() const { return epilogue ? lets.front() : lets.back(); }
};

/// The add a contraction let can fold into its stores as its epilogue: the only let reading
/// the contraction's value (which is not the function's result), an add whose first operand
/// that value is (the fused kernel computes the sum, then sum + bias, in that order).
struct BiasAdd {
    int add = -1;   // the add's position in the body
    int bias = -1;  // the value id of its second operand
};

/// The bias add of the let at body position `pos` of `f`, if it is a dot, matmul or ein read
/// as BiasAdd says; the bias's type is the builder's to check (kernel::lower_layout).
std::optional<BiasAdd> bias_add_of(const core::Function& f, int pos);

/// The partition of a function's lets. Each let that launches (a primitive that is not a host
/// primitive) is in exactly one group: an elementwise let joins the group of its consumer when
/// every use of its value is in that one consumer, which is elementwise too, it is not the
/// function's result, and that group has fewer than kMaxGroupMembers members; a contraction
/// whose site is in `epilogues` (a plan's points with a bias) joins its bias add (bias_add_of),
/// which then takes no other member; every other launching let roots a group of its own. The
/// bound keeps a kernel's expressions shallow: a chain of 10 000 additions is 79 launches,
/// not one expression 10 000 deep.
constexpr int kMaxGroupMembers = 128;
struct Partition {
    std::vector<int> group_of;           // by body position: the group, or -1 (host work)
    std::vector<FusionGroup> groups;     // in the order of their roots
};

Partition partition(const core::Function& f, const std::set<std::string>& epilogues = {});

/// For each argument of `l`: whether it is the value of a literal let of `f`.
std::vector<bool> literal_args(const core::Function& f, const std::vector<int>& ids);

/// The node of primitive let `l` of `f` at its bound types.
kernel::Node node_of(const core::Function& f, const core::Let& l);

/// "<function>/%<k>".
std::string site_of(const core::Function& f, const core::Let& l);

// ---- host primitives (host.cpp) ----

/// What a host primitive needs besides its operands: the random stream's key (the let's text
/// with the enclosing fold steps, as the reference forms it), the seed, whether training, and
/// the storage type of the site (sample and dropout compute in its arithmetic type).
struct HostContext {
    uint64_t seed = 0;
    bool train = false;
    std::string key;
    kernel::DType dtype = kernel::DType::F64;
    TypeMemo* types = nullptr;           // the executor's memo of stack types (stack reads it)
    kernel::BufferPool* pool = nullptr;  // where results' buffers come from (new when null)
};

/// Evaluates a host primitive (kernel::is_host_prim) of let `l`. Throws presk::Error for a
/// primitive without a host rule.
Value host_prim(const core::Let& l, const std::vector<const Value*>& a, const HostContext& c);

} // namespace presk::realize::detail
