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
#include "../cpu/ops/timestep.h"
#include "../device/block_formats.h"
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

/// The groups of `local` invocations dispatch() records for `n` items: enough for one item
/// each, at most the device's group count (the shaders loop over the rest).
uint64_t group_count(const device_context & d, uint64_t n, uint32_t local) {
    return std::max<uint64_t>(1, std::min<uint64_t>((n + local - 1) / local, d.max_groups));
}

/// The rows one invocation handles when `rows` rows go to dispatch()'s groups of `local`.
uint64_t rows_per_invocation(const device_context & d, uint64_t rows, uint32_t local) {
    const uint64_t groups = group_count(d, rows, local);
    return (rows + local * groups - 1) / (local * groups);
}

/// Whether one invocation may run `iterations` loop iterations on this device (vk.h's
/// max_loop_iterations: lavapipe's limit); refuses with the numbers otherwise.
bool loop_budget_ok(const device_context & d, uint64_t iterations, std::string * why) {
    return iterations <= d.max_loop_iterations ||
           refuse(why, "an invocation would run " + std::to_string(iterations) + " loop iterations; the device stops at " +
                           std::to_string(d.max_loop_iterations) + " (lavapipe's loop limiter)");
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
    vkCmdDispatch(cmd, static_cast<uint32_t>(group_count(d, n, local)), 1, 1);
    return true;
}

// ---- binary: add, sub, mul, div (shaders/binary.comp) ------------------------------------

struct binary_push {
    uint32_t ne[4], as[4], bne[4], bs[4], ds[4];
    uint32_t aoff, boff, doff;
};

/// Whether t is f32 or f16 and laid out in whole elements of its type.
bool float_or_half_elements(const gk_tensor * t, std::string * why) {
    if (!is(t, GK_TYPE_F32) && !is(t, GK_TYPE_F16)) return refuse(why, "f32 and f16 only");
    return whole_elements(t, gk_type_size(t->type), why);
}

/// An f32 or f16 view of t (in its elements) and its type's bit for the shaders' MODE.
view float_view(const gk_tensor * t, uint32_t f16_bit, uint32_t & mode) {
    if (t->type == GK_TYPE_F16) mode |= f16_bit;
    return as_view(t, gk_type_size(t->type));
}

bool binary_ok(const device_context &, const gk_tensor * n, std::string * why) {
    return float_or_half_elements(n, why) && float_or_half_elements(n->src[0], why) &&
           float_or_half_elements(n->src[1], why);
}

bool binary_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    uint32_t    mode = n->op == GK_OP_ADD ? 0 : n->op == GK_OP_SUB ? 1 : n->op == GK_OP_MUL ? 2 : 3;
    const view  a = float_view(n->src[0], 4, mode), b = float_view(n->src[1], 8, mode), o = float_view(n, 16, mode);
    binary_push p{};
    ne4(n, p.ne);
    ne4(n->src[1], p.bne);
    put(a, p.as, p.aoff);
    put(b, p.bs, p.boff);
    put(o, p.ds, p.doff);
    return dispatch(d, cmd, set, {shader::binary, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- scale (shaders/scale.comp) ------------------------------------------------------------

struct scale_push {
    uint32_t ne[4], as[4], ds[4];
    uint32_t aoff, doff;
    float    s, bias;
};

/// An f32 result from one f32 source, both in whole elements (scale, pad).
bool f32_from_f32_ok(const device_context &, const gk_tensor * n, std::string * why) {
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

/// mul_mat.comp's, quantize_act.comp's and mul_mat_q.comp's push constants (each reads
/// the fields it needs; shaders/mul_mat_push.glsl): weight strides in elements (bytes for
/// block formats), aoff the quantized activations' first word at binding 3, toff the
/// format's table's, and for mul_mat_id the ids' place and eoff, the word at binding 3 a
/// bad id sets.
struct mul_mat_push {
    uint32_t M, N, ne2, ne3;
    uint32_t K, r2, r3, aoff;
    uint32_t ws1, ws2, ws3;
    uint32_t xs1, xs2, xs3;
    uint32_t ds1, ds2, ds3;
    uint32_t woff, xoff, doff;
    uint32_t xN;
    uint32_t E, ioff, is0;
    uint32_t is1, eoff;
    uint32_t toff;
};

/// How mul_mat_q.comp takes block-format weights of one type (device/block_decode.h):
/// quantize_act.comp's activation format (0 q8_0, 1 q8_K, 2 q8_1: the CPU's vec_dot_type),
/// or -1 for weights it does not take in blocks, and the elements of one chain step.
struct quant_kind {
    int      act  = -1;
    uint32_t unit = 0;
    uint32_t block() const { return act == 1 ? 256 : 32; }  // activation block
    uint32_t block_words() const { return (act == 2 ? 2 : 1) + block() / 4; }
    /// mul_mat_q.comp's loop iterations per unit (q8_K: 16 groups of 16, iq1_m's d 4 more).
    uint32_t loops_per_unit() const { return act == 1 ? 5 + 16 * 17 : 1 + unit; }
};

quant_kind quant_kind_of(gk_type type) {
    switch (gk::device::block_act_type(type)) {
    case GK_TYPE_Q8_K: return {1, 256};
    case GK_TYPE_Q8_1: return {2, 32};
    case GK_TYPE_Q8_0: return {0, type == GK_TYPE_NVFP4 ? 16u : 32u};
    default: return {};
    }
}

/// mul_mat and mul_mat_id (dst[:, u, t] = weight slab ids[u, t] times activation row
/// (u % rows, t): the same shaders with an id lookup).
bool mul_mat_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    const gk_tensor * w     = n->src[0];
    const gk_tensor * x     = n->src[1];
    const bool        plain = is(w, GK_TYPE_F32) || is(w, GK_TYPE_F16);
    const quant_kind  q     = quant_kind_of(w->type);
    if (!plain && q.act < 0) {
        return refuse(why, std::string("no Vulkan mul_mat for ") + gk_type_name(w->type) + " weights");
    }
    if (n->op == GK_OP_MUL_MAT_ID) {
        if (!is(n->src[2], GK_TYPE_I32)) return refuse(why, "i32 expert ids only");
        if (!whole_elements(n->src[2], 4, why)) return false;
    }
    if (!is(x, GK_TYPE_F32) || !is(n, GK_TYPE_F32)) return refuse(why, "f32 activations and result only");
    if (w->nb[0] != gk_type_size(w->type) || x->nb[0] != 4 || n->nb[0] != 4) {
        return refuse(why, "rows must be dense");
    }
    if (!plain) {
        // mul_mat_q.comp: one invocation per output (several when there are more outputs
        // than invocations), its loops per unit of the row
        const uint64_t per_output = static_cast<uint64_t>(w->ne[0]) / q.unit * q.loops_per_unit() + 1;
        if (!loop_budget_ok(d, rows_per_invocation(d, static_cast<uint64_t>(gk_nelements(n)), 64) * per_output, why)) {
            return false;
        }
    }
    return (!plain || whole_elements(w, gk_type_size(w->type), why)) && whole_elements(x, 4, why) &&
           whole_elements(n, 4, why);
}

/// Block-format weights: the format's table, then the activations in the weights'
/// vec_dot_type (quantize_act.comp's output); 0 for f32 and f16 weights.
size_t mul_mat_aux(const gk_tensor * n) {
    const quant_kind q = quant_kind_of(n->src[0]->type);
    if (q.act < 0) return 0;
    const gk_tensor * x = n->src[1];
    return gk::device::block_table(n->src[0]->type).size() * 4 +
           static_cast<size_t>(gk_nrows(x)) * static_cast<size_t>(x->ne[0] / q.block()) * q.block_words() * 4;
}

void mul_mat_fill(const gk_tensor * n, void * out) {
    const std::vector<uint32_t> t = gk::device::block_table(n->src[0]->type);
    if (!t.empty()) std::memcpy(out, t.data(), t.size() * 4);
}

/// mul_mat_id's binding 3: mul_mat_aux's activations, then the word a bad expert id sets.
size_t mul_mat_id_aux(const gk_tensor * n) { return mul_mat_aux(n) + 4; }

void mul_mat_id_fill(const gk_tensor * n, void * out) {
    mul_mat_fill(n, out);
    std::memset(static_cast<char *>(out) + mul_mat_aux(n), 0, 4);
}

/// An expert id outside [0, E) leaves its columns 0 and sets the word: the compute fails,
/// as the CPU's does (GK_STATUS_OUT_OF_RANGE).
bool mul_mat_id_check(const gk_tensor * n, const void * aux, std::string * why) {
    uint32_t bad = 0;
    std::memcpy(&bad, static_cast<const char *>(aux) + mul_mat_aux(n), 4);
    return bad == 0 || refuse(why, "an expert id is outside [0, " + std::to_string(n->src[0]->ne[2]) + ")");
}

bool mul_mat_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t aux) {
    const gk_tensor * w  = n->src[0];
    const gk_tensor * x  = n->src[1];
    const quant_kind  q  = quant_kind_of(w->type);
    const view        xv = as_view(x, 4), dv = as_view(n, 4);
    // Block formats are addressed in bytes (their blocks need not be 4-byte aligned).
    const view   wv = as_view(w, q.act >= 0 ? 1 : gk_type_size(w->type));
    mul_mat_push p{};
    p.M    = static_cast<uint32_t>(n->ne[0]);
    p.N    = static_cast<uint32_t>(n->ne[1]);
    p.ne2  = static_cast<uint32_t>(n->ne[2]);
    p.ne3  = static_cast<uint32_t>(n->ne[3]);
    p.K    = static_cast<uint32_t>(w->ne[0]);
    p.r2   = static_cast<uint32_t>(x->ne[2] / w->ne[2]);
    p.r3   = static_cast<uint32_t>(x->ne[3] / w->ne[3]);
    p.toff = aux;
    p.aoff = aux + static_cast<uint32_t>(gk::device::block_table(w->type).size());
    p.ws1  = wv.s[1], p.ws2 = wv.s[2], p.ws3 = wv.s[3];
    p.xs1  = xv.s[1], p.xs2 = xv.s[2], p.xs3 = xv.s[3];
    p.ds1  = dv.s[1], p.ds2 = dv.s[2], p.ds3 = dv.s[3];
    p.woff = wv.off, p.xoff = xv.off, p.doff = dv.off;
    p.xN   = static_cast<uint32_t>(x->ne[1]);
    const bool id = n->op == GK_OP_MUL_MAT_ID;
    if (id) {  // the expert of dst column (u, t) is ids[u, t]
        const view iv = as_view(n->src[2], 4);
        p.E = static_cast<uint32_t>(w->ne[2]), p.ioff = iv.off, p.is0 = iv.s[0], p.is1 = iv.s[1];
        p.eoff = aux + static_cast<uint32_t>(mul_mat_aux(n) / 4);
    }
    // fma_exact wherever the device has doubles: a device's fma() need not be fused
    // (lavapipe's is not), and the CPU's dots fuse every step.
    const uint32_t exact = d.float64 ? 1u : 0u;
    const uint64_t outs  = static_cast<uint64_t>(gk_nelements(n));
    if (q.act < 0) {
        const uint32_t mode = (w->type == GK_TYPE_F16 ? 1u : 0u) | exact << 1 | (id ? 4u : 0u);
        return dispatch(d, cmd, set, {shader::mul_mat, mode}, &p, sizeof p, outs, 64);
    }
    // The activations into the node's scratch at binding 3 (the CPU's conversion), then the dots.
    const uint64_t blocks = static_cast<uint64_t>(gk_nrows(x)) * (p.K / q.block());
    if (!dispatch(d, cmd, set, {shader::quantize_act, static_cast<uint32_t>(q.act)}, &p, sizeof p, blocks, 64)) {
        return false;
    }
    record_barrier(cmd);
    const uint32_t mode = static_cast<uint32_t>(w->type) | exact << 8 | (id ? 512u : 0u);
    return dispatch(d, cmd, set, {shader::mul_mat_q, mode}, &p, sizeof p, outs, 64);
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
    const uint32_t mode = n->op == GK_OP_NORM ? 1u : n->op == GK_OP_L2_NORM ? 2u : 0u;
    return dispatch(d, cmd, set, {shader::norm, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nrows(n)), 64);
}

// ---- dup, cont, cpy (shaders/copy.comp) ---------------------------------------------------

struct copy_push {
    uint32_t ane[4], as[4], dne[4], ds[4];
    uint32_t aoff, doff;
};

bool float_or_half(const gk_tensor * t) { return is(t, GK_TYPE_F32) || is(t, GK_TYPE_F16); }

bool copy_ok(const device_context &, const gk_tensor * n, std::string * why) {
    return float_or_half_elements(n, why) && float_or_half_elements(n->src[0], why);
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

/// glu.comp's ACT: act_kind's, or 5 for swiglu_oai; -1 for geglu_erf (its erf is libm's).
int glu_kind(const gk_tensor * n) {
    return gk_get_glu_op(n) == GK_GLU_OP_SWIGLU_OAI ? 5 : act_kind(cpu::glu_unary_op(gk_get_glu_op(n)));
}
int unary_kind(const gk_tensor * n) { return act_kind(gk_get_unary_op(n)); }

/// The bytes of the f16 table activation `kind` looks up (gelu's, gelu_quick's), or 0.
size_t act_table_bytes(int kind) { return kind == 1 || kind == 2 ? k_f16_table_bytes : 0; }
void   act_table_fill(int kind, void * out) { fill_f16_table(kind == 1 ? cpu::act_gelu : cpu::act_gelu_quick, out); }

// ---- glu: swiglu, geglu, reglu, geglu_quick (shaders/glu.comp) -----------------------------

struct glu_push {
    uint32_t ne[4], as[4], bs[4], ds[4];
    uint32_t aoff, boff, doff, toff;
    uint32_t split, swapped;
    float    alpha, limit;
};

bool glu_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    if (glu_kind(n) < 0) return refuse(why, "swiglu, swiglu_oai, geglu, reglu and geglu_quick only (erf is libm's)");
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
    p.alpha         = gk_get_op_params_f32(n, 2);
    p.limit         = gk_get_op_params_f32(n, 3);
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
    return float_or_half_elements(n, why) && float_or_half_elements(n->src[0], why);
}

size_t unary_aux(const gk_tensor * n) { return act_table_bytes(unary_kind(n)); }
void   unary_fill(const gk_tensor * n, void * out) { act_table_fill(unary_kind(n), out); }

bool unary_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t aux) {
    auto mode = static_cast<uint32_t>(unary_kind(n));
    if (mode == 1 && n->src[0]->type == GK_TYPE_F16) mode = 2;  // GELU of f16: its table (filled) alone
    const view av = float_view(n->src[0], 8, mode), dv = float_view(n, 16, mode);
    unary_push p{};
    ne4(n, p.ne);
    put(av, p.as, p.aoff);
    put(dv, p.ds, p.doff);
    p.toff = aux;
    return dispatch(d, cmd, set, {shader::unary, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- get_rows (shaders/get_rows.comp) -------------------------------------------------------

struct get_rows_push {
    uint32_t ne[4], as[4], is[4], ds[4];
    uint32_t aoff, ioff, doff, rows;
    uint32_t toff;
};

bool get_rows_ok(const device_context &, const gk_tensor * n, std::string * why) {
    const gk_tensor * a = n->src[0];
    if (!is(a, GK_TYPE_F32) && !is(a, GK_TYPE_F16) && !gk::device::block_rows_decodable(a->type)) {
        return refuse(why, std::string("no Vulkan get_rows for ") + gk_type_name(a->type) + " tables");
    }
    if (!is(n->src[1], GK_TYPE_I32) || !is(n, GK_TYPE_F32)) return refuse(why, "i32 indices and an f32 result only");
    if (a->nb[0] != gk_type_size(a->type)) return refuse(why, "rows must be dense");
    if ((is(a, GK_TYPE_F32) || is(a, GK_TYPE_F16)) && !whole_elements(a, gk_type_size(a->type), why)) return false;
    return whole_elements(n->src[1], 4, why) && whole_elements(n, 4, why);
}

/// The table's codebook (device/block_formats.h), at binding 3.
size_t get_rows_aux(const gk_tensor * n) { return gk::device::block_table(n->src[0]->type).size() * 4; }

void get_rows_fill(const gk_tensor * n, void * out) {
    const std::vector<uint32_t> t = gk::device::block_table(n->src[0]->type);
    if (!t.empty()) std::memcpy(out, t.data(), t.size() * 4);
}

bool get_rows_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t aux) {
    const gk_tensor * a  = n->src[0];
    const view        av = as_view(a, 1), iv = as_view(n->src[1], 4), dv = as_view(n, 4);
    get_rows_push     p{};
    ne4(n, p.ne);
    put(av, p.as, p.aoff);
    put(iv, p.is, p.ioff);
    put(dv, p.ds, p.doff);
    p.rows = static_cast<uint32_t>(a->ne[1]);
    p.toff = aux;
    return dispatch(d, cmd, set, {shader::get_rows, static_cast<uint32_t>(a->type)}, &p, sizeof p,
                    static_cast<uint64_t>(gk_nelements(n)), 256);
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
    uint32_t zoff;
};

bool soft_max_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    const gk_tensor * mask = n->src[1];
    // soft_max.comp: one invocation per row (several when there are more rows than
    // invocations), three passes over the row.
    const uint64_t per_row = 3 * static_cast<uint64_t>(n->ne[0]) + 1;
    if (!loop_budget_ok(d, rows_per_invocation(d, static_cast<uint64_t>(gk_nrows(n)), 64) * per_row, why)) {
        return false;
    }
    if (n->src[2] && !dense_f32(n, {n->src[2]}, why)) return false;
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
    if (n->src[2]) {
        p.zoff = as_view(n->src[2], 4).off;
        mode |= 8u;
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
    if (cpu::rope_params_of(n).n_pairs() == 0) return refuse(why, "n_dims = 0 (a copy) stays on the CPU");
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

// ---- flash_attn_ext (shaders/flash_attn.comp) ----------------------------------------------

struct flash_attn_push {
    uint32_t D, Dv, n_kv, H;
    uint32_t NQ, S, group, mne2;
    uint32_t mne3, qs1, qs2, qs3;
    uint32_t ks1, ks2, ks3, vs1;
    uint32_t vs2, vs3, ms1, ms2;
    uint32_t ms3, ds1, ds2, ds3;
    uint32_t qoff, koff, voff, moff;
    uint32_t doff, zoff, soff;
    float    scale;
};

/// Dense rows of f32 or f16 (whole elements): K, V and the mask of flash_attn_ext.
bool dense_float_rows(const gk_tensor * t, std::string * why) {
    if (!float_or_half(t)) return refuse(why, "f32 or f16 K, V and mask only");
    if (t->nb[0] != gk_type_size(t->type)) return refuse(why, "rows must be dense");
    return whole_elements(t, gk_type_size(t->type), why);
}

bool flash_attn_ok(const device_context & d, const gk_tensor * n, std::string * why) {
    const gk_tensor * mask  = n->src[3];
    const gk_tensor * sinks = n->src[4];
    if (gk_get_op_params_f32(n, 2) != 0.0f) return refuse(why, "no logit softcap (its tanh is libm's)");
    if (!d.float64) return refuse(why, "the device has no shaderFloat64 (the sums are in double)");
    // flash_attn.comp: one invocation per query row; three passes over the keys, each
    // scoring a key with dot.glsl's dot of D (D iterations and up to 99 more for its 64
    // partial sums and their tree, where the compiler keeps those loops), and the value
    // sum of Dv per key.
    const uint64_t n_kv = static_cast<uint64_t>(n->src[1]->ne[1]);
    const uint64_t per_row =
        3 * n_kv * (static_cast<uint64_t>(n->src[0]->ne[0]) + 100) + n_kv * (static_cast<uint64_t>(n->ne[0]) + 1) + n->ne[0];
    if (!loop_budget_ok(d, rows_per_invocation(d, static_cast<uint64_t>(gk_nrows(n)), 64) * per_row, why)) {
        return false;
    }
    if (!dense_float_rows(n->src[1], why) || !dense_float_rows(n->src[2], why)) return false;
    if (mask && !dense_float_rows(mask, why)) return false;
    if (sinks && !dense_f32(n, {sinks}, why)) return false;
    return dense_f32(n, {n->src[0], n}, why);
}

size_t flash_attn_aux(const gk_tensor * n) {
    return n->src[3] && gk_get_op_params_f32(n, 1) > 0.0f ? static_cast<size_t>(n->ne[1]) * sizeof(float) : 0;
}

void flash_attn_fill(const gk_tensor * n, void * out) {
    auto * slopes = static_cast<float *>(out);
    for (int64_t h = 0; h < n->ne[1]; ++h) slopes[h] = cpu::alibi_slope(gk_get_op_params_f32(n, 1), n->ne[1], h);
}

bool flash_attn_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n,
                       uint32_t aux) {
    const gk_tensor * q    = n->src[0];
    const gk_tensor * k    = n->src[1];
    const gk_tensor * v    = n->src[2];
    const gk_tensor * mask = n->src[3];
    const view      qv = as_view(q, 4), kv = as_view(k, gk_type_size(k->type)), vv = as_view(v, gk_type_size(v->type));
    const view      dv = as_view(n, 4);
    flash_attn_push p{};
    p.D     = static_cast<uint32_t>(q->ne[0]);
    p.Dv    = static_cast<uint32_t>(v->ne[0]);
    p.n_kv  = static_cast<uint32_t>(k->ne[1]);
    p.H     = static_cast<uint32_t>(q->ne[2]);
    p.NQ    = static_cast<uint32_t>(q->ne[1]);
    p.S     = static_cast<uint32_t>(q->ne[3]);
    p.group = static_cast<uint32_t>(q->ne[2] / k->ne[2]);
    p.mne2 = p.mne3 = 1;
    p.qs1 = qv.s[1], p.qs2 = qv.s[2], p.qs3 = qv.s[3];
    p.ks1 = kv.s[1], p.ks2 = kv.s[2], p.ks3 = kv.s[3];
    p.vs1 = vv.s[1], p.vs2 = vv.s[2], p.vs3 = vv.s[3];
    p.ds1 = dv.s[1], p.ds2 = dv.s[2], p.ds3 = dv.s[3];
    p.qoff = qv.off, p.koff = kv.off, p.voff = vv.off, p.doff = dv.off;
    p.soff        = aux;
    p.scale       = gk_get_op_params_f32(n, 0);
    uint32_t mode = (k->type == GK_TYPE_F16 ? 1u : 0u) | (v->type == GK_TYPE_F16 ? 2u : 0u) |
                    (flash_attn_aux(n) > 0 ? 16u : 0u) | (d.float64 ? 64u : 0u);
    if (mask) {
        const view mv = as_view(mask, gk_type_size(mask->type));
        p.ms1 = mv.s[1], p.ms2 = mv.s[2], p.ms3 = mv.s[3], p.moff = mv.off;
        p.mne2 = static_cast<uint32_t>(mask->ne[2]);
        p.mne3 = static_cast<uint32_t>(mask->ne[3]);
        mode |= 4u | (mask->type == GK_TYPE_F16 ? 8u : 0u);
    }
    if (n->src[4]) {
        p.zoff = as_view(n->src[4], 4).off;
        mode |= 32u;
    }
    return dispatch(d, cmd, set, {shader::flash_attn, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nrows(n)), 64);
}

// ---- pad, timestep_embedding (shaders/pad.comp) ---------------------------------------------

struct pad_push {
    uint32_t ne[4], ane[4], as[4], ds[4];
    int32_t  lp[4];
    uint32_t aoff, doff;
};

bool pad_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n, uint32_t) {
    const view a = as_view(n->src[0], 4), o = as_view(n, 4);
    pad_push   p{};
    ne4(n, p.ne);
    ne4(n->src[0], p.ane);
    put(a, p.as, p.aoff);
    put(o, p.ds, p.doff);
    for (int i = 0; i < 4; ++i) p.lp[i] = gk_get_op_params_i32(n, 2 * i);
    const uint32_t mode = gk_get_op_params_i32(n, 8) != 0 ? 1u : 0u;
    return dispatch(d, cmd, set, {shader::pad, mode}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

/// timestep_embedding: the rows made on the host (cpu/ops/timestep.h: libm's exp, cos
/// and sin) from the timesteps, which must be inputs; pad.comp copies them into dst.
bool timestep_ok(const device_context &, const gk_tensor * n, std::string * why) {
    if (!is_input(n->src[0])) return refuse(why, "the timesteps must be inputs (the rows are made on the host)");
    return dense_f32(n, {n->src[0]}, why) && whole_elements(n, 4, why);
}

size_t timestep_aux(const gk_tensor * n) { return static_cast<size_t>(gk_nelements(n)) * sizeof(float); }

void timestep_fill(const gk_tensor * n, void * out) {
    const gk_tensor * ts = n->src[0];
    auto *            y  = static_cast<float *>(out);
    for (int64_t t = 0; t < n->ne[1]; ++t) {
        float v;
        std::memcpy(&v, static_cast<const char *>(ts->data) + t * ts->nb[0], sizeof v);
        cpu::timestep_row(v, gk_get_op_params_i32(n, 0), gk_get_op_params_i32(n, 1), y + t * n->ne[0]);
    }
}

bool timestep_record(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * n,
                     uint32_t aux) {
    const view o = as_view(n, 4);
    pad_push   p{};
    ne4(n, p.ne);
    ne4(n, p.ane);
    put(o, p.ds, p.doff);
    p.aoff  = aux;  // the rows at binding 3, dense
    p.as[0] = 1;
    p.as[1] = static_cast<uint32_t>(n->ne[0]);
    return dispatch(d, cmd, set, {shader::pad, 2u}, &p, sizeof p, static_cast<uint64_t>(gk_nelements(n)), 256);
}

// ---- the table ------------------------------------------------------------------------------

struct op_entry {
    gk_op op;
    bool (*ok)(const device_context &, const gk_tensor *, std::string *);
    bool (*record)(device_context &, VkCommandBuffer, VkDescriptorSet, const gk_tensor *, uint32_t aux_word);
    size_t (*aux_bytes)(const gk_tensor *)      = nullptr;  // binding 3's data, when the shader reads some
    void (*aux_fill)(const gk_tensor *, void *) = nullptr;
    unsigned aux_reads_sources = 0;  // the sources aux_fill reads, bit k for src[k] (rope's positions, factors)
    bool (*aux_check)(const gk_tensor *, const void *, std::string *) = nullptr;  // after the compute
};

constexpr op_entry k_ops[] = {
    {GK_OP_ADD, binary_ok, binary_record},
    {GK_OP_SUB, binary_ok, binary_record},
    {GK_OP_MUL, binary_ok, binary_record},
    {GK_OP_DIV, binary_ok, binary_record},
    {GK_OP_SCALE, f32_from_f32_ok, scale_record},
    {GK_OP_MUL_MAT, mul_mat_ok, mul_mat_record, mul_mat_aux, mul_mat_fill},
    {GK_OP_NORM, norm_ok, norm_record},
    {GK_OP_RMS_NORM, norm_ok, norm_record},
    {GK_OP_DUP, copy_ok, copy_record},
    {GK_OP_CONT, copy_ok, copy_record},
    {GK_OP_CPY, copy_ok, copy_record},
    {GK_OP_GLU, glu_ok, glu_record, glu_aux, glu_fill},
    {GK_OP_UNARY, unary_ok, unary_record, unary_aux, unary_fill},
    {GK_OP_GET_ROWS, get_rows_ok, get_rows_record, get_rows_aux, get_rows_fill},
    {GK_OP_SET_ROWS, set_rows_ok, set_rows_record},
    {GK_OP_SOFT_MAX, soft_max_ok, soft_max_record, soft_max_aux, soft_max_fill},
    {GK_OP_ROPE, rope_ok, rope_record, rope_aux, rope_fill, 6u},
    {GK_OP_FLASH_ATTN_EXT, flash_attn_ok, flash_attn_record, flash_attn_aux, flash_attn_fill},
    {GK_OP_MUL_MAT_ID, mul_mat_ok, mul_mat_record, mul_mat_id_aux, mul_mat_id_fill, 0u, mul_mat_id_check},
    {GK_OP_L2_NORM, norm_ok, norm_record},
    {GK_OP_PAD, f32_from_f32_ok, pad_record},
    {GK_OP_TIMESTEP_EMBEDDING, timestep_ok, timestep_record, timestep_aux, timestep_fill, 1u},
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
                  sizeof(soft_max_push) <= 128 && sizeof(rope_push) <= 128 && sizeof(flash_attn_push) <= 128 &&
                  sizeof(pad_push) <= 128,
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

unsigned aux_reads_sources(const gk_tensor * node) {
    const op_entry * e = entry(node->op);
    return e ? e->aux_reads_sources : 0u;
}

void aux_fill(const gk_tensor * node, void * out) {
    const op_entry * e = entry(node->op);
    if (e && e->aux_fill) e->aux_fill(node, out);
}

bool aux_check(const gk_tensor * node, const void * aux, std::string * why) {
    const op_entry * e = entry(node->op);
    return !e || !e->aux_check || e->aux_check(node, aux, why);
}

bool record_op(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * node,
               uint32_t aux_word) {
    const op_entry * e = entry(node->op);
    return e && e->record(d, cmd, set, node, aux_word);
}

} // namespace gk::vulkan
