// Host values without copies (the seed's rule): buffers (kernel/data.h) in the storage type,
// 64-byte-aligned blocks shared by reference count, a copy before a write to shared elements,
// views, the free lists by length, the fill of fresh buffers and the checks of element access;
// then the executor's values over them: a stack's layers and contiguous slices are views, a
// stack is laid out once, and a second call takes every launch output from the free lists.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kernel/data.h"
#include "lang/source.h"
#include "presk_test.h"
#include "realize/executor.h"
#include "realize/host.h"
#include "ref/interp.h"

namespace presk::kernel {
namespace {

TEST(Data, ElementsAreInTheStorageType) {
    const double x = 1 + 0x1p-8 + 0x1p-30;  // f32: 1 + 2^-8; bf16 through f32: a tie, to even 1
    const Data f64 = Data::from_reals(DType::F64, {x, -2}), f32 = Data::from_reals(DType::F32, {x, -2}),
               bf16 = Data::from_reals(DType::BF16, {x, -2});
    EXPECT_EQ(f64.data<double>()[0], x);
    EXPECT_EQ(f32.data<float>()[0], 1 + 0x1p-8f);
    EXPECT_EQ(bf16.data<uint16_t>()[0], 0x3F80);  // 1.0
    EXPECT_EQ(bf16.data<uint16_t>()[1], 0xC000);  // -2.0
    EXPECT_EQ(f32.real(0), round_to(DType::F32, x));
    EXPECT_EQ(bf16.real(0), round_to(DType::BF16, x));
    EXPECT_EQ(bf16.reals(), (std::vector<double>{1, -2}));
    const Data ids = Data::from_ints({INT64_MIN, 7});
    EXPECT_EQ(ids.data<int64_t>()[0], INT64_MIN);
    EXPECT_EQ(ids.ints(), (std::vector<int64_t>{INT64_MIN, 7}));
    EXPECT_EQ(element_size(DType::F64), 8u);
    EXPECT_EQ(element_size(DType::F32), 4u);
    EXPECT_EQ(element_size(DType::BF16), 2u);
    EXPECT_EQ(element_size(DType::I64), 8u);
    for (const Data* d : {&f64, &f32, &bf16, &ids}) EXPECT_EQ(reinterpret_cast<uintptr_t>(d->raw()) % 64, 0u);
}

TEST(Data, AccessOfTheWrongKindOrOutsideIsAnError) {
    Data f = Data::from_reals(DType::F32, {1, 2, 3});
    const Data ids = Data::from_ints({1});
    EXPECT_THROW(f.data<double>(), Error);
    EXPECT_THROW(ids.data<float>(), Error);
    EXPECT_THROW(f.real(3), Error);
    EXPECT_THROW(f.real(-1), Error);
    EXPECT_THROW(f.set_real(3, 0), Error);
    EXPECT_THROW(f.integer(0), Error);
    EXPECT_THROW(ids.real(0), Error);
    EXPECT_THROW(f.view(2, 2), Error);
    EXPECT_THROW(f.view(-1, 1), Error);
    EXPECT_THROW(Data(DType::F64, -1), Error);
    EXPECT_THROW(Data(DType::F64, INT64_MAX), Error);
    EXPECT_THROW(Data::from_reals(DType::I64, {1}), Error);
    try {
        f.data<double>();
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "buffer: a f32 buffer read as f64");
    }
}

// A copy shares the elements; a write to shared elements copies them first, so the other
// reader keeps its values; a write to elements no one else reads is in place.
TEST(Data, CopiesShareAndWritesCopyFirst) {
    Data a = Data::from_reals(DType::F32, {1, 2, 3, 4});
    EXPECT_FALSE(a.shared());
    Data b = a;
    EXPECT_TRUE(a.shared());
    EXPECT_EQ(std::as_const(a).raw(), std::as_const(b).raw());
    b.set_real(1, 0.1);
    EXPECT_EQ(b.real(1), (double)0.1f);
    EXPECT_EQ(a.real(1), 2);
    EXPECT_NE(std::as_const(a).raw(), std::as_const(b).raw());
    EXPECT_FALSE(a.shared());
    EXPECT_FALSE(b.shared());
    const void* before = std::as_const(b).raw();
    b.set_real(2, 5);
    EXPECT_EQ(std::as_const(b).raw(), before);
    EXPECT_EQ(b.reals(), (std::vector<double>{1, (double)0.1f, 5, 4}));
}

// A view reads part of another's elements without a copy; writing through it copies the
// part, never the elements the stack holds.
TEST(Data, ViewsShareTheirStacksElements) {
    const Data stack = Data::from_reals(DType::F64, {0, 1, 2, 3, 4, 5});
    Data layer = stack.view(2, 2);
    EXPECT_EQ(layer.size(), 2);
    EXPECT_EQ(std::as_const(layer).raw(), stack.data<double>() + 2);
    EXPECT_EQ(layer.reals(), (std::vector<double>{2, 3}));
    EXPECT_TRUE(stack.shared());
    EXPECT_EQ(stack.view(6, 0).size(), 0);
    layer.set_real(0, -1);
    EXPECT_EQ(layer.reals(), (std::vector<double>{-1, 3}));
    EXPECT_EQ(stack.real(2), 2);
    EXPECT_FALSE(stack.shared());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(std::as_const(layer).raw()) % 64, 0u);  // a fresh block
}

// Released blocks go back to their pool's free list by length and are taken again by the next
// buffer of that length (not filled with zeros); a buffer outliving its pool is freed when it
// goes.
TEST(Data, PoolsReuseBlocksByLength) {
    auto pool = std::make_unique<BufferPool>();
    const void* first = nullptr;
    {
        Data a(DType::F32, 100, pool.get());
        first = std::as_const(a).raw();
        EXPECT_EQ(pool->fresh_blocks(), 1);
        EXPECT_EQ(pool->free_buffers(), 0);
    }
    EXPECT_EQ(pool->free_buffers(), 1);
    {
        Data b(DType::F32, 100, pool.get());  // the same length: the same block
        EXPECT_EQ(std::as_const(b).raw(), first);
        Data c(DType::F64, 50, pool.get());   // 400 bytes too, but that block is b's: a new one
        Data d(DType::F64, 100, pool.get());  // another length: a block of its own
        EXPECT_EQ(pool->fresh_blocks(), 3);
        EXPECT_EQ(pool->free_buffers(), 0);
    }
    EXPECT_EQ(pool->free_buffers(), 3);
    Data kept(DType::I64, 3, pool.get());
    kept.set_integer(0, 42);
    pool.reset();
    EXPECT_EQ(kept.integer(0), 42);  // still readable; freed when `kept` goes
}

TEST(Data, FreshBuffersAreFilledWhereTheBuildSaysSo) {
    BufferPool pool;
    const Data f64(DType::F64, 3), f32(DType::F32, 3, &pool), bf16(DType::BF16, 3), i64(DType::I64, 3);
    if (!fills_fresh_buffers()) GTEST_SKIP() << "this build does not fill fresh buffers (NDEBUG, no GK_NAN_FILL=1)";
    for (int64_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(std::isnan(f64.real(i)));
        EXPECT_TRUE(std::isnan(f32.real(i)));
        EXPECT_TRUE(std::isnan(bf16.real(i)));
        EXPECT_EQ(i64.integer(i), INT64_MIN);
    }
    {
        Data reused(DType::F32, 3, &pool);
        reused.set_real(0, 1);
    }
    const Data again(DType::F32, 3, &pool);  // from the free list, filled again
    EXPECT_TRUE(std::isnan(again.real(0)));
}

// ---- the executor's values ----

realize::Value tensor(TypeP type, Data d) { return realize::detail::tensor_value(type, std::move(d)); }

TEST(Values, AStacksLayerIsAViewOfIt) {
    const TypeP t = tensor_type(Elem::Real, {{"", 3}, {"", 2}});
    const realize::Value stack = tensor(t, Data::from_reals(DType::F32, {0, 1, 2, 3, 4, 5}));
    realize::detail::TypeMemo types;
    for (int64_t l = 0; l < 3; ++l) {
        const realize::Value layer = realize::detail::slice_first(stack, l, types);
        EXPECT_EQ(to_string(*layer.type), "[2]");
        EXPECT_EQ(layer.t->raw(), stack.t->data<float>() + 2 * l);
        EXPECT_EQ(layer.t->reals(), (std::vector<double>{(double)(2 * l), (double)(2 * l + 1)}));
    }
    EXPECT_THROW(realize::detail::slice_first(stack, 3, types), Error);
}

// A stack of parts is one buffer in the widest of their types, each part's elements once.
TEST(Values, AStackIsLaidOutOnce) {
    const TypeP t = tensor_type(Elem::Real, {{"", 2}});
    const realize::Value a = tensor(t, Data::from_reals(DType::BF16, {1, 2}));
    const realize::Value b = tensor(t, Data::from_reals(DType::F32, {0.1, 4}));
    realize::detail::TypeMemo types;
    const realize::Value s = realize::detail::stack_first({a, b}, types);
    EXPECT_EQ(to_string(*s.type), "[2, 2]");
    EXPECT_EQ(s.t->dtype(), DType::F32);
    EXPECT_EQ(s.t->reals(), (std::vector<double>{1, 2, (double)0.1f, 4}));
    const TypeP it = tensor_type(Elem::Int, {{"", 1}}, 9);
    const realize::Value ids =
        realize::detail::stack_first({tensor(it, Data::from_ints({3})), tensor(it, Data::from_ints({8}))}, types);
    EXPECT_EQ(ids.t->ints(), (std::vector<int64_t>{3, 8}));
    EXPECT_THROW(realize::detail::stack_first({a, tensor(it, Data::from_ints({3, 4}))}, types), Error);
}

core::Program program(const std::string& text, const std::string& entry, std::map<std::string, int64_t> dims) {
    std::string err;
    core::Program p = test::compile(text, entry, CheckOptions{std::move(dims), {}}, &err);
    EXPECT_EQ(err, "");
    return p;
}

// slice and index of a contiguous part (one outer block) are views; others are copied, and
// unslice writes its zeros.
TEST(Values, ContiguousSlicesAreViews) {
    const char* text = "fn rows(x : [4, 5]) -> [2, 5] {\n  slice(x, 0, 1, 2)\n}\n"
                       "fn cols(x : [4, 5]) -> [4, 3] {\n  slice(x, 1, 1, 3)\n}\n";
    for (const char* fn : {"rows", "cols"}) {
        core::Program p = program(text, fn, {});
        ref::Interp interp(p, {256, 3, false});
        const auto args = interp.entry_args();
        const ref::Value want = interp.call(fn, args);
        realize::Executor ex(p, realize::parse_realization("f64"));
        const std::vector<realize::Value> in = ex.convert_args(fn, args);
        const realize::Value got = ex.call_values(fn, in);
        ASSERT_EQ(got.t->size(), (int64_t)want.t->re.size());
        for (int64_t i = 0; i < got.t->size(); ++i)
            EXPECT_EQ(got.t->real(i), want.t->re[(size_t)i].to_double()) << fn << " " << i;
        const bool view = got.t->raw() == in[0].t->data<double>() + 5;
        EXPECT_EQ(view, std::string(fn) == "rows") << fn;
    }
}

std::string example(const std::string& name) {
    std::ifstream in(std::string(PRESK_SOURCE_DIR) + "/examples/" + name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// After a first call, every launch's output comes from the free lists (no block is allocated
// new), and the not-zeroed buffers change no bit; the result outlives its executor.
TEST(Values, ASecondCallAllocatesNoLaunchOutput) {
    core::Program p = program(example("minigpt.psk"), "MiniGPT{16, 8, 2, 2}.loss_grad", {{"B", 2}, {"T", 4}});
    ref::Interp interp(p, {256, 7, false});
    const auto args = interp.entry_args();
    for (const char* r : {"f64", "f32", "bf16"}) {
        auto ex = std::make_unique<realize::Executor>(p, realize::parse_realization(r), realize::ExecOptions{7});
        const std::vector<realize::Value> in = ex->convert_args(p.entry, args);
        const ref::Value first = realize::to_ref(ex->call_values(p.entry, in));
        const int64_t fresh = ex->buffers().fresh_blocks();
        EXPECT_GT(fresh, 0) << r;
        const realize::Value second = ex->call_values(p.entry, in);
        EXPECT_EQ(ex->buffers().fresh_blocks(), fresh) << r;
        EXPECT_GT(ex->buffers().free_buffers(), 0) << r;
        ex.reset();
        std::ostringstream a, b;
        ref::write_text(a, first, 17);
        realize::write_text(b, second, 17);
        EXPECT_EQ(a.str(), b.str()) << r;
    }
}

} // namespace
} // namespace presk::kernel
