// test-ops-elementwise - binary arithmetic with broadcast, the math functions, every
// activation, leaky_relu, the GLUs, scale and clamp against double-precision references.
#include "op_check.h"

#include "quant/fp16.h"

#include <functional>

namespace {

using namespace gk_test;

constexpr double k_rtol = 2e-6;  // a few f32 roundings of a transcendental

TEST(OpsElementwise, BinaryBroadcast) {
    struct bin {
        gk_tensor * (*build)(gk_context *, gk_tensor *, gk_tensor *);
        std::function<double(double, double)> ref;
        const char * name;
    };
    const bin ops[] = {
        {gk_add, [](double x, double y) { return x + y; }, "add"},
        {gk_sub, [](double x, double y) { return x - y; }, "sub"},
        {gk_mul, [](double x, double y) { return x * y; }, "mul"},
        {gk_div, [](double x, double y) { return x / y; }, "div"},
    };
    for (const bin & op : ops) {
        env         e;
        gk_tensor * a = e.f32(7, 5, 3, 2);
        gk_tensor * b = e.positive(7, 1, 3);  // broadcast over dims 1 and 3
        gk_tensor * y = op.build(e.ctx, a, b);
        ASSERT_TRUE(compute(e.ctx, y));
        const auto          va = values(a), vb = values(b);
        std::vector<double> ref;
        for (int64_t i3 = 0; i3 < 2; ++i3) {
            for (int64_t i2 = 0; i2 < 3; ++i2) {
                for (int64_t i1 = 0; i1 < 5; ++i1) {
                    for (int64_t i0 = 0; i0 < 7; ++i0) {
                        ref.push_back(op.ref(va[flat(a->ne, i0, i1, i2, i3)], vb[flat(b->ne, i0, 0, i2, 0)]));
                    }
                }
            }
        }
        expect_close(y, ref, 0, k_rtol, op.name);
    }
}

TEST(OpsElementwise, BinaryF16WithScalarBroadcastInPlace) {
    env         e;
    gk_tensor * a  = e.rand(GK_TYPE_F16, 9, 4);
    gk_tensor * b  = e.f32(1, 1);
    const auto  va = values(a), vb = values(b);
    gk_tensor * y  = gk_mul_inplace(e.ctx, a, b);
    ASSERT_TRUE(compute(e.ctx, y));
    std::vector<double> ref;
    for (double x : va) {
        ref.push_back(x * vb[0]);
    }
    expect_close(y, ref, 0, 1e-3, "mul_inplace f16");  // the result is rounded to f16
    EXPECT_EQ(y->data, a->data);
}

struct unary_ref {
    gk_unary_op            op;
    double (*f)(double);
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// GELU and GELU_QUICK go through ggml's f16 tables (test-ops-gelu checks their bits):
// the references are taken at the f16-rounded input, and the result is f16-rounded.
bool   f16_table(gk_unary_op op) { return op == GK_UNARY_OP_GELU || op == GK_UNARY_OP_GELU_QUICK; }
double round_f16(double x) { return gk::fp16_to_fp32(gk::fp32_to_fp16(static_cast<float>(x))); }
constexpr double k_rtol_f16 = 5e-4;  // half an f16 step (2^-11) and the f32 formula's error

const unary_ref k_unary[] = {
    {GK_UNARY_OP_ABS, [](double x) { return std::fabs(x); }},
    {GK_UNARY_OP_SGN, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }},
    {GK_UNARY_OP_NEG, [](double x) { return -x; }},
    {GK_UNARY_OP_STEP, [](double x) { return x > 0 ? 1.0 : 0.0; }},
    {GK_UNARY_OP_TANH, [](double x) { return std::tanh(x); }},
    {GK_UNARY_OP_ELU, [](double x) { return x > 0 ? x : std::expm1(x); }},
    {GK_UNARY_OP_RELU, [](double x) { return x > 0 ? x : 0.0; }},
    {GK_UNARY_OP_SIGMOID, sigmoid},
    {GK_UNARY_OP_GELU,
     [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x))); }},
    {GK_UNARY_OP_GELU_QUICK, [](double x) { return x * sigmoid(1.702 * x); }},
    {GK_UNARY_OP_SILU, [](double x) { return x * sigmoid(x); }},
    {GK_UNARY_OP_HARDSWISH, [](double x) { return x * std::fmin(1.0, std::fmax(0.0, (x + 3) / 6)); }},
    {GK_UNARY_OP_HARDSIGMOID, [](double x) { return std::fmin(1.0, std::fmax(0.0, (x + 3) / 6)); }},
    {GK_UNARY_OP_EXP, [](double x) { return std::exp(x); }},
    {GK_UNARY_OP_EXPM1, [](double x) { return std::expm1(x); }},
    {GK_UNARY_OP_SOFTPLUS, [](double x) { return std::log1p(std::exp(x)); }},
    {GK_UNARY_OP_GELU_ERF, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
    {GK_UNARY_OP_FLOOR, [](double x) { return std::floor(x); }},
    {GK_UNARY_OP_CEIL, [](double x) { return std::ceil(x); }},
    {GK_UNARY_OP_ROUND, [](double x) { return std::round(x); }},
    {GK_UNARY_OP_TRUNC, [](double x) { return std::trunc(x); }},
};

TEST(OpsElementwise, EveryActivation) {
    for (const unary_ref & u : k_unary) {
        env         e;
        gk_tensor * a = e.rand(GK_TYPE_F32, 50, 6, 1, 1, -6.0f, 6.0f);
        gk_tensor * y = gk_unary(e.ctx, a, u.op);
        ASSERT_TRUE(compute(e.ctx, y)) << gk_unary_op_name(u.op);
        const bool          tab = f16_table(u.op);
        std::vector<double> ref;
        for (double x : values(a)) {
            ref.push_back(u.f(tab ? round_f16(x) : x));
        }
        expect_close(y, ref, 1e-7, tab ? k_rtol_f16 : 4 * k_rtol, gk_unary_op_name(u.op));
    }
}

TEST(OpsElementwise, MathAndLeakyRelu) {
    struct math {
        gk_tensor * (*build)(gk_context *, gk_tensor *);
        double (*f)(double);
        const char * name;
    };
    const math ops[] = {
        {gk_sqr, [](double x) { return x * x; }, "sqr"},
        {gk_sqrt, [](double x) { return std::sqrt(x); }, "sqrt"},
        {gk_log, [](double x) { return std::log(x); }, "log"},
        {gk_sin, [](double x) { return std::sin(x); }, "sin"},
        {gk_cos, [](double x) { return std::cos(x); }, "cos"},
    };
    for (const math & m : ops) {
        env         e;
        gk_tensor * a = e.positive(40, 3);
        gk_tensor * y = m.build(e.ctx, a);
        ASSERT_TRUE(compute(e.ctx, y));
        std::vector<double> ref;
        for (double x : values(a)) {
            ref.push_back(m.f(x));
        }
        expect_close(y, ref, 1e-7, k_rtol, m.name);
    }
    env         e;
    gk_tensor * a = e.f32(40, 3);
    gk_tensor * y = gk_leaky_relu(e.ctx, a, 0.07f, false);
    ASSERT_TRUE(compute(e.ctx, y));
    std::vector<double> ref;
    for (double x : values(a)) {
        ref.push_back(x > 0 ? x : static_cast<double>(0.07f) * x);
    }
    expect_close(y, ref, 0, k_rtol, "leaky_relu");
}

TEST(OpsElementwise, GatedLinearUnits) {
    const struct {
        gk_glu_op op;
        double (*act)(double);
        bool tab;  // the activation goes through an f16 table
    } glus[] = {
        {GK_GLU_OP_REGLU, k_unary[6].f, false},     {GK_GLU_OP_GEGLU, k_unary[8].f, true},
        {GK_GLU_OP_SWIGLU, k_unary[10].f, false},   {GK_GLU_OP_GEGLU_ERF, k_unary[16].f, false},
        {GK_GLU_OP_GEGLU_QUICK, k_unary[9].f, true},
    };
    for (const auto & g : glus) {
        for (int variant = 0; variant < 3; ++variant) {  // fused, fused swapped, split
            env         e;
            const int   n = 13;
            gk_tensor * a = e.rand(GK_TYPE_F32, variant == 2 ? n : 2 * n, 5, 1, 1, -3, 3);
            gk_tensor * b = variant == 2 ? e.f32(n, 5) : nullptr;
            gk_tensor * y = variant == 2 ? gk_glu_split(e.ctx, a, b, g.op) : gk_glu(e.ctx, a, g.op, variant == 1);
            ASSERT_TRUE(compute(e.ctx, y)) << gk_glu_op_name(g.op);
            const auto          va = values(a);
            const auto          vb = b ? values(b) : std::vector<double>{};
            std::vector<double> ref;
            for (int64_t r = 0; r < 5; ++r) {
                for (int64_t i = 0; i < n; ++i) {
                    double x, gate;
                    if (variant == 2) {
                        x    = va[static_cast<size_t>(r * n + i)];
                        gate = vb[static_cast<size_t>(r * n + i)];
                    } else {
                        const double lo = va[static_cast<size_t>(r * 2 * n + i)];
                        const double hi = va[static_cast<size_t>(r * 2 * n + n + i)];
                        x               = variant == 1 ? hi : lo;
                        gate            = variant == 1 ? lo : hi;
                    }
                    ref.push_back(g.act(g.tab ? round_f16(x) : x) * gate);
                }
            }
            expect_close(y, ref, 1e-7, g.tab ? k_rtol_f16 : 4 * k_rtol, gk_glu_op_name(g.op));
        }
    }
}

TEST(OpsElementwise, SwigluOai) {
    env         e;
    gk_tensor * a = e.rand(GK_TYPE_F32, 2 * 11, 4, 1, 1, -2, 2);
    gk_tensor * y = gk_swiglu_oai(e.ctx, a, nullptr, 1.702f, 0.9f);
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          va = values(a);
    const double        limit = 0.9f, alpha = 1.702f;
    std::vector<double> ref;
    for (size_t r = 0; r < 4; ++r) {
        for (size_t i = 0; i < 11; ++i) {
            const double x = std::fmin(va[r * 22 + i], limit);
            const double g = std::fmax(-limit, std::fmin(va[r * 22 + 11 + i], limit));
            ref.push_back(x * sigmoid(alpha * x) * (g + 1));
        }
    }
    expect_close(y, ref, 1e-7, 4 * k_rtol, "swiglu_oai");
}

TEST(OpsElementwise, ScaleBiasAndClamp) {
    env         e;
    gk_tensor * a  = e.f32(31, 4);
    gk_tensor * s  = gk_scale_bias(e.ctx, a, 0.3f, -0.2f);
    gk_tensor * c  = gk_clamp(e.ctx, a, -0.25f, 0.5f);
    const auto  va = values(a);
    ASSERT_TRUE(compute(e.ctx, s));
    ASSERT_TRUE(compute(e.ctx, c));
    std::vector<double> rs, rc;
    for (double x : va) {
        rs.push_back(x * static_cast<double>(0.3f) - static_cast<double>(0.2f));
        rc.push_back(std::fmin(std::fmax(x, -0.25), 0.5));
    }
    expect_close(s, rs, 1e-7, k_rtol, "scale_bias");
    expect_close(c, rc, 0, 0, "clamp");
}

} // namespace
