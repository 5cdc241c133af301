// test-ops-vs-ggml - the same graph in gk and in a reference ggml (libggml-base and
// libggml-cpu; see scripts/build-reference-ggml), identical inputs, outputs compared.
// Built only when CMake is given GK_REFERENCE_DIR, GK_REFERENCE_LIB and
// GK_REFERENCE_CPU_LIB.
//
// Each case is written once, as a generic lambda over an "api": gk_api forwards NAME to
// gk_NAME, ggml_api to ggml_NAME (the builders share names, argument lists and enum
// values: issue 14's compat promise), so both libraries build the very same graph. The
// inputs are random (fixed seed) F32 / F16 / I32 / block-quantized tensors (those encoded
// by ggml's quantize_row_*) filled with the same bytes on
// both sides. A case passes when max |gk - ggml| <= tol * max(max |ggml|, 1e-30)
// (relative to the output's scale; tol 0 means bit for bit). The table the run prints
// (one row per case: the measured distance and the bound) is docs/compat.md's
// "test-ops-vs-ggml".
//
// Quantized matmuls are measured against the truth instead: the weights are quantized
// once (ggml's encoder), decoded by gk's codec, and the product computed in double; a
// case passes when gk's error is at most 1.5x ggml's plus 1e-6 of the output's scale
// (both quantize the activations, so neither is exact; gk must not be worse).
#include "ggml-cpu.h"
#include "ggml.h"

#include "gk/gk.h"
#include "quant/codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

// ---- one graph, two libraries -------------------------------------------------------

// The builders both libraries have, by their shared name.
#define VS_OPS(X)                                                                                                      \
    X(add) X(sub) X(mul) X(div) X(scale) X(sqr) X(sqrt) X(log) X(sin) X(cos) X(exp) X(neg) X(abs) X(sgn) X(step)     \
    X(silu) X(gelu) X(gelu_quick) X(gelu_erf) X(relu) X(tanh) X(sigmoid) X(elu) X(hardswish) X(hardsigmoid)          \
    X(leaky_relu) X(clamp) X(swiglu) X(geglu) X(reglu) X(geglu_erf) X(geglu_quick) X(swiglu_split) X(geglu_split)    \
    X(swiglu_oai) X(norm) X(rms_norm) X(group_norm) X(l2_norm) X(mul_mat) X(mul_mat_id) X(out_prod) X(cpy) X(cont)   \
    X(permute) X(transpose) X(get_rows) X(set_rows) X(concat) X(repeat) X(view_2d) X(reshape_2d) X(soft_max)         \
    X(soft_max_ext) X(rope_ext) X(rope_multi) X(sum) X(sum_rows) X(mean) X(argmax) X(argsort) X(cumsum) X(conv_1d)    \
    X(conv_2d) X(conv_transpose_1d) X(conv_transpose_2d_p0) X(conv_2d_dw) X(im2col) X(pool_1d) X(pool_2d)            \
    X(pad_reflect_1d) X(interpolate) X(pad) X(ssm_conv) X(ssm_scan) X(rwkv_wkv6) X(rwkv_wkv7) X(gated_linear_attn)   \
    X(gated_delta_net) X(set) X(acc) X(add1) X(win_part) X(win_unpart) X(get_rel_pos) X(add_rel_pos)                  \
    X(flash_attn_ext) X(timestep_embedding) X(diag_mask_inf) X(diag_mask_zero) X(cast) X(scale_bias) X(softplus)       \
    X(floor) X(ceil) X(round) X(trunc) X(expm1) X(new_tensor_2d) X(reshape_3d) X(view_1d) X(map_custom1) X(map_custom2) X(map_custom3) \
    X(silu_back) X(rms_norm_back) X(soft_max_ext_back) X(rope_ext_back) X(rope_multi_back)              \
    X(get_rows_back) X(repeat_back) X(cross_entropy_loss) X(cross_entropy_loss_back) X(opt_step_adamw) X(opt_step_sgd) \
    X(pool_2d_back) X(im2col_back) \
    X(add_id) X(add_cast) X(fill) X(tri) X(diag) X(roll) X(count_equal) X(solve_tri) X(xielu) X(swiglu_clamp)          \
    X(swiglu_swapped) X(geglu_swapped) X(lightning_indexer) X(dsv4_hc_comb) X(dsv4_hc_pre) X(dsv4_hc_pre_gated)     \
    X(dsv4_hc_post)

struct gk_api {
    using context = gk_context;
    using tensor  = gk_tensor;
#define VS_FORWARD(name)                                                                                               \
    template <class... A> static tensor * name(A... a) { return gk_##name(a...); }
    VS_OPS(VS_FORWARD)
#undef VS_FORWARD
    static constexpr auto f32 = GK_TYPE_F32, f16 = GK_TYPE_F16, i32 = GK_TYPE_I32;
    static constexpr auto pool_max = GK_OP_POOL_MAX, pool_avg = GK_OP_POOL_AVG;
    static constexpr auto sort_asc = GK_SORT_ORDER_ASC;
    static constexpr auto tri_lower = GK_TRI_TYPE_LOWER, tri_upper_diag = GK_TRI_TYPE_UPPER_DIAG;
    static tensor * rope_set_offset(tensor * t, int n_offs) { return gk_rope_set_offset(t, n_offs) ? t : nullptr; }
    static constexpr auto nearest = GK_SCALE_MODE_NEAREST, bilinear = GK_SCALE_MODE_BILINEAR;
    static constexpr auto align_corners = GK_SCALE_FLAG_ALIGN_CORNERS;
    static auto type(int t) { return static_cast<gk_type>(t); }
    static void set_param(tensor * t) { gk_set_param(t); }
    static void add_sinks(tensor * attn, tensor * sinks) { gk_flash_attn_ext_add_sinks(attn, sinks); }
};

struct ggml_api {
    using context = ggml_context;
    using tensor  = ggml_tensor;
#define VS_FORWARD(name)                                                                                               \
    template <class... A> static tensor * name(A... a) { return ggml_##name(a...); }
    VS_OPS(VS_FORWARD)
#undef VS_FORWARD
    static constexpr auto f32 = GGML_TYPE_F32, f16 = GGML_TYPE_F16, i32 = GGML_TYPE_I32;
    static constexpr auto pool_max = GGML_OP_POOL_MAX, pool_avg = GGML_OP_POOL_AVG;
    static constexpr auto sort_asc = GGML_SORT_ORDER_ASC;
    static constexpr auto tri_lower = GGML_TRI_TYPE_LOWER, tri_upper_diag = GGML_TRI_TYPE_UPPER_DIAG;
    static tensor * rope_set_offset(tensor * t, int n_offs) { return ggml_rope_set_offset(t, n_offs); }
    static constexpr auto nearest = GGML_SCALE_MODE_NEAREST, bilinear = GGML_SCALE_MODE_BILINEAR;
    static constexpr auto align_corners = GGML_SCALE_FLAG_ALIGN_CORNERS;
    static auto type(int t) { return static_cast<ggml_type>(t); }
    static void set_param(tensor * t) { ggml_set_param(t); }
    static void add_sinks(tensor * attn, tensor * sinks) { ggml_flash_attn_ext_add_sinks(attn, sinks); }
};

/** An input: its type (a gk_type value, equal to ggml's), shape, and value range (I32:
 *  integers lo..hi; F16: rounded from F32). */
struct input {
    int                    type = GK_TYPE_F32;
    std::array<int64_t, 4> ne{1, 1, 1, 1};
    float                  lo = -1.0f, hi = 1.0f;
};

input f32(int64_t a, int64_t b = 1, int64_t c = 1, int64_t d = 1) { return {GK_TYPE_F32, {a, b, c, d}}; }
input f16(int64_t a, int64_t b = 1, int64_t c = 1, int64_t d = 1) { return {GK_TYPE_F16, {a, b, c, d}}; }
input ints(int64_t n, int lo, int hi) { return {GK_TYPE_I32, {n, 1, 1, 1}, float(lo), float(hi)}; }
/** A block-quantized input: uniform values encoded once by ggml's encoder, the same bytes
 *  for both libraries. */
input quantized(int type, int64_t a, int64_t b = 1, int64_t c = 1, int64_t d = 1) { return {type, {a, b, c, d}}; }
input range(input in, float lo, float hi) {
    in.lo = lo;
    in.hi = hi;
    return in;
}

struct vs_case {
    std::string        name;
    std::vector<input> inputs;
    double             tol;
    std::function<gk_tensor *(gk_context *, std::vector<gk_tensor *> &)>       gk;
    std::function<ggml_tensor *(ggml_context *, std::vector<ggml_tensor *> &)> ref;
};

/** A case from one generic builder `f(api, ctx, inputs)`. */
template <class F> vs_case make(std::string name, std::vector<input> in, double tol, F f) {
    return {std::move(name), std::move(in), tol,
            [f](gk_context * c, std::vector<gk_tensor *> & t) { return f(gk_api{}, c, t); },
            [f](ggml_context * c, std::vector<ggml_tensor *> & t) { return f(ggml_api{}, c, t); }};
}

/** The bytes of every input of `c`, the same for both libraries. */
std::vector<std::vector<uint8_t>> input_bytes(const vs_case & c) {
    std::mt19937                      rng(12345);
    std::vector<std::vector<uint8_t>> out;
    for (const input & in : c.inputs) {
        const int64_t n = in.ne[0] * in.ne[1] * in.ne[2] * in.ne[3];
        std::vector<uint8_t> b;
        if (in.type == GK_TYPE_I32) {
            std::uniform_int_distribution<int> d(static_cast<int>(in.lo), static_cast<int>(in.hi));
            std::vector<int32_t>               v(static_cast<size_t>(n));
            for (auto & x : v) x = d(rng);
            b.resize(v.size() * 4);
            std::memcpy(b.data(), v.data(), b.size());
        } else {
            std::uniform_real_distribution<float> d(in.lo, in.hi);
            std::vector<float>                    v(static_cast<size_t>(n));
            for (auto & x : v) x = d(rng);
            if (in.type == GK_TYPE_F16) {
                b.resize(v.size() * 2);
                ggml_fp32_to_fp16_row(v.data(), reinterpret_cast<ggml_fp16_t *>(b.data()), n);
            } else if (in.type != GK_TYPE_F32) {
                const auto type = static_cast<ggml_type>(in.type);
                const auto rows = n / in.ne[0];
                b.resize(ggml_row_size(type, in.ne[0]) * static_cast<size_t>(rows));
                ggml_quantize_chunk(type, v.data(), b.data(), 0, rows, in.ne[0], nullptr);
            } else {
                b.resize(v.size() * 4);
                std::memcpy(b.data(), v.data(), b.size());
            }
        }
        out.push_back(std::move(b));
    }
    return out;
}

/** An output as f32 with its shape. */
struct result {
    std::vector<float>     v;
    std::array<int64_t, 4> ne{0, 0, 0, 0};
    std::string            error;
};

/** The output of a tensor whose data is contiguous F32, F16 or I32, as f32 values. */
template <class T> result read_output(const T * t, int type) {
    result  r;
    int64_t n = 1;
    for (int i = 0; i < 4; ++i) {
        r.ne[i] = t->ne[i];
        n *= t->ne[i];
    }
    r.v.resize(static_cast<size_t>(n));
    if (type == GK_TYPE_F32) {
        std::memcpy(r.v.data(), t->data, r.v.size() * 4);
    } else if (type == GK_TYPE_F16) {
        ggml_fp16_to_fp32_row(static_cast<const ggml_fp16_t *>(t->data), r.v.data(), n);
    } else if (type == GK_TYPE_I32) {
        for (int64_t i = 0; i < n; ++i) r.v[i] = static_cast<float>(static_cast<const int32_t *>(t->data)[i]);
    } else if (type == GK_TYPE_I64) {
        for (int64_t i = 0; i < n; ++i) r.v[i] = static_cast<float>(static_cast<const int64_t *>(t->data)[i]);
    } else {
        r.error = "output type " + std::to_string(type) + " not compared";
    }
    return r;
}

constexpr size_t k_arena = size_t(256) << 20;
constexpr int    k_threads = 2;

result run_gk(const vs_case & c, const std::vector<std::vector<uint8_t>> & bytes) {
    gk_context * ctx = gk_init({k_arena, nullptr, false});
    std::vector<gk_tensor *> t;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        t.push_back(gk_new_tensor(ctx, static_cast<gk_type>(c.inputs[i].type), 4, c.inputs[i].ne.data()));
        std::memcpy(t.back()->data, bytes[i].data(), bytes[i].size());
    }
    result      r;
    gk_tensor * out = c.gk(ctx, t);
    if (!out) {
        r.error = std::string("gk refused the graph: ") + gk_last_error(ctx);
    } else {
        gk_cgraph * g = gk_new_graph(ctx);
        gk_build_forward_expand(g, out);
        if (gk_graph_compute(g, k_threads) != GK_STATUS_SUCCESS) {
            r.error = std::string("gk compute: ") + gk_last_error(ctx);
        } else {
            r = read_output(out, out->type);
        }
    }
    gk_free(ctx);
    return r;
}

result run_ggml(const vs_case & c, const std::vector<std::vector<uint8_t>> & bytes) {
    ggml_context * ctx = ggml_init({k_arena, nullptr, false});
    std::vector<ggml_tensor *> t;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        t.push_back(ggml_new_tensor(ctx, static_cast<ggml_type>(c.inputs[i].type), 4, c.inputs[i].ne.data()));
        std::memcpy(t.back()->data, bytes[i].data(), bytes[i].size());
    }
    ggml_tensor * out = c.ref(ctx, t);
    ggml_cgraph * g   = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(g, out);
    result r;
    if (ggml_graph_compute_with_ctx(ctx, g, k_threads) != GGML_STATUS_SUCCESS) {
        r.error = "ggml compute failed";
    } else {
        r = read_output(out, out->type);
    }
    ggml_free(ctx);
    return r;
}

// ---- the cases ------------------------------------------------------------------------

/** Custom-op callbacks, one text for both libraries' tensor types: each of the nth calls
 *  writes the rows ith, ith + nth, ... of dst (F32, a's shape) from a (and b, c). */
template <class Tn> float elem(const Tn * t, int64_t i) { return static_cast<const float *>(t->data)[i]; }
template <class Tn> void custom_rows(Tn * dst, int ith, int nth, auto f) {
    const int64_t n0 = dst->ne[0], rows = dst->ne[1] * dst->ne[2] * dst->ne[3];
    for (int64_t r = ith; r < rows; r += nth) {
        for (int64_t i = r * n0; i < (r + 1) * n0; ++i) static_cast<float *>(dst->data)[i] = f(i);
    }
}
template <class Tn> void custom1(Tn * dst, const Tn * a, int ith, int nth, void *) {
    custom_rows(dst, ith, nth, [&](int64_t i) { return elem(a, i) * elem(a, i) - 0.5f; });
}
template <class Tn> void custom2(Tn * dst, const Tn * a, const Tn * b, int ith, int nth, void *) {
    custom_rows(dst, ith, nth, [&](int64_t i) { return elem(a, i) * 2.0f + elem(b, i); });
}
template <class Tn> void custom3(Tn * dst, const Tn * a, const Tn * b, const Tn * c, int ith, int nth, void * user) {
    const float k = *static_cast<const float *>(user);
    custom_rows(dst, ith, nth, [&](int64_t i) { return elem(a, i) * k + elem(b, i) * elem(c, i); });
}
float k_custom_user = 3.0f;

// Shapes are small (a run of every case takes seconds) but not round: rows of 37, 70,
// 130 elements exercise the kernels' tails.
std::vector<vs_case> cases() {
    std::vector<vs_case> v;
    using T = std::vector<input>;
    // Bounds: 0 (bit for bit) where both compute the same f32 operations in the same
    // order; ulps where a math library function (expf, tanhf, erff) or a fused
    // multiply-add may differ in the last bits; sums where the two reduce in different
    // orders; 1e-3 where f16 intermediates round differently.
    const double ulps = 1e-6, sums = 1e-5;
    // Elementwise, with broadcasting of the second operand.
    v.push_back(make("add", T{f32(37, 5, 3), f32(37, 5, 3)}, 0, [](auto A, auto c, auto & t) { return A.add(c, t[0], t[1]); }));
    v.push_back(make("add broadcast", T{f32(37, 5, 3), f32(37, 1, 3)}, 0, [](auto A, auto c, auto & t) { return A.add(c, t[0], t[1]); }));
    v.push_back(make("sub broadcast", T{f32(37, 5, 3), f32(37, 5, 1)}, 0, [](auto A, auto c, auto & t) { return A.sub(c, t[0], t[1]); }));
    v.push_back(make("mul broadcast", T{f32(37, 5, 3, 2), f32(37, 1, 1, 2)}, 0, [](auto A, auto c, auto & t) { return A.mul(c, t[0], t[1]); }));
    v.push_back(make("div", T{f32(37, 5), range(f32(37, 5), 0.5f, 2.0f)}, 0, [](auto A, auto c, auto & t) { return A.div(c, t[0], t[1]); }));
    v.push_back(make("add f16 + f32", T{f16(70, 3), f32(70, 3)}, 1e-3, [](auto A, auto c, auto & t) { return A.add(c, t[0], t[1]); }));
    v.push_back(make("scale", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.scale(c, t[0], 0.37f); }));
    v.push_back(make("scale_bias", T{f32(70, 4)}, ulps, [](auto A, auto c, auto & t) { return A.scale_bias(c, t[0], 0.37f, -1.5f); }));
    v.push_back(make("add1", T{f32(37, 4), f32(1)}, 0, [](auto A, auto c, auto & t) { return A.add1(c, t[0], t[1]); }));
    v.push_back(make("clamp", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.clamp(c, t[0], -0.3f, 0.4f); }));
    // Unary functions.
    v.push_back(make("sqr", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.sqr(c, t[0]); }));
    v.push_back(make("sqrt", T{range(f32(70, 4), 0, 4)}, 0, [](auto A, auto c, auto & t) { return A.sqrt(c, t[0]); }));
    v.push_back(make("log", T{range(f32(70, 4), 0.1f, 4)}, ulps, [](auto A, auto c, auto & t) { return A.log(c, t[0]); }));
    v.push_back(make("sin", T{range(f32(70, 4), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.sin(c, t[0]); }));
    v.push_back(make("cos", T{range(f32(70, 4), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.cos(c, t[0]); }));
    v.push_back(make("exp", T{range(f32(70, 4), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.exp(c, t[0]); }));
    v.push_back(make("expm1", T{range(f32(70, 4), -2, 2)}, ulps, [](auto A, auto c, auto & t) { return A.expm1(c, t[0]); }));
    v.push_back(make("softplus", T{range(f32(70, 4), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.softplus(c, t[0]); }));
    v.push_back(make("neg", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.neg(c, t[0]); }));
    v.push_back(make("abs", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.abs(c, t[0]); }));
    v.push_back(make("sgn", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.sgn(c, t[0]); }));
    v.push_back(make("step", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.step(c, t[0]); }));
    v.push_back(make("floor", T{range(f32(70, 4), -4, 4)}, 0, [](auto A, auto c, auto & t) { return A.floor(c, t[0]); }));
    v.push_back(make("ceil", T{range(f32(70, 4), -4, 4)}, 0, [](auto A, auto c, auto & t) { return A.ceil(c, t[0]); }));
    v.push_back(make("round", T{range(f32(70, 4), -4, 4)}, 0, [](auto A, auto c, auto & t) { return A.round(c, t[0]); }));
    v.push_back(make("trunc", T{range(f32(70, 4), -4, 4)}, 0, [](auto A, auto c, auto & t) { return A.trunc(c, t[0]); }));
    v.push_back(make("relu", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.relu(c, t[0]); }));
    v.push_back(make("leaky_relu", T{f32(70, 4)}, 0, [](auto A, auto c, auto & t) { return A.leaky_relu(c, t[0], 0.1f, false); }));
    v.push_back(make("silu", T{range(f32(70, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.silu(c, t[0]); }));
    v.push_back(make("gelu", T{range(f32(70, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.gelu(c, t[0]); }));
    v.push_back(make("gelu_quick", T{range(f32(70, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.gelu_quick(c, t[0]); }));
    v.push_back(make("gelu_erf", T{range(f32(70, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.gelu_erf(c, t[0]); }));
    v.push_back(make("tanh", T{range(f32(70, 4), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.tanh(c, t[0]); }));
    v.push_back(make("sigmoid", T{range(f32(70, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.sigmoid(c, t[0]); }));
    v.push_back(make("elu", T{range(f32(70, 4), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.elu(c, t[0]); }));
    v.push_back(make("hardswish", T{range(f32(70, 4), -4, 4)}, 0, [](auto A, auto c, auto & t) { return A.hardswish(c, t[0]); }));
    v.push_back(make("hardsigmoid", T{range(f32(70, 4), -4, 4)}, 0, [](auto A, auto c, auto & t) { return A.hardsigmoid(c, t[0]); }));
    // GLUs: fused (one tensor, halves of its rows) and split.
    v.push_back(make("swiglu", T{range(f32(140, 3), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.swiglu(c, t[0]); }));
    v.push_back(make("geglu", T{range(f32(140, 3), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.geglu(c, t[0]); }));
    v.push_back(make("reglu", T{range(f32(140, 3), -4, 4)}, 0, [](auto A, auto c, auto & t) { return A.reglu(c, t[0]); }));
    v.push_back(make("geglu_erf", T{range(f32(140, 3), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.geglu_erf(c, t[0]); }));
    v.push_back(make("geglu_quick", T{range(f32(140, 3), -4, 4)}, ulps, [](auto A, auto c, auto & t) { return A.geglu_quick(c, t[0]); }));
    v.push_back(make("swiglu_split", T{range(f32(70, 3), -4, 4), f32(70, 3)}, ulps, [](auto A, auto c, auto & t) { return A.swiglu_split(c, t[0], t[1]); }));
    v.push_back(make("geglu_split", T{range(f32(70, 3), -4, 4), f32(70, 3)}, ulps, [](auto A, auto c, auto & t) { return A.geglu_split(c, t[0], t[1]); }));
    v.push_back(make("swiglu_oai", T{range(f32(70, 3), -4, 4), f32(70, 3)}, ulps, [](auto A, auto c, auto & t) { return A.swiglu_oai(c, t[0], t[1], 1.702f, 7.0f); }));
    // Norms: sums in different orders, so within f32 rounding.
    v.push_back(make("norm", T{f32(130, 4, 2)}, sums, [](auto A, auto c, auto & t) { return A.norm(c, t[0], 1e-5f); }));
    v.push_back(make("rms_norm", T{f32(130, 4, 2)}, sums, [](auto A, auto c, auto & t) { return A.rms_norm(c, t[0], 1e-6f); }));
    v.push_back(make("l2_norm", T{f32(130, 4, 2)}, sums, [](auto A, auto c, auto & t) { return A.l2_norm(c, t[0], 1e-12f); }));
    v.push_back(make("group_norm", T{f32(6, 5, 8, 2)}, sums, [](auto A, auto c, auto & t) { return A.group_norm(c, t[0], 4, 1e-6f); }));
    // Matmul: f32 and f16 weights, head broadcast (dims 2 and 3), a transposed operand.
    v.push_back(make("mul_mat f32", T{f32(130, 17), f32(130, 9)}, sums, [](auto A, auto c, auto & t) { return A.mul_mat(c, t[0], t[1]); }));
    v.push_back(make("mul_mat f16 weights", T{f16(128, 17), f32(128, 9)}, 1e-3, [](auto A, auto c, auto & t) { return A.mul_mat(c, t[0], t[1]); }));
    v.push_back(make("mul_mat head broadcast", T{f32(64, 17, 2, 1), f32(64, 5, 6, 3)}, sums, [](auto A, auto c, auto & t) { return A.mul_mat(c, t[0], t[1]); }));
    v.push_back(make("mul_mat transposed", T{f32(17, 64), f32(9, 64)}, sums, [](auto A, auto c, auto & t) {
        return A.mul_mat(c, A.cont(c, A.transpose(c, t[0])), A.cont(c, A.transpose(c, t[1])));
    }));
    v.push_back(make("mul_mat_id", T{f32(64, 12, 4), f32(64, 2, 5), ints(2 * 5, 0, 3)}, sums, [](auto A, auto c, auto & t) {
        return A.mul_mat_id(c, t[0], t[1], A.reshape_2d(c, t[2], 2, 5));
    }));
    v.push_back(make("out_prod", T{f32(17, 9), f32(13, 9)}, sums, [](auto A, auto c, auto & t) { return A.out_prod(c, t[0], t[1]); }));
    // Data movement: bit for bit.
    v.push_back(make("cpy f32 -> f16", T{f32(70, 3)}, 0, [](auto A, auto c, auto & t) {
        return A.cpy(c, t[0], A.new_tensor_2d(c, A.f16, 70, 3));
    }));
    v.push_back(make("cast f16 -> f32", T{f16(70, 3)}, 0, [](auto A, auto c, auto & t) { return A.cast(c, t[0], A.f32); }));
    v.push_back(make("permute + cont", T{f32(7, 5, 3, 2)}, 0, [](auto A, auto c, auto & t) { return A.cont(c, A.permute(c, t[0], 2, 0, 3, 1)); }));
    v.push_back(make("get_rows f32", T{f32(37, 20), ints(7, 0, 19)}, 0, [](auto A, auto c, auto & t) { return A.get_rows(c, t[0], t[1]); }));
    v.push_back(make("get_rows f16", T{f16(37, 20), ints(7, 0, 19)}, 0, [](auto A, auto c, auto & t) { return A.get_rows(c, t[0], t[1]); }));
    v.push_back(make("set_rows f32 -> f16", T{f16(64, 20), f32(64, 5), ints(5, 0, 19)}, 0, [](auto A, auto c, auto & t) {
        return A.set_rows(c, t[0], t[1], t[2]);
    }));
    v.push_back(make("concat dim 1", T{f32(37, 4, 3), f32(37, 6, 3)}, 0, [](auto A, auto c, auto & t) { return A.concat(c, t[0], t[1], 1); }));
    v.push_back(make("repeat", T{f32(37, 1, 3), f32(37, 4, 3, 2)}, 0, [](auto A, auto c, auto & t) { return A.repeat(c, t[0], t[1]); }));
    v.push_back(make("view + cont", T{f32(37, 8)}, 0, [](auto A, auto c, auto & t) {
        return A.cont(c, A.view_2d(c, t[0], 20, 5, t[0]->nb[1], 3 * sizeof(float)));
    }));
    v.push_back(make("set", T{f32(37, 8), f32(10, 3)}, 0, [](auto A, auto c, auto & t) {
        return A.set(c, t[0], t[1], t[0]->nb[1], t[0]->nb[2], t[0]->nb[3], 2 * t[0]->nb[1] + 4 * sizeof(float));
    }));
    v.push_back(make("acc", T{f32(37, 8), f32(10, 3)}, 0, [](auto A, auto c, auto & t) {
        return A.acc(c, t[0], t[1], t[0]->nb[1], t[0]->nb[2], t[0]->nb[3], 2 * t[0]->nb[1] + 4 * sizeof(float));
    }));
    v.push_back(make("diag_mask_inf", T{f32(9, 9, 2)}, 0, [](auto A, auto c, auto & t) { return A.diag_mask_inf(c, t[0], 2); }));
    v.push_back(make("diag_mask_zero", T{f32(9, 9, 2)}, 0, [](auto A, auto c, auto & t) { return A.diag_mask_zero(c, t[0], 2); }));
    // Softmax: plain, with a scale and an f16 or f32 mask, with ALiBi.
    v.push_back(make("soft_max", T{range(f32(70, 6), -5, 5)}, ulps, [](auto A, auto c, auto & t) { return A.soft_max(c, t[0]); }));
    v.push_back(make("soft_max_ext mask f16", T{range(f32(70, 6, 4), -5, 5), range(f16(70, 6), -2, 0)}, ulps,
                     [](auto A, auto c, auto & t) { return A.soft_max_ext(c, t[0], t[1], 0.3f, 0.0f); }));
    v.push_back(make("soft_max_ext mask f32", T{range(f32(70, 6, 4), -5, 5), range(f32(70, 6), -2, 0)}, ulps,
                     [](auto A, auto c, auto & t) { return A.soft_max_ext(c, t[0], t[1], 0.3f, 0.0f); }));
    v.push_back(make("soft_max_ext ALiBi", T{range(f32(70, 6, 8), -5, 5), range(f16(70, 6), -2, 0)}, ulps,
                     [](auto A, auto c, auto & t) { return A.soft_max_ext(c, t[0], t[1], 0.3f, 8.0f); }));
    // Rope in five configurations.
    const double rope = 1e-5;
    v.push_back(make("rope normal", T{f32(64, 4, 7), ints(7, 0, 500)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_ext(c, t[0], t[1], nullptr, 64, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope neox", T{f32(64, 4, 7), ints(7, 0, 500)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_ext(c, t[0], t[1], nullptr, 64, 2, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope partial neox, linear scaling", T{f32(64, 4, 7), ints(7, 0, 500)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_ext(c, t[0], t[1], nullptr, 32, 2, 4096, 500000.0f, 0.25f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope YaRN", T{f32(64, 4, 7), ints(7, 0, 5000)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_ext(c, t[0], t[1], nullptr, 64, 0, 2048, 10000.0f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope freq factors", T{f32(64, 4, 7), ints(7, 0, 500), range(f32(32), 1, 8)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_ext(c, t[0], t[1], t[2], 64, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope_multi (M-RoPE)", T{f32(64, 4, 7), ints(4 * 7, 0, 50)}, rope, [](auto A, auto c, auto & t) {
        int sections[4] = {8, 12, 12, 0};
        return A.rope_multi(c, t[0], t[1], nullptr, 64, sections, 8, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope_multi (vision)", T{f32(64, 4, 7), ints(4 * 7, 0, 50)}, rope, [](auto A, auto c, auto & t) {
        int sections[4] = {16, 16, 0, 0};
        return A.rope_multi(c, t[0], t[1], nullptr, 32, sections, 24, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    // The ops added for test-backend-ops (issue 14).
    v.push_back(make("rope neox, window at an offset", T{f32(64, 4, 7), ints(7, 0, 500)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_set_offset(A.rope_ext(c, t[0], t[1], nullptr, 32, 2, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f), 16);
    }));
    v.push_back(make("rope normal, window at an offset", T{f32(64, 4, 7), ints(7, 0, 500)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_set_offset(A.rope_ext(c, t[0], t[1], nullptr, 24, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f), 38);
    }));
    v.push_back(make("add_id", T{f32(37, 4, 5), f32(37, 8), ints(4 * 5, 0, 7)}, 0, [](auto A, auto c, auto & t) {
        return A.add_id(c, t[0], t[1], A.reshape_2d(c, t[2], 4, 5));
    }));
    v.push_back(make("add_cast f16 + f32 -> f32", T{f16(70, 3), f32(70, 1)}, 0, [](auto A, auto c, auto & t) {
        return A.add_cast(c, t[0], t[1], A.f32);
    }));
    v.push_back(make("fill", T{f32(37, 5)}, 0, [](auto A, auto c, auto & t) { return A.fill(c, t[0], -2.5f); }));
    v.push_back(make("tri lower", T{f32(9, 9, 2)}, 0, [](auto A, auto c, auto & t) { return A.tri(c, t[0], A.tri_lower); }));
    v.push_back(make("tri upper_diag", T{f32(9, 9, 2)}, 0, [](auto A, auto c, auto & t) { return A.tri(c, t[0], A.tri_upper_diag); }));
    v.push_back(make("diag", T{f32(9, 1, 3)}, 0, [](auto A, auto c, auto & t) { return A.diag(c, t[0]); }));
    v.push_back(make("roll", T{f32(11, 5, 3, 2)}, 0, [](auto A, auto c, auto & t) { return A.roll(c, t[0], 4, -2, 1, 0); }));
    v.push_back(make("count_equal", T{ints(130, 0, 3), ints(130, 0, 3)}, 0, [](auto A, auto c, auto & t) {
        return A.count_equal(c, t[0], t[1]);
    }));
    v.push_back(make("solve_tri", T{range(f32(9, 9, 2), 0.5f, 1.5f), f32(5, 9, 2)}, sums, [](auto A, auto c, auto & t) {
        return A.solve_tri(c, t[0], t[1], true, true, false);
    }));
    v.push_back(make("xielu", T{range(f32(70, 4), -4, 4)}, ulps, [](auto A, auto c, auto & t) {
        return A.xielu(c, t[0], 0.8f, 0.8f, 0.5f, -1e-6f);
    }));
    v.push_back(make("swiglu_clamp", T{range(f32(70, 4), -9, 9)}, ulps, [](auto A, auto c, auto & t) {
        return A.swiglu_clamp(c, t[0], nullptr, 7.0f);
    }));
    v.push_back(make("swiglu_swapped", T{range(f32(70, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.swiglu_swapped(c, t[0]); }));
    v.push_back(make("geglu_swapped odd row", T{range(f32(71, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.geglu_swapped(c, t[0]); }));
    v.push_back(make("lightning_indexer", T{f32(16, 4, 9, 2), f16(16, 1, 33, 2), f32(4, 9, 1, 2), range(f16(33, 9), -2, 0)}, sums,
                     [](auto A, auto c, auto & t) { return A.lightning_indexer(c, t[0], t[1], t[2], t[3]); }));
    v.push_back(make("dsv4_hc_comb", T{f32(24, 7), range(f32(3), 0.5f, 1.5f), f32(24)}, sums, [](auto A, auto c, auto & t) {
        return A.dsv4_hc_comb(c, t[0], t[1], t[2], 1e-6f, 3);
    }));
    v.push_back(make("dsv4_hc_pre", T{f32(37, 4, 5), f32(4, 5)}, sums, [](auto A, auto c, auto & t) { return A.dsv4_hc_pre(c, t[0], t[1]); }));
    v.push_back(make("dsv4_hc_pre_gated", T{f32(37, 4, 5), f32(37, 4, 5)}, sums, [](auto A, auto c, auto & t) {
        return A.dsv4_hc_pre_gated(c, t[0], t[1], 0.5f);
    }));
    v.push_back(make("dsv4_hc_post", T{f32(37, 5), f32(37, 4, 5), f32(4, 5), f32(4, 4, 5)}, sums, [](auto A, auto c, auto & t) {
        return A.dsv4_hc_post(c, t[0], t[1], t[2], t[3]);
    }));
    // Reductions.
    v.push_back(make("sum", T{f32(130, 7)}, sums, [](auto A, auto c, auto & t) { return A.sum(c, t[0]); }));
    v.push_back(make("sum_rows", T{f32(130, 7, 3)}, sums, [](auto A, auto c, auto & t) { return A.sum_rows(c, t[0]); }));
    v.push_back(make("mean", T{f32(130, 7, 3)}, sums, [](auto A, auto c, auto & t) { return A.mean(c, t[0]); }));
    v.push_back(make("cumsum", T{f32(130, 7)}, sums, [](auto A, auto c, auto & t) { return A.cumsum(c, t[0]); }));
    v.push_back(make("argmax", T{f32(130, 7)}, 0, [](auto A, auto c, auto & t) { return A.argmax(c, t[0]); }));
    v.push_back(make("argsort", T{f32(130, 7)}, 0, [](auto A, auto c, auto & t) { return A.argsort(c, t[0], A.sort_asc); }));
    // Convolutions, pooling, padding, resampling.
    v.push_back(make("conv_1d", T{f16(3, 4, 6), f32(40, 4, 2)}, 1e-3, [](auto A, auto c, auto & t) { return A.conv_1d(c, t[0], t[1], 2, 1, 1); }));
    v.push_back(make("conv_2d", T{f16(3, 3, 4, 5), f32(12, 10, 4, 2)}, 1e-3, [](auto A, auto c, auto & t) {
        return A.conv_2d(c, t[0], t[1], 1, 2, 1, 0, 1, 1);
    }));
    v.push_back(make("conv_2d_dw", T{f32(3, 3, 1, 4), f32(12, 10, 4, 2)}, sums, [](auto A, auto c, auto & t) {
        return A.conv_2d_dw(c, t[0], t[1], 1, 1, 1, 1, 1, 1);
    }));
    v.push_back(make("conv_transpose_1d", T{f32(3, 5, 4), f32(20, 4)}, sums, [](auto A, auto c, auto & t) {
        return A.conv_transpose_1d(c, t[0], t[1], 2, 0, 1);
    }));
    v.push_back(make("conv_transpose_2d_p0", T{f16(3, 3, 5, 4), f32(8, 7, 4)}, 1e-3, [](auto A, auto c, auto & t) {
        return A.conv_transpose_2d_p0(c, t[0], t[1], 2);
    }));
    v.push_back(make("im2col 2-D", T{f16(3, 3, 4, 5), f32(12, 10, 4, 2)}, 0, [](auto A, auto c, auto & t) {
        return A.im2col(c, t[0], t[1], 1, 2, 1, 0, 1, 1, true, A.f32);
    }));
    v.push_back(make("pool_1d max", T{f32(40, 6)}, 0, [](auto A, auto c, auto & t) { return A.pool_1d(c, t[0], A.pool_max, 3, 2, 1); }));
    v.push_back(make("pool_2d avg", T{f32(12, 10, 3)}, sums, [](auto A, auto c, auto & t) {
        return A.pool_2d(c, t[0], A.pool_avg, 3, 3, 2, 2, 1.0f, 1.0f);
    }));
    v.push_back(make("pool_2d max", T{f32(12, 10, 3)}, 0, [](auto A, auto c, auto & t) {
        return A.pool_2d(c, t[0], A.pool_max, 2, 2, 2, 2, 0.0f, 0.0f);
    }));
    v.push_back(make("pad", T{f32(11, 5, 3)}, 0, [](auto A, auto c, auto & t) { return A.pad(c, t[0], 3, 2, 1, 0); }));
    v.push_back(make("pad_reflect_1d", T{f32(11, 5)}, 0, [](auto A, auto c, auto & t) { return A.pad_reflect_1d(c, t[0], 3, 4); }));
    v.push_back(make("interpolate nearest", T{f32(7, 5, 3)}, 0, [](auto A, auto c, auto & t) {
        return A.interpolate(c, t[0], 14, 15, 3, 1, A.nearest);
    }));
    v.push_back(make("interpolate bilinear", T{f32(7, 5, 3)}, sums, [](auto A, auto c, auto & t) {
        return A.interpolate(c, t[0], 11, 9, 3, 1, A.bilinear);
    }));
    v.push_back(make("interpolate bilinear align corners", T{f32(7, 5, 3)}, sums, [](auto A, auto c, auto & t) {
        return A.interpolate(c, t[0], 11, 9, 3, 1, A.bilinear | A.align_corners);
    }));
    v.push_back(make("timestep_embedding", T{range(f32(6), 0, 1000)}, 1e-5, [](auto A, auto c, auto & t) {
        return A.timestep_embedding(c, t[0], 32, 10000);
    }));
    // Windows and relative positions (SAM).
    v.push_back(make("win_part", T{f32(8, 10, 9)}, 0, [](auto A, auto c, auto & t) { return A.win_part(c, t[0], 4); }));
    v.push_back(make("win_unpart", T{f32(8, 4, 4, 9)}, 0, [](auto A, auto c, auto & t) { return A.win_unpart(c, t[0], 10, 9, 4); }));
    v.push_back(make("get_rel_pos", T{f16(8, 9)}, 0, [](auto A, auto c, auto & t) { return A.get_rel_pos(c, t[0], 5, 5); }));
    v.push_back(make("add_rel_pos", T{f32(16, 16, 2), f32(4, 4, 4, 2), f32(4, 4, 4, 2)}, 0, [](auto A, auto c, auto & t) {
        return A.add_rel_pos(c, t[0], t[1], t[2]);
    }));
    // State-space and recurrent families.
    v.push_back(make("ssm_conv", T{f32(3 + 5, 8, 2), f32(4, 8)}, sums, [](auto A, auto c, auto & t) {
        return A.ssm_conv(c, t[0], t[1]);
    }));
    v.push_back(make("ssm_scan (Mamba-2)", T{f32(16, 4, 3, 2), f32(4, 3, 5, 2), range(f32(3, 5, 2), 0, 1),
                                             range(f32(1, 3), -1, 0), f32(16, 1, 5, 2), f32(16, 1, 5, 2), ints(2, 0, 1)},
                     sums, [](auto A, auto c, auto & t) { return A.ssm_scan(c, t[0], t[1], t[2], t[3], t[4], t[5], t[6], 1); }));
    v.push_back(make("rwkv_wkv6", T{f32(8, 2, 6), f32(8, 2, 6), f32(8, 2, 6), f32(8, 2), range(f32(8, 2, 6), -1, 0), f32(8 * 8 * 2, 2)},
                     sums, [](auto A, auto c, auto & t) { return A.rwkv_wkv6(c, t[0], t[1], t[2], t[3], t[4], t[5]); }));
    // RWKV-7 with 64-wide heads: ggml's x86 kernel steps over a head 64 floats at a time
    // (AVX-512) and reads past a smaller one.
    v.push_back(make("rwkv_wkv7", T{f32(64, 1, 4), range(f32(64, 1, 4), 0.5f, 1), f32(64, 1, 4), f32(64, 1, 4),
                                    range(f32(64, 1, 4), -0.1f, 0.1f), range(f32(64, 1, 4), -0.1f, 0.1f), f32(64 * 64, 2)},
                     sums, [](auto A, auto c, auto & t) { return A.rwkv_wkv7(c, t[0], t[1], t[2], t[3], t[4], t[5], t[6]); }));
    v.push_back(make("gated_linear_attn", T{f32(8, 2, 6), f32(8, 2, 6), f32(8, 2, 6), range(f32(8, 2, 6), 0.5f, 1), f32(8 * 8 * 2, 2)},
                     sums, [](auto A, auto c, auto & t) { return A.gated_linear_attn(c, t[0], t[1], t[2], t[3], t[4], 0.35f); }));
    v.push_back(make("gated_delta_net", T{f32(8, 2, 5, 2), f32(8, 2, 5, 2), f32(8, 2, 5, 2), range(f32(1, 2, 5, 2), -1, 0),
                                          range(f32(1, 2, 5, 2), 0, 1), f32(8, 8, 2, 2)},
                     sums, [](auto A, auto c, auto & t) { return A.gated_delta_net(c, t[0], t[1], t[2], t[3], t[4], t[5], 1); }));
    v.push_back(make("gated_delta_net (KDA)", T{f32(8, 2, 5, 2), f32(8, 2, 5, 2), f32(8, 2, 5, 2), range(f32(8, 2, 5, 2), -1, 0),
                                                range(f32(1, 2, 5, 2), 0, 1), f32(8, 8, 2, 2)},
                     sums, [](auto A, auto c, auto & t) { return A.gated_delta_net(c, t[0], t[1], t[2], t[3], t[4], t[5], 1); }));
    // Fused attention: f16 K/V, a mask, softcap 0 and 30. ggml's CPU kernel rounds the
    // queries to f16 for the f16 K dot products, gk keeps them in f32: about 1e-3 apart.
    v.push_back(make("flash_attn_ext f16 K/V", T{f32(64, 7, 4), f16(64, 32, 2), f16(64, 32, 2), range(f16(32, 7), -3, 0)}, 3e-3,
                     [](auto A, auto c, auto & t) { return A.flash_attn_ext(c, t[0], t[1], t[2], t[3], 0.125f, 0.0f, 0.0f); }));
    v.push_back(make("flash_attn_ext softcap", T{f32(64, 7, 4), f16(64, 32, 2), f16(64, 32, 2), range(f16(32, 7), -3, 0)}, 3e-3,
                     [](auto A, auto c, auto & t) { return A.flash_attn_ext(c, t[0], t[1], t[2], t[3], 0.125f, 0.0f, 30.0f); }));
    // Quantized K/V (q8_0, q4_0, the same blocks for both; both round the queries to q8_0
    // for the integer dot products and decode V rows to f32: only the sums' order differs),
    // attention sinks, ALiBi.
    for (int kv : {GK_TYPE_Q8_0, GK_TYPE_Q4_0}) {
        v.push_back(make(std::string("flash_attn_ext ") + (kv == GK_TYPE_Q8_0 ? "q8_0" : "q4_0") + " K/V",
                         T{f32(64, 7, 4), quantized(kv, 64, 32, 2), quantized(kv, 64, 32, 2), range(f16(32, 7), -3, 0)}, sums,
                         [](auto A, auto c, auto & t) { return A.flash_attn_ext(c, t[0], t[1], t[2], t[3], 0.125f, 0.0f, 0.0f); }));
    }
    v.push_back(make("flash_attn_ext sinks", T{f32(64, 7, 4), f16(64, 32, 2), f16(64, 32, 2), range(f16(32, 7), -3, 0), range(f32(4), -2, 2)},
                     3e-3, [](auto A, auto c, auto & t) {
                         auto r = A.flash_attn_ext(c, t[0], t[1], t[2], t[3], 0.125f, 0.0f, 0.0f);
                         A.add_sinks(r, t[4]);
                         return r;
                     }));
    v.push_back(make("flash_attn_ext ALiBi", T{f32(64, 7, 4), f16(64, 32, 2), f16(64, 32, 2), range(f16(32, 7), -3, 0)}, 3e-3,
                     [](auto A, auto c, auto & t) { return A.flash_attn_ext(c, t[0], t[1], t[2], t[3], 0.125f, 8.0f, 0.0f); }));
    // Training: the *_back ops against ggml's own backward kernels (a is the gradient of the
    // forward op's result), the loss and its gradient, the optimizer steps (the parameter
    // after one step; hyperparameters in (0.1, 0.9), v >= 0).
    v.push_back(make("silu_back", T{f32(70, 4), range(f32(70, 4), -6, 6)}, ulps, [](auto A, auto c, auto & t) { return A.silu_back(c, t[0], t[1]); }));
    v.push_back(make("rms_norm_back", T{f32(130, 4, 2), f32(130, 4, 2)}, sums, [](auto A, auto c, auto & t) { return A.rms_norm_back(c, t[0], t[1], 1e-6f); }));
    v.push_back(make("soft_max_ext_back", T{f32(70, 6, 4), range(f32(70, 6, 4), 0, 0.1f)}, sums,
                     [](auto A, auto c, auto & t) { return A.soft_max_ext_back(c, t[0], t[1], 0.3f, 0.0f); }));
    v.push_back(make("rope_ext_back normal", T{f32(64, 4, 7), ints(7, 0, 500)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_ext_back(c, t[0], t[1], nullptr, 64, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope_ext_back neox YaRN", T{f32(64, 4, 7), ints(7, 0, 5000)}, rope, [](auto A, auto c, auto & t) {
        return A.rope_ext_back(c, t[0], t[1], nullptr, 64, 2, 4096, 10000.0f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("rope_multi_back (M-RoPE)", T{f32(64, 4, 7), ints(4 * 7, 0, 50)}, rope, [](auto A, auto c, auto & t) {
        int sections[4] = {8, 12, 12, 0};
        return A.rope_multi_back(c, t[0], t[1], nullptr, 64, sections, 8, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    }));
    v.push_back(make("get_rows_back", T{f32(37, 7), ints(7, 0, 19), f32(37, 20)}, 0,
                     [](auto A, auto c, auto & t) { return A.get_rows_back(c, t[0], t[1], t[2]); }));
    v.push_back(make("repeat_back", T{f32(37, 4, 3, 2), f32(37, 1, 3)}, 0, [](auto A, auto c, auto & t) { return A.repeat_back(c, t[0], t[1]); }));
    v.push_back(make("pool_2d_back avg", T{f32(6, 5, 3), f32(12, 10, 3)}, sums, [](auto A, auto c, auto & t) {
        return A.pool_2d_back(c, t[0], t[1], A.pool_avg, 3, 3, 2, 2, 1.0f, 1.0f);
    }));
    v.push_back(make("pool_2d_back max", T{f32(6, 5, 3), f32(12, 10, 3)}, sums, [](auto A, auto c, auto & t) {
        return A.pool_2d_back(c, t[0], t[1], A.pool_max, 2, 2, 2, 2, 0.0f, 0.0f);
    }));
    v.push_back(make("im2col_back 2-D", T{f32(36, 12, 4, 2), f16(3, 3, 4, 5)}, sums, [](auto A, auto c, auto & t) {
        int64_t ne[4] = {12, 10, 4, 2};
        return A.im2col_back(c, t[0], t[1], ne, 1, 2, 1, 0, 1, 1, true);
    }));
    v.push_back(make("cross_entropy_loss", T{range(f32(37, 6), -4, 4), range(f32(37, 6), 0, 1)}, sums,
                     [](auto A, auto c, auto & t) { return A.cross_entropy_loss(c, t[0], t[1]); }));
    v.push_back(make("cross_entropy_loss_back", T{f32(1), range(f32(37, 6), -4, 4), range(f32(37, 6), 0, 1)}, sums,
                     [](auto A, auto c, auto & t) { return A.cross_entropy_loss_back(c, t[0], t[1], t[2]); }));
    v.push_back(make("opt_step_adamw", T{f32(37, 4), f32(37, 4), f32(37, 4), range(f32(37, 4), 0, 1), range(f32(7), 0.1f, 0.9f)}, ulps,
                     [](auto A, auto c, auto & t) {
                         A.set_param(t[0]);
                         return A.opt_step_adamw(c, t[0], t[1], t[2], t[3], t[4]);
                     }));
    v.push_back(make("opt_step_sgd", T{f32(37, 4), f32(37, 4), range(f32(2), 0.1f, 0.9f)}, ulps, [](auto A, auto c, auto & t) {
        A.set_param(t[0]);
        return A.opt_step_sgd(c, t[0], t[1], t[2]);
    }));
    // The custom-op hooks: the same callback text for both, run on every thread.
    v.push_back(make("map_custom1", T{f32(37, 9)}, 0, [](auto A, auto c, auto & t) {
        return A.map_custom1(c, t[0], &custom1<typename decltype(A)::tensor>, -1, nullptr);
    }));
    v.push_back(make("map_custom2", T{f32(37, 9), f32(37, 9)}, 0, [](auto A, auto c, auto & t) {
        return A.map_custom2(c, t[0], t[1], &custom2<typename decltype(A)::tensor>, 2, nullptr);
    }));
    v.push_back(make("map_custom3 (userdata)", T{f32(37, 9), f32(37, 9), f32(37, 9)}, 0, [](auto A, auto c, auto & t) {
        return A.map_custom3(c, t[0], t[1], t[2], &custom3<typename decltype(A)::tensor>, 1, &k_custom_user);
    }));
    // A composed transformer block: RMS norm, q/k/v projections, rope, attention by
    // mul_mat + soft_max_ext over 4 heads, output projection and residual, then a swiglu
    // feed-forward and residual.
    v.push_back(make("transformer block", T{f32(64, 6), f32(64), f32(64, 64), f32(64, 64), f32(64, 64), f32(64, 64),
                                            ints(6, 0, 5), range(f32(6, 6), -1, 0), f32(64, 96), f32(64, 96), f32(96, 64)},
                     1e-4, [](auto A, auto c, auto & t) {
                         const auto rope = [&](auto x) {
                             return A.rope_ext(c, x, t[6], nullptr, 16, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
                         };
                         const auto heads = [&](auto w, auto h) { return A.reshape_3d(c, A.mul_mat(c, w, h), 16, 4, 6); };
                         auto x   = t[0];
                         auto h   = A.mul(c, A.rms_norm(c, x, 1e-5f), t[1]);
                         auto q   = A.permute(c, rope(heads(t[2], h)), 0, 2, 1, 3);       // [16, 6, 4]
                         auto k   = A.permute(c, rope(heads(t[3], h)), 0, 2, 1, 3);       // [16, 6, 4]
                         auto vt  = A.cont(c, A.permute(c, heads(t[4], h), 1, 2, 0, 3));  // [6, 16, 4]
                         auto kq  = A.soft_max_ext(c, A.mul_mat(c, k, q), t[7], 0.25f, 0.0f);  // [6, 6, 4]
                         auto o   = A.cont(c, A.permute(c, A.mul_mat(c, vt, kq), 0, 2, 1, 3)); // [16, 4, 6]
                         auto x2  = A.add(c, x, A.mul_mat(c, t[5], A.reshape_2d(c, o, 64, 6)));
                         auto h2  = A.mul(c, A.rms_norm(c, x2, 1e-5f), t[1]);
                         auto ffn = A.swiglu_split(c, A.mul_mat(c, t[8], h2), A.mul_mat(c, t[9], h2));
                         return A.add(c, x2, A.mul_mat(c, t[10], ffn));
                     }));
    return v;
}

/** The output's scale: max |ref|, at least 1e-30. */
double scale_of(const std::vector<float> & ref) {
    double m = 1e-30;
    for (float x : ref) m = std::max(m, std::fabs(static_cast<double>(x)));
    return m;
}

/** max |a - b| (infinity where one is NaN and the other not, or they differ in size). */
double max_diff(const std::vector<float> & a, const std::vector<float> & b) {
    if (a.size() != b.size()) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
        if (std::isnan(a[i]) || a[i] == b[i]) continue;  // equal infinities too
        m = std::max(m, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    }
    return m;
}

const std::vector<vs_case> & all_cases() {
    static const std::vector<vs_case> c = cases();
    return c;
}

class OpsVsGgml : public ::testing::TestWithParam<size_t> {};

TEST_P(OpsVsGgml, SameGraphSameInputs) {
    const vs_case & c     = all_cases()[GetParam()];
    const auto      bytes = input_bytes(c);
    const result    ours  = run_gk(c, bytes);
    ASSERT_EQ(ours.error, "") << c.name;  // before ggml, which aborts where gk refuses
    const result ref = run_ggml(c, bytes);
    ASSERT_EQ(ref.error, "") << c.name;
    ASSERT_EQ(ours.ne, ref.ne) << c.name << ": output shapes differ";
    const double d = max_diff(ours.v, ref.v), rel = d / scale_of(ref.v);
    std::printf("| %s | %.3g | %.3g | %s |\n", c.name.c_str(), rel, c.tol, rel <= c.tol ? "pass" : "FAIL");
    EXPECT_LE(rel, c.tol) << c.name << ": max |gk - ggml| = " << d << " over a scale of " << scale_of(ref.v);
}

std::string case_name(const ::testing::TestParamInfo<size_t> & info) {
    std::string n;
    for (char ch : all_cases()[info.param].name) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    return n;
}

INSTANTIATE_TEST_SUITE_P(Cases, OpsVsGgml, ::testing::Range<size_t>(0, all_cases().size()), case_name);

// ---- quantized matmul against the truth --------------------------------------------

/** Weight types ggml's CPU backend multiplies (a vec_dot): f16, bf16 and the block types,
 *  the activation-only ones aside. */
std::vector<int> quantized_weight_types() {
    std::vector<int> t;
    for (int i = 0; i < GGML_TYPE_COUNT; ++i) {
        const auto type = static_cast<ggml_type>(i);
        const bool weight = ggml_is_quantized(type) || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
        if (!weight || type == GGML_TYPE_Q8_1 || type == GGML_TYPE_Q8_K) continue;
        const auto * cpu = ggml_get_type_traits_cpu(type);
        if (!cpu || !cpu->vec_dot || !ggml_get_type_traits(type)->to_float) continue;
        t.push_back(i);
    }
    return t;
}

class QuantizedMatmul : public ::testing::TestWithParam<int> {};

TEST_P(QuantizedMatmul, NoWorseThanGgmlAgainstTheTruth) {
    const int     type = GetParam();
    const int64_t K = 256, M = 16, N = 3;
    std::mt19937  rng(777 + type);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> w(static_cast<size_t>(K * M)), x(static_cast<size_t>(K * N)), imatrix(static_cast<size_t>(K), 1.0f);
    for (auto & v : w) v = d(rng);
    for (auto & v : x) v = d(rng);
    const auto            t  = static_cast<ggml_type>(type);
    std::vector<uint8_t>  q(ggml_row_size(t, K) * static_cast<size_t>(M));
    ggml_quantize_chunk(t, w.data(), q.data(), 0, M, K, ggml_quantize_requires_imatrix(t) ? imatrix.data() : nullptr);
    // The truth: gk's decoding of the quantized weights (the same bytes both multiply), in double.
    std::vector<float> wq(w.size());
    ASSERT_TRUE(gk::quant::dequantize_rows(type, q.data(), wq.data(), M, K)) << ggml_type_name(t);
    std::vector<float> truth(static_cast<size_t>(M * N));
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t m = 0; m < M; ++m) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) s += static_cast<double>(wq[m * K + k]) * x[n * K + k];
            truth[n * M + m] = static_cast<float>(s);
        }
    }
    std::vector<std::vector<uint8_t>> bytes = {q, std::vector<uint8_t>(reinterpret_cast<uint8_t *>(x.data()),
                                                                        reinterpret_cast<uint8_t *>(x.data() + x.size()))};
    vs_case c = make(ggml_type_name(t), {input{type, {K, M, 1, 1}}, f32(K, N)}, 0,
                     [](auto A, auto ctx, auto & in) { return A.mul_mat(ctx, in[0], in[1]); });
    const result ours = run_gk(c, bytes), ref = run_ggml(c, bytes);
    ASSERT_EQ(ref.error, "") << c.name;
    ASSERT_EQ(ours.error, "") << c.name;
    const double scale = scale_of(truth), e_gk = max_diff(ours.v, truth) / scale, e_ggml = max_diff(ref.v, truth) / scale;
    const bool   ok = e_gk <= 1.5 * e_ggml + 1e-6;
    std::printf("| mul_mat %s x f32 | %.3g | %.3g | %s |\n", c.name.c_str(), e_gk, e_ggml, ok ? "pass" : "FAIL");
    EXPECT_TRUE(ok) << c.name << ": gk's error " << e_gk << " against ggml's " << e_ggml << " (relative to the truth)";
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizedMatmul, ::testing::ValuesIn(quantized_weight_types()),
                         [](const ::testing::TestParamInfo<int> & i) {
                             return std::string(ggml_type_name(static_cast<ggml_type>(i.param)));
                         });

} // namespace
