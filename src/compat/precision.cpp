// precision.cpp - ggml's precision and hint requests on nodes. ggml records them in the
// node's op_params (mul_mat: accumulation precision at 0, hint at 1, source precision at
// 2 + idx; flash_attn_ext: precision at 3, n_kv_max at 4) for backends that compute at
// several precisions; compat records them in the same slots. gk's kernels compute every
// op at one precision (f32 accumulation) and ignore them, as ggml's CPU backend does.
#include "convert.h"

namespace {

void require_op(const ggml_tensor * a, ggml_op op, const char * fn) {
    if (!a || a->op != op) {
        ggml_abort(__FILE__, __LINE__, "%s: the node is not a %s node", fn, ggml_op_name(op));
    }
}

} // namespace

extern "C" {

bool ggml_prec_set_acc(struct ggml_tensor * a, enum ggml_prec prec) {
    switch (a->op) {
    case GGML_OP_MUL_MAT:
    case GGML_OP_MUL_MAT_ID: a->op_params[0] = prec; return true;
    case GGML_OP_FLASH_ATTN_EXT: a->op_params[3] = prec; return true;
    default: return false;
    }
}

bool ggml_prec_set_src(struct ggml_tensor * a, enum ggml_prec prec, int idx) {
    if (idx < 0 || idx >= GGML_MAX_SRC) {
        ggml_abort(__FILE__, __LINE__, "ggml_prec_set_src: source index %d outside [0, %d)", idx, GGML_MAX_SRC);
    }
    if ((a->op != GGML_OP_MUL_MAT && a->op != GGML_OP_MUL_MAT_ID) || idx != 1) {
        return false;
    }
    a->op_params[2 + idx] = prec;
    return true;
}

void ggml_mul_mat_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    require_op(a, GGML_OP_MUL_MAT, "ggml_mul_mat_set_prec");
    a->op_params[0] = prec;
}

void ggml_mul_mat_set_hint(struct ggml_tensor * a, enum ggml_op_hint hint) {
    require_op(a, GGML_OP_MUL_MAT, "ggml_mul_mat_set_hint");
    a->op_params[1] = hint;
}

void ggml_flash_attn_ext_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    require_op(a, GGML_OP_FLASH_ATTN_EXT, "ggml_flash_attn_ext_set_prec");
    a->op_params[3] = prec;
}

enum ggml_prec ggml_flash_attn_ext_get_prec(const struct ggml_tensor * a) {
    require_op(a, GGML_OP_FLASH_ATTN_EXT, "ggml_flash_attn_ext_get_prec");
    return static_cast<ggml_prec>(a->op_params[3]);
}

void ggml_flash_attn_ext_set_n_kv_max(struct ggml_tensor * a, int32_t n_kv_max) {
    require_op(a, GGML_OP_FLASH_ATTN_EXT, "ggml_flash_attn_ext_set_n_kv_max");
    if (n_kv_max < 0) {
        ggml_abort(__FILE__, __LINE__, "ggml_flash_attn_ext_set_n_kv_max: negative n_kv_max %d", n_kv_max);
    }
    a->op_params[4] = n_kv_max;
}

} // extern "C"
