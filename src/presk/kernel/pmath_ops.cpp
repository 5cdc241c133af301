// The table of pmath's operations (pmath_ops.h).
#include "kernel/pmath_ops.h"

#include "kernel/pmath.h"

namespace presk::kernel {

const PmathOp kPmathOps[8] = {
    {"exp", 1, "presk_exp", (void*)&presk_exp, "presk_expf", (void*)&presk_expf},
    {"log", 1, "presk_log", (void*)&presk_log, "presk_logf", (void*)&presk_logf},
    {"tanh", 1, "presk_tanh", (void*)&presk_tanh, "presk_tanhf", (void*)&presk_tanhf},
    {"sin", 1, "presk_sin", (void*)&presk_sin, "presk_sinf", (void*)&presk_sinf},
    {"cos", 1, "presk_cos", (void*)&presk_cos, "presk_cosf", (void*)&presk_cosf},
    {"erf", 1, "presk_erf", (void*)&presk_erf, "presk_erff", (void*)&presk_erff},
    {"erfc", 1, "presk_erfc", (void*)&presk_erfc, "presk_erfcf", (void*)&presk_erfcf},
    {"pow", 2, "presk_pow", (void*)&presk_pow, "presk_powf", (void*)&presk_powf},
};

const PmathOp* pmath_op(const std::string& op) {
    for (const PmathOp& p : kPmathOps)
        if (op == p.op) return &p;
    return nullptr;
}

} // namespace presk::kernel
