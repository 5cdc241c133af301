// The operations of PSK-Kernel that are calls of pmath.h's functions, one table for every
// backend that needs their names or addresses (the native JIT's symbols and calls, the work
// estimate of a thread split); the cc printer names them by the same rule, presk_<op> for f64
// and presk_<op>f for f32.
#pragma once
#include <string>

namespace presk::kernel {

/// One pmath function pair: the kernel operation (`exp`, ..., `pow`), its operand count, and
/// the f64 and f32 functions by name and address.
struct PmathOp {
    const char* op;
    int arity;
    const char* f64_name;
    void* f64;
    const char* f32_name;
    void* f32;
};

/// Every pmath operation: exp log tanh sin cos erf erfc (unary) and pow (binary).
extern const PmathOp kPmathOps[8];

/// The entry of `op`, or nullptr when `op` is not a pmath call (sqrt, add, ...).
const PmathOp* pmath_op(const std::string& op);

} // namespace presk::kernel
