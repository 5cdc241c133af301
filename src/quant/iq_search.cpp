// iq_search.cpp - the lattices of the i-quant grids and their nearest-point search.
#include "iq_search.h"

#include "iq_quants.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>

namespace gk::quant::iq {
namespace {

struct grid_source {
    const void * entries;
    int          npoints;
    int          dim;
    int          entry_bytes;
    bool         signed_values;
    int          shells_on;   // distance shells listed for a key that is a grid point
    int          shells_off;  // ... and for one that is not
};

grid_source source_of(grid_id id) {
    switch (id) {
        case grid_id::iq2xxs: return {iq2xxs_grid, 256, 8, 8, false, 1, 2};
        case grid_id::iq2xs: return {iq2xs_grid, 512, 8, 8, false, 1, 2};
        case grid_id::iq2s: return {iq2s_grid, 1024, 8, 8, false, 1, 2};
        case grid_id::iq3xxs: return {iq3xxs_grid, 256, 4, 4, false, 1, 2};
        case grid_id::iq3s: return {iq3s_grid, 512, 4, 4, false, 1, 3};
        case grid_id::iq1s: return {iq1s_grid, 2048, 8, 8, true, 1, 3};
    }
    return {iq2xxs_grid, 256, 8, 8, false, 1, 2};
}

int coordinate(const grid_source & s, int p, int j) {
    const auto * bytes = static_cast<const uint8_t *>(s.entries) + static_cast<size_t>(p) * s.entry_bytes;
    return s.signed_values ? static_cast<int8_t>(bytes[j]) : bytes[j];
}

} // namespace

lattice::lattice(grid_id id) {
    const grid_source s = source_of(id);
    dim_     = s.dim;
    npoints_ = s.npoints;

    std::set<int> distinct;
    for (int p = 0; p < npoints_; ++p) {
        for (int j = 0; j < dim_; ++j) {
            distinct.insert(coordinate(s, p, j));
        }
    }
    nlevels_ = 0;
    for (int v : distinct) {
        values_[nlevels_++] = static_cast<float>(v);
    }
    point_levels_.resize(static_cast<size_t>(npoints_) * dim_);
    for (int p = 0; p < npoints_; ++p) {
        for (int j = 0; j < dim_; ++j) {
            const int v = coordinate(s, p, j);
            point_levels_[static_cast<size_t>(p) * dim_ + j] =
                static_cast<uint8_t>(std::distance(distinct.begin(), distinct.find(v)));
        }
    }

    int nkeys = 1;
    for (int j = 0; j < dim_; ++j) {
        nkeys *= nlevels_;
    }
    std::vector<int> on_grid(static_cast<size_t>(nkeys), 0);
    for (int p = 0; p < npoints_; ++p) {
        on_grid[static_cast<size_t>(key_of(levels(p)))] = 1;
    }
    const int           max_d2 = dim_ * (nlevels_ - 1) * (nlevels_ - 1);
    std::vector<int>    d2(static_cast<size_t>(npoints_));
    std::vector<int>    present(static_cast<size_t>(max_d2) + 1);
    near_start_.assign(static_cast<size_t>(nkeys) + 1, 0);
    for (int k = 0; k < nkeys; ++k) {
        uint8_t lv[k_max_dim];
        for (int j = 0, r = k; j < dim_; ++j, r /= nlevels_) {
            lv[j] = static_cast<uint8_t>(r % nlevels_);
        }
        std::fill(present.begin(), present.end(), 0);
        for (int p = 0; p < npoints_; ++p) {
            const uint8_t * q = levels(p);
            int             s2 = 0;
            for (int j = 0; j < dim_; ++j) {
                s2 += (q[j] - lv[j]) * (q[j] - lv[j]);
            }
            d2[static_cast<size_t>(p)] = s2;
            present[static_cast<size_t>(s2)] = 1;
        }
        int shells = on_grid[static_cast<size_t>(k)] ? s.shells_on : s.shells_off;
        int limit  = 0;
        for (int v = 0; v <= max_d2 && shells > 0; ++v) {
            if (present[static_cast<size_t>(v)]) {
                limit = v;
                --shells;
            }
        }
        for (int p = 0; p < npoints_; ++p) {
            if (d2[static_cast<size_t>(p)] <= limit) {
                near_.push_back(static_cast<uint16_t>(p));
            }
        }
        near_start_[static_cast<size_t>(k) + 1] = static_cast<int32_t>(near_.size());
    }
}

int lattice::key_of(const uint8_t * lv) const {
    int k = 0;
    for (int j = dim_ - 1; j >= 0; --j) {
        k = k * nlevels_ + lv[j];
    }
    return k;
}

const lattice & get_lattice(grid_id id) {
    // Function-local statics: each built once, on first use, thread-safe (C++11 [stmt.dcl]).
    switch (id) {
        case grid_id::iq2xxs: { static const lattice g(grid_id::iq2xxs); return g; }
        case grid_id::iq2xs: { static const lattice g(grid_id::iq2xs); return g; }
        case grid_id::iq2s: { static const lattice g(grid_id::iq2s); return g; }
        case grid_id::iq3xxs: { static const lattice g(grid_id::iq3xxs); return g; }
        case grid_id::iq3s: { static const lattice g(grid_id::iq3s); return g; }
        case grid_id::iq1s: break;
    }
    static const lattice g(grid_id::iq1s);
    return g;
}

group_costs::group_costs(const lattice & g, const float * y, const float * w, float t, float shift, bool with_flip) {
    for (int j = 0; j < g.dim(); ++j) {
        float best = std::numeric_limits<float>::infinity();
        nearest[j] = 0;
        for (int l = 0; l < g.nlevels(); ++l) {
            const float v    = t * (g.value(l) + shift);
            const float diff = y[j] - v;
            cost[j][l]       = w[j] * diff * diff;
            flip[j][l]       = with_flip ? 4.0f * w[j] * y[j] * v : 0.0f;
            if (cost[j][l] < best) {
                best       = cost[j][l];
                nearest[j] = static_cast<uint8_t>(l);
            }
        }
    }
}

namespace {

/// Scores the neighbours of key k; updates plain (and flipped when given).
void score_key(const lattice & g, const group_costs & c, int k, pick & plain, pick * flipped) {
    const int dim = g.dim();
    for (const uint16_t * it = g.near_begin(k); it != g.near_end(k); ++it) {
        const uint8_t * lv  = g.levels(*it);
        float           err = 0.0f;
        for (int j = 0; j < dim; ++j) {
            err += c.cost[j][lv[j]];
        }
        if (err < plain.err) {
            plain = {*it, -1, err};
        }
        if (flipped) {
            int   jmin = 0;
            float fmin = c.flip[0][lv[0]];
            for (int j = 1; j < dim; ++j) {
                if (c.flip[j][lv[j]] < fmin) {
                    fmin = c.flip[j][lv[j]];
                    jmin = j;
                }
            }
            if (err + fmin < flipped->err) {
                *flipped = {*it, jmin, err + fmin};
            }
        }
    }
}

constexpr float k_inf = std::numeric_limits<float>::infinity();

} // namespace

pick best_point(const lattice & g, const group_costs & c) {
    pick best{0, -1, k_inf};
    score_key(g, c, g.key_of(c.nearest), best, nullptr);
    return best;
}

void best_point_parity(const lattice & g, const group_costs & c, pick & plain, pick & flipped) {
    plain   = {0, -1, k_inf};
    flipped = {0, -1, k_inf};
    const int k = g.key_of(c.nearest);
    score_key(g, c, k, plain, &flipped);
    // the coordinate cheapest to negate at its nearest level, moved to the lowest level
    int   jmin = 0;
    float fmin = k_inf;
    for (int j = 0; j < g.dim(); ++j) {
        if (c.flip[j][c.nearest[j]] < fmin) {
            fmin = c.flip[j][c.nearest[j]];
            jmin = j;
        }
    }
    if (c.nearest[jmin] != 0) {
        uint8_t lv[k_max_dim];
        std::copy(std::begin(c.nearest), std::end(c.nearest), lv);  // the coordinates past dim() unread
        lv[jmin] = 0;
        score_key(g, c, g.key_of(lv), plain, &flipped);
    }
}

} // namespace gk::quant::iq
