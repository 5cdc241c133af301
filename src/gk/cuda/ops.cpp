// ops.cpp - what the CUDA backend computes, one table row per op: a check of types and
// layouts, and the launch of its kernel (kernels.h) with the tensors' pointers, shapes
// and byte strides. The same op set as the Vulkan backend's.
#include "cuda.h"
#include "kernels.h"

#include "../cpu/ops/activations.h"
#include "../cpu/ops/alibi.h"
#include "../cpu/ops/rope_cache.h"
#include "../cpu/ops/timestep.h"
#include "../device/block_formats.h"
#include "../internal.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <vector>

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

/// The activation format of the quantized dot of weights of `type`; false for weights
/// mul_mat_q does not take (device/block_formats.h).
bool quant_act(gk_type type, kernels::act_quant * act) {
    switch (device::block_act_type(type)) {
    case GK_TYPE_Q8_0: *act = kernels::act_quant::q8_0; return true;
    case GK_TYPE_Q8_1: *act = kernels::act_quant::q8_1; return true;
    case GK_TYPE_Q8_K: *act = kernels::act_quant::q8_K; return true;
    default: return false;
    }
}

bool mul_mat_ok(const gk_tensor * n, std::string * why) {
    const gk_tensor *  w = n->src[0];
    const gk_tensor *  x = n->src[1];
    kernels::act_quant aq;
    if (!float_or_half(w) && !quant_act(w->type, &aq)) {
        return refuse(why, "weights f32, f16 or a block format the device decodes (device/block_formats.h) only");
    }
    if (!is(x, GK_TYPE_F32) || !is(n, GK_TYPE_F32)) return refuse(why, "f32 activations and result only");
    if (w->nb[0] != gk_type_size(w->type) || x->nb[0] != 4) return refuse(why, "rows must be dense");
    return n->op != GK_OP_MUL_MAT_ID || is(n->src[2], GK_TYPE_I32) || refuse(why, "i32 expert ids only");
}

bool norm_ok(const gk_tensor * n, std::string * why) {
    if (!is(n, GK_TYPE_F32) || !is(n->src[0], GK_TYPE_F32)) return refuse(why, "f32 only");
    return (n->nb[0] == 4 && n->src[0]->nb[0] == 4) || refuse(why, "rows must be dense");
}
int norm_launch(const gk_tensor * n, void * s) {
    const kernels::norm_kind kind = n->op == GK_OP_NORM      ? kernels::norm_kind::mean_var
                                    : n->op == GK_OP_L2_NORM ? kernels::norm_kind::l2
                                                             : kernels::norm_kind::rms;
    return kernels::norm(arg(n->src[0]), arg(n), gk_get_op_params_f32(n, 0), kind, s);
}

bool copy_ok(const gk_tensor * n, std::string * why) {
    return (float_or_half(n) && float_or_half(n->src[0])) || refuse(why, "f32 and f16 only");
}
int copy_launch(const gk_tensor * n, void * s) { return kernels::copy(arg(n->src[0]), arg(n), s); }

// ---- host-made tables: the CPU's GELU tables, ALiBi slopes, rope's cos / sin ------------

/// Run `launch` with `bytes` of device memory (its argument) holding a copy of `host`
/// (scratch when host is nullptr), wait for the stream, free it. The launch's status, or
/// the first CUDA error.
template <typename F>
int with_table(const void * host, size_t bytes, void * stream, F launch) {
    void *      dev = nullptr;
    cudaError_t e   = cudaMalloc(&dev, bytes);
    if (e == cudaSuccess && host) e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = static_cast<cudaError_t>(launch(dev));
    if (e == cudaSuccess) e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    cudaFree(dev);
    return static_cast<int>(e);
}

/// The CPU's f16 table of `act` (built once).
const std::vector<uint16_t> & f16_table(cpu::act_fn act) {
    static const std::vector<uint16_t> gelu = [] {
        std::vector<uint16_t> t(1u << 16);
        cpu::f16_table_bits(cpu::act_gelu, t.data());
        return t;
    }();
    static const std::vector<uint16_t> gelu_quick = [] {
        std::vector<uint16_t> t(1u << 16);
        cpu::f16_table_bits(cpu::act_gelu_quick, t.data());
        return t;
    }();
    return act == cpu::act_gelu ? gelu : gelu_quick;
}

/// Launch with the table `act` needs (GELU's, GELU_QUICK's), or none.
template <typename F>
int with_act_table(kernels::act_kind act, void * stream, F launch) {
    if (act != kernels::act_kind::gelu && act != kernels::act_kind::gelu_quick) return launch(nullptr);
    const std::vector<uint16_t> & t = f16_table(act == kernels::act_kind::gelu ? cpu::act_gelu : cpu::act_gelu_quick);
    return with_table(t.data(), t.size() * sizeof(uint16_t), stream,
                      [&](void * dev) { return launch(static_cast<const uint16_t *>(dev)); });
}

/// Launch with block format `type`'s table (device/block_formats.h) in device memory, or
/// nullptr for a type without one.
template <typename F>
int with_block_table(gk_type type, void * stream, F launch) {
    const std::vector<uint32_t> table = device::block_table(type);
    if (table.empty()) return launch(nullptr);
    return with_table(table.data(), table.size() * sizeof(uint32_t), stream,
                      [&](void * dev) { return launch(static_cast<const uint32_t *>(dev)); });
}

bool dense_f32(const gk_tensor * t) { return is(t, GK_TYPE_F32) && t->nb[0] == 4; }

/// Columns from which q8_0 / q4_0 products take the tensor cores (mma.cu): a 16 x 16 tile
/// with fewer columns mostly multiplies zeros.
constexpr int64_t k_mma_min_cols = 8;

/// Whether mul_mat of weight type `type` with `cols` columns runs on the tensor cores:
/// q8_0 or q4_0, enough columns, GK_CUDA_MMA not "0" (the switch that measures the
/// one-output-per-thread kernel instead), and a capable current device (asked per launch:
/// the devices of one machine may differ).
bool use_mma(gk_type type, int64_t cols) {
    static const bool allowed = [] {
        const char * e = std::getenv("GK_CUDA_MMA");
        return !(e && std::strcmp(e, "0") == 0);
    }();
    return allowed && (type == GK_TYPE_Q8_0 || type == GK_TYPE_Q4_0) && cols >= k_mma_min_cols &&
           kernels::mma_capable();
}

/// Float weights: one kernel. Quantized ones: the format's table copied and the
/// activations converted (the CPU's conversion) into device memory, then the integer dots
/// (on the tensor cores where use_mma). `ids`: mul_mat_id's lookup, or none.
int mul_mat_run(const gk_tensor * n, const kernels::expert_ids & ids, void * s) {
    const gk_tensor *  w = n->src[0];
    const gk_tensor *  x = n->src[1];
    kernels::act_quant aq;
    if (!quant_act(w->type, &aq)) return kernels::mul_mat(arg(w), arg(x), arg(n), ids, s);
    return with_block_table(w->type, s, [&](const uint32_t * t) {
        return with_table(nullptr, static_cast<size_t>(kernels::act_bytes(aq, arg(x))), s, [&](void * dev) {
            const int r = kernels::quantize_act(aq, arg(x), static_cast<char *>(dev), s);
            if (r != 0) return r;
            if (!ids.data && use_mma(w->type, x->ne[1])) {
                return kernels::mul_mat_q8_mma(w->type == GK_TYPE_Q4_0, arg(w), static_cast<const char *>(dev), arg(n),
                                               s);
            }
            return kernels::mul_mat_q(static_cast<uint32_t>(w->type), arg(w), arg(x), static_cast<const char *>(dev), t,
                                      arg(n), ids, s);
        });
    });
}

int mul_mat_launch(const gk_tensor * n, void * s) { return mul_mat_run(n, kernels::expert_ids{}, s); }

/// launch's status for an expert id outside the experts (CUDA's errors are >= 0).
constexpr int k_bad_expert = -1;

/// mul_mat_id: mul_mat's kernels with the id lookup and a device word for a bad id,
/// read back once the stream is done (the CPU's compute fails the same way).
int mul_mat_id_launch(const gk_tensor * n, void * s) {
    const gk_tensor * ids = n->src[2];
    const int         zero = 0;
    int               bad  = 0;
    const int         r    = with_table(&zero, sizeof zero, s, [&](void * flag) {
        const kernels::expert_ids e{static_cast<const char *>(ids->data),
                                    {static_cast<int64_t>(ids->nb[0]), static_cast<int64_t>(ids->nb[1])},
                                    n->src[0]->ne[2], static_cast<int *>(flag)};
        int st = mul_mat_run(n, e, s);
        if (st == cudaSuccess) st = cudaStreamSynchronize(static_cast<cudaStream_t>(s));
        if (st == cudaSuccess) st = cudaMemcpy(&bad, flag, sizeof bad, cudaMemcpyDeviceToHost);
        return st;
    });
    return r == cudaSuccess && bad ? k_bad_expert : r;
}

/// ALiBi's slopes of `n_head` heads (the CPU's alibi_slope) in device memory for
/// `launch`, or nullptr when max_bias is 0.
template <typename F>
int with_slopes(float max_bias, int64_t n_head, void * stream, F launch) {
    if (max_bias <= 0.0f) return launch(nullptr);
    std::vector<float> slopes(static_cast<size_t>(n_head));
    for (int64_t h = 0; h < n_head; ++h) slopes[static_cast<size_t>(h)] = cpu::alibi_slope(max_bias, n_head, h);
    return with_table(slopes.data(), slopes.size() * sizeof(float), stream,
                      [&](void * dev) { return launch(static_cast<const float *>(dev)); });
}

// ---- glu, unary ------------------------------------------------------------------------------

/// The kernels' activation of a unary op, or -1.
int act_of(gk_unary_op op) {
    switch (op) {
    case GK_UNARY_OP_SILU: return static_cast<int>(kernels::act_kind::silu);
    case GK_UNARY_OP_GELU: return static_cast<int>(kernels::act_kind::gelu);
    case GK_UNARY_OP_GELU_QUICK: return static_cast<int>(kernels::act_kind::gelu_quick);
    case GK_UNARY_OP_RELU: return static_cast<int>(kernels::act_kind::relu);
    case GK_UNARY_OP_NEG: return static_cast<int>(kernels::act_kind::neg);
    default: return -1;
    }
}

int glu_kind(const gk_tensor * n) {
    return gk_get_glu_op(n) == GK_GLU_OP_SWIGLU_OAI ? static_cast<int>(kernels::act_kind::swiglu_oai)
                                                    : act_of(cpu::glu_unary_op(gk_get_glu_op(n)));
}
int unary_kind(const gk_tensor * n) { return act_of(gk_get_unary_op(n)); }

bool glu_ok(const gk_tensor * n, std::string * why) {
    if (glu_kind(n) < 0) return refuse(why, "swiglu, swiglu_oai, geglu, reglu and geglu_quick only (erf is libm's)");
    return (is(n, GK_TYPE_F32) && dense_f32(n->src[0]) && (!n->src[1] || dense_f32(n->src[1]))) ||
           refuse(why, "f32 with dense rows only");
}
int glu_launch(const gk_tensor * n, void * s) {
    const auto                act = static_cast<kernels::act_kind>(glu_kind(n));
    const kernels::tensor_arg b   = n->src[1] ? arg(n->src[1]) : kernels::tensor_arg{};
    const bool                sw  = gk_get_op_params_i32(n, 1) != 0;
    const float               alpha = gk_get_op_params_f32(n, 2), limit = gk_get_op_params_f32(n, 3);
    return with_act_table(act, s, [&](const uint16_t * t) {
        return kernels::glu(act, arg(n->src[0]), b, arg(n), sw, t, alpha, limit, s);
    });
}

bool unary_ok(const gk_tensor * n, std::string * why) {
    if (unary_kind(n) < 0) return refuse(why, "silu, gelu, gelu_quick, relu and neg only");
    return (is(n, GK_TYPE_F32) && is(n->src[0], GK_TYPE_F32)) || refuse(why, "f32 only");
}
int unary_launch(const gk_tensor * n, void * s) {
    const auto act = static_cast<kernels::act_kind>(unary_kind(n));
    return with_act_table(act, s,
                          [&](const uint16_t * t) { return kernels::unary(act, arg(n->src[0]), arg(n), t, s); });
}

// ---- get_rows, set_rows ------------------------------------------------------------------------

bool get_rows_ok(const gk_tensor * n, std::string * why) {
    const gk_tensor * a = n->src[0];
    if (!float_or_half(a) && !device::block_rows_decodable(a->type)) {
        return refuse(why, "tables of f32, f16 or a block format the device decodes (device/block_formats.h) only");
    }
    if (a->nb[0] != gk_type_size(a->type)) return refuse(why, "rows must be dense");
    return (is(n->src[1], GK_TYPE_I32) && is(n, GK_TYPE_F32)) || refuse(why, "i32 indices and an f32 result only");
}
int get_rows_launch(const gk_tensor * n, void * s) {
    return with_block_table(n->src[0]->type, s, [&](const uint32_t * t) {
        return kernels::get_rows(static_cast<uint32_t>(n->src[0]->type), arg(n->src[0]), arg(n->src[1]), t, arg(n), s);
    });
}

bool set_rows_ok(const gk_tensor * n, std::string * why) {
    if (!float_or_half(n) || !is(n->src[0], GK_TYPE_F32)) return refuse(why, "f32 rows into f32 or f16 only");
    return is(n->src[1], GK_TYPE_I32) || is(n->src[1], GK_TYPE_I64) || refuse(why, "i32 or i64 indices only");
}
int set_rows_launch(const gk_tensor * n, void * s) {
    return kernels::set_rows(arg(n->src[0]), arg(n->src[1]), n->src[1]->type == GK_TYPE_I64, arg(n), s);
}

// ---- soft_max ----------------------------------------------------------------------------------

bool soft_max_ok(const gk_tensor * n, std::string * why) {
    if (n->src[2] && !dense_f32(n->src[2])) return refuse(why, "f32 sinks only");
    if (n->src[1] && !float_or_half(n->src[1])) return refuse(why, "an f32 or f16 mask only");
    return (is(n, GK_TYPE_F32) && dense_f32(n->src[0]) && n->nb[0] == 4) || refuse(why, "f32 with dense rows only");
}
int soft_max_launch(const gk_tensor * n, void * s) {
    const kernels::tensor_arg mask  = n->src[1] ? arg(n->src[1]) : kernels::tensor_arg{};
    const float *             sinks = n->src[2] ? static_cast<const float *>(n->src[2]->data) : nullptr;
    const float               scale = gk_get_op_params_f32(n, 0);
    const float               bias  = n->src[1] ? gk_get_op_params_f32(n, 1) : 0.0f;
    return with_slopes(bias, n->ne[2], s, [&](const float * slopes) {
        return kernels::soft_max(arg(n->src[0]), mask, arg(n), scale, slopes, sinks, s);
    });
}

// ---- flash_attn_ext ------------------------------------------------------------------------------

bool flash_attn_ok(const gk_tensor * n, std::string * why) {
    const gk_tensor * k = n->src[1];
    const gk_tensor * v = n->src[2];
    const gk_tensor * m = n->src[3];
    if (gk_get_op_params_f32(n, 2) != 0.0f) return refuse(why, "no logit softcap (its tanh is libm's)");
    if (!float_or_half(k) || !float_or_half(v) || (m && !float_or_half(m))) {
        return refuse(why, "f32 or f16 K, V and mask only");
    }
    if (k->nb[0] != gk_type_size(k->type) || !dense_f32(n->src[0])) return refuse(why, "rows must be dense");
    return (!n->src[4] || dense_f32(n->src[4])) || refuse(why, "f32 sinks only");
}
int flash_attn_launch(const gk_tensor * n, void * s) {
    const kernels::tensor_arg mask  = n->src[3] ? arg(n->src[3]) : kernels::tensor_arg{};
    const float *             sinks = n->src[4] ? static_cast<const float *>(n->src[4]->data) : nullptr;
    const float               bias  = n->src[3] ? gk_get_op_params_f32(n, 1) : 0.0f;
    return with_slopes(bias, n->ne[1], s, [&](const float * slopes) {
        return kernels::flash_attn(arg(n->src[0]), arg(n->src[1]), arg(n->src[2]), mask, sinks, arg(n),
                                   gk_get_op_params_f32(n, 0), slopes, s);
    });
}

// ---- rope --------------------------------------------------------------------------------------

bool rope_ok(const gk_tensor * n, std::string * why) {
    if (!is(n->src[1], GK_TYPE_I32) || !gk_is_contiguous(n->src[1]))
        return refuse(why, "contiguous i32 positions only");
    if (cpu::rope_params_of(n).n_pairs() == 0) return refuse(why, "n_dims = 0 (a copy) stays on the CPU");
    if (gk_get_op_params_i32(n, 15) != 0) return refuse(why, "a rotated window at an offset (gk_rope_set_offset)");
    return (is(n, GK_TYPE_F32) && dense_f32(n->src[0])) || refuse(why, "f32 with dense rows only");
}
/// The angles are the CPU's (cpu/ops/rope_cache.h), made on the host from the positions
/// and frequency factors read back once the stream has computed them.
int rope_launch(const gk_tensor * n, void * s) {
    const cpu::rope_params rp    = cpu::rope_params_of(n);
    const gk_tensor *      pos   = n->src[1];
    const gk_tensor *      ff    = n->src[2];
    const int64_t          ne2   = n->src[0]->ne[2];
    const int64_t          pairs = rp.n_pairs();
    std::vector<int32_t>   p(static_cast<size_t>(gk_nelements(pos)));
    std::vector<float>     f(ff ? static_cast<size_t>(gk_nelements(ff)) : 0);
    cudaError_t            e = cudaStreamSynchronize(static_cast<cudaStream_t>(s));
    if (e == cudaSuccess) e = cudaMemcpy(p.data(), pos->data, gk_nbytes(pos), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && ff) e = cudaMemcpy(f.data(), ff->data, gk_nbytes(ff), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return static_cast<int>(e);
    gk_tensor ff_host{};
    if (ff) {
        ff_host      = *ff;
        ff_host.data = f.data();
    }
    std::vector<float> cs(static_cast<size_t>(ne2 * 2 * pairs));
    for (int64_t i2 = 0; i2 < ne2; ++i2) {
        float ps[4] = {};
        for (int k = 0; k < (rp.multi() ? 4 : 1); ++k) ps[k] = static_cast<float>(p[static_cast<size_t>(i2 + k * ne2)]);
        cpu::rope_cache(rp, ps, ff ? &ff_host : nullptr, 1.0f, cs.data() + i2 * 2 * pairs);
    }
    return with_table(cs.data(), cs.size() * sizeof(float), s, [&](void * dev) {
        return kernels::rope(arg(n->src[0]), arg(n), pairs, rp.mode == GK_ROPE_TYPE_NORMAL,
                             static_cast<const float *>(dev), s);
    });
}

// ---- group_norm, pad, timestep_embedding, im2col, upscale ------------------------------------

bool group_norm_ok(const gk_tensor * n, std::string * why) {
    return (is(n, GK_TYPE_F32) && is(n->src[0], GK_TYPE_F32)) || refuse(why, "f32 only");
}
int group_norm_launch(const gk_tensor * n, void * s) {
    return kernels::group_norm(arg(n->src[0]), arg(n), gk_get_op_params_i32(n, 0), gk_get_op_params_f32(n, 1), s);
}

bool pad_ok(const gk_tensor * n, std::string * why) {
    return (is(n, GK_TYPE_F32) && is(n->src[0], GK_TYPE_F32)) || refuse(why, "f32 only");
}
int pad_launch(const gk_tensor * n, void * s) {
    int32_t lp[4];
    for (int i = 0; i < 4; ++i) lp[i] = gk_get_op_params_i32(n, 2 * i);
    return kernels::pad(arg(n->src[0]), arg(n), lp, gk_get_op_params_i32(n, 8) != 0, s);
}

bool timestep_ok(const gk_tensor * n, std::string * why) {
    return (is(n->src[0], GK_TYPE_F32) && gk_is_contiguous(n->src[0]) && gk_is_contiguous(n)) ||
           refuse(why, "contiguous f32 only");
}
/// The rows are the CPU's (cpu/ops/timestep.h: libm's exp, cos and sin), made on the host
/// from the timesteps read back once the stream has computed them, then copied to dst.
int timestep_launch(const gk_tensor * n, void * s) {
    std::vector<float> t(static_cast<size_t>(n->ne[1]));
    std::vector<float> y(static_cast<size_t>(gk_nelements(n)));
    cudaError_t        e = cudaStreamSynchronize(static_cast<cudaStream_t>(s));
    if (e == cudaSuccess) e = cudaMemcpy(t.data(), n->src[0]->data, t.size() * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return static_cast<int>(e);
    for (size_t i = 0; i < t.size(); ++i) {
        cpu::timestep_row(t[i], gk_get_op_params_i32(n, 0), gk_get_op_params_i32(n, 1), y.data() + i * n->ne[0]);
    }
    return static_cast<int>(cudaMemcpy(n->data, y.data(), y.size() * sizeof(float), cudaMemcpyHostToDevice));
}

bool im2col_ok(const gk_tensor * n, std::string * why) {
    return (float_or_half(n) && float_or_half(n->src[1])) || refuse(why, "f32 or f16 only");
}
int im2col_launch(const gk_tensor * n, void * s) {
    const bool is_2d = gk_get_op_params_i32(n, 6) == 1;
    int32_t    conv[6];
    for (int i = 0; i < 6; ++i) conv[i] = gk_get_op_params_i32(n, i);
    return kernels::im2col(arg(n->src[1]), arg(n), n->src[0]->ne[0], is_2d ? n->src[0]->ne[1] : 1, conv, is_2d, s);
}

bool upscale_ok(const gk_tensor * n, std::string * why) {
    const int32_t flags = gk_get_op_params_i32(n, 0);
    const int32_t mode  = flags & 0xFF;
    if (mode != GK_SCALE_MODE_NEAREST && (mode != GK_SCALE_MODE_BILINEAR || (flags & GK_SCALE_FLAG_ANTIALIAS))) {
        return refuse(why, "nearest and bilinear (no antialiasing) only");
    }
    return (is(n, GK_TYPE_F32) && is(n->src[0], GK_TYPE_F32)) || refuse(why, "f32 only");
}
int upscale_launch(const gk_tensor * n, void * s) {
    const int32_t flags = gk_get_op_params_i32(n, 0);
    return kernels::upscale(arg(n->src[0]), arg(n), (flags & 0xFF) == GK_SCALE_MODE_BILINEAR,
                            (flags & GK_SCALE_FLAG_ALIGN_CORNERS) != 0, s);
}

struct op_entry {
    gk_op op;
    bool (*ok)(const gk_tensor *, std::string *);
    int (*launch)(const gk_tensor *, void *);
};

constexpr op_entry k_ops[] = {
    {GK_OP_ADD, binary_ok, binary_launch},
    {GK_OP_SUB, binary_ok, binary_launch},
    {GK_OP_MUL, binary_ok, binary_launch},
    {GK_OP_DIV, binary_ok, binary_launch},
    {GK_OP_SCALE, scale_ok, scale_launch},
    {GK_OP_MUL_MAT, mul_mat_ok, mul_mat_launch},
    {GK_OP_NORM, norm_ok, norm_launch},
    {GK_OP_RMS_NORM, norm_ok, norm_launch},
    {GK_OP_DUP, copy_ok, copy_launch},
    {GK_OP_CONT, copy_ok, copy_launch},
    {GK_OP_CPY, copy_ok, copy_launch},
    {GK_OP_GLU, glu_ok, glu_launch},
    {GK_OP_UNARY, unary_ok, unary_launch},
    {GK_OP_GET_ROWS, get_rows_ok, get_rows_launch},
    {GK_OP_SET_ROWS, set_rows_ok, set_rows_launch},
    {GK_OP_SOFT_MAX, soft_max_ok, soft_max_launch},
    {GK_OP_ROPE, rope_ok, rope_launch},
    {GK_OP_FLASH_ATTN_EXT, flash_attn_ok, flash_attn_launch},
    {GK_OP_MUL_MAT_ID, mul_mat_ok, mul_mat_id_launch},
    {GK_OP_L2_NORM, norm_ok, norm_launch},
    {GK_OP_GROUP_NORM, group_norm_ok, group_norm_launch},
    {GK_OP_PAD, pad_ok, pad_launch},
    {GK_OP_TIMESTEP_EMBEDDING, timestep_ok, timestep_launch},
    {GK_OP_IM2COL, im2col_ok, im2col_launch},
    {GK_OP_UPSCALE, upscale_ok, upscale_launch},
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

gk_status launch_op(const gk_tensor * node, void * stream) {
    const op_entry * e = entry(node->op);
    const int        r = e ? e->launch(node, stream) : static_cast<int>(cudaErrorNotSupported);
    if (r == k_bad_expert) {
        backend_error("node '%s' (%s): an expert id is outside [0, %lld)", gk_get_name(node), gk_op_name(node->op),
                      static_cast<long long>(node->src[0]->ne[2]));
        return GK_STATUS_OUT_OF_RANGE;
    }
    if (r != cudaSuccess) {
        backend_error("node '%s' (%s): kernel launch failed: %s", gk_get_name(node), gk_op_name(node->op),
                      cudaGetErrorString(static_cast<cudaError_t>(r)));
        cudaGetLastError();
        return GK_STATUS_FAILED;
    }
    return GK_STATUS_SUCCESS;
}

} // namespace gk::cuda
