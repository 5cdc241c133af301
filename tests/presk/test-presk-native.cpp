// --backend native (kernel/llvm_jit.h): every kernel the primitive cases and the examples
// launch, in f64, f32 and bf16, compiled by LLVM and run on drawn inputs (with and without
// zeros, infinities and NaNs) gives the kernel interpreter's bytes, element by element; so do
// the kernels with each code-generator rule switched off and at every optimization level.
// Statement H: the tiled dot's vector kernel at every lane count the host has equals its
// scalar kernel and the interpreter bit for bit. Out-of-range gathers and integer faults give
// the interpreter's failure, split ranges pieced together give the whole, a malformed kernel
// is the interpreter's clean error. Without LLVM the program reports itself skipped.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "core/prims.h"
#include "kernel/llvm_jit.h"
#include "kernel/lower.h"
#include "native_harness.h"

namespace presk {
namespace {

using kernel::Data;
using kernel::DType;
using kernel::Kernel;
using kernel::NativeCode;

#define NEED_LLVM()                                                                                 \
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM (llvm-16-dev)"

TypeP real_t(std::vector<Axis> axes) { return tensor_type(Elem::Real, std::move(axes)); }
TypeP int_t(std::vector<Axis> axes, int64_t bound) { return tensor_type(Elem::Int, std::move(axes), bound); }

kernel::Node node(const std::string& prim, std::vector<TypeP> ops, std::vector<int64_t> ints = {}) {
    TypeP r = core::prim_type(prim, ops, ints, "");
    return kernel::Node{prim, std::move(ints), "", std::move(ops), r};
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

/// The distinct kernels (by their text) the primitive cases and the examples launch in `r`.
std::vector<Kernel> launched(const std::string& r) {
    static std::map<std::string, std::vector<Kernel>> memo;
    auto it = memo.find(r);
    if (it != memo.end()) return it->second;
    std::vector<realize::Case> cases = realize::primitive_cases();
    for (realize::Case& c : realize::example_cases(PRESK_SOURCE_DIR "/examples")) cases.push_back(std::move(c));
    std::set<std::string> seen;
    std::vector<Kernel> out;
    for (Kernel& k : test::launched_kernels(cases, r))
        if (seen.insert(kernel::to_string(k)).second) out.push_back(std::move(k));
    return memo[r] = out;
}

/// `k` compiled with the default options, once per kernel text in this process.
const NativeCode& compiled(const Kernel& k) {
    static std::map<std::string, NativeCode> memo;
    const std::string text = kernel::to_string(k);
    auto it = memo.find(text);
    if (it == memo.end()) it = memo.emplace(text, kernel::compile_llvm(k)).first;
    return it->second;
}

using test::run_compiled;

/// Every `every`-th launched kernel of realization `r` compiled with `options` (absent: the
/// defaults, compiled once) equals the interpreter on `draws` draws (seeds 1, 2, ...), each
/// plain and with specials.
void expect_launched_equal(const std::string& r, const std::optional<kernel::NativeOptions>& options = std::nullopt,
                           uint64_t draws = 2, size_t every = 1) {
    const bool defaults = !options;
    const kernel::NativeOptions o = options.value_or(kernel::NativeOptions{});
    const std::vector<Kernel> ks = launched(r);
    EXPECT_GE(ks.size(), 200u) << r;
    for (size_t i = 0; i < ks.size(); i += every) {
        const Kernel& k = ks[i];
        const NativeCode code = defaults ? compiled(k) : kernel::compile_llvm(k, o);
        for (uint64_t seed = 1; seed <= draws; ++seed) {
            for (bool specials : {false, true}) {
                const std::vector<Data> in = test::draw_inputs(k, seed, specials);
                EXPECT_EQ(test::compare_with_interpreter(k, code, in), "") << r << " seed " << seed << " specials "
                                                                           << specials << "\n" << kernel::to_string(k);
            }
        }
    }
}

TEST(PreskNative, BuiltWithLlvmOrRefusedByName) {
    if (!kernel::have_llvm()) {
        EXPECT_EQ(message_of([] { kernel::compile_llvm(Kernel{}); }),
                  "--backend native: presk was built without LLVM (install llvm-16-dev)");
        GTEST_SKIP() << "GK-SKIP: presk was built without LLVM (llvm-16-dev)";
    }
    Kernel k = kernel::lower(node("add", {real_t({{"", 3}}), real_t({{"", 3}})}), DType::F32);
    EXPECT_NE(kernel::compile_llvm(k).fn, nullptr);
}

TEST(PreskNative, LaunchedKernelsF64) {
    NEED_LLVM();
    expect_launched_equal("f64");
}

TEST(PreskNative, LaunchedKernelsF32) {
    NEED_LLVM();
    expect_launched_equal("f32");
}

TEST(PreskNative, LaunchedKernelsBf16) {
    NEED_LLVM();
    expect_launched_equal("bf16");
}

// Each rule off in turn, and O2 and O0, on every fifth f32 kernel (a compile takes about
// 11 ms): no switch changes a bit.
TEST(PreskNative, EveryRuleOffAndEveryLevelSameBits) {
    NEED_LLVM();
    std::vector<std::pair<std::string, kernel::NativeOptions>> variants;
    for (int level : {0, 2}) {
        kernel::NativeOptions o;
        o.opt_level = level;
        variants.emplace_back("O" + std::to_string(level), o);
    }
    for (int rule = 0; rule < 5; ++rule) {
        kernel::NativeOptions o;
        bool* sw[] = {&o.register_output, &o.loop_addresses, &o.unroll, &o.vectorize, &o.invariant_loads};
        *sw[rule] = false;
        variants.emplace_back("rule " + std::to_string(rule) + " off", o);
    }
    for (const auto& [name, o] : variants) {
        SCOPED_TRACE(name);
        expect_launched_equal("f32", o, 1, 5);
    }
}

// Statement H: the tiled dot at every lane count the host's vectors hold, native vector ==
// native scalar == interpreter, plain and with specials; other lane counts are refused.
TEST(PreskNative, StatementHLanesBitIdentical) {
    NEED_LLVM();
    const std::vector<kernel::Node> dots = {
        node("dot", {real_t({{"batch", 3}, {"", 5}}), real_t({{"", 5}, {"", 16}})}),
        node("dot", {real_t({{"", 2}, {"", 3}, {"", 7}}), real_t({{"", 7}, {"", 8}})}),
        node("dot", {real_t({{"", 4}, {"", 0}}), real_t({{"", 0}, {"", 8}})}),
        node("matmul", {real_t({{"", 2}, {"", 3}, {"", 5}}), real_t({{"", 2}, {"", 5}, {"", 24}})}),
    };
    int checked = 0;
    for (DType t : {DType::F64, DType::F32}) {
        const int most = kernel::native_lanes(t);
        EXPECT_GE(most, 2) << kernel::dtype_name(t);
        for (const kernel::Node& n : dots) {
            const Kernel scalar = kernel::lower(n, t, 1);
            const NativeCode sc = kernel::compile_llvm(scalar);
            for (int lanes = 2; lanes <= most; lanes *= 2) {
                SCOPED_TRACE(n.prim + " " + kernel::dtype_name(t) + " lanes " + std::to_string(lanes));
                kernel::check_lanes(t, lanes, "lanes");
                const Kernel vec = kernel::lower(n, t, lanes);
                ASSERT_GT(vec.n_vectors, 0) << kernel::to_string(vec);
                const NativeCode vc = kernel::compile_llvm(vec);
                for (bool specials : {false, true}) {
                    const std::vector<Data> in = test::draw_inputs(scalar, 3, specials);
                    EXPECT_EQ(test::compare_with_interpreter(vec, vc, in), "");
                    EXPECT_EQ(test::compare_with_interpreter(scalar, sc, in), "");
                    const test::Ran v = run_compiled(vec, vc, in), c = run_compiled(scalar, sc, in);
                    EXPECT_EQ(v.status, c.status);
                    EXPECT_TRUE(v.out == c.out);
                    ++checked;
                }
            }
        }
    }
    EXPECT_GT(checked, 0);
    EXPECT_EQ(kernel::native_lanes(DType::BF16), 1);
    EXPECT_EQ(kernel::native_lanes(DType::I64), 1);
    kernel::check_lanes(DType::BF16, 1, "lanes");
    const std::string three = message_of([] { kernel::check_lanes(DType::F32, 3, "--lanes 3"); });
    EXPECT_EQ(three.rfind("--lanes 3: the host's vectors hold 1", 0), 0u) << three;
    EXPECT_NE(three.find("lanes of f32"), std::string::npos) << three;
    const int too_many = 2 * kernel::native_lanes(DType::F64);
    EXPECT_NE(message_of([&] { kernel::check_lanes(DType::F64, too_many, "--lanes"); }), "(no error)");
    EXPECT_NE(message_of([] { kernel::check_lanes(DType::F32, 0, "--lanes"); }), "(no error)");
}

// The interpreter's message without the full index it prints: "%0[7, 1] index 7" -> "%0 index 7".
std::string without_index(const std::string& m) {
    const size_t at = m.find('%');
    const size_t open = m.find('[', at);
    const size_t close = m.find(']', open);
    if (at == std::string::npos || open == std::string::npos || close == std::string::npos) return m;
    return m.substr(0, open) + m.substr(close + 1);
}

// Runs `k` both ways on `in`; expects both to fail with the same message (up to the index).
void expect_same_failure(const Kernel& k, const std::vector<Data>& in, int status) {
    std::vector<const Data*> p;
    for (const Data& d : in) p.push_back(&d);
    Data out;
    const std::string want = message_of([&] { kernel::run(k, p, out); });
    ASSERT_NE(want, "(no error)");
    const NativeCode code = kernel::compile_llvm(k);
    const test::Ran ran = test::run_compiled(k, code, in);
    const int st = ran.status;
    const int64_t* err = ran.err.data();
    EXPECT_EQ(st, status);
    EXPECT_EQ(kernel::status_message(k, st, err), without_index(want));
}

TEST(PreskNative, OutOfRangeGathersFailAsTheInterpreter) {
    NEED_LLVM();
    for (DType t : {DType::F64, DType::F32, DType::BF16}) {
        SCOPED_TRACE(kernel::dtype_name(t));
        // embed: id 7 of a table of 4 rows.
        const Kernel embed = kernel::lower(node("embed", {real_t({{"", 4}, {"", 3}}), int_t({{"", 2}}, 4)}), t);
        std::vector<Data> in = test::draw_inputs(embed, 1);
        in[1] = Data::from_ints(std::vector<int64_t>{1, 7});
        expect_same_failure(embed, in, PRESK_INDEX_OUT_OF_RANGE);
        in[1] = Data::from_ints(std::vector<int64_t>{-1, 0});
        expect_same_failure(embed, in, PRESK_INDEX_OUT_OF_RANGE);
        // cross_entropy: a target outside the row; scatter_add: an id outside the table.
        const Kernel ce = kernel::lower(node("cross_entropy", {real_t({{"", 2}, {"", 5}}), int_t({{"", 2}}, 5)}), t);
        std::vector<Data> ci = test::draw_inputs(ce, 1);
        ci[1] = Data::from_ints(std::vector<int64_t>{4, 5});
        expect_same_failure(ce, ci, PRESK_INDEX_OUT_OF_RANGE);
        const Kernel sa = kernel::lower(
            node("scatter_add", {real_t({{"", 3}, {"", 2}}), int_t({{"", 3}}, 4), real_t({{"", 4}, {"", 2}})}), t);
        std::vector<Data> si = test::draw_inputs(sa, 1);
        si[1] = Data::from_ints(std::vector<int64_t>{0, 9, 1});
        expect_same_failure(sa, si, PRESK_INDEX_OUT_OF_RANGE);
    }
}

// A hand-written i64 kernel: out[0] = a[0] op a[1] (or op a[0] for neg).
Kernel int_kernel(const std::string& op) {
    Kernel k;
    k.name = "int_" + op;
    k.dtype = DType::F64;
    k.inputs = {kernel::BufferType{DType::I64, {{"", 2}}}};
    k.output = kernel::BufferType{DType::I64, {{"", 1}}};
    const kernel::ExprP a = kernel::load(0, {kernel::integer(0)}, true);
    const kernel::ExprP b = kernel::load(0, {kernel::integer(1)}, true);
    k.body = {kernel::store(1, {kernel::integer(0)}, op == "neg" ? kernel::unary("neg", a) : kernel::binary(op, a, b))};
    return k;
}

TEST(PreskNative, IntegerFaultsFailAsTheInterpreter) {
    NEED_LLVM();
    auto ints = [](int64_t a, int64_t b) { return std::vector<Data>{Data::from_ints({a, b})}; };
    expect_same_failure(int_kernel("add"), ints(INT64_MAX, 1), PRESK_INT_OVERFLOW);
    expect_same_failure(int_kernel("sub"), ints(INT64_MIN, 1), PRESK_INT_OVERFLOW);
    expect_same_failure(int_kernel("mul"), ints(INT64_MAX / 2, 3), PRESK_INT_OVERFLOW);
    expect_same_failure(int_kernel("neg"), ints(INT64_MIN, 0), PRESK_INT_OVERFLOW);
    expect_same_failure(int_kernel("div"), ints(INT64_MIN, -1), PRESK_INT_OVERFLOW);
    expect_same_failure(int_kernel("mod"), ints(INT64_MIN, -1), PRESK_INT_OVERFLOW);
    expect_same_failure(int_kernel("div"), ints(5, 0), PRESK_DIV_BY_ZERO);
    expect_same_failure(int_kernel("mod"), ints(5, 0), PRESK_DIV_BY_ZERO);
    // And the values where nothing fails (C's truncation toward zero).
    for (const char* op : {"add", "sub", "mul", "div", "mod", "min", "max", "neg"}) {
        const Kernel k = int_kernel(op);
        const NativeCode code = kernel::compile_llvm(k);
        for (auto [a, b] : {std::pair<int64_t, int64_t>{-7, 2}, {7, -2}, {INT64_MIN, 1}, {3, 3}})
            EXPECT_EQ(test::compare_with_interpreter(k, code, ints(a, b)), "") << op << " " << a << " " << b;
    }
}

// The split loop's iterations in pieces (one, uneven, empty ones, out of its bounds) give the
// whole run's bytes.
TEST(PreskNative, SplitPiecesEqualTheWhole) {
    NEED_LLVM();
    int split = 0;
    for (const Kernel& k : launched("f32")) {
        const std::optional<kernel::Split> sp = kernel::split_loop(k);
        if (!sp) continue;
        ++split;
        const NativeCode& code = compiled(k);
        const std::vector<Data> in = test::draw_inputs(k, 5);
        const test::Ran whole = run_compiled(k, code, in, {sp->lo, sp->hi});
        const int64_t mid = sp->lo + (sp->hi - sp->lo) / 3;
        const std::vector<std::vector<int64_t>> pieces_of = {
            {sp->lo, mid, sp->hi}, {sp->lo, sp->lo, mid, mid + 1, sp->hi}, {sp->lo - 5, mid, sp->hi + 5}};
        for (const std::vector<int64_t>& cuts : pieces_of) {
            const test::Ran pieces = run_compiled(k, code, in, cuts);
            EXPECT_EQ(pieces.status, whole.status) << k.name;
            EXPECT_TRUE(pieces.out == whole.out) << kernel::to_string(k);
        }
    }
    EXPECT_GE(split, 10);
}

TEST(PreskNative, MalformedKernelIsTheInterpretersError) {
    NEED_LLVM();
    Kernel base = int_kernel("add");
    std::vector<Kernel> bad;
    Kernel to_input = base;
    to_input.body = {kernel::store(0, {kernel::integer(0)}, kernel::integer(1))};
    bad.push_back(to_input);
    Kernel axes = base;
    axes.body = {kernel::store(1, {kernel::integer(0), kernel::integer(0)}, kernel::integer(1))};
    bad.push_back(axes);
    Kernel outside = base;
    outside.body = {kernel::for_loop(0, 0, 1, {}), kernel::store(1, {kernel::loop_var(0)}, kernel::integer(1))};
    bad.push_back(outside);
    Kernel real_to_int = base;
    real_to_int.body = {kernel::store(1, {kernel::integer(0)}, kernel::real(1))};
    bad.push_back(real_to_int);
    Kernel unknown = base;
    kernel::Expr frob = *kernel::binary("add", kernel::integer(1), kernel::integer(2));
    frob.op = "frob";
    unknown.body = {kernel::store(1, {kernel::integer(0)}, std::make_shared<const kernel::Expr>(frob))};
    bad.push_back(unknown);
    for (const Kernel& k : bad) {
        const std::string want = message_of([&] { kernel::Compiled c(k); });
        EXPECT_EQ(want.rfind("kernel int_add: ", 0), 0u) << want;
        EXPECT_EQ(message_of([&] { kernel::compile_llvm(k); }), want);
    }
}

// Compiles from several threads at once, and releases: each function keeps working while its
// code is held.
TEST(PreskNative, ConcurrentCompilesAndReleases) {
    NEED_LLVM();
    const std::vector<Kernel> ks = launched("f64");
    std::vector<std::string> errors(4);
    std::vector<std::thread> th;
    for (size_t w = 0; w < errors.size(); ++w) {
        th.emplace_back([&, w] {
            for (size_t i = w; i < ks.size(); i += errors.size() * 3) {
                const NativeCode code = kernel::compile_llvm(ks[i]);
                const std::string e = test::compare_with_interpreter(ks[i], code, test::draw_inputs(ks[i], 9));
                if (!e.empty() && errors[w].empty()) errors[w] = e;
            }
        });
    }
    for (std::thread& t : th) t.join();
    for (const std::string& e : errors) EXPECT_EQ(e, "");
}

} // namespace
} // namespace presk
