// dispatch.cpp - builds the op -> kernel table from the family files.
#include "dispatch.h"

namespace gk::cpu {
namespace {

kernel_table build() {
    kernel_table t{};
    register_binary(t);
    register_unary(t);
    register_glu(t);
    register_norm(t);
    register_softmax(t);
    register_rope(t);
    register_rows(t);
    register_copy(t);
    register_reduce(t);
    register_sort(t);
    register_misc(t);
    register_matmul(t);
    register_attention(t);
    return t;
}

} // namespace

const kernel_table & kernels() {
    static const kernel_table t = build();
    return t;
}

bool is_layout_op(gk_op op) {
    return op == GK_OP_NONE || op == GK_OP_VIEW || op == GK_OP_RESHAPE || op == GK_OP_PERMUTE ||
           op == GK_OP_TRANSPOSE;
}

bool runs_in_place(gk_op op) {
    switch (op) {
    case GK_OP_ADD: case GK_OP_SUB: case GK_OP_MUL: case GK_OP_DIV:                 // binary.cpp
    case GK_OP_SQR: case GK_OP_SQRT: case GK_OP_LOG: case GK_OP_SIN: case GK_OP_COS:
    case GK_OP_UNARY: case GK_OP_LEAKY_RELU:                                        // unary.cpp
    case GK_OP_SCALE: case GK_OP_CLAMP: case GK_OP_DIAG_MASK_INF: case GK_OP_DIAG_MASK_ZERO:  // misc.cpp
    case GK_OP_NORM: case GK_OP_RMS_NORM: case GK_OP_L2_NORM:                      // norm.cpp
    case GK_OP_SOFT_MAX:                                                            // softmax.cpp
    case GK_OP_ROPE:                                                                // rope.cpp
        return true;
    default:
        return false;
    }
}

} // namespace gk::cpu
