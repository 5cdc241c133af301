// The layout space of a contraction and of a softmax (../shared/seeds/presk-native.txt,
// "Contractions: one builder, a layout space" and "A split at a depth"; docs/presk.md, "The
// layout space"). A point says how a nest's kernel is laid out, never what it computes: each
// output element still adds its terms in increasing k in one accumulator, so every point gives
// the default's bits.
#pragma once
#include <string>
#include <vector>

#include "kernel/lower.h"

namespace presk::kernel {

/// The space's values: a tile's rows m_i and columns n_j (besides the tile [1, 1]), and lanes.
/// [8, 32] in 16 lanes is AVX-512's register tile: 16 accumulators, 2 vectors of operand 1
/// and 8 left elements in its 32 registers.
inline constexpr int kTileRows[] = {1, 2, 4, 8};
inline constexpr int kTileCols[] = {4, 8, 16, 32};
inline constexpr int kLanes[] = {1, 2, 4, 8, 16};

/// Whether `v` is one of `values` (a tile's m_i or n_j, lanes).
template <size_t N> constexpr bool in_space(const int (&values)[N], int64_t v) {
    for (int x : values)
        if (x == v) return true;
    return false;
}

/// "1, 2, 4 or 8": the values as a message lists them.
template <size_t N> std::string listed(const int (&values)[N]) {
    std::string s;
    for (size_t i = 0; i < N; ++i) {
        if (i) s += i + 1 == N ? " or " : ", ";
        s += std::to_string(values[i]);
    }
    return s;
}

/// Whether primitive `prim` is a contraction, the nests the form, tile, k-block, order, lanes,
/// pack and bias apply to: dot, matmul or ein.
inline bool is_contraction(const std::string& prim) { return prim == "dot" || prim == "matmul" || prim == "ein"; }

/// One point of a nest's layout space. The zero value is the default point.
struct Layout {
    enum class Form { Default, RowWise, Tiled };
    Form form = Form::Default;  // Default: the form lower() chooses (tile and k-block unused)
    int tile_m = 1, tile_n = 1;  // the register tile: [1, 1], or m in kTileRows and n in kTileCols
    int kblock = 0;              // the k-block: 0 (none), 32 or 128; it must divide K
    std::string order;           // the block loops outermost first: "IJ" or "JI", with a k-block
                                 // a permutation of "IJK"; empty for "IJ" ("IJK")
    int lanes = 1;               // 1, or 2 to 16 lanes (kLanes) across the tile's columns
    bool pack = false;           // operand 1 copied to a (outer..., K, J) panel by a kernel of its own
    int passes = 3;              // a softmax's passes over a row: 3, or 2 (f64 and f32 only)
    int split_depth = 0;         // the depth of the loop a thread split divides (Kernel::split_depth)
    int split_workers = 0;       // its workers: 0 for the executor's rule, 1 for none
    bool bias = false;           // the epilogue: a bias along J (input %2) added in the tiled
                                 // form's stores, as the add after the product would
};

/// "tile [2, 4], k-block 32, order JI, lanes 4, pack, bias, split at depth 1 over 2 workers":
/// the point as the test and the messages name it.
std::string to_string(const Layout& l);

/// The candidate points of `n`'s space, in a fixed order, without splits: for a contraction
/// the default, the row-wise form, then every tile ([1, 1], m_i in kTileRows by n_j in kTileCols)
/// by k-block (none, 32, 128) by order (IJ, JI; with a k-block the six permutations of IJK) by
/// lanes (1, `width`) by pack (off, on), and with `bias` (a bias add reads the product) the
/// default with the epilogue second and every tile by epilogue (none, bias); for a softmax its three and two passes; for anything else the
/// default alone. Not every candidate applies to `n` (lower_layout refuses those).
std::vector<Layout> layout_space(const Node& n, int width, bool bias = false);

/// Whether `l` chooses anything but a split: a form, tile, k-block, order, lanes above 1, a
/// pack, a bias or two passes.
bool shapes(const Layout& l);

/// Lowers `n` (as lower() does) at the point `l`: the pack kernel first when `l.pack`, then the
/// nest's kernel, both with the split of `l` on the nest's kernel. With `l.bias` the nest's
/// kernel has a third input, the bias b[J...] over the result's column axes, and computes the
/// product plus b (broadcast over the other axes) with the bits of the product's kernel and then
/// the add's: each sum stored as the product's kernel stores it, plus b where the storage is the
/// arithmetic type; on bf16 the sum stored, read back and added to (docs/presk.md, "The
/// epilogue"); at the default form the bias takes the default's tile (the tiled form where the
/// default is row-wise). The form, tile, k-block,
/// order, lanes and pack apply to dot, matmul and an ein of the contraction nest's pattern (two
/// operands; the output's labels the outer ones, then I, then J; summed labels in both
/// operands), passes to softmax; the split to every kernel. Throws presk::Error "layout:
/// <what>" naming the first thing of `l` the nest does not admit (a tile that does not divide
/// its axes, a k-block on bf16 storage that spills, lanes on an operand 1 not contiguous along J
/// without a pack, the row-wise form in bf16, a bias outside the tiled form, on a spilling
/// order or without column axes, ...). Whether the split's loop is parallel is
/// checked on the result (split_loop), not here.
std::vector<Kernel> lower_layout(const Node& n, DType t, const Layout& l);

} // namespace presk::kernel
