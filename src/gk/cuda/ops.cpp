// ops.cpp - what the CUDA backend computes, one table row per op: a check of types and
// layouts, and the launch of its kernel (kernels.h) with the tensors' pointers, shapes
// and byte strides. The same op set as the Vulkan backend's.
#include "cuda.h"
#include "kernels.h"

#include "../internal.h"

#include <cuda_runtime.h>

namespace gk::cuda {
namespace {

bool is(const gk_tensor * t, gk_type type) { return t && t->type == type; }
bool float_or_half(const gk_tensor * t) { return is(t, GK_TYPE_F32) || is(t, GK_TYPE_F16); }

bool refuse(std::string * why, const char * text) {
    if (why) *why = text;
    return false;
}

kernels::tensor_arg arg(const gk_tensor * t) {
    kernels::tensor_arg a{};
    a.data = static_cast<char *>(t->data);
    for (int i = 0; i < 4; ++i) {
        a.ne[i] = t->ne[i];
        a.nb[i] = static_cast<int64_t>(t->nb[i]);
    }
    a.f16 = t->type == GK_TYPE_F16;
    return a;
}

bool binary_ok(const gk_tensor * n, std::string * why) {
    return (is(n, GK_TYPE_F32) && is(n->src[0], GK_TYPE_F32) && is(n->src[1], GK_TYPE_F32)) ||
           refuse(why, "f32 operands only");
}
int binary_launch(const gk_tensor * n, void * s) {
    const kernels::binary_op op = n->op == GK_OP_ADD   ? kernels::binary_op::add
                                  : n->op == GK_OP_SUB ? kernels::binary_op::sub
                                  : n->op == GK_OP_MUL ? kernels::binary_op::mul
                                                       : kernels::binary_op::div;
    return kernels::binary(op, arg(n->src[0]), arg(n->src[1]), arg(n), s);
}

bool scale_ok(const gk_tensor * n, std::string * why) {
    return (is(n, GK_TYPE_F32) && is(n->src[0], GK_TYPE_F32)) || refuse(why, "f32 only");
}
int scale_launch(const gk_tensor * n, void * s) {
    return kernels::scale(arg(n->src[0]), arg(n), gk_get_op_params_f32(n, 0), gk_get_op_params_f32(n, 1), s);
}

bool mul_mat_ok(const gk_tensor * n, std::string * why) {
    const gk_tensor * w = n->src[0];
    const gk_tensor * x = n->src[1];
    if (!float_or_half(w)) return refuse(why, "weights f32 or f16 only");
    if (!is(x, GK_TYPE_F32) || !is(n, GK_TYPE_F32)) return refuse(why, "f32 activations and result only");
    if (w->nb[0] != gk_type_size(w->type) || x->nb[0] != 4) return refuse(why, "rows must be dense");
    return true;
}
int mul_mat_launch(const gk_tensor * n, void * s) {
    return kernels::mul_mat(arg(n->src[0]), arg(n->src[1]), arg(n), s);
}

bool norm_ok(const gk_tensor * n, std::string * why) {
    if (!is(n, GK_TYPE_F32) || !is(n->src[0], GK_TYPE_F32)) return refuse(why, "f32 only");
    return (n->nb[0] == 4 && n->src[0]->nb[0] == 4) || refuse(why, "rows must be dense");
}
int norm_launch(const gk_tensor * n, void * s) {
    return kernels::norm(arg(n->src[0]), arg(n), gk_get_op_params_f32(n, 0), n->op == GK_OP_NORM, s);
}

bool copy_ok(const gk_tensor * n, std::string * why) {
    return (float_or_half(n) && float_or_half(n->src[0])) || refuse(why, "f32 and f16 only");
}
int copy_launch(const gk_tensor * n, void * s) { return kernels::copy(arg(n->src[0]), arg(n), s); }

struct op_entry {
    gk_op op;
    bool (*ok)(const gk_tensor *, std::string *);
    int (*launch)(const gk_tensor *, void *);
};

constexpr op_entry k_ops[] = {
    {GK_OP_ADD, binary_ok, binary_launch},   {GK_OP_SUB, binary_ok, binary_launch},
    {GK_OP_MUL, binary_ok, binary_launch},   {GK_OP_DIV, binary_ok, binary_launch},
    {GK_OP_SCALE, scale_ok, scale_launch},   {GK_OP_MUL_MAT, mul_mat_ok, mul_mat_launch},
    {GK_OP_NORM, norm_ok, norm_launch},      {GK_OP_RMS_NORM, norm_ok, norm_launch},
    {GK_OP_DUP, copy_ok, copy_launch},       {GK_OP_CONT, copy_ok, copy_launch},
    {GK_OP_CPY, copy_ok, copy_launch},
};

const op_entry * entry(gk_op op) {
    for (const op_entry & e : k_ops) {
        if (e.op == op) return &e;
    }
    return nullptr;
}

} // namespace

bool supports_op(const gk_tensor * node, std::string * why) {
    if (is_layout_op(node->op)) return true;
    const op_entry * e = entry(node->op);
    if (!e) {
        if (why) *why = std::string("no CUDA kernel for ") + gk_op_name(node->op);
        return false;
    }
    return e->ok(node, why);
}

bool launch_op(const gk_tensor * node, void * stream) {
    const op_entry * e = entry(node->op);
    const int        r = e ? e->launch(node, stream) : static_cast<int>(cudaErrorNotSupported);
    if (r != cudaSuccess) {
        backend_error("node '%s' (%s): kernel launch failed: %s", gk_get_name(node), gk_op_name(node->op),
                      cudaGetErrorString(static_cast<cudaError_t>(r)));
        cudaGetLastError();
        return false;
    }
    return true;
}

} // namespace gk::cuda
