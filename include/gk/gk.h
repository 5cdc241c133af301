/* gk.h - the tensor library of gk: contexts, tensors, op builders, graphs, compute.
 *
 * The API is shaped so that a ggml program maps onto it one call to one call:
 *   - sizes and strides are ne[4] (elements) and nb[4] (bytes) in ggml order, ne[0]
 *     innermost; unused dimensions have ne = 1;
 *   - struct gk_tensor has the field order and sizes of ggml's struct ggml_tensor, and
 *     enum gk_op / gk_unary_op / gk_glu_op carry ggml's enum values (the compat layer
 *     static-asserts both);
 *   - op parameters are stored in op_params (16 x int32) with ggml's layout per op.
 *
 * Errors. Nothing here aborts on user input. A builder that is given a shape or type it
 * cannot accept returns NULL and records a message in its context (gk_last_error()).
 * A builder given a NULL source returns NULL and keeps the first message, so a chain of
 * builders reports the root cause. gk_graph_compute() returns a gk_status and records
 * its message in the graph's context.
 *
 * Memory. A context is one fixed arena. Tensor structs, graphs and (unless no_alloc)
 * tensor data are carved from it; an allocation past its end fails with an error.
 * Nothing is freed individually: gk_free() releases the whole arena.
 *
 * Threads. A context and its tensors are not thread-safe; use one per thread, or
 * serialise. gk_graph_compute() itself runs on a pool of threads and is deterministic:
 * the result is bit identical at every thread count.
 */
#ifndef GK_H
#define GK_H

#include "gk/gk-type.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_MAX_DIMS      4
#define GK_MAX_SRC       10
#define GK_MAX_OP_PARAMS 64   /* bytes */
#define GK_MAX_NAME      64
#define GK_MEM_ALIGN     64   /* alignment of every arena object and of tensor data */
#define GK_DEFAULT_GRAPH_SIZE 2048

/* ------------------------------------------------------------------------------------ */
/* Status                                                                                */

/** Result of operations that can fail after build time. Values 1, 0, -1, -2 are ggml's
 *  enum ggml_status; the rest refine GK_STATUS_FAILED. */
enum gk_status {
    GK_STATUS_ABORTED          =  1,
    GK_STATUS_SUCCESS          =  0,
    GK_STATUS_FAILED           = -1,
    GK_STATUS_ALLOC_FAILED     = -2,
    GK_STATUS_INVALID_ARGUMENT = -3, /* a tensor without data, a graph that is too small */
    GK_STATUS_OUT_OF_RANGE     = -4, /* an index read from a tensor is outside its table */
    GK_STATUS_UNSUPPORTED      = -5, /* no CPU kernel for this op / type combination     */
};

/** Short name of a status ("success", "out of range", ...). */
const char * gk_status_name(enum gk_status status);

/* ------------------------------------------------------------------------------------ */
/* Ops (values are ggml's enum ggml_op; slots for ops gk has no builder for are kept so  */
/* that the numbering agrees)                                                           */

enum gk_op {
    GK_OP_NONE = 0,

    GK_OP_DUP,
    GK_OP_ADD,
    GK_OP_ADD_ID,
    GK_OP_ADD1,
    GK_OP_ACC,
    GK_OP_SUB,
    GK_OP_MUL,
    GK_OP_DIV,
    GK_OP_SQR,
    GK_OP_SQRT,
    GK_OP_LOG,
    GK_OP_SIN,
    GK_OP_COS,
    GK_OP_SUM,
    GK_OP_SUM_ROWS,
    GK_OP_CUMSUM,
    GK_OP_MEAN,
    GK_OP_ARGMAX,
    GK_OP_COUNT_EQUAL,
    GK_OP_REPEAT,
    GK_OP_REPEAT_BACK,
    GK_OP_CONCAT,
    GK_OP_SILU_BACK,
    GK_OP_NORM,
    GK_OP_RMS_NORM,
    GK_OP_RMS_NORM_BACK,
    GK_OP_GROUP_NORM,
    GK_OP_L2_NORM,

    GK_OP_MUL_MAT,
    GK_OP_MUL_MAT_ID,
    GK_OP_OUT_PROD,

    GK_OP_SCALE,
    GK_OP_SET,
    GK_OP_CPY,
    GK_OP_CONT,
    GK_OP_RESHAPE,
    GK_OP_VIEW,
    GK_OP_PERMUTE,
    GK_OP_TRANSPOSE,
    GK_OP_GET_ROWS,
    GK_OP_GET_ROWS_BACK,
    GK_OP_SET_ROWS,
    GK_OP_DIAG,
    GK_OP_DIAG_MASK_INF,
    GK_OP_DIAG_MASK_ZERO,
    GK_OP_SOFT_MAX,
    GK_OP_SOFT_MAX_BACK,
    GK_OP_ROPE,
    GK_OP_ROPE_BACK,
    GK_OP_CLAMP,
    GK_OP_CONV_TRANSPOSE_1D,
    GK_OP_IM2COL,
    GK_OP_IM2COL_BACK,
    GK_OP_IM2COL_3D,
    GK_OP_COL2IM_1D,
    GK_OP_CONV_2D,
    GK_OP_CONV_3D,
    GK_OP_CONV_2D_DW,
    GK_OP_CONV_TRANSPOSE_2D,
    GK_OP_POOL_1D,
    GK_OP_POOL_2D,
    GK_OP_POOL_2D_BACK,
    GK_OP_UPSCALE,
    GK_OP_PAD,
    GK_OP_PAD_REFLECT_1D,
    GK_OP_ROLL,
    GK_OP_ARANGE,
    GK_OP_TIMESTEP_EMBEDDING,
    GK_OP_ARGSORT,
    GK_OP_TOP_K,
    GK_OP_LEAKY_RELU,
    GK_OP_TRI,
    GK_OP_FILL,

    GK_OP_FLASH_ATTN_EXT,
    GK_OP_FLASH_ATTN_BACK,
    GK_OP_SSM_CONV,
    GK_OP_SSM_SCAN,
    GK_OP_WIN_PART,
    GK_OP_WIN_UNPART,
    GK_OP_GET_REL_POS,
    GK_OP_ADD_REL_POS,
    GK_OP_RWKV_WKV6,
    GK_OP_GATED_LINEAR_ATTN,
    GK_OP_RWKV_WKV7,
    GK_OP_SOLVE_TRI,
    GK_OP_GATED_DELTA_NET,
    GK_OP_LIGHTNING_INDEXER,
    GK_OP_DSV4_HC_COMB,
    GK_OP_DSV4_HC_PRE,
    GK_OP_DSV4_HC_POST,

    GK_OP_UNARY,

    GK_OP_MAP_CUSTOM1,
    GK_OP_MAP_CUSTOM2,
    GK_OP_MAP_CUSTOM3,

    GK_OP_CUSTOM,

    GK_OP_CROSS_ENTROPY_LOSS,
    GK_OP_CROSS_ENTROPY_LOSS_BACK,
    GK_OP_OPT_STEP_ADAMW,
    GK_OP_OPT_STEP_SGD,

    GK_OP_GLU,

    GK_OP_COUNT
};

/** Element-wise activations of GK_OP_UNARY (op_params[0]); ggml's enum ggml_unary_op. */
enum gk_unary_op {
    GK_UNARY_OP_ABS,
    GK_UNARY_OP_SGN,
    GK_UNARY_OP_NEG,
    GK_UNARY_OP_STEP,
    GK_UNARY_OP_TANH,
    GK_UNARY_OP_ELU,
    GK_UNARY_OP_RELU,
    GK_UNARY_OP_SIGMOID,
    GK_UNARY_OP_GELU,        /* tanh approximation */
    GK_UNARY_OP_GELU_QUICK,  /* x * sigmoid(1.702 x) */
    GK_UNARY_OP_SILU,
    GK_UNARY_OP_HARDSWISH,
    GK_UNARY_OP_HARDSIGMOID,
    GK_UNARY_OP_EXP,
    GK_UNARY_OP_EXPM1,
    GK_UNARY_OP_SOFTPLUS,
    GK_UNARY_OP_GELU_ERF,    /* exact, with erf */
    GK_UNARY_OP_XIELU,       /* gk_xielu (its parameters in op_params) */
    GK_UNARY_OP_FLOOR,
    GK_UNARY_OP_CEIL,
    GK_UNARY_OP_ROUND,       /* half away from zero */
    GK_UNARY_OP_TRUNC,

    GK_UNARY_OP_COUNT
};

/** Gated linear units of GK_OP_GLU (op_params[0]); ggml's enum ggml_glu_op. */
enum gk_glu_op {
    GK_GLU_OP_REGLU,
    GK_GLU_OP_GEGLU,
    GK_GLU_OP_SWIGLU,
    GK_GLU_OP_SWIGLU_OAI,
    GK_GLU_OP_GEGLU_ERF,
    GK_GLU_OP_GEGLU_QUICK,
    GK_GLU_OP_SWIGLU_CLAMP,  /* gk_swiglu_clamp */

    GK_GLU_OP_COUNT
};

enum gk_sort_order {
    GK_SORT_ORDER_ASC,
    GK_SORT_ORDER_DESC
};

/** Pooling function of gk_pool_1d / gk_pool_2d (op_params[0]); ggml's enum ggml_op_pool. */
enum gk_op_pool {
    GK_OP_POOL_MAX,
    GK_OP_POOL_AVG,
    GK_OP_POOL_COUNT
};

/** Interpolation of gk_interpolate (op_params[0] bits 0-7); ggml's enum ggml_scale_mode. */
enum gk_scale_mode {
    GK_SCALE_MODE_NEAREST  = 0,
    GK_SCALE_MODE_BILINEAR = 1,
    GK_SCALE_MODE_BICUBIC  = 2,
    GK_SCALE_MODE_COUNT
};

/** Flags or-ed into gk_interpolate's mode; ggml's enum ggml_scale_flag. */
enum gk_scale_flag {
    GK_SCALE_FLAG_ALIGN_CORNERS = (1 << 8),
    GK_SCALE_FLAG_ANTIALIAS     = (1 << 9)
};

/** rope modes (op_params[2]); values are ggml's GGML_ROPE_TYPE_*. */
#define GK_ROPE_TYPE_NORMAL 0   /* rotate adjacent pairs (x[2i], x[2i+1])          */
#define GK_ROPE_TYPE_NEOX   2   /* rotate halves (x[i], x[i + n_dims/2])           */
#define GK_ROPE_TYPE_MROPE  8   /* rope_multi: M-RoPE, sections of pairs (neox order) */
#define GK_ROPE_TYPE_VISION 24  /* rope_multi: vision, pairs (x[i], x[i + n_dims])    */
#define GK_ROPE_TYPE_IMROPE 40  /* rope_multi: interleaved M-RoPE (neox order)        */
#define GK_MROPE_SECTIONS   4   /* positions per token of rope_multi (t, h, w, e)     */

/** Tensor flags; values are ggml's enum ggml_tensor_flag. */
enum gk_tensor_flag {
    GK_TENSOR_FLAG_INPUT   = 1,
    GK_TENSOR_FLAG_OUTPUT  = 2,
    GK_TENSOR_FLAG_PARAM   = 4,
    GK_TENSOR_FLAG_LOSS    = 8,
    GK_TENSOR_FLAG_COMPUTE = 16
};

const char * gk_op_name(enum gk_op op);              /* "MUL_MAT"; "?" when out of range */
const char * gk_op_symbol(enum gk_op op);            /* "mul_mat"; "?" when out of range */
const char * gk_unary_op_name(enum gk_unary_op op);  /* "SILU" */
const char * gk_glu_op_name(enum gk_glu_op op);      /* "SWIGLU" */

/* ------------------------------------------------------------------------------------ */
/* Tensors                                                                               */

struct gk_context;
struct gk_cgraph;
struct gk_backend_buffer;

/** A tensor: field order and sizes are ggml's struct ggml_tensor.
 *  Default strides: nb[0] = gk_type_size(type), nb[1] = gk_row_size(type, ne[0]),
 *  nb[i] = nb[i-1] * ne[i-1]. A view shares the storage of view_src (always the
 *  tensor that owns the storage, never another view) at byte offset view_offs. */
struct gk_tensor {
    enum gk_type type;

    struct gk_backend_buffer * buffer;   /* set by backends; NULL for context memory */

    int64_t ne[GK_MAX_DIMS];             /* elements per dimension, ne[0] innermost */
    size_t  nb[GK_MAX_DIMS];             /* byte stride per dimension               */

    enum gk_op op;
    int32_t    op_params[GK_MAX_OP_PARAMS / sizeof(int32_t)];
    int32_t    flags;                    /* enum gk_tensor_flag bits */

    struct gk_tensor * src[GK_MAX_SRC];

    struct gk_tensor * view_src;
    size_t             view_offs;

    void * data;

    char name[GK_MAX_NAME];

    void * extra;                        /* backend-private */

    char padding[8];
};

/* ------------------------------------------------------------------------------------ */
/* Context                                                                               */

struct gk_init_params {
    size_t mem_size;    /* arena bytes                                               */
    void * mem_buffer;  /* caller-owned arena, or NULL to have gk_init allocate one  */
    bool   no_alloc;    /* create tensor structs only; data is placed later (alloc)  */
};

/** Create a context. Returns NULL when mem_size is 0 or the arena cannot be allocated. */
struct gk_context * gk_init(struct gk_init_params params);

/** Free a context and its arena (when gk_init allocated it). NULL is ok. */
void gk_free(struct gk_context * ctx);

/** Message of the most recent error recorded in ctx, "" when none. Valid until the
 *  next call on ctx that records one. */
const char * gk_last_error(const struct gk_context * ctx);
void         gk_clear_error(struct gk_context * ctx);

size_t gk_used_mem(const struct gk_context * ctx);       /* arena bytes in use   */
size_t gk_get_mem_size(const struct gk_context * ctx);   /* arena bytes in total */
bool   gk_get_no_alloc(const struct gk_context * ctx);
void   gk_set_no_alloc(struct gk_context * ctx, bool no_alloc);

/** Empty ctx for reuse (ggml_reset): every tensor, graph and buffer in its arena is
 *  forgotten (pointers to them dangle), the arena and the no_alloc flag are kept. NULL is ok. */
void   gk_reset(struct gk_context * ctx);
/** ctx's arena: the caller's mem_buffer or the one gk_init allocated (NULL for NULL). */
void * gk_get_mem_buffer(const struct gk_context * ctx);
/** nbytes of raw memory from ctx's arena (a GK_MEM_ALIGN aligned object of kind
 *  GK_OBJECT_DATA, ggml_new_buffer), also in a no_alloc context. NULL when ctx is NULL, or
 *  with a message in gk_last_error when the arena has no room. */
void * gk_new_buffer(struct gk_context * ctx, size_t nbytes);

/** One object of a context's arena (opaque: its header; see gk_object_get_info). */
struct gk_object;
enum gk_object_kind { GK_OBJECT_TENSOR = 0, GK_OBJECT_GRAPH = 1, GK_OBJECT_DATA = 2 }; /* ggml_object_type's values */
/** What ggml_print_object shows of an arena object: its kind (GK_OBJECT_DATA: a tensor's
 *  data or a gk_new_buffer), the byte offset of its contents from the arena's start, their
 *  size in bytes, and the next object in creation order (NULL after the last). */
struct gk_object_info {
    enum gk_object_kind      kind;
    size_t                   offs;
    size_t                   size;
    const struct gk_object * next;
};
/** The first object of ctx's arena in creation order; NULL when it is empty or ctx is NULL. */
const struct gk_object * gk_get_first_object(const struct gk_context * ctx);
/** The facts of obj (from gk_get_first_object / .next); obj must not be NULL. */
struct gk_object_info gk_object_get_info(const struct gk_object * obj);

/** Arena bytes one tensor struct costs (excluding its data). */
size_t gk_tensor_overhead(void);
/** The most arena bytes a tensor's data costs beyond its gk_nbytes: the data is an arena
 *  object of its own (a header, then the bytes padded to GK_MEM_ALIGN). A context of
 *  n * (gk_tensor_overhead() + gk_tensor_data_overhead()) + the sum of the nbytes holds
 *  n tensors with their data. */
size_t gk_tensor_data_overhead(void);
/** Arena bytes a graph of GK_DEFAULT_GRAPH_SIZE / `size` nodes costs; SIZE_MAX for a size
 *  above INT_MAX / 4, which gk_new_graph_custom refuses. */
size_t gk_graph_overhead(void);
size_t gk_graph_overhead_custom(size_t size, bool grads);

/** Iterate the tensors of a context in creation order (NULL at the end). */
struct gk_tensor * gk_get_first_tensor(const struct gk_context * ctx);
struct gk_tensor * gk_get_next_tensor(const struct gk_context * ctx, struct gk_tensor * tensor);
/** First tensor of ctx with this name, or NULL. */
struct gk_tensor * gk_get_tensor(struct gk_context * ctx, const char * name);

/* ------------------------------------------------------------------------------------ */
/* Tensor creation and queries                                                           */

/** New tensor of 1..4 dims with default strides. ne[0] must be a whole number of blocks
 *  of `type`; every ne[i] >= 0. Data comes from the arena unless no_alloc. */
struct gk_tensor * gk_new_tensor(struct gk_context * ctx, enum gk_type type, int n_dims, const int64_t * ne);
struct gk_tensor * gk_new_tensor_1d(struct gk_context * ctx, enum gk_type type, int64_t ne0);
struct gk_tensor * gk_new_tensor_2d(struct gk_context * ctx, enum gk_type type, int64_t ne0, int64_t ne1);
struct gk_tensor * gk_new_tensor_3d(struct gk_context * ctx, enum gk_type type, int64_t ne0, int64_t ne1, int64_t ne2);
struct gk_tensor * gk_new_tensor_4d(struct gk_context * ctx, enum gk_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);

/** New tensor of a's type and shape (default strides, own storage, no op). */
struct gk_tensor * gk_dup_tensor(struct gk_context * ctx, const struct gk_tensor * a);
/** Alias of a with a's shape and strides (op VIEW). */
struct gk_tensor * gk_view_tensor(struct gk_context * ctx, struct gk_tensor * a);

const char *       gk_get_name(const struct gk_tensor * t);
struct gk_tensor * gk_set_name(struct gk_tensor * t, const char * name);   /* truncated to 63 chars */
struct gk_tensor * gk_format_name(struct gk_tensor * t, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

void gk_set_input(struct gk_tensor * t);
void gk_set_output(struct gk_tensor * t);
void gk_set_param(struct gk_tensor * t);
/** Marks the loss of a graph for gk_build_backward_expand (an F32 tensor of one element). */
void gk_set_loss(struct gk_tensor * t);

int64_t gk_nelements(const struct gk_tensor * t);
int64_t gk_nrows(const struct gk_tensor * t);          /* ne[1]*ne[2]*ne[3] */
size_t  gk_nbytes(const struct gk_tensor * t);         /* bytes spanned, from the strides */
size_t  gk_element_size(const struct gk_tensor * t);   /* gk_type_size(type) */
int     gk_n_dims(const struct gk_tensor * t);         /* 1 + index of the last ne > 1 */

bool gk_is_contiguous(const struct gk_tensor * t);      /* default strides, no gaps */
bool gk_is_contiguous_rows(const struct gk_tensor * t); /* each row dense: nb[0] == type size */
bool gk_is_transposed(const struct gk_tensor * t);      /* nb[0] > nb[1] */
bool gk_is_permuted(const struct gk_tensor * t);        /* strides not increasing */
bool gk_is_view(const struct gk_tensor * t);
bool gk_is_empty(const struct gk_tensor * t);           /* some ne == 0 */
bool gk_are_same_shape(const struct gk_tensor * a, const struct gk_tensor * b);
/** True when b can be broadcast to a: every a->ne[i] is a multiple of b->ne[i]. */
bool gk_can_repeat(const struct gk_tensor * b, const struct gk_tensor * a);

void *  gk_get_data(const struct gk_tensor * t);
float * gk_get_data_f32(const struct gk_tensor * t);   /* NULL unless type is F32 */

int32_t gk_get_op_params_i32(const struct gk_tensor * t, int i);
float   gk_get_op_params_f32(const struct gk_tensor * t, int i);
enum gk_unary_op gk_get_unary_op(const struct gk_tensor * t);
enum gk_glu_op   gk_get_glu_op(const struct gk_tensor * t);

/* ------------------------------------------------------------------------------------ */
/* Views and reshapes: aliases made at build time; they cost nothing at compute time.   */
/* A view's bytes must lie inside the storage of a. A block type keeps its blocks whole: */
/* ne0 of a view is a whole number of blocks and dimension 0 cannot be moved. offset and */
/* nb1..nb3 are multiples of gk_type_size (one element, or one block), so every element */
/* stays aligned.                                                                        */

/** offset and nb* in bytes. */
struct gk_tensor * gk_view_1d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, size_t offset);
struct gk_tensor * gk_view_2d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1,
                              size_t nb1, size_t offset);
struct gk_tensor * gk_view_3d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                              size_t nb1, size_t nb2, size_t offset);
struct gk_tensor * gk_view_4d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                              int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset);

/** Same elements, new shape; a must be contiguous and the element counts must agree.
 *  gk_reshape takes the shape of b. */
struct gk_tensor * gk_reshape(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_reshape_1d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0);
struct gk_tensor * gk_reshape_2d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1);
struct gk_tensor * gk_reshape_3d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
struct gk_tensor * gk_reshape_4d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                 int64_t ne3);

/** Dimension i of a becomes dimension axis_i of the result (ggml's convention);
 *  axis0..3 must be a permutation of 0..3. */
struct gk_tensor * gk_permute(struct gk_context * ctx, struct gk_tensor * a, int axis0, int axis1, int axis2, int axis3);
/** Swap dimensions 0 and 1. */
struct gk_tensor * gk_transpose(struct gk_context * ctx, struct gk_tensor * a);

/** A contiguous tensor with a's elements. An alias when a is already contiguous;
 *  otherwise a CONT node that copies. The _Nd forms also reshape. */
struct gk_tensor * gk_cont(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_cont_2d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1);
struct gk_tensor * gk_cont_3d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
struct gk_tensor * gk_cont_4d(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                              int64_t ne3);

/* ------------------------------------------------------------------------------------ */
/* Op builders. Each returns the result tensor, or NULL with gk_last_error() set.        */
/* "float" below means F32, F16 or BF16; results of element-wise ops have a's type.     */
/* The _inplace forms return a view of a and overwrite it at compute time.              */

/* Binary element-wise, b broadcast to a (gk_can_repeat(b, a)); a, b float. */
struct gk_tensor * gk_add(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_sub(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_mul(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_div(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_add_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_sub_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_mul_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_div_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);

/* Unary element-wise math, each its own op; a float. */
struct gk_tensor * gk_sqr(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_sqrt(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_log(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_sin(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_cos(struct gk_context * ctx, struct gk_tensor * a);

/* Activations (GK_OP_UNARY); a float. */
struct gk_tensor * gk_unary(struct gk_context * ctx, struct gk_tensor * a, enum gk_unary_op op);
struct gk_tensor * gk_unary_inplace(struct gk_context * ctx, struct gk_tensor * a, enum gk_unary_op op);
struct gk_tensor * gk_abs(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_sgn(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_neg(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_step(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_tanh(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_elu(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_relu(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_sigmoid(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_gelu(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_gelu_erf(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_gelu_quick(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_silu(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_hardswish(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_hardsigmoid(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_exp(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_expm1(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_softplus(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_floor(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_ceil(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_round(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_trunc(struct gk_context * ctx, struct gk_tensor * a);
/** x > 0 ? x : slope * x (GK_OP_LEAKY_RELU; op_params: f32 slope). */
struct gk_tensor * gk_leaky_relu(struct gk_context * ctx, struct gk_tensor * a, float negative_slope, bool inplace);

/* Gated linear units (GK_OP_GLU; op_params: i32 op, i32 swapped, f32 alpha, f32 limit).
 * Fused: a holds [x | g] along dim 0; the result has ne0/2 (rounded down: of an odd row,
 * the last element is not read, as in ggml); swapped exchanges
 * the halves. Split: x = a, g = b, same shape and type; the result has a's shape.
 * result = act(x) * g, act being relu, gelu, silu, gelu_erf or gelu_quick. Rows of a
 * (and b) must be dense. */
struct gk_tensor * gk_glu(struct gk_context * ctx, struct gk_tensor * a, enum gk_glu_op op, bool swapped);
struct gk_tensor * gk_glu_split(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, enum gk_glu_op op);
struct gk_tensor * gk_reglu(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_geglu(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_swiglu(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_geglu_erf(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_geglu_quick(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_reglu_split(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_geglu_split(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_swiglu_split(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_geglu_erf_split(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_geglu_quick_split(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** gpt-oss: x = min(a, limit), g = clamp(b, -limit, limit), result = x*sigmoid(alpha*x)*(g+1).
 *  b NULL means fused (a = [x | g]). */
struct gk_tensor * gk_swiglu_oai(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, float alpha,
                                 float limit);

/* Affine and clamp (op_params: f32 s, f32 b / f32 min, f32 max). */
struct gk_tensor * gk_scale(struct gk_context * ctx, struct gk_tensor * a, float s);               /* a*s     */
struct gk_tensor * gk_scale_inplace(struct gk_context * ctx, struct gk_tensor * a, float s);
struct gk_tensor * gk_scale_bias(struct gk_context * ctx, struct gk_tensor * a, float s, float b); /* a*s + b */
struct gk_tensor * gk_clamp(struct gk_context * ctx, struct gk_tensor * a, float min, float max);

/* Norms along dim 0 (op_params: f32 eps; group_norm: i32 n_groups, f32 eps). */
struct gk_tensor * gk_norm(struct gk_context * ctx, struct gk_tensor * a, float eps);     /* (x-mean)/sqrt(var+eps) */
struct gk_tensor * gk_rms_norm(struct gk_context * ctx, struct gk_tensor * a, float eps); /* x/sqrt(mean(x^2)+eps)  */
struct gk_tensor * gk_l2_norm(struct gk_context * ctx, struct gk_tensor * a, float eps);  /* x/max(|x|, eps)        */
/** Normalise each of n_groups groups of consecutive ne2 slices (over ne0*ne1*slices). */
struct gk_tensor * gk_group_norm(struct gk_context * ctx, struct gk_tensor * a, int n_groups, float eps);

/* Matrix products; results are F32.
 * mul_mat: a [K, M, A2, A3] with dense rows of any type that has a CPU dot product for
 * rows of K (K a whole number of blocks of it and of its activation type), b [K, N, B2, B3]
 * float, with B2 % A2 == 0 and B3 % A3 == 0 -> [M, N, B2, B3];
 * result[m, n, i2, i3] = dot(a row (m, i2 / (B2/A2), i3 / (B3/A3)), b row (n, i2, i3)). */
struct gk_tensor * gk_mul_mat(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** as [K, M, E] (E experts, types as mul_mat's a), b [K, B1, T] float, ids I32 [U, T] with
 *  U % B1 == 0 -> [M, U, T]; result[:, u, t] = as[:, :, ids[u, t]] * b[:, u % B1, t]. An id
 *  outside [0, E) is GK_STATUS_OUT_OF_RANGE at compute time. */
struct gk_tensor * gk_mul_mat_id(struct gk_context * ctx, struct gk_tensor * as, struct gk_tensor * b,
                                 struct gk_tensor * ids);
/** a [M, K, A2, A3], b [N, K, B2, B3] float -> [M, N, B2, B3]; result[m, n] = sum_k a[m, k] b[n, k]. */
struct gk_tensor * gk_out_prod(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);

/* Copies and conversion. */
/** A new tensor with a's type, shape and values. */
struct gk_tensor * gk_dup(struct gk_context * ctx, struct gk_tensor * a);
/** Copy a's values into b (same element count; b's shape wins; any codec type with an
 *  encoder). Returns a view of b. */
struct gk_tensor * gk_cpy(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** A new tensor of `type` with a's shape holding a's values. */
struct gk_tensor * gk_cast(struct gk_context * ctx, struct gk_tensor * a, enum gk_type type);

/* Row gather / scatter. */
/** a [C, R, A2, A3] any type, b I32 [N, A2, A3] -> F32 [C, N, A2, A3] (I32 when a is I32);
 *  result[:, n, i, j] = a[:, b[n, i, j], i, j]. An index outside [0, R) is an error at
 *  compute time (GK_STATUS_OUT_OF_RANGE), never a read. */
struct gk_tensor * gk_get_rows(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** a [C, R, A2, A3] destination (any type with an encoder), b float [C, N, A2, A3],
 *  c I32/I64 [N, C2, C3] with A2 % C2 == 0, A3 % C3 == 0: a[:, c[n], i, j] = b[:, n, i, j].
 *  Returns a view of a. Indices outside [0, R) are a compute-time error. */
struct gk_tensor * gk_set_rows(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, struct gk_tensor * c);

/* Placement. */
/** Tile a to b's shape (gk_can_repeat(a, b)). */
struct gk_tensor * gk_repeat(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** Join a and b along dim (other dims equal, same type; a block type joins whole blocks). */
struct gk_tensor * gk_concat(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int dim);
/** Zero-pad at the end of each dim (pad), or before and after (pad_ext; op_params
 *  lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3). Counts >= 0. */
struct gk_tensor * gk_pad(struct gk_context * ctx, struct gk_tensor * a, int p0, int p1, int p2, int p3);
struct gk_tensor * gk_pad_ext(struct gk_context * ctx, struct gk_tensor * a, int lp0, int rp0, int lp1, int rp1,
                              int lp2, int rp2, int lp3, int rp3);
/** pad / pad_ext wrapping around (op_params[8] = 1): element i of dim d is a's element
 *  (i - lp_d) mod ne_d (ggml's circular padding, for any padding size). */
struct gk_tensor * gk_pad_circular(struct gk_context * ctx, struct gk_tensor * a, int p0, int p1, int p2, int p3);
struct gk_tensor * gk_pad_ext_circular(struct gk_context * ctx, struct gk_tensor * a, int lp0, int rp0, int lp1,
                                       int rp1, int lp2, int rp2, int lp3, int rp3);
/** F32 [ceil((stop - start) / step)]: start, start + step, ...; step != 0. */
struct gk_tensor * gk_arange(struct gk_context * ctx, float start, float stop, float step);
/** timesteps F32 [T] -> F32 [dim, T]: [cos(t f_0) .. cos(t f_h-1), sin(t f_0) .. sin(t f_h-1) (, 0 when dim is odd)]
 *  with h = dim/2, f_i = exp(-ln(max_period) i / h). */
struct gk_tensor * gk_timestep_embedding(struct gk_context * ctx, struct gk_tensor * timesteps, int dim, int max_period);

/* Convolution (ggml's layouts and composition; sizes out = (in + 2p - d(k-1) - 1)/s + 1).
 * Kernels a are [KW, KH, IC, OC] (2-D) or [K, IC, OC] (1-D), inputs b [W, H, IC, N] or
 * [L, IC, N]. Strides s and dilations d are >= 1 and every output size must be >= 1.
 * im2col op_params: i32 s0, s1, p0, p1, d0, d1, is_2D. */
/** The windows of b as rows: 2-D -> dst_type [IC*KH*KW, OW, OH, N], 1-D (is_2D false,
 *  b [L, IC, N], a->ne[1] == IC) -> [IC*K, OL, N]; element (ic, ky, kx) of row (ox, oy,
 *  n) is b[ox*s0 + kx*d0 - p0, oy*s1 + ky*d1 - p1, ic, n], 0 outside b. Only a's shape is
 *  read. b float, dst_type F32 or F16 (rounded to nearest even). */
struct gk_tensor * gk_im2col(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0, int s1,
                             int p0, int p1, int d0, int d1, bool is_2D, enum gk_type dst_type);
/** Gradient of im2col: a float, shaped as im2col's result, b the kernel (shape only),
 *  ne the shape of im2col's input -> F32 ne, each element the sum (in window order ky,
 *  kx) of the entries of a that im2col copied from it. */
struct gk_tensor * gk_im2col_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int64_t * ne,
                                  int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D);
/** Fold columns back into a signal (the overlap-add of a transposed 1-D convolution): a
 *  float [K*oc, T_in] -> a's type [T_out = (T_in-1)*s0 + K - 2*p0, oc]; out[t, c] = sum over
 *  t_in ascending with k = t + p0 - t_in*s0 in [0, K) of a[c*K + k, t_in] (f32 sum).
 *  op_params: i32 s0, oc, p0. s0, oc >= 1, p0 >= 0, oc divides ne0. */
struct gk_tensor * gk_col2im_1d(struct gk_context * ctx, struct gk_tensor * a, int s0, int oc, int p0);
/** 1-D convolution as ggml composes it: im2col (F16, F32 for a BF16 kernel) then mul_mat
 *  -> F32 [OL, OC, N]. As in ggml, mul_mat's [N*OL, OC] product is only reshaped, so for
 *  N > 1 output (ol, oc, n) sits at flat index n*OL + ol + oc*N*OL. _ph: p0 = K/2. Kernel
 *  and input contiguous. */
struct gk_tensor * gk_conv_1d(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0, int p0,
                              int d0);
struct gk_tensor * gk_conv_1d_ph(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s, int d);
/** Depthwise 1-D convolution (ggml's composition): a [K, 1, C], b [L, C] -> F32 [OL, C]. */
struct gk_tensor * gk_conv_1d_dw(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0, int p0,
                                 int d0);
struct gk_tensor * gk_conv_1d_dw_ph(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0,
                                    int d0);
/** 2-D convolution as ggml composes it (im2col, mul_mat, permute, cont) -> F32 [OW, OH,
 *  OC, N]. _sk_p0: stride = kernel size, no padding; _s1_ph: stride 1, half padding. */
struct gk_tensor * gk_conv_2d(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0, int s1,
                              int p0, int p1, int d0, int d1);
struct gk_tensor * gk_conv_2d_sk_p0(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_conv_2d_s1_ph(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** Direct 2-D convolution (GK_OP_CONV_2D; op_params i32 s0, s1, p0, p1, d0, d1): a float
 *  [KW, KH, IC, OC], b float [W, H, IC, N] -> b's type [OW, OH, OC, N], each output the
 *  f32 sum over ic, ky, kx in that order (with an F16 kernel the input is rounded to f16
 *  first, as ggml's CPU kernel converts it to the kernel's type). */
struct gk_tensor * gk_conv_2d_direct(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0,
                                     int s1, int p0, int p1, int d0, int d1);
/** Depthwise 2-D convolution: a [KW, KH, 1, C], b [W, H, C, N] -> [OW, OH, C, N]. gk_conv_2d_dw
 *  is ggml's im2col + mul_mat composition (F32 result); _direct is GK_OP_CONV_2D_DW (result
 *  b's type, sum over ky, kx in f32; op_params as conv_2d_direct; when b is a permuted
 *  [C, W, H, N] tensor - nb[2] the element size, nb[0] > nb[2], nb[1] > nb[0] - the result
 *  has the same channel-innermost strides, as ggml's). */
struct gk_tensor * gk_conv_2d_dw(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0, int s1,
                                 int p0, int p1, int d0, int d1);
struct gk_tensor * gk_conv_2d_dw_direct(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                        int stride0, int stride1, int pad0, int pad1, int dilation0, int dilation1);
/** 3-D convolution (ggml's layouts: channels folded into dim 3). im2col_3d: a [KW, KH, KD,
 *  OC*IC] (shape only), b float [W, H, D, N*IC] -> dst_type (F32/F16) [IC*KD*KH*KW, OW, OH,
 *  OD*N], element (ic, kz, ky, kx) of row (ox, oy, n*OD + oz) being b[ox*s0 + kx*d0 - p0,
 *  oy*s1 + ky*d1 - p1, oz*s2 + kz*d2 - p2, n*IC + ic], 0 outside (op_params i32 s0, s1, s2,
 *  p0, p1, p2, d0, d1, d2, IC). conv_3d: ggml's im2col_3d + mul_mat composition -> F32
 *  [OW, OH, OD, OC*N], output channel oc of batch n at dim-3 index n*OC + oc.
 *  conv_3d_direct: GK_OP_CONV_3D, a float [KW, KH, KD, oc*c] (kernel of (out o, in i) at
 *  o*c + i), b float [W, H, D, n*c] -> F32 [OW, OH, OD, n*oc], each output the f32 sum over
 *  input channel, kz, ky, kx in that order, the input rounded to f16 for an F16 kernel
 *  (op_params as im2col_3d, then c, n, oc). */
struct gk_tensor * gk_im2col_3d(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int64_t IC,
                                int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                enum gk_type dst_type);
struct gk_tensor * gk_conv_3d(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int64_t IC, int s0,
                              int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2);
struct gk_tensor * gk_conv_3d_direct(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0,
                                     int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2, int c, int n,
                                     int oc);
/** Transposed 1-D convolution: a F32/F16 [K, OC, IC], b F32 [L, IC] -> F32 [(L-1)*s0 + K, OC];
 *  out[o, oc] = sum over l ascending (k = o - l*s0 in [0, K)) of dot_ic(a[k, oc, :], b[l, :]),
 *  the dot that of mul_mat for a's type (b rounded to F16 for an F16 a). p0 must be 0 and
 *  d0 1 (as ggml). op_params: i32 s0, p0, d0. */
struct gk_tensor * gk_conv_transpose_1d(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int s0,
                                        int p0, int d0);
/** Transposed 2-D convolution without padding: a F32/F16 [KW, KH, OC, IC], b F32 [W, H, IC, N]
 *  -> F32 [(W-1)*s + KW, (H-1)*s + KH, OC, N]; terms added in input order (y, then x) as in
 *  conv_transpose_1d. op_params: i32 stride. */
struct gk_tensor * gk_conv_transpose_2d_p0(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                           int stride);

/* Pooling; a float -> F32. Windows start at o*s - p; elements outside a are skipped (max
 * starts at -FLT_MAX). pool_1d's average divides by the elements inside a, pool_2d's by
 * k0*k1 (as ggml). Sizes out = (in + 2p - k)/s + 1 (in float, truncated, as ggml).
 * op_params: i32 op, k0, s0, p0 / i32 op, k0, k1, s0, s1, p0, p1 (p truncated to int). */
struct gk_tensor * gk_pool_1d(struct gk_context * ctx, struct gk_tensor * a, enum gk_op_pool op, int k0, int s0,
                              int p0);
struct gk_tensor * gk_pool_2d(struct gk_context * ctx, struct gk_tensor * a, enum gk_op_pool op, int k0, int k1,
                              int s0, int s1, float p0, float p1);
/** Gradient of pool_2d: a F32 (pool_2d's output shape), af its input -> F32 af's shape. Max
 *  sends each gradient to the first largest element of its window, avg spreads grad/(k0*k1). */
struct gk_tensor * gk_pool_2d_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * af,
                                   enum gk_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1);

/* Resampling (GK_OP_UPSCALE; op_params: i32 mode). a F32 -> F32 [ne0, ne1, ne2, ne3].
 * Dims 2 and 3 (and 0, 1 in nearest) take source index i*in/out; bilinear and bicubic
 * interpolate dims 0 and 1 at (i + 0.5)*in/out - 0.5, or with GK_SCALE_FLAG_ALIGN_CORNERS at
 * i*(in-1)/(out-1); GK_SCALE_FLAG_ANTIALIAS (bilinear only) uses a triangle filter as wide
 * as the scale. The formulas are ggml's (ggml-cpu/ops.cpp, upscale). */
struct gk_tensor * gk_interpolate(struct gk_context * ctx, struct gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                  int64_t ne3, uint32_t mode);
/** interpolate to [ne0*f, ne1*f, ne2, ne3], scale_factor f > 1. */
struct gk_tensor * gk_upscale(struct gk_context * ctx, struct gk_tensor * a, int scale_factor, enum gk_scale_mode mode);
struct gk_tensor * gk_upscale_ext(struct gk_context * ctx, struct gk_tensor * a, int ne0, int ne1, int ne2, int ne3,
                                  enum gk_scale_mode mode);
/** Reflect-pad dim 0: p0 (< ne0) elements before, p1 (< ne0) after, mirrored about the
 *  edge element (a F32 contiguous; op_params i32 p0, p1). */
struct gk_tensor * gk_pad_reflect_1d(struct gk_context * ctx, struct gk_tensor * a, int p0, int p1);

/* Attention building blocks. */
/** softmax along dim 0 of (a*scale + slope*mask); mask F16/F32 [ne0, >= ne1, M2, M3] broadcast
 *  over dims 2, 3 (a->ne[2] % M2 == 0); slope is 1, or the ALiBi slope of head i2 when
 *  max_bias > 0 (needs a mask). op_params: f32 scale, f32 max_bias. a F32. */
struct gk_tensor * gk_soft_max(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_soft_max_inplace(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_soft_max_ext(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * mask, float scale,
                                   float max_bias);
/** Attach attention sinks (F32 [ne2 of a]: one logit per head that joins the normaliser
 *  only) to a soft_max node (src[2]). Returns false, leaving the node unchanged, when
 *  sinks is not F32 of that length. */
bool gk_soft_max_add_sinks(struct gk_tensor * soft_max, struct gk_tensor * sinks);
/** Set a[i0, i1, ...] = -inf (resp. 0) where i0 > n_past + i1. op_params: i32 n_past. */
struct gk_tensor * gk_diag_mask_inf(struct gk_context * ctx, struct gk_tensor * a, int n_past);
struct gk_tensor * gk_diag_mask_inf_inplace(struct gk_context * ctx, struct gk_tensor * a, int n_past);
struct gk_tensor * gk_diag_mask_zero(struct gk_context * ctx, struct gk_tensor * a, int n_past);

/** Rotary embedding of a [D, H, T, 1] float at positions b I32 [T]. The first n_dims
 *  (even, <= D) of dim 0 are rotated, the rest copied. mode GK_ROPE_TYPE_NORMAL or _NEOX.
 *  c: NULL or F32 [n_dims/2] frequency factors (theta_i is divided by c[i]).
 *  YaRN: ext_factor mixes interpolation and extrapolation between the correction dims
 *  given by beta_fast/beta_slow and n_ctx_orig; attn_factor scales the result.
 *  op_params (ggml layout): [1] n_dims, [2] mode, [4] n_ctx_orig, f32 [5] freq_base,
 *  [6] freq_scale, [7] ext_factor, [8] attn_factor, [9] beta_fast, [10] beta_slow. */
struct gk_tensor * gk_rope(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, int n_dims, int mode);
struct gk_tensor * gk_rope_ext(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, struct gk_tensor * c,
                               int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                               float ext_factor, float attn_factor, float beta_fast, float beta_slow);
/** Multi-section rope (Qwen2-VL's M-RoPE, Qwen3-VL's interleaved M-RoPE, the vision rope):
 *  rope_ext with four positions per token, b I32 [4 * T] (t, h, w, e: b[i + k*T] for token i),
 *  and sections[4] >= 0 (counts of rotation pairs; not all of the first three 0, sum <= D).
 *  Pair i takes the position of its sector i % (s0+s1+s2+s3): mode GK_ROPE_TYPE_MROPE gives
 *  s0 sectors to t, s1 to h, s2 to w, the rest to e; _IMROPE interleaves them (sector % 3 ==
 *  1, 2, 0 for h, w, t while below 3 s1, 3 s2, 3 s0; else e); both rotate in neox order.
 *  _VISION rotates (x[i], x[i + n_dims]) for i < n_dims = D/2 and restarts each section's
 *  frequencies at its first pair. c, when given, has one entry per rotated pair.
 *  op_params: rope_ext's, and [11..14] the sections. Source: ggml's ggml_rope_multi. */
struct gk_tensor * gk_rope_multi(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                 struct gk_tensor * c, int n_dims, int sections[GK_MROPE_SECTIONS], int mode,
                                 int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                                 float attn_factor, float beta_fast, float beta_slow);

/** Fused attention: q F32 [D, Nq, H, S], k [D, Nkv, Hk, S] (any type with a dot product
 *  for rows of D, as mul_mat's weights), v [Dv, Nkv, Hk, S] (any type with a row
 *  decoder), H % Hk == 0, mask NULL or F16 / F32 [Nkv, >= Nq, M2, M3]
 *  -> F32 [Dv, H, Nq, S] (note the permuted result, as ggml).
 *  out = softmax(softcap(scale q k^T) + slope*mask) v; softcap(x) = c*tanh(x/c) when
 *  logit_softcap > 0. As ggml's CPU kernel, q is rounded to k's dot activation type
 *  (f16 k: f16 q) before q k^T. op_params: f32 scale, f32 max_bias, f32 logit_softcap. */
struct gk_tensor * gk_flash_attn_ext(struct gk_context * ctx, struct gk_tensor * q, struct gk_tensor * k,
                                     struct gk_tensor * v, struct gk_tensor * mask, float scale, float max_bias,
                                     float logit_softcap);
/** Attach sinks (F32 [H]) to a flash_attn_ext node (src[4]); false on a mismatch. */
bool gk_flash_attn_ext_add_sinks(struct gk_tensor * attn, struct gk_tensor * sinks);
/** Gradient of plain attention y = softmax(q k^T / sqrt(D)) v (GK_OP_FLASH_ATTN_BACK, ggml's
 *  ggml_flash_attn_back layout): q F32 [D, N, H, S], k F32 [D, M, Hk, S], v F32 [M, D, Hk, S]
 *  (transposed: column j of v's rows is key j's value), d = dL/dy F32 [D, N, H, S], M >= N,
 *  H % Hk == 0 (query head h reads key head h % Hk), rows of q, k, v, d dense. masked: query
 *  i sees keys 0 .. M - N + i (causal), else all M. -> F32 [n]: dL/dq in q's shape, then at
 *  the next 16-byte boundary (ggml's GGML_MEM_ALIGN) dL/dk in k's shape, then dL/dv in v's,
 *  each dense, with padding zeros. op_params: i32 masked. Formula: ggml-cpu's
 *  flash_attn_back (S = softmax(scale q.k), dS = S * (d.v - sum S d.v) * scale). */
struct gk_tensor * gk_flash_attn_back(struct gk_context * ctx, struct gk_tensor * q, struct gk_tensor * k,
                                      struct gk_tensor * v, struct gk_tensor * d, bool masked);

/* Reductions. */
struct gk_tensor * gk_sum(struct gk_context * ctx, struct gk_tensor * a);       /* F32 [1]                */
struct gk_tensor * gk_sum_rows(struct gk_context * ctx, struct gk_tensor * a);  /* [1, ne1, ne2, ne3]     */
struct gk_tensor * gk_mean(struct gk_context * ctx, struct gk_tensor * a);      /* [1, ne1, ne2, ne3]     */
struct gk_tensor * gk_argmax(struct gk_context * ctx, struct gk_tensor * a);    /* I32 [ne1]; a 2-d; first max wins */
/** The number of positions where a and b (I32, one shape) hold equal values -> I64 [1]
 *  (ggml's count_equal; ggml-opt's count of correct predictions). */
struct gk_tensor * gk_count_equal(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_cumsum(struct gk_context * ctx, struct gk_tensor * a);    /* inclusive prefix sum along dim 0 */
/** I32 indices sorting each row of a (F32); stable: equal values keep index order. */
struct gk_tensor * gk_argsort(struct gk_context * ctx, struct gk_tensor * a, enum gk_sort_order order);
/** I32 [k, ne1, ...]: indices of the k largest of each row, largest first (ties: lower index). */
struct gk_tensor * gk_top_k(struct gk_context * ctx, struct gk_tensor * a, int k);

/* Writing into a view (ggml's set / acc; op_params i32 nb1, nb2, nb3, offset, inplace).
 * The view of a has b's shape, byte strides (element size, nb1, nb2, nb3) and starts at
 * byte `offset`; a must be contiguous. The strides and offset must be multiples of a's
 * element size and fit in int32, the view's rows must not overlap (each nbN at least the
 * bytes spanned by the dims inside it) and the view must lie inside a. The result has a's
 * shape: a with the view replaced by b (set; a of a one-element type, b of a's type) or
 * with b added to it (acc; a F32, b float). _1d: nb1..nb3 are a's; _2d: nb2, nb3 are a's. */
struct gk_tensor * gk_set(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t nb1, size_t nb2,
                          size_t nb3, size_t offset);
struct gk_tensor * gk_set_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t nb1,
                                  size_t nb2, size_t nb3, size_t offset);
struct gk_tensor * gk_set_1d(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t offset);
struct gk_tensor * gk_set_1d_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t offset);
struct gk_tensor * gk_set_2d(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t nb1,
                             size_t offset);
struct gk_tensor * gk_set_2d_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t nb1,
                                     size_t offset);
struct gk_tensor * gk_acc(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t nb1, size_t nb2,
                          size_t nb3, size_t offset);
struct gk_tensor * gk_acc_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, size_t nb1,
                                  size_t nb2, size_t nb3, size_t offset);
/** a + b[0]: a float, b a float scalar (one element); the result has a's type and shape. */
struct gk_tensor * gk_add1(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
struct gk_tensor * gk_add1_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);

/* Windowed attention (SAM's image encoder; ggml's win_part, win_unpart, get_rel_pos,
 * add_rel_pos). a of a one-element type for the first three. */
/** a [C, W, H] -> [C, w, w, npx*npy], npx = ceil(W/w), npy = ceil(H/w): window py*npx + px
 *  holds a[:, px*w .. +w, py*w .. +w], zero past a's edge. op_params: i32 npx, npy, w. */
struct gk_tensor * gk_win_part(struct gk_context * ctx, struct gk_tensor * a, int w);
/** The inverse: a [C, w, w, >= ceil(w0/w)*ceil(h0/w)] -> [C, w0, h0]. op_params: i32 w. */
struct gk_tensor * gk_win_unpart(struct gk_context * ctx, struct gk_tensor * a, int w0, int h0, int w);
/** a [C, 2 qh - 1] -> [C, kh, qh] of a's type (ggml: F16): result[:, k, q] = a[:, kh - 1 - k + q];
 *  qh == kh. */
struct gk_tensor * gk_get_rel_pos(struct gk_context * ctx, struct gk_tensor * a, int qh, int kh);
/** a F32 [k*k, qw*qh, n] contiguous, pw and ph F32 [k, qw, qh, n] contiguous -> a's shape:
 *  a[kw + k*kh, q, i] + ph[kh, q, i] + pw[kw, q, i] (ph added first when kh <= kw, as ggml).
 *  op_params: i32 inplace. */
struct gk_tensor * gk_add_rel_pos(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * pw,
                                  struct gk_tensor * ph);
struct gk_tensor * gk_add_rel_pos_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * pw,
                                          struct gk_tensor * ph);

/* State-space models (Mamba, ggml's ssm_conv / ssm_scan; all F32). */
/** Causal depthwise convolution: sx [d_conv - 1 + n_t, d_inner, n_s], c [d_conv, d_inner]
 *  (dense rows) -> [d_inner, n_t, n_s]; result[ch, t, s] = sum_i sx[t + i, ch, s] c[i, ch]. */
struct gk_tensor * gk_ssm_conv(struct gk_context * ctx, struct gk_tensor * sx, struct gk_tensor * c);
/** Selective scan. s [d_state, head_dim, n_head, n_states] (contiguous), x [head_dim,
 *  n_head, n_tokens, n_seqs], dt [n_head, n_tokens, n_seqs], A [1, n_head] (Mamba-2) or
 *  [d_state, n_head] (Mamba-1, K = 1), B and C [d_state, n_group, n_tokens, n_seqs] with
 *  n_head % n_group == 0, ids I32 [n_seqs] (the initial state of sequence i is s[..., ids[i]];
 *  one outside [0, n_states) is GK_STATUS_OUT_OF_RANGE at compute time), K >= 1 snapshot slots.
 *  Per token: dt' = softplus(dt) (x when x > 20), state = state exp(dt' A) + B x dt',
 *  y = state . C. Result F32 1-d: y (x's shape), then K states [d_state, head_dim, n_head,
 *  n_seqs]: slot k is the state after token n_tokens-1-k, the initial state where k >= n_tokens
 *  (ggml leaves those unwritten). op_params: i32 K. */
struct gk_tensor * gk_ssm_scan(struct gk_context * ctx, struct gk_tensor * s, struct gk_tensor * x, struct gk_tensor * dt,
                               struct gk_tensor * A, struct gk_tensor * B, struct gk_tensor * C, struct gk_tensor * ids,
                               int64_t K);

/* Recurrent linear attention with one S x S state per head (ggml's ops; all F32 and
 * contiguous). The rwkv / gla ops take token tensors [S, H, n_tokens] holding n_seqs
 * sequences one after the other (n_seqs = state->ne[1], dividing n_tokens) and a state of
 * S*S*H*n_seqs values; their result is F32 [S*H, n_tokens + S*n_seqs]: the outputs, then the
 * final states (the layout of state). Per token, with st the state of the head:       */
/** RWKV-6: y[j] = sum_i r[i] (tf[i] k[i] v[j] + st[i][j]); st[i][j] = st[i][j] td[i] + k[i] v[j].
 *  tf [S, H]; td per token. */
struct gk_tensor * gk_rwkv_wkv6(struct gk_context * ctx, struct gk_tensor * k, struct gk_tensor * v,
                                struct gk_tensor * r, struct gk_tensor * tf, struct gk_tensor * td,
                                struct gk_tensor * state);
/** GLA: st[i][j] = st[i][j] g[i] + k[i] v[j]; y[j] = sum_i st[i][j] q[i] scale (op_params f32 scale). */
struct gk_tensor * gk_gated_linear_attn(struct gk_context * ctx, struct gk_tensor * k, struct gk_tensor * v,
                                        struct gk_tensor * q, struct gk_tensor * g, struct gk_tensor * state,
                                        float scale);
/** RWKV-7: sa = sum_j a[j] st[i][j]; st[i][j] = st[i][j] w[j] + v[i] k[j] + sa b[j];
 *  y[i] = sum_j st[i][j] r[j]. */
struct gk_tensor * gk_rwkv_wkv7(struct gk_context * ctx, struct gk_tensor * r, struct gk_tensor * w,
                                struct gk_tensor * k, struct gk_tensor * v, struct gk_tensor * a,
                                struct gk_tensor * b, struct gk_tensor * state);
/** Gated delta rule (Gated DeltaNet; KDA when g has S channels). v [S, H, n_tokens, n_seqs],
 *  q and k [S, Hq, n_tokens, nq3] (dense rows; head h reads q/k head h % Hq, sequence i reads
 *  i / (n_seqs / nq3)), g [1 or S, H, n_tokens, n_seqs], beta [1, H, n_tokens, n_seqs],
 *  state [S, S, H, n_seqs] with st[i][j] at (i, j), K >= 1 snapshot slots (op_params i32 K).
 *  Per token: st[i][j] *= exp(g[i]) (or exp(g)); delta[j] = (v[j] - sum_i st[i][j] k[i]) beta;
 *  st[i][j] += k[i] delta[j]; y[j] = sum_i st[i][j] q[i] / sqrt(S).
 *  Result F32 [S*H, n_tokens*n_seqs + K*S*n_seqs]: y [S, H, n_tokens, n_seqs], then K states
 *  [S, S, H, n_seqs]: slot k is the state after token n_tokens-1-k, the initial state where
 *  k >= n_tokens (ggml leaves those unwritten). */
struct gk_tensor * gk_gated_delta_net(struct gk_context * ctx, struct gk_tensor * q, struct gk_tensor * k,
                                      struct gk_tensor * v, struct gk_tensor * g, struct gk_tensor * beta,
                                      struct gk_tensor * state, int64_t K);

/* Custom ops (ggml's map_custom1/2/3, custom_4d, custom_inplace): a node computed by a
 * callback. At compute time the threads 0 .. n-1 of the pass, n = n_tasks (or the thread
 * count for GK_N_TASKS_MAX, and never more than it), each call it once with ith = their
 * index and nth = n; the other threads skip it. The callback decides what each call
 * writes: gk's guarantees (every output written, the same bits at every thread count) hold
 * only when it writes all of dst and splits it so that nth changes no value. It must not
 * abort or block on other threads. op_params: ggml's {callback, i32 n_tasks, userdata}.
 * Errors: a NULL source or callback, n_tasks neither GK_N_TASKS_MAX nor > 0, n_args out of
 * range. */
#define GK_N_TASKS_MAX (-1)
typedef void (*gk_custom1_op_t)(struct gk_tensor * dst, const struct gk_tensor * a, int ith, int nth, void * userdata);
typedef void (*gk_custom2_op_t)(struct gk_tensor * dst, const struct gk_tensor * a, const struct gk_tensor * b,
                                int ith, int nth, void * userdata);
typedef void (*gk_custom3_op_t)(struct gk_tensor * dst, const struct gk_tensor * a, const struct gk_tensor * b,
                                const struct gk_tensor * c, int ith, int nth, void * userdata);
typedef void (*gk_custom_op_t)(struct gk_tensor * dst, int ith, int nth, void * userdata);
/** A node of a's type and shape (the _inplace forms: a view of a) with sources a (, b, c). */
struct gk_tensor * gk_map_custom1(struct gk_context * ctx, struct gk_tensor * a, gk_custom1_op_t fun, int n_tasks,
                                  void * userdata);
struct gk_tensor * gk_map_custom1_inplace(struct gk_context * ctx, struct gk_tensor * a, gk_custom1_op_t fun,
                                          int n_tasks, void * userdata);
struct gk_tensor * gk_map_custom2(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                  gk_custom2_op_t fun, int n_tasks, void * userdata);
struct gk_tensor * gk_map_custom2_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                          gk_custom2_op_t fun, int n_tasks, void * userdata);
struct gk_tensor * gk_map_custom3(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                  struct gk_tensor * c, gk_custom3_op_t fun, int n_tasks, void * userdata);
struct gk_tensor * gk_map_custom3_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                          struct gk_tensor * c, gk_custom3_op_t fun, int n_tasks, void * userdata);
/** A new [ne0, ne1, ne2, ne3] node of `type` (op CUSTOM) with sources args[0 .. n_args-1],
 *  n_args < GK_MAX_SRC. */
struct gk_tensor * gk_custom_4d(struct gk_context * ctx, enum gk_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                                int64_t ne3, struct gk_tensor ** args, int n_args, gk_custom_op_t fun, int n_tasks,
                                void * userdata);
/** A view of a (op CUSTOM) with sources a, args[0 .. n_args-1], n_args < GK_MAX_SRC - 1. */
struct gk_tensor * gk_custom_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor ** args,
                                     int n_args, gk_custom_op_t fun, int n_tasks, void * userdata);

/* Training (ggml's *_back ops, loss and optimizer steps; semantics, operand order and
 * op_params are ggml's). The gradients: dy is the gradient of the forward op's result
 * (its shape), x its input; each returns the gradient of the input. */
/** Gradient of silu: a (dy) and b (x) float of one shape -> a's type and shape;
 *  dy * s * (1 + x (1 - s)), s = 1 / (1 + exp(-x)) (libm expf, as ggml's CPU kernel). */
struct gk_tensor * gk_silu_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** Gradient of rms_norm along dim 0: a (dy) and b (x) float of one shape -> a's type and
 *  shape; per row, with sums in double of f32 products, sxx = sum x*x, sxd = sum x*dy,
 *  n = ne0: dx = (dy + x * (-sxd / (sxx + eps n))) / sqrt(sxx / n + eps) (ggml's form and
 *  rounding steps). op_params: f32 eps (>= 0). */
struct gk_tensor * gk_rms_norm_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, float eps);
/** Gradient of soft_max_ext along dim 0: a (dy) and b (y, soft_max_ext's result) float of
 *  one shape -> a's type and shape (_inplace: a view of a); dx = scale * y * (dy - dot(y,
 *  dy)), the dot summed in double from f32 products. max_bias is kept (op_params f32 scale,
 *  f32 max_bias, as soft_max) but does not enter: the ALiBi term slope*mask is constant in
 *  the input (ggml's CPU kernel refuses max_bias > 0; gk computes it). */
struct gk_tensor * gk_soft_max_ext_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                        float scale, float max_bias);
struct gk_tensor * gk_soft_max_ext_back_inplace(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                                float scale, float max_bias);
/** Gradients of rope_ext / rope_multi: the same arguments, checks and op_params, with a
 *  the gradient dy; the result (op GK_OP_ROPE_BACK) rotates every pair by -theta (the
 *  transpose of rope's map, attn_factor and YaRN's mscale applied as in rope). */
struct gk_tensor * gk_rope_ext_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                    struct gk_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                                    float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                    float beta_slow);
struct gk_tensor * gk_rope_multi_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                      struct gk_tensor * c, int n_dims, int sections[GK_MROPE_SECTIONS], int mode,
                                      int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                                      float attn_factor, float beta_fast, float beta_slow);
/** Gradient of get_rows: a decodable [C, >= N] (dy; rows past N are not read), b I32 [N] (the
 *  row indices), c [C, R] (the
 *  table get_rows read; only its shape is used, it is not a source) -> F32 [C, R]: row r
 *  is the f32 sum, in index order i = 0, 1, ..., of the rows a[:, i] with b[i] == r, 0
 *  when none. An index outside [0, R) is GK_STATUS_OUT_OF_RANGE at compute time. */
struct gk_tensor * gk_get_rows_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                    struct gk_tensor * c);
/** Gradient of repeat: a float, b with gk_can_repeat(b, a) (only its shape is used, it is
 *  not a source) -> a's type, b's shape; each element the f32 sum of the a elements
 *  repeat copied it to, added in the order of the repetition indices (r3, r2, r1, r0), r0
 *  fastest (ggml's order). */
struct gk_tensor * gk_repeat_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** Cross-entropy of softmax(a) against the distributions b along dim 0, averaged over
 *  rows: a (logits) and b (labels) F32 of one shape, not empty -> F32 [1]:
 *  -1/rows * sum_rows sum_i b_i ((a_i - max) - log(sum_j exp(a_j - max))) (expf, logf; the
 *  exp sum and each row's sum in double, the rows added in f32 in index order by one
 *  thread: ggml's one-thread bits). */
struct gk_tensor * gk_cross_entropy_loss(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b);
/** Gradient of cross_entropy_loss: a F32 scalar (d loss), b (logits) and c (labels) F32
 *  of one shape -> F32 b's shape: (softmax(b) - c) * (a / rows), the softmax that of
 *  soft_max (gk's exp, double normaliser). */
struct gk_tensor * gk_cross_entropy_loss_back(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                              struct gk_tensor * c);
/** One AdamW step (Loshchilov & Hutter, arXiv 1711.05101; ggml's update): a the weights
 *  (flagged gk_set_param), grad, m, v F32 of a's shape with dense rows, adamw_params F32
 *  [7] contiguous: alpha, beta1, beta2, eps, wd, beta1h = 1/(1 - beta1^t), beta2h =
 *  1/(1 - beta2^t) for step t >= 1 (the caller computes them, as ggml-opt). Per element,
 *  in f32: m = m beta1 + g (1 - beta1); v = v beta2 + g g (1 - beta2);
 *  w = w (1 - alpha wd) - alpha (m beta1h) / (sqrt(v beta2h) + eps). Returns a view of
 *  a; computing it updates a, m and v in place. */
struct gk_tensor * gk_opt_step_adamw(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * grad,
                                     struct gk_tensor * m, struct gk_tensor * v, struct gk_tensor * adamw_params);
/** One SGD step with weight decay: a (flagged gk_set_param) and grad F32 of one shape with
 *  dense rows, sgd_params F32 [2] contiguous: alpha, wd; w = w (1 - alpha wd) - alpha g.
 *  Returns a view of a; computing it updates a in place. */
struct gk_tensor * gk_opt_step_sgd(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * grad,
                                   struct gk_tensor * sgd_params);

/* ------------------------------------------------------------------------------------ */
/* Graphs                                                                                */

/** A graph of up to GK_DEFAULT_GRAPH_SIZE (or `size`) nodes and as many leafs, allocated
 *  in ctx. With grads it also holds a gradient and a gradient accumulator per tensor
 *  (gk_build_backward_expand). */
struct gk_cgraph * gk_new_graph(struct gk_context * ctx);
struct gk_cgraph * gk_new_graph_custom(struct gk_context * ctx, size_t size, bool grads);

/** Add `tensor` and everything it depends on that is not yet in the graph, in
 *  topological order (sources before users; src[0] before src[1], ...). The walk is
 *  iterative, so depth is limited only by the graph size. Tensors with op NONE that are
 *  not params become leafs; the rest nodes. Fails (no change) when the graph is full. */
enum gk_status gk_build_forward_expand(struct gk_cgraph * graph, struct gk_tensor * tensor);

int                 gk_graph_size(const struct gk_cgraph * graph);
int                 gk_graph_n_nodes(const struct gk_cgraph * graph);
/** Node i; i < 0 counts from the end (-1 = last). NULL when out of range. */
struct gk_tensor *  gk_graph_node(const struct gk_cgraph * graph, int i);
struct gk_tensor ** gk_graph_nodes(const struct gk_cgraph * graph);
int                 gk_graph_n_leafs(const struct gk_cgraph * graph);
struct gk_tensor *  gk_graph_leaf(const struct gk_cgraph * graph, int i);
/** Node or leaf with this name, or NULL. */
struct gk_tensor *  gk_graph_get_tensor(const struct gk_cgraph * graph, const char * name);
/** Remove every node and leaf. */
void                gk_graph_clear(struct gk_cgraph * graph);
/** The context the graph was created in (where its errors are recorded). */
struct gk_context * gk_graph_context(const struct gk_cgraph * graph);
/** Make dst hold src's nodes, leafs and gradients (dst's own are dropped). Fails (dst
 *  unchanged, message in dst's context) when dst is smaller than src's node or leaf count,
 *  or src has gradients and dst was made without. */
enum gk_status gk_graph_cpy(const struct gk_cgraph * src, struct gk_cgraph * dst);
/** A copy of graph in ctx, of its size, with gradients when graph has them or force_grads. */
struct gk_cgraph * gk_graph_dup(struct gk_context * ctx, const struct gk_cgraph * graph, bool force_grads);

/* Automatic differentiation (ggml's ggml_build_backward_expand; src/gk/backward.cpp, the
 * gradient of each op in src/gk/vjp.cpp). */
/** Add to graph (created with grads, holding the forward pass) the nodes computing the
 *  gradient of the loss (the nodes flagged gk_set_loss, F32 of one element, summed) with
 *  respect to every node that depends on a parameter (gk_set_param) and leads to the loss,
 *  in reverse graph order, each op's vector-Jacobian product from its gradient ops. New
 *  tensors are made in ctx. A loss gets a gradient accumulator of its shape made here
 *  (gk_graph_reset sets it to 1); grad_accs, when not NULL, gives one per forward node
 *  (grad_accs[i] for node i, NULL for none), into which that node's gradient is added in
 *  place (gradient accumulation across graph evaluations). Integer (I32) nodes get no
 *  gradient; indices, positions and copy targets pass none on.
 *  Errors (graph unchanged, message in ctx): no parameter or no loss, a graph without
 *  grads, a loss that is not one F32 element, an in-place node (other than a view or a
 *  copy) on the path, an op or operand with no gradient (gk_op_has_grad), a full graph. */
enum gk_status gk_build_backward_expand(struct gk_context * ctx, struct gk_cgraph * graph,
                                        struct gk_tensor ** grad_accs);
/** The node holding d loss / d node after gk_build_backward_expand, or NULL (no gradient,
 *  node not in the graph, a graph without grads). */
struct gk_tensor * gk_graph_get_grad(const struct gk_cgraph * graph, const struct gk_tensor * node);
/** The gradient accumulator of node (a loss's, or one given to gk_build_backward_expand),
 *  or NULL. */
struct gk_tensor * gk_graph_get_grad_acc(const struct gk_cgraph * graph, const struct gk_tensor * node);
/** True when gk_build_backward_expand can pass a gradient through `op` (for GK_OP_UNARY
 *  and GK_OP_GLU: through its sub-op, a gk_unary_op or gk_glu_op value, ignored otherwise). */
bool gk_op_has_grad(enum gk_op op, int sub_op);

/* ------------------------------------------------------------------------------------ */
/* Compute (CPU)                                                                         */

/** Evaluate the nodes of graph in order on n_threads threads (>= 1; clamped to 512).
 *  Every node and leaf must have data. Threads come from a pool of the calling thread,
 *  kept between calls (a CPU backend has a pool of its own); n_threads may change from
 *  call to call. The result is bit identical for every n_threads. Returns
 *  GK_STATUS_SUCCESS, or an error with the message in
 *  gk_last_error(gk_graph_context(graph)) (GK_STATUS_UNSUPPORTED, before anything runs,
 *  for a node gk_cpu_supports_op refuses); on error the nodes after the failing one are
 *  not computed. Two threads may compute two graphs at once when the graphs share no
 *  context. */
enum gk_status gk_graph_compute(struct gk_cgraph * graph, int n_threads);

/** True when the CPU compute pass has a kernel for this node's op and can read its
 *  types (a mul_mat / mul_mat_id weight and a flash_attn_ext K need a CPU dot product
 *  for their type at their row length: the builders no longer check that). */
bool gk_cpu_supports_op(const struct gk_tensor * node);

/* ------------------------------------------------------------------------------------ */
/* More of ggml's ops (issue 14: what test-backend-ops and llama.cpp's graphs build).     */
/* Sources, shapes and op_params are ggml's (ggml.c); the CPU kernels follow ggml-cpu.    */

/** Which triangle gk_tri keeps (op_params[0]); ggml's enum ggml_tri_type. */
enum gk_tri_type {
    GK_TRI_TYPE_UPPER_DIAG = 0, /* i0 >= i1 */
    GK_TRI_TYPE_UPPER      = 1, /* i0 >  i1 */
    GK_TRI_TYPE_LOWER_DIAG = 2, /* i0 <= i1 */
    GK_TRI_TYPE_LOWER      = 3  /* i0 <  i1 */
};

/** a + b[:, ids[i1, i2]] (mixture-of-experts biases, GK_OP_ADD_ID): a float
 *  [n, n_used, T, B], b float [n, n_expert], ids I32 [n_used, T]; result a's type and
 *  shape. An id outside [0, n_expert) fails the compute. */
struct gk_tensor * gk_add_id(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                             struct gk_tensor * ids);
/** a + b (GK_OP_ADD) with the result in `type` (encodable): a of any decodable type, b float
 *  with b->ne[0] == a->ne[0], its rows broadcast to a's. */
struct gk_tensor * gk_add_cast(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                               enum gk_type type);
/** A tensor of a's type and shape with every element c (GK_OP_FILL, op_params: f32 c); a float.
 *  The _inplace form writes c into a. */
struct gk_tensor * gk_fill(struct gk_context * ctx, struct gk_tensor * a, float c);
struct gk_tensor * gk_fill_inplace(struct gk_context * ctx, struct gk_tensor * a, float c);
/** a (float, ne0 == ne1) with the elements outside one triangle of each [ne0, ne1] matrix
 *  set to 0 (GK_OP_TRI, op_params: i32 type); i0 is the column, i1 the row. */
struct gk_tensor * gk_tri(struct gk_context * ctx, struct gk_tensor * a, enum gk_tri_type type);
/** The diagonal matrix of each row: a float [n, 1, C, D] -> [n, n, C, D] (GK_OP_DIAG). */
struct gk_tensor * gk_diag(struct gk_context * ctx, struct gk_tensor * a);
/** a shifted cyclically by shift_d in dimension d (GK_OP_ROLL, op_params: i32 shift0..3):
 *  result[i] = a[(i - shift) mod ne]; |shift_d| < ne[d]; a float with dense rows. */
struct gk_tensor * gk_roll(struct gk_context * ctx, struct gk_tensor * a, int shift0, int shift1, int shift2,
                           int shift3);
/** X with A X = B (GK_OP_SOLVE_TRI): A F32 [n, n, C, D] lower triangular (row i1, column i0),
 *  B F32 [k, n, C, D], both contiguous; X F32 [k, n, C, D], forward substitution row by row
 *  (X[i] = (B[i] - sum_{t<i} A[i, t] X[t]) / A[i, i], t ascending). Only left, lower and
 *  not unit-diagonal (ggml's one variant); the others fail. */
struct gk_tensor * gk_solve_tri(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b, bool left,
                                bool lower, bool uni);
/** xIELU activation (GK_OP_UNARY, GK_UNARY_OP_XIELU); a float. op_params (ggml's): [1]
 *  beta + softplus(alpha_n), [2] softplus(alpha_p), [3] beta, [4] eps;
 *  y = x > 0 ? ap x^2 + beta x : (expm1(min(x, eps)) - x) an + beta x. */
struct gk_tensor * gk_xielu(struct gk_context * ctx, struct gk_tensor * a, float alpha_n, float alpha_p, float beta,
                            float eps);
/** GLUs with the halves of each row of a exchanged (g first, then x): gk_glu(.., true). */
struct gk_tensor * gk_reglu_swapped(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_geglu_swapped(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_swiglu_swapped(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_geglu_erf_swapped(struct gk_context * ctx, struct gk_tensor * a);
struct gk_tensor * gk_geglu_quick_swapped(struct gk_context * ctx, struct gk_tensor * a);
/** x = min(a, limit), g = clamp(b, -limit, limit), result = x * sigmoid(x) * g
 *  (GK_GLU_OP_SWIGLU_CLAMP, op_params[3] f32 limit); b NULL means fused (a = [x | g]). */
struct gk_tensor * gk_swiglu_clamp(struct gk_context * ctx, struct gk_tensor * a, struct gk_tensor * b,
                                   float limit);
/** Rotate the window [n_offs, n_offs + n_dims) of each row instead of [0, n_dims)
 *  (op_params[15]) of a rope or rope_back node of mode normal, neox, mrope or imrope.
 *  n_offs even, >= 0, n_offs + n_dims <= ne0. False (nothing changed) otherwise. */
bool gk_rope_set_offset(struct gk_tensor * rope, int n_offs);
/** YaRN's correction dims: floor / ceil of n_dims ln(n_ctx_orig / (beta 2 pi)) / (2 ln base)
 *  for beta_fast / beta_slow, clamped to [0, n_dims - 1]. */
void gk_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                            float dims[2]);

/* DeepSeek-V4's ops (formulas: cpu/ops/dsv4.cpp's file comment). */
/** Index scores [n_kv, T, 1, B] F32 from q F32 [d, H, T, B], k (decodable) [d, 1, n_kv, B],
 *  weights F32 [H, T, 1, B] and mask F16 [n_kv, T, 1, B'] (B % B' == 0). */
struct gk_tensor * gk_lightning_indexer(struct gk_context * ctx, struct gk_tensor * q, struct gk_tensor * k,
                                        struct gk_tensor * weights, struct gk_tensor * mask);
/** Hyper-connection combination matrices [hc, hc, T] F32 from mixes F32 [(2 + hc) hc, T]
 *  (hc = 4), scale F32 [>= 3] and base F32 [(2 + hc) hc]; op_params f32 eps, i32 n_iter > 0. */
struct gk_tensor * gk_dsv4_hc_comb(struct gk_context * ctx, struct gk_tensor * mixes, struct gk_tensor * scale,
                                   struct gk_tensor * base, float eps, int32_t n_iter);
/** Hyper-connection input [n, T] F32 from x F32 [n, hc, T] and weights F32 [hc, T]
 *  (op_params f32 scale 1, i32 gated 0); _gated: gate F32 [n, hc, T] and scale. */
struct gk_tensor * gk_dsv4_hc_pre(struct gk_context * ctx, struct gk_tensor * x, struct gk_tensor * weights);
struct gk_tensor * gk_dsv4_hc_pre_gated(struct gk_context * ctx, struct gk_tensor * x, struct gk_tensor * gate,
                                        float scale);
/** Hyper-connection output [n, hc, T] F32 from x F32 [n, T], residual F32 [n, hc, T], post
 *  F32 [hc, T] and comb F32 [hc, hc, T] or NULL. */
struct gk_tensor * gk_dsv4_hc_post(struct gk_context * ctx, struct gk_tensor * x, struct gk_tensor * residual,
                                   struct gk_tensor * post, struct gk_tensor * comb);

/* Graph editing (ggml's graph functions). */
/** Append tensor to the node list as it is (no sources visited, not marked visited);
 *  false when the graph is full. */
bool gk_graph_add_node(struct gk_cgraph * graph, struct gk_tensor * tensor);

#ifdef __cplusplus
}
#endif

#endif /* GK_H */
