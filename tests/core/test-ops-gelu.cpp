// test-ops-gelu - GELU, GELU_QUICK, GEGLU and GEGLU_QUICK give ggml's CPU bits (see
// src/gk/cpu/ops/activations.h): every f16 input exhaustively, at f16 and at f32, random
// f32 values over the whole range and around the +-10 bounds, bf16 rows, and the GLUs'
// gate. The expected bits come from the formulas written out here, evaluated element by
// element (not through a table), and each tabulated value is checked against a
// double-precision GELU, so a wrong constant in both would not go unnoticed.
#include "op_check.h"

#include "quant/fp16.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using namespace gk_test;

float gelu_formula(float x) {  // ggml's f32 formula, 1 + 0.044715 x^2 as one fma
    const float inner = std::fmaf(0.044715f * x, x, 1.0f);
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * x * inner));
}
float gelu_quick_formula(float x) { return x * (1.0f / (1.0f + expf(-1.702f * x))); }

float round_f16(float x) { return gk::fp16_to_fp32(gk::fp32_to_fp16(x)); }

// The f16-table value: the formula at f16(x), rounded to f16.
float tabulated(float (*f)(float), float x) { return round_f16(f(round_f16(x))); }

// ggml's f32 GELU rule.
float gelu_f32_rule(float x) {
    if (x <= -10.0f) {
        return 0.0f;
    }
    return x >= 10.0f ? x : tabulated(gelu_formula, x);
}

// Equal bits, or both NaN.
bool same(float got, float want) {
    return std::isnan(want) ? std::isnan(got) : std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want);
}

gk_tensor * f32_tensor(env & e, const std::vector<float> & v) {
    gk_tensor * t = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, static_cast<int64_t>(v.size()));
    std::memcpy(t->data, v.data(), v.size() * sizeof(float));
    return t;
}

gk_tensor * bits16_tensor(env & e, gk_type type, const std::vector<uint16_t> & v) {
    gk_tensor * t = gk_new_tensor_1d(e.ctx, type, static_cast<int64_t>(v.size()));
    std::memcpy(t->data, v.data(), v.size() * sizeof(uint16_t));
    return t;
}

std::vector<uint16_t> all_bits16() {
    std::vector<uint16_t> v(1u << 16);
    for (size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<uint16_t>(i);
    }
    return v;
}

float at_f32(const gk_tensor * t, size_t i) { return static_cast<const float *>(t->data)[i]; }
uint16_t at_bits16(const gk_tensor * t, size_t i) { return static_cast<const uint16_t *>(t->data)[i]; }

// Random f32 values: uniform in [-12, 12], near +-10, and random bit patterns (every
// exponent, infinities and NaNs among them), plus the edge values.
std::vector<float> random_f32(env & e) {
    std::vector<float> v = {0.0f, -0.0f, 10.0f, -10.0f, std::nextafter(10.0f, 0.0f), std::nextafter(-10.0f, 0.0f),
                            INFINITY, -INFINITY, NAN, -NAN, 65504.0f, 65520.0f, -65520.0f, 1e-30f, -1e-30f,
                            std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
    for (int i = 0; i < 20000; ++i) {
        v.push_back(-12.0f + 24.0f * e.uniform());
        v.push_back((e.uniform() < 0.5f ? -10.0f : 10.0f) + (e.uniform() - 0.5f) * 1e-3f);
        const uint32_t hi = static_cast<uint32_t>(e.uniform() * 65536.0f), lo = static_cast<uint32_t>(e.uniform() * 65536.0f);
        v.push_back(std::bit_cast<float>(hi << 16 | lo));
    }
    return v;
}

TEST(OpsGelu, TablesAgreeWithDoublePrecision) {
    // Every finite tabulated value is within one f16 step (plus the f32 formula's
    // cancellation error near 0 for negative x) of the exact function at the same input.
    struct fn {
        float (*f)(float);
        double (*exact)(double);
    };
    const fn fns[] = {
        {gelu_formula, [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x))); }},
        {gelu_quick_formula, [](double x) { return x / (1 + std::exp(-1.702 * x)); }},
    };
    for (const fn & f : fns) {
        int bad = 0;
        for (uint32_t h = 0; h < (1u << 16); ++h) {
            const float x = gk::fp16_to_fp32(static_cast<uint16_t>(h));
            const float t = tabulated(f.f, x);
            if (!std::isfinite(x) || !std::isfinite(t)) {
                continue;
            }
            const double d    = f.exact(x);
            const double step = std::ldexp(1.0, std::max(std::ilogb(std::fabs(d) + 1e-300), -14) - 10);
            if (std::fabs(t - d) > step + 1e-7 * std::fabs(x) && bad++ < 5) {
                ADD_FAILURE() << "x = " << x << ": table " << t << ", exact " << d;
            }
        }
    }
}

TEST(OpsGelu, EveryF16InputAtF16) {
    const std::vector<uint16_t> in = all_bits16();
    const struct {
        gk_unary_op op;
        float (*f)(float);
    } ops[] = {{GK_UNARY_OP_GELU, gelu_formula}, {GK_UNARY_OP_GELU_QUICK, gelu_quick_formula}};
    for (const auto & o : ops) {
        env         e;
        gk_tensor * y = gk_unary(e.ctx, bits16_tensor(e, GK_TYPE_F16, in), o.op);
        ASSERT_TRUE(compute(e.ctx, y));
        int bad = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            const float want = tabulated(o.f, gk::fp16_to_fp32(in[i]));
            const float got  = gk::fp16_to_fp32(at_bits16(y, i));
            if (!same(got, want) && bad++ < 5) {
                ADD_FAILURE() << gk_unary_op_name(o.op) << " f16 input " << std::hex << in[i] << ": " << at_bits16(y, i)
                              << ", expected " << gk::fp32_to_fp16(want);
            }
        }
        EXPECT_EQ(bad, 0) << gk_unary_op_name(o.op);
    }
}

TEST(OpsGelu, EveryF16InputAndRandomValuesAtF32) {
    env                e;
    std::vector<float> in = random_f32(e);
    for (uint32_t h = 0; h < (1u << 16); ++h) {
        in.push_back(gk::fp16_to_fp32(static_cast<uint16_t>(h)));
    }
    gk_tensor * x  = f32_tensor(e, in);
    gk_tensor * yg = gk_gelu(e.ctx, x);
    gk_tensor * yq = gk_gelu_quick(e.ctx, x);
    ASSERT_TRUE(compute(e.ctx, yg));
    ASSERT_TRUE(compute(e.ctx, yq));
    int bad = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const float wg = gelu_f32_rule(in[i]), wq = tabulated(gelu_quick_formula, in[i]);
        if (!same(at_f32(yg, i), wg) && bad++ < 5) {
            ADD_FAILURE() << "gelu(" << in[i] << ") = " << at_f32(yg, i) << ", expected " << wg;
        }
        if (!same(at_f32(yq, i), wq) && bad++ < 5) {
            ADD_FAILURE() << "gelu_quick(" << in[i] << ") = " << at_f32(yq, i) << ", expected " << wq;
        }
    }
    EXPECT_EQ(bad, 0);
    // the bounds: -10 and below give +0 (the table would give -0), 10 and above give x
    EXPECT_TRUE(same(gelu_f32_rule(-10.0f), 0.0f));
    EXPECT_TRUE(same(tabulated(gelu_formula, -10.0f), -0.0f));
}

TEST(OpsGelu, Bf16RowsUseTheFormula) {
    env                   e;
    std::vector<uint16_t> in;
    for (int i = 0; i < 4000; ++i) {
        in.push_back(gk::fp32_to_bf16(-12.0f + 24.0f * e.uniform()));
    }
    gk_tensor * x  = bits16_tensor(e, GK_TYPE_BF16, in);
    gk_tensor * yg = gk_gelu(e.ctx, x);
    gk_tensor * yq = gk_gelu_quick(e.ctx, x);
    ASSERT_TRUE(compute(e.ctx, yg));
    ASSERT_TRUE(compute(e.ctx, yq));
    for (size_t i = 0; i < in.size(); ++i) {
        const float v = gk::bf16_to_fp32(in[i]);
        ASSERT_EQ(at_bits16(yg, i), gk::fp32_to_bf16(gelu_formula(v))) << v;
        ASSERT_EQ(at_bits16(yq, i), gk::fp32_to_bf16(gelu_quick_formula(v))) << v;
    }
}

TEST(OpsGelu, GegluAtEachType) {
    env                e;
    std::vector<float> xs = random_f32(e), gs;
    for (size_t i = 0; i < xs.size(); ++i) {  // gates of both signs, some infinite
        gs.push_back(i % 97 == 0 ? (i % 2 ? INFINITY : -INFINITY) : -3.0f + 6.0f * e.uniform());
    }
    for (gk_glu_op op : {GK_GLU_OP_GEGLU, GK_GLU_OP_GEGLU_QUICK}) {
        float (*f)(float) = op == GK_GLU_OP_GEGLU ? gelu_formula : gelu_quick_formula;
        // f32: ggml's rule (GEGLU: +0 at x <= -10 whatever the gate, x * g at x >= 10)
        gk_tensor * y = gk_glu_split(e.ctx, f32_tensor(e, xs), f32_tensor(e, gs), op);
        ASSERT_TRUE(compute(e.ctx, y));
        for (size_t i = 0; i < xs.size(); ++i) {
            const float want = op == GK_GLU_OP_GEGLU_QUICK ? tabulated(f, xs[i]) * gs[i]
                               : xs[i] <= -10.0f           ? 0.0f
                                                           : gelu_f32_rule(xs[i]) * gs[i];
            ASSERT_TRUE(same(at_f32(y, i), want)) << gk_glu_op_name(op) << "(" << xs[i] << ", " << gs[i] << ") = "
                                                  << at_f32(y, i) << ", expected " << want;
        }
        // f16 and bf16 rows: the table with no bounds (f16) or the formula (bf16), times g,
        // rounded to the row type
        for (gk_type type : {GK_TYPE_F16, GK_TYPE_BF16}) {
            std::vector<uint16_t> x16, g16;
            for (size_t i = 0; i < xs.size(); ++i) {
                x16.push_back(type == GK_TYPE_F16 ? gk::fp32_to_fp16(xs[i]) : gk::fp32_to_bf16(xs[i]));
                g16.push_back(type == GK_TYPE_F16 ? gk::fp32_to_fp16(gs[i]) : gk::fp32_to_bf16(gs[i]));
            }
            gk_tensor * yt = gk_glu_split(e.ctx, bits16_tensor(e, type, x16), bits16_tensor(e, type, g16), op);
            ASSERT_TRUE(compute(e.ctx, yt));
            for (size_t i = 0; i < xs.size(); ++i) {
                const bool  h    = type == GK_TYPE_F16;
                const float xv   = h ? gk::fp16_to_fp32(x16[i]) : gk::bf16_to_fp32(x16[i]);
                const float gv   = h ? gk::fp16_to_fp32(g16[i]) : gk::bf16_to_fp32(g16[i]);
                const float prod = (h ? tabulated(f, xv) : f(xv)) * gv;
                const float want = h ? gk::fp16_to_fp32(gk::fp32_to_fp16(prod)) : gk::bf16_to_fp32(gk::fp32_to_bf16(prod));
                const float got  = h ? gk::fp16_to_fp32(at_bits16(yt, i)) : gk::bf16_to_fp32(at_bits16(yt, i));
                ASSERT_TRUE(same(got, want)) << gk_glu_op_name(op) << " " << gk_type_name(type) << "(" << xv << ", "
                                             << gv << ") = " << got << ", expected " << want;
            }
        }
    }
}

} // namespace
