// PSK-Kernel v0: a kernel is a loop nest over row-major buffers with scalar (and vector)
// operations, reductions as loops with an accumulator and index arithmetic explicit
// (../shared/seeds/presk-native.txt, "PSK-Kernel v0" and "The vector form").
//
// A kernel has inputs %0..%n-1 and one output %n. Every real value inside it is in the
// kernel's arithmetic type (f64 for f64 storage, f32 for f32 and bf16 storage); integer
// values (indices, masks, token ids, comparisons) are i64. Buffers are row-major over their
// axes; a load or store gives one index expression per axis.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/types.h"

namespace presk::kernel {

/// Element types of buffers. bf16 is storage only: loads widen to f32, stores round to
/// nearest even. i64 holds indices, masks (0/1) and token ids. I8 and I4 are a quantised
/// parameter's integers with their scales (kernel/quant.h: GGUF's q8_0 and q4_0 blocks), only
/// ever a kernel input, whose load is f32(q) * s.
enum class DType { F64, F32, BF16, I64, I8, I4 };

/// "f64", "f32", "bf16", "i64", "int8", "int4".
const char* dtype_name(DType t);
/// Whether `t` is a quantised type (I8, I4).
bool quantised(DType t);
/// The type a kernel computes in for storage `t`: f64 -> f64, f32 and bf16 -> f32.
DType arith_type(DType t);

/// One buffer parameter of a kernel: its element type and its axes (named as in PSK types).
struct BufferType {
    DType dtype = DType::F32;
    std::vector<Axis> axes;
};

struct Expr;
using ExprP = std::shared_ptr<const Expr>;

/// An expression. Real expressions are in the kernel's arithmetic type, integer ones i64;
/// vector expressions hold `lanes` reals (lane j is output column j, never a partial sum).
struct Expr {
    enum Kind {
        Real,     // real constant `value`, rounded to the arithmetic type where it is used
        Int,      // integer constant `ivalue`
        Loop,     // induction variable i<ivalue> (i64)
        Scalar,   // scalar variable s<ivalue> (real) or n<ivalue> (integer, when `integer`)
        Vector,   // vector variable v<ivalue>
        Load,     // buffer `buf` at `args` (one index per axis); a real load widens bf16
        VLoad,    // `lanes` contiguous elements of `buf` along its last axis from `args`
        Splat,    // `lanes` copies of the scalar args[0]
        Unary,    // `op` args[0]: neg exp log tanh sin cos sqrt erf erfc (reals); neg (integers)
        Binary,   // `op` args[0], args[1]: add sub mul div pow max min (reals, lane-wise on
                  // vectors); add sub mul div mod min max (integers, div/mod of non-negatives)
        Compare,  // `op` in lt le gt ge eq ne on two reals or two integers -> integer 0/1
        Select,   // args[0] (integer) != 0 ? args[1] : args[2]
        ToReal,   // the integer args[0] as a real of the arithmetic type
    } kind = Real;
    std::string op;
    double value = 0;
    int64_t ivalue = 0;
    int buf = -1;
    int lanes = 1;
    bool integer = false;  // the expression's value is an integer (set by the constructors)
    std::vector<ExprP> args;
};

/// A statement.
struct Stmt {
    enum Kind {
        For,      // for i<var> in lo..hi { body }   (counts upward; lo, hi are constants)
        Assign,   // s<var> = value   (or n<var> / v<var> for integer / vector values)
        Store,    // buf[index...] = value        (rounds to the buffer's storage type)
        VStore,   // buf[index...] ..+lanes = value (a vector, contiguous along the last axis)
        If,       // if cond { body } else { orelse }
    } kind = For;
    int var = -1;
    int64_t lo = 0, hi = 0;
    int buf = -1;
    std::vector<ExprP> index;
    ExprP value;  // Assign/Store/VStore value; If condition (an integer)
    std::vector<Stmt> body, orelse;
};

/// A kernel: `name` as printed (`dot`, `add`, `ein[batch, heads, seq, seq2]`, `mul+add`),
/// the storage type `dtype` (its arithmetic type is arith_type(dtype)), buffer types of the
/// inputs and the output, and the body. Variables are numbered from 0 within the kernel.
struct Kernel {
    std::string name;
    DType dtype = DType::F32;
    std::vector<BufferType> inputs;
    BufferType output;
    std::vector<Stmt> body;
    int n_loops = 0, n_scalars = 0, n_vectors = 0;  // one past the largest variable number
    // A realization plan's split (kernel/layout.h; not part of the text): the depth of the
    // loop a thread split divides in the kernel's perfect nest (0 the outermost), and its
    // worker count, 0 for the executor's rule (the pool's size, above kSplitWork only).
    int split_depth = 0, split_workers = 0;

    int out_buf() const { return (int)inputs.size(); }
};

/// The seed's text form: `kernel dot (%0 : f32[batch: 4, 3], %1 : f32[3, 2]) -> %2 :
/// f32[batch: 4, 2] {` then the body indented two spaces per level, `}` and a newline.
std::string to_string(const Kernel& k);

// Expression constructors (set `integer`, `lanes`).
ExprP real(double v);
ExprP integer(int64_t v);
ExprP loop_var(int i);
ExprP scalar_var(int s, bool integer = false);
ExprP vector_var(int v, int lanes);
ExprP load(int buf, std::vector<ExprP> index, bool integer = false);
ExprP vload(int buf, std::vector<ExprP> index, int lanes);
ExprP splat(ExprP x, int lanes);
ExprP unary(const std::string& op, ExprP x);
ExprP binary(const std::string& op, ExprP a, ExprP b);
ExprP compare(const std::string& op, ExprP a, ExprP b);
ExprP select(ExprP cond, ExprP a, ExprP b);
ExprP to_real(ExprP i);

// Statement constructors.
Stmt for_loop(int var, int64_t lo, int64_t hi, std::vector<Stmt> body);
Stmt assign(int var, ExprP value);
Stmt store(int buf, std::vector<ExprP> index, ExprP value);
Stmt vstore(int buf, std::vector<ExprP> index, ExprP value);
Stmt if_else(ExprP cond, std::vector<Stmt> then, std::vector<Stmt> orelse = {});

} // namespace presk::kernel
