// test-ops-rope-multi - rope_multi (M-RoPE, interleaved M-RoPE, vision rope; frequency
// factors and YaRN) against a reference computed here in double, and bad input.
#include "op_check.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace {

using namespace gk_test;

struct multi_cfg {
    const char * name;
    int          n_dims, mode, sections[4];
    int          n_ctx_orig;
    float        base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    bool         freq_factors;
};

/// The position (0..3 = t, h, w, e) pair i uses, and the pair its frequencies count from.
void stream_of(const multi_cfg & c, int64_t i, int * stream, int64_t * first) {
    const int *   s      = c.sections;
    const int64_t sum    = s[0] + s[1] + s[2] + s[3];
    const int64_t sector = i % sum;
    if (c.mode == GK_ROPE_TYPE_IMROPE) {
        *stream = sector % 3 == 1 && sector < 3 * s[1]   ? 1
                  : sector % 3 == 2 && sector < 3 * s[2] ? 2
                  : sector % 3 == 0 && sector < 3 * s[0] ? 0
                                                         : 3;
    } else {
        *stream = sector < s[0] ? 0 : sector < s[0] + s[1] ? 1 : sector < s[0] + s[1] + s[2] ? 2 : 3;
    }
    const int64_t starts[4] = {0, s[0], s[0] + s[1], s[0] + s[1] + s[2]};
    *first                  = c.mode == GK_ROPE_TYPE_VISION ? i - sector + starts[*stream] : 0;
}

void check_multi(const multi_cfg & c) {
    env           e;
    const int64_t D = 32, H = 3, T = 5;
    const bool    vision      = c.mode == GK_ROPE_TYPE_VISION;
    const int64_t pairs       = vision ? c.n_dims : c.n_dims / 2;
    gk_tensor *   a           = e.f32(D, H, T);
    gk_tensor *   pos         = e.indices(60, 4 * T);
    gk_tensor *   ff          = c.freq_factors ? e.positive(pairs) : nullptr;
    int           sections[4] = {c.sections[0], c.sections[1], c.sections[2], c.sections[3]};
    gk_tensor *   y = gk_rope_multi(e.ctx, a, pos, ff, c.n_dims, sections, c.mode, c.n_ctx_orig, c.base, c.freq_scale,
                                    c.ext_factor, c.attn_factor, c.beta_fast, c.beta_slow);
    ASSERT_TRUE(compute(e.ctx, y, 3)) << c.name;
    const auto va = values(a), vp = values(pos);
    const auto vf   = ff ? values(ff) : std::vector<double>{};
    const auto corr = [&](double beta) {
        return c.n_dims * std::log(c.n_ctx_orig / (beta * 2 * std::numbers::pi)) / (2 * std::log(double{c.base}));
    };
    const double        low  = std::max(0.0, std::floor(corr(c.beta_fast)));
    const double        high = std::min(c.n_dims - 1.0, std::ceil(corr(c.beta_slow)));
    std::vector<double> ref(va.size());
    for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < H; ++h) {
            for (int64_t i = 2 * pairs; i < D; ++i) {
                ref[flat(a->ne, i, h, t)] = va[flat(a->ne, i, h, t)];
            }
            for (int64_t i = 0; i < pairs; ++i) {
                int     stream = 0;
                int64_t first  = 0;
                stream_of(c, i, &stream, &first);
                const double p      = vp[static_cast<size_t>(t + stream * T)];
                const double extrap = p * std::pow(double{c.base}, -2.0 * static_cast<double>(i - first) / c.n_dims) /
                                      (ff ? vf[static_cast<size_t>(i)] : 1.0);
                const double interp = c.freq_scale * extrap;
                double       theta = interp, mscale = c.attn_factor;
                if (c.ext_factor != 0) {
                    const double ramp = (1 - std::min(1.0, std::max(0.0, (static_cast<double>(i) - low) /
                                                                             std::max(0.001, high - low)))) *
                                        c.ext_factor;
                    theta = interp * (1 - ramp) + extrap * ramp;
                    mscale *= 1 + 0.1 * std::log(1.0 / c.freq_scale);
                }
                const double x0 = va[flat(a->ne, i, h, t)], x1 = va[flat(a->ne, i + pairs, h, t)];
                ref[flat(a->ne, i, h, t)]         = (x0 * std::cos(theta) - x1 * std::sin(theta)) * mscale;
                ref[flat(a->ne, i + pairs, h, t)] = (x0 * std::sin(theta) + x1 * std::cos(theta)) * mscale;
            }
        }
    expect_close(y, ref, 4e-6 * 60, 1e-5, c.name);
}

TEST(OpsRopeMulti, MatchesTheSectionedRotation) {
    const multi_cfg cases[] = {
        {"mrope, sections wrap, partial", 24, GK_ROPE_TYPE_MROPE, {3, 2, 2, 0}, 0, 10000, 1, 0, 1, 0, 0, false},
        {"mrope, e section", 32, GK_ROPE_TYPE_MROPE, {6, 4, 4, 2}, 0, 10000, 1, 0, 1, 0, 0, false},
        {"mrope, yarn, freq factors", 32, GK_ROPE_TYPE_MROPE, {8, 4, 4, 0}, 4096, 10000, 0.25f, 1, 1, 32, 1, true},
        {"imrope", 32, GK_ROPE_TYPE_IMROPE, {6, 5, 5, 0}, 0, 5000000, 1, 0, 1, 0, 0, false},
        {"imrope, partial", 20, GK_ROPE_TYPE_IMROPE, {4, 3, 3, 0}, 0, 10000, 1, 0, 1, 0, 0, false},
        {"vision", 16, GK_ROPE_TYPE_VISION, {8, 8, 0, 0}, 0, 10000, 1, 0, 1, 0, 0, false},
        {"vision, freq factors", 16, GK_ROPE_TYPE_VISION, {10, 6, 0, 0}, 0, 100, 1, 0, 1, 0, 0, true},
    };
    for (const multi_cfg & c : cases) {
        check_multi(c);
    }
}

TEST(OpsRopeMulti, BadInputIsRefused) {
    env         e;
    gk_tensor * a      = e.f32(32, 2, 5);
    gk_tensor * p4     = e.indices(10, 20);
    int         sec[4] = {8, 4, 4, 0};
    const auto  bad    = [&](gk_tensor * r, const char * what, const char * expect) {
        expect_refused(e.ctx, r, what, expect);
    };
    const auto multi = [&](gk_tensor * pos, int n_dims, int * s, int mode, gk_tensor * ff = nullptr) {
        return gk_rope_multi(e.ctx, a, pos, ff, n_dims, s, mode, 0, 10000, 1, 0, 1, 0, 0);
    };
    ASSERT_NE(multi(p4, 32, sec, GK_ROPE_TYPE_MROPE), nullptr) << gk_last_error(e.ctx);
    bad(multi(p4, 32, sec, GK_ROPE_TYPE_NEOX), "neox through rope_multi", "multi-section mode");
    bad(gk_rope(e.ctx, a, e.indices(10, 5), 32, GK_ROPE_TYPE_MROPE), "mrope through rope", "not supported");
    bad(multi(e.indices(10, 5), 32, sec, GK_ROPE_TYPE_MROPE), "one position per token", "4 entries");
    int negative[4] = {8, -1, 4, 0};
    bad(multi(p4, 32, negative, GK_ROPE_TYPE_MROPE), "negative section", "sections");
    int zero[4] = {0, 0, 0, 5};
    bad(multi(p4, 32, zero, GK_ROPE_TYPE_MROPE), "only the e section", "sections");
    int big[4] = {20, 20, 0, 0};
    bad(multi(p4, 32, big, GK_ROPE_TYPE_MROPE), "sections past ne0", "sections");
    bad(multi(p4, 8, sec, GK_ROPE_TYPE_VISION), "vision n_dims", "ne0/2");
    bad(multi(p4, 16, sec, GK_ROPE_TYPE_VISION, e.positive(8)), "vision freq factors per pair", "per rotated pair");
    bad(multi(p4, 32, nullptr, GK_ROPE_TYPE_MROPE), "null sections", "sections is NULL");
}

} // namespace
