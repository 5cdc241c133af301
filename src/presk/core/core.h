// PSK-Core: a first-order functional IR in A-normal form. Every intermediate value is a
// let `%k = op(args)` of one function; parameters are %0..%n-1. A site is "<function>/%<k>".
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/types.h"
#include "lang/source.h"

namespace presk::core {

/// What a let computes.
///  Prim:   a primitive (prims.h) with static attributes `ints` and `text`.
///  Lit:    a real scalar literal `text` ("pi" is pi at the interpreter's precision).
///  Call:   function `name` applied to args.
///  Loop:   fold/scan of function `name` over stacks: ints = {n_stacked, reverse, ys, L}; args =
///          the stacks, then the carry, then constants. F(slices..., carry, consts...) returns the
///          carry (ys = 0: the result is the carry; ys = 1: (carry, stack of the carries after
///          each step); ys = 3: (carry, stack of the carries before each step)) or (carry, y)
///          (ys = 2: (carry, stack of the ys)). Step l reads slice l of each stack and writes
///          place l of the ys, in either direction. `text` names the form for printing.
///  Tuple/Record: build; Get: component ints[0] of a tuple or record (`name` = field name).
enum class Op { Prim, Lit, Call, Loop, Tuple, Record, Get };

struct Let {
    int id = -1;
    Op op = Op::Prim;
    std::string name;
    std::vector<int> args;
    std::vector<int64_t> ints;
    std::string text;
    std::vector<std::string> names;
    TypeP type;
    Loc loc;
};

struct Function {
    std::string name;
    std::vector<std::string> param_names;
    std::vector<TypeP> param_types;
    std::vector<Let> body;
    int result = -1;

    int arity() const { return (int)param_types.size(); }
    int next_id() const { return arity() + (int)body.size(); }
    /// The type of value %id (a parameter or a let); null if out of range.
    TypeP type_of(int id) const;
    const Let* let_of(int id) const;
    /// Appends `l` as the next let, sets its id and returns it.
    int emit(Let l);
};

/// A scalar expression of an initializer's arguments, dims already substituted:
/// Num (decimal text), Neg, binary + - * / (text is the operator), Call sqrt|exp|log.
struct Scalar {
    enum Kind { Num, Neg, Bin, Call } kind = Num;
    std::string text;
    std::vector<std::shared_ptr<Scalar>> args;
};
using ScalarP = std::shared_ptr<Scalar>;
std::string to_string(const Scalar& s);

/// One leaf of the entry module's parameter tree: its path (`blocks.ff.up.w`), its type
/// (a stacked leaf has its stack's axis first) and its initializer.
struct ParamSpec {
    std::string path;
    TypeP type;
    std::string init;  // normal | uniform | zeros | ones
    std::vector<ScalarP> args;
};

struct Program {
    std::vector<Function> functions;  // callees before callers
    std::string entry;
    std::vector<ParamSpec> params;    // the entry's parameter tree when the entry is a method
    TypeP params_type;                // its record type (null for a plain function)

    const Function* find(const std::string& name) const;
    Function* find(const std::string& name);
    /// Appends a function and returns it; throws Error if the name is taken.
    Function& add(Function f);
};

/// The text `presk dump --stage core` prints.
std::string to_string(const Function& f);
std::string to_string(const Program& p);

} // namespace presk::core
