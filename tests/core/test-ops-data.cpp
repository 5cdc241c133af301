// test-ops-data - data movement (get_rows, set_rows, dup, cpy with conversion, cont,
// cast, repeat, concat, pad) and the generators (arange, timestep_embedding).
#include "op_check.h"

#include "quant/fp16.h"

namespace {

using namespace gk_test;

TEST(OpsData, GetRowsOfEveryKind) {
    for (gk_type t : {GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_Q4_0, GK_TYPE_Q6_K, GK_TYPE_I32}) {
        env         e;
        const int   n0 = gk_blck_size(t) > 1 ? 256 : 12;
        gk_tensor * a  = t == GK_TYPE_I32 ? e.indices(1 << 30, n0, 9, 2) : e.rand(t, n0, 9, 2);
        gk_tensor * b  = e.indices(9, 6, 2);
        gk_tensor * y  = gk_get_rows(e.ctx, a, b);
        ASSERT_TRUE(compute(e.ctx, y)) << gk_type_name(t);
        EXPECT_EQ(y->type, t == GK_TYPE_I32 ? GK_TYPE_I32 : GK_TYPE_F32);
        const auto          va = values(a), vb = values(b);
        std::vector<double> ref;
        for (int64_t i2 = 0; i2 < 2; ++i2) {
            for (int64_t r = 0; r < 6; ++r) {
                const auto src = static_cast<int64_t>(vb[flat(b->ne, r, i2)]);
                for (int64_t i = 0; i < n0; ++i) {
                    ref.push_back(va[flat(a->ne, i, src, i2)]);
                }
            }
        }
        expect_close(y, ref, 0, 0, gk_type_name(t));  // exact, large i32 values included
    }
}

TEST(OpsData, SetRowsLaterSourceWins) {
    env         e;
    gk_tensor * a   = e.rand(GK_TYPE_F16, 8, 10);
    gk_tensor * b   = e.f32(8, 4);
    gk_tensor * c   = e.indices(10, 4, 1, 1, GK_TYPE_I64);
    auto *      idx = static_cast<int64_t *>(c->data);
    idx[0] = 3, idx[1] = 7, idx[2] = 3, idx[3] = 0;
    auto        ref = values(a);
    const auto  vb  = values(b);
    gk_tensor * y   = gk_set_rows(e.ctx, a, b, c);
    ASSERT_TRUE(compute(e.ctx, y, 4));
    for (int r = 0; r < 4; ++r) {
        for (int i = 0; i < 8; ++i) {
            ref[static_cast<size_t>(idx[r] * 8 + i)] = gk::fp16_to_fp32(gk::fp32_to_fp16(static_cast<float>(vb[static_cast<size_t>(r * 8 + i)])));
        }
    }
    expect_close(a, ref, 0, 0, "set_rows");
    idx[1] = 10;
    gk_cgraph * g = gk_new_graph(e.ctx);
    gk_build_forward_expand(g, y);
    EXPECT_EQ(gk_graph_compute(g, 2), GK_STATUS_OUT_OF_RANGE);
}

TEST(OpsData, CopiesConvertExactly) {
    env         e;
    gk_tensor * a   = e.rand(GK_TYPE_F32, 64, 6, 1, 1, -50, 50);
    gk_tensor * h   = gk_new_tensor_2d(e.ctx, GK_TYPE_F16, 64, 6);
    gk_tensor * q   = gk_new_tensor_2d(e.ctx, GK_TYPE_Q8_0, 64, 6);
    gk_tensor * ch  = gk_cpy(e.ctx, a, h);
    gk_tensor * cq  = gk_cpy(e.ctx, a, q);
    gk_tensor * bf  = gk_cast(e.ctx, a, GK_TYPE_BF16);
    gk_tensor * dup = gk_dup(e.ctx, a);
    for (gk_tensor * t : {ch, cq, bf, dup}) {
        ASSERT_TRUE(compute(e.ctx, t));
    }
    const float *     av = static_cast<const float *>(a->data);
    std::vector<char> expect(gk_nbytes(q));
    gk::quant::quantize_rows(GK_TYPE_Q8_0, av, expect.data(), 6, 64, nullptr);
    EXPECT_EQ(std::memcmp(q->data, expect.data(), expect.size()), 0) << "cpy to q8_0 != the codec's encoding";
    for (int i = 0; i < 64 * 6; ++i) {
        ASSERT_EQ(static_cast<const uint16_t *>(h->data)[i], gk::fp32_to_fp16(av[i])) << i;
        ASSERT_EQ(static_cast<const uint16_t *>(bf->data)[i], gk::fp32_to_bf16(av[i])) << i;
    }
    expect_close(dup, values(a), 0, 0, "dup");
}

TEST(OpsData, ContOfPermutesAndReshapingCopies) {
    env         e;
    gk_tensor * a = e.f32(4, 5, 3, 2);
    gk_tensor * p = gk_permute(e.ctx, a, 1, 3, 0, 2);  // dim i of a -> dim axis_i
    gk_tensor * c = gk_cont(e.ctx, p);
    ASSERT_TRUE(compute(e.ctx, c));
    EXPECT_TRUE(gk_is_contiguous(c));
    expect_close(c, values(p), 0, 0, "cont");  // values() follows p's strides

    gk_tensor * t  = gk_transpose(e.ctx, e.f32(6, 10));
    gk_tensor * dd = gk_new_tensor_3d(e.ctx, GK_TYPE_F16, 4, 5, 3);
    gk_tensor * r  = gk_cpy(e.ctx, t, dd);  // [10, 6] -> [4, 5, 3], flat order
    ASSERT_TRUE(compute(e.ctx, r));
    std::vector<double> ref;
    for (double x : values(t)) {
        ref.push_back(gk::fp16_to_fp32(gk::fp32_to_fp16(static_cast<float>(x))));
    }
    expect_close(r, ref, 0, 0, "cpy reshaping");
    gk_tensor * c2 = gk_cont_2d(e.ctx, t, 20, 3);
    ASSERT_TRUE(compute(e.ctx, c2));
    expect_close(c2, values(t), 0, 0, "cont_2d");
}

TEST(OpsData, RepeatConcatPad) {
    env         e;
    gk_tensor * a  = e.f32(3, 2, 1, 2);
    gk_tensor * rp = gk_repeat(e.ctx, a, gk_new_tensor_4d(e.ctx, GK_TYPE_F32, 6, 4, 3, 2));
    ASSERT_TRUE(compute(e.ctx, rp));
    const auto          va = values(a);
    std::vector<double> ref;
    for (int64_t i3 = 0; i3 < 2; ++i3)
        for (int64_t i2 = 0; i2 < 3; ++i2)
            for (int64_t i1 = 0; i1 < 4; ++i1)
                for (int64_t i0 = 0; i0 < 6; ++i0) ref.push_back(va[flat(a->ne, i0 % 3, i1 % 2, 0, i3)]);
    expect_close(rp, ref, 0, 0, "repeat");

    for (int dim = 0; dim < 4; ++dim) {
        int64_t ne_b[4] = {3, 2, 1, 2};
        ne_b[dim] += 2;
        gk_tensor * b  = e.f32(ne_b[0], ne_b[1], ne_b[2], ne_b[3]);
        gk_tensor * cc = gk_concat(e.ctx, a, b, dim);
        ASSERT_TRUE(compute(e.ctx, cc));
        const auto vb = values(b);
        ref.clear();
        for (int64_t i3 = 0; i3 < cc->ne[3]; ++i3)
            for (int64_t i2 = 0; i2 < cc->ne[2]; ++i2)
                for (int64_t i1 = 0; i1 < cc->ne[1]; ++i1)
                    for (int64_t i0 = 0; i0 < cc->ne[0]; ++i0) {
                        int64_t j[4] = {i0, i1, i2, i3};
                        if (j[dim] < a->ne[dim]) {
                            ref.push_back(va[flat(a->ne, j[0], j[1], j[2], j[3])]);
                        } else {
                            j[dim] -= a->ne[dim];
                            ref.push_back(vb[flat(b->ne, j[0], j[1], j[2], j[3])]);
                        }
                    }
        expect_close(cc, ref, 0, 0, "concat");
    }

    gk_tensor * pd = gk_pad_ext(e.ctx, a, 1, 2, 0, 1, 2, 0, 0, 1);
    ASSERT_TRUE(compute(e.ctx, pd));
    ref.clear();
    for (int64_t i3 = 0; i3 < 3; ++i3)
        for (int64_t i2 = 0; i2 < 3; ++i2)
            for (int64_t i1 = 0; i1 < 3; ++i1)
                for (int64_t i0 = 0; i0 < 6; ++i0) {
                    const int64_t j0 = i0 - 1, j1 = i1, j2 = i2 - 2, j3 = i3;
                    const bool    in = j0 >= 0 && j0 < 3 && j1 < 2 && j2 >= 0 && j2 < 1 && j3 < 2;
                    ref.push_back(in ? va[flat(a->ne, j0, j1, j2, j3)] : 0.0);
                }
    expect_close(pd, ref, 0, 0, "pad_ext");
}

TEST(OpsData, Generators) {
    env         e;
    gk_tensor * ar = gk_arange(e.ctx, 2.0f, 9.5f, 1.5f);
    ASSERT_TRUE(compute(e.ctx, ar));
    EXPECT_EQ(ar->ne[0], 5);
    expect_close(ar, {2, 3.5, 5, 6.5, 8}, 0, 0, "arange");

    gk_tensor * ts = e.rand(GK_TYPE_F32, 4, 1, 1, 1, 0, 500);
    const int   dim = 9, half = 4;
    gk_tensor * te = gk_timestep_embedding(e.ctx, ts, dim, 10000);
    ASSERT_TRUE(compute(e.ctx, te));
    std::vector<double> ref;
    for (double t : values(ts)) {
        for (int i = 0; i < half; ++i) ref.push_back(std::cos(t * std::exp(-std::log(10000.0) * i / half)));
        for (int i = 0; i < half; ++i) ref.push_back(std::sin(t * std::exp(-std::log(10000.0) * i / half)));
        ref.push_back(0.0);
    }
    expect_close(te, ref, 2e-4, 0, "timestep_embedding");  // arguments up to 500 rad in f32
}

} // namespace
