// The table of primitives (core/prims.h) against every stage that reads it: docs/language.md
// lists exactly its public and internal primitives; every primitive parses and checks (or, an
// internal one, is refused in source), has a reverse rule or is marked as having none, is
// evaluated by the reference, and has a lowering or is a host primitive, all seen running
// (the compile-time half of the check is each stage's static_assert on its own table).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/autodiff.h"
#include "core/prims.h"
#include "kernel/lower.h"
#include "presk_test.h"
#include "realize/executor.h"
#include "realize/realization.h"
#include "ref/interp.h"

namespace presk {
namespace {

using core::Prim;

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::set<std::string> names_with(unsigned prop, bool set) {
    std::set<std::string> s;
    for (const core::PrimInfo& i : core::kPrims)
        if (((i.props & prop) != 0) == set) s.insert(i.name);
    return s;
}

TEST(PreskPrims, TheTableIsConsistent) {
    std::set<std::string> names;
    for (size_t i = 0; i < core::kPrimCount; ++i) {
        const core::PrimInfo& pi = core::kPrims[i];
        EXPECT_EQ((size_t)pi.prim, i);
        EXPECT_TRUE(names.insert(pi.name).second) << pi.name << " named twice";
        EXPECT_EQ(core::find_prim(pi.name), pi.prim) << pi.name;
        EXPECT_TRUE(core::is_prim(pi.name)) << pi.name;
        EXPECT_GE(pi.min_args, 1) << pi.name;
        EXPECT_TRUE(pi.max_args == core::kAnyCount || pi.max_args >= pi.min_args) << pi.name;
    }
    EXPECT_FALSE(core::find_prim("nosuch"));
    EXPECT_FALSE(core::is_prim("fold"));
}

/// The texts between backquotes in `line`.
std::vector<std::string> backquoted(const std::string& line) {
    std::vector<std::string> out;
    for (size_t a = line.find('`'); a != std::string::npos; a = line.find('`', a + 1)) {
        const size_t b = line.find('`', a + 1);
        if (b == std::string::npos) break;
        out.push_back(line.substr(a + 1, b - a - 1));
        a = b;
    }
    return out;
}

// docs/language.md section 5: the first cell of each table row names public primitives (`+ - * /`
// and `-x` in Core are add sub mul div and neg), besides the language's own forms set_field,
// grad, vjp, transpose and permute; the sentence after the table names the internal ones.
TEST(PreskPrims, DocsListEveryPrimitive) {
    const std::string doc = read(std::string(PRESK_SOURCE_DIR) + "/docs/language.md");
    const size_t from = doc.find("## 5. Primitives"), to = doc.find("## 6.");
    ASSERT_NE(from, std::string::npos);
    ASSERT_NE(to, std::string::npos);
    const std::map<std::string, std::string> ops = {
        {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"-x", "neg"}};
    const std::set<std::string> forms = {"set_field", "grad", "vjp", "transpose", "permute",
                                         "relu",      "clamp", "min", "log_softmax"};
    std::set<std::string> pub, internal;
    std::istringstream lines(doc.substr(from, to - from));
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("| `", 0) == 0) {
            for (const std::string& text : backquoted(line.substr(2, line.find(" |", 2) - 2))) {
                if (const size_t paren = text.find('('); paren != std::string::npos) {  // a call: its name
                    if (!forms.count(text.substr(0, paren))) pub.insert(text.substr(0, paren));
                    continue;
                }
                std::istringstream words(text);  // names or operators
                for (std::string w; words >> w;) pub.insert(ops.count(w) ? ops.at(w) : w);
            }
        }
        if (line.rfind("Internal primitives", 0) == 0 || !internal.empty()) {
            if (line.empty()) break;
            for (const std::string& name : backquoted(line)) internal.insert(name);
        }
    }
    EXPECT_EQ(pub, names_with(core::kInternal, false));
    EXPECT_EQ(internal, names_with(core::kInternal, true));
}

// One program whose entries use every public primitive, and whose vjp (with a named axis, an
// unused real parameter and int operands) emits every internal one.
const char* const kProgram = R"(
fn f(x : [2, 4, D], w : [D, D], ids : int<4>[2, 4], u : [2]) -> [] {
  let a = pow(exp(x) + 1, 0.5) - log(1 + x * x) / sqrt(1 + x * x) + tanh(x) * sin(x) - cos(x)
  let e = a + erf(x) * erfc(x) + gelu(-x) + abs(x) * sign(x) + maximum(x, 0.5) - minimum(x, w[0: 1]) + where(x, x, 1)
  let c = matmul(e, e) + dot(e, w) + ein("abk,kl->abl", e, w)
  let s = softmax(c, causal_mask(c)) + softmax(c)
  let h = merge_heads(split_heads(s, 2))
  let r = merge(split(h, -1 -> 2, q: 2), 2, q -> m)
  let t = index(h, 0, -1)
  let st = stack(t, t)
  let l = cross_entropy(h, ids) + cross_entropy(h, argmax(h))
  let em = embed(w, ids) + embed(w, sample(h)) + embed(w, positions(x, 1))
  let bl = broadcast_like(sum_to(st, t), h)
  sum(l) + sum(r) + mean(slice(h, 1, 1, 2)) + sum(max(t, 1)) + sum(em * dropout(s, 0.25)) + sum(mean(bl, 0))
}

fn df(x : [2, 4, D], w : [D, D], ids : int<4>[2, 4], u : [2]) {
  vjp(f, x, w, ids, u, 1)
}
)";

/// The prims of every let of `p`, with the first let of each and its function.
struct Seen {
    std::map<Prim, std::pair<const core::Function*, const core::Let*>> first;
};

Seen lets_of(const core::Program& p) {
    Seen s;
    for (const core::Function& f : p.functions)
        for (const core::Let& l : f.body)
            if (l.op == core::Op::Prim) {
                std::optional<Prim> q = core::find_prim(l.name);
                EXPECT_TRUE(q) << l.name;
                if (q) s.first.emplace(*q, std::pair{&f, &l});
            }
    return s;
}

bool has_real(const Type& t) {
    if (t.kind == Type::Tensor) return t.elem == Elem::Real;
    for (const TypeP& i : t.items)
        if (has_real(*i)) return true;
    return false;
}

TEST(PreskPrims, EveryPrimitiveInEveryStage) {
    std::string err;
    core::Program p = test::compile(kProgram, "df", {{{"D", 4}}, {}}, &err);
    ASSERT_EQ(err, "");
    const Seen seen = lets_of(p);

    // The reference and the kernel backend (kernels and host rules) run both entries.
    for (const std::string entry : {"f", "vjp(f)"}) {
        SCOPED_TRACE(entry);
        for (bool train : {false, true}) {
            ref::Interp interp(p, {64, 3, train});
            const core::Function* fn = p.find(entry);
            ASSERT_TRUE(fn);
            std::vector<ref::Value> args;
            for (int i = 0; i < fn->arity(); ++i)
                args.push_back(interp.synthesize(fn->param_types[i], fn->param_names[i]));
            EXPECT_NO_THROW(interp.call(entry, args));
            realize::Executor ex(p, realize::parse_realization("f64"), {3, train});
            EXPECT_NO_THROW(ex.call(entry, args));
        }
    }

    for (const core::PrimInfo& pi : core::kPrims) {
        SCOPED_TRACE(pi.name);
        const std::string name = pi.name;
        // The checker: a public primitive is met in source, an internal one refused there.
        const std::string use = "fn g(x : [2]) {\n  " + name + "(x)\n}\n";
        test::compile(use, "g", {}, &err);
        const std::string refused = "'" + name + "' is internal to the transforms";
        EXPECT_EQ(err.find(refused) != std::string::npos, core::has(pi.prim, core::kInternal)) << err;

        auto it = seen.first.find(pi.prim);
        ASSERT_NE(it, seen.first.end()) << name << " is in no let of the program";
        const core::Function& fn = *it->second.first;
        const core::Let& l = *it->second.second;

        // The lowering: a kernel, or the host's (the executor ran it above).
        std::vector<TypeP> ops;
        for (int a : l.args) ops.push_back(fn.type_of(a));
        kernel::Node n{l.name, l.ints, l.text, ops, l.type};
        if (kernel::is_host_prim(pi.prim)) EXPECT_THROW(kernel::lower(n, kernel::DType::F64), Error);
        else EXPECT_NO_THROW(kernel::lower(n, kernel::DType::F64));
        EXPECT_EQ(kernel::is_host_prim(name), kernel::is_host_prim(pi.prim));
        EXPECT_EQ(kernel::is_elementwise(name), core::has(pi.prim, core::kElementwise));

        // The reverse rule: the let alone in a function, differentiated. A primitive without a
        // rule is refused by name where its value holds reals.
        core::Program one;
        core::Function g;
        g.name = "g";
        for (size_t i = 0; i < ops.size(); ++i) {
            g.param_names.push_back("x" + std::to_string(i));
            g.param_types.push_back(ops[i]);
        }
        core::Let copy = l;
        for (size_t i = 0; i < copy.args.size(); ++i) copy.args[i] = (int)i;
        g.result = g.emit(copy);
        one.add(g);
        one.entry = "g";
        std::string why;
        try {
            core::vjp(one, "g");
        } catch (const Error& e) {
            why = e.what();
        }
        if (!has_real(*l.type)) {
            EXPECT_FALSE(core::has_vjp(pi.prim)) << "a rule for a value without reals";
            EXPECT_EQ(why, "");
        } else if (core::has_vjp(pi.prim)) {
            EXPECT_EQ(why, "");
        } else {
            EXPECT_EQ(why, "no derivative for " + name + " at g/%" + std::to_string(g.arity()));
        }
    }
}

} // namespace
} // namespace presk
