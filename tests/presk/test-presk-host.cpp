// The executor's host program between launches: planned once per function, each value dropped
// (or moved) where it is read for the last time, the environments and the kernel choices kept
// from call to call, a literal converted once, stack types made once, the launch log optional,
// launch outputs from the pool's blocks. None of it may change a bit, a count, or what the
// caller's arguments hold.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "presk_test.h"
#include "realize/executor.h"
#include "realize/host.h"
#include "realize/realization.h"
#include "ref/interp.h"
#include "ref/print.h"

namespace presk {
namespace {

using kernel::Data;
using kernel::DType;
using realize::Executor;
using realize::parse_realization;

std::string example(const std::string& name) {
    std::ifstream in(std::string(PRESK_SOURCE_DIR) + "/examples/" + name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

core::Program program(const std::string& text, const std::string& entry, std::map<std::string, int64_t> dims = {}) {
    std::string err;
    core::Program p = test::compile(text, entry, CheckOptions{std::move(dims), {}}, &err);
    EXPECT_EQ(err, "");
    return p;
}

std::string text_of(const realize::Value& v) {
    std::ostringstream os;
    realize::write_text(os, v, 17);
    return os.str();
}

std::string text_of(const std::vector<realize::Value>& vs) {
    std::string s;
    for (const realize::Value& v : vs) s += text_of(v) + "\n";
    return s;
}

// MiniGPT's gradient (folds and scans over stacked layers, records, calls, host primitives):
// every call of one executor prints what a fresh executor's first call prints, fused and not,
// with the launch log on and off, and leaves its arguments as they were.
TEST(Host, EveryCallGivesTheFirstCallsBits) {
    core::Program p = program(example("minigpt.psk"), "MiniGPT{16, 8, 2, 2}.loss_grad", {{"B", 2}, {"T", 4}});
    ref::Interp interp(p, {256, 7, false});
    const auto args = interp.entry_args();
    for (const char* r : {"f64", "f32", "bf16"}) {
        for (bool fuse : {true, false}) {
            realize::ExecOptions o{7};
            o.fuse = fuse;
            Executor logged(p, parse_realization(r), o);
            const std::vector<realize::Value> in = logged.convert_args(p.entry, args);
            const std::string given = text_of(in);
            const std::string want = text_of(logged.call_values(p.entry, in));
            const size_t launches = logged.launches().size();
            o.log_launches = false;
            Executor quiet(p, parse_realization(r), o);
            for (int call = 0; call < 3; ++call) {
                const std::string what =
                    std::string(r) + (fuse ? " fused" : " unfused") + " call " + std::to_string(call);
                EXPECT_EQ(text_of(quiet.call_values(p.entry, in)), want) << what;
                EXPECT_EQ(text_of(logged.call_values(p.entry, in)), want) << what;
                EXPECT_EQ(text_of(in), given) << what;
            }
            EXPECT_EQ(logged.launches().size(), 4 * launches) << r;
            EXPECT_TRUE(quiet.launches().empty()) << r;
            EXPECT_EQ(quiet.unfused_launches() * 4, logged.unfused_launches() * 3) << r;  // 3 calls and 4
            ASSERT_EQ(quiet.kernels().size(), logged.kernels().size()) << r;
            for (size_t k = 0; k < quiet.kernels().size(); ++k)
                EXPECT_EQ(quiet.kernels()[k]->name, logged.kernels()[k]->name) << r << " " << k;
        }
    }
}

// A call that fails part way (an id out of range in a kernel of a fold's step) leaves nothing
// behind: the next call gives a fresh executor's bits and allocates nothing new.
TEST(Host, AFailedCallLeavesNothingBehind) {
    const char* text = "module Row{D} {\n  param w : [D] = normal(0, 1)\n"
                       "  fn step(acc : [B, D], t : [6, D], ids : int<6>[B]) -> [B, D] { acc + embed(t, ids) * w }\n}\n"
                       "module Net{D, L} {\n  param rows : stack[L] Row{D}\n  param t : [6, D] = normal(0, 1)\n"
                       "  fn f(ids : int<6>[B], more : int<6>[B]) -> [B, D] {\n"
                       "    fold(rows.step, embed(t, ids), t, more)\n  }\n}\n";
    core::Program p = program(text, "Net{3, 2}.f", {{"B", 2}});
    ref::Interp interp(p, {256, 0, false});
    const auto args = interp.entry_args();
    auto bad = args;
    ref::Tensor more = *bad[2].t;
    more.in[1] = 9;
    bad[2] = ref::make_tensor(more);
    Executor fresh(p, parse_realization("f32"));
    const std::string want = text_of(fresh.call(p.entry, args));
    Executor ex(p, parse_realization("f32"));
    ASSERT_EQ(text_of(ex.call(p.entry, args)), want);
    const int64_t blocks = ex.buffers().fresh_blocks();
    std::string msg;
    try {
        ex.call(p.entry, bad);
    } catch (const Error& e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("Row{3}.step/%"), std::string::npos) << msg;
    EXPECT_EQ(text_of(ex.call(p.entry, args)), want);
    EXPECT_EQ(ex.buffers().fresh_blocks(), blocks);
}

// In f32 a literal (an f64 buffer) is read in f32: converted at the first launch, and the same
// f32 buffer read by every later launch of that kernel (the hook keeps each buffer it is shown,
// so a conversion per launch could not reuse the first one's memory).
TEST(Host, ALiteralIsConvertedOnce) {
    core::Program p = program("fn f(x : [batch, 5]) -> [batch, 5] {\n  x * 0.1 + x\n}\n", "f", {{"batch", 3}});
    ref::Interp interp(p, {256, 1, false});
    const auto args = interp.entry_args();
    std::vector<const void*> scalars;
    std::vector<Data> kept;
    realize::ExecOptions o;
    o.on_launch = [&](const kernel::Kernel&, const std::vector<const Data*>& in, const Data&) {
        for (const Data* d : in)
            if (d->size() == 1) {
                EXPECT_EQ(d->dtype(), DType::F32);
                EXPECT_EQ(d->real(0), (double)0.1f);
                scalars.push_back(d->raw());
                kept.push_back(*d);
            }
    };
    Executor ex(p, parse_realization("f32"), o);
    const std::vector<realize::Value> in = ex.convert_args(p.entry, args);
    const std::string first = text_of(ex.call_values(p.entry, in));
    EXPECT_EQ(text_of(ex.call_values(p.entry, in)), first);
    ASSERT_EQ(scalars.size(), 2u);
    EXPECT_EQ(scalars[0], scalars[1]);
}

realize::Value tensor(TypeP type, Data d) { return realize::detail::tensor_value(std::move(type), std::move(d)); }

// A stack's layers share one type object, and so do stacks of parts of one type; a memo past
// its bound starts over and still gives the types unstacked and stacked give.
TEST(Host, StackTypesAreMadeOnce) {
    realize::detail::TypeMemo types;
    const TypeP leaf = tensor_type(Elem::Real, {{"", 3}, {"n", 2}});
    const TypeP rec = record_type({"w", "b"}, {leaf, leaf});
    realize::Value stack;
    stack.type = rec;
    stack.items = {tensor(leaf, Data::from_reals(DType::F32, {0, 1, 2, 3, 4, 5})),
                   tensor(leaf, Data::from_reals(DType::F32, {6, 7, 8, 9, 10, 11}))};
    const realize::Value a = realize::detail::slice_first(stack, 0, types);
    const realize::Value b = realize::detail::slice_first(stack, 2, types);
    EXPECT_EQ(a.type.get(), b.type.get());
    EXPECT_EQ(a.items[0].type.get(), b.items[1].type.get());
    EXPECT_EQ(to_string(*a.type), "{w: [n: 2], b: [n: 2]}");
    EXPECT_EQ(b.items[1].t->reals(), (std::vector<double>{10, 11}));
    const realize::Value s1 = realize::detail::stack_first({a, b}, types);
    const realize::Value s2 = realize::detail::stack_first({b, a, b}, types);
    EXPECT_EQ(to_string(*s1.type), "{w: [2, n: 2], b: [2, n: 2]}");
    EXPECT_EQ(to_string(*s2.type), "{w: [3, n: 2], b: [3, n: 2]}");
    EXPECT_EQ(s1.type.get(), realize::detail::stack_first({b, a}, types).type.get());
    EXPECT_EQ(s1.items[1].t->reals(), (std::vector<double>{6, 7, 10, 11}));
    for (int64_t k = 0; k < 5000; ++k) {  // fresh types, as from_ref makes them: the memo empties itself
        const TypeP t = tensor_type(Elem::Real, {{"", 2}, {"", k}});
        EXPECT_EQ(to_string(*types.unstacked(t)), "[" + std::to_string(k) + "]");
        EXPECT_EQ(to_string(*types.stacked(t, 4)), "[4, 2, " + std::to_string(k) + "]");
    }
    EXPECT_EQ(to_string(*realize::detail::slice_first(stack, 1, types).type), "{w: [n: 2], b: [n: 2]}");
}

// A pool's block comes back to its free list when its last reader lets it go, and is freed when
// that happens after the pool is gone; copies, moves and views share it.
TEST(Buffers, ABlockGoesBackToItsPoolOrOutlivesIt) {
    auto pool = std::make_unique<kernel::BufferPool>();
    const void* first = nullptr;
    {
        Data d(DType::F64, 5, pool.get());
        first = d.raw();
        Data copy = d;
        Data moved = std::move(copy);
        EXPECT_EQ(copy.size(), 0);
        EXPECT_EQ(std::as_const(moved).raw(), first);  // (the mutable raw() would copy shared elements)
        EXPECT_TRUE(d.shared());
        Data& self = moved;
        moved = self;
        EXPECT_EQ(std::as_const(moved).raw(), first);
        EXPECT_EQ(pool->free_buffers(), 0);
    }
    EXPECT_EQ(pool->free_buffers(), 1);
    Data again(DType::F32, 10, pool.get());  // 40 bytes: the same 64-byte block
    EXPECT_EQ(std::as_const(again).raw(), first);
    EXPECT_EQ(pool->fresh_blocks(), 1);
    EXPECT_EQ(pool->free_buffers(), 0);
    for (int64_t i = 0; i < 10; ++i) again.set_real(i, (double)i);
    const Data view = again.view(2, 3);
    pool.reset();
    Data kept = view;
    again = Data();
    EXPECT_EQ(kept.reals(), (std::vector<double>{2, 3, 4}));
}

} // namespace
} // namespace presk
