// test-backward - automatic differentiation (gk_build_backward_expand): the gradient of
// every op with a gradient rule against central finite differences of the forward op in
// double, a small MLP trained with opt_step_adamw (falling loss, the same bits at 1 and 2
// threads), gk_graph_reset, and the refusals.
//
// Each check builds out = op(params...), the loss L = sum(out * dy) for a fixed random dy,
// differentiates the graph and compares d L / d param with (L(p + h e_j) - L(p - h e_j)) / 2h,
// L evaluated in double from a reference of the op, h = 1e-3. The difference is within
// h^2 |L'''| ~ 1e-6 of the derivative for the smooth ops here (values of order 1); the
// gradient nodes compute in f32 a few roundings deep (~1e-6 relative). The tolerance,
// 2e-5 + 2e-4 |ref|, is above both and far below what a wrong rule gives (order-1 errors).
// The gradient graph is also computed at 1 and 3 threads: the same bits.
#include "gk/gk-backend.h"
#include "op_check.h"

#include <functional>

namespace {

using namespace gk_test;

using values_t = std::vector<double>;
/// The forward op in double: the values of the params (values() order) -> out's values.
using ref_fn = std::function<values_t(const std::vector<values_t> &)>;

constexpr double k_h = 1e-3, k_atol = 2e-5, k_rtol = 2e-4;

std::vector<uint8_t> bytes_of(const gk_tensor * t) {
    const auto * p = static_cast<const uint8_t *>(t->data);
    return {p, p + gk_nbytes(t)};
}

/// d loss / d x[k][j] for every j by central differences of step k_h (x is restored).
values_t central_differences(std::vector<values_t> & x, size_t k,
                             const std::function<double(const std::vector<values_t> &)> & loss) {
    values_t fd(x[k].size());
    for (size_t j = 0; j < x[k].size(); ++j) {
        const double xj = x[k][j];
        x[k][j]         = xj + k_h;
        const double lp = loss(x);
        x[k][j]         = xj - k_h;
        const double lm = loss(x);
        x[k][j]         = xj;
        fd[j]           = (lp - lm) / (2 * k_h);
    }
    return fd;
}

/// Differentiates sum(out * dy) with respect to params and checks each gradient against
/// finite differences of ref.
void check_grads(env & e, std::vector<gk_tensor *> params, gk_tensor * out, const ref_fn & ref, const char * what) {
    ASSERT_NE(out, nullptr) << what << ": " << gk_last_error(e.ctx);
    for (gk_tensor * p : params) {
        gk_set_param(p);
    }
    gk_tensor * dy   = e.rand(GK_TYPE_F32, out->ne[0], out->ne[1], out->ne[2], out->ne[3]);
    gk_tensor * loss = gk_sum(e.ctx, gk_mul(e.ctx, out, dy));
    ASSERT_NE(loss, nullptr) << what << ": " << gk_last_error(e.ctx);
    gk_set_loss(loss);
    gk_cgraph * g = gk_new_graph_custom(e.ctx, 1024, true);
    ASSERT_EQ(gk_build_forward_expand(g, loss), GK_STATUS_SUCCESS) << what;
    ASSERT_EQ(gk_build_backward_expand(e.ctx, g, nullptr), GK_STATUS_SUCCESS) << what << ": " << gk_last_error(e.ctx);
    ASSERT_EQ(gk_graph_reset(g), GK_STATUS_SUCCESS) << what;
    ASSERT_EQ(gk_graph_compute(g, 1), GK_STATUS_SUCCESS) << what << ": " << gk_last_error(e.ctx);
    std::vector<std::vector<uint8_t>> one_thread;
    for (gk_tensor * p : params) {
        gk_tensor * grad = gk_graph_get_grad(g, p);
        ASSERT_NE(grad, nullptr) << what << ": no gradient for " << p->name;
        one_thread.push_back(bytes_of(grad));
    }
    ASSERT_EQ(gk_graph_reset(g), GK_STATUS_SUCCESS) << what;
    ASSERT_EQ(gk_graph_compute(g, 3), GK_STATUS_SUCCESS) << what << ": " << gk_last_error(e.ctx);

    std::vector<values_t> x;
    for (gk_tensor * p : params) {
        x.push_back(values(p));
    }
    const values_t vdy  = values(dy);
    const auto     eval = [&](const std::vector<values_t> & v) {
        const values_t y = ref(v);
        double         s = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            s += y[i] * vdy[i];
        }
        return s;
    };
    for (size_t k = 0; k < params.size(); ++k) {
        const values_t fd   = central_differences(x, k, eval);
        gk_tensor *    grad = gk_graph_get_grad(g, params[k]);
        EXPECT_EQ(bytes_of(grad), one_thread[k]) << what << ": the gradient of param " << k << " at 1 and 3 threads";
        expect_close(grad, fd, k_atol, k_rtol, (std::string(what) + ", param " + std::to_string(k)).c_str());
    }
}

/// ref for an element-wise op of one param.
ref_fn map1(const std::function<double(double)> & f) {
    return [f](const std::vector<values_t> & v) {
        values_t y = v[0];
        for (double & t : y) {
            t = f(t);
        }
        return y;
    };
}

/// ref for a binary op of a [n0, n1] and b [n0, n1], [n0, 1] (broadcast over rows) or [1].
ref_fn map2(int64_t n0, const std::function<double(double, double)> & f) {
    return [n0, f](const std::vector<values_t> & v) {
        values_t y = v[0];
        for (size_t i = 0; i < y.size(); ++i) {
            const size_t ib = v[1].size() == y.size() ? i : v[1].size() == 1 ? 0 : i % static_cast<size_t>(n0);
            y[i]            = f(v[0][i], v[1][ib]);
        }
        return y;
    };
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(Backward, Binary) {
    const struct {
        const char *                                                       name;
        std::function<gk_tensor *(gk_context *, gk_tensor *, gk_tensor *)> build;
        std::function<double(double, double)>                              f;
    } ops[] = {
        {"add", gk_add, [](double a, double b) { return a + b; }},
        {"sub", gk_sub, [](double a, double b) { return a - b; }},
        {"mul", gk_mul, [](double a, double b) { return a * b; }},
        {"div", gk_div, [](double a, double b) { return a / b; }},
    };
    for (const auto & op : ops) {
        for (int64_t b_rows : {4, 1}) {
            env         e;
            gk_tensor * a = e.f32(7, 4);
            gk_tensor * b = e.rand(GK_TYPE_F32, 7, b_rows, 1, 1, 0.5f, 2.0f);
            check_grads(e, {a, b}, op.build(e.ctx, a, b), map2(7, op.f),
                        (std::string(op.name) + (b_rows == 1 ? " broadcast" : "")).c_str());
        }
    }
}

TEST(Backward, ElementWise) {
    const struct {
        const char *                                          name;
        std::function<gk_tensor *(gk_context *, gk_tensor *)> build;
        std::function<double(double)>                         f;
        float                                                 lo, hi;
    } ops[] = {
        {"sqr", gk_sqr, [](double x) { return x * x; }, -2, 2},
        {"sqrt", gk_sqrt, [](double x) { return std::sqrt(x); }, 0.5f, 3},
        {"log", gk_log, [](double x) { return std::log(x); }, 0.5f, 3},
        {"sin", gk_sin, [](double x) { return std::sin(x); }, -3, 3},
        {"cos", gk_cos, [](double x) { return std::cos(x); }, -3, 3},
        {"scale", [](gk_context * c, gk_tensor * x) { return gk_scale(c, x, -1.5f); },
         [](double x) { return -1.5 * x; }, -1, 1},
        {"abs", gk_abs, [](double x) { return std::fabs(x); }, -2, 2},
        {"neg", gk_neg, [](double x) { return -x; }, -2, 2},
        {"tanh", gk_tanh, [](double x) { return std::tanh(x); }, -2, 2},
        {"relu", gk_relu, [](double x) { return x > 0 ? x : 0; }, -2, 2},
        {"sigmoid", gk_sigmoid, sigmoid, -3, 3},
        {"silu", gk_silu, [](double x) { return x * sigmoid(x); }, -3, 3},
        {"exp", gk_exp, [](double x) { return std::exp(x); }, -2, 2},
        {"expm1", gk_expm1, [](double x) { return std::expm1(x); }, -2, 2},
        {"softplus", gk_softplus, [](double x) { return std::log1p(std::exp(x)); }, -3, 3},
        {"x * sgn(x) (sgn passes no gradient)",
         [](gk_context * c, gk_tensor * x) { return gk_mul(c, x, gk_sgn(c, x)); },
         [](double x) { return std::fabs(x); }, -2, 2},
        {"x * step(x) (step passes no gradient)",
         [](gk_context * c, gk_tensor * x) { return gk_mul(c, x, gk_step(c, x)); },
         [](double x) { return x > 0 ? x : 0; }, -2, 2},
        {"dup", gk_dup, [](double x) { return x; }, -1, 1},
    };
    for (const auto & op : ops) {
        env         e;
        gk_tensor * x = e.rand(GK_TYPE_F32, 9, 3, 1, 1, op.lo, op.hi);
        check_grads(e, {x}, op.build(e.ctx, x), map1(op.f), op.name);
    }
}

TEST(Backward, Reductions) {
    {
        env         e;
        gk_tensor * x = e.f32(6, 3, 2);
        check_grads(
            e, {x}, gk_sum(e.ctx, x),
            [](const std::vector<values_t> & v) {
                double s = 0;
                for (double t : v[0]) {
                    s += t;
                }
                return values_t{s};
            },
            "sum");
    }
    for (bool mean : {false, true}) {
        env         e;
        gk_tensor * x = e.f32(6, 3, 2);
        check_grads(
            e, {x}, mean ? gk_mean(e.ctx, x) : gk_sum_rows(e.ctx, x),
            [mean](const std::vector<values_t> & v) {
                values_t y(v[0].size() / 6);
                for (size_t i = 0; i < v[0].size(); ++i) {
                    y[i / 6] += v[0][i] / (mean ? 6 : 1);
                }
                return y;
            },
            mean ? "mean" : "sum_rows");
    }
    {
        env         e;
        gk_tensor * a = e.f32(7, 4);
        gk_tensor * b = e.f32(1);
        check_grads(e, {a, b}, gk_add1(e.ctx, a, b), map2(7, [](double x, double s) { return x + s; }), "add1");
    }
}

TEST(Backward, RepeatAndBack) {
    {
        env         e;
        gk_tensor * x  = e.f32(3, 2);
        gk_tensor * to = gk_new_tensor_3d(e.ctx, GK_TYPE_F32, 6, 4, 2);
        check_grads(
            e, {x}, gk_repeat(e.ctx, x, to),
            [](const std::vector<values_t> & v) {
                values_t y;
                for (int64_t i2 = 0; i2 < 2; ++i2) {
                    for (int64_t i1 = 0; i1 < 4; ++i1) {
                        for (int64_t i0 = 0; i0 < 6; ++i0) {
                            y.push_back(v[0][static_cast<size_t>((i1 % 2) * 3 + i0 % 3)]);
                        }
                    }
                }
                return y;
            },
            "repeat");
    }
    {
        env         e;
        gk_tensor * x  = e.f32(6, 4);
        gk_tensor * to = gk_new_tensor_2d(e.ctx, GK_TYPE_F32, 3, 2);
        check_grads(
            e, {x}, gk_repeat_back(e.ctx, x, to),
            [](const std::vector<values_t> & v) {
                values_t y(6);
                for (int64_t i1 = 0; i1 < 4; ++i1) {
                    for (int64_t i0 = 0; i0 < 6; ++i0) {
                        y[static_cast<size_t>((i1 % 2) * 3 + i0 % 3)] += v[0][static_cast<size_t>(i1 * 6 + i0)];
                    }
                }
                return y;
            },
            "repeat_back");
    }
}

TEST(Backward, RmsNorm) {
    env         e;
    gk_tensor * x = e.rand(GK_TYPE_F32, 8, 3, 1, 1, -2, 2);
    check_grads(
        e, {x}, gk_rms_norm(e.ctx, x, 1e-5f),
        [](const std::vector<values_t> & v) {
            values_t y = v[0];
            for (size_t r = 0; r < 3; ++r) {
                double s2 = 0;
                for (size_t i = 0; i < 8; ++i) {
                    s2 += y[r * 8 + i] * y[r * 8 + i];
                }
                const double scale = 1 / std::sqrt(s2 / 8 + 1e-5);
                for (size_t i = 0; i < 8; ++i) {
                    y[r * 8 + i] *= scale;
                }
            }
            return y;
        },
        "rms_norm");
}

TEST(Backward, MulMat) {
    for (int64_t a_heads : {4, 2}) {
        env         e;
        gk_tensor * a = e.f32(5, 3, a_heads);
        gk_tensor * b = e.f32(5, 4, 4);
        check_grads(
            e, {a, b}, gk_mul_mat(e.ctx, a, b),
            [a_heads](const std::vector<values_t> & v) {
                values_t y(3 * 4 * 4);
                for (size_t h = 0; h < 4; ++h) {
                    const size_t ha = h / static_cast<size_t>(4 / a_heads);
                    for (size_t n = 0; n < 4; ++n) {
                        for (size_t m = 0; m < 3; ++m) {
                            for (size_t k = 0; k < 5; ++k) {
                                y[(h * 4 + n) * 3 + m] += v[0][(ha * 3 + m) * 5 + k] * v[1][(h * 4 + n) * 5 + k];
                            }
                        }
                    }
                }
                return y;
            },
            a_heads == 4 ? "mul_mat" : "mul_mat, a broadcast over heads");
    }
}

/// ref of acc (add) / set (!add) of b [3, 2] into a [6, 4] at row 1, column 2.
ref_fn write_ref(bool add) {
    return [add](const std::vector<values_t> & v) {
        values_t y = v[0];
        for (size_t i1 = 0; i1 < 2; ++i1) {
            for (size_t i0 = 0; i0 < 3; ++i0) {
                double & t = y[(1 + i1) * 6 + 2 + i0];
                t          = (add ? t : 0) + v[1][i1 * 3 + i0];
            }
        }
        return y;
    };
}

TEST(Backward, AccAndSet) {
    for (bool add : {true, false}) {
        env         e;
        gk_tensor * a   = e.f32(6, 4);
        gk_tensor * b   = e.f32(3, 2);
        const auto  off = a->nb[1] + 2 * sizeof(float);
        gk_tensor * r   = add ? gk_acc(e.ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off)
                              : gk_set(e.ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off);
        check_grads(e, {a, b}, r, write_ref(add), add ? "acc" : "set");
    }
}

TEST(Backward, Layout) {
    const auto transposed = [](const std::vector<values_t> & v) {
        values_t y;
        for (size_t i0 = 0; i0 < 6; ++i0) {
            for (size_t i1 = 0; i1 < 4; ++i1) {
                y.push_back(v[0][i1 * 6 + i0]);
            }
        }
        return y;
    };
    const auto same = [](const std::vector<values_t> & v) { return v[0]; };
    {
        env         e;
        gk_tensor * x = e.f32(6, 4);
        check_grads(e, {x}, gk_cont(e.ctx, gk_transpose(e.ctx, x)), transposed, "cont(transpose)");
    }
    {
        env         e;
        gk_tensor * x = e.f32(6, 4);
        check_grads(e, {x}, gk_cont(e.ctx, gk_permute(e.ctx, x, 1, 0, 2, 3)), transposed, "cont(permute)");
    }
    {
        env         e;
        gk_tensor * x = e.f32(6, 4);
        check_grads(e, {x}, gk_reshape_2d(e.ctx, x, 8, 3), same, "reshape");
    }
    {
        env         e;
        gk_tensor * x = e.f32(6, 4);
        check_grads(e, {x}, gk_cpy(e.ctx, x, gk_new_tensor_2d(e.ctx, GK_TYPE_F32, 12, 2)), same, "cpy");
    }
    {
        env         e;
        gk_tensor * x = e.f32(6, 4);
        // a 3 x 2 window at row 1, column 2
        check_grads(
            e, {x}, gk_view_2d(e.ctx, x, 3, 2, x->nb[1], x->nb[1] + 2 * sizeof(float)),
            [](const std::vector<values_t> & v) {
                values_t y;
                for (size_t i1 = 0; i1 < 2; ++i1) {
                    for (size_t i0 = 0; i0 < 3; ++i0) {
                        y.push_back(v[0][(1 + i1) * 6 + 2 + i0]);
                    }
                }
                return y;
            },
            "view");
    }
}

TEST(Backward, GetRows) {
    env           e;
    gk_tensor *   table   = e.f32(5, 4);
    gk_tensor *   idx     = gk_new_tensor_1d(e.ctx, GK_TYPE_I32, 6);
    const int32_t rows[6] = {2, 0, 2, 3, 3, 2};
    std::memcpy(idx->data, rows, sizeof rows);
    check_grads(
        e, {table}, gk_get_rows(e.ctx, table, idx),
        [&](const std::vector<values_t> & v) {
            values_t y;
            for (int32_t r : rows) {
                y.insert(y.end(), v[0].begin() + r * 5, v[0].begin() + r * 5 + 5);
            }
            return y;
        },
        "get_rows");
}

/// Row-wise softmax of x * scale + mask (mask values m, -inf masked), in double.
values_t softmax_rows(values_t x, const values_t & m, size_t n, double scale) {
    for (size_t r = 0; r < x.size() / n; ++r) {
        double mx = -INFINITY;
        for (size_t i = 0; i < n; ++i) {
            x[r * n + i] = x[r * n + i] * scale + (m.empty() ? 0 : m[r * n + i]);
            mx           = std::max(mx, x[r * n + i]);
        }
        double s = 0;
        for (size_t i = 0; i < n; ++i) {
            x[r * n + i] = std::exp(x[r * n + i] - mx);
            s += x[r * n + i];
        }
        for (size_t i = 0; i < n; ++i) {
            x[r * n + i] /= s;
        }
    }
    return x;
}

TEST(Backward, SoftMaxAndMasks) {
    {
        env         e;
        gk_tensor * x    = e.rand(GK_TYPE_F32, 6, 4, 1, 1, -2, 2);
        gk_tensor * mask = e.causal_mask(GK_TYPE_F32, 6, 4);
        const auto  m    = values(mask);
        check_grads(
            e, {x}, gk_soft_max_ext(e.ctx, x, mask, 0.7f, 0.0f),
            [&](const std::vector<values_t> & v) { return softmax_rows(v[0], m, 6, static_cast<double>(0.7f)); },
            "soft_max_ext with mask");
    }
    {
        env         e;
        gk_tensor * x = e.rand(GK_TYPE_F32, 5, 5, 1, 1, -2, 2);
        check_grads(
            e, {x}, gk_soft_max(e.ctx, gk_diag_mask_inf(e.ctx, x, 0)),
            [](const std::vector<values_t> & v) {
                values_t m(25);
                for (size_t r = 0; r < 5; ++r) {
                    for (size_t i = r + 1; i < 5; ++i) {
                        m[r * 5 + i] = -INFINITY;
                    }
                }
                return softmax_rows(v[0], m, 5, 1.0);
            },
            "soft_max(diag_mask_inf)");
    }
    {
        env         e;
        gk_tensor * x = e.f32(5, 5);
        check_grads(
            e, {x}, gk_diag_mask_zero(e.ctx, x, 1),
            [](const std::vector<values_t> & v) {
                values_t y = v[0];
                for (size_t r = 0; r < 5; ++r) {
                    for (size_t i = r + 2; i < 5; ++i) {
                        y[r * 5 + i] = 0;
                    }
                }
                return y;
            },
            "diag_mask_zero");
    }
}

TEST(Backward, Rope) {
    for (int mode : {GK_ROPE_TYPE_NORMAL, GK_ROPE_TYPE_NEOX}) {
        env           e;
        const int64_t d = 8, n_dims = 6, heads = 2, tokens = 3;
        gk_tensor *   x    = e.f32(d, heads, tokens);
        gk_tensor *   pos  = gk_new_tensor_1d(e.ctx, GK_TYPE_I32, tokens);
        const int32_t p[3] = {0, 5, 11};
        std::memcpy(pos->data, p, sizeof p);
        gk_tensor * r = gk_rope_ext(e.ctx, x, pos, nullptr, n_dims, mode, 0, 100.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        check_grads(
            e, {x}, r,
            [&](const std::vector<values_t> & v) {
                values_t y = v[0];
                for (size_t t = 0; t < 3; ++t) {
                    for (size_t h = 0; h < 2; ++h) {
                        double * row = &y[(t * 2 + h) * d];
                        for (int64_t i = 0; i < n_dims / 2; ++i) {
                            const double theta = p[t] * std::pow(100.0, -2.0 * static_cast<double>(i) / n_dims);
                            const size_t i0    = mode == GK_ROPE_TYPE_NEOX ? i : 2 * i;
                            const size_t i1    = mode == GK_ROPE_TYPE_NEOX ? i + n_dims / 2 : 2 * i + 1;
                            const double x0 = row[i0], x1 = row[i1];
                            row[i0] = x0 * std::cos(theta) - x1 * std::sin(theta);
                            row[i1] = x0 * std::sin(theta) + x1 * std::cos(theta);
                        }
                    }
                }
                return y;
            },
            mode == GK_ROPE_TYPE_NEOX ? "rope_ext neox" : "rope_ext normal");
    }
}

/// Through rope_multi (M-RoPE, interleaved M-RoPE, vision) and YaRN rope_ext with frequency
/// factors the gradient is the op's own *_back (checked against finite differences in
/// test-ops-back) with the forward op's parameters: the same bits as building it directly.
TEST(Backward, RopeRoutesToRopeBack) {
    const struct {
        int mode, n_dims, sections[GK_MROPE_SECTIONS];
    } cases[] = {
        {GK_ROPE_TYPE_MROPE, 32, {4, 6, 6, 0}},
        {GK_ROPE_TYPE_IMROPE, 32, {4, 6, 6, 0}},
        {GK_ROPE_TYPE_VISION, 16, {8, 8, 0, 0}},
        {GK_ROPE_TYPE_NEOX, 24, {0, 0, 0, 0}},
    };
    for (const auto & c : cases) {
        env           e;
        const bool    multi = c.mode & GK_ROPE_TYPE_MROPE;
        gk_tensor *   x     = e.f32(32, 3, 5);
        gk_tensor *   pos   = e.indices(60, multi ? 4 * 5 : 5);
        gk_tensor *   ff    = multi ? nullptr : e.positive(c.n_dims / 2);
        int           sec[GK_MROPE_SECTIONS] = {c.sections[0], c.sections[1], c.sections[2], c.sections[3]};
        const auto    rope = [&](gk_tensor * a, bool back) {
            if (multi) {
                return (back ? gk_rope_multi_back : gk_rope_multi)(e.ctx, a, pos, nullptr, c.n_dims, sec, c.mode, 4096,
                                                                   10000.0f, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f);
            }
            return (back ? gk_rope_ext_back : gk_rope_ext)(e.ctx, a, pos, ff, c.n_dims, c.mode, 4096, 10000.0f, 0.5f,
                                                           1.0f, 1.0f, 32.0f, 1.0f);
        };
        gk_set_param(x);
        gk_tensor * dy   = e.f32(32, 3, 5);
        gk_tensor * loss = gk_sum(e.ctx, gk_mul(e.ctx, rope(x, false), dy));
        gk_set_loss(loss);
        gk_cgraph * g = gk_new_graph_custom(e.ctx, 256, true);
        ASSERT_EQ(gk_build_forward_expand(g, loss), GK_STATUS_SUCCESS);
        ASSERT_EQ(gk_build_backward_expand(e.ctx, g, nullptr), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
        gk_tensor * direct = rope(dy, true);
        ASSERT_EQ(gk_build_forward_expand(g, direct), GK_STATUS_SUCCESS);
        ASSERT_EQ(gk_graph_reset(g), GK_STATUS_SUCCESS);
        ASSERT_EQ(gk_graph_compute(g, 2), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
        EXPECT_EQ(bytes_of(gk_graph_get_grad(g, x)), bytes_of(direct)) << "mode " << c.mode;
    }
}

TEST(Backward, Im2colAndPool) {
    {
        env         e;
        gk_tensor * kernel = gk_new_tensor_4d(e.ctx, GK_TYPE_F32, 3, 2, 2, 1);  // KW 3, KH 2, IC 2
        gk_tensor * img    = e.f32(6, 5, 2, 1);                                 // W 6, H 5, IC 2
        gk_tensor * cols   = gk_im2col(e.ctx, kernel, img, 2, 1, 1, 0, 1, 1, true, GK_TYPE_F32);
        ASSERT_NE(cols, nullptr) << gk_last_error(e.ctx);
        const int64_t ow = cols->ne[1], oh = cols->ne[2];
        check_grads(
            e, {img}, cols,
            [&](const std::vector<values_t> & v) {
                values_t y;
                for (int64_t oy = 0; oy < oh; ++oy) {
                    for (int64_t ox = 0; ox < ow; ++ox) {
                        for (int64_t ic = 0; ic < 2; ++ic) {
                            for (int64_t ky = 0; ky < 2; ++ky) {
                                for (int64_t kx = 0; kx < 3; ++kx) {
                                    const int64_t ix = ox * 2 + kx - 1, iy = oy + ky;
                                    y.push_back(ix < 0 || ix >= 6 || iy >= 5
                                                    ? 0.0
                                                    : v[0][static_cast<size_t>((ic * 5 + iy) * 6 + ix)]);
                                }
                            }
                        }
                    }
                }
                return y;
            },
            "im2col");
    }
    for (gk_op_pool op : {GK_OP_POOL_AVG, GK_OP_POOL_MAX}) {
        env         e;
        gk_tensor * x = e.rand(GK_TYPE_F32, 6, 4, 2, 1, -2, 2);
        check_grads(
            e, {x}, gk_pool_2d(e.ctx, x, op, 2, 2, 2, 2, 0, 0),
            [op](const std::vector<values_t> & v) {
                values_t y;
                for (size_t c = 0; c < 2; ++c) {
                    for (size_t oy = 0; oy < 2; ++oy) {
                        for (size_t ox = 0; ox < 3; ++ox) {
                            double s = 0, m = -INFINITY;
                            for (size_t ky = 0; ky < 2; ++ky) {
                                for (size_t kx = 0; kx < 2; ++kx) {
                                    const double t = v[0][(c * 4 + oy * 2 + ky) * 6 + ox * 2 + kx];
                                    s += t / 4;
                                    m = std::max(m, t);
                                }
                            }
                            y.push_back(op == GK_OP_POOL_AVG ? s : m);
                        }
                    }
                }
                return y;
            },
            op == GK_OP_POOL_AVG ? "pool_2d avg" : "pool_2d max");
    }
}

TEST(Backward, SwigluAndCrossEntropy) {
    {
        env         e;
        gk_tensor * a = e.rand(GK_TYPE_F32, 7, 3, 1, 1, -3, 3);
        gk_tensor * b = e.f32(7, 3);
        check_grads(e, {a, b}, gk_swiglu_split(e.ctx, a, b),
                    map2(7, [](double x, double gate) { return x * sigmoid(x) * gate; }), "swiglu_split");
    }
    {
        env         e;
        gk_tensor * logits = e.rand(GK_TYPE_F32, 5, 3, 1, 1, -2, 2);
        // labels are distributions (rows summing to 1), which cross_entropy_loss_back assumes
        gk_tensor * labels = e.distributions(5, 3);
        const auto lab = values(labels);
        check_grads(
            e, {logits}, gk_cross_entropy_loss(e.ctx, logits, labels),
            [&](const std::vector<values_t> & v) {
                const values_t p = softmax_rows(v[0], {}, 5, 1.0);
                double         s = 0;
                for (size_t i = 0; i < p.size(); ++i) {
                    s -= lab[i] * std::log(p[i]) / 3;
                }
                return values_t{s};
            },
            "cross_entropy_loss");
    }
}

/// flash_attn_back (ggml's layout: v transposed, the three gradients in one result) against
/// finite differences of L = sum(attention(q, k, v) * d) in double, with grouped heads
/// (4 query heads over 2 key heads), 2 sequences, more keys than queries, causal and not;
/// the same bits at 1 and 3 threads, and the padding between the parts zero.
TEST(Backward, FlashAttnBack) {
    constexpr int64_t D = 4, N = 3, M = 5, H = 4, Hk = 2, S = 2;
    for (bool masked : {false, true}) {
        env         e;
        gk_tensor * q = e.f32(D, N, H, S);
        gk_tensor * k = e.f32(D, M, Hk, S);
        gk_tensor * v = e.f32(M, D, Hk, S);
        gk_tensor * d = e.f32(D, N, H, S);
        gk_tensor * r = gk_flash_attn_back(e.ctx, q, k, v, d, masked);
        ASSERT_NE(r, nullptr) << gk_last_error(e.ctx);
        ASSERT_TRUE(compute(e.ctx, r, 1));
        const std::vector<uint8_t> one_thread = bytes_of(r);
        ASSERT_TRUE(compute(e.ctx, r, 3));
        EXPECT_EQ(bytes_of(r), one_thread) << "masked " << masked << ": 1 and 3 threads";
        const values_t vd   = values(d);
        const auto     loss = [&](const std::vector<values_t> & x) {  // x: q, k, v
            double l = 0;
            for (int64_t s = 0; s < S; ++s) {
                for (int64_t h = 0; h < H; ++h) {
                    const int64_t hk = h % Hk;
                    for (int64_t i = 0; i < N; ++i) {
                        const int64_t visible = masked ? M - N + i + 1 : M;
                        values_t      w(static_cast<size_t>(visible));
                        double        max = -INFINITY, sum = 0;
                        for (int64_t j = 0; j < visible; ++j) {
                            double dot = 0;
                            for (int64_t c = 0; c < D; ++c) {
                                dot += x[0][static_cast<size_t>(((s * H + h) * N + i) * D + c)] *
                                       x[1][static_cast<size_t>(((s * Hk + hk) * M + j) * D + c)];
                            }
                            w[static_cast<size_t>(j)] = dot / std::sqrt(static_cast<double>(D));
                            max                       = std::max(max, w[static_cast<size_t>(j)]);
                        }
                        for (double & t : w) {
                            t = std::exp(t - max);
                            sum += t;
                        }
                        for (int64_t c = 0; c < D; ++c) {
                            double y = 0;
                            for (int64_t j = 0; j < visible; ++j) {
                                y += w[static_cast<size_t>(j)] / sum * x[2][static_cast<size_t>(((s * Hk + hk) * D + c) * M + j)];
                            }
                            l += y * vd[static_cast<size_t>(((s * H + h) * N + i) * D + c)];
                        }
                    }
                }
            }
            return l;
        };
        std::vector<values_t> x   = {values(q), values(k), values(v)};
        const values_t        got = values(r);
        size_t                at  = 0;  // start of the part in the result: 16-byte aligned
        for (size_t part = 0; part < 3; ++part) {
            const values_t fd = central_differences(x, part, loss);
            for (size_t j = 0; j < fd.size(); ++j) {
                EXPECT_NEAR(got[at + j], fd[j], k_atol + k_rtol * std::fabs(fd[j]))
                    << "masked " << masked << ", part " << part << ", element " << j;
            }
            const size_t end = (at + x[part].size() + 3) / 4 * 4;
            for (size_t j = at + x[part].size(); j < end && j < got.size(); ++j) {
                EXPECT_EQ(got[j], 0.0) << "padding after part " << part;
            }
            at = end;
        }
        EXPECT_EQ(at, got.size());
    }
}

/// A gradient reaching a parameter along two paths is the sum of both (x*x + sin(x)), and a
/// gradient accumulator adds each evaluation's gradient to what it holds.
TEST(Backward, SharedSourcesAndAccumulators) {
    {
        env         e;
        gk_tensor * x = e.f32(5, 2);
        check_grads(e, {x}, gk_add(e.ctx, gk_mul(e.ctx, x, x), gk_sin(e.ctx, x)),
                    map1([](double t) { return t * t + std::sin(t); }), "x*x + sin(x)");
    }
    env         e;
    gk_tensor * w = e.f32(4);
    gk_set_param(w);
    gk_tensor * loss = gk_sum(e.ctx, gk_sqr(e.ctx, w));
    gk_set_loss(loss);
    gk_cgraph * g = gk_new_graph_custom(e.ctx, 64, true);
    ASSERT_EQ(gk_build_forward_expand(g, loss), GK_STATUS_SUCCESS);
    std::vector<gk_tensor *> accs(static_cast<size_t>(gk_graph_n_nodes(g)), nullptr);
    gk_tensor *              acc = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, 4);
    accs[0]                      = acc;
    ASSERT_EQ(gk_graph_node(g, 0), w);
    ASSERT_EQ(gk_build_backward_expand(e.ctx, g, accs.data()), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
    EXPECT_EQ(gk_graph_get_grad_acc(g, w), acc);
    ASSERT_NE(gk_graph_get_grad_acc(g, loss), nullptr);
    EXPECT_EQ(gk_graph_get_grad(g, loss), gk_graph_get_grad_acc(g, loss));
    ASSERT_EQ(gk_graph_reset(g), GK_STATUS_SUCCESS);
    EXPECT_EQ(values(gk_graph_get_grad_acc(g, loss)), values_t{1.0});
    EXPECT_EQ(values(acc), values_t(4, 0.0));
    for (int pass = 1; pass <= 2; ++pass) {
        ASSERT_EQ(gk_graph_compute(g, 2), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
        const values_t vw = values(w), va = values(acc);
        for (size_t i = 0; i < 4; ++i) {
            EXPECT_EQ(va[i], static_cast<double>(static_cast<float>(pass) * (2.0f * static_cast<float>(vw[i]))))
                << "pass " << pass;
        }
    }
}

/// gk_graph_dup / gk_graph_cpy carry the gradients: a copy of a differentiated graph gives
/// the same gradient nodes and accumulators; a copy into a graph without grads is refused.
TEST(Backward, GraphDupKeepsGradients) {
    env         e;
    gk_tensor * w = e.f32(4);
    gk_set_param(w);
    gk_tensor * loss = gk_sum(e.ctx, gk_sin(e.ctx, w));
    gk_set_loss(loss);
    gk_cgraph * g = gk_new_graph_custom(e.ctx, 64, true);
    ASSERT_EQ(gk_build_forward_expand(g, loss), GK_STATUS_SUCCESS);
    gk_cgraph * fwd = gk_graph_dup(e.ctx, g, true);
    ASSERT_NE(fwd, nullptr);
    ASSERT_EQ(gk_build_backward_expand(e.ctx, g, nullptr), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
    gk_cgraph * copy = gk_graph_dup(e.ctx, g, false);
    ASSERT_NE(copy, nullptr) << gk_last_error(e.ctx);
    EXPECT_EQ(gk_graph_n_nodes(copy), gk_graph_n_nodes(g));
    EXPECT_EQ(gk_graph_get_grad(copy, w), gk_graph_get_grad(g, w));
    EXPECT_EQ(gk_graph_get_grad_acc(copy, loss), gk_graph_get_grad_acc(g, loss));
    EXPECT_EQ(gk_graph_get_grad(fwd, w), nullptr) << "the copy made before the backward pass has none";
    EXPECT_EQ(gk_graph_cpy(g, gk_new_graph_custom(e.ctx, 64, false)), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(gk_graph_cpy(g, gk_new_graph_custom(e.ctx, 2, true)), GK_STATUS_INVALID_ARGUMENT);
    ASSERT_EQ(gk_graph_reset(copy), GK_STATUS_SUCCESS);
    ASSERT_EQ(gk_graph_compute(copy, 2), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
    const values_t vw = values(w), vg = values(gk_graph_get_grad(copy, w));
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_NEAR(vg[i], std::cos(vw[i]), 1e-6);
    }
}

TEST(Backward, Refusals) {
    env         e;
    gk_tensor * x = e.f32(4, 2);
    gk_tensor * y = gk_sum(e.ctx, gk_gelu(e.ctx, x));
    gk_cgraph * g = gk_new_graph_custom(e.ctx, 64, true);
    ASSERT_EQ(gk_build_forward_expand(g, y), GK_STATUS_SUCCESS);

    EXPECT_EQ(gk_build_backward_expand(e.ctx, g, nullptr), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gk_last_error(e.ctx)).find("no parameter"), std::string::npos) << gk_last_error(e.ctx);
    gk_set_param(x);
    gk_cgraph * g2 = gk_new_graph_custom(e.ctx, 64, true);
    ASSERT_EQ(gk_build_forward_expand(g2, y), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_build_backward_expand(e.ctx, g2, nullptr), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gk_last_error(e.ctx)).find("no loss"), std::string::npos) << gk_last_error(e.ctx);

    gk_set_loss(y);
    gk_cgraph * g3 = gk_new_graph_custom(e.ctx, 64, true);
    ASSERT_EQ(gk_build_forward_expand(g3, y), GK_STATUS_SUCCESS);
    const int n_nodes = gk_graph_n_nodes(g3), n_leafs = gk_graph_n_leafs(g3);
    EXPECT_EQ(gk_build_backward_expand(e.ctx, g3, nullptr), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gk_last_error(e.ctx)).find("GELU) has no gradient"), std::string::npos)
        << gk_last_error(e.ctx);
    EXPECT_EQ(gk_graph_n_nodes(g3), n_nodes) << "a refused backward pass leaves the graph as it was";
    EXPECT_EQ(gk_graph_n_leafs(g3), n_leafs);
    EXPECT_EQ(gk_graph_get_grad_acc(g3, y), nullptr);
    EXPECT_FALSE(gk_op_has_grad(GK_OP_UNARY, GK_UNARY_OP_GELU));
    EXPECT_TRUE(gk_op_has_grad(GK_OP_UNARY, GK_UNARY_OP_SILU));
    EXPECT_TRUE(gk_op_has_grad(GK_OP_MUL_MAT, 0));
    EXPECT_FALSE(gk_op_has_grad(GK_OP_FLASH_ATTN_EXT, 0));

    gk_cgraph * plain = gk_new_graph(e.ctx);
    ASSERT_EQ(gk_build_forward_expand(plain, y), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_build_backward_expand(e.ctx, plain, nullptr), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gk_last_error(e.ctx)).find("without gradients"), std::string::npos) << gk_last_error(e.ctx);
    EXPECT_EQ(gk_graph_reset(plain), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(gk_graph_get_grad(plain, x), nullptr);

    // a loss of more than one element
    env         e2;
    gk_tensor * w = e2.f32(4);
    gk_set_param(w);
    gk_tensor * big = gk_sqr(e2.ctx, w);
    gk_set_loss(big);
    gk_cgraph * g4 = gk_new_graph_custom(e2.ctx, 64, true);
    ASSERT_EQ(gk_build_forward_expand(g4, big), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_build_backward_expand(e2.ctx, g4, nullptr), GK_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gk_last_error(e2.ctx)).find("one F32 element"), std::string::npos) << gk_last_error(e2.ctx);
}

/// A two-layer perceptron (4 -> 16 -> 3, silu) on a fixed batch of 12 points with one-hot
/// labels, cross-entropy loss, trained by opt_step_adamw for `steps` steps on `threads`
/// threads; returns the loss before each step and the final weights' bytes.
struct training {
    std::vector<float>   losses;
    std::vector<uint8_t> weights;
};

training train_mlp(int threads, int steps) {
    env         e;
    gk_tensor * w1     = e.rand(GK_TYPE_F32, 4, 16, 1, 1, -0.5f, 0.5f);
    gk_tensor * b1     = e.rand(GK_TYPE_F32, 16, 1, 1, 1, -0.1f, 0.1f);
    gk_tensor * w2     = e.rand(GK_TYPE_F32, 16, 3, 1, 1, -0.5f, 0.5f);
    gk_tensor * b2     = e.rand(GK_TYPE_F32, 3, 1, 1, 1, -0.1f, 0.1f);
    gk_tensor * x      = e.rand(GK_TYPE_F32, 4, 12, 1, 1, -1.0f, 1.0f);
    gk_tensor * labels = gk_new_tensor_2d(e.ctx, GK_TYPE_F32, 3, 12);
    const auto  vx     = values(x);
    for (int64_t i = 0; i < 12; ++i) {
        // class: which of three linear scores of the point is largest
        const double * p   = &vx[static_cast<size_t>(i * 4)];
        const double   s[] = {p[0] + p[1], p[2] - p[3], -p[0] + 0.5 * p[3]};
        const int      c   = static_cast<int>(std::max_element(s, s + 3) - s);
        for (int k = 0; k < 3; ++k) {
            static_cast<float *>(labels->data)[i * 3 + k] = k == c ? 1.0f : 0.0f;
        }
    }
    gk_tensor * params[] = {w1, b1, w2, b2};
    for (gk_tensor * p : params) {
        gk_set_param(p);
    }
    gk_tensor * h      = gk_silu(e.ctx, gk_add(e.ctx, gk_mul_mat(e.ctx, w1, x), b1));
    gk_tensor * logits = gk_add(e.ctx, gk_mul_mat(e.ctx, w2, h), b2);
    gk_tensor * loss   = gk_cross_entropy_loss(e.ctx, logits, labels);
    gk_set_loss(loss);
    gk_cgraph * g = gk_new_graph_custom(e.ctx, 512, true);
    EXPECT_EQ(gk_build_forward_expand(g, loss), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_build_backward_expand(e.ctx, g, nullptr), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
    gk_tensor * adamw = gk_new_tensor_1d(e.ctx, GK_TYPE_F32, 7);
    for (gk_tensor * p : params) {
        gk_tensor * m = gk_dup_tensor(e.ctx, p);
        gk_tensor * v = gk_dup_tensor(e.ctx, p);
        EXPECT_EQ(gk_build_forward_expand(g, gk_opt_step_adamw(e.ctx, p, gk_graph_get_grad(g, p), m, v, adamw)),
                  GK_STATUS_SUCCESS)
            << gk_last_error(e.ctx);
    }
    EXPECT_EQ(gk_graph_reset(g), GK_STATUS_SUCCESS);
    training    out;
    const float alpha = 0.05f, beta1 = 0.9f, beta2 = 0.999f;
    for (int t = 1; t <= steps; ++t) {
        const float p[7] = {alpha,
                            beta1,
                            beta2,
                            1e-8f,
                            0.0f,
                            1.0f / (1.0f - std::pow(beta1, static_cast<float>(t))),
                            1.0f / (1.0f - std::pow(beta2, static_cast<float>(t)))};
        std::memcpy(adamw->data, p, sizeof p);
        EXPECT_EQ(gk_graph_compute(g, threads), GK_STATUS_SUCCESS) << gk_last_error(e.ctx);
        out.losses.push_back(*static_cast<const float *>(loss->data));
    }
    for (gk_tensor * p : params) {
        const auto b = bytes_of(p);
        out.weights.insert(out.weights.end(), b.begin(), b.end());
    }
    return out;
}

TEST(Backward, TrainMlpAdamw) {
    const training one = train_mlp(1, 40);
    const training two = train_mlp(2, 40);
    ASSERT_EQ(one.losses.size(), 40u);
    EXPECT_LT(one.losses.back(), 0.5f * one.losses.front()) << "first " << one.losses.front();
    int rises = 0;
    for (size_t i = 1; i < one.losses.size(); ++i) {
        rises += one.losses[i] > one.losses[i - 1];
    }
    EXPECT_LE(rises, 4) << "the loss should fall at nearly every step";
    EXPECT_EQ(std::memcmp(one.losses.data(), two.losses.data(), one.losses.size() * sizeof(float)), 0)
        << "losses at 1 and 2 threads";
    EXPECT_EQ(one.weights, two.weights) << "trained weights at 1 and 2 threads";
}

} // namespace
