// ops.cpp - what the Vulkan backend computes, one table row per op: a check (types,
// dense rows, the device's features) and a recorder that fills the shader's push
// constants (shaders/*.comp; their layouts are mirrored by the structs below) and
// dispatches. Each shader computes its op as the CPU kernel does, operation for
// operation, so the results have the CPU's bits wherever the device's arithmetic is
// IEEE's (correctly rounded add, mul, div and sqrt, fused fma, no flushed subnormals:
// lavapipe's is; the Vulkan spec lets a GPU's division and square root be a few ulp off).
#include "vk.h"

#include "../internal.h"

#include <algorithm>
#include <cstring>

namespace gk::vulkan {
namespace {

/// A tensor as a shader sees it: element offset in its buffer and strides in elements.
struct view {
    uint32_t off  = 0;
    uint32_t s[4] = {0, 0, 0, 0};
};

/// Whether `t` can be addressed in elements of `esize` bytes: its strides and its offset
/// in the tensor it views are whole elements (buffer offsets are, by the alignment).
bool whole_elements(const gk_tensor * t, size_t esize, std::string * why) {
    bool ok = t->view_offs % esize == 0;
    for (int i = 0; i < 4; ++i) ok = ok && t->nb[i] % esize == 0;
    if (!ok && why) *why = std::string("tensor '") + gk_get_name(t) + "' is not laid out in whole elements";
    return ok;
}

/// `t` in elements of `esize` bytes (whole_elements holds), once it has its buffer.
view as_view(const gk_tensor * t, size_t esize) {
    const auto * base = static_cast<const char *>(gk_backend_buffer_get_base(t->buffer));
    view         v;
    v.off = static_cast<uint32_t>(static_cast<size_t>(static_cast<const char *>(t->data) - base) / esize);
    for (int i = 0; i < 4; ++i) v.s[i] = static_cast<uint32_t>(t->nb[i] / esize);
    return v;
}

void ne4(const gk_tensor * t, uint32_t out[4]) {
    for (int i = 0; i < 4; ++i) out[i] = static_cast<uint32_t>(t->ne[i]);
}

bool is(const gk_tensor * t, gk_type type) { return t && t->type == type; }

bool refuse(std::string * why, const std::string & text) {
    if (why) *why = text;
    return false;
}

/// Record the pipeline of `key` with its push constants and enough groups of `local`
/// invocations for `n` items (the shaders loop over the rest when the device's group
/// count is smaller); false (the message recorded) when the pipeline cannot be made.
bool dispatch(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, pipeline_key key, const void * push,
              size_t push_bytes, uint64_t n, uint32_t local) {
    const VkPipeline pipe = get_pipeline(d, key);
    if (!pipe) return false;
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline_layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cmd, d.pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(push_bytes),
                       push);
    const uint64_t groups = std::max<uint64_t>(1, std::min<uint64_t>((n + local - 1) / local, d.max_groups));
    vkCmdDispatch(cmd, static_cast<uint32_t>(groups), 1, 1);
    return true;
}

// ---- binary: add, sub, mul, div (shaders/binary.comp) ------------------------------------

struct binary_push {
    uint32_t ne[4], as[4], bne[4], bs[4], ds[4];
    uint32_t aoff, boff, doff;
};

bool binary_ok(const device_context &, const gk_tensor * n, std::string * why) {
    if (!is(n, GK_TYPE_F32) || !is(n->src[0], GK_TYPE_F32) || !is(n->src[1], GK_TYPE_F32)) {
        return refuse(why, "f32 operands only");
    }
    return whole_elements(n, 4, why) && whole_elements(n->src[0], 4, why) && whole_elements(n->src[1], 4, why);
}

bool binary_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n) {
    const uint32_t op = n->op == GK_OP_ADD ? 0 : n->op == GK_OP_SUB ? 1 : n->op == GK_OP_MUL ? 2 : 3;
    const view     a = as_view(n->src[0], 4), b = as_view(n->src[1], 4), o = as_view(n, 4);
    binary_push p{};
    ne4(n, p.ne);
    ne4(n->src[1], p.bne);
    std::memcpy(p.as, a.s, sizeof p.as);
    std::memcpy(p.bs, b.s, sizeof p.bs);
    std::memcpy(p.ds, o.s, sizeof p.ds);
    p.aoff = a.off;
    p.boff = b.off;
    p.doff = o.off;
    return dispatch(d, cmd, set, {shader::binary, op}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- scale (shaders/scale.comp) ------------------------------------------------------------

struct scale_push {
    uint32_t ne[4], as[4], ds[4];
    uint32_t aoff, doff;
    float    s, bias;
};

bool scale_ok(const device_context &, const gk_tensor * n, std::string * why) {
    if (!is(n, GK_TYPE_F32) || !is(n->src[0], GK_TYPE_F32)) return refuse(why, "f32 only");
    return whole_elements(n, 4, why) && whole_elements(n->src[0], 4, why);
}

bool scale_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n) {
    const view a = as_view(n->src[0], 4), o = as_view(n, 4);
    scale_push p{};
    ne4(n, p.ne);
    std::memcpy(p.as, a.s, sizeof p.as);
    std::memcpy(p.ds, o.s, sizeof p.ds);
    p.aoff = a.off;
    p.doff = o.off;
    p.s    = gk_get_op_params_f32(n, 0);
    p.bias = gk_get_op_params_f32(n, 1);
    return dispatch(d, cmd, set, {shader::scale, 0}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- mul_mat (shaders/mul_mat.comp) -------------------------------------------------------

struct mul_mat_push {
    uint32_t M, N, ne2, ne3;
    uint32_t K, r2, r3, pad;
    uint32_t ws1, ws2, ws3;
    uint32_t xs1, xs2, xs3;
    uint32_t ds1, ds2, ds3;
    uint32_t woff, xoff, doff;
};

bool mul_mat_ok(const device_context &, const gk_tensor * n, std::string * why) {
    const gk_tensor * w = n->src[0];
    const gk_tensor * x = n->src[1];
    if (!is(w, GK_TYPE_F32) && !is(w, GK_TYPE_F16)) return refuse(why, "weights f32 or f16 only");
    if (!is(x, GK_TYPE_F32) || !is(n, GK_TYPE_F32)) return refuse(why, "f32 activations and result only");
    if (w->nb[0] != gk_type_size(w->type) || x->nb[0] != 4 || n->nb[0] != 4) {
        return refuse(why, "rows must be dense");
    }
    return whole_elements(w, gk_type_size(w->type), why) && whole_elements(x, 4, why) && whole_elements(n, 4, why);
}

bool mul_mat_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n) {
    const gk_tensor * w = n->src[0];
    const gk_tensor * x = n->src[1];
    const view        wv = as_view(w, gk_type_size(w->type)), xv = as_view(x, 4), dv = as_view(n, 4);
    mul_mat_push p{};
    p.M    = static_cast<uint32_t>(n->ne[0]);
    p.N    = static_cast<uint32_t>(n->ne[1]);
    p.ne2  = static_cast<uint32_t>(n->ne[2]);
    p.ne3  = static_cast<uint32_t>(n->ne[3]);
    p.K    = static_cast<uint32_t>(w->ne[0]);
    p.r2   = static_cast<uint32_t>(x->ne[2] / w->ne[2]);
    p.r3   = static_cast<uint32_t>(x->ne[3] / w->ne[3]);
    p.ws1  = wv.s[1], p.ws2 = wv.s[2], p.ws3 = wv.s[3];
    p.xs1  = xv.s[1], p.xs2 = xv.s[2], p.xs3 = xv.s[3];
    p.ds1  = dv.s[1], p.ds2 = dv.s[2], p.ds3 = dv.s[3];
    p.woff = wv.off, p.xoff = xv.off, p.doff = dv.off;
    // fma_exact wherever the device has doubles: a device's fma() need not be fused
    // (lavapipe's is not), and the CPU's dot fuses every step.
    const uint32_t   mode = (w->type == GK_TYPE_F16 ? 1u : 0u) | (d.float64 ? 2u : 0u);
    return dispatch(d, cmd, set, {shader::mul_mat, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 64);
}

// ---- norm, rms_norm (shaders/norm.comp) ----------------------------------------------------

struct norm_push {
    uint32_t ne[4], as[4], ds[4];
    uint32_t aoff, doff;
    float    eps;
};

bool norm_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    if (!d.float64) return refuse(why, "the device has no shaderFloat64 (the sums are in double)");
    if (!is(n, GK_TYPE_F32) || !is(n->src[0], GK_TYPE_F32)) return refuse(why, "f32 only");
    if (n->nb[0] != 4 || n->src[0]->nb[0] != 4) return refuse(why, "rows must be dense");
    return whole_elements(n, 4, why) && whole_elements(n->src[0], 4, why);
}

bool norm_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n) {
    const view a = as_view(n->src[0], 4), o = as_view(n, 4);
    norm_push p{};
    ne4(n, p.ne);
    std::memcpy(p.as, a.s, sizeof p.as);
    std::memcpy(p.ds, o.s, sizeof p.ds);
    p.aoff = a.off;
    p.doff = o.off;
    p.eps  = gk_get_op_params_f32(n, 0);
    const uint32_t mean = n->op == GK_OP_NORM ? 1u : 0u;
    return dispatch(d, cmd, set, {shader::norm, mean}, &p, sizeof p, static_cast<uint64_t>(gk_nrows(n)), 64);
}

// ---- dup, cont, cpy (shaders/copy.comp) ---------------------------------------------------

struct copy_push {
    uint32_t ane[4], as[4], dne[4], ds[4];
    uint32_t aoff, doff;
};

bool float_or_half(const gk_tensor * t) { return is(t, GK_TYPE_F32) || is(t, GK_TYPE_F16); }

bool copy_ok(const device_context &, const gk_tensor * n, std::string * why) {
    if (!float_or_half(n) || !float_or_half(n->src[0])) return refuse(why, "f32 and f16 only");
    return whole_elements(n, gk_type_size(n->type), why) &&
           whole_elements(n->src[0], gk_type_size(n->src[0]->type), why);
}

bool copy_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n) {
    const gk_tensor * a = n->src[0];
    const view        av = as_view(a, gk_type_size(a->type)), dv = as_view(n, gk_type_size(n->type));
    copy_push         p{};
    ne4(a, p.ane);
    ne4(n, p.dne);
    std::memcpy(p.as, av.s, sizeof p.as);
    std::memcpy(p.ds, dv.s, sizeof p.ds);
    p.aoff = av.off;
    p.doff = dv.off;
    const uint32_t   mode = (a->type == GK_TYPE_F16 ? 1u : 0u) | (n->type == GK_TYPE_F16 ? 2u : 0u);
    return dispatch(d, cmd, set, {shader::copy, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- the table ------------------------------------------------------------------------------

struct op_entry {
    gk_op op;
    bool (*ok)(const device_context &, const gk_tensor *, std::string *);
    bool (*record)(device_context &, VkCommandBuffer, VkDescriptorSet, const gk_tensor *);
};

constexpr op_entry k_ops[] = {
    {GK_OP_ADD, binary_ok, binary_record},   {GK_OP_SUB, binary_ok, binary_record},
    {GK_OP_MUL, binary_ok, binary_record},   {GK_OP_DIV, binary_ok, binary_record},
    {GK_OP_SCALE, scale_ok, scale_record},   {GK_OP_MUL_MAT, mul_mat_ok, mul_mat_record},
    {GK_OP_NORM, norm_ok, norm_record},      {GK_OP_RMS_NORM, norm_ok, norm_record},
    {GK_OP_DUP, copy_ok, copy_record},       {GK_OP_CONT, copy_ok, copy_record},
    {GK_OP_CPY, copy_ok, copy_record},
};

const op_entry * entry(gk_op op) {
    for (const op_entry & e : k_ops) {
        if (e.op == op) return &e;
    }
    return nullptr;
}

static_assert(sizeof(binary_push) <= 128 && sizeof(scale_push) <= 128 && sizeof(mul_mat_push) <= 128 &&
                  sizeof(norm_push) <= 128 && sizeof(copy_push) <= 128,
              "push constants fit the 128 bytes every device offers");

} // namespace

bool supports_op(const device_context & d, const gk_tensor * node, std::string * why) {
    if (is_layout_op(node->op)) return true;
    const op_entry * e = entry(node->op);
    if (!e) return refuse(why, std::string("no Vulkan kernel for ") + gk_op_name(node->op));
    return e->ok(d, node, why);
}

bool record_op(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * node) {
    const op_entry * e = entry(node->op);
    return e && e->record(d, cmd, set, node);
}

} // namespace gk::vulkan
