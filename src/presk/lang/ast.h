// The PSK syntax tree, as the parser builds it (names unresolved, no types).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lang/source.h"

namespace presk::ast {

struct Expr;
using ExprP = std::shared_ptr<Expr>;

/// An expression. `Call` holds its callee in args[0] and its arguments after it. `Subscript`
/// (`x[seq: 0, 1: 2..]`) holds the subscripted value in args[0] and a `Select` per axis after it;
/// a `Select` holds the axis (a name or an integer) in args[0] and either the index in args[1]
/// (text empty) or the range's bounds in args[1] and args[2], each null when omitted (text "..").
/// `Sized` is a tensor type's named axis with its size written, `seq: T - 1`: the name in text,
/// the size in args[0]; in a call's arguments it is a new axis of split (`head: H`). `Arrow` is
/// `a -> b` in the arguments of split and merge, its sides in args[0] and args[1]. A Field whose
/// text is digits is a tuple's item (`t.0`).
struct Expr {
    enum Kind { Num, Str, Var, Field, Call, Binary, Neg, Tuple, Record, ModRef, Subscript, Select, Sized, Arrow } kind;
    Loc loc;
    std::string text;                // Num: literal; Str: contents; Var/Field: name; Binary: operator; ModRef: module
    std::vector<ExprP> args;         // operands, elements, callee + arguments, or a ModRef's dims
    std::vector<std::string> names;  // Record: field names (one per args entry)
    int depth = 1;                   // 1 + the deepest operand's depth (the parser bounds it, kMaxNesting)

    /// Frees a deep tree (a chain of 20 000 additions) without recursing once per level.
    ~Expr() {
        std::vector<ExprP> work;
        auto take = [&](std::vector<ExprP>& v) {
            for (ExprP& a : v)
                if (a && a.use_count() == 1 && !a->args.empty()) work.push_back(std::move(a));
        };
        take(args);
        while (!work.empty()) {
            ExprP e = std::move(work.back());
            work.pop_back();
            take(e->args);
        }
    }
};

struct Type;
using TypeP = std::shared_ptr<Type>;

/// A type as written: a tensor `[a, b]` (with element kind and int bound), a tuple,
/// a record, `f64`, `nat`, `params(M{dims})` or the name of a `type` alias.
struct Type {
    enum Kind { Tensor, Tuple, Record, F64, Nat, Params, Alias } kind;
    Loc loc;
    std::string elem = "real";      // Tensor: real | int | bool
    ExprP bound;                     // Tensor of int: values are < bound (int<V>[...])
    bool ellipsis = false;           // Tensor: `...` first: any leading axes
    std::vector<ExprP> axes;         // Tensor: axis expressions
    std::vector<TypeP> items;        // Tuple / Record components
    std::vector<std::string> names;  // Record field names
    std::string name;                // Alias name
    ExprP mod;                       // Params: the ModRef expression
};

/// `let name = e` or `let (a, b) = e`.
struct Let {
    Loc loc;
    std::vector<std::string> names;
    bool tuple = false;
    ExprP value;
};

struct Block {
    std::vector<Let> lets;
    ExprP result;
};

struct Param {  // a function parameter
    Loc loc;
    std::string name;
    TypeP type;
};

struct Fn {
    Loc loc;
    std::string name;
    std::vector<Param> params;
    TypeP ret;  // may be null
    Block body;
};

/// `param name : type = init`: a tensor, a submodule `M{dims}` or `stack[n] M{dims}`.
struct ParamDecl {
    Loc loc;
    std::string name;
    TypeP type;          // tensor type, or null for a submodule
    ExprP mod;           // ModRef of a submodule or stack
    ExprP stack;         // stack count, or null
    std::string init;    // normal | uniform | zeros | ones (tensors only)
    std::vector<ExprP> init_args;
    Loc init_loc;
};

struct Module {
    Loc loc;
    std::string name;
    std::vector<std::string> dims;
    std::vector<ParamDecl> params;
    std::vector<Fn> fns;
};

/// `const name : f64|nat = value` (overridable with --const).
struct Const {
    Loc loc;
    std::string name;
    bool nat = false;
    ExprP value;
};

struct TypeAlias {
    Loc loc;
    std::string name;
    TypeP type;
};

struct File {
    std::vector<Module> modules;
    std::vector<Fn> fns;
    std::vector<Const> consts;
    std::vector<TypeAlias> types;
};

} // namespace presk::ast
