// test-ops-custom - the custom-op hooks: map_custom1/2/3 (and _inplace), custom_4d and
// custom_inplace call their callback once per task with ith / nth, the values the
// callbacks write come back, n_tasks caps the calls, and bad input is refused.
#include "op_check.h"

#include <atomic>

namespace {

using namespace gk_test;

/// Rows [ith * n / nth, (ith + 1) * n / nth) of dst: the callbacks' split.
struct row_share {
    int64_t begin, end;
};

row_share share(const gk_tensor * dst, int ith, int nth) {
    const int64_t n = gk_nrows(dst);
    return {ith * n / nth, (ith + 1) * n / nth};
}

/// Counts calls per ith and records the largest nth seen.
struct call_log {
    std::atomic<int> calls[64] = {};
    std::atomic<int> nth{0};
    void             record(int ith, int n) {
                    calls[ith].fetch_add(1);
                    nth.store(n);
    }
};

float * row(const gk_tensor * t, int64_t r) {
    return reinterpret_cast<float *>(static_cast<char *>(t->data) + r * t->nb[1]);
}

void square(gk_tensor * dst, const gk_tensor * a, int ith, int nth, void * ud) {
    static_cast<call_log *>(ud)->record(ith, nth);
    const row_share s = share(dst, ith, nth);
    for (int64_t r = s.begin; r < s.end; ++r) {
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            row(dst, r)[i] = row(a, r)[i] * row(a, r)[i];
        }
    }
}

void fma3(gk_tensor * dst, const gk_tensor * a, const gk_tensor * b, const gk_tensor * c, int ith, int nth, void *) {
    const row_share s = share(dst, ith, nth);
    for (int64_t r = s.begin; r < s.end; ++r) {
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            row(dst, r)[i] = row(a, r)[i] * row(b, r)[i] + row(c, r)[i];
        }
    }
}

void subtract(gk_tensor * dst, const gk_tensor * a, const gk_tensor * b, int ith, int nth, void *) {
    const row_share s = share(dst, ith, nth);
    for (int64_t r = s.begin; r < s.end; ++r) {
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            row(dst, r)[i] = row(a, r)[i] - row(b, r)[i];
        }
    }
}

/// dst[i, r] = sum of src[1 ..] at (i, r) plus *userdata (a float).
void sum_args(gk_tensor * dst, int ith, int nth, void * ud) {
    const row_share s = share(dst, ith, nth);
    for (int64_t r = s.begin; r < s.end; ++r) {
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            float v = *static_cast<const float *>(ud);
            for (int k = 0; k < GK_MAX_SRC && dst->src[k]; ++k) {
                v += row(dst->src[k], r)[i];
            }
            row(dst, r)[i] = v;
        }
    }
}

TEST(OpsCustom, Map1CallsOncePerTask) {
    for (int n_tasks : {GK_N_TASKS_MAX, 2, 9}) {
        env         e;
        call_log    log;
        gk_tensor * a = e.f32(7, 13);
        gk_tensor * y = gk_map_custom1(e.ctx, a, square, n_tasks, &log);
        ASSERT_TRUE(compute(e.ctx, y, 4));
        const int expect = n_tasks == 2 ? 2 : 4;  // capped by the 4 threads
        EXPECT_EQ(log.nth.load(), expect) << n_tasks;
        for (int i = 0; i < 64; ++i) {
            EXPECT_EQ(log.calls[i].load(), i < expect ? 1 : 0) << "ith " << i << ", n_tasks " << n_tasks;
        }
        std::vector<double> ref;
        for (double x : values(a)) {
            ref.push_back(static_cast<float>(x * x));
        }
        expect_close(y, ref, 0, 0, "map_custom1");
    }
}

TEST(OpsCustom, Map2Map3AndInPlace) {
    env         e;
    gk_tensor * a  = e.f32(6, 9);
    gk_tensor * b  = e.f32(6, 9);
    gk_tensor * c  = e.f32(6, 9);
    const auto  va = values(a), vb = values(b), vc = values(c);
    gk_tensor * y3 = gk_map_custom3(e.ctx, a, b, c, fma3, GK_N_TASKS_MAX, nullptr);
    ASSERT_TRUE(compute(e.ctx, y3, 3));
    std::vector<double> r3, r2;
    for (size_t i = 0; i < va.size(); ++i) {
        r3.push_back(static_cast<float>(static_cast<float>(va[i] * vb[i]) + vc[i]));
        r2.push_back(static_cast<float>(va[i] - vb[i]));
    }
    expect_close(y3, r3, 0, 0, "map_custom3");
    gk_tensor * y2 = gk_map_custom2_inplace(e.ctx, a, b, subtract, 2, nullptr);
    ASSERT_TRUE(compute(e.ctx, y2, 5));
    EXPECT_EQ(y2->data, a->data);
    expect_close(a, r2, 0, 0, "map_custom2_inplace");
}

TEST(OpsCustom, Custom4dAndCustomInplace) {
    env         e;
    gk_tensor * args[3] = {e.f32(5, 8), e.f32(5, 8), e.f32(5, 8)};
    float       bias    = 0.5f;
    gk_tensor * y       = gk_custom_4d(e.ctx, GK_TYPE_F32, 5, 8, 1, 1, args, 3, sum_args, GK_N_TASKS_MAX, &bias);
    ASSERT_TRUE(compute(e.ctx, y, 3));
    const auto          v0 = values(args[0]), v1 = values(args[1]), v2 = values(args[2]);
    std::vector<double> ref;
    for (size_t i = 0; i < v0.size(); ++i) {
        ref.push_back(static_cast<float>(static_cast<float>(static_cast<float>(0.5f + v0[i]) + v1[i]) + v2[i]));
    }
    expect_close(y, ref, 0, 0, "custom_4d");

    gk_tensor *         a = e.f32(5, 8);
    std::vector<double> ri;
    const auto          va = values(a);
    for (size_t i = 0; i < va.size(); ++i) {
        ri.push_back(static_cast<float>(static_cast<float>(0.5f + va[i]) + v0[i]));
    }
    gk_tensor * yi = gk_custom_inplace(e.ctx, a, args, 1, sum_args, 3, &bias);
    ASSERT_TRUE(compute(e.ctx, yi, 4));
    EXPECT_EQ(yi->data, a->data);
    expect_close(a, ri, 0, 0, "custom_inplace");
}

TEST(OpsCustom, BadInputIsRefused) {
    env         e;
    gk_tensor * a   = e.f32(4, 4);
    const auto  bad = [&](gk_tensor * r, const char * what, const char * expect) {
        expect_refused(e.ctx, r, what, expect);
    };
    bad(gk_map_custom1(e.ctx, a, nullptr, 1, nullptr), "null callback", "callback is NULL");
    bad(gk_map_custom1(e.ctx, a, square, 0, nullptr), "n_tasks 0", "n_tasks = 0");
    bad(gk_map_custom2(e.ctx, a, nullptr, subtract, 1, nullptr), "null b", "NULL");
    gk_tensor * many[GK_MAX_SRC] = {};
    for (gk_tensor *& t : many) {
        t = a;
    }
    bad(gk_custom_4d(e.ctx, GK_TYPE_F32, 4, 4, 1, 1, many, GK_MAX_SRC, sum_args, 1, nullptr), "too many args",
        "n_args");
    bad(gk_custom_inplace(e.ctx, a, many, GK_MAX_SRC - 1, sum_args, 1, nullptr), "too many inplace args", "n_args");
    gk_tensor * with_null[2] = {a, nullptr};
    bad(gk_custom_4d(e.ctx, GK_TYPE_F32, 4, 4, 1, 1, with_null, 2, sum_args, 1, nullptr), "null arg", "args[1]");
    bad(gk_custom_4d(e.ctx, GK_TYPE_Q4_0, 5, 1, 1, 1, nullptr, 0, sum_args, 1, nullptr), "bad shape for type",
        "blocks");
}

} // namespace
