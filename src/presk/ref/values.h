// Runtime values of the reference interpreter: trees of tuples and records of named-axis
// tensors, reals exact at a chosen precision, integers and masks as int64.
#pragma once
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/types.h"
#include "ref/print.h"
#include "ref/real.h"

namespace presk::ref {

/// A tensor of its type, row-major: `re` for Real, `in` for Int and Bool (0 or 1).
struct Tensor {
    TypeP type;
    std::vector<Real> re;
    std::vector<int64_t> in;
};

/// A tensor (`t`) or a tuple/record of values (`items`); `type` is always set.
struct Value {
    TypeP type;
    std::shared_ptr<const Tensor> t;
    std::vector<Value> items;
};

Value make_tensor(Tensor t);
Value make_tree(const TypeP& type, std::vector<Value> items);

/// Component `l` of every leaf along its first axis (a stack's layer l).
Value slice_first(const Value& v, int64_t l);
/// The inverse: stacks values of one type along a new first axis.
Value stack_first(const std::vector<Value>& parts);

/// Human-readable text: the type, then nested brackets of values at `digits` significant
/// digits (print.h's text form).
void write_text(std::ostream& os, const Value& v, int digits);
/// JSON: a tensor is {"type": ..., "data": nested arrays}, a tuple an array, a record an
/// object (print.h's JSON form).
void write_json(std::ostream& os, const Value& v, int digits);
/// write_text into a string.
std::string to_text(const Value& v, int digits);
/// write_json into a string.
std::string to_json(const Value& v, int digits);

} // namespace presk::ref
