#include "realize/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "lang/checker.h"
#include "lang/parser.h"
#include "realize/executor.h"
#include "ref/interp.h"

namespace presk::realize {
namespace {

/// A primitive case: `body` is the text of a file (one or more functions), `entry` the one
/// measured, with batch = 4 and T = 4 unless the case says otherwise.
Case prim(const std::string& name, const std::string& body, const std::string& entry = "f",
          std::map<std::string, int64_t> dims = {{"batch", 4}}) {
    Case c;
    c.name = name;
    c.path = "<" + name + ">";
    c.text = body;
    c.entry = entry;
    c.dims = std::move(dims);
    return c;
}

std::string unary(const std::string& expr) { return "fn f(x : [batch, 5]) -> [batch, 5] {\n  " + expr + "\n}\n"; }
std::string binary(const std::string& expr) {
    return "fn f(x : [batch, 5], y : [batch, 5]) -> [batch, 5] {\n  " + expr + "\n}\n";
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error({}, "conformance: cannot read " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Every parameter initialised to zeros drawn normal(0, 1) instead.
void draw_zeros(core::Program& p) {
    for (core::ParamSpec& ps : p.params) {
        if (ps.init != "zeros") continue;
        ps.init = "normal";
        auto num = [](const char* t) {
            auto s = std::make_shared<core::Scalar>();
            s->text = t;
            return s;
        };
        ps.args = {num("0"), num("1")};
    }
}

/// The largest finite magnitude of the real elements of a reference value.
double largest(const ref::Value& v) {
    double m = 0;
    if (v.t) {
        for (const ref::Real& x : v.t->re)
            if (mpfr_number_p(x.get())) m = std::max(m, std::fabs(mpfr_get_d(x.get(), MPFR_RNDN)));
    }
    for (const ref::Value& i : v.items) m = std::max(m, largest(i));
    return m;
}

struct Compare {
    Band band;
    Result& r;
    double scale;  // the whole output's largest exact magnitude

    void tensor(const ref::Tensor& x, const kernel::Data& y, const std::string& path) {
        if (x.type->elem != Elem::Real) {
            for (size_t i = 0; i < x.in.size(); ++i)
                r.int_mismatch +=
                    y.dtype() != kernel::DType::I64 || y.size() <= (int64_t)i || y.integer((int64_t)i) != x.in[i];
            return;
        }
        if (y.dtype() == kernel::DType::I64 || y.size() != (int64_t)x.re.size())
            throw Error({}, "the backend returned " + std::to_string(y.size()) + " " + kernel::dtype_name(y.dtype()) +
                                " elements at " + (path.empty() ? "the output" : path) + " for " +
                                std::to_string(x.re.size()) + " reals");
        mpfr_t d;
        mpfr_init2(d, 64);
        for (size_t i = 0; i < x.re.size(); ++i) {
            const double yi = y.real((int64_t)i);
            mpfr_srcptr xi = x.re[i].get();
            ++r.compared;
            double gap, gap_scaled = INFINITY;
            if (mpfr_nan_p(xi) || std::isnan(yi)) {
                gap = mpfr_nan_p(xi) && std::isnan(yi) ? 0 : INFINITY;
            } else if (mpfr_inf_p(xi) || std::isinf(yi)) {
                gap = mpfr_inf_p(xi) && std::isinf(yi) && (mpfr_sgn(xi) > 0) == (yi > 0) ? 0 : INFINITY;
            } else {
                mpfr_sub_d(d, xi, yi, MPFR_RNDN);
                mpfr_abs(d, d, MPFR_RNDN);
                double num = mpfr_get_d(d, MPFR_RNDU);
                gap = num / (std::fabs(mpfr_get_d(xi, MPFR_RNDN)) + band.a);
                gap_scaled = num / (std::fabs(mpfr_get_d(xi, MPFR_RNDN)) + std::max(band.a, scale));
            }
            if (gap > r.worst || (std::isnan(gap) && !std::isnan(r.worst))) {
                r.worst = gap;
                r.worst_exact = mpfr_get_d(xi, MPFR_RNDN);
                r.worst_got = yi;
                r.worst_leaf = path + "[" + std::to_string(i) + "]";
            }
            if (!(gap <= band.eps)) {
                ++r.outside;
                if (gap_scaled <= band.eps) ++r.cancelling;
            }
        }
        mpfr_clear(d);
        r.worst_factor = r.worst / band.eps;
    }

    void tree(const ref::Value& x, const Value& y, const std::string& path) {
        if (x.t) {
            if (!y.t) throw Error({}, "the kernel backend returned a tree where the reference has a tensor");
            tensor(*x.t, *y.t, path);
            return;
        }
        if (x.items.size() != y.items.size()) throw Error({}, "the kernel backend returned a different tree");
        for (size_t i = 0; i < x.items.size(); ++i) {
            std::string k = x.type->kind == Type::Record ? x.type->names[i] : std::to_string(i);
            tree(x.items[i], y.items[i], path.empty() ? k : path + "." + k);
        }
    }
};

/// Counts the elements of `got` whose bits differ from `want`'s (the kernel interpreter's): a
/// leaf of another type or size, or a tree of another shape, counts all of `want`'s elements.
int64_t bits_differ(const Value& want, const Value& got) {
    int64_t n = 0;
    if (want.t) {
        if (!got.t || got.t->dtype() != want.t->dtype() || got.t->size() != want.t->size()) return want.t->size();
        const size_t e = kernel::element_size(want.t->dtype());
        const char* a = static_cast<const char*>(want.t->raw());
        const char* b = static_cast<const char*>(got.t->raw());
        for (int64_t i = 0; i < want.t->size(); ++i) n += std::memcmp(a + (size_t)i * e, b + (size_t)i * e, e) != 0;
        return n;
    }
    const Value none;
    for (size_t i = 0; i < want.items.size(); ++i)
        n += bits_differ(want.items[i], i < got.items.size() && !got.t ? got.items[i] : none);
    return n;
}

std::string fmt_gap(double g) {
    if (g == 0) return "0";
    std::ostringstream o;
    o << std::setprecision(2) << std::scientific << g;
    return o.str();
}

} // namespace

Band band_of(kernel::DType t) {
    switch (t) {
    case kernel::DType::F64: return {std::ldexp(1.0, -40), std::ldexp(1.0, -50)};
    case kernel::DType::F32: return {std::ldexp(1.0, -15), std::ldexp(1.0, -20)};
    default: return {std::ldexp(1.0, -4), std::ldexp(1.0, -5)};
    }
}

std::vector<Case> primitive_cases() {
    const std::map<std::string, int64_t> bt = {{"batch", 2}, {"T", 4}};
    std::vector<Case> c = {
        prim("neg", unary("-x")),
        prim("exp", unary("exp(x)")),
        prim("log", unary("log(x * x + 0.5)")),
        prim("tanh", unary("tanh(x)")),
        prim("sin", unary("sin(3 * x)")),
        prim("cos", unary("cos(3 * x)")),
        prim("sqrt", unary("sqrt(x * x + 0.5)")),
        prim("erf", unary("erf(x)")),
        prim("erfc", unary("erfc(2 * x)")),
        prim("gelu", unary("gelu(x)")),
        prim("abs", unary("abs(x)")),
        prim("sign", unary("sign(x) * (x * x + 1)")),
        prim("relu", unary("relu(x)")),
        prim("clamp", unary("clamp(x, -0.5, 0.5)")),
        prim("add", binary("x + y")),
        prim("sub", binary("x - y")),
        prim("mul", binary("x * y")),
        prim("div", binary("x / (y * y + 0.5)")),
        prim("pow", binary("pow(x * x + 0.5, y)")),
        prim("maximum", binary("maximum(x, y)")),
        prim("minimum", binary("minimum(x, y)")),
        prim("where", "fn f(c : [batch, 5], x : [batch, 5], y : [5]) -> [batch, 5] {\n  where(relu(c), x, y)\n}\n"),
        prim("maximum broadcast", "fn f(x : [batch, 5], b : [5]) -> [batch, 5] {\n  maximum(x, b)\n}\n"),
        prim("add broadcast", "fn f(x : [batch, 5], b : [5]) -> [batch, 5] {\n  x + b\n}\n"),
        prim("mul by name", "fn f(x : [batch, 5], s : [batch]) -> [batch, 5] {\n  x * s\n}\n"),
        prim("dot row-wise", "fn f(x : [batch, 5], w : [5, 3]) -> [batch, 3] {\n  dot(x, w)\n}\n"),
        prim("dot tiled", "fn f(x : [batch, 5], w : [5, 16]) -> [batch, 16] {\n  dot(x, w)\n}\n"),
        prim("dot rank 3", "fn f(x : [batch, 3, 5], w : [5, 8]) -> [batch, 3, 8] {\n  dot(x, w)\n}\n"),
        prim("dot right rank 3", "fn f(x : [batch, 5], w : [5, 2, 3]) -> [batch, 2, 3] {\n  dot(x, w)\n}\n"),
        prim("matmul", "fn f(a : [batch, 3, 5], b : [batch, 5, 4]) -> [batch, 3, 4] {\n  matmul(a, b)\n}\n"),
        prim("ein scores", "fn f(q : [batch, 2, T, 4], k : [batch, 2, T, 4]) -> [batch, 2, T, T] {\n"
                           "  ein(\"bhid,bhjd->bhij\", q, k)\n}\n", "f", bt),
        prim("ein rows", "fn f(x : [batch, 5], y : [batch, 5]) -> [batch] {\n  ein(\"ij,ij->i\", x, y)\n}\n"),
        prim("sum axis", "fn f(x : [batch, 5]) -> [batch] {\n  sum(x, -1)\n}\n"),
        prim("sum all", "fn f(x : [batch, 5]) -> [] {\n  sum(x)\n}\n"),
        prim("mean", "fn f(x : [batch, 5]) -> [5] {\n  mean(x, 0)\n}\n"),
        prim("max", "fn f(x : [batch, 5]) -> [batch] {\n  max(x, -1)\n}\n"),
        prim("min", "fn f(x : [batch, 5]) -> [batch] {\n  min(x, -1)\n}\n"),
        prim("softmax", "fn f(x : [batch, 7]) -> [batch, 7] {\n  softmax(x)\n}\n"),
        prim("log_softmax", "fn f(x : [batch, 7]) -> [batch, 7] {\n  log_softmax(x)\n}\n"),
        prim("log_softmax axis 0", "fn f(x : [batch, 7]) -> [batch, 7] {\n  log_softmax(x, 0)\n}\n"),
        prim("masked softmax", "fn f(s : [batch, T, T]) -> [batch, T, T] {\n  softmax(s, causal_mask(s))\n}\n", "f", bt),
        prim("cross_entropy", "fn f(l : [batch, 7], t : int<7>[batch]) -> [batch] {\n  cross_entropy(l, t)\n}\n"),
        prim("embed", "fn f(tab : [10, 4], ids : int<10>[batch, 3]) -> [batch, 3, 4] {\n  embed(tab, ids)\n}\n"),
        prim("positions", "fn f(tab : [T, 4], x : [batch, T]) -> [T, 4] {\n  embed(tab, positions(x, -1))\n}\n", "f", bt),
        prim("argmax", "fn f(x : [batch, 7]) -> int<7>[batch] {\n  argmax(x)\n}\n"),
        prim("sample", "fn f(x : [batch, 7]) -> int<7>[batch] {\n  sample(x)\n}\n"),
        prim("split_heads", "fn f(x : [batch, T, 8]) -> [batch, 2, T, 4] {\n  split_heads(x, 2)\n}\n", "f", bt),
        prim("merge_heads", "fn f(x : [batch, 2, T, 4]) -> [batch, T, 8] {\n  merge_heads(x)\n}\n", "f", bt),
        prim("sum_to", "fn f(x : [batch, 5], b : [5]) -> [5] {\n  sum_to(x, b)\n}\n"),
        prim("broadcast_like", "fn f(b : [5], x : [batch, 5]) -> [batch, 5] {\n  broadcast_like(b, x)\n}\n"),
        prim("slice", "fn f(x : [batch, 5]) -> [batch, 3] {\n  slice(x, 1, 1, 3)\n}\n"),
        prim("index", "fn f(x : [batch, 5]) -> [5] {\n  index(x, 0, -1)\n}\n"),
        prim("stack", "fn f(x : [batch, 5], y : [batch, 5]) -> [2, batch, 5] {\n  stack(x, y)\n}\n"),
        prim("dropout (eval)", unary("dropout(x, 0.25)")),
        prim("softmax by name", "fn f(x : [batch, 7]) -> [batch, 7] {\n  softmax(x, batch)\n}\n"),
        prim("softmax axis 1 of 3", "fn f(x : [batch, 5, 3]) -> [batch, 5, 3] {\n  softmax(x, 1)\n}\n"),
        prim("argmax by name", "fn f(x : [7, batch]) -> int<7>[batch] {\n  argmax(x, 0)\n}\n"),
        prim("cross_entropy by name", "fn f(l : [7, batch], t : int<7>[batch]) -> [batch] {\n  cross_entropy(l, t, 0)\n}\n"),
        prim("split", "fn f(x : [batch, T, 8]) -> [batch, T, head: 2, dh: 4] {\n  split(x, -1 -> head: 2, dh: 8 / 2)\n}\n",
             "f", bt),
        prim("merge", "fn f(x : [batch, head: 2, T, dh: 4]) -> [batch, T, feat: 8] {\n"
                      "  merge(permute(x, batch, T, head, dh), head, dh -> feat)\n}\n", "f", bt),
        prim("tuple item", "fn f(x : [batch, 5], y : [batch, 5]) -> [batch, 5] {\n  let t = (x * y, x - y)\n  t.1 * t.0\n}\n"),
        // derivatives: the transforms' internal primitives
        prim("dot vjp left", "fn l(x : [batch, 5], w : [5, 3]) -> [] {\n  sum(tanh(dot(x, w)))\n}\n"
                             "fn f(x : [batch, 5], w : [5, 3]) -> [batch, 5] {\n  grad(l, x, w)\n}\n"),
        prim("dot vjp right", "fn l(w : [5, 3], x : [batch, 5]) -> [] {\n  sum(tanh(dot(x, w)))\n}\n"
                              "fn f(w : [5, 3], x : [batch, 5]) -> [5, 3] {\n  grad(l, w, x)\n}\n"),
        prim("embed vjp", "fn l(tab : [10, 4], ids : int<10>[batch, 3]) -> [] {\n  sum(tanh(embed(tab, ids)))\n}\n"
                          "fn f(tab : [10, 4], ids : int<10>[batch, 3]) -> [10, 4] {\n  grad(l, tab, ids)\n}\n"),
        prim("gelu vjp", "fn l(x : [batch, 5]) -> [] {\n  sum(gelu(4 * x))\n}\n"
                         "fn f(x : [batch, 5]) -> [batch, 5] {\n  grad(l, x)\n}\n"),
        prim("abs vjp", "fn l(x : [batch, 5]) -> [] {\n  sum(tanh(abs(x) + sign(x)))\n}\n"
                        "fn f(x : [batch, 5]) -> [batch, 5] {\n  grad(l, x)\n}\n"),
        prim("maximum vjp", "fn l(b : [5], x : [batch, 5]) -> [] {\n  sum(tanh(maximum(x, b) + clamp(x, -0.5, b)))\n}\n"
                            "fn f(b : [5], x : [batch, 5]) -> [5] {\n  grad(l, b, x)\n}\n"),
        prim("minimum vjp", "fn l(x : [batch, 5]) -> [] {\n  sum(tanh(minimum(x, 0.2) + relu(x) + min(x, -1)))\n}\n"
                            "fn f(x : [batch, 5]) -> [batch, 5] {\n  grad(l, x)\n}\n"),
        prim("where vjp", "fn l(y : [5], c : [batch, 5], x : [batch, 5]) -> [] {\n"
                          "  sum(tanh(where(relu(c), x, y)))\n}\n"
                          "fn f(y : [5], c : [batch, 5], x : [batch, 5]) -> [5] {\n  grad(l, y, c, x)\n}\n"),
        prim("log_softmax vjp", "fn l(x : [batch, 7]) -> [] {\n  sum(tanh(log_softmax(x)))\n}\n"
                                "fn f(x : [batch, 7]) -> [batch, 7] {\n  grad(l, x)\n}\n"),
        prim("max vjp", "fn l(x : [batch, 5]) -> [] {\n  sum(tanh(max(x, -1)))\n}\n"
                        "fn f(x : [batch, 5]) -> [batch, 5] {\n  grad(l, x)\n}\n"),
        prim("softmax vjp", "fn l(x : [batch, 7]) -> [] {\n  sum(tanh(softmax(x)))\n}\n"
                            "fn f(x : [batch, 7]) -> [batch, 7] {\n  grad(l, x)\n}\n"),
        prim("cross_entropy vjp", "fn l(x : [batch, 7], t : int<7>[batch]) -> [] {\n  mean(cross_entropy(x, t))\n}\n"
                                  "fn f(x : [batch, 7], t : int<7>[batch]) -> [batch, 7] {\n  grad(l, x, t)\n}\n"),
        prim("sum_to vjp", "fn l(b : [5], x : [batch, 5]) -> [] {\n  sum(tanh(x + b))\n}\n"
                           "fn f(b : [5], x : [batch, 5]) -> [5] {\n  grad(l, b, x)\n}\n"),
        prim("heads vjp", "fn l(x : [batch, T, 8]) -> [] {\n  sum(tanh(merge_heads(split_heads(x, 2) * 0.3)))\n}\n"
                          "fn f(x : [batch, T, 8]) -> [batch, T, 8] {\n  grad(l, x)\n}\n", "f", bt),
        prim("split vjp", "fn l(x : [batch, 8]) -> [] {\n  sum(tanh(split(x, 1 -> 2, h: 4) * 0.3))\n}\n"
                          "fn f(x : [batch, 8]) -> [batch, 8] {\n  grad(l, x)\n}\n"),
        prim("merge vjp", "fn l(x : [batch, 2, 4]) -> [] {\n  sum(tanh(merge(x, 0, 1 -> n) * 0.3))\n}\n"
                          "fn f(x : [batch, 2, 4]) -> [batch, 2, 4] {\n  grad(l, x)\n}\n"),
        prim("softmax axis vjp", "fn l(x : [batch, 7]) -> [] {\n  sum(tanh(softmax(x, batch) * 3))\n}\n"
                                 "fn f(x : [batch, 7]) -> [batch, 7] {\n  grad(l, x)\n}\n"),
        prim("cross_entropy axis vjp", "fn l(x : [7, batch], t : int<7>[batch]) -> [] {\n  mean(cross_entropy(x, t, 0))\n}\n"
                                       "fn f(x : [7, batch], t : int<7>[batch]) -> [7, batch] {\n"
                                       "  vjp(l, x, t, 1).0\n}\n"),
        prim("slice vjp", "fn l(x : [batch, 5]) -> [] {\n  sum(tanh(slice(x, 1, 1, 3))) * sum(index(x, 0, 1))\n}\n"
                          "fn f(x : [batch, 5]) -> [batch, 5] {\n  grad(l, x)\n}\n"),
        prim("ein vjp", "fn l(q : [batch, 2, T, 4], k : [batch, 2, T, 4]) -> [] {\n"
                        "  sum(tanh(ein(\"bhid,bhjd->bhij\", q, k)))\n}\n"
                        "fn f(q : [batch, 2, T, 4], k : [batch, 2, T, 4]) -> [batch, 2, T, 4] {\n  grad(l, q, k)\n}\n",
             "f", bt),
    };
    return c;
}

std::vector<Case> example_cases(const std::string& dir) {
    struct E {
        const char* name;
        const char* file;
        const char* entry;
        std::map<std::string, int64_t> dims;
        std::map<std::string, std::string> given;
        bool example = true;
        std::map<std::string, std::string> consts = {};
    };
    const std::map<std::string, int64_t> gpt = {{"B", 2}, {"T", 4}};
    const std::map<std::string, std::string> zero_head = {{"head_std", "0"}};  // the seed's MiniGPT
    const std::vector<E> list = {
        {"mse", "mse.psk", "mse", {{"batch", 4}, {"n", 3}}, {}},
        {"mse_grad", "mse.psk", "mse_grad", {{"batch", 4}, {"n", 3}}, {}},
        {"LayerNorm{8}.apply", "norms.psk", "LayerNorm{8}.apply", {{"N", 3}}, {}},
        {"RMSNorm{8}.apply", "norms.psk", "RMSNorm{8}.apply", {{"N", 3}}, {}},
        {"Linear{3, 2}.apply", "tutorial/01_linear.psk", "Linear{3, 2}.apply", {{"batch", 4}}, {}, false},
        {"Attention{8, 2}.apply", "tutorial/03_attention.psk", "Attention{8, 2}.apply", gpt, {}, false},
        {"MiniGPT.apply (tiny)", "minigpt.psk", "MiniGPT{16, 8, 2, 2}.apply", gpt, {}, true, zero_head},
        {"training loss (tiny MiniGPT)", "minigpt.psk", "MiniGPT{16, 8, 2, 2}.loss", gpt, {}, true, zero_head},
        {"loss_grad through stacked blocks", "minigpt.psk", "MiniGPT{16, 8, 2, 2}.loss_grad", gpt, {}, true, zero_head},
        {"next_token", "minigpt.psk", "MiniGPT{16, 8, 2, 2}.next_token", gpt, {}, true, zero_head},
        {"adamw.step", "adamw.psk", "adamw.step", {}, {{"t", "3"}}},
        {"regression loss (MLP)", "tutorial/02_mlp_regression.psk", "MLP{2, 4, 1}.loss", {{"batch", 3}}, {}},
        {"regression loss_grad (MLP)", "tutorial/02_mlp_regression.psk", "MLP{2, 4, 1}.loss_grad", {{"batch", 3}}, {}, false},
    };
    std::vector<Case> out;
    for (const E& e : list) {
        Case c;
        c.name = e.name;
        c.path = dir + "/" + e.file;
        c.text = read_file(c.path);
        c.entry = e.entry;
        c.dims = e.dims;
        c.given = e.given;
        c.consts = e.consts;
        c.example = e.example;
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<Result> run_case(const Case& c, const std::vector<Realization>& rs, const SuiteOptions& o) {
    std::vector<Result> out(rs.size());
    for (size_t i = 0; i < rs.size(); ++i) {
        out[i].name = c.name + (o.zeros_drawn ? " (zeros drawn)" : "");
        out[i].realization = rs[i].spelling.empty() ? kernel::dtype_name(rs[i].default_type) : rs[i].spelling;
    }
    core::Program p;
    ref::Value want;
    std::vector<ref::Value> args;
    try {
        Source src{c.path, c.text};
        CheckOptions co;
        co.dims = c.dims;
        if (!o.zeros_drawn) co.consts = c.consts;
        try {
            p = check(parse(src), c.entry, co);
        } catch (const Error& e) {
            throw Error({}, format_error(src, e));
        }
        if (o.zeros_drawn) draw_zeros(p);
        ref::Interp interp(p, {o.bits, o.seed, false});
        args = interp.entry_args(c.given);
        want = interp.call(p.entry, args);
    } catch (const std::exception& e) {
        for (Result& r : out) r.error = std::string("reference: ") + e.what();
        return out;
    }
    for (size_t i = 0; i < rs.size(); ++i) {
        try {
            ExecOptions eo;
            eo.seed = o.seed;
            eo.backend = o.backend;
            eo.threads = o.threads;
            eo.lanes = o.lanes;
            Executor ex(p, rs[i], eo);
            const std::vector<Value> in = ex.convert_args(p.entry, args);
            Value got = ex.call_values(p.entry, in);
            Compare cmp{band_of(rs[i].default_type), out[i], largest(want)};
            cmp.tree(want, got, "");
            if (o.backend != Backend::Kernel) {
                ExecOptions io;
                io.seed = o.seed;
                Executor interp(p, rs[i], io);
                try {
                    out[i].bits_differ = bits_differ(interp.call_values(p.entry, in), got);
                } catch (const std::exception& e) {
                    throw Error({}, std::string("the kernel interpreter: ") + e.what());
                }
            }
        } catch (const std::exception& e) {
            out[i].error = e.what();
        }
    }
    return out;
}

bool asserted(const Case& c, const Result& r, bool zeros_drawn) {
    if (r.bits_differ) return true;
    if (zeros_drawn) return r.realization == "f64" && r.outside > r.cancelling;
    if (r.realization == "f64" || r.realization == "f32") return true;
    return r.realization == "bf16" && c.example;
}

std::string table(const std::vector<Result>& results) {
    std::vector<std::string> rows, cols;
    std::map<std::pair<std::string, std::string>, const Result*> at;
    for (const Result& r : results) {
        if (std::find(rows.begin(), rows.end(), r.name) == rows.end()) rows.push_back(r.name);
        if (std::find(cols.begin(), cols.end(), r.realization) == cols.end()) cols.push_back(r.realization);
        at[{r.name, r.realization}] = &r;
    }
    size_t w0 = 5;
    for (const auto& n : rows) w0 = std::max(w0, n.size());
    std::ostringstream o;
    o << std::left << std::setw((int)w0) << "case";
    for (const auto& c : cols) o << " | " << std::setw(24) << c;
    o << "\n" << std::string(w0, '-');
    for (size_t i = 0; i < cols.size(); ++i) o << "-|-" << std::string(24, '-');
    o << "\n";
    for (const auto& n : rows) {
        o << std::setw((int)w0) << n;
        for (const auto& c : cols) {
            auto it = at.find({n, c});
            std::string cell;
            if (it == at.end()) {
                cell = "";
            } else {
                const Result& r = *it->second;
                if (!r.error.empty()) cell = "error";
                else {
                    cell = fmt_gap(r.worst);
                    if (r.outside) cell += " !" + std::to_string(r.outside) + "/" + std::to_string(r.compared);
                    if (r.cancelling) cell += " (" + std::to_string(r.cancelling) + " c)";
                    if (r.int_mismatch) cell += " ints!" + std::to_string(r.int_mismatch);
                    if (r.bits_differ) cell += " bits!" + std::to_string(r.bits_differ);
                }
            }
            o << " | " << std::setw(24) << cell;
        }
        o << "\n";
    }
    return o.str();
}

} // namespace presk::realize
