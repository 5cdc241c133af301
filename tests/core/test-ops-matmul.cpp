// test-ops-matmul - mul_mat, mul_mat_id and out_prod against double references.
//
// mul_mat's reference dots in double the weight as the codec decodes it and the
// activation as vec_dot sees it (rounded to the weight type's vec_dot_type and decoded
// back), so the only differences left are the kernel's f32 accumulation.
#include "op_check.h"

#include "gk/cpu/vec_dot.h"

namespace {

using namespace gk_test;

/// b's values as vec_dot sees them for weight type `wt`.
std::vector<double> as_activation(const gk_tensor * b, gk_type wt) {
    const auto *       vd = gk::cpu::get_vec_dot_traits(wt);
    const auto         vb = values(b);
    const int64_t      K  = b->ne[0];
    std::vector<float> row(static_cast<size_t>(K));
    std::vector<char>  enc(gk_row_size(vd->vec_dot_type, K));
    std::vector<double> out;
    for (size_t r = 0; r < vb.size() / static_cast<size_t>(K); ++r) {
        for (int64_t i = 0; i < K; ++i) {
            row[static_cast<size_t>(i)] = static_cast<float>(vb[r * static_cast<size_t>(K) + static_cast<size_t>(i)]);
        }
        vd->from_float(row.data(), enc.data(), K);
        gk::quant::get_type_traits(vd->vec_dot_type)->to_float(enc.data(), row.data(), K);
        out.insert(out.end(), row.begin(), row.end());
    }
    return out;
}

void check_mul_mat(gk_type wt, int64_t K, int64_t M, int64_t N, int64_t A2, int64_t B2, double rtol) {
    env         e;
    gk_tensor * a = e.rand(wt, K, M, A2);
    gk_tensor * b = e.f32(K, N, B2);
    gk_tensor * y = gk_mul_mat(e.ctx, a, b);
    ASSERT_TRUE(compute(e.ctx, y, 4)) << gk_type_name(wt);
    const auto          va = values(a);
    const auto          vb = as_activation(b, wt);
    std::vector<double> ref;
    double              scale = 0;
    for (int64_t i2 = 0; i2 < B2; ++i2) {
        for (int64_t n = 0; n < N; ++n) {
            for (int64_t m = 0; m < M; ++m) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k) {
                    s += va[flat(a->ne, k, m, i2 / (B2 / A2))] * vb[flat(b->ne, k, n, i2)];
                }
                ref.push_back(s);
                scale = std::max(scale, std::fabs(s));
            }
        }
    }
    expect_close(y, ref, rtol * scale, rtol, gk_type_name(wt));
}

TEST(OpsMatmul, FloatWeights) {
    check_mul_mat(GK_TYPE_F32, 64, 17, 9, 1, 1, 1e-5);
    check_mul_mat(GK_TYPE_F32, 33, 5, 1, 2, 6, 1e-5);  // odd K, head broadcast, one column
    check_mul_mat(GK_TYPE_F16, 64, 17, 20, 1, 1, 1e-5);
    check_mul_mat(GK_TYPE_BF16, 64, 17, 3, 1, 1, 1e-5);
}

TEST(OpsMatmul, QuantizedWeights) {
    for (gk_type t : {GK_TYPE_Q4_0, GK_TYPE_Q8_0, GK_TYPE_Q4_K, GK_TYPE_Q6_K, GK_TYPE_IQ4_NL}) {
        if (!gk::cpu::vec_dot_row_ok(t, 256)) {
            continue;
        }
        check_mul_mat(t, 256, 12, 5, 1, 1, 1e-5);
    }
}

/// Batch invariance: mul_mat of N columns gives, for every column, the bits of mul_mat
/// of that column alone (vec_dot_tile.h), for every weight type with a dot, for N from 2
/// to 130 (across the tile kernels' 64- and 128-column panels) at 1 and 3 threads; the
/// weight has rows enough for several 16-row tiles and a partial one.
TEST(OpsMatmul, ColumnsDoNotDependOnTheBatch) {
    const int64_t K = 512, M = 37, n_max = 130;
    int           types = 0;
    for (int id = 0; id < GK_TYPE_COUNT; ++id) {
        const auto t = static_cast<gk_type>(id);
        if (!gk::cpu::vec_dot_row_ok(t, K) || !gk::quant::get_type_traits(t)->from_float) {
            continue;
        }
        ++types;
        env         e(256u << 20);
        gk_tensor * a   = e.rand(t, K, M);
        gk_tensor * b   = e.rand(GK_TYPE_F32, K, n_max, 1, 1, -2.0f, 2.0f);
        // every column alone
        std::vector<std::vector<uint32_t>> alone;
        for (int64_t n = 0; n < n_max; ++n) {
            gk_tensor * col = gk_view_2d(e.ctx, b, K, 1, b->nb[1], static_cast<size_t>(n) * b->nb[1]);
            gk_tensor * y   = gk_mul_mat(e.ctx, a, col);
            ASSERT_TRUE(compute(e.ctx, y, 1)) << gk_type_name(t);
            alone.emplace_back(static_cast<const uint32_t *>(y->data), static_cast<const uint32_t *>(y->data) + M);
        }
        for (int64_t N : {2, 3, 7, 16, 17, 63, 64, 65, 127, 128, 129, 130}) {  // 64 and 128: panel edges
            for (int nth : {1, 3}) {
                gk_tensor * cols = gk_view_2d(e.ctx, b, K, N, b->nb[1], 0);
                gk_tensor * y    = gk_mul_mat(e.ctx, a, cols);
                ASSERT_TRUE(compute(e.ctx, y, nth)) << gk_type_name(t);
                for (int64_t n = 0; n < N; ++n) {
                    const auto * got = reinterpret_cast<const uint32_t *>(static_cast<const char *>(y->data) + n * y->nb[1]);
                    for (int64_t m = 0; m < M; ++m) {
                        ASSERT_EQ(got[m], alone[static_cast<size_t>(n)][static_cast<size_t>(m)])
                            << gk_type_name(t) << " N=" << N << " threads=" << nth << " column " << n << " row " << m;
                    }
                }
            }
        }
    }
    EXPECT_GT(types, 20);
}

TEST(OpsMatmul, MulMatId) {
    env           e;
    const int64_t K = 32, M = 7, E = 4, B1 = 2, T = 5, U = 4;
    gk_tensor *   as  = e.f32(K, M, E);
    gk_tensor *   b   = e.f32(K, B1, T);
    gk_tensor *   ids = e.indices(E, U, T);
    gk_tensor *   y   = gk_mul_mat_id(e.ctx, as, b, ids);
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          va = values(as), vb = values(b), vi = values(ids);
    std::vector<double> ref;
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t u = 0; u < U; ++u) {
            const auto ex = static_cast<int64_t>(vi[flat(ids->ne, u, t)]);
            for (int64_t m = 0; m < M; ++m) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k) {
                    s += va[flat(as->ne, k, m, ex)] * vb[flat(b->ne, k, u % B1, t)];
                }
                ref.push_back(s);
            }
        }
    }
    expect_close(y, ref, 1e-5, 1e-5, "mul_mat_id");
    static_cast<int32_t *>(ids->data)[3] = static_cast<int32_t>(E);
    gk_cgraph * g = gk_new_graph(e.ctx);
    gk_build_forward_expand(g, y);
    EXPECT_EQ(gk_graph_compute(g, 2), GK_STATUS_OUT_OF_RANGE);
}

TEST(OpsMatmul, OutProd) {
    env         e;
    gk_tensor * a = e.f32(6, 9, 2);
    gk_tensor * b = e.f32(5, 9, 4);
    gk_tensor * y = gk_out_prod(e.ctx, a, b);
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          va = values(a), vb = values(b);
    std::vector<double> ref;
    for (int64_t i2 = 0; i2 < 4; ++i2) {
        for (int64_t n = 0; n < 5; ++n) {
            for (int64_t m = 0; m < 6; ++m) {
                double s = 0;
                for (int64_t k = 0; k < 9; ++k) {
                    s += va[flat(a->ne, m, k, i2 / 2)] * vb[flat(b->ne, n, k, i2)];
                }
                ref.push_back(s);
            }
        }
    }
    expect_close(y, ref, 1e-6, 1e-5, "out_prod");
}

} // namespace
