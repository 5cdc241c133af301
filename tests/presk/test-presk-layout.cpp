// The equality test of the layout space (kernel/layout.h; the seed's "A test lowers every point
// of four nests"): the points of four nests (a Linear dot, attention's scores and apply eins,
// its masked softmax) in f64, f32 and bf16, each lowered (the pack kernel included) and run
// on the kernel interpreter and natively (LLVM JIT), every output bit equal to the default
// point's on the interpreter. A fifth of the points (every fifth, in enumeration order) is also
// split at depths 0, 1 and 2 over two and four workers natively; a split whose loop is not
// parallel there is the plan's refusal (condition 8), counted, not run.
//
// By default the points run are a subset that still takes every value of every axis: each
// point that differs from the base point (tile [2, 8], no k-block, order IJ, one lane, no pack)
// in one axis (the k-block and its orders counting as one), the tile [4, 16] in 16 lanes (8 in
// f64) in every order, and every twentieth point besides. A laned point of 16 columns runs in
// AVX-512's lanes, the others in SSE's.
// Every point: PRESK_LAYOUT_FULL=1 ctest -L layout-full (without the variable that entry is
// reported as skipped).
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernel/eval.h"
#include "kernel/cost.h"
#include "kernel/launch.h"
#include "kernel/layout.h"
#include "kernel/llvm_jit.h"
#include "native_harness.h"

namespace presk {
namespace {

using kernel::Data;
using kernel::DType;
using kernel::Kernel;
using kernel::Layout;
using kernel::Node;

TypeP real_t(std::vector<Axis> axes) { return tensor_type(Elem::Real, std::move(axes)); }
Axis p(int64_t n) { return Axis{"", n}; }

Node node(const std::string& prim, std::vector<TypeP> ops, std::string text = {}) {
    TypeP r = core::prim_type(prim, ops, {}, text);
    return Node{prim, {}, std::move(text), std::move(ops), r};
}

/// The four nests: rows I = 4, columns J = 16, K = 128 (so every tile and k-block applies).
std::vector<std::pair<std::string, Node>> nests() {
    const Axis b{"batch", 1}, h{"heads", 2};
    return {
        {"linear dot", node("dot", {real_t({Axis{"batch", 4}, p(128)}), real_t({p(128), p(16)})})},
        {"scores ein", node("ein", {real_t({b, h, Axis{"seq", 4}, p(128)}), real_t({b, h, Axis{"seq2", 16}, p(128)})},
                            "bhid,bhjd->bhij")},
        {"apply ein", node("ein", {real_t({b, h, Axis{"seq", 4}, p(128)}), real_t({b, h, p(128), p(16)})},
                           "bhij,bhjd->bhid")},
        {"masked softmax", node("softmax", {real_t({b, h, Axis{"seq", 4}, Axis{"seq2", 16}}),
                                            tensor_type(Elem::Bool, {Axis{"seq", 4}, Axis{"seq2", 16}})})},
    };
}

/// Every point of a nest's space (kernel::layout_space, the default point left out: it is the
/// reference; lanes 0 standing for the type's width), with whether the default subset takes it.
std::vector<std::pair<Layout, bool>> points(const Node& n) {
    std::vector<std::pair<Layout, bool>> out;
    const std::vector<Layout> space = kernel::layout_space(n, 0);
    for (size_t i = 1; i < space.size(); ++i) {
        const Layout& l = space[i];
        if (l.form != Layout::Form::Tiled) {
            out.emplace_back(l, true);
            continue;
        }
        const int differ = (l.tile_m != 2 || l.tile_n != 8) + (l.kblock != 0 || l.order != "IJ") + (l.lanes != 1) + l.pack;
        const bool register_tile = l.tile_m == 4 && l.tile_n == 16 && l.lanes != 1 && !l.pack;  // in 16 lanes, every order
        out.emplace_back(l, differ <= 1 || register_tile || i % 20 == 0);
    }
    return out;
}

std::vector<Data> inputs(const Kernel& k, uint64_t seed) { return test::draw_inputs(k, seed); }

/// The tiled point [m, n] with a k-block (0 for none), an order, lanes and a pack.
Layout tiled_at(int m, int n, int kb, const std::string& order, int lanes, bool pack = false) {
    return Layout{.form = Layout::Form::Tiled, .tile_m = m, .tile_n = n, .kblock = kb, .order = order, .lanes = lanes, .pack = pack};
}

/// The kernels run in turn on the interpreter: each one's output the next one's operand 1
/// (the pack's panel, the other inputs as they are), the last one's output returned.
Data interpret(const std::vector<Kernel>& ks, const std::vector<Data>& in) {
    Data panel, out;
    for (size_t i = 0; i < ks.size(); ++i) {
        std::vector<const Data*> ptrs;
        if (i + 1 < ks.size()) ptrs = {&in[1]};
        else for (const Data& d : in) ptrs.push_back(&d);
        if (i > 0) ptrs[1] = &panel;
        kernel::run(ks[i], ptrs, i + 1 < ks.size() ? panel : out);
    }
    return out;
}

/// The kernels compiled natively.
std::vector<kernel::NativeCode> compile(const std::vector<Kernel>& ks) {
    std::vector<kernel::NativeCode> codes;
    for (const Kernel& k : ks) codes.push_back(kernel::compile_llvm(k));
    return codes;
}

/// The same as interpret() natively, the last kernel launched on `pool` (null: one call over
/// its range).
std::vector<unsigned char> native(const std::vector<Kernel>& ks, const std::vector<kernel::NativeCode>& codes,
                                  const std::vector<Data>& in, kernel::Pool* pool) {
    std::vector<unsigned char> panel, out;
    for (size_t i = 0; i < ks.size(); ++i) {
        std::vector<void*> bufs;
        if (i + 1 < ks.size()) bufs = {const_cast<void*>(in[1].raw())};
        else for (const Data& d : in) bufs.push_back(const_cast<void*>(d.raw()));
        if (i > 0) bufs[1] = panel.data();
        int64_t n = 1;
        for (const Axis& a : ks[i].output.axes) n *= a.size;
        std::vector<unsigned char>& o = i + 1 < ks.size() ? panel : out;
        o.assign((size_t)n * kernel::element_size(ks[i].output.dtype), (unsigned char)0xA5);
        bufs.push_back(o.data());
        kernel::launch(ks[i], codes[i], bufs.data(), pool);
    }
    return out;
}

void sweep(bool full) {
    const bool jit = kernel::have_llvm();
    kernel::Pool two(2), four(4);
    int64_t ran = 0, refused = 0, split_ran = 0, split_refused = 0;
    for (const auto& [name, n] : nests()) {
        for (DType t : {DType::F64, DType::F32, DType::BF16}) {
            const std::vector<Kernel> base = kernel::lower_layout(n, t, Layout{});
            const std::vector<Data> in = inputs(base.back(), 11);
            const std::vector<unsigned char> want = test::bytes_of(interpret(base, in));
            // The lanes of a laned point: the register's width of AVX-512 (8 f64, 16 f32) on the
            // tiles of 16 columns, that of SSE (2, 4) on the others; LLVM splits a vector wider
            // than the host's registers, so both run on every x86-64 and AArch64.
            const int narrow = t == DType::F64 ? 2 : 4, wide = 4 * narrow;
            const auto all = points(n);
            for (size_t i = 0; i < all.size(); ++i) {
                if (!full && !all[i].second) continue;
                Layout l = all[i].first;
                if (l.lanes == 0) l.lanes = t == DType::BF16 ? 1 : l.tile_n == 16 ? wide : narrow;
                const std::string what = name + " in " + kernel::dtype_name(t) + " at " + kernel::to_string(l);
                std::vector<Kernel> ks;
                try {
                    ks = kernel::lower_layout(n, t, l);
                } catch (const Error& e) {
                    EXPECT_EQ(std::string(e.what()).find("layout: "), 0u) << what << ": " << e.what();
                    ++refused;
                    continue;
                }
                ++ran;
                EXPECT_EQ(test::bytes_of(interpret(ks, in)), want) << what << ", on the kernel interpreter";
                if (!jit) continue;
                EXPECT_EQ(native(ks, compile(ks), in, nullptr), want) << what << ", natively";
                if (i % 5 != 0) continue;
                std::vector<std::vector<kernel::NativeCode>> held;  // the same text at each depth, held together
                for (int depth : {0, 1, 2}) {
                    ks.back().split_depth = depth;
                    if (!kernel::split_loop(ks.back())) {
                        split_refused += 2;
                        continue;
                    }
                    const std::vector<kernel::NativeCode>& codes = held.emplace_back(compile(ks));
                    for (kernel::Pool* pool : {&two, &four}) {
                        ks.back().split_workers = pool->size();
                        ++split_ran;
                        EXPECT_EQ(native(ks, codes, in, pool), want)
                            << what << ", split at depth " << depth << " over " << pool->size() << " workers";
                    }
                }
            }
        }
    }
    std::printf("%lld points run, %lld refused by the builder; %lld splits run, %lld not parallel (%s)\n",
                (long long)ran, (long long)refused, (long long)split_ran, (long long)split_refused,
                full ? "every point" : "the default subset");
    if (jit) {
        EXPECT_GT(split_ran, 0);
    }
    if (!jit) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM (llvm-16-dev): the interpreter's half only";
}

TEST(PreskLayout, EveryPointHasTheDefaultsBits) { sweep(false); }

// The seed's pack listing: the tutorial's scores ein packed, tiled [2, 4] in four lanes (its
// split at depth 1 is not in the text), statement for statement, in this printer's vector
// notation (`..+4` and splat(s, 4) where the seed writes `<v>`); the node is built here, so
// its two seq axes are not renamed seq2 as the checker renames them.
TEST(PreskLayout, SeedPackListing) {
    const std::vector<Axis> qk{Axis{"batch", 1}, Axis{"heads", 2}, Axis{"seq", 4}, Axis{"hd", 4}};
    Layout l;
    l.form = Layout::Form::Tiled;
    l.tile_m = 2;
    l.tile_n = 4;
    l.lanes = 4;
    l.pack = true;
    l.split_depth = 1;
    l.split_workers = 2;
    const std::vector<Kernel> ks = kernel::lower_layout(node("ein", {real_t(qk), real_t(qk)}, "bhid,bhjd->bhij"), DType::F32, l);
    ASSERT_EQ(ks.size(), 2u);
    EXPECT_EQ(kernel::to_string(ks[0]) + kernel::to_string(ks[1]),
              R"(kernel pack (%0 : f32[batch: 1, heads: 2, seq: 4, hd: 4]) -> %1 : f32[batch: 1, heads: 2, hd: 4, seq: 4] {
  for i0 in 0..1 {
    for i1 in 0..2 {
      for i2 in 0..4 {
        for i3 in 0..4 {
          %1[i0, i1, i2, i3] = %0[i0, i1, i3, i2]
        }
      }
    }
  }
}
kernel ein[batch, heads, seq, seq] (%0 : f32[batch: 1, heads: 2, seq: 4, hd: 4], %1 : f32[batch: 1, heads: 2, hd: 4, seq: 4]) -> %2 : f32[batch: 1, heads: 2, seq: 4, seq: 4] {
  for i0 in 0..1 {
    for i1 in 0..2 {
      for i2 in 0..2 {
        for i3 in 0..1 {
          v0 = splat(0, 4)
          v1 = splat(0, 4)
          for i4 in 0..4 {
            s0 = %0[i0, i1, ((i2 * 2) + 0), i4]
            s1 = %0[i0, i1, ((i2 * 2) + 1), i4]
            v2 = %1[i0, i1, i4, ((i3 * 4) + 0)..+4]
            v0 = (v0 + (splat(s0, 4) * v2))
            v1 = (v1 + (splat(s1, 4) * v2))
          }
          %2[i0, i1, ((i2 * 2) + 0), ((i3 * 4) + 0)..+4] = v0
          %2[i0, i1, ((i2 * 2) + 1), ((i3 * 4) + 0)..+4] = v1
        }
      }
    }
  }
}
)");
    const std::optional<kernel::Split> sp = kernel::split_loop(ks[1]);
    ASSERT_TRUE(sp.has_value());
    EXPECT_EQ(sp->var, 1);  // the heads
}

// The other nests of the space: a batched matmul and the dot's two derivatives as
// core/autodiff.cpp writes them (dot_vjp_l reads its operand 1 with K innermost, so lanes
// need a pack; dot_vjp_r sums two leading axes as one K, so it has no k-block), at a point of
// each axis, bit-equal to the default on the interpreter and natively.
TEST(PreskLayout, MatmulAndTheDotDerivatives) {
    const Axis b{"batch", 2}, t{"seq", 4};
    const std::vector<std::pair<std::string, Node>> others = {
        {"matmul", node("matmul", {real_t({b, t, p(32)}), real_t({b, p(32), p(16)})})},
        {"dot_vjp_l", node("ein", {real_t({b, t, p(16)}), real_t({p(8), p(16)})}, "abd,cd->abc")},
        {"dot_vjp_r", node("ein", {real_t({b, t, p(4)}), real_t({b, t, p(8)})}, "abc,abd->cd")},
    };
    const std::vector<Layout> space = kernel::layout_space(others[0].second, 4);
    auto tiled = [&](int m, int n, int kb, const std::string& order, int lanes, bool pack) {
        for (const Layout& l : space)
            if (l.tile_m == m && l.tile_n == n && l.kblock == kb && l.order == order && l.lanes == lanes && l.pack == pack)
                return l;
        ADD_FAILURE() << "no tiled point [" << m << ", " << n << "] " << kb << " " << order;
        return Layout{};
    };
    Layout row;
    row.form = Layout::Form::RowWise;
    const std::vector<Layout> points = {row,
                                        tiled(1, 1, 0, "JI", 1, false),
                                        tiled(2, 4, 0, "IJ", 1, true),
                                        tiled(4, 8, 0, "JI", 4, true),
                                        tiled(2, 8, 32, "KJI", 1, false),
                                        tiled(4, 4, 32, "IJK", 4, false)};
    int64_t ran = 0;
    for (const auto& [name, n] : others)
        for (DType dt : {DType::F64, DType::F32}) {
            const std::vector<Kernel> base = kernel::lower_layout(n, dt, Layout{});
            const std::vector<Data> in = inputs(base.back(), 5);
            const std::vector<unsigned char> want = test::bytes_of(interpret(base, in));
            for (Layout l : points) {
                if (dt == DType::F64 && l.lanes == 4) l.lanes = 2;
                std::vector<Kernel> ks;
                try {
                    ks = kernel::lower_layout(n, dt, l);
                } catch (const Error& e) {
                    EXPECT_EQ(std::string(e.what()).find("layout: "), 0u) << e.what();
                    continue;
                }
                ++ran;
                const std::string what = name + " in " + kernel::dtype_name(dt) + " at " + kernel::to_string(l);
                EXPECT_EQ(test::bytes_of(interpret(ks, in)), want) << what;
                if (kernel::have_llvm()) {
                    EXPECT_EQ(native(ks, compile(ks), in, nullptr), want) << what << ", natively";
                }
            }
        }
    EXPECT_GE(ran, 24);
}

// The epilogue: the Linear's dot and a batched matmul with a bias along J folded into the
// tiled form's stores, bit-equal to the default's product followed by the add's kernel, in f64,
// f32 and bf16 (stored, read back and added), on the interpreter and natively; the row-wise
// form and a spilling order refused.
TEST(PreskLayout, TheBiasEpilogueGivesTheProductThenTheAddsBits) {
    const Axis b{"batch", 2};
    const std::vector<Node> products = {nests()[0].second,
                                        node("matmul", {real_t({b, p(8), p(32)}), real_t({b, p(32), p(16)})})};
    auto point = [](int m, int n, int kb, const std::string& order, int lanes, bool pack) {
        Layout l = tiled_at(m, n, kb, order, lanes, pack);
        l.bias = true;
        return l;
    };
    Layout plain, row;
    plain.bias = row.bias = true;
    row.form = Layout::Form::RowWise;
    const std::vector<Layout> points = {plain, point(1, 1, 0, "IJ", 1, false), point(2, 8, 0, "JI", 1, true),
                                        point(4, 16, 0, "IJ", 4, false), point(4, 16, 32, "JIK", 4, true),
                                        point(2, 8, 32, "IKJ", 1, false), row};
    int64_t ran = 0, refused = 0;
    for (const Node& n : products)
        for (DType t : {DType::F64, DType::F32, DType::BF16}) {
            const std::vector<Kernel> base = kernel::lower_layout(n, t, Layout{});
            const Kernel add = kernel::lower(node("add", {n.result, real_t({p(16)})}), t);
            const std::vector<Data> in = inputs(kernel::lower_layout(n, t, point(1, 1, 0, "IJ", 1, false)).back(), 13);
            const Data product = interpret(base, {in[0], in[1]});
            Data sum;
            kernel::run(add, {&product, &in[2]}, sum);
            const std::vector<unsigned char> want = test::bytes_of(sum);
            for (Layout l : points) {
                if (t == DType::F64 && l.lanes == 4) l.lanes = 2;
                const std::string what = n.prim + " in " + kernel::dtype_name(t) + " at " + kernel::to_string(l);
                std::vector<Kernel> ks;
                try {
                    ks = kernel::lower_layout(n, t, l);
                } catch (const Error& e) {
                    EXPECT_EQ(std::string(e.what()).find("layout: "), 0u) << e.what();
                    ++refused;
                    continue;
                }
                ++ran;
                EXPECT_EQ(ks.back().inputs.size(), 3u) << what;
                EXPECT_EQ(test::bytes_of(interpret(ks, in)), want) << what;
                if (kernel::have_llvm()) {
                    EXPECT_EQ(native(ks, compile(ks), in, nullptr), want) << what << ", natively";
                }
            }
        }
    EXPECT_GE(ran, 24);
    EXPECT_GE(refused, 2 * 3 + 2 * 2);  // the row-wise form everywhere; IKJ and the lanes on bf16
    auto why = [&](const Layout& l, DType t) {
        try {
            kernel::lower_layout(products[0], t, l);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("admitted");
    };
    EXPECT_NE(why(row, DType::F32).find("row-wise form"), std::string::npos);
    EXPECT_NE(why(point(2, 8, 32, "IKJ", 1, false), DType::F32).find("last store"), std::string::npos);
    Layout softmax_bias;
    softmax_bias.bias = true;
    EXPECT_THROW(kernel::lower_layout(nests()[3].second, DType::F32, softmax_bias), Error);
}

// The cost model counts register loads per multiply-add: the row-wise form loads and stores
// the output at every one, the [1, 8] tile shares each left element over eight columns, and
// the [4, 16] tile in four lanes shares each vector of the right operand over four rows.
TEST(PreskLayout, TheCostModelCountsLoadsPerMultiplyAdd) {
    const Node dot = nests()[0].second;  // x[4, 128] . w[128, 16]
    auto per_mac = [&](Layout l) { return kernel::cost(kernel::lower_layout(dot, DType::F32, l), 32).loads_per_multiply_add(); };
    Layout row;
    row.form = Layout::Form::RowWise;
    Layout t18;
    t18.form = Layout::Form::Tiled;
    t18.tile_n = 8;
    Layout t416 = t18;
    t416.tile_m = 4;
    t416.tile_n = 16;
    t416.lanes = 4;
    EXPECT_DOUBLE_EQ(per_mac(row), 33.0 / 16.0);  // the right element and the running sum, the left per 16
    EXPECT_DOUBLE_EQ(per_mac(t18), 9.0 / 8.0);    // one left and eight right per eight
    EXPECT_DOUBLE_EQ(per_mac(t416), 8.0 / 64.0);  // four left and four vectors per sixty-four
    const kernel::Cost one = kernel::cost(kernel::lower_layout(dot, DType::F32, t416), 32);
    t416.split_workers = 2;  // at depth 0, the one block of four rows: no split, counted whole
    EXPECT_DOUBLE_EQ(kernel::cost(kernel::lower_layout(dot, DType::F32, t416), 32).ops, one.ops);
    t416.tile_m = 2;
    const kernel::Cost two = kernel::cost(kernel::lower_layout(dot, DType::F32, t416), 32);
    t416.split_workers = 0;
    EXPECT_LT(two.ops, kernel::cost(kernel::lower_layout(dot, DType::F32, t416), 32).ops);  // two row blocks over two workers
}

// The cost model's cycles (docs/presk.md, "The cost model") on a 1024^3 f32 dot in 16 lanes
// on 32 registers: the [8, 32] tile's 26 live values leave 6 registers for the 8 products in
// flight, so it is priced above the [8, 16] tile for all its fewer loads; one accumulator is
// bound by the add's latency; and the orders whose tiles walk down the rows (KJI: operand 0's
// and the output's lines start anew at every tile) or sweep operand 1's 1024 rows a line each
// (IJ without a k-block) pay for their lines.
TEST(PreskLayout, TheCostModelPricesRegistersLatencyAndWalks) {
    const Node dot = node("dot", {real_t({p(1024), p(1024)}), real_t({p(1024), p(1024)})});
    auto cost = [&](int m, int n, int kb, const std::string& order) {
        return kernel::cost(kernel::lower_layout(dot, DType::F32, tiled_at(m, n, kb, order, 16)), 32);
    };
    auto cycles = [&](int m, int n, int kb, const std::string& order) { return cost(m, n, kb, order).cycles; };
    auto operations = [&](int m, int n) {
        const kernel::Cost c = cost(m, n, 0, "IJ");
        return c.cycles - c.memory;
    };
    EXPECT_GT(operations(8, 32), 1.3 * operations(8, 16));
    EXPECT_GE(cycles(1, 16, 0, "IJ"), 1024.0 * 64 * 1024 * kernel::kLatency);
    EXPECT_GT(cycles(8, 16, 32, "KJI"), 1.2 * cycles(8, 16, 32, "KIJ"));
    EXPECT_GT(cycles(8, 16, 0, "IJ"), 1.2 * cycles(8, 16, 128, "KIJ"));
}

// What the builder refuses, each with its reason.
TEST(PreskLayout, Refusals) {
    const auto all = nests();
    const Node& dot = all[0].second;
    const Node& scores = all[1].second;
    auto refused = [](const Node& n, DType t, Layout l, const std::string& why) {
        try {
            kernel::lower_layout(n, t, l);
            ADD_FAILURE() << "not refused: " << kernel::to_string(l) << " (" << why << ")";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    };
    Layout tiled;
    tiled.form = Layout::Form::Tiled;
    Layout l = tiled;
    l.tile_m = 3;
    l.tile_n = 4;
    refused(dot, DType::F32, l, "m_i is 1, 2, 4 or 8");
    l = tiled;
    l.tile_n = 5;
    refused(dot, DType::F32, l, "n_j is 4, 8, 16 or 32");
    l = tiled;
    l.kblock = 64;
    refused(dot, DType::F32, l, "the k-block is none, 32 or 128");
    l.kblock = 32;
    l.order = "KIJ";
    refused(dot, DType::BF16, l, "a k-block on bf16 storage");
    l = tiled;
    l.tile_n = 8;
    l.lanes = 4;
    refused(scores, DType::F32, l, "need a pack");
    refused(dot, DType::BF16, l, "lanes on bf16");
    l = Layout{};
    l.form = Layout::Form::RowWise;
    refused(dot, DType::BF16, l, "row-wise form on bf16");
    l = Layout{};
    l.passes = 2;
    refused(all[3].second, DType::BF16, l, "2 passes on bf16");
    refused(dot, DType::F32, l, "passes are a softmax's");
}

// Run by the ctest entry test-presk-layout-full (label layout-full) when PRESK_LAYOUT_FULL=1.
TEST(PreskLayout, DISABLED_FullSweep) {
    const char* f = std::getenv("PRESK_LAYOUT_FULL");
    if (!f || std::string(f) != "1") GTEST_SKIP() << "GK-SKIP: the full sweep runs with PRESK_LAYOUT_FULL=1";
    sweep(true);
}

} // namespace
} // namespace presk
