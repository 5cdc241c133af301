// Printed values (presk run's text and its --out JSON, ref/print.h): the kernel backend prints
// its doubles as the reference prints the same numbers, for any double, digit count, storage
// type and tree; both backends print an entry whose results are exact in f64 alike; the
// layout against literal texts, also past the writer's chunk.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <sstream>

#include "presk_test.h"
#include "realize/executor.h"
#include "realize/realization.h"
#include "ref/interp.h"

namespace presk {
namespace {

using kernel::DType;

std::string text(const realize::Value& v, int digits) {
    std::ostringstream os;
    realize::write_text(os, v, digits);
    return os.str();
}

std::string json(const realize::Value& v, int digits) {
    std::ostringstream os;
    realize::write_json(os, v, digits);
    return os.str();
}

ref::Value reals(const TypeP& type, const std::vector<double>& xs) {
    ref::Tensor t;
    t.type = type;
    for (double x : xs) {
        t.re.emplace_back(256);
        mpfr_set_d(t.re.back().get(), x, MPFR_RNDN);
    }
    return ref::make_tensor(std::move(t));
}

ref::Value ints(const TypeP& type, std::vector<int64_t> xs) {
    ref::Tensor t;
    t.type = type;
    t.in = std::move(xs);
    return ref::make_tensor(std::move(t));
}

TEST(Print, KernelValuesAsTheReference) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> xs = {0.0,   -0.0,   1.0,     -1.5,    0.1,     1.0 / 3,  -2e-5 / 3, 123456789.0,
                                    1e21,  1e-7,   5e-324,  DBL_MIN, DBL_MAX, -DBL_MAX, inf,       -inf,
                                    nan,   0.5,    1e16,    999999.5, 1.2345678901234567e-100, 65504.0};
    const TypeP rt = tensor_type(Elem::Real, {{"rows", 2}, {"", 11}});
    const TypeP it = tensor_type(Elem::Int, {{"", 3}}, 7);
    const TypeP st = tensor_type(Elem::Real, {});
    const TypeP tt = tuple_type({rt, it});
    const TypeP tree = record_type({"w", "b"}, {tt, st});
    const ref::Value v = ref::make_tree(tree, {ref::make_tree(tt, {reals(rt, xs), ints(it, {0, -3, 6})}), reals(st, {-2.25})});
    for (DType t : {DType::F64, DType::F32, DType::BF16}) {
        const realize::Value k = realize::from_ref(v, t);
        const ref::Value back = realize::to_ref(k);
        for (int digits : {1, 3, 6, 9, 17, 25, 60}) {  // 60: longer than the formatter's buffer
            EXPECT_EQ(text(k, digits), ref::to_text(back, digits)) << kernel::dtype_name(t) << " " << digits;
            EXPECT_EQ(json(k, digits), ref::to_json(back, digits)) << kernel::dtype_name(t) << " " << digits;
        }
    }
}

TEST(Print, Layout) {
    const TypeP rt = tensor_type(Elem::Real, {{"n", 2}, {"", 2}});
    const TypeP it = tensor_type(Elem::Int, {}, 5);
    const TypeP tree = record_type({"w", "\"q\""}, {tuple_type({rt, it}), rt});
    const double inf = std::numeric_limits<double>::infinity();
    const ref::Value w = reals(rt, {0.1, -0.0, 1e-300, inf}), ids = ints(it, {4});
    const ref::Value v = ref::make_tree(tree, {ref::make_tree(tree->items[0], {w, ids}), reals(rt, {-inf, NAN, 2, 3})});
    const realize::Value k = realize::from_ref(v, DType::F64);
    EXPECT_EQ(text(k, 5), "{w: ([n: 2, 2] = [[0.1, -0], [1e-300, inf]],\n int<5>[] = 4),\n \"q\": [n: 2, 2] = [[-inf, nan], [2, 3]]}");
    EXPECT_EQ(json(k, 5), "{\"w\": [{\"type\": \"[n: 2, 2]\", \"data\": [[0.1, -0], [1e-300, \"inf\"]]}, "
                          "{\"type\": \"int<5>[]\", \"data\": 4}], \"\\\"q\\\"\": {\"type\": \"[n: 2, 2]\", "
                          "\"data\": [[\"-inf\", \"nan\"], [2, 3]]}}");
    // Past the writer's chunk (64 KiB of text): the same layout.
    const int64_t n = 30000;
    const TypeP big = tensor_type(Elem::Int, {{"", n}});
    std::vector<int64_t> seq(n);
    std::string want = "int[" + std::to_string(n) + "] = [";
    for (int64_t i = 0; i < n; ++i) {
        seq[(size_t)i] = i * 1000003;
        want += (i ? ", " : "") + std::to_string(seq[(size_t)i]);
    }
    EXPECT_TRUE(text(realize::from_ref(ints(big, seq), DType::F64), 17) == want + "]");  // no 300 KB message
}

// An entry whose results are exact in f64 (on inputs exact in f64): both backends print the
// same text and JSON, from MPFR numbers and from doubles.
TEST(Print, BackendsAlike) {
    std::string err;
    const core::Program p = test::compile(
        "fn f(a : [], b : [], x : [n, 2]) -> ([], [], [n, 2], [n, 2], int<2>[n], [], [n]) {\n"
        "  (a + b, (a + b) / 1099511627776, (x - x) - b, -(x - x) / b, argmax(x - x), (a - a) / (b - b), sum(x - x - b, 1) / (a - a))\n"
        "}\n",
        "f", CheckOptions{{{"n", 3}}, {}}, &err);
    ASSERT_EQ(err, "");
    ref::Interp interp(p, {256, 7, false});
    const auto args = interp.entry_args({{"a", "1.0000000000000002220446049250313080847263336181640625"}, {"b", "0.5"}});
    const ref::Value want = interp.call(p.entry, args);
    realize::Executor ex(p, realize::parse_realization("f64"));
    const realize::Value got = ex.call_values(p.entry, ex.convert_args(p.entry, args));
    EXPECT_EQ(text(got, 17), ref::to_text(want, 17));
    EXPECT_EQ(json(got, 17), ref::to_json(want, 17));
    EXPECT_EQ(text(got, 17).rfind("([] = 1.5000000000000002,\n [] = 1.3642420526593926e-12,\n [n: 3, 2] = [[-0.5, ", 0), 0u);
}

} // namespace
} // namespace presk
