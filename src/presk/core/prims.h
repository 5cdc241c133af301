// The primitives of PSK-Core: the one enumeration every stage reads (name, operand count,
// properties), the type rules, and the check that a stage's table has one entry per primitive
// in order (docs/presk.md, "The table of primitives"; docs/language.md lists each signature).
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace presk::core {

/// Properties of a primitive, bits of PrimInfo::props.
enum PrimProp : unsigned {
    kElementwise = 1u << 0,  // arithmetic on each element (unary, or binary with broadcasting):
                             // fusable, lifted over trees
    kRandom = 1u << 1,       // draws from the reference's ChaCha stream keyed by its `text`, its site
    kSums = 1u << 2,         // a sum of terms (the sites an accumulation type means something at)
    kInternal = 1u << 3,     // emitted only by the transforms; refused in source
};

/// Marks a primitive that takes any number of operands (from its minimum); its type rule
/// checks the count itself.
inline constexpr int kAnyCount = -1;

// X(Id, name, min operands, max operands, properties): every primitive, the public ones in the
// order of docs/language.md's table, then the internal ones. A new primitive is added here
// first; every stage's table then fails to compile until it has the primitive's entry.
#define PRESK_PRIMS(X)                                        \
    X(Add, "add", 2, 2, kElementwise)                         \
    X(Sub, "sub", 2, 2, kElementwise)                         \
    X(Mul, "mul", 2, 2, kElementwise)                         \
    X(Div, "div", 2, 2, kElementwise)                         \
    X(Pow, "pow", 2, 2, kElementwise)                         \
    X(Neg, "neg", 1, 1, kElementwise)                         \
    X(Exp, "exp", 1, 1, kElementwise)                         \
    X(Log, "log", 1, 1, kElementwise)                         \
    X(Tanh, "tanh", 1, 1, kElementwise)                       \
    X(Sin, "sin", 1, 1, kElementwise)                         \
    X(Cos, "cos", 1, 1, kElementwise)                         \
    X(Sqrt, "sqrt", 1, 1, kElementwise)                       \
    X(Erf, "erf", 1, 1, kElementwise)                         \
    X(Erfc, "erfc", 1, 1, kElementwise)                       \
    X(Gelu, "gelu", 1, 1, kElementwise)                       \
    X(Abs, "abs", 1, 1, kElementwise)                         \
    X(Sign, "sign", 1, 1, kElementwise)                       \
    X(Maximum, "maximum", 2, 2, kElementwise)                 \
    X(Minimum, "minimum", 2, 2, kElementwise)                 \
    X(Where, "where", 3, 3, kElementwise)                     \
    X(Dot, "dot", 2, 2, kSums)                                \
    X(Matmul, "matmul", 2, 2, kSums)                          \
    X(Ein, "ein", 1, kAnyCount, kSums)                        \
    X(Sum, "sum", 1, 1, kSums)                                \
    X(Mean, "mean", 1, 1, kSums)                              \
    X(Max, "max", 1, 1, 0)                                    \
    X(Softmax, "softmax", 1, 2, kSums)                        \
    X(CrossEntropy, "cross_entropy", 2, 2, kSums)             \
    X(Embed, "embed", 2, 2, 0)                                \
    X(Argmax, "argmax", 1, 1, 0)                              \
    X(Sample, "sample", 1, 1, kRandom | kSums)                \
    X(SplitHeads, "split_heads", 1, 1, 0)                     \
    X(MergeHeads, "merge_heads", 1, 1, 0)                     \
    X(Split, "split", 1, 1, 0)                                \
    X(Merge, "merge", 1, 1, 0)                                \
    X(SumTo, "sum_to", 2, 2, kSums)                           \
    X(BroadcastLike, "broadcast_like", 2, 2, 0)               \
    X(CausalMask, "causal_mask", 1, 1, 0)                     \
    X(Positions, "positions", 1, 1, 0)                        \
    X(Slice, "slice", 1, 1, 0)                                \
    X(Index, "index", 1, 1, 0)                                \
    X(Stack, "stack", 1, kAnyCount, 0)                        \
    X(Dropout, "dropout", 2, 2, kRandom)                      \
    X(ScatterAdd, "scatter_add", 3, 3, kInternal | kSums)     \
    X(Expand, "expand", 2, 2, kInternal)                      \
    X(Unslice, "unslice", 2, 2, kInternal)                    \
    X(Unindex, "unindex", 2, 2, kInternal)                    \
    X(ZerosLike, "zeros_like", 1, 1, kInternal)               \
    X(Onehot, "onehot", 2, 2, kInternal)                      \
    X(MaxGrad, "max_grad", 2, 2, kInternal)                   \
    X(Retype, "retype", 2, 2, kInternal)

/// A primitive of PSK-Core. A let's `name` is its PrimInfo::name (the printed text).
enum class Prim : uint8_t {
#define PRESK_PRIM_ID(id, name, lo, hi, props) id,
    PRESK_PRIMS(PRESK_PRIM_ID)
#undef PRESK_PRIM_ID
};

/// What every stage knows of a primitive.
struct PrimInfo {
    Prim prim;
    const char* name;  // the Core and source name
    int min_args;      // operand count: min_args .. max_args, or at least min_args when max_args is kAnyCount
    int max_args;
    unsigned props;    // PrimProp bits
};

inline constexpr PrimInfo kPrims[] = {
#define PRESK_PRIM_INFO(id, name, lo, hi, props) {Prim::id, name, lo, hi, props},
    PRESK_PRIMS(PRESK_PRIM_INFO)
#undef PRESK_PRIM_INFO
};

/// The number of primitives.
inline constexpr size_t kPrimCount = std::size(kPrims);

/// Is `table` (a stage's array of entries with a `prim` member) one entry per primitive, entry
/// i naming primitive i? Each stage asserts it of its table: static_assert(complete(kTable)).
template <class Entry, size_t N>
constexpr bool complete(const Entry (&table)[N]) {
    if (N != kPrimCount) return false;
    for (size_t i = 0; i < N; ++i)
        if (table[i].prim != Prim(i)) return false;
    return true;
}
static_assert(complete(kPrims));

constexpr const PrimInfo& info(Prim p) { return kPrims[(size_t)p]; }
constexpr bool has(Prim p, PrimProp q) { return (info(p).props & q) != 0; }

/// The primitive called `name` (public or internal), if there is one.
std::optional<Prim> find_prim(std::string_view name);

/// Is `name` a primitive (public or internal to the transforms)?
bool is_prim(const std::string& name);

/// The result type of primitive `p` on operand types `args` with static attributes `ints`
/// (axes normalised to be non-negative) and `text`. Throws Error (no position) naming the
/// primitive and the operand types when the rule does not hold.
TypeP prim_type(Prim p, const std::vector<TypeP>& args, const std::vector<int64_t>& ints, const std::string& text);
/// The same by name; an unknown name is an Error.
TypeP prim_type(const std::string& name, const std::vector<TypeP>& args, const std::vector<int64_t>& ints,
                const std::string& text);

/// The labels of an ein spec "ab,bc->ac": one string per operand and the output.
struct EinSpec {
    std::vector<std::string> inputs;
    std::string output;
};
/// Parses `spec`; throws Error on a malformed spec.
EinSpec parse_ein(const std::string& spec);

} // namespace presk::core
