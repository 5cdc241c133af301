// dispatch.h - the compute pass's table from op to kernel.
//
// Each op family lives in one file under ops/ (binary.cpp, unary.cpp, ...) and fills
// its rows of the table through its register_* function, called once from
// dispatch.cpp. An op with no entry has no CPU kernel: gk_graph_compute() refuses a
// graph holding it (GK_STATUS_UNSUPPORTED) before computing anything. The layout ops
// (NONE, VIEW, RESHAPE, PERMUTE, TRANSPOSE) have no entry because they do no work.
//
// To add an op: write `void <op>(const compute_params &, gk_tensor * dst)` in its
// family's file, and set `t.ops[GK_OP_<OP>] = {<op>, <work size or nullptr>}` in that
// file's register function. See docs/gk.md, "How to add an op".
#pragma once

#include "kernel.h"

#include <cstddef>

namespace gk::cpu {

struct kernel_table {
    kernel ops[GK_OP_COUNT];
};

/// The table (built once; thread-safe).
const kernel_table & kernels();

/// True when the compute pass can run node: a layout op, or an op with a kernel whose
/// sources it can read - a matrix product (src[0]) or attention (K, src[1]) needs a dot
/// product (vec_dot.h) for that type at that row length. Otherwise false, with the
/// reason ("op mul_mat: type i32 has no dot product for rows of 16 elements") written
/// to why (why_size bytes) when why is not null. This is the CPU's supports_op.
bool supports(const gk_tensor * node, char * why, size_t why_size);

/// True for the ops whose kernel may write its output over src[0] when the two have the
/// same type, shape and strides: destination row r depends only on row r of src[0] (and
/// on other sources), and each element is read before it is written. The graph
/// allocator places such a node on its source's storage when nothing else still needs it.
bool runs_in_place(gk_op op);

void register_binary(kernel_table & t);    // add sub mul div                          (ops/binary.cpp)
void register_unary(kernel_table & t);     // sqr sqrt log sin cos, unary, leaky_relu  (ops/unary.cpp)
void register_glu(kernel_table & t);       // glu (fused and split)                    (ops/glu.cpp)
void register_norm(kernel_table & t);      // norm rms_norm l2_norm group_norm         (ops/norm.cpp)
void register_softmax(kernel_table & t);   // soft_max                                 (ops/softmax.cpp)
void register_rope(kernel_table & t);      // rope rope_back (and rope_multi's modes)  (ops/rope.cpp)
void register_rows(kernel_table & t);      // get_rows set_rows                        (ops/rows.cpp)
void register_copy(kernel_table & t);      // dup cpy cont                             (ops/copy.cpp)
void register_reduce(kernel_table & t);    // sum sum_rows mean argmax cumsum          (ops/reduce.cpp)
void register_sort(kernel_table & t);      // argsort top_k                            (ops/sort.cpp)
void register_misc(kernel_table & t);      // repeat concat pad arange timestep_embedding
                                           // scale clamp diag_mask_inf/zero          (ops/misc.cpp)
void register_matmul(kernel_table & t);    // mul_mat mul_mat_id out_prod              (ops/matmul.cpp)
void register_attention(kernel_table & t); // flash_attn_ext                           (ops/attention.cpp)
void register_set(kernel_table & t);       // set acc add1                             (ops/set.cpp)
void register_ssm(kernel_table & t);       // ssm_conv ssm_scan                        (ops/ssm.cpp)
void register_linear_attn(kernel_table & t); // rwkv_wkv6 gated_linear_attn rwkv_wkv7
                                           // gated_delta_net                          (ops/linear_attn.cpp)
void register_window(kernel_table & t);    // win_part win_unpart get_rel_pos
                                           // add_rel_pos                              (ops/window.cpp)
void register_custom(kernel_table & t);    // map_custom1/2/3 custom                   (ops/custom.cpp)
void register_conv(kernel_table & t);      // im2col im2col_back col2im_1d conv_2d conv_2d_dw
                                           // conv_transpose_1d/2d                     (ops/conv.cpp)
void register_pool(kernel_table & t);      // pool_1d pool_2d pool_2d_back             (ops/pool.cpp)
void register_resample(kernel_table & t);  // upscale pad_reflect_1d                   (ops/resample.cpp)
void register_back(kernel_table & t);      // silu_back rms_norm_back soft_max_back
                                           // get_rows_back repeat_back                (ops/back.cpp)
void register_train(kernel_table & t);     // cross_entropy_loss(_back) opt_step_adamw
                                           // opt_step_sgd                             (ops/train.cpp)
void register_matrix(kernel_table & t);    // tri diag solve_tri                       (ops/matrix.cpp)
void register_dsv4(kernel_table & t);      // lightning_indexer dsv4_hc_comb/_pre/_post (ops/dsv4.cpp)

} // namespace gk::cpu
