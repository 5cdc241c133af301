// dispatch.cpp - builds the op -> kernel table from the family files.
#include "dispatch.h"

#include "../internal.h"
#include "vec_dot.h"

#include <cstdio>

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
    register_set(t);
    register_ssm(t);
    register_linear_attn(t);
    register_window(t);
    register_custom(t);
    register_conv(t);
    register_pool(t);
    register_resample(t);
    register_back(t);
    register_train(t);
    register_matrix(t);
    register_dsv4(t);
    return t;
}

} // namespace

const kernel_table & kernels() {
    static const kernel_table t = build();
    return t;
}

bool supports(const gk_tensor * node, char * why, size_t why_size) {
    const auto refuse = [&](const char * fmt, auto... args) {
        if (why && why_size > 0) {
            std::snprintf(why, why_size, fmt, args...);
        }
        return false;
    };
    if (!node || node->op < 0 || node->op >= GK_OP_COUNT) {
        return refuse("%s", node ? "op id out of range" : "node is NULL");
    }
    if (is_layout_op(node->op)) {
        return true;
    }
    if (!kernels().ops[node->op].run) {
        return refuse("op %s has no CPU kernel", gk_op_name(node->op));
    }
    const gk_tensor * dotted = node->op == GK_OP_MUL_MAT || node->op == GK_OP_MUL_MAT_ID ? node->src[0]
                               : node->op == GK_OP_FLASH_ATTN_EXT                         ? node->src[1]
                                                                                          : nullptr;
    if (dotted && !vec_dot_row_ok(dotted->type, dotted->ne[0])) {
        return refuse("op %s: type %s has no dot product for rows of %lld elements", gk_op_name(node->op),
                      gk_type_name(dotted->type), static_cast<long long>(dotted->ne[0]));
    }
    return true;
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
