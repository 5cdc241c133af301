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

} // namespace gk::cpu
