// The primitives of PSK-Core and their type rules (docs/language.md lists each signature).
#pragma once
#include <string>
#include <vector>

#include "core/types.h"

namespace presk::core {

/// Is `name` a primitive (public or internal to the transforms)?
bool is_prim(const std::string& name);

/// The result type of primitive `name` on operand types `args` with static attributes
/// `ints` (axes normalised to be non-negative) and `text`. Throws Error (no position) naming
/// the operand types when the rule does not hold.
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
