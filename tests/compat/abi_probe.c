/* abi_probe.c - prints the ABI facts of the ggml headers it is compiled against: every enum
 * value, the macros programs rely on, and the size and field offsets of the shared structs.
 * Built twice by test-compat-abi, against the reference ggml's headers and against
 * include/ggml, whose outputs must be equal line for line. */
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "gguf.h"

#include <stddef.h>
#include <stdio.h>

#define P(what, value) printf("%s = %lld\n", what, value)

int main(void) {
    P("enum GGML_STATUS_ALLOC_FAILED", (long long) GGML_STATUS_ALLOC_FAILED);
    P("enum GGML_STATUS_FAILED", (long long) GGML_STATUS_FAILED);
    P("enum GGML_STATUS_SUCCESS", (long long) GGML_STATUS_SUCCESS);
    P("enum GGML_STATUS_ABORTED", (long long) GGML_STATUS_ABORTED);
    P("enum GGML_TYPE_F32", (long long) GGML_TYPE_F32);
    P("enum GGML_TYPE_F16", (long long) GGML_TYPE_F16);
    P("enum GGML_TYPE_Q4_0", (long long) GGML_TYPE_Q4_0);
    P("enum GGML_TYPE_Q4_1", (long long) GGML_TYPE_Q4_1);
    P("enum GGML_TYPE_Q5_0", (long long) GGML_TYPE_Q5_0);
    P("enum GGML_TYPE_Q5_1", (long long) GGML_TYPE_Q5_1);
    P("enum GGML_TYPE_Q8_0", (long long) GGML_TYPE_Q8_0);
    P("enum GGML_TYPE_Q8_1", (long long) GGML_TYPE_Q8_1);
    P("enum GGML_TYPE_Q2_K", (long long) GGML_TYPE_Q2_K);
    P("enum GGML_TYPE_Q3_K", (long long) GGML_TYPE_Q3_K);
    P("enum GGML_TYPE_Q4_K", (long long) GGML_TYPE_Q4_K);
    P("enum GGML_TYPE_Q5_K", (long long) GGML_TYPE_Q5_K);
    P("enum GGML_TYPE_Q6_K", (long long) GGML_TYPE_Q6_K);
    P("enum GGML_TYPE_Q8_K", (long long) GGML_TYPE_Q8_K);
    P("enum GGML_TYPE_IQ2_XXS", (long long) GGML_TYPE_IQ2_XXS);
    P("enum GGML_TYPE_IQ2_XS", (long long) GGML_TYPE_IQ2_XS);
    P("enum GGML_TYPE_IQ3_XXS", (long long) GGML_TYPE_IQ3_XXS);
    P("enum GGML_TYPE_IQ1_S", (long long) GGML_TYPE_IQ1_S);
    P("enum GGML_TYPE_IQ4_NL", (long long) GGML_TYPE_IQ4_NL);
    P("enum GGML_TYPE_IQ3_S", (long long) GGML_TYPE_IQ3_S);
    P("enum GGML_TYPE_IQ2_S", (long long) GGML_TYPE_IQ2_S);
    P("enum GGML_TYPE_IQ4_XS", (long long) GGML_TYPE_IQ4_XS);
    P("enum GGML_TYPE_I8", (long long) GGML_TYPE_I8);
    P("enum GGML_TYPE_I16", (long long) GGML_TYPE_I16);
    P("enum GGML_TYPE_I32", (long long) GGML_TYPE_I32);
    P("enum GGML_TYPE_I64", (long long) GGML_TYPE_I64);
    P("enum GGML_TYPE_F64", (long long) GGML_TYPE_F64);
    P("enum GGML_TYPE_IQ1_M", (long long) GGML_TYPE_IQ1_M);
    P("enum GGML_TYPE_BF16", (long long) GGML_TYPE_BF16);
    P("enum GGML_TYPE_TQ1_0", (long long) GGML_TYPE_TQ1_0);
    P("enum GGML_TYPE_TQ2_0", (long long) GGML_TYPE_TQ2_0);
    P("enum GGML_TYPE_MXFP4", (long long) GGML_TYPE_MXFP4);
    P("enum GGML_TYPE_NVFP4", (long long) GGML_TYPE_NVFP4);
    P("enum GGML_TYPE_Q1_0", (long long) GGML_TYPE_Q1_0);
    P("enum GGML_TYPE_Q2_0", (long long) GGML_TYPE_Q2_0);
    P("enum GGML_TYPE_COUNT", (long long) GGML_TYPE_COUNT);
    P("enum GGML_PREC_UNDEFINED", (long long) GGML_PREC_UNDEFINED);
    P("enum GGML_PREC_DEFAULT", (long long) GGML_PREC_DEFAULT);
    P("enum GGML_PREC_F32", (long long) GGML_PREC_F32);
    P("enum GGML_PREC_BF16", (long long) GGML_PREC_BF16);
    P("enum GGML_PREC_F16", (long long) GGML_PREC_F16);
    P("enum GGML_PREC_Q8", (long long) GGML_PREC_Q8);
    P("enum GGML_PREC_Q4", (long long) GGML_PREC_Q4);
    P("enum GGML_FTYPE_UNKNOWN", (long long) GGML_FTYPE_UNKNOWN);
    P("enum GGML_FTYPE_ALL_F32", (long long) GGML_FTYPE_ALL_F32);
    P("enum GGML_FTYPE_MOSTLY_F16", (long long) GGML_FTYPE_MOSTLY_F16);
    P("enum GGML_FTYPE_MOSTLY_Q4_0", (long long) GGML_FTYPE_MOSTLY_Q4_0);
    P("enum GGML_FTYPE_MOSTLY_Q4_1", (long long) GGML_FTYPE_MOSTLY_Q4_1);
    P("enum GGML_FTYPE_MOSTLY_Q4_1_SOME_F16", (long long) GGML_FTYPE_MOSTLY_Q4_1_SOME_F16);
    P("enum GGML_FTYPE_MOSTLY_Q8_0", (long long) GGML_FTYPE_MOSTLY_Q8_0);
    P("enum GGML_FTYPE_MOSTLY_Q5_0", (long long) GGML_FTYPE_MOSTLY_Q5_0);
    P("enum GGML_FTYPE_MOSTLY_Q5_1", (long long) GGML_FTYPE_MOSTLY_Q5_1);
    P("enum GGML_FTYPE_MOSTLY_Q2_K", (long long) GGML_FTYPE_MOSTLY_Q2_K);
    P("enum GGML_FTYPE_MOSTLY_Q3_K", (long long) GGML_FTYPE_MOSTLY_Q3_K);
    P("enum GGML_FTYPE_MOSTLY_Q4_K", (long long) GGML_FTYPE_MOSTLY_Q4_K);
    P("enum GGML_FTYPE_MOSTLY_Q5_K", (long long) GGML_FTYPE_MOSTLY_Q5_K);
    P("enum GGML_FTYPE_MOSTLY_Q6_K", (long long) GGML_FTYPE_MOSTLY_Q6_K);
    P("enum GGML_FTYPE_MOSTLY_IQ2_XXS", (long long) GGML_FTYPE_MOSTLY_IQ2_XXS);
    P("enum GGML_FTYPE_MOSTLY_IQ2_XS", (long long) GGML_FTYPE_MOSTLY_IQ2_XS);
    P("enum GGML_FTYPE_MOSTLY_IQ3_XXS", (long long) GGML_FTYPE_MOSTLY_IQ3_XXS);
    P("enum GGML_FTYPE_MOSTLY_IQ1_S", (long long) GGML_FTYPE_MOSTLY_IQ1_S);
    P("enum GGML_FTYPE_MOSTLY_IQ4_NL", (long long) GGML_FTYPE_MOSTLY_IQ4_NL);
    P("enum GGML_FTYPE_MOSTLY_IQ3_S", (long long) GGML_FTYPE_MOSTLY_IQ3_S);
    P("enum GGML_FTYPE_MOSTLY_IQ2_S", (long long) GGML_FTYPE_MOSTLY_IQ2_S);
    P("enum GGML_FTYPE_MOSTLY_IQ4_XS", (long long) GGML_FTYPE_MOSTLY_IQ4_XS);
    P("enum GGML_FTYPE_MOSTLY_IQ1_M", (long long) GGML_FTYPE_MOSTLY_IQ1_M);
    P("enum GGML_FTYPE_MOSTLY_BF16", (long long) GGML_FTYPE_MOSTLY_BF16);
    P("enum GGML_FTYPE_MOSTLY_MXFP4", (long long) GGML_FTYPE_MOSTLY_MXFP4);
    P("enum GGML_FTYPE_MOSTLY_NVFP4", (long long) GGML_FTYPE_MOSTLY_NVFP4);
    P("enum GGML_FTYPE_MOSTLY_Q1_0", (long long) GGML_FTYPE_MOSTLY_Q1_0);
    P("enum GGML_FTYPE_MOSTLY_Q2_0", (long long) GGML_FTYPE_MOSTLY_Q2_0);
    P("enum GGML_OP_NONE", (long long) GGML_OP_NONE);
    P("enum GGML_OP_DUP", (long long) GGML_OP_DUP);
    P("enum GGML_OP_ADD", (long long) GGML_OP_ADD);
    P("enum GGML_OP_ADD_ID", (long long) GGML_OP_ADD_ID);
    P("enum GGML_OP_ADD1", (long long) GGML_OP_ADD1);
    P("enum GGML_OP_ACC", (long long) GGML_OP_ACC);
    P("enum GGML_OP_SUB", (long long) GGML_OP_SUB);
    P("enum GGML_OP_MUL", (long long) GGML_OP_MUL);
    P("enum GGML_OP_DIV", (long long) GGML_OP_DIV);
    P("enum GGML_OP_SQR", (long long) GGML_OP_SQR);
    P("enum GGML_OP_SQRT", (long long) GGML_OP_SQRT);
    P("enum GGML_OP_LOG", (long long) GGML_OP_LOG);
    P("enum GGML_OP_SIN", (long long) GGML_OP_SIN);
    P("enum GGML_OP_COS", (long long) GGML_OP_COS);
    P("enum GGML_OP_SUM", (long long) GGML_OP_SUM);
    P("enum GGML_OP_SUM_ROWS", (long long) GGML_OP_SUM_ROWS);
    P("enum GGML_OP_CUMSUM", (long long) GGML_OP_CUMSUM);
    P("enum GGML_OP_MEAN", (long long) GGML_OP_MEAN);
    P("enum GGML_OP_ARGMAX", (long long) GGML_OP_ARGMAX);
    P("enum GGML_OP_COUNT_EQUAL", (long long) GGML_OP_COUNT_EQUAL);
    P("enum GGML_OP_REPEAT", (long long) GGML_OP_REPEAT);
    P("enum GGML_OP_REPEAT_BACK", (long long) GGML_OP_REPEAT_BACK);
    P("enum GGML_OP_CONCAT", (long long) GGML_OP_CONCAT);
    P("enum GGML_OP_SILU_BACK", (long long) GGML_OP_SILU_BACK);
    P("enum GGML_OP_NORM", (long long) GGML_OP_NORM);
    P("enum GGML_OP_RMS_NORM", (long long) GGML_OP_RMS_NORM);
    P("enum GGML_OP_RMS_NORM_BACK", (long long) GGML_OP_RMS_NORM_BACK);
    P("enum GGML_OP_GROUP_NORM", (long long) GGML_OP_GROUP_NORM);
    P("enum GGML_OP_L2_NORM", (long long) GGML_OP_L2_NORM);
    P("enum GGML_OP_MUL_MAT", (long long) GGML_OP_MUL_MAT);
    P("enum GGML_OP_MUL_MAT_ID", (long long) GGML_OP_MUL_MAT_ID);
    P("enum GGML_OP_OUT_PROD", (long long) GGML_OP_OUT_PROD);
    P("enum GGML_OP_SCALE", (long long) GGML_OP_SCALE);
    P("enum GGML_OP_SET", (long long) GGML_OP_SET);
    P("enum GGML_OP_CPY", (long long) GGML_OP_CPY);
    P("enum GGML_OP_CONT", (long long) GGML_OP_CONT);
    P("enum GGML_OP_RESHAPE", (long long) GGML_OP_RESHAPE);
    P("enum GGML_OP_VIEW", (long long) GGML_OP_VIEW);
    P("enum GGML_OP_PERMUTE", (long long) GGML_OP_PERMUTE);
    P("enum GGML_OP_TRANSPOSE", (long long) GGML_OP_TRANSPOSE);
    P("enum GGML_OP_GET_ROWS", (long long) GGML_OP_GET_ROWS);
    P("enum GGML_OP_GET_ROWS_BACK", (long long) GGML_OP_GET_ROWS_BACK);
    P("enum GGML_OP_SET_ROWS", (long long) GGML_OP_SET_ROWS);
    P("enum GGML_OP_DIAG", (long long) GGML_OP_DIAG);
    P("enum GGML_OP_DIAG_MASK_INF", (long long) GGML_OP_DIAG_MASK_INF);
    P("enum GGML_OP_DIAG_MASK_ZERO", (long long) GGML_OP_DIAG_MASK_ZERO);
    P("enum GGML_OP_SOFT_MAX", (long long) GGML_OP_SOFT_MAX);
    P("enum GGML_OP_SOFT_MAX_BACK", (long long) GGML_OP_SOFT_MAX_BACK);
    P("enum GGML_OP_ROPE", (long long) GGML_OP_ROPE);
    P("enum GGML_OP_ROPE_BACK", (long long) GGML_OP_ROPE_BACK);
    P("enum GGML_OP_CLAMP", (long long) GGML_OP_CLAMP);
    P("enum GGML_OP_CONV_TRANSPOSE_1D", (long long) GGML_OP_CONV_TRANSPOSE_1D);
    P("enum GGML_OP_IM2COL", (long long) GGML_OP_IM2COL);
    P("enum GGML_OP_IM2COL_BACK", (long long) GGML_OP_IM2COL_BACK);
    P("enum GGML_OP_IM2COL_3D", (long long) GGML_OP_IM2COL_3D);
    P("enum GGML_OP_COL2IM_1D", (long long) GGML_OP_COL2IM_1D);
    P("enum GGML_OP_CONV_2D", (long long) GGML_OP_CONV_2D);
    P("enum GGML_OP_CONV_3D", (long long) GGML_OP_CONV_3D);
    P("enum GGML_OP_CONV_2D_DW", (long long) GGML_OP_CONV_2D_DW);
    P("enum GGML_OP_CONV_TRANSPOSE_2D", (long long) GGML_OP_CONV_TRANSPOSE_2D);
    P("enum GGML_OP_POOL_1D", (long long) GGML_OP_POOL_1D);
    P("enum GGML_OP_POOL_2D", (long long) GGML_OP_POOL_2D);
    P("enum GGML_OP_POOL_2D_BACK", (long long) GGML_OP_POOL_2D_BACK);
    P("enum GGML_OP_UPSCALE", (long long) GGML_OP_UPSCALE);
    P("enum GGML_OP_PAD", (long long) GGML_OP_PAD);
    P("enum GGML_OP_PAD_REFLECT_1D", (long long) GGML_OP_PAD_REFLECT_1D);
    P("enum GGML_OP_ROLL", (long long) GGML_OP_ROLL);
    P("enum GGML_OP_ARANGE", (long long) GGML_OP_ARANGE);
    P("enum GGML_OP_TIMESTEP_EMBEDDING", (long long) GGML_OP_TIMESTEP_EMBEDDING);
    P("enum GGML_OP_ARGSORT", (long long) GGML_OP_ARGSORT);
    P("enum GGML_OP_TOP_K", (long long) GGML_OP_TOP_K);
    P("enum GGML_OP_LEAKY_RELU", (long long) GGML_OP_LEAKY_RELU);
    P("enum GGML_OP_TRI", (long long) GGML_OP_TRI);
    P("enum GGML_OP_FILL", (long long) GGML_OP_FILL);
    P("enum GGML_OP_FLASH_ATTN_EXT", (long long) GGML_OP_FLASH_ATTN_EXT);
    P("enum GGML_OP_FLASH_ATTN_BACK", (long long) GGML_OP_FLASH_ATTN_BACK);
    P("enum GGML_OP_SSM_CONV", (long long) GGML_OP_SSM_CONV);
    P("enum GGML_OP_SSM_SCAN", (long long) GGML_OP_SSM_SCAN);
    P("enum GGML_OP_WIN_PART", (long long) GGML_OP_WIN_PART);
    P("enum GGML_OP_WIN_UNPART", (long long) GGML_OP_WIN_UNPART);
    P("enum GGML_OP_GET_REL_POS", (long long) GGML_OP_GET_REL_POS);
    P("enum GGML_OP_ADD_REL_POS", (long long) GGML_OP_ADD_REL_POS);
    P("enum GGML_OP_RWKV_WKV6", (long long) GGML_OP_RWKV_WKV6);
    P("enum GGML_OP_GATED_LINEAR_ATTN", (long long) GGML_OP_GATED_LINEAR_ATTN);
    P("enum GGML_OP_RWKV_WKV7", (long long) GGML_OP_RWKV_WKV7);
    P("enum GGML_OP_SOLVE_TRI", (long long) GGML_OP_SOLVE_TRI);
    P("enum GGML_OP_GATED_DELTA_NET", (long long) GGML_OP_GATED_DELTA_NET);
    P("enum GGML_OP_LIGHTNING_INDEXER", (long long) GGML_OP_LIGHTNING_INDEXER);
    P("enum GGML_OP_DSV4_HC_COMB", (long long) GGML_OP_DSV4_HC_COMB);
    P("enum GGML_OP_DSV4_HC_PRE", (long long) GGML_OP_DSV4_HC_PRE);
    P("enum GGML_OP_DSV4_HC_POST", (long long) GGML_OP_DSV4_HC_POST);
    P("enum GGML_OP_UNARY", (long long) GGML_OP_UNARY);
    P("enum GGML_OP_MAP_CUSTOM1", (long long) GGML_OP_MAP_CUSTOM1);
    P("enum GGML_OP_MAP_CUSTOM2", (long long) GGML_OP_MAP_CUSTOM2);
    P("enum GGML_OP_MAP_CUSTOM3", (long long) GGML_OP_MAP_CUSTOM3);
    P("enum GGML_OP_CUSTOM", (long long) GGML_OP_CUSTOM);
    P("enum GGML_OP_CROSS_ENTROPY_LOSS", (long long) GGML_OP_CROSS_ENTROPY_LOSS);
    P("enum GGML_OP_CROSS_ENTROPY_LOSS_BACK", (long long) GGML_OP_CROSS_ENTROPY_LOSS_BACK);
    P("enum GGML_OP_OPT_STEP_ADAMW", (long long) GGML_OP_OPT_STEP_ADAMW);
    P("enum GGML_OP_OPT_STEP_SGD", (long long) GGML_OP_OPT_STEP_SGD);
    P("enum GGML_OP_GLU", (long long) GGML_OP_GLU);
    P("enum GGML_OP_COUNT", (long long) GGML_OP_COUNT);
    P("enum GGML_UNARY_OP_ABS", (long long) GGML_UNARY_OP_ABS);
    P("enum GGML_UNARY_OP_SGN", (long long) GGML_UNARY_OP_SGN);
    P("enum GGML_UNARY_OP_NEG", (long long) GGML_UNARY_OP_NEG);
    P("enum GGML_UNARY_OP_STEP", (long long) GGML_UNARY_OP_STEP);
    P("enum GGML_UNARY_OP_TANH", (long long) GGML_UNARY_OP_TANH);
    P("enum GGML_UNARY_OP_ELU", (long long) GGML_UNARY_OP_ELU);
    P("enum GGML_UNARY_OP_RELU", (long long) GGML_UNARY_OP_RELU);
    P("enum GGML_UNARY_OP_SIGMOID", (long long) GGML_UNARY_OP_SIGMOID);
    P("enum GGML_UNARY_OP_GELU", (long long) GGML_UNARY_OP_GELU);
    P("enum GGML_UNARY_OP_GELU_QUICK", (long long) GGML_UNARY_OP_GELU_QUICK);
    P("enum GGML_UNARY_OP_SILU", (long long) GGML_UNARY_OP_SILU);
    P("enum GGML_UNARY_OP_HARDSWISH", (long long) GGML_UNARY_OP_HARDSWISH);
    P("enum GGML_UNARY_OP_HARDSIGMOID", (long long) GGML_UNARY_OP_HARDSIGMOID);
    P("enum GGML_UNARY_OP_EXP", (long long) GGML_UNARY_OP_EXP);
    P("enum GGML_UNARY_OP_EXPM1", (long long) GGML_UNARY_OP_EXPM1);
    P("enum GGML_UNARY_OP_SOFTPLUS", (long long) GGML_UNARY_OP_SOFTPLUS);
    P("enum GGML_UNARY_OP_GELU_ERF", (long long) GGML_UNARY_OP_GELU_ERF);
    P("enum GGML_UNARY_OP_XIELU", (long long) GGML_UNARY_OP_XIELU);
    P("enum GGML_UNARY_OP_FLOOR", (long long) GGML_UNARY_OP_FLOOR);
    P("enum GGML_UNARY_OP_CEIL", (long long) GGML_UNARY_OP_CEIL);
    P("enum GGML_UNARY_OP_ROUND", (long long) GGML_UNARY_OP_ROUND);
    P("enum GGML_UNARY_OP_TRUNC", (long long) GGML_UNARY_OP_TRUNC);
    P("enum GGML_UNARY_OP_COUNT", (long long) GGML_UNARY_OP_COUNT);
    P("enum GGML_GLU_OP_REGLU", (long long) GGML_GLU_OP_REGLU);
    P("enum GGML_GLU_OP_GEGLU", (long long) GGML_GLU_OP_GEGLU);
    P("enum GGML_GLU_OP_SWIGLU", (long long) GGML_GLU_OP_SWIGLU);
    P("enum GGML_GLU_OP_SWIGLU_OAI", (long long) GGML_GLU_OP_SWIGLU_OAI);
    P("enum GGML_GLU_OP_GEGLU_ERF", (long long) GGML_GLU_OP_GEGLU_ERF);
    P("enum GGML_GLU_OP_GEGLU_QUICK", (long long) GGML_GLU_OP_GEGLU_QUICK);
    P("enum GGML_GLU_OP_SWIGLU_CLAMP", (long long) GGML_GLU_OP_SWIGLU_CLAMP);
    P("enum GGML_GLU_OP_COUNT", (long long) GGML_GLU_OP_COUNT);
    P("enum GGML_OBJECT_TYPE_TENSOR", (long long) GGML_OBJECT_TYPE_TENSOR);
    P("enum GGML_OBJECT_TYPE_GRAPH", (long long) GGML_OBJECT_TYPE_GRAPH);
    P("enum GGML_OBJECT_TYPE_WORK_BUFFER", (long long) GGML_OBJECT_TYPE_WORK_BUFFER);
    P("enum GGML_LOG_LEVEL_NONE", (long long) GGML_LOG_LEVEL_NONE);
    P("enum GGML_LOG_LEVEL_DEBUG", (long long) GGML_LOG_LEVEL_DEBUG);
    P("enum GGML_LOG_LEVEL_INFO", (long long) GGML_LOG_LEVEL_INFO);
    P("enum GGML_LOG_LEVEL_WARN", (long long) GGML_LOG_LEVEL_WARN);
    P("enum GGML_LOG_LEVEL_ERROR", (long long) GGML_LOG_LEVEL_ERROR);
    P("enum GGML_LOG_LEVEL_CONT", (long long) GGML_LOG_LEVEL_CONT);
    P("enum GGML_TENSOR_FLAG_INPUT", (long long) GGML_TENSOR_FLAG_INPUT);
    P("enum GGML_TENSOR_FLAG_OUTPUT", (long long) GGML_TENSOR_FLAG_OUTPUT);
    P("enum GGML_TENSOR_FLAG_PARAM", (long long) GGML_TENSOR_FLAG_PARAM);
    P("enum GGML_TENSOR_FLAG_LOSS", (long long) GGML_TENSOR_FLAG_LOSS);
    P("enum GGML_TENSOR_FLAG_COMPUTE", (long long) GGML_TENSOR_FLAG_COMPUTE);
    P("enum GGML_OP_POOL_MAX", (long long) GGML_OP_POOL_MAX);
    P("enum GGML_OP_POOL_AVG", (long long) GGML_OP_POOL_AVG);
    P("enum GGML_OP_POOL_COUNT", (long long) GGML_OP_POOL_COUNT);
    P("enum GGML_SORT_ORDER_ASC", (long long) GGML_SORT_ORDER_ASC);
    P("enum GGML_SORT_ORDER_DESC", (long long) GGML_SORT_ORDER_DESC);
    P("enum GGML_SCALE_MODE_NEAREST", (long long) GGML_SCALE_MODE_NEAREST);
    P("enum GGML_SCALE_MODE_BILINEAR", (long long) GGML_SCALE_MODE_BILINEAR);
    P("enum GGML_SCALE_MODE_BICUBIC", (long long) GGML_SCALE_MODE_BICUBIC);
    P("enum GGML_SCALE_MODE_COUNT", (long long) GGML_SCALE_MODE_COUNT);
    P("enum GGML_SCALE_FLAG_ALIGN_CORNERS", (long long) GGML_SCALE_FLAG_ALIGN_CORNERS);
    P("enum GGML_SCALE_FLAG_ANTIALIAS", (long long) GGML_SCALE_FLAG_ANTIALIAS);
    P("enum GGML_TRI_TYPE_UPPER_DIAG", (long long) GGML_TRI_TYPE_UPPER_DIAG);
    P("enum GGML_TRI_TYPE_UPPER", (long long) GGML_TRI_TYPE_UPPER);
    P("enum GGML_TRI_TYPE_LOWER_DIAG", (long long) GGML_TRI_TYPE_LOWER_DIAG);
    P("enum GGML_TRI_TYPE_LOWER", (long long) GGML_TRI_TYPE_LOWER);
    P("enum GGML_SCHED_PRIO_LOW", (long long) GGML_SCHED_PRIO_LOW);
    P("enum GGML_SCHED_PRIO_NORMAL", (long long) GGML_SCHED_PRIO_NORMAL);
    P("enum GGML_SCHED_PRIO_MEDIUM", (long long) GGML_SCHED_PRIO_MEDIUM);
    P("enum GGML_SCHED_PRIO_HIGH", (long long) GGML_SCHED_PRIO_HIGH);
    P("enum GGML_SCHED_PRIO_REALTIME", (long long) GGML_SCHED_PRIO_REALTIME);
    P("enum GGUF_TYPE_UINT8", (long long) GGUF_TYPE_UINT8);
    P("enum GGUF_TYPE_INT8", (long long) GGUF_TYPE_INT8);
    P("enum GGUF_TYPE_UINT16", (long long) GGUF_TYPE_UINT16);
    P("enum GGUF_TYPE_INT16", (long long) GGUF_TYPE_INT16);
    P("enum GGUF_TYPE_UINT32", (long long) GGUF_TYPE_UINT32);
    P("enum GGUF_TYPE_INT32", (long long) GGUF_TYPE_INT32);
    P("enum GGUF_TYPE_FLOAT32", (long long) GGUF_TYPE_FLOAT32);
    P("enum GGUF_TYPE_BOOL", (long long) GGUF_TYPE_BOOL);
    P("enum GGUF_TYPE_STRING", (long long) GGUF_TYPE_STRING);
    P("enum GGUF_TYPE_ARRAY", (long long) GGUF_TYPE_ARRAY);
    P("enum GGUF_TYPE_UINT64", (long long) GGUF_TYPE_UINT64);
    P("enum GGUF_TYPE_INT64", (long long) GGUF_TYPE_INT64);
    P("enum GGUF_TYPE_FLOAT64", (long long) GGUF_TYPE_FLOAT64);
    P("enum GGUF_TYPE_COUNT", (long long) GGUF_TYPE_COUNT);
    P("enum GGML_BACKEND_BUFFER_USAGE_ANY", (long long) GGML_BACKEND_BUFFER_USAGE_ANY);
    P("enum GGML_BACKEND_BUFFER_USAGE_WEIGHTS", (long long) GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    P("enum GGML_BACKEND_BUFFER_USAGE_COMPUTE", (long long) GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    P("enum GGML_BACKEND_DEVICE_TYPE_CPU", (long long) GGML_BACKEND_DEVICE_TYPE_CPU);
    P("enum GGML_BACKEND_DEVICE_TYPE_GPU", (long long) GGML_BACKEND_DEVICE_TYPE_GPU);
    P("enum GGML_BACKEND_DEVICE_TYPE_IGPU", (long long) GGML_BACKEND_DEVICE_TYPE_IGPU);
    P("enum GGML_BACKEND_DEVICE_TYPE_ACCEL", (long long) GGML_BACKEND_DEVICE_TYPE_ACCEL);
    P("enum GGML_BACKEND_DEVICE_TYPE_META", (long long) GGML_BACKEND_DEVICE_TYPE_META);
#ifdef GGML_MAX_DIMS
    P("macro GGML_MAX_DIMS", (long long) (GGML_MAX_DIMS));
#else
    P("macro GGML_MAX_DIMS undefined", 0);
#endif
#ifdef GGML_MAX_PARAMS
    P("macro GGML_MAX_PARAMS", (long long) (GGML_MAX_PARAMS));
#else
    P("macro GGML_MAX_PARAMS undefined", 0);
#endif
#ifdef GGML_MAX_SRC
    P("macro GGML_MAX_SRC", (long long) (GGML_MAX_SRC));
#else
    P("macro GGML_MAX_SRC undefined", 0);
#endif
#ifdef GGML_MAX_N_THREADS
    P("macro GGML_MAX_N_THREADS", (long long) (GGML_MAX_N_THREADS));
#else
    P("macro GGML_MAX_N_THREADS undefined", 0);
#endif
#ifdef GGML_MAX_OP_PARAMS
    P("macro GGML_MAX_OP_PARAMS", (long long) (GGML_MAX_OP_PARAMS));
#else
    P("macro GGML_MAX_OP_PARAMS undefined", 0);
#endif
#ifdef GGML_MAX_NAME
    P("macro GGML_MAX_NAME", (long long) (GGML_MAX_NAME));
#else
    P("macro GGML_MAX_NAME undefined", 0);
#endif
#ifdef GGML_DEFAULT_N_THREADS
    P("macro GGML_DEFAULT_N_THREADS", (long long) (GGML_DEFAULT_N_THREADS));
#else
    P("macro GGML_DEFAULT_N_THREADS undefined", 0);
#endif
#ifdef GGML_DEFAULT_GRAPH_SIZE
    P("macro GGML_DEFAULT_GRAPH_SIZE", (long long) (GGML_DEFAULT_GRAPH_SIZE));
#else
    P("macro GGML_DEFAULT_GRAPH_SIZE undefined", 0);
#endif
#ifdef GGML_MEM_ALIGN
    P("macro GGML_MEM_ALIGN", (long long) (GGML_MEM_ALIGN));
#else
    P("macro GGML_MEM_ALIGN undefined", 0);
#endif
#ifdef GGML_EXIT_SUCCESS
    P("macro GGML_EXIT_SUCCESS", (long long) (GGML_EXIT_SUCCESS));
#else
    P("macro GGML_EXIT_SUCCESS undefined", 0);
#endif
#ifdef GGML_EXIT_ABORTED
    P("macro GGML_EXIT_ABORTED", (long long) (GGML_EXIT_ABORTED));
#else
    P("macro GGML_EXIT_ABORTED undefined", 0);
#endif
#ifdef GGML_ROPE_TYPE_NORMAL
    P("macro GGML_ROPE_TYPE_NORMAL", (long long) (GGML_ROPE_TYPE_NORMAL));
#else
    P("macro GGML_ROPE_TYPE_NORMAL undefined", 0);
#endif
#ifdef GGML_ROPE_TYPE_NEOX
    P("macro GGML_ROPE_TYPE_NEOX", (long long) (GGML_ROPE_TYPE_NEOX));
#else
    P("macro GGML_ROPE_TYPE_NEOX undefined", 0);
#endif
#ifdef GGML_ROPE_TYPE_MROPE
    P("macro GGML_ROPE_TYPE_MROPE", (long long) (GGML_ROPE_TYPE_MROPE));
#else
    P("macro GGML_ROPE_TYPE_MROPE undefined", 0);
#endif
#ifdef GGML_ROPE_TYPE_VISION
    P("macro GGML_ROPE_TYPE_VISION", (long long) (GGML_ROPE_TYPE_VISION));
#else
    P("macro GGML_ROPE_TYPE_VISION undefined", 0);
#endif
#ifdef GGML_ROPE_TYPE_IMROPE
    P("macro GGML_ROPE_TYPE_IMROPE", (long long) (GGML_ROPE_TYPE_IMROPE));
#else
    P("macro GGML_ROPE_TYPE_IMROPE undefined", 0);
#endif
#ifdef GGML_MROPE_SECTIONS
    P("macro GGML_MROPE_SECTIONS", (long long) (GGML_MROPE_SECTIONS));
#else
    P("macro GGML_MROPE_SECTIONS undefined", 0);
#endif
#ifdef GGML_KQ_MASK_PAD
    P("macro GGML_KQ_MASK_PAD", (long long) (GGML_KQ_MASK_PAD));
#else
    P("macro GGML_KQ_MASK_PAD undefined", 0);
#endif
#ifdef GGML_FILE_MAGIC
    P("macro GGML_FILE_MAGIC", (long long) (GGML_FILE_MAGIC));
#else
    P("macro GGML_FILE_MAGIC undefined", 0);
#endif
#ifdef GGML_FILE_VERSION
    P("macro GGML_FILE_VERSION", (long long) (GGML_FILE_VERSION));
#else
    P("macro GGML_FILE_VERSION undefined", 0);
#endif
#ifdef GGML_QNT_VERSION
    P("macro GGML_QNT_VERSION", (long long) (GGML_QNT_VERSION));
#else
    P("macro GGML_QNT_VERSION undefined", 0);
#endif
#ifdef GGML_QNT_VERSION_FACTOR
    P("macro GGML_QNT_VERSION_FACTOR", (long long) (GGML_QNT_VERSION_FACTOR));
#else
    P("macro GGML_QNT_VERSION_FACTOR undefined", 0);
#endif
#ifdef GGML_N_TASKS_MAX
    P("macro GGML_N_TASKS_MAX", (long long) (GGML_N_TASKS_MAX));
#else
    P("macro GGML_N_TASKS_MAX undefined", 0);
#endif
#ifdef GGUF_VERSION
    P("macro GGUF_VERSION", (long long) (GGUF_VERSION));
#else
    P("macro GGUF_VERSION undefined", 0);
#endif
#ifdef GGUF_DEFAULT_ALIGNMENT
    P("macro GGUF_DEFAULT_ALIGNMENT", (long long) (GGUF_DEFAULT_ALIGNMENT));
#else
    P("macro GGUF_DEFAULT_ALIGNMENT undefined", 0);
#endif
    P("sizeof ggml_tensor", (long long) sizeof(struct ggml_tensor));
    P("offsetof ggml_tensor.type", (long long) offsetof(struct ggml_tensor, type));
    P("offsetof ggml_tensor.buffer", (long long) offsetof(struct ggml_tensor, buffer));
    P("offsetof ggml_tensor.ne", (long long) offsetof(struct ggml_tensor, ne));
    P("offsetof ggml_tensor.nb", (long long) offsetof(struct ggml_tensor, nb));
    P("offsetof ggml_tensor.op", (long long) offsetof(struct ggml_tensor, op));
    P("offsetof ggml_tensor.op_params", (long long) offsetof(struct ggml_tensor, op_params));
    P("offsetof ggml_tensor.flags", (long long) offsetof(struct ggml_tensor, flags));
    P("offsetof ggml_tensor.src", (long long) offsetof(struct ggml_tensor, src));
    P("offsetof ggml_tensor.view_src", (long long) offsetof(struct ggml_tensor, view_src));
    P("offsetof ggml_tensor.view_offs", (long long) offsetof(struct ggml_tensor, view_offs));
    P("offsetof ggml_tensor.data", (long long) offsetof(struct ggml_tensor, data));
    P("offsetof ggml_tensor.name", (long long) offsetof(struct ggml_tensor, name));
    P("offsetof ggml_tensor.extra", (long long) offsetof(struct ggml_tensor, extra));
    P("offsetof ggml_tensor.padding", (long long) offsetof(struct ggml_tensor, padding));
    P("sizeof ggml_init_params", (long long) sizeof(struct ggml_init_params));
    P("offsetof ggml_init_params.mem_size", (long long) offsetof(struct ggml_init_params, mem_size));
    P("offsetof ggml_init_params.mem_buffer", (long long) offsetof(struct ggml_init_params, mem_buffer));
    P("offsetof ggml_init_params.no_alloc", (long long) offsetof(struct ggml_init_params, no_alloc));
    P("sizeof gguf_init_params", (long long) sizeof(struct gguf_init_params));
    P("offsetof gguf_init_params.no_alloc", (long long) offsetof(struct gguf_init_params, no_alloc));
    P("offsetof gguf_init_params.ctx", (long long) offsetof(struct gguf_init_params, ctx));
    P("sizeof ggml_cplan", (long long) sizeof(struct ggml_cplan));
    P("offsetof ggml_cplan.work_size", (long long) offsetof(struct ggml_cplan, work_size));
    P("offsetof ggml_cplan.work_data", (long long) offsetof(struct ggml_cplan, work_data));
    P("offsetof ggml_cplan.n_threads", (long long) offsetof(struct ggml_cplan, n_threads));
    P("offsetof ggml_cplan.threadpool", (long long) offsetof(struct ggml_cplan, threadpool));
    P("offsetof ggml_cplan.abort_callback", (long long) offsetof(struct ggml_cplan, abort_callback));
    P("offsetof ggml_cplan.abort_callback_data", (long long) offsetof(struct ggml_cplan, abort_callback_data));
    P("offsetof ggml_cplan.use_ref", (long long) offsetof(struct ggml_cplan, use_ref));
    P("sizeof ggml_tallocr", (long long) sizeof(struct ggml_tallocr));
    P("offsetof ggml_tallocr.buffer", (long long) offsetof(struct ggml_tallocr, buffer));
    P("offsetof ggml_tallocr.base", (long long) offsetof(struct ggml_tallocr, base));
    P("offsetof ggml_tallocr.alignment", (long long) offsetof(struct ggml_tallocr, alignment));
    P("offsetof ggml_tallocr.offset", (long long) offsetof(struct ggml_tallocr, offset));
    P("sizeof ggml_type_traits", (long long) sizeof(struct ggml_type_traits));
    P("offsetof ggml_type_traits.type_name", (long long) offsetof(struct ggml_type_traits, type_name));
    P("offsetof ggml_type_traits.blck_size", (long long) offsetof(struct ggml_type_traits, blck_size));
    P("offsetof ggml_type_traits.blck_size_interleave", (long long) offsetof(struct ggml_type_traits, blck_size_interleave));
    P("offsetof ggml_type_traits.type_size", (long long) offsetof(struct ggml_type_traits, type_size));
    P("offsetof ggml_type_traits.is_quantized", (long long) offsetof(struct ggml_type_traits, is_quantized));
    P("offsetof ggml_type_traits.to_float", (long long) offsetof(struct ggml_type_traits, to_float));
    P("offsetof ggml_type_traits.from_float_ref", (long long) offsetof(struct ggml_type_traits, from_float_ref));
    P("sizeof ggml_threadpool_params", (long long) sizeof(struct ggml_threadpool_params));
    P("offsetof ggml_threadpool_params.cpumask", (long long) offsetof(struct ggml_threadpool_params, cpumask));
    P("offsetof ggml_threadpool_params.n_threads", (long long) offsetof(struct ggml_threadpool_params, n_threads));
    P("offsetof ggml_threadpool_params.prio", (long long) offsetof(struct ggml_threadpool_params, prio));
    P("offsetof ggml_threadpool_params.poll", (long long) offsetof(struct ggml_threadpool_params, poll));
    P("offsetof ggml_threadpool_params.strict_cpu", (long long) offsetof(struct ggml_threadpool_params, strict_cpu));
    P("offsetof ggml_threadpool_params.paused", (long long) offsetof(struct ggml_threadpool_params, paused));
    P("sizeof ggml_backend_dev_props", (long long) sizeof(struct ggml_backend_dev_props));
    P("offsetof ggml_backend_dev_props.name", (long long) offsetof(struct ggml_backend_dev_props, name));
    P("offsetof ggml_backend_dev_props.description", (long long) offsetof(struct ggml_backend_dev_props, description));
    P("offsetof ggml_backend_dev_props.memory_free", (long long) offsetof(struct ggml_backend_dev_props, memory_free));
    P("offsetof ggml_backend_dev_props.memory_total", (long long) offsetof(struct ggml_backend_dev_props, memory_total));
    P("offsetof ggml_backend_dev_props.type", (long long) offsetof(struct ggml_backend_dev_props, type));
    P("offsetof ggml_backend_dev_props.device_id", (long long) offsetof(struct ggml_backend_dev_props, device_id));
    P("offsetof ggml_backend_dev_props.caps", (long long) offsetof(struct ggml_backend_dev_props, caps));
    P("sizeof ggml_backend_dev_caps", (long long) sizeof(struct ggml_backend_dev_caps));
    P("offsetof ggml_backend_dev_caps.async", (long long) offsetof(struct ggml_backend_dev_caps, async));
    P("offsetof ggml_backend_dev_caps.host_buffer", (long long) offsetof(struct ggml_backend_dev_caps, host_buffer));
    P("offsetof ggml_backend_dev_caps.buffer_from_host_ptr", (long long) offsetof(struct ggml_backend_dev_caps, buffer_from_host_ptr));
    P("offsetof ggml_backend_dev_caps.events", (long long) offsetof(struct ggml_backend_dev_caps, events));
    P("sizeof ggml_type_traits_cpu", (long long) sizeof(struct ggml_type_traits_cpu));
    P("offsetof ggml_type_traits_cpu.from_float", (long long) offsetof(struct ggml_type_traits_cpu, from_float));
    P("offsetof ggml_type_traits_cpu.vec_dot", (long long) offsetof(struct ggml_type_traits_cpu, vec_dot));
    P("offsetof ggml_type_traits_cpu.vec_dot_type", (long long) offsetof(struct ggml_type_traits_cpu, vec_dot_type));
    P("offsetof ggml_type_traits_cpu.nrows", (long long) offsetof(struct ggml_type_traits_cpu, nrows));
    return 0;
}
