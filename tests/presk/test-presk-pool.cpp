// The worker pool (kernel/pool.h), divided launches (kernel/launch.h) and the split rule and
// work estimate they follow (kernel/native.h). No machine-code backend is needed: the kernels
// launched here are lowered by kernel::lower and their bodies written by hand in C++ to
// presk_kernel_fn's contract (iterations [lo, hi) of the split loop, the interpreter's order
// of operations), checked first against the kernel interpreter bit for bit. Then one worker
// and 2, 3 and 7 give the same bits, element by element (the seed's "Threads": "bit-identical
// buffers in f64 and in f32 ... asserted element by element rather than within a tolerance"),
// and a failure reports the lowest failing piece, which is the failure one thread meets first.
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "core/prims.h"
#include "kernel/eval.h"
#include "kernel/launch.h"
#include "kernel/lower.h"
#include "kernel/native.h"
#include "kernel/pool.h"
#include "lang/source.h"

namespace presk {
namespace {

using namespace kernel;

constexpr int kWorkerCounts[] = {1, 2, 3, 7};

Axis p(int64_t n) { return Axis{"", n}; }
TypeP real_t(std::vector<Axis> axes) { return tensor_type(Elem::Real, std::move(axes)); }
TypeP int_t(std::vector<Axis> axes, int64_t bound) { return tensor_type(Elem::Int, std::move(axes), bound); }

Kernel lowered(const std::string& prim, std::vector<TypeP> ops, DType t = DType::F32, std::vector<int64_t> ints = {}) {
    return lower(Node{prim, ints, "", ops, core::prim_type(prim, ops, ints, "")}, t);
}

// --- the pool ---

TEST(Pool, RunsEveryTaskOnce) {
    for (int w : kWorkerCounts) {
        Pool pool(w);
        EXPECT_EQ(pool.size(), w);
        for (int64_t n : {0, 1, 2, 3, 5, 7, 64, 1000}) {
            std::vector<std::atomic<int>> count((size_t)n);
            pool.run(n, [&](int64_t i) { count[(size_t)i].fetch_add(1); });
            for (int64_t i = 0; i < n; ++i) ASSERT_EQ(count[(size_t)i].load(), 1) << w << " workers, task " << i << " of " << n;
        }
    }
}

TEST(Pool, WorkerWRunsTasksWModuloP) {
    Pool pool(3);
    std::vector<std::thread::id> by((size_t)8);
    pool.run(8, [&](int64_t i) { by[(size_t)i] = std::this_thread::get_id(); });
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(by[(size_t)i], by[(size_t)(i % 3)]) << "task " << i;
    EXPECT_EQ(by[0], std::this_thread::get_id());
    EXPECT_NE(by[1], by[0]);
    EXPECT_NE(by[2], by[0]);
    EXPECT_NE(by[2], by[1]);
}

TEST(Pool, OneWorkerRunsInlineInOrder) {
    Pool pool(1);
    std::vector<int64_t> order;
    pool.run(5, [&](int64_t i) { order.push_back(i); });
    const std::thread::id me = std::this_thread::get_id();
    bool inline_all = true;
    pool.run(3, [&](int64_t) { inline_all = inline_all && std::this_thread::get_id() == me; });
    EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_TRUE(inline_all);
}

// Many short runs in a row, with pauses long enough for the workers to park: every post is
// seen once and every run waits for all of its tasks.
TEST(Pool, ManySmallRunsParkAndWake) {
    Pool pool(4);
    std::vector<int64_t> sum(4, 0);
    const int runs = 1000;
    for (int r = 0; r < runs; ++r) {
        pool.run(4, [&](int64_t i) { sum[(size_t)i] += i + 1; });
        if (r % 250 == 249) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(sum[(size_t)i], runs * (i + 1));
}

TEST(Pool, DestroyedWhileIdle) {
    { Pool never_ran(3); }
    {
        Pool pool(5);
        std::atomic<int> n{0};
        pool.run(5, [&](int64_t) { n.fetch_add(1); });
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the workers park
        EXPECT_EQ(n.load(), 5);
    }
    {
        Pool pool(2);
        pool.run(2, [](int64_t) {});  // destroyed while the worker may still spin
    }
}

TEST(Pool, RefusesNoWorkers) {
    try {
        Pool pool(0);
        FAIL() << "Pool(0) accepted";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "worker pool: 0 workers (at least 1)");
    }
}

TEST(Pool, DefaultThreads) {
    const int n = default_threads();
    EXPECT_GE(n, 1);
    if (std::thread::hardware_concurrency() > 0) {
        EXPECT_LE(n, (int)std::thread::hardware_concurrency());
    }
}

// --- the split rule and the work estimate ---

TEST(SplitRule, LoweredKernels) {
    const auto dot = split_loop(lowered("dot", {real_t({Axis{"batch", 4}, p(3)}), real_t({p(3), p(2)})}));
    ASSERT_TRUE(dot);
    EXPECT_EQ(dot->var, 0);
    EXPECT_EQ(dot->lo, 0);
    EXPECT_EQ(dot->hi, 4);
    EXPECT_TRUE(split_loop(lowered("dot", {real_t({p(5), p(5)}), real_t({p(5), p(16)})})));  // tiled
    EXPECT_TRUE(split_loop(lowered("add", {real_t({p(5), p(3)}), real_t({p(3)})})));
    EXPECT_TRUE(split_loop(lowered("softmax", {real_t({p(2), p(3), p(6)})})));
    EXPECT_TRUE(split_loop(lowered("cross_entropy", {real_t({p(3), p(7)}), int_t({p(3)}, 7)})));
    EXPECT_TRUE(split_loop(lowered("embed", {real_t({p(7), p(4)}), int_t({p(2), p(3)}, 7)})));
    // embed's vjp: zeroes the table, then adds rows at loaded ids.
    EXPECT_FALSE(split_loop(
        lowered("scatter_add", {real_t({p(2), p(3), p(4)}), int_t({p(2), p(3)}, 3), real_t({p(7), p(4)})})));
    // A sum of everything keeps its one accumulator outside any loop.
    EXPECT_FALSE(split_loop(lowered("sum", {real_t({p(3), p(4)})})));
    // A sum over the first axis is lowered with the kept axes outermost and the summed axis
    // innermost, so its outer loop writes one output row per iteration and does split.
    const auto sum0 = split_loop(lowered("sum", {real_t({p(3), p(4), p(5)})}, DType::F32, {0}));
    ASSERT_TRUE(sum0);
    EXPECT_EQ(sum0->hi, 4);
    // One iteration: nothing to divide.
    EXPECT_FALSE(split_loop(lowered("add", {real_t({p(1), p(3)}), real_t({p(3)})})));
}

Kernel one_loop(std::vector<Stmt> body, int out_rank = 1, int64_t n = 4) {
    Kernel k;
    k.name = "hand";
    k.dtype = DType::F32;
    k.inputs = {BufferType{DType::F32, std::vector<Axis>((size_t)out_rank, p(n))}};
    k.output = BufferType{DType::F32, std::vector<Axis>((size_t)out_rank, p(n))};
    k.body = {for_loop(0, 0, n, std::move(body))};
    return k;
}

TEST(SplitRule, HandBuiltKernels) {
    const ExprP i0 = loop_var(0), i1 = loop_var(1), x = load(0, {i0}), s0 = scalar_var(0);
    // out[i0] = x[i0]: splits.
    EXPECT_TRUE(split_loop(one_loop({store(1, {i0}, x)})));
    // Two stores that index by i0 at different positions: iteration a writes out[a, b] and
    // iteration b writes it too.
    const ExprP x2 = load(0, {i0, i1});
    EXPECT_FALSE(split_loop(one_loop({for_loop(1, 0, 4, {store(1, {i0, i1}, x2), store(1, {i1, i0}, x2)})}, 2)));
    EXPECT_TRUE(split_loop(one_loop({for_loop(1, 0, 4, {store(1, {i0, i1}, x2), store(1, {i0, integer(0)}, x2)})}, 2)));
    // A store at a position other than i0's.
    EXPECT_FALSE(split_loop(one_loop({store(1, {integer(0)}, x)})));
    // A load of the output at another iteration's element.
    EXPECT_FALSE(split_loop(one_loop({store(1, {i0}, load(1, {integer(0)}))})));
    EXPECT_TRUE(split_loop(one_loop({store(1, {i0}, x), store(1, {i0}, binary("add", load(1, {i0}), x))})));
    // A vector store along the last axis from i0 covers i0..i0+3: neighbours overlap.
    EXPECT_FALSE(split_loop(one_loop({vstore(1, {i0}, vload(0, {i0}, 4))}, 1, 8)));
    EXPECT_TRUE(split_loop(one_loop({vstore(1, {i0, integer(0)}, vload(0, {i0, integer(0)}, 4))}, 2, 8)));
    // A running value carried from one iteration to the next (a prefix sum), assigned only in
    // the first iteration or only on one branch: no split.
    EXPECT_FALSE(split_loop(one_loop({assign(0, binary("add", s0, x)), store(1, {i0}, s0)})));
    EXPECT_FALSE(split_loop(one_loop({if_else(compare("eq", i0, integer(0)), {assign(0, real(0))}),
                                      assign(0, binary("add", s0, x)), store(1, {i0}, s0)})));
    EXPECT_FALSE(split_loop(one_loop({for_loop(1, 0, 4, {store(1, {i0}, s0), assign(0, x)})})));
    // Assigned on both branches, or before the loop that reads it: splits.
    EXPECT_TRUE(split_loop(one_loop({if_else(compare("eq", i0, integer(0)), {assign(0, real(0))}, {assign(0, x)}),
                                     store(1, {i0}, s0)})));
    EXPECT_TRUE(split_loop(one_loop({assign(0, real(0)), for_loop(1, 0, 4, {assign(0, binary("add", s0, x))}),
                                     store(1, {i0}, s0)})));
    // Assigned in a loop that may run no iteration, then read.
    EXPECT_FALSE(split_loop(one_loop({for_loop(1, 0, 0, {assign(0, x)}), store(1, {i0}, s0)})));
    EXPECT_TRUE(split_loop(one_loop({for_loop(1, 0, 1, {assign(0, x)}), store(1, {i0}, s0)})));
    // The integer n0 is not the real s0.
    EXPECT_FALSE(split_loop(one_loop({assign(0, integer(1)), store(1, {i0}, s0)})));
}

TEST(SplitRule, Work) {
    // for i0 in 0..4 { %1[i0] = exp(%0[i0]) }: per iteration the loop 1, the store 1, its
    // index i0 1, exp 16, the load 1 and its index 1: 4 * 21.
    EXPECT_EQ(work(one_loop({store(1, {loop_var(0)}, unary("exp", load(0, {loop_var(0)})))})), 84);
    // An If counts its condition and the larger branch.
    const ExprP c = compare("lt", loop_var(0), integer(2));
    EXPECT_EQ(work(one_loop({if_else(c, {store(1, {loop_var(0)}, real(1))}, {})})), 4 * (1 + 3 + 3));
    // The lowered dot at [4, 3] x [3, 2]: for i0 { zero a row; for i1 { s0 = ...; for i2 { ... } } }.
    EXPECT_EQ(work(lowered("dot", {real_t({Axis{"batch", 4}, p(3)}), real_t({p(3), p(2)})})), 416);
}

// --- launches ---

// Calls of the hand-written kernels, recorded to check how a launch divides.
std::mutex g_mu;
std::vector<Range> g_calls;

void record(int64_t lo, int64_t hi) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_calls.push_back({lo, hi});
}

std::vector<Range> take_calls() {
    std::lock_guard<std::mutex> lock(g_mu);
    std::vector<Range> c = std::move(g_calls);
    g_calls.clear();
    std::sort(c.begin(), c.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
    return c;
}

// The lowered row-wise dot (%0 : [M, K], %1 : [K, N]) -> %2 : [M, N] as the lowering writes it:
// for i0 { for i2 { %2[i0, i2] = 0 }; for i1 { s0 = %0[i0, i1]; for i2 { %2[i0, i2] =
// %2[i0, i2] + s0 * %1[i1, i2] } } }, in the arithmetic type R.
template <class R, int64_t M, int64_t K, int64_t N>
int dot_kernel(void* const* bufs, int64_t lo, int64_t hi, int64_t*) {
    record(lo, hi);
    const R* a = static_cast<const R*>(bufs[0]);
    const R* b = static_cast<const R*>(bufs[1]);
    R* c = static_cast<R*>(bufs[2]);
    for (int64_t i = lo; i < hi; ++i) {
        for (int64_t j = 0; j < N; ++j) c[i * N + j] = 0;
        for (int64_t k = 0; k < K; ++k) {
            const R s = a[i * K + k];
            for (int64_t j = 0; j < N; ++j) c[i * N + j] = c[i * N + j] + s * b[k * N + j];
        }
    }
    return PRESK_OK;
}

// The lowered embed (%0 : [V, D], %1 : i64[n]) -> %2 : [n, D]: for i0 { n0 = %1[i0]; for i1 {
// %2[i0, i1] = %0[n0, i1] } }. An id outside the table fails at access 1 (the table's load;
// access 0 is the id's), axis 0.
template <int64_t V, int64_t D>
int embed_kernel(void* const* bufs, int64_t lo, int64_t hi, int64_t* err) {
    record(lo, hi);
    const float* tab = static_cast<const float*>(bufs[0]);
    const int64_t* ids = static_cast<const int64_t*>(bufs[1]);
    float* out = static_cast<float*>(bufs[2]);
    for (int64_t i = lo; i < hi; ++i) {
        const int64_t id = ids[i];
        if (id < 0 || id >= V) {
            err[0] = 1, err[1] = 0, err[2] = id;
            return PRESK_INDEX_OUT_OF_RANGE;
        }
        for (int64_t j = 0; j < D; ++j) out[i * D + j] = tab[id * D + j];
    }
    return PRESK_OK;
}

// Reals drawn from a fixed sequence, exact in f32 and bf16-free (any values would do).
std::vector<double> draw(int64_t n, uint64_t seed) {
    std::vector<double> v((size_t)n);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (double& x : v) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = (double)(int64_t)(s >> 40) / (double)(1 << 23) - 1.0;
        x = (double)(float)(x * 1.2345678);
    }
    return v;
}

template <class R>
std::vector<R> as(const std::vector<double>& v) {
    return std::vector<R>(v.begin(), v.end());
}

uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }
uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

template <class R>
void dot_bit_identical(DType t) {
    constexpr int64_t M = 101, K = 64, N = 70;  // 101 rows: pieces of unequal length
    const Kernel k = lowered("dot", {real_t({p(M), p(K)}), real_t({p(K), p(N)})}, t);
    ASSERT_TRUE(split_loop(k));
    ASSERT_GT(work(k), kSplitWork);
    // The interpreter's bits.
    Data a = Data::from_reals(t, draw(M * K, 1)), b = Data::from_reals(t, draw(K * N, 2)), want;
    run(k, {&a, &b}, want);
    std::vector<R> ra = as<R>(a.reals()), rb = as<R>(b.reals());
    const NativeCode code{dot_kernel<R, M, K, N>, nullptr, ""};
    auto check = [&](Pool* pool, size_t pieces) {
        std::vector<R> out((size_t)(M * N), (R)-7);
        void* bufs[] = {ra.data(), rb.data(), out.data()};
        take_calls();
        launch(k, code, bufs, pool);
        const std::vector<Range> calls = take_calls();
        ASSERT_EQ(calls.size(), pieces);
        for (size_t t = 0; t < calls.size(); ++t) {
            const Range r = piece(0, M, (int64_t)pieces, (int64_t)t);
            EXPECT_EQ(calls[t].lo, r.lo);
            EXPECT_EQ(calls[t].hi, r.hi);
        }
        for (size_t e = 0; e < out.size(); ++e)
            ASSERT_EQ(bits(out[e]), bits((R)want.real((int64_t)e))) << (pool ? pool->size() : 0) << " workers, element " << e;
    };
    check(nullptr, 1);
    for (int w : kWorkerCounts) {
        Pool pool(w);
        for (int rep = 0; rep < 3; ++rep) check(&pool, (size_t)w);
    }
}

TEST(Launch, DotBitIdenticalAtEveryWorkerCountF32) { dot_bit_identical<float>(DType::F32); }
TEST(Launch, DotBitIdenticalAtEveryWorkerCountF64) { dot_bit_identical<double>(DType::F64); }

TEST(Launch, SmallKernelRunsWhole) {
    const Kernel k = lowered("dot", {real_t({p(4), p(3)}), real_t({p(3), p(2)})});
    ASSERT_LT(work(k), kSplitWork);
    std::vector<float> a(12, 1), b(6, 2), c(8, 0);
    void* bufs[] = {a.data(), b.data(), c.data()};
    Pool pool(3);
    take_calls();
    launch(k, NativeCode{dot_kernel<float, 4, 3, 2>, nullptr, ""}, bufs, &pool);
    const std::vector<Range> calls = take_calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].lo, 0);
    EXPECT_EQ(calls[0].hi, 4);
    EXPECT_EQ(c, std::vector<float>(8, 6));
}

int stub_kernel(void* const*, int64_t lo, int64_t hi, int64_t*) {
    record(lo, hi);
    return PRESK_OK;
}

TEST(Launch, NoSplitLoopRunsOnceWithAnEmptyRange) {
    // embed's vjp at a size whose work is above the threshold: still one call.
    const Kernel k = lowered("scatter_add", {real_t({p(64), p(256), p(64)}), int_t({p(64), p(256)}, 50), real_t({p(50), p(64)})});
    ASSERT_FALSE(split_loop(k));
    ASSERT_GT(work(k), kSplitWork);
    Pool pool(3);
    take_calls();
    launch(k, NativeCode{stub_kernel, nullptr, ""}, nullptr, &pool);
    const std::vector<Range> calls = take_calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].lo, 0);
    EXPECT_EQ(calls[0].hi, 0);
}

TEST(Launch, FailureOfTheLowestFailingPiece) {
    constexpr int64_t V = 5, D = 200, n = 3001;
    const Kernel k = lowered("embed", {real_t({p(V), p(D)}), int_t({p(n)}, V)});
    ASSERT_TRUE(split_loop(k));
    ASSERT_GT(work(k), kSplitWork);
    const std::vector<float> tab = as<float>(draw(V * D, 3));
    std::vector<int64_t> ids((size_t)n);
    for (int64_t i = 0; i < n; ++i) ids[(size_t)i] = i % V;
    // Good ids first: the interpreter's bits at 3 workers.
    {
        Data dt = Data::from_reals(DType::F32, std::vector<double>(tab.begin(), tab.end())), di = Data::from_ints(ids), want;
        run(k, {&dt, &di}, want);
        std::vector<float> out((size_t)(n * D));
        void* bufs[] = {const_cast<float*>(tab.data()), ids.data(), out.data()};
        Pool pool(3);
        launch(k, NativeCode{embed_kernel<V, D>, nullptr, ""}, bufs, &pool);
        for (size_t e = 0; e < out.size(); ++e) ASSERT_EQ(bits(out[e]), bits((float)want.real((int64_t)e))) << e;
    }
    // Bad ids in several pieces at every count: the first in index order is reported.
    ids[1500] = 7;
    ids[2000] = 9;
    ids[2900] = -3;
    const std::string first = "kernel embed: %0 index 7 out of range: axis 0 has size 5";
    std::vector<float> out((size_t)(n * D));
    void* bufs[] = {const_cast<float*>(tab.data()), ids.data(), out.data()};
    auto message = [&](Pool* pool) {
        try {
            launch(k, NativeCode{embed_kernel<V, D>, nullptr, ""}, bufs, pool);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no failure");
    };
    EXPECT_EQ(message(nullptr), first);
    for (int w : kWorkerCounts) {
        Pool pool(w);
        for (int rep = 0; rep < 10; ++rep) EXPECT_EQ(message(&pool), first) << w << " workers";
    }
    take_calls();
}

TEST(Launch, RefusesCodeWithoutAFunction) {
    const Kernel k = lowered("add", {real_t({p(2)}), real_t({p(2)})});
    try {
        launch(k, NativeCode{}, nullptr, nullptr);
        FAIL() << "launched nothing";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "kernel add: no machine code to launch");
    }
}

TEST(Launch, Pieces) {
    EXPECT_EQ(piece(0, 10, 3, 0).lo, 0);
    EXPECT_EQ(piece(0, 10, 3, 0).hi, 4);
    EXPECT_EQ(piece(0, 10, 3, 1).lo, 4);
    EXPECT_EQ(piece(0, 10, 3, 1).hi, 7);
    EXPECT_EQ(piece(0, 10, 3, 2).lo, 7);
    EXPECT_EQ(piece(0, 10, 3, 2).hi, 10);
    for (int64_t n = 1; n <= 40; ++n) {
        for (int64_t m = 1; m <= n; ++m) {
            int64_t at = 5;
            for (int64_t t = 0; t < m; ++t) {
                const Range r = piece(5, 5 + n, m, t);
                ASSERT_EQ(r.lo, at);
                ASSERT_GE(r.hi - r.lo, n / m);
                ASSERT_LE(r.hi - r.lo, n / m + 1);
                at = r.hi;
            }
            ASSERT_EQ(at, 5 + n);
        }
    }
}

} // namespace
} // namespace presk
