// Lowering of PSK-Core primitives at concrete shapes to PSK-Kernel, following the reference
// interpreter's semantics rule for rule (ref/interp.cpp; ../shared/seeds/presk-native.txt,
// "PSK-Kernel v0" and "Contractions: one builder, a layout space", default forms only).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/prims.h"
#include "core/types.h"
#include "kernel/ir.h"

namespace presk::kernel {

/// One primitive application at bound types: the PSK-Core let's primitive name, static
/// attributes (`ints`, `text`), operand types and result type.
struct Node {
    std::string prim;
    std::vector<int64_t> ints;
    std::string text;
    std::vector<TypeP> operands;
    TypeP result;
};

/// The cache key of a kernel: primitive, attributes, operand and result shapes with their
/// axis names, and the storage type.
std::string signature(const Node& n, DType t);

/// Primitives evaluated on the host, not as kernels (their entry in lower.cpp's table is
/// null): the structural ones (slice, index, stack, unslice, unindex, retype) and the random
/// ones (sample, dropout), which draw from the reference's ChaCha streams.
bool is_host_prim(core::Prim prim);
/// The same by name; false for a name that is no primitive.
bool is_host_prim(const std::string& prim);

/// Elementwise primitives, which may share a loop nest in a fusion group: the unary and
/// binary arithmetic ones (core::kElementwise); false for a name that is no primitive.
bool is_elementwise(const std::string& prim);

/// Lowers `n` to a kernel of storage type `t`. Real operands and results are buffers of `t`;
/// integer and bool operands/results (ids, targets, masks, positions, argmax) are i64.
/// Throws presk::Error naming the primitive when it has no lowering. `lanes` > 1 asks for the
/// vector form where the default form has one (the [1, 8] tile of a dot: lanes across its
/// eight output columns, 2 or 4); it computes the same bits as lanes = 1.
Kernel lower(const Node& n, DType t, int lanes = 1);

/// A fusion group of elementwise primitives: `members` in evaluation order, the root last.
/// Operand k of member m is group input `-1 - from[m][k]` when negative, else member
/// from[m][k] (an earlier one). `inputs` are the group inputs' types. One loop nest over the
/// root's shape computes every member in the arithmetic type of `t` and stores only the root.
struct Group {
    std::vector<Node> members;
    std::vector<std::vector<int>> from;
    std::vector<TypeP> inputs;
};

/// The cache key of a group kernel (its members' signatures and wiring).
std::string signature(const Group& g, DType t);

/// Lowers a group (a single member gives the same kernel as lower()). Throws presk::Error
/// when a member is not elementwise.
Kernel lower_group(const Group& g, DType t);

} // namespace presk::kernel
