// test-device-ops: every device backend of the build (CUDA with GK_CUDA, Vulkan with
// GK_VULKAN) on every device the machine has - in CI Mesa's lavapipe, a software Vulkan
// device whose arithmetic is IEEE's - held to the rule that the CPU kernel defines an op:
// every op a device computes must give the CPU kernel's bits. Each graph runs twice
// through gk_sched: over the CPU alone, and over [device, CPU], where the device takes
// what it supports and the CPU the rest, values staged between their memories.
// Skipped ("GK-SKIP") in a build without device backends or on a machine without a
// device. The test sets GK_VULKAN_SOFTWARE=1 before discovery, so that a software Vulkan
// device is listed.
#include "backend_util.h"

#include "gk/gk-sched.h"
#include "quant/codec.h"
#include "quant/fp16.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

using namespace gktest;

namespace {

/// Every device but the CPU (software Vulkan devices included: see the file comment).
std::vector<gk_backend_dev_t> device_list() {
    setenv("GK_VULKAN_SOFTWARE", "1", 0);  // before the first registry call of the process
    std::vector<gk_backend_dev_t> out;
    for (size_t i = 0; i < gk_backend_dev_count(); ++i) {
        gk_backend_dev_t d = gk_backend_dev_get(i);
        if (gk_backend_dev_type(d) != GK_BACKEND_DEVICE_TYPE_CPU) out.push_back(d);
    }
    return out;
}

/// The devices, or skip the test.
#define NEED_DEVICES(devs)                                                                            \
    const std::vector<gk_backend_dev_t> devs = device_list();                                         \
    if (devs.empty()) GTEST_SKIP() << "GK-SKIP: no device (a build without GK_CUDA or GK_VULKAN, or no driver)"

struct sched_deleter {
    void operator()(gk_sched * s) const { gk_sched_free(s); }
};
using sched_ptr = std::unique_ptr<gk_sched, sched_deleter>;

/// A graph and its inputs' values: build(ctx) makes the inputs (named "in0", "in1", ...:
/// F32, F16 or block-format leaves of random values; "idx0", ...: I32 or I64 indices)
/// and returns the output.
using graph_fn = std::function<gk_tensor *(gk_context *)>;

struct run_result {
    std::vector<unsigned char> out;
    int                        n_splits = 0;
    std::vector<std::string>   on_device;              // names of the nodes the device computed
    bool                       out_on_device = false;  // the output node among them
};

/// Build `build`'s graph in a fresh context, run it through a scheduler over `backends`
/// with inputs filled from seeds, and read the output.
run_result run(const graph_fn & build, std::vector<gk_backend_t> backends) {
    run_result r;
    ctx_ptr    ctx = make_ctx(256 * gk_tensor_overhead() + gk_graph_overhead(), true);
    gk_tensor * out = build(ctx.get());
    EXPECT_NE(out, nullptr) << gk_last_error(ctx.get());
    if (!out) return r;
    gk_set_output(out);
    gk_cgraph * g = gk_new_graph(ctx.get());
    EXPECT_EQ(gk_build_forward_expand(g, out), GK_STATUS_SUCCESS) << gk_last_error(ctx.get());
    sched_ptr sched(gk_sched_new(backends.data(), static_cast<int>(backends.size())));
    EXPECT_TRUE(sched) << gk_backend_last_error();
    EXPECT_EQ(gk_sched_alloc_graph(sched.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    uint32_t seed = 1;
    for (gk_tensor * t = gk_get_first_tensor(ctx.get()); t; t = gk_get_next_tensor(ctx.get(), t)) {
        if (std::strncmp(gk_get_name(t), "idx", 3) == 0) {  // indices and positions: (5 i + 2) % 7
            std::vector<int64_t> v(static_cast<size_t>(gk_nelements(t)));
            for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((5 * i + 2) % 7);
            std::vector<int32_t> v32(v.begin(), v.end());
            const void *         src = t->type == GK_TYPE_I64 ? static_cast<const void *>(v.data()) : v32.data();
            EXPECT_EQ(gk_backend_tensor_set(t, src, 0, gk_nbytes(t)), GK_STATUS_SUCCESS);
            continue;
        }
        const std::string name = gk_get_name(t);
        if (name.rfind("in", 0) != 0 && name.rfind("causal", 0) != 0 && name != "special") continue;
        auto v = random_values(static_cast<size_t>(gk_nelements(t)), seed++, 1.0f);
        if (name == "special") {  // see special_activations
            for (size_t i = 0; i < 32; ++i) {
                v[i] *= 1e-39f;
                v[static_cast<size_t>(t->ne[0]) + i] = 0.0f;
            }
        }
        if (name[0] == 'c') {  // a causal mask: element (i0, i1) is 0 for i0 < i1, else -inf (row 0 all -inf)
            for (size_t i = 0; i < v.size(); ++i) {
                v[i] = static_cast<int64_t>(i % t->ne[0]) < static_cast<int64_t>(i / t->ne[0]) % t->ne[1] ? 0.0f
                                                                                                          : -INFINITY;
            }
        }
        if (t->type == GK_TYPE_F32) {
            EXPECT_EQ(gk_backend_tensor_set(t, v.data(), 0, gk_nbytes(t)), GK_STATUS_SUCCESS);
        } else if (t->type != GK_TYPE_F16) {  // a block format: the values encoded
            std::vector<unsigned char> q(gk_nbytes(t));
            EXPECT_EQ(gk::quant::quantize_rows(t->type, v.data(), q.data(), gk_nrows(t), t->ne[0], nullptr), q.size());
            EXPECT_EQ(gk_backend_tensor_set(t, q.data(), 0, q.size()), GK_STATUS_SUCCESS);
        } else {
            std::vector<uint16_t> h;
            for (float f : v) h.push_back(gk::fp32_to_fp16(f));
            EXPECT_EQ(gk_backend_tensor_set(t, h.data(), 0, gk_nbytes(t)), GK_STATUS_SUCCESS);
        }
    }
    EXPECT_EQ(gk_sched_graph_compute(sched.get(), g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    r.out      = bytes_of(out);
    r.n_splits = gk_sched_get_n_splits(sched.get());
    for (int i = 0; i < gk_graph_n_nodes(g); ++i) {
        gk_tensor * n = gk_graph_node(g, i);
        if (gk_sched_get_tensor_backend(sched.get(), n) == backends[0] && backends.size() > 1) {
            r.on_device.push_back(gk_get_name(n));
            r.out_on_device = r.out_on_device || n == out;
        }
    }
    return r;
}

/// A causal mask of [a, b] (f32 or f16): see run().
gk_tensor * causal(gk_context * ctx, gk_type type, int64_t a, int64_t b) {
    static int  k = 0;
    gk_tensor * t = gk_new_tensor_2d(ctx, type, a, b);
    gk_set_name(t, ("causal" + std::to_string(k++)).c_str());
    gk_set_input(t);
    return t;
}

gk_tensor * in(gk_context * ctx, gk_type type, int64_t a, int64_t b = 1, int64_t c = 1, int64_t d = 1) {
    static int  k = 0;
    gk_tensor * t = gk_new_tensor_4d(ctx, type, a, b, c, d);
    gk_set_name(t, ("in" + std::to_string(k++)).c_str());
    gk_set_input(t);
    return t;
}

/// Indices (or positions) 0..6, I32 or I64: see run().
gk_tensor * idx(gk_context * ctx, gk_type type, int64_t a, int64_t b = 1, int64_t c = 1) {
    static int  k = 0;
    gk_tensor * t = gk_new_tensor_3d(ctx, type, a, b, c);
    gk_set_name(t, ("idx" + std::to_string(k++)).c_str());
    gk_set_input(t);
    return t;
}

/// rope of `mode` over heads of 16 (12 rotated: 4 copied) at positions 0..6, with
/// frequency factors (inputs, as the angles are tabulated on the host) or not, and
/// YaRN's extrapolation mix when ext_factor > 0.
gk_tensor * rope_case(gk_context * x, int mode, bool factors, float ext_factor) {
    gk_tensor * c = factors ? in(x, GK_TYPE_F32, 6) : nullptr;
    return gk_rope_ext(x, in(x, GK_TYPE_F32, 16, 3, 5), idx(x, GK_TYPE_I32, 5), c, 12, mode, 64, 10000.0f, 0.5f,
                       ext_factor, 1.0f, 32.0f, 1.0f);
}

/// Activations [k, n] (n >= 2; see run()): random values but for the first block of 32
/// of column 0, tiny (127 / max |x| overflows: the q8_0 conversion's other rule), and of
/// column 1, zeros.
gk_tensor * special_activations(gk_context * x, int64_t k, int64_t n) {
    gk_tensor * t = gk_new_tensor_2d(x, GK_TYPE_F32, k, n);
    gk_set_name(t, "special");
    gk_set_input(t);
    return t;
}

/// flash_attn_ext of 5 queries over 37 keys, 4 query heads over 2 K/V heads, head size
/// 64 (V's 48), K of `kt`, V f16, a mask of `mt` (values scaled by 4, so that some keys
/// weigh little), scale 0.125, ALiBi's max_bias and sinks as asked.
gk_tensor * flash_case(gk_context * x, gk_type kt, gk_type mt, float max_bias, bool sinks) {
    gk_tensor * mask = gk_scale(x, in(x, GK_TYPE_F32, 37, 5), 4.0f);
    if (mt == GK_TYPE_F16) mask = gk_cpy(x, mask, gk_new_tensor_2d(x, GK_TYPE_F16, 37, 5));
    gk_tensor * a = gk_flash_attn_ext(x, in(x, GK_TYPE_F32, 64, 5, 4), in(x, kt, 64, 37, 2),
                                      in(x, GK_TYPE_F16, 48, 37, 2), mask, 0.125f, max_bias, 0.0f);
    if (sinks && !gk_flash_attn_ext_add_sinks(a, in(x, GK_TYPE_F32, 4))) return nullptr;
    return a;
}

/// mul_mat of [k, m] weights of `type` and [k, n] activations: random, or with special
/// blocks (special_activations).
gk_tensor * weights_case(gk_context * x, gk_type type, int64_t k, int64_t m, int64_t n, bool special) {
    return gk_mul_mat(x, in(x, type, k, m), special ? special_activations(x, k, n) : in(x, GK_TYPE_F32, k, n));
}

/// get_rows of 5 rows (indices 2, 0, 5, 3, 1) of a table of 7 rows of 256 elements of `type`.
gk_tensor * rows_of(gk_context * x, gk_type type) {
    return gk_get_rows(x, in(x, type, 256, 7), idx(x, GK_TYPE_I32, 5));
}

struct op_case {
    const char * name;
    graph_fn     build;
    const char * only = nullptr;  // the devices whose names start so (the ops only the CUDA backend has), or all
};

const std::vector<op_case> & cases() {
    static const std::vector<op_case> c = {
        {"add, b repeated",
         [](gk_context * x) { return gk_add(x, in(x, GK_TYPE_F32, 33, 4, 3), in(x, GK_TYPE_F32, 33, 1, 3)); }},
        {"sub", [](gk_context * x) { return gk_sub(x, in(x, GK_TYPE_F32, 70, 3), in(x, GK_TYPE_F32, 70, 3)); }},
        {"mul, b a row",
         [](gk_context * x) { return gk_mul(x, in(x, GK_TYPE_F32, 17, 9, 2), in(x, GK_TYPE_F32, 17)); }},
        {"div", [](gk_context * x) { return gk_div(x, in(x, GK_TYPE_F32, 40, 5), in(x, GK_TYPE_F32, 40, 5)); }},
        {"mul of a transposed view",
         [](gk_context * x) {
             return gk_mul(x, gk_transpose(x, in(x, GK_TYPE_F32, 6, 10)), in(x, GK_TYPE_F32, 10, 6));
         }},
        {"scale", [](gk_context * x) { return gk_scale_bias(x, in(x, GK_TYPE_F32, 100, 3), 0.37f, -1.25f); }},
        {"mul_mat f32, K with a tail",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_F32, 100, 7), in(x, GK_TYPE_F32, 100, 5)); }},
        {"mul_mat f32, K with a tail, one column",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_F32, 100, 7), in(x, GK_TYPE_F32, 100, 1)); }},
        {"mul_mat f32, batches broadcast",
         [](gk_context * x) {
             return gk_mul_mat(x, in(x, GK_TYPE_F32, 64, 6, 2, 1), in(x, GK_TYPE_F32, 64, 3, 4, 3));
         }},
        {"mul_mat f16 weights",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_F16, 130, 9), in(x, GK_TYPE_F32, 130, 4)); }},
        {"mul_mat q8_0 weights, a block with an infinity and one of zeros",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_Q8_0, 128, 9), special_activations(x, 128, 5)); }},
        {"mul_mat q4_0 weights, batches broadcast",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_Q4_0, 96, 7, 2), in(x, GK_TYPE_F32, 96, 3, 4)); }},
        // 40 x 20 outputs per slab: on a CUDA device of compute capability 7.2+ these take the
        // tensor cores (16 x 16 tiles, the last ones partly outside; mma.cu), elsewhere the
        // one-output-per-thread kernels.
        {"mul_mat q8_0 weights, 40 x 20 per slab, two slabs",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_Q8_0, 96, 40, 2), in(x, GK_TYPE_F32, 96, 20, 2)); }},
        {"mul_mat q4_0 weights, 40 x 20 per slab, weights broadcast",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_Q4_0, 160, 40), in(x, GK_TYPE_F32, 160, 20, 3)); }},
        {"mul_mat q4_K weights",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_Q4_K, 512, 6), special_activations(x, 512, 4)); }},
        {"mul_mat q6_K weights",
         [](gk_context * x) {
             return gk_mul_mat(x, in(x, GK_TYPE_Q6_K, 256, 5, 1, 2), in(x, GK_TYPE_F32, 256, 3, 1, 2));
         }},
        {"mul_mat q5_0 weights, a block with an infinity and one of zeros",
         [](gk_context * x) { return weights_case(x, GK_TYPE_Q5_0, 128, 5, 3, true); }},
        {"mul_mat q4_1 weights (q8_1 activations)",
         [](gk_context * x) { return weights_case(x, GK_TYPE_Q4_1, 96, 5, 3, true); }},
        {"mul_mat q5_1 weights, batches broadcast",
         [](gk_context * x) { return gk_mul_mat(x, in(x, GK_TYPE_Q5_1, 64, 4, 2), in(x, GK_TYPE_F32, 64, 3, 4)); }},
        {"mul_mat q8_1 weights", [](gk_context * x) { return weights_case(x, GK_TYPE_Q8_1, 64, 4, 3, false); }},
        {"mul_mat iq4_nl weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ4_NL, 160, 4, 3, true); }},
        {"mul_mat mxfp4 weights", [](gk_context * x) { return weights_case(x, GK_TYPE_MXFP4, 160, 4, 3, false); }},
        {"mul_mat nvfp4 weights", [](gk_context * x) { return weights_case(x, GK_TYPE_NVFP4, 192, 4, 3, false); }},
        {"mul_mat q1_0 weights", [](gk_context * x) { return weights_case(x, GK_TYPE_Q1_0, 256, 3, 3, false); }},
        {"mul_mat q2_0 weights", [](gk_context * x) { return weights_case(x, GK_TYPE_Q2_0, 192, 3, 3, false); }},
        {"mul_mat q2_K weights", [](gk_context * x) { return weights_case(x, GK_TYPE_Q2_K, 256, 4, 3, true); }},
        {"mul_mat q3_K weights", [](gk_context * x) { return weights_case(x, GK_TYPE_Q3_K, 256, 4, 3, false); }},
        {"mul_mat q5_K weights, batches broadcast",
         [](gk_context * x) {
             return gk_mul_mat(x, in(x, GK_TYPE_Q5_K, 256, 3, 1, 2), in(x, GK_TYPE_F32, 256, 2, 2, 2));
         }},
        {"mul_mat iq4_xs weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ4_XS, 512, 3, 2, false); }},
        {"mul_mat tq1_0 weights", [](gk_context * x) { return weights_case(x, GK_TYPE_TQ1_0, 256, 3, 2, false); }},
        {"mul_mat tq2_0 weights", [](gk_context * x) { return weights_case(x, GK_TYPE_TQ2_0, 256, 3, 2, false); }},
        {"mul_mat iq2_xxs weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ2_XXS, 256, 3, 2, true); }},
        {"mul_mat iq2_xs weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ2_XS, 256, 3, 2, false); }},
        {"mul_mat iq2_s weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ2_S, 256, 3, 2, false); }},
        {"mul_mat iq3_xxs weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ3_XXS, 256, 3, 2, false); }},
        {"mul_mat iq3_s weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ3_S, 256, 3, 2, false); }},
        {"mul_mat iq1_s weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ1_S, 256, 3, 2, false); }},
        {"mul_mat iq1_m weights", [](gk_context * x) { return weights_case(x, GK_TYPE_IQ1_M, 256, 3, 2, false); }},
        {"mul_mat of a permuted activation",
         [](gk_context * x) {
             return gk_mul_mat(x, in(x, GK_TYPE_F32, 32, 5, 3), gk_permute(x, in(x, GK_TYPE_F32, 32, 3, 4), 0, 2, 1, 3));
         }},
        {"mul_mat of permuted weights and activations (attention's k q)",
         [](gk_context * x) {
             return gk_mul_mat(x, gk_permute(x, in(x, GK_TYPE_F32, 16, 4, 8), 0, 2, 1, 3),
                               gk_permute(x, in(x, GK_TYPE_F32, 16, 4, 8), 0, 2, 1, 3));
         }},
        {"cont of a permutation (f32)",
         [](gk_context * x) { return gk_cont(x, gk_permute(x, in(x, GK_TYPE_F32, 5, 6, 7), 1, 2, 0, 3)); }},
        {"cpy f32 -> f16, odd row length",
         [](gk_context * x) { return gk_cpy(x, in(x, GK_TYPE_F32, 37, 5), gk_new_tensor_2d(x, GK_TYPE_F16, 37, 5)); }},
        {"cpy f16 -> f32 into another shape",
         [](gk_context * x) {
             return gk_cpy(x, in(x, GK_TYPE_F16, 12, 10), gk_new_tensor_3d(x, GK_TYPE_F32, 8, 5, 3));
         }},
        {"cont f16 of a transposed view",
         [](gk_context * x) { return gk_cont(x, gk_transpose(x, in(x, GK_TYPE_F16, 9, 11))); }},
        {"rms_norm", [](gk_context * x) { return gk_rms_norm(x, in(x, GK_TYPE_F32, 96, 7, 2), 1e-5f); }},
        {"norm", [](gk_context * x) { return gk_norm(x, in(x, GK_TYPE_F32, 50, 6), 1e-6f); }},
        {"swiglu, fused", [](gk_context * x) { return gk_swiglu(x, gk_scale(x, in(x, GK_TYPE_F32, 40, 6), 30.0f)); }},
        {"swiglu, fused and swapped",
         [](gk_context * x) { return gk_glu(x, in(x, GK_TYPE_F32, 40, 6), GK_GLU_OP_SWIGLU, true); }},
        {"swiglu, split",
         [](gk_context * x) { return gk_swiglu_split(x, in(x, GK_TYPE_F32, 33, 5), in(x, GK_TYPE_F32, 33, 5)); }},
        {"geglu, fused, past +-10",
         [](gk_context * x) { return gk_geglu(x, gk_scale(x, in(x, GK_TYPE_F32, 64, 8), 14.0f)); }},
        {"geglu, split",
         [](gk_context * x) { return gk_geglu_split(x, in(x, GK_TYPE_F32, 33, 5), in(x, GK_TYPE_F32, 33, 5)); }},
        {"geglu_quick and reglu",
         [](gk_context * x) {
             return gk_add(x, gk_geglu_quick(x, gk_scale(x, in(x, GK_TYPE_F32, 32, 4), 8.0f)),
                           gk_glu(x, in(x, GK_TYPE_F32, 32, 4), GK_GLU_OP_REGLU, false));
         }},
        {"swiglu_oai, split, past the limit",
         [](gk_context * x) {
             return gk_swiglu_oai(x, gk_scale(x, in(x, GK_TYPE_F32, 40, 6), 12.0f),
                                  gk_scale(x, in(x, GK_TYPE_F32, 40, 6), 12.0f), 1.702f, 7.0f);
         }},
        {"swiglu_oai, fused",
         [](gk_context * x) {
             return gk_swiglu_oai(x, gk_scale(x, in(x, GK_TYPE_F32, 66, 5), 30.0f), nullptr, 1.702f, 7.0f);
         }},
        {"silu, past the exp's range",
         [](gk_context * x) { return gk_silu(x, gk_scale(x, in(x, GK_TYPE_F32, 99, 3), 120.0f)); }},
        {"gelu, past +-10", [](gk_context * x) { return gk_gelu(x, gk_scale(x, in(x, GK_TYPE_F32, 99, 3), 14.0f)); }},
        {"gelu_quick, relu, neg",
         [](gk_context * x) {
             gk_tensor * a = gk_scale(x, in(x, GK_TYPE_F32, 50, 3), 6.0f);
             return gk_add(x, gk_gelu_quick(x, a), gk_neg(x, gk_relu(x, a)));
         }},
        {"get_rows f32",
         [](gk_context * x) { return gk_get_rows(x, in(x, GK_TYPE_F32, 20, 7), idx(x, GK_TYPE_I32, 9)); }},
        {"get_rows f16, batched",
         [](gk_context * x) { return gk_get_rows(x, in(x, GK_TYPE_F16, 21, 7, 2), idx(x, GK_TYPE_I32, 4, 2)); }},
        {"get_rows q8_0",
         [](gk_context * x) { return gk_get_rows(x, in(x, GK_TYPE_Q8_0, 96, 7), idx(x, GK_TYPE_I32, 6)); }},
        {"get_rows q4_0",
         [](gk_context * x) { return gk_get_rows(x, in(x, GK_TYPE_Q4_0, 64, 7), idx(x, GK_TYPE_I32, 6)); }},
        {"get_rows q4_1", [](gk_context * x) { return rows_of(x, GK_TYPE_Q4_1); }},
        {"get_rows q5_0", [](gk_context * x) { return rows_of(x, GK_TYPE_Q5_0); }},
        {"get_rows q5_1", [](gk_context * x) { return rows_of(x, GK_TYPE_Q5_1); }},
        {"get_rows q8_1", [](gk_context * x) { return rows_of(x, GK_TYPE_Q8_1); }},
        {"get_rows iq4_nl", [](gk_context * x) { return rows_of(x, GK_TYPE_IQ4_NL); }},
        {"get_rows mxfp4", [](gk_context * x) { return rows_of(x, GK_TYPE_MXFP4); }},
        {"get_rows nvfp4", [](gk_context * x) { return rows_of(x, GK_TYPE_NVFP4); }},
        {"get_rows q1_0", [](gk_context * x) { return rows_of(x, GK_TYPE_Q1_0); }},
        {"get_rows q2_0", [](gk_context * x) { return rows_of(x, GK_TYPE_Q2_0); }},
        {"get_rows q2_k", [](gk_context * x) { return rows_of(x, GK_TYPE_Q2_K); }},
        {"get_rows q3_k", [](gk_context * x) { return rows_of(x, GK_TYPE_Q3_K); }},
        {"get_rows q4_k", [](gk_context * x) { return rows_of(x, GK_TYPE_Q4_K); }},
        {"get_rows q5_k", [](gk_context * x) { return rows_of(x, GK_TYPE_Q5_K); }},
        {"get_rows q6_k", [](gk_context * x) { return rows_of(x, GK_TYPE_Q6_K); }},
        {"get_rows iq4_xs", [](gk_context * x) { return rows_of(x, GK_TYPE_IQ4_XS); }},
        {"get_rows tq1_0", [](gk_context * x) { return rows_of(x, GK_TYPE_TQ1_0); }},
        {"get_rows tq2_0", [](gk_context * x) { return rows_of(x, GK_TYPE_TQ2_0); }},
        {"set_rows f32 -> f16 (the KV cache's write), repeated indices",
         [](gk_context * x) {
             return gk_set_rows(x, in(x, GK_TYPE_F16, 37, 8), in(x, GK_TYPE_F32, 37, 9), idx(x, GK_TYPE_I64, 9));
         }},
        {"set_rows f32 -> f32, i32 indices broadcast",
         [](gk_context * x) {
             return gk_set_rows(x, in(x, GK_TYPE_F32, 10, 7, 4), in(x, GK_TYPE_F32, 10, 3, 4), idx(x, GK_TYPE_I32, 3, 2));
         }},
        {"soft_max", [](gk_context * x) { return gk_soft_max(x, gk_scale(x, in(x, GK_TYPE_F32, 67, 5), 40.0f)); }},
        {"soft_max_ext, f16 mask broadcast, scale",
         [](gk_context * x) {
             return gk_soft_max_ext(x, in(x, GK_TYPE_F32, 30, 4, 6), in(x, GK_TYPE_F16, 30, 5, 2), 0.125f, 0.0f);
         }},
        {"soft_max_ext, f32 mask, ALiBi",
         [](gk_context * x) {
             return gk_soft_max_ext(x, in(x, GK_TYPE_F32, 30, 4, 6), in(x, GK_TYPE_F32, 30, 4), 0.5f, 8.0f);
         }},
        {"soft_max_ext, a causal mask (a row all -inf)",
         [](gk_context * x) {
             return gk_soft_max_ext(x, in(x, GK_TYPE_F32, 8, 8), causal(x, GK_TYPE_F32, 8, 8), 1.0f, 0.0f);
         }},
        {"flash_attn_ext f16 K/V, f16 mask, grouped heads",
         [](gk_context * x) { return flash_case(x, GK_TYPE_F16, GK_TYPE_F16, 0.0f, false); }},
        {"flash_attn_ext f32 K/V, no mask",
         [](gk_context * x) {
             return gk_flash_attn_ext(x, in(x, GK_TYPE_F32, 40, 3, 2), in(x, GK_TYPE_F32, 40, 9, 2),
                                      in(x, GK_TYPE_F32, 24, 9, 2), nullptr, 0.3f, 0.0f, 0.0f);
         }},
        {"flash_attn_ext f32 K, f16 V, f32 mask, ALiBi",
         [](gk_context * x) { return flash_case(x, GK_TYPE_F32, GK_TYPE_F32, 8.0f, false); }},
        {"flash_attn_ext with sinks",
         [](gk_context * x) { return flash_case(x, GK_TYPE_F16, GK_TYPE_F16, 0.0f, true); }},
        {"flash_attn_ext, causal f16 mask (a row all -inf), ALiBi",
         [](gk_context * x) {
             return gk_flash_attn_ext(x, in(x, GK_TYPE_F32, 32, 12, 2), in(x, GK_TYPE_F16, 32, 16, 1),
                                      in(x, GK_TYPE_F16, 32, 16, 1), causal(x, GK_TYPE_F16, 16, 12), 1.0f, 2.0f, 0.0f);
         }},
        {"soft_max_ext with sinks, f32 mask broadcast",
         [](gk_context * x) {
             gk_tensor * y = gk_soft_max_ext(x, in(x, GK_TYPE_F32, 30, 4, 6), in(x, GK_TYPE_F32, 30, 4), 0.7f, 0.0f);
             return gk_soft_max_add_sinks(y, gk_scale(x, in(x, GK_TYPE_F32, 6), 3.0f)) ? y : nullptr;
         }},
        {"rope normal", [](gk_context * x) { return rope_case(x, GK_ROPE_TYPE_NORMAL, false, 0.0f); }},
        {"rope neox, frequency factors", [](gk_context * x) { return rope_case(x, GK_ROPE_TYPE_NEOX, true, 0.0f); }},
        {"rope neox, YaRN", [](gk_context * x) { return rope_case(x, GK_ROPE_TYPE_NEOX, false, 1.0f); }},
        // mul_mat_id: 7 experts (the ids are 0..6), dst[:, u, t] = expert ids[u, t] times b row (u % b.ne1, t).
        {"mul_mat_id f32, 4 experts a token over 2 rows",
         [](gk_context * x) {
             return gk_mul_mat_id(x, in(x, GK_TYPE_F32, 40, 6, 7), in(x, GK_TYPE_F32, 40, 2, 3),
                                  idx(x, GK_TYPE_I32, 4, 3));
         }},
        {"mul_mat_id f16",
         [](gk_context * x) {
             return gk_mul_mat_id(x, in(x, GK_TYPE_F16, 70, 5, 7), in(x, GK_TYPE_F32, 70, 1, 4),
                                  idx(x, GK_TYPE_I32, 3, 4));
         }},
        {"mul_mat_id q8_0, a block with an infinity and one of zeros",
         [](gk_context * x) {
             return gk_mul_mat_id(x, in(x, GK_TYPE_Q8_0, 128, 5, 7),
                                  gk_reshape_3d(x, special_activations(x, 128, 4), 128, 2, 2),
                                  idx(x, GK_TYPE_I32, 2, 2));
         }},
        {"mul_mat_id q4_0",
         [](gk_context * x) {
             return gk_mul_mat_id(x, in(x, GK_TYPE_Q4_0, 64, 4, 7), in(x, GK_TYPE_F32, 64, 2, 3),
                                  idx(x, GK_TYPE_I32, 4, 3));
         }},
        {"mul_mat_id q4_K",
         [](gk_context * x) {
             return gk_mul_mat_id(x, in(x, GK_TYPE_Q4_K, 256, 4, 7), in(x, GK_TYPE_F32, 256, 1, 3),
                                  idx(x, GK_TYPE_I32, 2, 3));
         }},
        {"mul_mat_id q6_K",
         [](gk_context * x) {
             return gk_mul_mat_id(x, in(x, GK_TYPE_Q6_K, 256, 3, 7), in(x, GK_TYPE_F32, 256, 2, 2),
                                  idx(x, GK_TYPE_I32, 2, 2));
         }},
        {"l2_norm", [](gk_context * x) { return gk_l2_norm(x, in(x, GK_TYPE_F32, 45, 4, 2), 1e-6f); }},
        {"l2_norm of tiny rows (eps wins)",
         [](gk_context * x) { return gk_l2_norm(x, gk_scale(x, in(x, GK_TYPE_F32, 45, 3), 1e-8f), 1e-6f); }},
        {"pad, left and right in every dim",
         [](gk_context * x) { return gk_pad_ext(x, in(x, GK_TYPE_F32, 7, 3, 2, 2), 1, 2, 0, 3, 2, 0, 1, 1); }},
        {"pad circular of a transposed view",
         [](gk_context * x) { return gk_pad_ext_circular(x, gk_transpose(x, in(x, GK_TYPE_F32, 5, 6)), 3, 4, 2, 1, 0, 0, 0, 0); }},
        {"timestep_embedding, odd dim",
         [](gk_context * x) { return gk_timestep_embedding(x, in(x, GK_TYPE_F32, 6), 33, 10000); }},
        {"add f16 + f32 -> f16, b repeated",
         [](gk_context * x) { return gk_add(x, in(x, GK_TYPE_F16, 33, 4, 3), in(x, GK_TYPE_F32, 33, 1, 3)); }},
        {"div f32 / f16 of a transposed view",
         [](gk_context * x) { return gk_div(x, in(x, GK_TYPE_F32, 10, 6), gk_transpose(x, in(x, GK_TYPE_F16, 6, 10))); }},
        {"mul f16 * f16 -> f16",
         [](gk_context * x) { return gk_mul(x, in(x, GK_TYPE_F16, 17, 5), in(x, GK_TYPE_F16, 17, 5)); }},
        {"silu, gelu, neg of f16 (gelu past +-10: the table everywhere)",
         [](gk_context * x) {
             gk_tensor * a = gk_cpy(x, gk_scale(x, in(x, GK_TYPE_F32, 50, 3), 14.0f), gk_new_tensor_2d(x, GK_TYPE_F16, 50, 3));
             return gk_add(x, gk_add(x, gk_silu(x, a), gk_gelu(x, a)), gk_neg(x, gk_gelu_quick(x, a)));
         }},
        {"group_norm, a group short of slices",
         [](gk_context * x) { return gk_group_norm(x, in(x, GK_TYPE_F32, 9, 4, 7, 2), 3, 1e-6f); }, "CUDA"},
        {"im2col 2-D into f16, stride, padding, dilation",
         [](gk_context * x) {
             return gk_im2col(x, in(x, GK_TYPE_F32, 3, 2, 4), in(x, GK_TYPE_F32, 9, 8, 4, 2), 2, 1, 1, 2, 1, 2, true,
                              GK_TYPE_F16);
         },
         "CUDA"},
        {"im2col 1-D",
         [](gk_context * x) {
             return gk_im2col(x, in(x, GK_TYPE_F32, 5, 3), in(x, GK_TYPE_F32, 17, 3, 2), 2, 0, 2, 0, 1, 0, false,
                              GK_TYPE_F32);
         },
         "CUDA"},
        {"upscale nearest",
         [](gk_context * x) { return gk_upscale_ext(x, in(x, GK_TYPE_F32, 5, 4, 3), 11, 9, 6, 1, GK_SCALE_MODE_NEAREST); },
         "CUDA"},
        {"upscale bilinear",
         [](gk_context * x) { return gk_upscale_ext(x, in(x, GK_TYPE_F32, 5, 4, 3), 13, 7, 3, 1, GK_SCALE_MODE_BILINEAR); },
         "CUDA"},
        {"upscale bilinear, aligned corners",
         [](gk_context * x) {
             return gk_interpolate(x, in(x, GK_TYPE_F32, 5, 4, 2), 9, 10, 2, 1,
                                   uint32_t{GK_SCALE_MODE_BILINEAR} | uint32_t{GK_SCALE_FLAG_ALIGN_CORNERS});
         },
         "CUDA"},
    };
    return c;
}

TEST(Devices, EachDeviceIsListedWithItsFeatures) {
    NEED_DEVICES(devs);
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        EXPECT_NE(std::string(gk_backend_dev_description(dev)), "");
        EXPECT_NE(gk_backend_dev_features(dev)->name, nullptr) << "a device line without features";
        size_t free = 0, total = 0;
        gk_backend_dev_memory(dev, &free, &total);
        EXPECT_GT(total, 0u);
        EXPECT_FALSE(gk_backend_buft_is_host(gk_backend_dev_buffer_type(dev)));
    }
}

TEST(Devices, EveryOpGivesTheCpuBits) {
    NEED_DEVICES(devs);
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        backend_ptr device(gk_backend_dev_init(dev, nullptr)), cpu(gk_backend_cpu_init());
        ASSERT_TRUE(device && cpu) << gk_backend_last_error();
        for (const op_case & c : cases()) {
            if (c.only && std::string(gk_backend_dev_name(dev)).rfind(c.only, 0) != 0) continue;
            SCOPED_TRACE(c.name);
            const run_result want = run(c.build, {cpu.get()});
            const run_result got  = run(c.build, {device.get(), cpu.get()});
            ASSERT_FALSE(want.out.empty());
            EXPECT_TRUE(got.out_on_device) << "the device did not compute the op (its supports_op refused it)";
            EXPECT_TRUE(got.out == want.out) << "the device's result differs from the CPU's";
        }
    }
}

TEST(Devices, WhatItRefusesRunsOnTheCpuWithStaging) {
    NEED_DEVICES(devs);
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        backend_ptr device(gk_backend_dev_init(dev, nullptr)), cpu(gk_backend_cpu_init());
        ASSERT_TRUE(device && cpu) << gk_backend_last_error();
        // mul_mat (device) -> tanh (CPU: no device kernel; libm's tanhf) -> scale (device).
        const graph_fn build = [](gk_context * x) {
            gk_tensor * s = gk_tanh(x, gk_mul_mat(x, in(x, GK_TYPE_F32, 48, 16), in(x, GK_TYPE_F32, 48, 8)));
            gk_set_name(s, "tanh");
            return gk_scale(x, s, 3.0f);
        };
        const run_result want = run(build, {cpu.get()});
        const run_result got  = run(build, {device.get(), cpu.get()});
        EXPECT_TRUE(got.out == want.out);
        EXPECT_GE(got.n_splits, 2);
        EXPECT_EQ(std::count(got.on_device.begin(), got.on_device.end(), "tanh"), 0);
        gk_tensor probe{};
        probe.op = GK_OP_CONV_TRANSPOSE_1D;
        EXPECT_FALSE(gk_backend_dev_supports_op(dev, &probe));
    }
}

TEST(Devices, LongRowsGiveTheCpuBits) {
    // More loop iterations than lavapipe runs in one shader invocation (it stops after 65535
    // and leaves the rest undone): a softmax row of 30000 (3 passes), attention over 512
    // keys of 40 (3 scoring passes and the value sum; llama.cpp's test-backend-ops found
    // both), a quantized dot over 65536 (2048 blocks of 33 loop iterations). Such a device
    // refuses the node and the CPU computes it; a GPU computes it.
    NEED_DEVICES(devs);
    const std::vector<std::pair<const char *, graph_fn>> long_rows = {
        {"soft_max of 30000", [](gk_context * x) { return gk_soft_max(x, in(x, GK_TYPE_F32, 30000, 2)); }},
        {"flash_attn_ext over 512 keys",
         [](gk_context * x) {
             return gk_flash_attn_ext(x, in(x, GK_TYPE_F32, 40, 3, 2), in(x, GK_TYPE_F16, 40, 512, 2),
                                      in(x, GK_TYPE_F16, 40, 512, 2), nullptr, 0.3f, 0.0f, 0.0f);
         }},
        {"mul_mat q5_0 over K 65536", [](gk_context * x) { return weights_case(x, GK_TYPE_Q5_0, 65536, 2, 1, false); }},
    };
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        backend_ptr device(gk_backend_dev_init(dev, nullptr)), cpu(gk_backend_cpu_init());
        ASSERT_TRUE(device && cpu) << gk_backend_last_error();
        for (const auto & [name, build] : long_rows) {
            SCOPED_TRACE(name);
            const run_result want = run(build, {cpu.get()});
            const run_result got  = run(build, {device.get(), cpu.get()});
            EXPECT_TRUE(got.out == want.out) << (got.out_on_device ? "computed on the device" : "computed on the CPU");
        }
    }
}

TEST(Devices, AGraphTheDeviceCannotRunFailsWithAMessageAndTheCpuGoesOn) {
    NEED_DEVICES(devs);
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        backend_ptr device(gk_backend_dev_init(dev, nullptr)), cpu(gk_backend_cpu_init());
        ASSERT_TRUE(device && cpu) << gk_backend_last_error();
        // scale (the device's) then tanh (no device kernel), computed on the device
        // directly, without a scheduler to send tanh to the CPU: the launch is refused.
        ctx_ptr     ctx = make_ctx(8 * gk_tensor_overhead() + gk_graph_overhead(), true);
        gk_tensor * a   = gk_new_tensor_1d(ctx.get(), GK_TYPE_F32, 16);
        gk_tensor * y   = gk_tanh(ctx.get(), gk_scale(ctx.get(), a, 0.5f));
        gk_set_name(y, "y");
        gk_cgraph * g = gk_new_graph(ctx.get());
        ASSERT_EQ(gk_build_forward_expand(g, y), GK_STATUS_SUCCESS);
        gk_backend_buffer_t buf = gk_backend_alloc_ctx_tensors(ctx.get(), device.get());
        ASSERT_NE(buf, nullptr) << gk_backend_last_error();
        const std::vector<float> v = random_values(16, 3, 1.0f);
        gk_backend_tensor_set(a, v.data(), 0, gk_nbytes(a));
        EXPECT_EQ(gk_backend_graph_compute(device.get(), g), GK_STATUS_UNSUPPORTED);
        const std::string msg = gk_backend_last_error();
        EXPECT_NE(msg.find(gk_backend_dev_name(dev)), std::string::npos) << msg;
        EXPECT_NE(msg.find("'y'"), std::string::npos) << "the message names the node: " << msg;
        EXPECT_NE(msg.find("TANH"), std::string::npos) << "the message names the op: " << msg;
        gk_backend_buffer_free(buf);

        // In the same process the device still computes what it takes, and the CPU the
        // whole graph: the op-by-op run over [device, CPU] gives the CPU's bits.
        const graph_fn   build = [](gk_context * x) { return gk_tanh(x, gk_scale(x, in(x, GK_TYPE_F32, 16), 0.5f)); };
        const run_result want  = run(build, {cpu.get()});
        const run_result got   = run(build, {device.get(), cpu.get()});
        EXPECT_FALSE(want.out.empty());
        EXPECT_TRUE(got.out == want.out);
        EXPECT_FALSE(got.on_device.empty());
    }
}

TEST(Devices, AnExpertIdOutOfRangeFailsWithAMessage) {
    NEED_DEVICES(devs);
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        backend_ptr device(gk_backend_dev_init(dev, nullptr));
        ASSERT_TRUE(device) << gk_backend_last_error();
        for (gk_type wt : {GK_TYPE_F32, GK_TYPE_Q8_0}) {
            ctx_ptr     ctx = make_ctx(8 * gk_tensor_overhead() + gk_graph_overhead(), true);
            gk_tensor * as  = gk_new_tensor_3d(ctx.get(), wt, 32, 4, 3);
            gk_tensor * b   = gk_new_tensor_3d(ctx.get(), GK_TYPE_F32, 32, 1, 2);
            gk_tensor * ids = gk_new_tensor_2d(ctx.get(), GK_TYPE_I32, 2, 2);
            gk_tensor * y   = gk_mul_mat_id(ctx.get(), as, b, ids);
            gk_cgraph * g   = gk_new_graph(ctx.get());
            ASSERT_EQ(gk_build_forward_expand(g, y), GK_STATUS_SUCCESS);
            gk_backend_buffer_t buf = gk_backend_alloc_ctx_tensors(ctx.get(), device.get());
            ASSERT_NE(buf, nullptr) << gk_backend_last_error();
            std::vector<unsigned char> zeros(gk_nbytes(as), 0);
            const std::vector<float>   bv    = random_values(64, 5, 1.0f);
            const int32_t              iv[4] = {0, 2, 3, 1};  // 3: past the 3 experts
            gk_backend_tensor_set(as, zeros.data(), 0, zeros.size());
            gk_backend_tensor_set(b, bv.data(), 0, gk_nbytes(b));
            gk_backend_tensor_set(ids, iv, 0, sizeof iv);
            EXPECT_EQ(gk_backend_graph_compute(device.get(), g), GK_STATUS_OUT_OF_RANGE);
            const std::string msg = gk_backend_last_error();
            EXPECT_NE(msg.find("expert id"), std::string::npos) << msg;
            gk_backend_buffer_free(buf);
        }
    }
}

/// The seed's "aq claim" regression (its tests/test_cuda.c): a quantized mat-vec that
/// kept converted activations by address was handed a dead tensor's numbers when the
/// graph allocator put a later activation at that address. Three layers of q, k, v
/// projections (q8_0 and q4_K weights) of one normed activation, summed and normed
/// again, so that dead activations' storage is reused; run once as is and once with every
/// intermediate an output (pinned: nothing else may be placed on it), on the device, the
/// two must agree bit for bit (and with the CPU).
TEST(Devices, AqClaimAPinnedIntermediateChangesNoBit) {
    NEED_DEVICES(devs);
    const auto build = [](bool pin) {
        return [pin](gk_context * x) {
            gk_tensor * h = in(x, GK_TYPE_F32, 256, 3);
            for (int layer = 0; layer < 3; ++layer) {
                gk_tensor * n = gk_rms_norm(x, h, 1e-5f);
                gk_tensor * q = gk_mul_mat(x, in(x, GK_TYPE_Q8_0, 256, 256), n);
                gk_tensor * k = gk_mul_mat(x, in(x, GK_TYPE_Q4_K, 256, 256), n);
                gk_tensor * v = gk_mul_mat(x, in(x, GK_TYPE_Q8_0, 256, 256), n);
                h             = gk_add(x, gk_add(x, q, k), v);
                for (gk_tensor * t : {n, q, k, v, h}) {
                    if (pin) gk_set_output(t);
                }
            }
            return h;
        };
    };
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        backend_ptr device(gk_backend_dev_init(dev, nullptr)), cpu(gk_backend_cpu_init());
        ASSERT_TRUE(device && cpu) << gk_backend_last_error();
        const run_result want   = run(build(false), {cpu.get()});
        const run_result reused = run(build(false), {device.get(), cpu.get()});
        const run_result pinned = run(build(true), {device.get(), cpu.get()});
        ASSERT_FALSE(want.out.empty());
        EXPECT_TRUE(reused.out_on_device && pinned.out_on_device);
        EXPECT_TRUE(reused.out == pinned.out) << "the graph with reused storage differs from the pinned one";
        EXPECT_TRUE(pinned.out == want.out) << "the device's result differs from the CPU's";
    }
}

TEST(Devices, ATransformerOverTheDeviceAndCpuGivesTheCpuBits) {
    NEED_DEVICES(devs);
    for (gk_backend_dev_t dev : devs) {
        SCOPED_TRACE(gk_backend_dev_name(dev));
        backend_ptr device(gk_backend_dev_init(dev, nullptr)), cpu(gk_backend_cpu_init());
        ASSERT_TRUE(device && cpu) << gk_backend_last_error();
        transformer_dims d;
        d.n_layer = 2;
        // Weights in the device's memory: the matmuls are pinned there, and the rest follows them.
        std::vector<unsigned char> out[2];
        for (int side = 0; side < 2; ++side) {
            transformer_weights w(d, side == 0 ? gk_backend_cpu_buffer_type() : gk_backend_dev_buffer_type(dev));
            ctx_ptr             ctx = make_ctx(8192 * gk_tensor_overhead() + gk_graph_overhead_custom(4096, false), true);
            transformer_graph   g   = build_transformer(ctx.get(), w, d);
            std::vector<gk_backend_t> backends = side == 0 ? std::vector<gk_backend_t>{cpu.get()}
                                                           : std::vector<gk_backend_t>{device.get(), cpu.get()};
            sched_ptr sched(gk_sched_new(backends.data(), static_cast<int>(backends.size())));
            ASSERT_EQ(gk_sched_alloc_graph(sched.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
            set_transformer_inputs(g, 7);
            ASSERT_EQ(gk_sched_graph_compute(sched.get(), g.graph), GK_STATUS_SUCCESS) << gk_backend_last_error();
            out[side] = bytes_of(g.out);
            if (side == 1) {  // every op of it is the device's: one split
                EXPECT_EQ(gk_sched_get_n_splits(sched.get()), 1);
            }
        }
        EXPECT_TRUE(out[0] == out[1]) << "the transformer's output over the device and the CPU differs from the CPU's";
    }
}

} // namespace
