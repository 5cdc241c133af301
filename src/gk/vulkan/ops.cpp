// ops.cpp - what the Vulkan backend computes, one table row per op: a check (types,
// dense rows, the device's features) and a recorder that fills the shader's push
// constants (shaders/*.comp; their layouts are mirrored by the structs below) and
// dispatches. Each shader computes its op as the CPU kernel does, operation for
// operation, so the results have the CPU's bits wherever the device's arithmetic is
// IEEE's (correctly rounded add, mul, div and sqrt, fused fma, no flushed subnormals:
// lavapipe's is; the Vulkan spec lets a GPU's division and square root be a few ulp off).
// What only libm gives the CPU (GELU, rope's cos / sin, ALiBi's pow) is not recomputed:
// a row may name host-filled data (aux_bytes / aux_fill) made with the CPU's own code
// (cpu/ops/activations.h, rope_cache.h, alibi.h), which the shader reads at binding 3.
#include "vk.h"

#include "../cpu/ops/activations.h"
#include "../cpu/ops/alibi.h"
#include "../cpu/ops/rope_cache.h"
#include "../internal.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>

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

/// A view into a push constant block's strides and offset fields.
void put(const view & v, uint32_t (&s)[4], uint32_t & off) {
    std::memcpy(s, v.s, sizeof s);
    off = v.off;
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

bool binary_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    const uint32_t op = n->op == GK_OP_ADD ? 0 : n->op == GK_OP_SUB ? 1 : n->op == GK_OP_MUL ? 2 : 3;
    const view     a = as_view(n->src[0], 4), b = as_view(n->src[1], 4), o = as_view(n, 4);
    binary_push    p{};
    ne4(n, p.ne);
    ne4(n->src[1], p.bne);
    put(a, p.as, p.aoff);
    put(b, p.bs, p.boff);
    put(o, p.ds, p.doff);
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

bool scale_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    const view a = as_view(n->src[0], 4), o = as_view(n, 4);
    scale_push p{};
    ne4(n, p.ne);
    put(a, p.as, p.aoff);
    put(o, p.ds, p.doff);
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

bool mul_mat_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
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

bool norm_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    const view a = as_view(n->src[0], 4), o = as_view(n, 4);
    norm_push  p{};
    ne4(n, p.ne);
    put(a, p.as, p.aoff);
    put(o, p.ds, p.doff);
    p.eps               = gk_get_op_params_f32(n, 0);
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

bool copy_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    const gk_tensor * a  = n->src[0];
    const view        av = as_view(a, gk_type_size(a->type)), dv = as_view(n, gk_type_size(n->type));
    copy_push         p{};
    ne4(a, p.ane);
    ne4(n, p.dne);
    put(av, p.as, p.aoff);
    put(dv, p.ds, p.doff);
    const uint32_t mode = (a->type == GK_TYPE_F16 ? 1u : 0u) | (n->type == GK_TYPE_F16 ? 2u : 0u);
    return dispatch(d, cmd, set, {shader::copy, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- the host-filled tables (binding 3) -----------------------------------------------------

constexpr size_t k_f16_table_bytes = (size_t{1} << 16) * sizeof(uint16_t);

/// f16 bits of act at every f16 input: the CPU's table (cpu/ops/gelu_tables.cpp).
void fill_f16_table(cpu::act_fn act, void * out) { cpu::f16_table_bits(act, static_cast<uint16_t *>(out)); }

/// Whether `t` holds its value before the graph runs (a leaf, a view of one, or the
/// scheduler's staged copy of one, op DUP, filled before the split runs): what aux_fill
/// may read on the host. graph_compute also checks that no node of its graph computes it.
bool is_input(const gk_tensor * t) {
    while (t->view_src || (t->op == GK_OP_DUP && t->src[0])) t = t->view_src ? t->view_src : t->src[0];
    return t->op == GK_OP_NONE;
}

/// Dense f32 rows (element stride 4) and whole elements, for dst and its sources `k`.
bool dense_f32(const gk_tensor * n, std::initializer_list<const gk_tensor *> srcs, std::string * why) {
    for (const gk_tensor * t : srcs) {
        if (!is(t, GK_TYPE_F32)) return refuse(why, "f32 only");
        if (t->nb[0] != 4) return refuse(why, "rows must be dense");
        if (!whole_elements(t, 4, why)) return false;
    }
    return is(n, GK_TYPE_F32) || refuse(why, "f32 only");
}

/// The shaders' activation (glu.comp and unary.comp's OP, act.glsl): 0 silu, 1 gelu,
/// 2 gelu_quick, 3 relu, 4 neg; -1 for the others.
int act_kind(gk_unary_op op) {
    switch (op) {
    case GK_UNARY_OP_SILU: return 0;
    case GK_UNARY_OP_GELU: return 1;
    case GK_UNARY_OP_GELU_QUICK: return 2;
    case GK_UNARY_OP_RELU: return 3;
    case GK_UNARY_OP_NEG: return 4;
    default: return -1;
    }
}

int glu_kind(const gk_tensor * n) { return act_kind(cpu::glu_unary_op(gk_get_glu_op(n))); }
int unary_kind(const gk_tensor * n) { return act_kind(gk_get_unary_op(n)); }

/// The bytes of the f16 table activation `kind` looks up (gelu's, gelu_quick's), or 0.
size_t act_table_bytes(int kind) { return kind == 1 || kind == 2 ? k_f16_table_bytes : 0; }
void   act_table_fill(int kind, void * out) { fill_f16_table(kind == 1 ? cpu::act_gelu : cpu::act_gelu_quick, out); }

// ---- glu: swiglu, geglu, reglu, geglu_quick (shaders/glu.comp) -----------------------------

struct glu_push {
    uint32_t ne[4], as[4], bs[4], ds[4];
    uint32_t aoff, boff, doff, toff;
    uint32_t split, swapped;
};

bool glu_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    if (glu_kind(n) < 0) return refuse(why, "swiglu, geglu, reglu and geglu_quick only");
    if (!d.float64) return refuse(why, "the device has no shaderFloat64 (exp's fused multiply-adds)");
    if (n->src[1]) return dense_f32(n, {n->src[0], n->src[1]}, why) && whole_elements(n, 4, why);
    return dense_f32(n, {n->src[0]}, why) && whole_elements(n, 4, why);
}

size_t glu_aux(const gk_tensor * n) { return act_table_bytes(glu_kind(n)); }
void   glu_fill(const gk_tensor * n, void * out) { act_table_fill(glu_kind(n), out); }

bool glu_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t aux) {
    const gk_tensor * b  = n->src[1] ? n->src[1] : n->src[0];
    const view        av = as_view(n->src[0], 4), bv = as_view(b, 4), dv = as_view(n, 4);
    glu_push          p{};
    ne4(n, p.ne);
    put(av, p.as, p.aoff);
    put(bv, p.bs, p.boff);
    put(dv, p.ds, p.doff);
    p.toff          = aux;
    p.split         = n->src[1] ? 1u : 0u;
    p.swapped       = gk_get_op_params_i32(n, 1) != 0 ? 1u : 0u;
    const auto kind = static_cast<uint32_t>(glu_kind(n));
    return dispatch(d, cmd, set, {shader::glu, kind}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- unary: silu, gelu, gelu_quick, relu, neg (shaders/unary.comp) -------------------------

struct unary_push {
    uint32_t ne[4], as[4], ds[4];
    uint32_t aoff, doff, toff;
};

bool unary_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    if (unary_kind(n) < 0) return refuse(why, "silu, gelu, gelu_quick, relu and neg only");
    if (!d.float64) return refuse(why, "the device has no shaderFloat64 (exp's fused multiply-adds)");
    if (!is(n, GK_TYPE_F32) || !is(n->src[0], GK_TYPE_F32)) return refuse(why, "f32 only");
    return whole_elements(n, 4, why) && whole_elements(n->src[0], 4, why);
}

size_t unary_aux(const gk_tensor * n) { return act_table_bytes(unary_kind(n)); }
void   unary_fill(const gk_tensor * n, void * out) { act_table_fill(unary_kind(n), out); }

bool unary_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t aux) {
    const view av = as_view(n->src[0], 4), dv = as_view(n, 4);
    unary_push p{};
    ne4(n, p.ne);
    put(av, p.as, p.aoff);
    put(dv, p.ds, p.doff);
    p.toff          = aux;
    const auto kind = static_cast<uint32_t>(unary_kind(n));
    return dispatch(d, cmd, set, {shader::unary, kind}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- get_rows (shaders/get_rows.comp) -------------------------------------------------------

struct get_rows_push {
    uint32_t ne[4], as[4], is[4], ds[4];
    uint32_t aoff, ioff, doff, rows;
};

int table_kind(gk_type t) {
    switch (t) {
    case GK_TYPE_F32: return 0;
    case GK_TYPE_F16: return 1;
    case GK_TYPE_Q8_0: return 2;
    case GK_TYPE_Q4_0: return 3;
    default: return -1;
    }
}

bool get_rows_ok(const device_context &, const gk_tensor * n, std::string * why) {
    const gk_tensor * a = n->src[0];
    if (table_kind(a->type) < 0) return refuse(why, "tables of f32, f16, q8_0 or q4_0 rows only");
    if (!is(n->src[1], GK_TYPE_I32) || !is(n, GK_TYPE_F32)) return refuse(why, "i32 indices and an f32 result only");
    if (a->nb[0] != gk_type_size(a->type)) return refuse(why, "rows must be dense");
    if (table_kind(a->type) < 2 && !whole_elements(a, gk_type_size(a->type), why)) return false;
    return whole_elements(n->src[1], 4, why) && whole_elements(n, 4, why);
}

bool get_rows_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    const gk_tensor * a  = n->src[0];
    const view        av = as_view(a, 1), iv = as_view(n->src[1], 4), dv = as_view(n, 4);
    get_rows_push     p{};
    ne4(n, p.ne);
    put(av, p.as, p.aoff);
    put(iv, p.is, p.ioff);
    put(dv, p.ds, p.doff);
    p.rows          = static_cast<uint32_t>(a->ne[1]);
    const auto kind = static_cast<uint32_t>(table_kind(a->type));
    return dispatch(d, cmd, set, {shader::get_rows, kind}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- set_rows (shaders/set_rows.comp) -------------------------------------------------------

struct set_rows_push {
    uint32_t ne[4], bs[4], is[4], ds[4];
    uint32_t boff, ioff, doff, rows;
    uint32_t ine1, ine2;
};

bool set_rows_ok(const device_context &, const gk_tensor * n, std::string * why) {
    const gk_tensor * idx = n->src[1];
    if (!float_or_half(n) || !is(n->src[0], GK_TYPE_F32)) return refuse(why, "f32 rows into f32 or f16 only");
    if (!is(idx, GK_TYPE_I32) && !is(idx, GK_TYPE_I64)) return refuse(why, "i32 or i64 indices only");
    return whole_elements(n, gk_type_size(n->type), why) && whole_elements(n->src[0], 4, why) &&
           whole_elements(idx, gk_type_size(idx->type), why);
}

bool set_rows_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    const gk_tensor * b   = n->src[0];
    const gk_tensor * idx = n->src[1];
    const view        bv = as_view(b, 4), iv = as_view(idx, gk_type_size(idx->type));
    const view        dv = as_view(n, gk_type_size(n->type));
    set_rows_push     p{};
    ne4(b, p.ne);
    put(bv, p.bs, p.boff);
    put(iv, p.is, p.ioff);
    put(dv, p.ds, p.doff);
    p.rows              = static_cast<uint32_t>(n->ne[1]);
    p.ine1              = static_cast<uint32_t>(idx->ne[1]);
    p.ine2              = static_cast<uint32_t>(idx->ne[2]);
    const uint32_t mode = (n->type == GK_TYPE_F16 ? 1u : 0u) | (idx->type == GK_TYPE_I64 ? 2u : 0u);
    return dispatch(d, cmd, set, {shader::set_rows, mode}, &p, sizeof p,
                    static_cast<uint64_t>(b->ne[0] * b->ne[2] * b->ne[3]), 256);
}

// ---- soft_max (shaders/soft_max.comp) -------------------------------------------------------

struct soft_max_push {
    uint32_t ne[4], as[4], ms[4], ds[4];
    uint32_t aoff, moff, doff, soff;
    uint32_t mne2, mne3;
    float    scale;
};

bool soft_max_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    const gk_tensor * mask = n->src[1];
    if (n->src[2]) return refuse(why, "no attention sinks (their exp is libm's, in double)");
    if (!d.float64) return refuse(why, "the device has no shaderFloat64 (the sums are in double)");
    if (mask && !float_or_half(mask)) return refuse(why, "an f32 or f16 mask only");
    if (mask && !whole_elements(mask, gk_type_size(mask->type), why)) return false;
    return dense_f32(n, {n->src[0]}, why) && whole_elements(n, 4, why);
}

size_t soft_max_aux(const gk_tensor * n) {
    return n->src[1] && gk_get_op_params_f32(n, 1) > 0.0f ? static_cast<size_t>(n->ne[2]) * sizeof(float) : 0;
}

void soft_max_fill(const gk_tensor * n, void * out) {
    auto * slopes = static_cast<float *>(out);
    for (int64_t h = 0; h < n->ne[2]; ++h) slopes[h] = cpu::alibi_slope(gk_get_op_params_f32(n, 1), n->ne[2], h);
}

bool soft_max_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t aux) {
    const gk_tensor * mask = n->src[1];
    const view        av = as_view(n->src[0], 4), dv = as_view(n, 4);
    soft_max_push     p{};
    ne4(n, p.ne);
    put(av, p.as, p.aoff);
    put(dv, p.ds, p.doff);
    p.soff        = aux;
    p.mne2        = 1;
    p.mne3        = 1;
    p.scale       = gk_get_op_params_f32(n, 0);
    uint32_t mode = 0;
    if (mask) {
        const view mv = as_view(mask, gk_type_size(mask->type));
        put(mv, p.ms, p.moff);
        p.mne2 = static_cast<uint32_t>(mask->ne[2]);
        p.mne3 = static_cast<uint32_t>(mask->ne[3]);
        mode   = 1u | (mask->type == GK_TYPE_F16 ? 2u : 0u) | (soft_max_aux(n) > 0 ? 4u : 0u);
    }
    return dispatch(d, cmd, set, {shader::soft_max, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nrows(n)), 64);
}

// ---- rope (shaders/rope.comp) ---------------------------------------------------------------

struct rope_push {
    uint32_t ne[4], as[4], ds[4];
    uint32_t aoff, doff, toff, pairs;
};

bool rope_ok(const device_context &, const gk_tensor * n, std::string * why) {
    const gk_tensor * pos = n->src[1];
    const gk_tensor * ff  = n->src[2];
    if (!is(pos, GK_TYPE_I32) || !gk_is_contiguous(pos)) return refuse(why, "contiguous i32 positions only");
    if (gk_get_op_params_i32(n, 15) != 0) return refuse(why, "a rotated window at an offset (gk_rope_set_offset)");
    if (!is_input(pos) || (ff && !is_input(ff))) {
        return refuse(why, "positions and frequency factors must be inputs (the angles are tabulated on the host)");
    }
    return dense_f32(n, {n->src[0]}, why) && whole_elements(n, 4, why);
}

size_t rope_aux(const gk_tensor * n) {
    return static_cast<size_t>(n->src[0]->ne[2]) * 2 * static_cast<size_t>(cpu::rope_params_of(n).n_pairs()) *
           sizeof(float);
}

void rope_fill(const gk_tensor * n, void * out) {
    const cpu::rope_params rp  = cpu::rope_params_of(n);
    const int64_t          ne2 = n->src[0]->ne[2];
    const auto *           pos = static_cast<const int32_t *>(n->src[1]->data);
    auto *                 cs  = static_cast<float *>(out);
    for (int64_t i2 = 0; i2 < ne2; ++i2) {
        float ps[4] = {};
        for (int k = 0; k < (rp.multi() ? 4 : 1); ++k) ps[k] = static_cast<float>(pos[i2 + k * ne2]);
        cpu::rope_cache(rp, ps, n->src[2], 1.0f, cs + i2 * 2 * rp.n_pairs());
    }
}

bool rope_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t aux) {
    const cpu::rope_params rp = cpu::rope_params_of(n);
    const view             av = as_view(n->src[0], 4), dv = as_view(n, 4);
    rope_push              p{};
    ne4(n, p.ne);
    put(av, p.as, p.aoff);
    put(dv, p.ds, p.doff);
    p.toff                  = aux;
    p.pairs                 = static_cast<uint32_t>(rp.n_pairs());
    const uint32_t adjacent = rp.mode == GK_ROPE_TYPE_NORMAL ? 1u : 0u;
    const uint64_t units    = static_cast<uint64_t>(n->ne[0] - rp.n_pairs()) * static_cast<uint64_t>(gk_nrows(n));
    return dispatch(d, cmd, set, {shader::rope, adjacent}, &p, sizeof p, units, 256);
}

// ---- the table ------------------------------------------------------------------------------

struct op_entry {
    gk_op op;
    bool (*ok)(const device_context &, const gk_tensor *, std::string *);
    bool (*record)(device_context &, VkCommandBuffer, VkDescriptorSet, const gk_tensor *, uint32_t aux_word);
    size_t (*aux_bytes)(const gk_tensor *)      = nullptr;  // binding 3's data, when the shader reads some
    void (*aux_fill)(const gk_tensor *, void *) = nullptr;
    bool aux_reads_sources = false;  // aux_fill reads src[1] and src[2] (rope's positions, factors)
};

constexpr op_entry k_ops[] = {
    {GK_OP_ADD, binary_ok, binary_record},
    {GK_OP_SUB, binary_ok, binary_record},
    {GK_OP_MUL, binary_ok, binary_record},
    {GK_OP_DIV, binary_ok, binary_record},
    {GK_OP_SCALE, scale_ok, scale_record},
    {GK_OP_MUL_MAT, mul_mat_ok, mul_mat_record},
    {GK_OP_NORM, norm_ok, norm_record},
    {GK_OP_RMS_NORM, norm_ok, norm_record},
    {GK_OP_DUP, copy_ok, copy_record},
    {GK_OP_CONT, copy_ok, copy_record},
    {GK_OP_CPY, copy_ok, copy_record},
    {GK_OP_GLU, glu_ok, glu_record, glu_aux, glu_fill},
    {GK_OP_UNARY, unary_ok, unary_record, unary_aux, unary_fill},
    {GK_OP_GET_ROWS, get_rows_ok, get_rows_record},
    {GK_OP_SET_ROWS, set_rows_ok, set_rows_record},
    {GK_OP_SOFT_MAX, soft_max_ok, soft_max_record, soft_max_aux, soft_max_fill},
    {GK_OP_ROPE, rope_ok, rope_record, rope_aux, rope_fill, true},
};

const op_entry * entry(gk_op op) {
    for (const op_entry & e : k_ops) {
        if (e.op == op) return &e;
    }
    return nullptr;
}

static_assert(sizeof(binary_push) <= 128 && sizeof(scale_push) <= 128 && sizeof(mul_mat_push) <= 128 &&
                  sizeof(norm_push) <= 128 && sizeof(copy_push) <= 128 && sizeof(glu_push) <= 128 &&
                  sizeof(unary_push) <= 128 && sizeof(get_rows_push) <= 128 && sizeof(set_rows_push) <= 128 &&
                  sizeof(soft_max_push) <= 128 && sizeof(rope_push) <= 128,
              "push constants fit the 128 bytes every device offers");

} // namespace

bool supports_op(const device_context & d, const gk_tensor * node, std::string * why) {
    if (is_layout_op(node->op)) return true;
    const op_entry * e = entry(node->op);
    if (!e) return refuse(why, std::string("no Vulkan kernel for ") + gk_op_name(node->op));
    return e->ok(d, node, why);
}

size_t aux_bytes(const gk_tensor * node) {
    const op_entry * e = entry(node->op);
    return e && e->aux_bytes ? e->aux_bytes(node) : 0;
}

bool aux_reads_sources(const gk_tensor * node) {
    const op_entry * e = entry(node->op);
    return e && e->aux_reads_sources;
}

void aux_fill(const gk_tensor * node, void * out) {
    const op_entry * e = entry(node->op);
    if (e && e->aux_fill) e->aux_fill(node, out);
}

bool record_op(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * node,
               uint32_t aux_word) {
    const op_entry * e = entry(node->op);
    return e && e->record(d, cmd, set, node, aux_word);
}

} // namespace gk::vulkan
