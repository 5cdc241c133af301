// test-ops-window - win_part, win_unpart, get_rel_pos and add_rel_pos against references
// computed here, and bad input.
#include "op_check.h"

namespace {

using namespace gk_test;

TEST(OpsWindow, PartPadsAndUnpartRestores) {
    env           e;
    const int64_t C = 3, W = 7, H = 5;
    const int     w = 3;
    gk_tensor *   a = e.f32(C, W, H);
    gk_tensor *   p = gk_win_part(e.ctx, a, w);
    ASSERT_TRUE(compute(e.ctx, p, 4));
    const int64_t npx = 3, npy = 2;
    ASSERT_EQ(p->ne[3], npx * npy);
    const auto          va = values(a);
    std::vector<double> ref;
    for (int64_t win = 0; win < npx * npy; ++win)
        for (int64_t i2 = 0; i2 < w; ++i2)
            for (int64_t i1 = 0; i1 < w; ++i1)
                for (int64_t c = 0; c < C; ++c) {
                    const int64_t x = (win % npx) * w + i1, y = (win / npx) * w + i2;
                    ref.push_back(x < W && y < H ? va[flat(a->ne, c, x, y)] : 0.0);
                }
    expect_close(p, ref, 0, 0, "win_part");

    gk_tensor * u = gk_win_unpart(e.ctx, p, static_cast<int>(W), static_cast<int>(H), w);
    ASSERT_TRUE(compute(e.ctx, u, 3));
    expect_close(u, va, 0, 0, "win_unpart(win_part(a)) == a");

    gk_tensor * h  = e.rand(GK_TYPE_F16, 4, 5, 4);
    gk_tensor * ph = gk_win_part(e.ctx, h, 2);
    gk_tensor * uh = gk_win_unpart(e.ctx, ph, 5, 4, 2);
    ASSERT_TRUE(compute(e.ctx, uh, 2));
    expect_close(uh, values(h), 0, 0, "f16 round trip");
}

TEST(OpsWindow, GetRelPos) {
    env         e;
    const int   q = 6;
    gk_tensor * a = e.rand(GK_TYPE_F16, 5, 2 * q - 1);
    gk_tensor * y = gk_get_rel_pos(e.ctx, a, q, q);
    ASSERT_TRUE(compute(e.ctx, y, 3));
    EXPECT_EQ(y->type, GK_TYPE_F16);
    const auto          va = values(a);
    std::vector<double> ref;
    for (int64_t qi = 0; qi < q; ++qi)
        for (int64_t k = 0; k < q; ++k)
            for (int64_t c = 0; c < 5; ++c) ref.push_back(va[flat(a->ne, c, q - 1 - k + qi)]);
    expect_close(y, ref, 0, 0, "get_rel_pos");
}

TEST(OpsWindow, AddRelPos) {
    env           e;
    const int64_t k = 4, qw = 3, qh = 2, n = 2;
    gk_tensor *   a  = e.f32(k * k, qw * qh, n);
    gk_tensor *   pw = e.f32(k, qw, qh, n);
    gk_tensor *   ph = e.f32(k, qw, qh, n);
    gk_tensor *   y  = gk_add_rel_pos(e.ctx, a, pw, ph);
    ASSERT_TRUE(compute(e.ctx, y, 4));
    const auto          va = values(a), vw = values(pw), vh = values(ph);
    std::vector<double> ref;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t r = 0; r < qw * qh; ++r)
            for (int64_t kh = 0; kh < k; ++kh)
                for (int64_t kw = 0; kw < k; ++kw) {
                    const size_t q = static_cast<size_t>((i * qw * qh + r) * k);
                    ref.push_back(va[flat(a->ne, kh * k + kw, r, i)] + vh[q + kh] + vw[q + kw]);
                }
    expect_close(y, ref, 1e-6, 1e-6, "add_rel_pos");

    gk_tensor * yi = gk_add_rel_pos_inplace(e.ctx, a, pw, ph);
    ASSERT_TRUE(compute(e.ctx, yi, 2));
    EXPECT_EQ(yi->data, a->data);
    expect_close(a, values(y), 0, 0, "add_rel_pos_inplace == add_rel_pos");
}

TEST(OpsWindow, BadInputIsRefused) {
    env        e;
    const auto bad = [&](gk_tensor * r, const char * what, const char * expect) {
        expect_refused(e.ctx, r, what, expect);
    };
    bad(gk_win_part(e.ctx, e.f32(3, 4, 4), 0), "w = 0", "w = 0");
    bad(gk_win_part(e.ctx, e.f32(3, 4, 4, 2), 2), "4-d a", "at most 3");
    bad(gk_win_part(e.ctx, e.rand(GK_TYPE_Q8_0, 32, 4, 4), 2), "block type", "block type");
    bad(gk_win_unpart(e.ctx, e.f32(3, 2, 2, 3), 4, 4, 2), "too few windows", "windows");
    bad(gk_win_unpart(e.ctx, e.f32(3, 2, 3, 4), 4, 4, 2), "not square windows", "windows");
    bad(gk_get_rel_pos(e.ctx, e.f32(5, 9), 5, 4), "qh != kh", "equal");
    bad(gk_get_rel_pos(e.ctx, e.f32(5, 8), 5, 5), "wrong length", "2 qh - 1");
    gk_tensor * a = e.f32(16, 6, 2);
    bad(gk_add_rel_pos(e.ctx, a, e.f32(4, 3, 2, 2), e.f32(4, 2, 3, 2)), "pw, ph differ", "shapes differ");
    bad(gk_add_rel_pos(e.ctx, a, e.f32(3, 3, 2, 2), e.f32(3, 3, 2, 2)), "k*k != ne0", "[k, qw, qh, n]");
    bad(gk_add_rel_pos(e.ctx, e.rand(GK_TYPE_F16, 16, 6, 2), e.f32(4, 3, 2, 2), e.f32(4, 3, 2, 2)), "f16 a",
        "must be f32");
}

} // namespace
