// Contractions: dot, matmul and ein at their default forms (../shared/seeds/presk-native.txt,
// "Contractions: one builder, a layout space"). Every output element sums its contracted
// axis (axes, for ein) in increasing index order, as the reference does.
//
// dot and matmul are one nest: outer axes shared by both operands and the output (matmul's
// batch), rows I (the left operand's other axes), the contracted K, columns J (the right
// operand's other axes). Loop variables are numbered outer, rows, then as each form says:
//  - tiled [1, 8] when J is one axis whose size is a multiple of 8: a loop over blocks of
//    eight columns, eight accumulators s0..s7 set to 0, a loop over K reading one left
//    element into s8 and eight right ones, then the eight stores. With lanes 2 or 4 the
//    accumulators are 8 / lanes vectors across the block's columns (v0 ...), each lane one
//    output column, so the bits are the scalar form's;
//  - bf16 otherwise: the tile [1, 1], one f32 accumulator s0 per output element, stored once;
//  - row-wise otherwise (the seed's printed kernel): the output row zeroed, then for each k
//    s0 = the left element and each output of the row incremented by s0 * the right one.
// ein is the tile [1, 1] over its own labels: the output labels' loops, s0 = 0, the summed
// labels' loops in order of first appearance (the reference's order), s0 plus the product of
// the operands left to right, one store. Its name lists the output axes: `ein[batch, 2, T, T]`
// (a positional axis by its size). The two derivatives of a dot are eins (core/autodiff.cpp),
// so they are this nest too.
#include "core/prims.h"
#include "kernel/lower_util.h"

namespace presk::kernel::detail {
namespace {

/// (v * c) + o: element o of block v of c elements.
ExprP block_index(const ExprP& v, int64_t c, int64_t o) { return binary("add", binary("mul", v, integer(c)), integer(o)); }

struct Contraction {
    std::vector<int64_t> outer, rows, cols;
    int64_t K = 0;
};

Kernel lower_dot(const Node& n, DType t, int lanes) {
    const auto& xa = n.operands[0]->axes;
    const auto& wa = n.operands[1]->axes;
    Contraction c;
    if (n.prim == "dot") {
        c.rows = sizes(without(xa, xa.size() - 1));
        c.K = xa.back().size;
        c.cols = sizes(without(wa, 0));
    } else {  // matmul: [B..., I, K] x [B..., K, J]
        c.outer = sizes(std::vector<Axis>(xa.begin(), xa.end() - 2));
        c.rows = {xa[xa.size() - 2].size};
        c.K = xa.back().size;
        c.cols = {wa.back().size};
    }
    Kernel k = header(n.prim, n, t);
    const int out = k.out_buf();
    const int no = (int)c.outer.size(), nr = (int)c.rows.size(), nc = (int)c.cols.size();
    const std::vector<ExprP> ov = vars(0, (size_t)no), rv = vars(no, (size_t)nr);
    const int next = no + nr;  // the first variable after the outer and row loops
    auto x_at = [&](const ExprP& kv) { return load(0, concat(concat(ov, rv), {kv})); };
    auto w_at = [&](const ExprP& kv, const std::vector<ExprP>& cv) { return load(1, concat(concat(ov, {kv}), cv)); };
    auto out_idx = [&](const std::vector<ExprP>& cv) { return concat(concat(ov, rv), cv); };
    std::vector<Stmt> row;

    if (nc == 1 && c.cols[0] % 8 == 0 && c.cols[0] > 0) {  // tiled [1, 8]
        const ExprP jb = loop_var(next), kv = loop_var(next + 1);
        auto col = [&](int64_t j) { return std::vector<ExprP>{block_index(jb, 8, j)}; };
        std::vector<Stmt> init, step, done;
        if (lanes == 1) {
            const ExprP left = scalar_var(8);
            step.push_back(assign(8, x_at(kv)));
            for (int j = 0; j < 8; ++j) {
                init.push_back(assign(j, real(0)));
                step.push_back(assign(j, binary("add", scalar_var(j), binary("mul", left, w_at(kv, col(j))))));
                done.push_back(store(out, out_idx(col(j)), scalar_var(j)));
            }
        } else {
            const ExprP left = splat(scalar_var(0), lanes);
            step.push_back(assign(0, x_at(kv)));
            for (int a = 0; a < 8 / lanes; ++a) {
                const ExprP acc = vector_var(a, lanes);
                const ExprP w = vload(1, concat(concat(ov, {kv}), col(a * lanes)), lanes);
                init.push_back(assign(a, splat(real(0), lanes)));
                step.push_back(assign(a, binary("add", acc, binary("mul", left, w))));
                done.push_back(vstore(out, out_idx(col(a * lanes)), acc));
            }
        }
        std::vector<Stmt> block = init;
        block.push_back(for_loop(next + 1, 0, c.K, std::move(step)));
        block.insert(block.end(), done.begin(), done.end());
        row.push_back(for_loop(next, 0, c.cols[0] / 8, std::move(block)));
    } else if (t == DType::BF16) {  // tile [1, 1]
        const std::vector<ExprP> cv = vars(next, (size_t)nc);
        const ExprP kv = loop_var(next + nc);
        std::vector<Stmt> each{assign(0, real(0))};
        each.push_back(for_loop(next + nc, 0, c.K,
                                {assign(0, binary("add", scalar_var(0), binary("mul", x_at(kv), w_at(kv, cv))))}));
        each.push_back(store(out, out_idx(cv), scalar_var(0)));
        row = nest(next, c.cols, std::move(each));
    } else {  // row-wise
        const ExprP kv = loop_var(next);
        const std::vector<ExprP> cv = vars(next + 1, (size_t)nc);
        row = nest(next + 1, c.cols, {store(out, out_idx(cv), real(0))});
        ExprP sum = binary("add", load(out, out_idx(cv)), binary("mul", scalar_var(0), w_at(kv, cv)));
        std::vector<Stmt> step{assign(0, x_at(kv))};
        auto inner = nest(next + 1, c.cols, {store(out, out_idx(cv), sum)});
        step.insert(step.end(), inner.begin(), inner.end());
        row.push_back(for_loop(next, 0, c.K, std::move(step)));
    }
    k.body = nest(0, concat(c.outer, c.rows), std::move(row));
    return k;
}

Kernel lower_ein(const Node& n, DType t) {
    core::EinSpec e = core::parse_ein(n.text);
    std::string labels = e.output;
    for (const auto& in : e.inputs)
        for (char ch : in)
            if (labels.find(ch) == std::string::npos) labels += ch;
    std::vector<int64_t> size(labels.size(), 0);
    for (size_t i = 0; i < e.inputs.size(); ++i)
        for (size_t d = 0; d < e.inputs[i].size(); ++d) size[labels.find(e.inputs[i][d])] = n.operands[i]->axes[d].size;

    std::string name = "ein[";
    for (size_t d = 0; d < n.result->axes.size(); ++d) {
        const Axis& a = n.result->axes[d];
        name += (d ? ", " : "") + (a.name.empty() ? std::to_string(a.size) : a.name);
    }
    Kernel k = header(name + "]", n, t);

    auto at = [&](const std::string& lab) {
        std::vector<ExprP> idx;
        for (char ch : lab) idx.push_back(loop_var((int)labels.find(ch)));
        return idx;
    };
    ExprP prod = load(0, at(e.inputs[0]));
    for (size_t i = 1; i < e.inputs.size(); ++i) prod = binary("mul", prod, load((int)i, at(e.inputs[i])));
    const size_t no = e.output.size();
    std::vector<Stmt> each{assign(0, real(0))};
    auto sum = nest((int)no, std::vector<int64_t>(size.begin() + (long)no, size.end()),
                    {assign(0, binary("add", scalar_var(0), prod))});
    each.insert(each.end(), sum.begin(), sum.end());
    each.push_back(store(k.out_buf(), at(e.output), scalar_var(0)));
    k.body = nest(0, std::vector<int64_t>(size.begin(), size.begin() + (long)no), std::move(each));
    return k;
}

} // namespace

Kernel lower_contract(const Node& n, DType t, int lanes) {
    if (n.prim == "ein") return lower_ein(n, t);
    return lower_dot(n, t, lanes);
}

} // namespace presk::kernel::detail
