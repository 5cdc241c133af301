// test-ops-set - set (set_1d, set_2d, in place), acc and add1 against references computed
// here in double, and the builders' refusals of bad views.
#include "op_check.h"

#include "quant/fp16.h"

namespace {

using namespace gk_test;

/// a's values with b written (or added, acc) at the view (nb1..nb3, offset) of a's bytes.
std::vector<double> view_reference(const gk_tensor * a, const gk_tensor * b, size_t nb1, size_t nb2, size_t nb3,
                                   size_t offset, bool acc) {
    std::vector<double> ref = values(a);
    const auto          vb  = values(b);
    const size_t        esz = gk_type_size(a->type);
    for (int64_t i3 = 0; i3 < b->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < b->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < b->ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < b->ne[0]; ++i0) {
                    const size_t e = (offset + i0 * esz + i1 * nb1 + i2 * nb2 + i3 * nb3) / esz;
                    const double x = vb[flat(b->ne, i0, i1, i2, i3)];
                    ref[e]         = acc ? ref[e] + x : x;
                }
    return ref;
}

TEST(OpsSet, SetWritesTheViewAndKeepsTheRest) {
    env         e;
    gk_tensor * a   = e.f32(10, 6, 3);
    gk_tensor * b   = e.f32(4, 3, 2);
    const auto  ref = view_reference(a, b, a->nb[1] * 2, a->nb[2], 0, 3 * sizeof(float) + a->nb[1], false);
    gk_tensor * y   = gk_set(e.ctx, a, b, a->nb[1] * 2, a->nb[2], 0, 3 * sizeof(float) + a->nb[1]);
    ASSERT_TRUE(compute(e.ctx, y, 4));
    expect_close(y, ref, 0, 0, "set");
    EXPECT_NE(y->data, a->data);

    gk_tensor * c    = e.f32(7);
    const auto  ref1 = view_reference(a, c, a->nb[1], a->nb[2], a->nb[3], 13 * sizeof(float), false);
    gk_tensor * y1   = gk_set_1d(e.ctx, a, c, 13 * sizeof(float));  // crosses a row boundary
    ASSERT_TRUE(compute(e.ctx, y1, 3));
    expect_close(y1, ref1, 0, 0, "set_1d");

    gk_tensor * d    = e.f32(5, 4);
    const auto  ref2 = view_reference(a, d, a->nb[1], a->nb[2], a->nb[3], a->nb[2] + 2 * sizeof(float), false);
    gk_tensor * y2   = gk_set_2d(e.ctx, a, d, a->nb[1], a->nb[2] + 2 * sizeof(float));
    ASSERT_TRUE(compute(e.ctx, y2, 2));
    expect_close(y2, ref2, 0, 0, "set_2d");
}

TEST(OpsSet, SetInPlaceOfOtherTypes) {
    env         e;
    gk_tensor * a   = e.indices(1000, 8, 5);
    gk_tensor * b   = e.indices(1000, 3, 2);
    const auto  ref = view_reference(a, b, a->nb[1] * 3, a->nb[2], a->nb[3], 4 * sizeof(int32_t), false);
    gk_tensor * y   = gk_set_2d_inplace(e.ctx, a, b, a->nb[1] * 3, 4 * sizeof(int32_t));
    ASSERT_TRUE(compute(e.ctx, y, 5));
    EXPECT_EQ(y->data, a->data);
    expect_close(a, ref, 0, 0, "set_2d_inplace i32");

    gk_tensor * h    = e.rand(GK_TYPE_F16, 16, 4);
    gk_tensor * hb   = e.rand(GK_TYPE_F16, 16);
    const auto  refh = view_reference(h, hb, h->nb[1], h->nb[2], h->nb[3], h->nb[1] * 2, false);
    gk_tensor * yh   = gk_set_1d_inplace(e.ctx, h, hb, h->nb[1] * 2);
    ASSERT_TRUE(compute(e.ctx, yh, 2));
    expect_close(h, refh, 0, 0, "set_1d_inplace f16");
}

TEST(OpsSet, AccAddsIntoTheView) {
    env         e;
    gk_tensor * a   = e.f32(9, 7, 2);
    gk_tensor * b   = e.f32(3, 4, 2);
    const auto  ref = view_reference(a, b, a->nb[1], a->nb[2], a->nb[3], a->nb[1] + 5 * sizeof(float), true);
    gk_tensor * y   = gk_acc(e.ctx, a, b, a->nb[1], a->nb[2], a->nb[3], a->nb[1] + 5 * sizeof(float));
    ASSERT_TRUE(compute(e.ctx, y, 3));
    expect_close(y, ref, 0, 0, "acc");  // one f32 addition per element: exact in double

    gk_tensor * bh   = gk_transpose(e.ctx, e.rand(GK_TYPE_F16, 2, 3));  // strided f16 b
    const auto  refi = view_reference(a, bh, a->nb[1] * 2, a->nb[2], a->nb[3], 0, true);
    gk_tensor * yi   = gk_acc_inplace(e.ctx, a, bh, a->nb[1] * 2, a->nb[2], a->nb[3], 0);
    ASSERT_TRUE(compute(e.ctx, yi, 2));
    expect_close(a, refi, 0, 0, "acc_inplace");
}

TEST(OpsSet, Add1AddsTheScalar) {
    env         e;
    gk_tensor * a = e.f32(33, 5, 2);
    gk_tensor * s = e.f32(1);
    gk_tensor * y = gk_add1(e.ctx, a, s);
    ASSERT_TRUE(compute(e.ctx, y, 4));
    std::vector<double> ref;
    const double        sv = values(s)[0];
    for (double x : values(a)) {
        ref.push_back(static_cast<float>(x + sv));
    }
    expect_close(y, ref, 0, 0, "add1");

    gk_tensor *         h  = e.rand(GK_TYPE_F16, 20, 3);
    gk_tensor *         sh = e.rand(GK_TYPE_F16, 1);
    std::vector<double> refh;
    for (double x : values(h)) {
        refh.push_back(gk::fp16_to_fp32(gk::fp32_to_fp16(static_cast<float>(x + values(sh)[0]))));
    }
    gk_tensor * yh = gk_add1_inplace(e.ctx, h, sh);
    ASSERT_TRUE(compute(e.ctx, yh, 2));
    EXPECT_EQ(yh->data, h->data);
    expect_close(h, refh, 0, 0, "add1_inplace f16");
}

TEST(OpsSet, BadInputIsRefused) {
    env         e;
    gk_tensor * a   = e.f32(8, 4);
    gk_tensor * b   = e.f32(3, 2);
    const auto  bad = [&](gk_tensor * r, const char * what, const char * expect) {
        expect_refused(e.ctx, r, what, expect);
    };
    bad(gk_set(e.ctx, a, b, a->nb[1], 0, 0, 100 * sizeof(float)), "past the end", "past the");
    bad(gk_set(e.ctx, a, b, a->nb[1], 0, 0, 2), "misaligned offset", "multiple of 4");
    bad(gk_set(e.ctx, a, b, 6, 0, 0, 0), "misaligned stride", "multiple of 4");
    bad(gk_set(e.ctx, a, b, 2 * sizeof(float), 0, 0, 0), "overlapping rows", "overlap");
    bad(gk_acc(e.ctx, a, b, a->nb[1] * 4, 0, 0, 0), "view beyond a", "past the");
    bad(gk_set(e.ctx, a, e.rand(GK_TYPE_F16, 3), a->nb[1], 0, 0, 0), "type mismatch", "must be f32");
    bad(gk_set(e.ctx, e.rand(GK_TYPE_Q8_0, 32, 2), e.rand(GK_TYPE_Q8_0, 32), 34, 0, 0, 0), "block type", "block");
    bad(gk_acc(e.ctx, e.rand(GK_TYPE_F16, 8, 4), b, 16, 0, 0, 0), "acc of f16", "must be f32");
    bad(gk_set(e.ctx, gk_transpose(e.ctx, a), b, 16, 0, 0, 0), "non-contiguous a", "contiguous");
    bad(gk_set(e.ctx, a, b, size_t{1} << 33, 0, 0, 0), "stride beyond int32", "int32");
    bad(gk_add1(e.ctx, a, e.f32(2)), "non-scalar b", "scalar");
    bad(gk_add1(e.ctx, e.indices(3, 4), e.f32(1)), "i32 a", "f32, f16 or bf16");
    bad(gk_set_1d(e.ctx, nullptr, b, 0), "null a", "NULL");
}

} // namespace
