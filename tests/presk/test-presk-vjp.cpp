// Each differentiable primitive's vjp (a Core-to-Core transform) against central finite
// differences of the function itself, both evaluated by the interpreter at 256 bits.
#include <gtest/gtest.h>

#include "presk_test.h"
#include "ref/interp.h"

namespace presk {
namespace {

using ref::Real;
using ref::Value;

constexpr long kBits = 256;

/// Every real element of a tree, in order (pointers into copies made writable by the caller).
void leaves(Value& v, std::vector<std::shared_ptr<ref::Tensor>>& out) {
    if (v.t) {
        auto t = std::make_shared<ref::Tensor>(*v.t);
        v.t = t;
        if (v.type->elem == Elem::Real) out.push_back(t);
        return;
    }
    for (Value& i : v.items) leaves(i, out);
}

void gather(const Value& v, std::vector<const Real*>& out) {
    if (v.t) {
        for (const Real& r : v.t->re) out.push_back(&r);
        return;
    }
    for (const Value& i : v.items) gather(i, out);
}

/// Checks grad function `g` of scalar function `f` (same arguments; the gradient is of
/// argument 0) on inputs synthesised from seed 1; returns the number of elements compared.
int check_grad(const std::string& text, const std::string& f, const std::string& g, CheckOptions o = {}) {
    std::string err;
    core::Program p = test::compile(text, g, o, &err);
    EXPECT_EQ(err, "");
    if (!err.empty()) return 0;
    std::string fname = p.entry.substr(0, p.entry.rfind('.') + 1) + f;
    if (p.entry.find('.') == std::string::npos) fname = f;
    ref::Interp in(p, {kBits, 1, false});
    std::vector<Value> args = in.entry_args();
    Value grad = in.call(p.entry, args);
    std::vector<const Real*> gs;
    gather(grad, gs);

    Value x0 = args[0];
    std::vector<std::shared_ptr<ref::Tensor>> xs;
    leaves(x0, xs);
    Real h(kBits), fp(kBits), fm(kBits), fd(kBits), diff(kBits), tol(kBits), saved(kBits);
    mpfr_set_ui_2exp(h.get(), 1, -80, MPFR_RNDN);
    size_t k = 0;
    for (auto& t : xs)
        for (Real& x : t->re) {
            std::vector<Value> a = args;
            mpfr_set(saved.get(), x.get(), MPFR_RNDN);
            a[0] = x0;
            mpfr_add(x.get(), saved.get(), h.get(), MPFR_RNDN);
            Value vp = in.call(fname, a);  // (mpfr_set is a macro: no temporaries in its arguments)
            mpfr_set(fp.get(), vp.t->re[0].get(), MPFR_RNDN);
            mpfr_sub(x.get(), saved.get(), h.get(), MPFR_RNDN);
            Value vm = in.call(fname, a);
            mpfr_set(fm.get(), vm.t->re[0].get(), MPFR_RNDN);
            mpfr_set(x.get(), saved.get(), MPFR_RNDN);
            mpfr_sub(fd.get(), fp.get(), fm.get(), MPFR_RNDN);
            mpfr_div(fd.get(), fd.get(), h.get(), MPFR_RNDN);
            mpfr_div_2ui(fd.get(), fd.get(), 1, MPFR_RNDN);
            EXPECT_LT(k, gs.size());
            if (k >= gs.size()) return (int)k;
            mpfr_sub(diff.get(), fd.get(), gs[k]->get(), MPFR_RNDN);
            mpfr_abs(diff.get(), diff.get(), MPFR_RNDN);
            mpfr_abs(tol.get(), gs[k]->get(), MPFR_RNDN);
            mpfr_add_d(tol.get(), tol.get(), 1e-6, MPFR_RNDN);
            mpfr_mul_d(tol.get(), tol.get(), 1e-30, MPFR_RNDN);
            EXPECT_LE(mpfr_cmp(diff.get(), tol.get()), 0)
                << g << " element " << k << ": vjp " << gs[k]->text(40) << " vs finite difference " << fd.text(40);
            ++k;
        }
    EXPECT_EQ(k, gs.size());
    return (int)k;
}

/// f(x, c) = sum(BODY * c) over x : [2, 3], and its gradient in x.
std::string unary(const std::string& body) {
    return "fn f(x : [2, 3], c : [2, 3]) -> [] { sum((" + body + ") * c) }\n"
           "fn g(x : [2, 3], c : [2, 3]) -> [2, 3] { grad(f, x, c) }\n";
}

TEST(PreskVjp, Elementwise) {
    for (const char* body : {"exp(x)", "log(x * x + 1)", "tanh(x)", "sin(x)", "cos(x)", "sqrt(x * x + 1)", "erf(x)",
                             "erfc(x)", "gelu(x)", "-x", "x / (x * x + 2)", "pow(x * x + 1, x)", "x - 3 * x * x",
                             "abs(x)", "sign(x) + x", "maximum(x, c)", "minimum(c, x)", "maximum(x, 0.2 - x)",
                             "where(c, x * x, -x)", "relu(x)", "clamp(x, -0.3, 0.4)"}) {
        SCOPED_TRACE(body);
        EXPECT_EQ(check_grad(unary(body), "f", "g"), 6);
    }
}

TEST(PreskVjp, BroadcastOperands) {
    const char* src =
        "fn f(b : [3], x : [2, 3]) -> [] { sum(x * b + b / (x * x + 1) - b) }\n"
        "fn g(b : [3], x : [2, 3]) -> [3] { grad(f, b, x) }\n";
    EXPECT_EQ(check_grad(src, "f", "g"), 3);
    const char* named =
        "fn f(m : [N], x : [N, 3]) -> [] { sum(sin(x - m)) }\n"
        "fn g(m : [N], x : [N, 3]) -> [N] { grad(f, m, x) }\n";
    EXPECT_EQ(check_grad(named, "f", "g", {{{"N", 2}}, {}}), 2);
    const char* extrema =
        "fn f(b : [3], x : [2, 3]) -> [] { sum(sin(maximum(x, b) * minimum(b, 2 * x))) }\n"
        "fn g(b : [3], x : [2, 3]) -> [3] { grad(f, b, x) }\n";
    EXPECT_EQ(check_grad(extrema, "f", "g"), 3);
    const char* selected =
        "fn f(b : [3], c : [2, 3], x : [2, 3]) -> [] { sum(sin(where(relu(c), x * b, b) + where(c, b, x))) }\n"
        "fn g(b : [3], c : [2, 3], x : [2, 3]) -> [3] { grad(f, b, c, x) }\n";
    EXPECT_EQ(check_grad(selected, "f", "g"), 3);
}

TEST(PreskVjp, Contractions) {
    EXPECT_EQ(check_grad("fn f(x : [2, 3], w : [3, 4]) -> [] { sum(sin(dot(x, w))) }\n"
                         "fn g(x : [2, 3], w : [3, 4]) -> [2, 3] { grad(f, x, w) }\n", "f", "g"), 6);
    EXPECT_EQ(check_grad("fn f(w : [3, 4], x : [2, 3]) -> [] { sum(sin(dot(x, w))) }\n"
                         "fn g(w : [3, 4], x : [2, 3]) -> [3, 4] { grad(f, w, x) }\n", "f", "g"), 12);
    EXPECT_EQ(check_grad("fn f(a : [2, 2, 3], b : [2, 3, 2]) -> [] { sum(sin(matmul(a, b))) }\n"
                         "fn g(a : [2, 2, 3], b : [2, 3, 2]) -> [2, 2, 3] { grad(f, a, b) }\n", "f", "g"), 12);
    EXPECT_EQ(check_grad("fn f(b : [2, 3, 2], a : [2, 2, 3]) -> [] { sum(sin(matmul(a, b))) }\n"
                         "fn g(b : [2, 3, 2], a : [2, 2, 3]) -> [2, 3, 2] { grad(f, b, a) }\n", "f", "g"), 12);
    EXPECT_EQ(check_grad("fn f(q : [2, 3, 2], k : [2, 3, 2]) -> [] { sum(sin(ein(\"hid,hjd->hij\", q, k))) }\n"
                         "fn g(q : [2, 3, 2], k : [2, 3, 2]) -> [2, 3, 2] { grad(f, q, k) }\n", "f", "g"), 12);
    EXPECT_EQ(check_grad("fn f(x : [2, 3], y : [2]) -> [] { sum(sin(ein(\"ij,i->i\", x, y))) }\n"
                         "fn g(x : [2, 3], y : [2]) -> [2, 3] { grad(f, x, y) }\n", "f", "g"), 6);
}

TEST(PreskVjp, Reductions) {
    for (const char* body : {"sum(x, -1)", "mean(x, 0)", "max(x, 1)", "sum(x)", "mean(x)", "min(x, 0)",
                             "log_softmax(x)", "log_softmax(x, 0)"}) {
        SCOPED_TRACE(body);
        std::string src = std::string("fn f(x : [2, 3]) -> [] { sum(sin(") + body + ")) }\n"
                          "fn g(x : [2, 3]) -> [2, 3] { grad(f, x) }\n";
        EXPECT_EQ(check_grad(src, "f", "g"), 6);
    }
}

TEST(PreskVjp, SoftmaxCrossEntropyEmbed) {
    EXPECT_EQ(check_grad(unary("softmax(x)"), "f", "g"), 6);
    EXPECT_EQ(check_grad("fn f(x : [T, T], c : [T, T]) -> [] { sum(softmax(x, causal_mask(x)) * c) }\n"
                         "fn g(x : [T, T], c : [T, T]) -> [T, T] { grad(f, x, c) }\n", "f", "g", {{{"T", 3}}, {}}), 9);
    EXPECT_EQ(check_grad("fn f(x : [2, 5], t : int<5>[2]) -> [] { mean(cross_entropy(x, t)) }\n"
                         "fn g(x : [2, 5], t : int<5>[2]) -> [2, 5] { grad(f, x, t) }\n", "f", "g"), 10);
    EXPECT_EQ(check_grad("fn f(tab : [5, 2], ids : int<5>[4]) -> [] { sum(sin(embed(tab, ids))) }\n"
                         "fn g(tab : [5, 2], ids : int<5>[4]) -> [5, 2] { grad(f, tab, ids) }\n", "f", "g"), 10);
}

TEST(PreskVjp, Structural) {
    EXPECT_EQ(check_grad("fn f(x : [T, 4], c : [2, T, 2]) -> [] { sum(split_heads(x, 2) * c) + sum(sin(merge_heads(split_heads(x, 2)))) }\n"
                         "fn g(x : [T, 4], c : [2, T, 2]) -> [T, 4] { grad(f, x, c) }\n", "f", "g", {{{"T", 3}}, {}}), 12);
    EXPECT_EQ(check_grad("fn f(x : [2, 3], c : [2, 3]) -> [] { sum(sin(slice(x, 1, 1, 2))) + sum(index(x, 0, 1) * index(c, 0, 0)) }\n"
                         "fn g(x : [2, 3], c : [2, 3]) -> [2, 3] { grad(f, x, c) }\n", "f", "g"), 6);
    EXPECT_EQ(check_grad("fn f(x : [3], y : [3]) -> [] { sum(sin(stack(x, y, x))) }\n"
                         "fn g(x : [3], y : [3]) -> [3] { grad(f, x, y) }\n", "f", "g"), 3);
    EXPECT_EQ(check_grad("fn f(x : [3], y : [2, 3]) -> [] { sum(sin(broadcast_like(x, y))) + sum(sum_to(y * x, x) * x) }\n"
                         "fn g(x : [3], y : [2, 3]) -> [3] { grad(f, x, y) }\n", "f", "g"), 3);
    EXPECT_EQ(check_grad("fn f(x : [2, 3]) -> [] { let (a, b) = (x * x, {s: sin(x)})  sum(a + b.s) }\n"
                         "fn g(x : [2, 3]) -> [2, 3] { grad(f, x) }\n", "f", "g"), 6);
}

// The source forms of shapes: subscripts (index and slice of named and positional axes) and
// transpose / permute, which elaborate to index, slice and a one-operand ein.
TEST(PreskVjp, SubscriptsAndPermutes) {
    CheckOptions o{{{"seq", 4}, {"d", 3}}, {}};
    EXPECT_EQ(check_grad("fn f(x : [seq, d], c : [d, seq: 2]) -> [] {\n"
                         "  sum(sin(x[seq: 1..3] * transpose(c, 0, seq))) + sum(x[seq: -1, 1: 0..2] * x[0: 0, d: ..-1])\n"
                         "  + sum(cos(permute(x[seq: ..-1], d, seq)) * c[seq: 0])\n"
                         "}\n"
                         "fn g(x : [seq, d], c : [d, seq: 2]) -> [seq, d] { grad(f, x, c) }\n", "f", "g", o), 12);
}

// split and merge of named axes (the cotangent's elements under the operand's type), softmax
// and cross_entropy over an axis other than the last (moved last by a one-operand ein),
// and a tuple's item `.0` `.1`.
TEST(PreskVjp, ReshapesAxesAndItems) {
    CheckOptions o{{{"seq", 2}, {"feat", 6}}, {}};
    EXPECT_EQ(check_grad("fn f(x : [seq, feat], c : [seq, head: 2, dh: 3]) -> [] {\n"
                         "  sum(sin(split(x, feat -> head: 2, dh: feat / 2)) * c)\n"
                         "  + sum(cos(merge(split(x, 1 -> 3, 2), seq, 1 -> sf)))\n"
                         "}\n"
                         "fn g(x : [seq, feat], c : [seq, head: 2, dh: 3]) -> [seq, feat] { grad(f, x, c) }\n",
                         "f", "g", o), 12);
    EXPECT_EQ(check_grad("fn f(x : [seq, feat], t : int<2>[feat]) -> [] {\n"
                         "  sum(sin(softmax(x, seq) * 3)) + mean(cross_entropy(x, t, seq))\n"
                         "  + sum(softmax(x, -1) * x)\n"
                         "}\n"
                         "fn g(x : [seq, feat], t : int<2>[feat]) -> [seq, feat] { grad(f, x, t) }\n",
                         "f", "g", o), 12);
    EXPECT_EQ(check_grad("fn h(x : [2, 3], y : [2, 3]) -> [] { sum(sin(x * y)) }\n"
                         "fn f(x : [2, 3], y : [2, 3]) -> [] { let t = (x * y, vjp(h, x, y, 1))  sum(t.0 * t.1.1) }\n"
                         "fn g(x : [2, 3], y : [2, 3]) -> [2, 3] { grad(f, x, y) }\n", "f", "g"), 6);
}

// loss_grad of a stacked model: folds over a stack of blocks with layer norms, gelu and a
// constant carried into every step.
TEST(PreskVjp, FoldOverStack) {
    const char* src = R"(
const eps : f64 = 0.00001
module Block{D} {
  param w : [D, D] = normal(0, 1)
  param g : [D] = normal(1, 0.5)
  fn apply(x : [B, D], scale : [D]) -> [B, D] {
    let xc = x - mean(x, -1)
    let n = xc / sqrt(mean(xc * xc, -1) + eps) * g
    x + gelu(dot(n, w)) * scale
  }
}
module Net{D, V, L} {
  param emb : [V, D] = normal(0, 1)
  param scale : [D] = normal(0, 1)
  param blocks : stack[L] Block{D}
  param head : [D, V] = normal(0, 1)
  fn loss(ids : int<V>[B], t : int<V>[B]) -> [] {
    let h = fold(blocks.apply, embed(emb, ids), scale)
    mean(cross_entropy(dot(h, head), t))
  }
  fn loss_grad(ids : int<V>[B], t : int<V>[B]) -> params(Net{D, V, L}) { grad(loss, ids, t) }
}
)";
    EXPECT_EQ(check_grad(src, "loss", "Net{3,4,2}.loss_grad", {{{"B", 2}}, {}}), 12 + 3 + 2 * 12 + 12);
}

TEST(PreskVjp, ScanAndVjpTuple) {
    const char* src = R"(
module Cell{D} {
  param w : [D, D] = normal(0, 1)
  fn step(x : [D]) -> [D] { tanh(dot(x, w)) }
}
module Rnn{D, L} {
  param cells : stack[L] Cell{D}
  fn loss(x : [D]) -> [] {
    let (last, all) = scan(cells.step, x)
    sum(last) + sum(sin(all))
  }
  fn loss_grad(x : [D]) -> params(Rnn{D, L}) { grad(loss, x) }
  fn items(x : [D]) -> [] {
    let r = scan(cells.step, x)
    sum(r.0) + sum(sin(r.1))
  }
  fn items_grad(x : [D]) -> params(Rnn{D, L}) { grad(items, x) }
}
)";
    EXPECT_EQ(check_grad(src, "loss", "Rnn{2,3}.loss_grad"), 12);
    EXPECT_EQ(check_grad(src, "items", "Rnn{2,3}.items_grad"), 12);  // scan's (carry, stack) by `.0`, `.1`
}

} // namespace
} // namespace presk
