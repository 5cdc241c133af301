// op_names.cpp - printable names of the ops, activations and GLUs, and of statuses.
#include "gk/gk.h"

namespace {

constexpr const char * k_op_names[GK_OP_COUNT] = {
    "NONE", "DUP", "ADD", "ADD_ID", "ADD1", "ACC", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG",
    "SIN", "COS", "SUM", "SUM_ROWS", "CUMSUM", "MEAN", "ARGMAX", "COUNT_EQUAL", "REPEAT",
    "REPEAT_BACK", "CONCAT", "SILU_BACK", "NORM", "RMS_NORM", "RMS_NORM_BACK", "GROUP_NORM",
    "L2_NORM", "MUL_MAT", "MUL_MAT_ID", "OUT_PROD", "SCALE", "SET", "CPY", "CONT", "RESHAPE",
    "VIEW", "PERMUTE", "TRANSPOSE", "GET_ROWS", "GET_ROWS_BACK", "SET_ROWS", "DIAG",
    "DIAG_MASK_INF", "DIAG_MASK_ZERO", "SOFT_MAX", "SOFT_MAX_BACK", "ROPE", "ROPE_BACK", "CLAMP",
    "CONV_TRANSPOSE_1D", "IM2COL", "IM2COL_BACK", "IM2COL_3D", "COL2IM_1D", "CONV_2D", "CONV_3D",
    "CONV_2D_DW", "CONV_TRANSPOSE_2D", "POOL_1D", "POOL_2D", "POOL_2D_BACK", "UPSCALE", "PAD",
    "PAD_REFLECT_1D", "ROLL", "ARANGE", "TIMESTEP_EMBEDDING", "ARGSORT", "TOP_K", "LEAKY_RELU",
    "TRI", "FILL", "FLASH_ATTN_EXT", "FLASH_ATTN_BACK", "SSM_CONV", "SSM_SCAN", "WIN_PART",
    "WIN_UNPART", "GET_REL_POS", "ADD_REL_POS", "RWKV_WKV6", "GATED_LINEAR_ATTN", "RWKV_WKV7",
    "SOLVE_TRI", "GATED_DELTA_NET", "LIGHTNING_INDEXER", "DSV4_HC_COMB", "DSV4_HC_PRE",
    "DSV4_HC_POST", "UNARY", "MAP_CUSTOM1", "MAP_CUSTOM2", "MAP_CUSTOM3", "CUSTOM",
    "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK", "OPT_STEP_ADAMW", "OPT_STEP_SGD", "GLU",
};

constexpr const char * k_op_symbols[GK_OP_COUNT] = {
    "none", "dup", "add", "add_id", "add1", "acc", "sub", "mul", "div", "sqr", "sqrt", "log",
    "sin", "cos", "sum", "sum_rows", "cumsum", "mean", "argmax", "count_equal", "repeat",
    "repeat_back", "concat", "silu_back", "norm", "rms_norm", "rms_norm_back", "group_norm",
    "l2_norm", "mul_mat", "mul_mat_id", "out_prod", "scale", "set", "cpy", "cont", "reshape",
    "view", "permute", "transpose", "get_rows", "get_rows_back", "set_rows", "diag",
    "diag_mask_inf", "diag_mask_zero", "soft_max", "soft_max_back", "rope", "rope_back", "clamp",
    "conv_transpose_1d", "im2col", "im2col_back", "im2col_3d", "col2im_1d", "conv_2d", "conv_3d",
    "conv_2d_dw", "conv_transpose_2d", "pool_1d", "pool_2d", "pool_2d_back", "upscale", "pad",
    "pad_reflect_1d", "roll", "arange", "timestep_embedding", "argsort", "top_k", "leaky_relu",
    "tri", "fill", "flash_attn_ext", "flash_attn_back", "ssm_conv", "ssm_scan", "win_part",
    "win_unpart", "get_rel_pos", "add_rel_pos", "rwkv_wkv6", "gated_linear_attn", "rwkv_wkv7",
    "solve_tri", "gated_delta_net", "lightning_indexer", "dsv4_hc_comb", "dsv4_hc_pre",
    "dsv4_hc_post", "unary", "map_custom1", "map_custom2", "map_custom3", "custom",
    "cross_entropy_loss", "cross_entropy_loss_back", "opt_step_adamw", "opt_step_sgd", "glu",
};

constexpr const char * k_unary_names[GK_UNARY_OP_COUNT] = {
    "ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID", "GELU", "GELU_QUICK", "SILU",
    "HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS", "GELU_ERF", "XIELU", "FLOOR", "CEIL",
    "ROUND", "TRUNC",
};

constexpr const char * k_glu_names[GK_GLU_OP_COUNT] = {
    "REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK", "SWIGLU_CLAMP",
};

} // namespace

extern "C" {

const char * gk_op_name(gk_op op) { return op >= 0 && op < GK_OP_COUNT ? k_op_names[op] : "?"; }

const char * gk_op_symbol(gk_op op) { return op >= 0 && op < GK_OP_COUNT ? k_op_symbols[op] : "?"; }

const char * gk_unary_op_name(gk_unary_op op) {
    return op >= 0 && op < GK_UNARY_OP_COUNT ? k_unary_names[op] : "?";
}

const char * gk_glu_op_name(gk_glu_op op) { return op >= 0 && op < GK_GLU_OP_COUNT ? k_glu_names[op] : "?"; }

const char * gk_status_name(gk_status status) {
    switch (status) {
    case GK_STATUS_ABORTED: return "aborted";
    case GK_STATUS_SUCCESS: return "success";
    case GK_STATUS_FAILED: return "failed";
    case GK_STATUS_ALLOC_FAILED: return "allocation failed";
    case GK_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case GK_STATUS_OUT_OF_RANGE: return "out of range";
    case GK_STATUS_UNSUPPORTED: return "unsupported";
    }
    return "?";
}

} // extern "C"
