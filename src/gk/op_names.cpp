// op_names.cpp - printable names of the ops, activations and GLUs, and of statuses.
// Each table is keyed by the enum value and checked at compile time to cover every value.
#include "gk/gk.h"

#include "common/keyed_table.h"

namespace {

struct op_entry {
    gk_op        key;
    const char * name;    // "MUL_MAT"
    const char * symbol;  // "mul_mat"
};

constexpr op_entry k_ops[] = {
    {GK_OP_NONE,                    "NONE",                    "none"},
    {GK_OP_DUP,                     "DUP",                     "dup"},
    {GK_OP_ADD,                     "ADD",                     "add"},
    {GK_OP_ADD_ID,                  "ADD_ID",                  "add_id"},
    {GK_OP_ADD1,                    "ADD1",                    "add1"},
    {GK_OP_ACC,                     "ACC",                     "acc"},
    {GK_OP_SUB,                     "SUB",                     "sub"},
    {GK_OP_MUL,                     "MUL",                     "mul"},
    {GK_OP_DIV,                     "DIV",                     "div"},
    {GK_OP_SQR,                     "SQR",                     "sqr"},
    {GK_OP_SQRT,                    "SQRT",                    "sqrt"},
    {GK_OP_LOG,                     "LOG",                     "log"},
    {GK_OP_SIN,                     "SIN",                     "sin"},
    {GK_OP_COS,                     "COS",                     "cos"},
    {GK_OP_SUM,                     "SUM",                     "sum"},
    {GK_OP_SUM_ROWS,                "SUM_ROWS",                "sum_rows"},
    {GK_OP_CUMSUM,                  "CUMSUM",                  "cumsum"},
    {GK_OP_MEAN,                    "MEAN",                    "mean"},
    {GK_OP_ARGMAX,                  "ARGMAX",                  "argmax"},
    {GK_OP_COUNT_EQUAL,             "COUNT_EQUAL",             "count_equal"},
    {GK_OP_REPEAT,                  "REPEAT",                  "repeat"},
    {GK_OP_REPEAT_BACK,             "REPEAT_BACK",             "repeat_back"},
    {GK_OP_CONCAT,                  "CONCAT",                  "concat"},
    {GK_OP_SILU_BACK,               "SILU_BACK",               "silu_back"},
    {GK_OP_NORM,                    "NORM",                    "norm"},
    {GK_OP_RMS_NORM,                "RMS_NORM",                "rms_norm"},
    {GK_OP_RMS_NORM_BACK,           "RMS_NORM_BACK",           "rms_norm_back"},
    {GK_OP_GROUP_NORM,              "GROUP_NORM",              "group_norm"},
    {GK_OP_L2_NORM,                 "L2_NORM",                 "l2_norm"},
    {GK_OP_MUL_MAT,                 "MUL_MAT",                 "mul_mat"},
    {GK_OP_MUL_MAT_ID,              "MUL_MAT_ID",              "mul_mat_id"},
    {GK_OP_OUT_PROD,                "OUT_PROD",                "out_prod"},
    {GK_OP_SCALE,                   "SCALE",                   "scale"},
    {GK_OP_SET,                     "SET",                     "set"},
    {GK_OP_CPY,                     "CPY",                     "cpy"},
    {GK_OP_CONT,                    "CONT",                    "cont"},
    {GK_OP_RESHAPE,                 "RESHAPE",                 "reshape"},
    {GK_OP_VIEW,                    "VIEW",                    "view"},
    {GK_OP_PERMUTE,                 "PERMUTE",                 "permute"},
    {GK_OP_TRANSPOSE,               "TRANSPOSE",               "transpose"},
    {GK_OP_GET_ROWS,                "GET_ROWS",                "get_rows"},
    {GK_OP_GET_ROWS_BACK,           "GET_ROWS_BACK",           "get_rows_back"},
    {GK_OP_SET_ROWS,                "SET_ROWS",                "set_rows"},
    {GK_OP_DIAG,                    "DIAG",                    "diag"},
    {GK_OP_DIAG_MASK_INF,           "DIAG_MASK_INF",           "diag_mask_inf"},
    {GK_OP_DIAG_MASK_ZERO,          "DIAG_MASK_ZERO",          "diag_mask_zero"},
    {GK_OP_SOFT_MAX,                "SOFT_MAX",                "soft_max"},
    {GK_OP_SOFT_MAX_BACK,           "SOFT_MAX_BACK",           "soft_max_back"},
    {GK_OP_ROPE,                    "ROPE",                    "rope"},
    {GK_OP_ROPE_BACK,               "ROPE_BACK",               "rope_back"},
    {GK_OP_CLAMP,                   "CLAMP",                   "clamp"},
    {GK_OP_CONV_TRANSPOSE_1D,       "CONV_TRANSPOSE_1D",       "conv_transpose_1d"},
    {GK_OP_IM2COL,                  "IM2COL",                  "im2col"},
    {GK_OP_IM2COL_BACK,             "IM2COL_BACK",             "im2col_back"},
    {GK_OP_IM2COL_3D,               "IM2COL_3D",               "im2col_3d"},
    {GK_OP_COL2IM_1D,               "COL2IM_1D",               "col2im_1d"},
    {GK_OP_CONV_2D,                 "CONV_2D",                 "conv_2d"},
    {GK_OP_CONV_3D,                 "CONV_3D",                 "conv_3d"},
    {GK_OP_CONV_2D_DW,              "CONV_2D_DW",              "conv_2d_dw"},
    {GK_OP_CONV_TRANSPOSE_2D,       "CONV_TRANSPOSE_2D",       "conv_transpose_2d"},
    {GK_OP_POOL_1D,                 "POOL_1D",                 "pool_1d"},
    {GK_OP_POOL_2D,                 "POOL_2D",                 "pool_2d"},
    {GK_OP_POOL_2D_BACK,            "POOL_2D_BACK",            "pool_2d_back"},
    {GK_OP_UPSCALE,                 "UPSCALE",                 "upscale"},
    {GK_OP_PAD,                     "PAD",                     "pad"},
    {GK_OP_PAD_REFLECT_1D,          "PAD_REFLECT_1D",          "pad_reflect_1d"},
    {GK_OP_ROLL,                    "ROLL",                    "roll"},
    {GK_OP_ARANGE,                  "ARANGE",                  "arange"},
    {GK_OP_TIMESTEP_EMBEDDING,      "TIMESTEP_EMBEDDING",      "timestep_embedding"},
    {GK_OP_ARGSORT,                 "ARGSORT",                 "argsort"},
    {GK_OP_TOP_K,                   "TOP_K",                   "top_k"},
    {GK_OP_LEAKY_RELU,              "LEAKY_RELU",              "leaky_relu"},
    {GK_OP_TRI,                     "TRI",                     "tri"},
    {GK_OP_FILL,                    "FILL",                    "fill"},
    {GK_OP_FLASH_ATTN_EXT,          "FLASH_ATTN_EXT",          "flash_attn_ext"},
    {GK_OP_FLASH_ATTN_BACK,         "FLASH_ATTN_BACK",         "flash_attn_back"},
    {GK_OP_SSM_CONV,                "SSM_CONV",                "ssm_conv"},
    {GK_OP_SSM_SCAN,                "SSM_SCAN",                "ssm_scan"},
    {GK_OP_WIN_PART,                "WIN_PART",                "win_part"},
    {GK_OP_WIN_UNPART,              "WIN_UNPART",              "win_unpart"},
    {GK_OP_GET_REL_POS,             "GET_REL_POS",             "get_rel_pos"},
    {GK_OP_ADD_REL_POS,             "ADD_REL_POS",             "add_rel_pos"},
    {GK_OP_RWKV_WKV6,               "RWKV_WKV6",               "rwkv_wkv6"},
    {GK_OP_GATED_LINEAR_ATTN,       "GATED_LINEAR_ATTN",       "gated_linear_attn"},
    {GK_OP_RWKV_WKV7,               "RWKV_WKV7",               "rwkv_wkv7"},
    {GK_OP_SOLVE_TRI,               "SOLVE_TRI",               "solve_tri"},
    {GK_OP_GATED_DELTA_NET,         "GATED_DELTA_NET",         "gated_delta_net"},
    {GK_OP_LIGHTNING_INDEXER,       "LIGHTNING_INDEXER",       "lightning_indexer"},
    {GK_OP_DSV4_HC_COMB,            "DSV4_HC_COMB",            "dsv4_hc_comb"},
    {GK_OP_DSV4_HC_PRE,             "DSV4_HC_PRE",             "dsv4_hc_pre"},
    {GK_OP_DSV4_HC_POST,            "DSV4_HC_POST",            "dsv4_hc_post"},
    {GK_OP_UNARY,                   "UNARY",                   "unary"},
    {GK_OP_MAP_CUSTOM1,             "MAP_CUSTOM1",             "map_custom1"},
    {GK_OP_MAP_CUSTOM2,             "MAP_CUSTOM2",             "map_custom2"},
    {GK_OP_MAP_CUSTOM3,             "MAP_CUSTOM3",             "map_custom3"},
    {GK_OP_CUSTOM,                  "CUSTOM",                  "custom"},
    {GK_OP_CROSS_ENTROPY_LOSS,      "CROSS_ENTROPY_LOSS",      "cross_entropy_loss"},
    {GK_OP_CROSS_ENTROPY_LOSS_BACK, "CROSS_ENTROPY_LOSS_BACK", "cross_entropy_loss_back"},
    {GK_OP_OPT_STEP_ADAMW,          "OPT_STEP_ADAMW",          "opt_step_adamw"},
    {GK_OP_OPT_STEP_SGD,            "OPT_STEP_SGD",            "opt_step_sgd"},
    {GK_OP_GLU,                     "GLU",                     "glu"},
};
static_assert(gk::keyed_table_complete(k_ops, GK_OP_COUNT), "k_ops must list every gk_op in value order");

struct unary_entry {
    gk_unary_op  key;
    const char * name;
};

constexpr unary_entry k_unary[] = {
    {GK_UNARY_OP_ABS, "ABS"},
    {GK_UNARY_OP_SGN, "SGN"},
    {GK_UNARY_OP_NEG, "NEG"},
    {GK_UNARY_OP_STEP, "STEP"},
    {GK_UNARY_OP_TANH, "TANH"},
    {GK_UNARY_OP_ELU, "ELU"},
    {GK_UNARY_OP_RELU, "RELU"},
    {GK_UNARY_OP_SIGMOID, "SIGMOID"},
    {GK_UNARY_OP_GELU, "GELU"},
    {GK_UNARY_OP_GELU_QUICK, "GELU_QUICK"},
    {GK_UNARY_OP_SILU, "SILU"},
    {GK_UNARY_OP_HARDSWISH, "HARDSWISH"},
    {GK_UNARY_OP_HARDSIGMOID, "HARDSIGMOID"},
    {GK_UNARY_OP_EXP, "EXP"},
    {GK_UNARY_OP_EXPM1, "EXPM1"},
    {GK_UNARY_OP_SOFTPLUS, "SOFTPLUS"},
    {GK_UNARY_OP_GELU_ERF, "GELU_ERF"},
    {GK_UNARY_OP_XIELU, "XIELU"},
    {GK_UNARY_OP_FLOOR, "FLOOR"},
    {GK_UNARY_OP_CEIL, "CEIL"},
    {GK_UNARY_OP_ROUND, "ROUND"},
    {GK_UNARY_OP_TRUNC, "TRUNC"},
};
static_assert(gk::keyed_table_complete(k_unary, GK_UNARY_OP_COUNT), "k_unary must list every gk_unary_op in value order");

struct glu_entry {
    gk_glu_op    key;
    const char * name;
};

constexpr glu_entry k_glu[] = {
    {GK_GLU_OP_REGLU, "REGLU"},
    {GK_GLU_OP_GEGLU, "GEGLU"},
    {GK_GLU_OP_SWIGLU, "SWIGLU"},
    {GK_GLU_OP_SWIGLU_OAI, "SWIGLU_OAI"},
    {GK_GLU_OP_GEGLU_ERF, "GEGLU_ERF"},
    {GK_GLU_OP_GEGLU_QUICK, "GEGLU_QUICK"},
    {GK_GLU_OP_SWIGLU_CLAMP, "SWIGLU_CLAMP"},
};
static_assert(gk::keyed_table_complete(k_glu, GK_GLU_OP_COUNT), "k_glu must list every gk_glu_op in value order");

} // namespace

extern "C" {

const char * gk_op_name(gk_op op) { return op >= 0 && op < GK_OP_COUNT ? k_ops[op].name : "?"; }

const char * gk_op_symbol(gk_op op) { return op >= 0 && op < GK_OP_COUNT ? k_ops[op].symbol : "?"; }

const char * gk_unary_op_name(gk_unary_op op) {
    return op >= 0 && op < GK_UNARY_OP_COUNT ? k_unary[op].name : "?";
}

const char * gk_glu_op_name(gk_glu_op op) { return op >= 0 && op < GK_GLU_OP_COUNT ? k_glu[op].name : "?"; }

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
