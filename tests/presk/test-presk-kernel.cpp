// PSK-Kernel v0: the printer against the seed's texts, the interpreter's arithmetic in f64, f32
// and bf16, its errors, and statement H (the vector form of a [1, 8]-tiled dot is
// bit-identical to its scalar form at two and four lanes).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernel/eval.h"
#include "kernel/ir.h"
#include "kernel/pmath.h"
#include "seed_kernels.h"
#include "lang/source.h"

namespace presk::kernel {
namespace {

ExprP i(int v) { return loop_var(v); }
ExprP s(int v) { return scalar_var(v); }
ExprP add(ExprP a, ExprP b) { return binary("add", std::move(a), std::move(b)); }
ExprP mul(ExprP a, ExprP b) { return binary("mul", std::move(a), std::move(b)); }

BufferType buf(DType t, std::vector<Axis> axes) { return {t, std::move(axes)}; }

// The seed's dot: x : [batch: M, K] . w : [K, N] in the row-wise form.
Kernel dot(DType t, int64_t M, int64_t K, int64_t N) {
    Kernel k;
    k.name = "dot";
    k.dtype = t;
    k.inputs = {buf(t, {{"batch", M}, {"", K}}), buf(t, {{"", K}, {"", N}})};
    k.output = buf(t, {{"batch", M}, {"", N}});
    k.body = {for_loop(0, 0, M,
                       {for_loop(2, 0, N, {store(2, {i(0), i(2)}, real(0))}),
                        for_loop(1, 0, K,
                                 {assign(0, load(0, {i(0), i(1)})),
                                  for_loop(2, 0, N,
                                           {store(2, {i(0), i(2)},
                                                  add(load(2, {i(0), i(2)}), mul(s(0), load(1, {i(1), i(2)}))))})})})};
    k.n_loops = 3;
    k.n_scalars = 1;
    return k;
}

TEST(KernelPrint, SeedDot) {
    EXPECT_EQ(to_string(dot(DType::F32, 4, 3, 2)), test::kSeedDot);
}

TEST(KernelPrint, SeedAdd) {
    Kernel k;
    k.name = "add";
    k.inputs = {buf(DType::F32, {{"batch", 4}, {"", 2}}), buf(DType::F32, {{"", 2}})};
    k.output = buf(DType::F32, {{"batch", 4}, {"", 2}});
    k.body = {for_loop(0, 0, 4, {for_loop(1, 0, 2, {store(2, {i(0), i(1)}, add(load(0, {i(0), i(1)}), load(1, {i(1)})))})})};
    EXPECT_EQ(to_string(k), test::kSeedAdd);
}

TEST(KernelPrint, ConditionsIntegersConstantsAndCalls) {
    Kernel k;
    k.name = "mix";
    k.dtype = DType::F64;
    k.inputs = {buf(DType::I64, {{"T", 3}}), buf(DType::BF16, {})};
    k.output = buf(DType::F64, {{"T", 3}});
    const ExprP n0 = scalar_var(0, true);
    k.body = {for_loop(0, 0, 3,
                       {assign(0, binary("mod", binary("div", load(0, {i(0)}, true), integer(2)), integer(-3))),
                        if_else(compare("lt", n0, i(0)),
                                {store(2, {i(0)}, select(compare("ge", s(1), real(0.5)), unary("exp", s(1)),
                                                         binary("max", real(-INFINITY), binary("pow", s(1), real(1e100)))))},
                                {assign(1, unary("neg", to_real(n0))),
                                 if_else(compare("ne", n0, integer(0)), {store(2, {i(0)}, load(1, {}))})})})};
    EXPECT_EQ(to_string(k),
              "kernel mix (%0 : i64[T: 3], %1 : bf16[]) -> %2 : f64[T: 3] {\n"
              "  for i0 in 0..3 {\n"
              "    n0 = ((%0[i0] / 2) % -3)\n"
              "    if (n0 < i0) {\n"
              "      %2[i0] = select((s1 >= 0.5), exp(s1), max(-inf, pow(s1, 1e+100)))\n"
              "    } else {\n"
              "      s1 = neg(real(n0))\n"
              "      if (n0 != 0) {\n"
              "        %2[i0] = %1[]\n"
              "      }\n"
              "    }\n"
              "  }\n"
              "}\n");
}

// The [1, 8]-tiled dot: eight output columns per step, accumulated in registers over k in
// increasing order. lanes = 1: eight scalars s1..s8; lanes = 2 or 4: 8 / lanes vectors.
Kernel tiled_dot(DType t, int64_t M, int64_t K, int64_t N, int lanes) {
    Kernel k = dot(t, M, K, N);
    const int groups = 8 / lanes;
    auto col = [&](int g) { return add(mul(i(3), integer(8)), integer(g * lanes)); };
    auto acc = [&](int g) { return lanes == 1 ? s(1 + g) : vector_var(g, lanes); };
    std::vector<Stmt> init, step = {assign(0, load(0, {i(0), i(1)}))}, out;
    for (int g = 0; g < groups; ++g) {
        init.push_back(assign(lanes == 1 ? 1 + g : g, lanes == 1 ? real(0) : splat(real(0), lanes)));
        const ExprP x = lanes == 1 ? s(0) : splat(s(0), lanes);
        const ExprP w = lanes == 1 ? load(1, {i(1), col(g)}) : vload(1, {i(1), col(g)}, lanes);
        step.push_back(assign(lanes == 1 ? 1 + g : g, add(acc(g), mul(x, w))));
        out.push_back(lanes == 1 ? store(2, {i(0), col(g)}, acc(g)) : vstore(2, {i(0), col(g)}, acc(g)));
    }
    std::vector<Stmt> tile = init;
    tile.push_back(for_loop(1, 0, K, step));
    tile.insert(tile.end(), out.begin(), out.end());
    k.name = "dot";
    k.body = {for_loop(0, 0, M, {for_loop(3, 0, N / 8, tile)})};
    k.n_loops = 4;
    k.n_scalars = lanes == 1 ? 9 : 1;
    k.n_vectors = lanes == 1 ? 0 : groups;
    return k;
}

TEST(KernelPrint, VectorForm) {
    EXPECT_EQ(to_string(tiled_dot(DType::F32, 2, 3, 8, 4)),
              "kernel dot (%0 : f32[batch: 2, 3], %1 : f32[3, 8]) -> %2 : f32[batch: 2, 8] {\n"
              "  for i0 in 0..2 {\n"
              "    for i3 in 0..1 {\n"
              "      v0 = splat(0, 4)\n"
              "      v1 = splat(0, 4)\n"
              "      for i1 in 0..3 {\n"
              "        s0 = %0[i0, i1]\n"
              "        v0 = (v0 + (splat(s0, 4) * %1[i1, ((i3 * 8) + 0)..+4]))\n"
              "        v1 = (v1 + (splat(s0, 4) * %1[i1, ((i3 * 8) + 4)..+4]))\n"
              "      }\n"
              "      %2[i0, ((i3 * 8) + 0)..+4] = v0\n"
              "      %2[i0, ((i3 * 8) + 4)..+4] = v1\n"
              "    }\n"
              "  }\n"
              "}\n");
}

// A deterministic stream of values of type t in about [-2, 2), some of them tiny.
std::vector<double> values(DType t, size_t n, uint64_t seed) {
    std::vector<double> v(n);
    for (size_t j = 0; j < n; ++j) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double x = (double)(seed >> 11) * 0x1p-53 * 4 - 2;
        if (j % 7 == 3) x *= 0x1p-30;
        v[j] = round_to(t, x);
    }
    return v;
}

Data data(DType t, const std::vector<double>& re) { return Data::from_reals(t, re); }

Data run1(const Kernel& k, const std::vector<const Data*>& in) {
    Data out;
    run(k, in, out);
    return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(KernelEval, DotF64MatchesDoubleLoop) {
    const int64_t M = 3, K = 5, N = 4;
    const Data a = data(DType::F64, values(DType::F64, M * K, 1)), b = data(DType::F64, values(DType::F64, K * N, 2));
    const Data out = run1(dot(DType::F64, M, K, N), {&a, &b});
    ASSERT_EQ(out.dtype(), DType::F64);
    std::vector<double> want((size_t)(M * N), 0.0);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t n = 0; n < N; ++n) want[(size_t)(m * N + n)] += a.real(m * K + k) * b.real(k * N + n);
    EXPECT_TRUE(same_bits(out.reals(), want));
}

// (a * b + c) * 0.1 in an f32 kernel is four float operations, each rounded, with 0.1
// rounded to float first; computing in double and rounding at the store differs.
TEST(KernelEval, F32RoundsEveryOperation) {
    const int64_t n = 256;
    Kernel k;
    k.name = "mul+add";
    k.dtype = DType::F32;
    for (int j = 0; j < 3; ++j) k.inputs.push_back(buf(DType::F32, {{"", n}}));
    k.output = buf(DType::F32, {{"", n}});
    k.body = {for_loop(0, 0, n, {store(3, {i(0)}, mul(add(mul(load(0, {i(0)}), load(1, {i(0)})), load(2, {i(0)})), real(0.1)))})};
    const Data a = data(DType::F32, values(DType::F32, n, 3)), b = data(DType::F32, values(DType::F32, n, 4)),
               c = data(DType::F32, values(DType::F32, n, 5));
    const Data out = run1(k, {&a, &b, &c});
    int differs_from_double = 0;
    for (size_t j = 0; j < (size_t)n; ++j) {
        const float fa = (float)a.real(j), fb = (float)b.real(j), fc = (float)c.real(j);
        const float prod = fa * fb;
        const float sum = prod + fc;
        const float want = sum * 0.1f;
        EXPECT_EQ(std::bit_cast<uint64_t>(out.real(j)), std::bit_cast<uint64_t>((double)want)) << j;
        differs_from_double += (double)want != (double)(float)((a.real(j) * b.real(j) + c.real(j)) * 0.1);
    }
    EXPECT_GT(differs_from_double, 0);  // the test tells the two apart
}

TEST(KernelEval, F64ConstantsAreNotRounded) {
    Kernel k;
    k.name = "mul";
    k.dtype = DType::F64;
    k.inputs = {buf(DType::F64, {{"", 1}})};
    k.output = buf(DType::F64, {{"", 1}});
    k.body = {store(1, {integer(0)}, mul(load(0, {integer(0)}), real(0.1)))};
    const Data a = data(DType::F64, {3.0});
    EXPECT_EQ(run1(k, {&a}).real(0), 3.0 * 0.1);
}

// Each function of an f64 kernel is pmath's double one, of an f32 kernel its float one;
// sqrt is the correctly rounded one.
TEST(KernelEval, FunctionsArePmathsInTheArithmeticType) {
    const std::vector<std::string> fns = {"exp", "log", "tanh", "sin", "cos", "erf", "erfc", "sqrt", "pow"};
    const int64_t n = 64, F = (int64_t)fns.size();
    for (DType t : {DType::F64, DType::F32}) {
        Kernel k;
        k.name = "fns";
        k.dtype = t;
        k.inputs = {buf(t, {{"", n}})};
        k.output = buf(t, {{"", F}, {"", n}});
        std::vector<Stmt> body;
        for (int64_t f = 0; f < F; ++f) {
            const ExprP x = load(0, {i(0)});
            const ExprP v = fns[(size_t)f] == "pow" ? binary("pow", x, real(1.7)) : unary(fns[(size_t)f], x);
            body.push_back(store(1, {integer(f), i(0)}, v));
        }
        k.body = {for_loop(0, 0, n, body)};
        std::vector<double> xs = values(t, (size_t)n, 10);
        for (double& x : xs) x = round_to(t, std::fabs(x) * 3);
        const Data in = data(t, xs);
        const Data out = run1(k, {&in});
        for (int64_t f = 0; f < F; ++f) {
            for (int64_t j = 0; j < n; ++j) {
                const double x = xs[(size_t)j];
                const std::string& fn = fns[(size_t)f];
                double want;
                if (t == DType::F64) {
                    want = fn == "exp" ? presk_exp(x) : fn == "log" ? presk_log(x) : fn == "tanh" ? presk_tanh(x)
                         : fn == "sin" ? presk_sin(x) : fn == "cos" ? presk_cos(x) : fn == "erf" ? presk_erf(x)
                         : fn == "erfc" ? presk_erfc(x) : fn == "sqrt" ? std::sqrt(x) : presk_pow(x, 1.7);
                } else {
                    const float y = (float)x;
                    want = fn == "exp" ? presk_expf(y) : fn == "log" ? presk_logf(y) : fn == "tanh" ? presk_tanhf(y)
                         : fn == "sin" ? presk_sinf(y) : fn == "cos" ? presk_cosf(y) : fn == "erf" ? presk_erff(y)
                         : fn == "erfc" ? presk_erfcf(y) : fn == "sqrt" ? std::sqrt(y) : presk_powf(y, 1.7f);
                }
                EXPECT_EQ(std::bit_cast<uint64_t>(out.real((size_t)(f * n + j))), std::bit_cast<uint64_t>(want))
                    << dtype_name(t) << " " << fn << "(" << x << ")";
            }
        }
    }
}

// Copies an input of storage type `in` to an output of type `out`, in arithmetic type `t`.
Kernel copy(DType t, DType in, DType out, int64_t n) {
    Kernel k;
    k.name = "copy";
    k.dtype = t;
    k.inputs = {buf(in, {{"", n}})};
    k.output = buf(out, {{"", n}});
    k.body = {for_loop(0, 0, n, {store(1, {i(0)}, load(0, {i(0)}))})};
    return k;
}

TEST(KernelEval, Bf16StoresRoundToNearestEven) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double big = (double)std::numeric_limits<float>::max();
    const std::vector<double> in = {1 + 0x1p-8,        1 + 3 * 0x1p-8, 1 + 0x1p-8 + 0x1p-23, -(1 + 0x1p-8),
                                    1 + 0x1p-8 - 0x1p-23, 0x1p-133,     nan,                  big};
    const std::vector<double> want = {1, 1 + 0x1p-6, 1 + 0x1p-7, -1, 1, 0x1p-133, nan, INFINITY};
    const Data x = data(DType::F32, in);
    const Data out = run1(copy(DType::BF16, DType::F32, DType::BF16, (int64_t)in.size()), {&x});
    ASSERT_EQ(out.dtype(), DType::BF16);
    for (size_t j = 0; j < in.size(); ++j) {
        const double r = round_to(DType::BF16, in[j]);
        if (std::isnan(want[j])) {
            EXPECT_TRUE(std::isnan(out.real(j)) && std::isnan(r)) << j;
        } else {
            EXPECT_EQ(out.real(j), want[j]) << j;
            EXPECT_EQ(r, want[j]) << j;
        }
    }
}

// A bf16 nest computes in f32 and rounds at its store only: (1 + 2^-8) + 2^-8 is 1 + 2^-7,
// where rounding the interior value to bf16 (a tie, to even: 1) would give 1.
TEST(KernelEval, Bf16InteriorIsF32) {
    Kernel k;
    k.name = "add+add";
    k.dtype = DType::BF16;
    k.inputs = {buf(DType::BF16, {}), buf(DType::BF16, {})};
    k.output = buf(DType::BF16, {});
    k.body = {store(2, {}, add(add(load(0, {}), load(1, {})), load(1, {})))};
    const Data a = data(DType::BF16, {1.0}), b = data(DType::BF16, {0x1p-8});
    EXPECT_EQ(run1(k, {&a, &b}).real(0), 1 + 0x1p-7);
}

TEST(KernelEval, RoundToTakesF64ThroughF32ToBf16) {
    const double x = 1 + 0x1p-8 + 0x1p-30;  // above the bf16 tie, but f32 rounds it onto the tie
    EXPECT_EQ(round_to(DType::F64, x), x);
    EXPECT_EQ(round_to(DType::F32, x), 1 + 0x1p-8);
    EXPECT_EQ(round_to(DType::BF16, x), 1.0);
    EXPECT_TRUE(std::isnan(round_to(DType::BF16, std::numeric_limits<double>::quiet_NaN())));
    // The same two roundings at the store of an f64 kernel into a bf16 buffer.
    const Data in = data(DType::F64, {x});
    EXPECT_EQ(run1(copy(DType::F64, DType::F64, DType::BF16, 1), {&in}).real(0), 1.0);
    EXPECT_EQ(run1(copy(DType::F64, DType::F64, DType::F32, 1), {&in}).real(0), 1 + 0x1p-8);
    EXPECT_THROW(round_to(DType::I64, 1), Error);
}

TEST(KernelEval, MaxMinKeepTheFirstOperandUnlessTheSecondIsBeyondIt) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> a = {nan, 1, -0.0, 0.0, 2}, b = {1, nan, 0.0, -0.0, 3};
    for (const char* op : {"max", "min"}) {
        Kernel k;
        k.name = op;
        k.dtype = DType::F64;
        k.inputs = {buf(DType::F64, {{"", 5}}), buf(DType::F64, {{"", 5}})};
        k.output = buf(DType::F64, {{"", 5}});
        k.body = {for_loop(0, 0, 5, {store(2, {i(0)}, binary(op, load(0, {i(0)}), load(1, {i(0)})))})};
        const Data x = data(DType::F64, a), y = data(DType::F64, b);
        const Data out = run1(k, {&x, &y});
        EXPECT_TRUE(std::isnan(out.real(0))) << op;
        EXPECT_EQ(out.real(1), 1) << op;
        EXPECT_TRUE(std::signbit(out.real(2))) << op;
        EXPECT_FALSE(std::signbit(out.real(3))) << op;
        EXPECT_EQ(out.real(4), std::string(op) == "max" ? 3 : 2) << op;
    }
}

// Integer arithmetic, comparisons, select and if/else: out[j] = j odd ? real((j * 7) % 3) :
// -real(j / 2), and an i64 output of max(j - 2, 0).
TEST(KernelEval, IntegersConditionsAndSelect) {
    const int64_t n = 6;
    Kernel k;
    k.name = "ints";
    k.dtype = DType::F32;
    k.output = buf(DType::F32, {{"", n}});
    const ExprP j = i(0), odd = compare("eq", binary("mod", j, integer(2)), integer(1));
    k.body = {for_loop(0, 0, n,
                       {if_else(odd, {store(0, {j}, to_real(binary("mod", binary("mul", j, integer(7)), integer(3))))},
                                {assign(0, select(odd, real(9), unary("neg", to_real(binary("div", j, integer(2)))))),
                                 store(0, {j}, s(0))})})};
    EXPECT_EQ(run1(k, {}).reals(), (std::vector<double>{-0.0, 1, -1, 0, -2, 2}));

    Kernel m;
    m.name = "clamp";
    m.dtype = DType::F32;
    m.output = buf(DType::I64, {{"", n}});
    m.body = {for_loop(0, 0, n, {store(0, {j}, binary("max", binary("sub", j, integer(2)), integer(0)))})};
    const Data out = run1(m, {});
    ASSERT_EQ(out.dtype(), DType::I64);
    EXPECT_EQ(out.ints(), (std::vector<int64_t>{0, 0, 0, 1, 2, 3}));
}

std::string error_of(const Kernel& k, const std::vector<const Data*>& in) {
    try {
        run1(k, in);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

// embed: out[t, d] = table[ids[t], d].
Kernel gather() {
    Kernel k;
    k.name = "embed";
    k.dtype = DType::F32;
    k.inputs = {buf(DType::F32, {{"", 5}, {"", 2}}), buf(DType::I64, {{"T", 3}})};
    k.output = buf(DType::F32, {{"T", 3}, {"", 2}});
    k.body = {for_loop(0, 0, 3, {for_loop(1, 0, 2, {store(2, {i(0), i(1)}, load(0, {load(1, {i(0)}, true), i(1)}))})})};
    return k;
}

TEST(KernelEval, IndicesOutOfRangeAreErrors) {
    const Data table = data(DType::F32, values(DType::F32, 10, 6));
    Data ids = Data::from_ints({0, 4, 1});
    const Data good = run1(gather(), {&table, &ids});
    EXPECT_EQ(good.real(2), table.real(8));
    ids = Data::from_ints({0, 7, 1});
    EXPECT_EQ(error_of(gather(), {&table, &ids}),
              "kernel embed: %0[7, 0] index 7 out of range: axis 0 has size 5");
    ids = Data::from_ints({-1, 0, 0});
    EXPECT_EQ(error_of(gather(), {&table, &ids}),
              "kernel embed: %0[-1, 0] index -1 out of range: axis 0 has size 5");

    Kernel st = copy(DType::F32, DType::F32, DType::F32, 3);
    st.body = {for_loop(0, 0, 4, {store(1, {i(0)}, real(1))})};
    const Data x = data(DType::F32, {1, 2, 3});
    EXPECT_EQ(error_of(st, {&x}), "kernel copy: %1[3] index 3 out of range: axis 0 has size 3");

    Kernel vl = tiled_dot(DType::F32, 1, 1, 8, 4);
    vl.body = {vstore(2, {integer(0), integer(4)}, vload(1, {integer(0), integer(2)}, 4))};
    const Data a = data(DType::F32, {1}), b = data(DType::F32, values(DType::F32, 8, 7));
    Data out;
    run(vl, {&a, &b}, out);
    const std::vector<double> got = out.reals(), from = b.reals();
    if (fills_fresh_buffers()) {
        EXPECT_TRUE(std::isnan(got[2]));  // not written, and the output is not zeroed
    }
    EXPECT_EQ(std::vector<double>(got.begin() + 4, got.end()), std::vector<double>(from.begin() + 2, from.begin() + 6));
    vl.body = {vstore(2, {integer(0), integer(0)}, vload(1, {integer(0), integer(5)}, 4))};
    EXPECT_EQ(error_of(vl, {&a, &b}), "kernel dot: %1[0, 5..+4] index 5 out of range: axis 1 has size 8");
}

// A kernel compiled once (from a temporary: Compiled keeps no reference to it) and run on
// several inputs, into one output Data, gives the bits of a fresh run each time.
TEST(KernelEval, CompiledRunsAsOften) {
    const Compiled c(dot(DType::F32, 3, 5, 4));
    Data out = data(DType::F64, values(DType::F64, 40, 9));  // stale: other type and size
    for (uint64_t seed = 1; seed < 4; ++seed) {
        const Data a = data(DType::F32, values(DType::F32, 15, seed)), b = data(DType::F32, values(DType::F32, 20, seed + 10));
        c.run({&a, &b}, out);
        const Data fresh = run1(dot(DType::F32, 3, 5, 4), {&a, &b});
        EXPECT_EQ(out.dtype(), DType::F32);
        EXPECT_TRUE(same_bits(out.reals(), fresh.reals()));
    }
    const Data ids = Data::from_ints({0, 1, 2});
    try {
        c.run({&ids}, out);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "kernel dot: given 1 inputs, declared 2");
    }
}

TEST(KernelEval, InputsAreCheckedAgainstTheirDeclarations) {
    const Kernel k = gather();
    const Data table = data(DType::F32, values(DType::F32, 10, 6));
    const Data ids = Data::from_ints({0, 1, 2});
    EXPECT_EQ(error_of(k, {&table}), "kernel embed: given 1 inputs, declared 2");
    EXPECT_EQ(error_of(k, {&table, nullptr}), "kernel embed: %1 is missing");
    EXPECT_EQ(error_of(k, {&ids, &ids}), "kernel embed: %0 is i64, declared f32");
    const Data short_table = data(DType::F32, values(DType::F32, 9, 6));
    EXPECT_EQ(error_of(k, {&short_table, &ids}), "kernel embed: %0 has 9 elements, declared 10");
    Data same = table;
    EXPECT_EQ(error_of(k, {&same, &ids}), error_of(k, {&table, &ids}));
    Data out;
    EXPECT_THROW(run(k, {&out, &ids}, out), Error);
}

// What a machine-code backend checks before it calls a kernel: the inputs as Compiled::run
// checks them, and an output of the declared type and count that no other Data reads.
TEST(KernelEval, BuffersAreCheckedForMachineCode) {
    const Kernel k = gather();
    const Data table = data(DType::F32, values(DType::F32, 10, 6));
    const Data ids = Data::from_ints({0, 1, 2});
    Data out(DType::F32, 6);
    EXPECT_NO_THROW(check_buffers(k, {&table, &ids}, out));
    try {
        check_buffers(k, {&table}, out);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "kernel embed: given 1 inputs, declared 2");
    }
    const Data reader = out;
    try {
        check_buffers(k, {&table, &ids}, out);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "kernel embed: the output buffer is f32 of 6 elements, shared, declared f32 of 6");
    }
    const Data small(DType::BF16, 5);
    EXPECT_THROW(check_buffers(k, {&table, &ids}, small), Error);
    // The interpreter writes a fresh buffer in place of a shared one: the reader keeps its elements.
    const std::vector<double> before = reader.reals();
    run(k, {&table, &ids}, out);
    EXPECT_NE(std::as_const(out).raw(), reader.raw());
    EXPECT_TRUE(same_bits(reader.reals(), before));
}

TEST(KernelEval, IntegerFaultsAreErrors) {
    Kernel k;
    k.name = "ints";
    k.dtype = DType::F64;
    k.inputs = {buf(DType::I64, {{"", 2}})};
    k.output = buf(DType::I64, {});
    auto with = [&](const char* op) {
        k.body = {store(1, {}, binary(op, load(0, {integer(0)}, true), load(0, {integer(1)}, true)))};
        return k;
    };
    const Data zero = Data::from_ints({5, 0});
    EXPECT_EQ(error_of(with("div"), {&zero}), "kernel ints: integer division by zero");
    EXPECT_EQ(error_of(with("mod"), {&zero}), "kernel ints: integer remainder by zero");
    const Data big = Data::from_ints({INT64_MAX, 1});
    EXPECT_EQ(error_of(with("add"), {&big}), "kernel ints: integer overflow");
    const Data low = Data::from_ints({INT64_MIN, -1});
    EXPECT_EQ(error_of(with("div"), {&low}), "kernel ints: integer overflow");
    EXPECT_EQ(run1(with("mod"), {&big}).ints()[0], 0);
}

TEST(KernelEval, MalformedKernelsAreErrors) {
    const Data x = data(DType::F32, {1, 2, 3});
    Kernel k = copy(DType::F32, DType::F32, DType::F32, 3);
    k.body = {for_loop(0, 0, 3, {store(1, {i(0)}, load(0, {i(0), i(0)}))})};
    EXPECT_EQ(error_of(k, {&x}), "kernel copy: %0 has 1 axes, accessed with 2 indices");
    k.body = {for_loop(0, 0, 3, {store(0, {i(0)}, real(0))})};
    EXPECT_EQ(error_of(k, {&x}), "kernel copy: a store to the input %0");
    k.body = {for_loop(0, 0, 3, {store(1, {i(0)}, to_real(load(0, {i(0)}, true)))})};
    EXPECT_EQ(error_of(k, {&x}), "kernel copy: an integer access to %0 : f32");
    k.body = {for_loop(0, 0, 3, {}), store(1, {i(0)}, real(0))};
    EXPECT_EQ(error_of(k, {&x}), "kernel copy: i0 is used outside its loop");
    k.body = {for_loop(0, 0, 3, {for_loop(0, 0, 3, {})})};
    EXPECT_EQ(error_of(k, {&x}), "kernel copy: the loop of i0 is nested in itself");
    k.body = {assign(0, splat(real(1), 2)), assign(0, splat(real(1), 4))};
    EXPECT_EQ(error_of(k, {&x}), "kernel copy: v0 is used with 2 and 4 lanes");
    k.body = {store(5, {}, real(0))};
    EXPECT_EQ(error_of(k, {&x}), "kernel copy: %5 is not a buffer of the kernel");
}

TEST(KernelIR, ConstructorsSetTypesAndRefuseIllTypedTrees) {
    EXPECT_TRUE(integer(3)->integer);
    EXPECT_TRUE(loop_var(0)->integer);
    EXPECT_FALSE(real(1)->integer);
    EXPECT_TRUE(compare("lt", real(1), real(2))->integer);
    EXPECT_EQ(binary("mul", splat(real(1), 4), vload(0, {integer(0)}, 4))->lanes, 4);
    EXPECT_EQ(select(integer(1), vector_var(0, 2), vector_var(1, 2))->lanes, 2);
    EXPECT_TRUE(unary("neg", integer(1))->integer);
    EXPECT_FALSE(to_real(integer(1))->integer);
    EXPECT_THROW(binary("add", integer(1), real(1)), Error);
    EXPECT_THROW(binary("pow", integer(1), integer(1)), Error);
    EXPECT_THROW(binary("mod", real(1), real(1)), Error);
    EXPECT_THROW(binary("add", splat(real(1), 2), real(1)), Error);
    EXPECT_THROW(unary("exp", integer(1)), Error);
    EXPECT_THROW(unary("gelu", real(1)), Error);
    EXPECT_THROW(splat(real(1), 1), Error);
    EXPECT_THROW(splat(integer(1), 4), Error);
    EXPECT_THROW(load(0, {real(0)}), Error);
    EXPECT_THROW(vload(0, {}, 4), Error);
    EXPECT_THROW(compare("lt", splat(real(1), 2), splat(real(1), 2)), Error);
    EXPECT_THROW(select(real(1), real(1), real(2)), Error);
    EXPECT_THROW(to_real(real(1)), Error);
    EXPECT_THROW(store(0, {}, splat(real(1), 2)), Error);
    EXPECT_THROW(vstore(0, {integer(0)}, real(1)), Error);
    EXPECT_THROW(if_else(real(1), {}), Error);
    EXPECT_THROW(for_loop(0, 3, 2, {}), Error);
    EXPECT_THROW(binary("add", nullptr, real(1)), Error);
}

// Statement H: the vector form of the tiled dot is bit-identical to its scalar form at two
// and four lanes, and both to the row-wise dot (every output sums k in increasing order).
TEST(KernelEval, VectorFormIsBitIdenticalToScalarForm) {
    const int64_t M = 3, K = 37, N = 16;
    for (DType t : {DType::F64, DType::F32}) {
        const Data a = data(t, values(t, M * K, 8)), b = data(t, values(t, K * N, 9));
        const Data rows = run1(dot(t, M, K, N), {&a, &b});
        const Data scalar = run1(tiled_dot(t, M, K, N, 1), {&a, &b});
        EXPECT_TRUE(same_bits(rows.reals(), scalar.reals())) << dtype_name(t);
        for (int lanes : {2, 4}) {
            const Data vec = run1(tiled_dot(t, M, K, N, lanes), {&a, &b});
            EXPECT_TRUE(same_bits(vec.reals(), scalar.reals())) << dtype_name(t) << " lanes " << lanes;
        }
    }
}

} // namespace
} // namespace presk::kernel
