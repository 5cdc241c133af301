// iq_search.h - nearest-point search in the codebooks ("grids") of the lattice i-quants.
//
// A grid is a set of points of `dim` coordinates (8 or 4), each coordinate one of
// `nlevels` level values (3 or 8; iq_quants.h lists them). The full product lattice of
// those levels has nlevels^dim points ("keys"); a grid holds a small subset. For every key
// the lattice keeps a neighbour list: the grid points within the few nearest distances
// (squared distance in level steps) of it, or the key itself where it is a grid point
// and that shell is asked for alone. A search rounds each target coordinate to its
// nearest level, looks the resulting key up and scores only its neighbours exactly, in
// weighted squared error.
//
// The neighbour lists are built on first use of a grid, once per process (thread-safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gk::quant::iq {

inline constexpr int k_max_dim    = 8;
inline constexpr int k_max_levels = 8;

enum class grid_id { iq2xxs, iq2xs, iq2s, iq3xxs, iq3s, iq1s };

class lattice {
public:
    explicit lattice(grid_id id);

    int dim() const { return dim_; }
    int nlevels() const { return nlevels_; }
    int size() const { return npoints_; }
    /// Value of level l (the grid entries' coordinate values, ascending; int8 for iq1s).
    float value(int l) const { return values_[l]; }
    /// Level index of each coordinate of grid point p.
    const uint8_t * levels(int p) const { return &point_levels_[static_cast<size_t>(p) * dim_]; }
    /// Key of a level vector: sum of lv[j] * nlevels^j.
    int key_of(const uint8_t * lv) const;
    /// Grid points to score for key k.
    const uint16_t * near_begin(int k) const { return near_.data() + near_start_[k]; }
    const uint16_t * near_end(int k) const { return near_.data() + near_start_[k + 1]; }

private:
    int                   dim_     = 0;
    int                   nlevels_ = 0;
    int                   npoints_ = 0;
    float                 values_[k_max_levels] = {};
    std::vector<uint8_t>  point_levels_;
    std::vector<int32_t>  near_start_;  // nlevels^dim + 1 offsets into near_
    std::vector<uint16_t> near_;
};

/// The lattice of a grid, built on first use.
const lattice & get_lattice(grid_id id);

/// One group's choice: grid point, the coordinate whose sign is negated against its
/// target (-1: none) and the weighted squared error of the choice.
struct pick {
    int   point = 0;
    int   flip  = -1;
    float err   = 0.0f;
};

/// Per-coordinate costs of one group of targets y (weights w) reconstructed as
/// t * (value(l) + shift): cost[j][l] = w_j (y_j - t (value(l) + shift))^2. With `with_flip`,
/// also flip[j][l], the extra cost of negating coordinate j: 4 t w_j y_j (value(l) + shift).
struct group_costs {
    float cost[k_max_dim][k_max_levels];
    float flip[k_max_dim][k_max_levels];
    uint8_t nearest[k_max_dim];  // level of least cost per coordinate

    group_costs(const lattice & g, const float * y, const float * w, float t, float shift, bool with_flip);
};

/// The best neighbour of the key of per-coordinate nearest levels (least error).
pick best_point(const lattice & g, const group_costs & c);

/// For a group whose signs are stored with even parity (the costs built `with_flip`): the
/// best point without a negation (`plain`) and the best with exactly one coordinate
/// negated against its target (`flipped`, the cheapest coordinate of that point).
/// Candidates come from the nearest key and from that key with its cheapest-to-negate
/// coordinate at level 0.
void best_point_parity(const lattice & g, const group_costs & c, pick & plain, pick & flipped);

} // namespace gk::quant::iq
