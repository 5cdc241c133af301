// Contractions: dot, matmul and ein, one builder for every point of the layout space
// (kernel/layout.h; ../shared/seeds/presk-native.txt, "Contractions: one builder, a layout
// space"). Every output element sums its contracted axes in increasing index order in one
// accumulator (or, in the row-wise form, in the output element itself), as the reference does;
// a point changes where the running sums live and which memory the loops touch, never that.
//
// The nest: outer axes O (indexing both operands and the output: matmul's batch, attention's
// batch and heads), rows I (operand 0 and the output), columns J (operand 1 and the output),
// the contracted K (both operands). dot: x[I..., K] . w[K, J...]; matmul: [O..., I, K] x
// [O..., K, J]; an ein whose output's labels are O, then I, then J, its other labels summed
// (K, in the order of first appearance). Loop variables are numbered in nesting order.
//
// The forms:
//  - tiled [m, n]: the block loops (I's axes, the last in blocks of m; J's, the last in blocks
//    of n; with a k-block the blocks of K) in the point's order, then m * n accumulators set
//    to 0, the K loop (with a k-block the within-block loop, k = kb * b + t) reading one left
//    element per row into a scalar (n > 1), then for each column the rows' updates, then the
//    m * n stores. With lanes the accumulators of a row are n / lanes vectors across its
//    columns (lane = column), and with several rows each vector of operand 1 is loaded once
//    into a vector the rows share (the seed's pack listing). When
//    the K block loop encloses an I or J block loop, the accumulators are reloaded from the
//    output at every block but the first (`if i<kb> { ... }`), exact only where the storage
//    type is the arithmetic type (not bf16);
//  - row-wise (the seed's printed kernel): the output row zeroed, then for each k s0 = the
//    left element and each output of the row incremented by s0 * the right one.
// The epilogue (a bias, tiled form only): each store of the m * n sums adds the bias element of
// its column, b[j], as the add after the product does: in the sum's register where the storage
// is the arithmetic type (storing it and reading it back would give it exactly), else (bf16)
// storing the sum, reading it back and storing it plus b. A spilling order stores the sums at
// every k-block, so it has none.
// The default point is 0.6.0's kernel: a dot or matmul whose J is one axis of a multiple of 8
// is tiled [1, 8] (lanes as asked), any other bf16 dot [1, 1], any other dot row-wise; an ein
// is [1, 1] (an ein not of the nest's pattern keeps the general nest below, its only point).
// Its name lists the output axes: `ein[batch, 2, T, T]` (a positional axis by its size).
#include <algorithm>

#include "core/prims.h"
#include "kernel/lower_util.h"
#include "lang/source.h"

namespace presk::kernel::detail {
namespace {

/// (v * c) + o: element o of block v of c elements; v itself for blocks of one.
ExprP block_index(const ExprP& v, int64_t c, int64_t o) {
    if (c == 1) return v;
    return binary("add", binary("mul", v, integer(c)), integer(o));
}

enum Role { O, I, J, K };

/// One axis of a buffer of the nest: its role and its position among that role's axes.
struct Slot {
    Role role;
    size_t pos;
};

/// A contraction nest: the sizes of each role's axes and each buffer's axes as slots.
struct Nest {
    std::vector<int64_t> size[4];
    std::vector<Slot> x, w, out;
};

/// Index expressions of each role's axes.
struct At {
    std::vector<ExprP> v[4];
};

std::vector<ExprP> index(const std::vector<Slot>& slots, const At& at) {
    std::vector<ExprP> idx;
    for (const Slot& s : slots) idx.push_back(at.v[s.role][s.pos]);
    return idx;
}

std::vector<Slot> run(Role r, size_t n) {
    std::vector<Slot> s;
    for (size_t i = 0; i < n; ++i) s.push_back({r, i});
    return s;
}

Nest dot_nest(const Node& n) {
    const auto& xa = n.operands[0]->axes;
    const auto& wa = n.operands[1]->axes;
    Nest c;
    if (n.prim == "dot") {
        c.size[I] = sizes(without(xa, xa.size() - 1));
        c.size[J] = sizes(without(wa, 0));
    } else {  // matmul: [B..., I, K] x [B..., K, J]
        c.size[O] = sizes(std::vector<Axis>(xa.begin(), xa.end() - 2));
        c.size[I] = {xa[xa.size() - 2].size};
        c.size[J] = {wa.back().size};
    }
    c.size[K] = {xa.back().size};
    const size_t no = c.size[O].size(), ni = c.size[I].size(), nj = c.size[J].size();
    c.x = concat(concat(run(O, no), run(I, ni)), run(K, 1));
    c.w = concat(concat(run(O, no), run(K, 1)), run(J, nj));
    c.out = concat(concat(run(O, no), run(I, ni)), run(J, nj));
    return c;
}

/// The labels of an ein in the order of first appearance (the output's, then the inputs').
std::string ein_labels(const core::EinSpec& e) {
    std::string labels = e.output;
    for (const auto& in : e.inputs)
        for (char ch : in)
            if (labels.find(ch) == std::string::npos) labels += ch;
    return labels;
}

/// The nest of an ein of the contraction's pattern, or nothing.
std::optional<Nest> ein_nest(const Node& n, const core::EinSpec& e) {
    if (e.inputs.size() != 2) return std::nullopt;
    const std::string labels = ein_labels(e);
    const std::string &a = e.inputs[0], &b = e.inputs[1];
    Nest c;
    std::vector<Slot> of(labels.size());
    Role last = O;
    for (size_t l = 0; l < labels.size(); ++l) {
        const char ch = labels[l];
        const bool in_a = a.find(ch) != std::string::npos, in_b = b.find(ch) != std::string::npos;
        const bool kept = e.output.find(ch) != std::string::npos;
        if (std::count(a.begin(), a.end(), ch) > 1 || std::count(b.begin(), b.end(), ch) > 1) return std::nullopt;
        const Role r = kept ? (in_a && in_b ? O : in_a ? I : in_b ? J : K) : K;
        if (r == K && (kept || !in_a || !in_b)) return std::nullopt;
        if (kept && r < last) return std::nullopt;  // the output is not O..., I..., J...
        if (kept) last = r;
        of[l] = {r, c.size[r].size()};
        int64_t size = 0;
        for (size_t i = 0; i < 2; ++i) {
            const size_t d = e.inputs[i].find(ch);
            if (d != std::string::npos) size = n.operands[i]->axes[d].size;
        }
        c.size[r].push_back(size);
    }
    if (c.size[K].empty()) return std::nullopt;
    auto slots = [&](const std::string& s) {
        std::vector<Slot> v;
        for (char ch : s) v.push_back(of[labels.find(ch)]);
        return v;
    };
    c.x = slots(a);
    c.w = slots(b);
    c.out = slots(e.output);
    return c;
}

std::string ein_name(const Node& n) {
    std::string name = "ein[";
    for (size_t d = 0; d < n.result->axes.size(); ++d) {
        const Axis& a = n.result->axes[d];
        name += (d ? ", " : "") + (a.name.empty() ? std::to_string(a.size) : a.name);
    }
    return name + "]";
}

/// The general ein (any number of operands, any labels): the tile [1, 1] over its own labels,
/// the summed ones in order of first appearance, the product of the operands left to right.
Kernel general_ein(const Node& n, DType t, const core::EinSpec& e) {
    const std::string labels = ein_labels(e);
    std::vector<int64_t> size(labels.size(), 0);
    for (size_t i = 0; i < e.inputs.size(); ++i)
        for (size_t d = 0; d < e.inputs[i].size(); ++d) size[labels.find(e.inputs[i][d])] = n.operands[i]->axes[d].size;
    Kernel k = header(ein_name(n), n, t);
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

[[noreturn]] void refuse(const std::string& msg) { throw Error({}, "layout: " + msg); }

/// Emits a nest's loops outermost first, numbering their variables in order.
struct Loops {
    int next = 0;
    std::vector<std::pair<int, int64_t>> open;  // (variable, extent), outermost first
    ExprP add(int64_t extent) {
        open.emplace_back(next, extent);
        return loop_var(next++);
    }
    std::vector<Stmt> wrap(std::vector<Stmt> body) const {
        for (size_t i = open.size(); i-- > 0;) body = {for_loop(open[i].first, 0, open[i].second, std::move(body))};
        return body;
    }
};

/// The loops of role r's axes, the last in blocks of `block` (its block variable kept in
/// `bv`); `at` gets the index of each axis but the last.
void role_loops(Loops& ls, const Nest& c, Role r, int64_t block, At& at, ExprP& bv) {
    const auto& s = c.size[r];
    for (size_t d = 0; d < s.size(); ++d) {
        if (d + 1 < s.size()) at.v[r].push_back(ls.add(s[d]));
        else bv = ls.add(s[d] / block);
    }
}

/// The point's tiled kernel body; with `bias` >= 0 the epilogue adding that buffer, `exact`
/// when the storage is the arithmetic type.
std::vector<Stmt> tiled(const Nest& c, const Layout& l, int out, int w_buf, int bias, bool exact) {
    const int64_t m = l.tile_m, nn = l.tile_n, L = l.lanes, kb = l.kblock;
    std::string order = l.order.empty() ? (kb ? "IJK" : "IJ") : l.order;
    Loops ls;
    At at;
    for (size_t d = 0; d < c.size[O].size(); ++d) at.v[O].push_back(ls.add(c.size[O][d]));
    ExprP ib, jb, kbv;
    for (char ch : order) {
        if (ch == 'I') role_loops(ls, c, I, m, at, ib);
        if (ch == 'J') role_loops(ls, c, J, nn, at, jb);
        if (ch == 'K') kbv = ls.add(c.size[K][0] / kb);
    }
    const bool spill = kb && order.back() != 'K';
    if (kb && !spill) ls.open.pop_back();  // the K block loop goes inside the tile
    const size_t outer_loops = ls.open.size();
    std::vector<Stmt> init, step, done;
    // The K loops: a nest over K's axes, or the within-block loop.
    Loops ks = ls;
    std::vector<ExprP> kv;
    if (!kb) {
        for (int64_t s : c.size[K]) kv.push_back(ks.add(s));
    } else {
        if (!spill) ks.open.emplace_back(kbv->ivalue, c.size[K][0] / kb);
        const ExprP within = ks.add(kb);
        kv.push_back(binary("add", binary("mul", kbv, integer(kb)), within));
    }
    at.v[K] = kv;
    auto cell = [&](int64_t r, int64_t col) {
        At a = at;
        if (ib) a.v[I].push_back(block_index(ib, m, r));
        if (jb) a.v[J].push_back(block_index(jb, nn, col));
        return a;
    };
    const bool vec = L > 1;
    const int64_t per_row = vec ? nn / L : nn;
    const int left0 = vec ? 0 : (int)(m * nn);
    const int shared = (int)(m * per_row);  // the vector of operand 1 the rows share (m > 1)
    auto acc = [&](int64_t r, int64_t a) {
        const int n_acc = (int)(r * per_row + a);
        return vec ? vector_var(n_acc, (int)L) : scalar_var(n_acc);
    };
    auto out_at = [&](int64_t r, int64_t a) { return index(c.out, cell(r, a * (vec ? L : 1))); };
    const ExprP zero = vec ? splat(real(0), (int)L) : real(0);
    for (int64_t r = 0; r < m; ++r)
        for (int64_t a = 0; a < per_row; ++a) {
            const int n_acc = (int)(r * per_row + a);
            const std::vector<ExprP> oi = out_at(r, a);
            if (spill) {
                const ExprP back = vec ? vload(out, oi, (int)L) : load(out, oi);
                init.push_back(if_else(kbv, {assign(n_acc, back)}, {assign(n_acc, zero)}));
            } else {
                init.push_back(assign(n_acc, zero));
            }
            auto put = [&](const ExprP& v) { done.push_back(vec ? vstore(out, oi, v) : store(out, oi, v)); };
            if (bias < 0) {
                put(acc(r, a));
                continue;
            }
            const std::vector<ExprP> bi = cell(r, a * (vec ? L : 1)).v[J];
            const ExprP b = vec ? vload(bias, bi, (int)L) : load(bias, bi);
            if (exact) {
                put(binary("add", acc(r, a), b));
            } else {
                put(acc(r, a));
                put(binary("add", vec ? vload(out, oi, (int)L) : load(out, oi), b));
            }
        }
    // Each row's left element, then for each column (vector) of the tile the rows' updates.
    for (int64_t r = 0; r < m; ++r)
        if (nn > 1 || vec) step.push_back(assign(left0 + (int)r, load(0, index(c.x, cell(r, 0)))));
    for (int64_t a = 0; a < per_row; ++a) {
        ExprP right;
        if (vec) {
            right = vload(w_buf, index(c.w, cell(0, a * L)), (int)L);
            if (m > 1) {
                step.push_back(assign(shared, right));
                right = vector_var(shared, (int)L);
            }
        }
        for (int64_t r = 0; r < m; ++r) {
            const At here = cell(r, a * (vec ? L : 1));
            ExprP prod;
            if (vec) {
                prod = binary("mul", splat(scalar_var(left0 + (int)r), (int)L), right);
            } else {
                const ExprP left = nn > 1 ? scalar_var(left0 + (int)r) : load(0, index(c.x, here));
                prod = binary("mul", left, load(w_buf, index(c.w, here)));
            }
            step.push_back(assign((int)(r * per_row + a), binary("add", acc(r, a), prod)));
        }
    }
    // The K loops inside the tile, innermost last.
    std::vector<Stmt> body = std::move(step);
    for (size_t i = ks.open.size(); i-- > outer_loops;)
        body = {for_loop(ks.open[i].first, 0, ks.open[i].second, std::move(body))};
    std::vector<Stmt> tile = init;
    tile.insert(tile.end(), body.begin(), body.end());
    tile.insert(tile.end(), done.begin(), done.end());
    return ls.wrap(std::move(tile));
}

/// The row-wise body.
std::vector<Stmt> row_wise(const Nest& c, int out, int w_buf) {
    Loops ls;
    At at;
    for (Role r : {O, I})
        for (int64_t s : c.size[r]) at.v[r].push_back(ls.add(s));
    Loops ks = ls;
    for (int64_t s : c.size[K]) at.v[K].push_back(ks.add(s));
    Loops js = ks;
    for (int64_t s : c.size[J]) at.v[J].push_back(js.add(s));
    const std::vector<ExprP> oi = index(c.out, at);
    auto cols = [&](std::vector<Stmt> body) {
        for (size_t i = js.open.size(); i-- > ks.open.size();)
            body = {for_loop(js.open[i].first, 0, js.open[i].second, std::move(body))};
        return body;
    };
    std::vector<Stmt> row = cols({store(out, oi, real(0))});
    std::vector<Stmt> step{assign(0, load(0, index(c.x, at)))};
    const ExprP sum = binary("add", load(out, oi), binary("mul", scalar_var(0), load(w_buf, index(c.w, at))));
    for (Stmt& s : cols({store(out, oi, sum)})) step.push_back(std::move(s));
    for (size_t i = ks.open.size(); i-- > ls.open.size();)
        step = {for_loop(ks.open[i].first, 0, ks.open[i].second, std::move(step))};
    row.insert(row.end(), step.begin(), step.end());
    return ls.wrap(std::move(row));
}

/// The pack: operand 1 copied to the panel (its O axes, then K, then J), in its own type.
Kernel pack(const Nest& c, const BufferType& w, Nest& reads) {
    Kernel k;
    k.name = "pack";
    k.dtype = w.dtype;
    k.inputs = {w};
    std::vector<size_t> perm;
    for (Role r : {O, K, J})
        for (size_t d = 0; d < c.w.size(); ++d)
            if (c.w[d].role == r) perm.push_back(d);
    k.output.dtype = w.dtype;
    std::vector<ExprP> from(perm.size()), to;
    for (size_t p = 0; p < perm.size(); ++p) {
        k.output.axes.push_back(w.axes[perm[p]]);
        from[perm[p]] = loop_var((int)p);
        to.push_back(loop_var((int)p));
    }
    k.body = nest(0, sizes(k.output.axes), {store(1, to, load(0, from))});
    reads.w.clear();
    for (size_t p : perm) reads.w.push_back(c.w[p]);
    return k;
}

void check_point(const Nest& c, DType t, const Layout& l, bool contiguous) {
    const std::string tile = "tile [" + std::to_string(l.tile_m) + ", " + std::to_string(l.tile_n) + "]";
    if (l.form == Layout::Form::RowWise) {
        if (t == DType::BF16)
            refuse("the row-wise form on bf16 storage sums in the bf16 output, not in f32 as the default does");
        if (l.tile_m != 1 || l.tile_n != 1 || l.kblock || l.lanes != 1 || l.pack || !l.order.empty())
            refuse("the row-wise form has no tile, k-block, order, lanes or pack");
        return;
    }
    const bool unit = l.tile_m == 1 && l.tile_n == 1;
    if (!unit && !in_space(kTileRows, l.tile_m)) refuse(tile + ": m_i is " + listed(kTileRows));
    if (!unit && !in_space(kTileCols, l.tile_n)) refuse(tile + ": n_j is " + listed(kTileCols) + " (or the tile [1, 1])");
    if (c.size[I].empty() ? l.tile_m != 1 : c.size[I].back() % l.tile_m)
        refuse(tile + ": m_i does not divide the last row axis");
    if (c.size[J].empty() ? l.tile_n != 1 : c.size[J].back() % l.tile_n)
        refuse(tile + ": n_j does not divide the last column axis");
    if (l.kblock != 0 && l.kblock != 32 && l.kblock != 128)
        refuse("the k-block is none, 32 or 128, not " + std::to_string(l.kblock));
    if (l.kblock && (c.size[K].size() != 1 || c.size[K][0] % l.kblock || c.size[K][0] == 0))
        refuse("the k-block " + std::to_string(l.kblock) + " does not divide the contracted axis (one axis, not empty)");
    std::string sorted = l.order;
    std::sort(sorted.begin(), sorted.end());
    if (!l.order.empty() && sorted != (l.kblock ? "IJK" : "IJ"))
        refuse("the order " + l.order + " is not a permutation of " + (l.kblock ? "IJK" : "IJ"));
    if (l.kblock && !l.order.empty() && l.order.back() != 'K' && t == DType::BF16)
        refuse("a k-block on bf16 storage: order " + l.order +
               " stores the running sums between blocks, which rounds them to bf16");
    if (!in_space(kLanes, l.lanes)) refuse("lanes are " + listed(kLanes) + ", not " + std::to_string(l.lanes));
    if (l.lanes > 1 && t == DType::BF16) refuse("lanes on bf16 storage (bf16 stays scalar)");
    if (l.lanes > 1 && l.tile_n % l.lanes) refuse("lanes " + std::to_string(l.lanes) + " across the " + tile + "'s columns");
    if (l.lanes > 1 && !contiguous && !l.pack)
        refuse("lanes on an operand 1 that is not contiguous along J need a pack");
    if (l.bias && l.kblock && !l.order.empty() && l.order.back() != 'K')
        refuse("a bias on order " + l.order + ": the sums are stored at every k-block, the bias belongs to the last store only");
    if (l.bias && c.size[J].empty()) refuse("a bias along J on a nest without column axes");
}

} // namespace

std::vector<Kernel> lower_contract(const Node& n, DType t, const Layout& l) {
    std::optional<Nest> c;
    std::string name = n.prim;
    if (n.prim == "ein") {
        const core::EinSpec e = core::parse_ein(n.text);
        name = ein_name(n);
        c = ein_nest(n, e);
        if (!c) {
            if (l.form != Layout::Form::Default || l.pack || l.bias)  // lanes: the default has none here
                refuse("ein '" + n.text + "' is not of the contraction nest's pattern: only its default point");
            return {general_ein(n, t, e)};
        }
    } else {
        c = dot_nest(n);
    }
    Layout p = l;
    const bool eight = c->size[J].size() == 1 && c->size[J][0] % 8 == 0 && c->size[J][0] > 0;
    if (p.form == Layout::Form::Default) {
        const bool row = n.prim != "ein" && !eight && t != DType::BF16 && !p.bias;  // a bias needs the stores of a tile
        p.form = row ? Layout::Form::RowWise : Layout::Form::Tiled;
        p.tile_n = n.prim != "ein" && eight ? 8 : 1;
        if (p.tile_n == 1 || t == DType::BF16) p.lanes = 1;
    }
    const bool contiguous = !c->w.empty() && c->w.back().role == J && c->w.back().pos + 1 == c->size[J].size();
    if (p.bias && p.form == Layout::Form::RowWise)
        refuse("a bias on the row-wise form: the epilogue folds into the tiled form's stores");
    check_point(*c, t, p, contiguous);

    std::vector<Kernel> out;
    Kernel k = header(p.bias ? name + "+add" : name, n, t);
    if (p.bias) {
        const auto& ra = n.result->axes;
        k.inputs.push_back({t, std::vector<Axis>(ra.end() - (long)c->size[J].size(), ra.end())});
    }
    if (p.pack) {
        Nest reads = *c;
        out.push_back(pack(*c, k.inputs[1], reads));
        k.inputs[1] = out.back().output;
        c = reads;
    }
    k.body = p.form == Layout::Form::RowWise ? row_wise(*c, k.out_buf(), 1)
                                             : tiled(*c, p, k.out_buf(), 1, p.bias ? 2 : -1, arith_type(t) == t);
    out.push_back(std::move(k));
    return out;
}

} // namespace presk::kernel::detail
