// rope.cpp - rotary position embedding, normal and neox, partial (n_dims < ne0, the
// rest copied), frequency factors, and YaRN (ext_factor, attn_factor, beta_fast,
// beta_slow). Split by destination row: row (head i1, token i2, i3).
//
// Pair i (i = 0 .. n_dims/2-1) is rotated by theta_i = p * base^(-2i/n_dims) / ff[i],
// with theta computed by repeated multiplication (theta_{i+1} = theta_i * base^(-2/n_dims)),
// then YaRN-corrected:
//   interp = freq_scale * theta; ramp = 1 - clamp((i - low) / max(0.001, high - low), 0, 1)
//   theta' = interp * (1 - ramp*ext) + theta * ramp*ext
//   mscale = attn_factor * (ext != 0 ? 1 + 0.1 ln(1/freq_scale) : 1)
// where [low, high] are the correction dims: floor / ceil of
//   n_dims * ln(n_ctx_orig / (beta * 2 pi)) / (2 ln base)  for beta_fast / beta_slow,
// clamped to [0, n_dims-1]. Normal mode pairs (x[2i], x[2i+1]); neox pairs
// (x[i], x[i + n_dims/2]). (x0, x1) -> (x0 c - x1 s, x0 s + x1 c), c = cos(theta')*mscale,
// s = sin(theta')*mscale.
#include "../dispatch.h"
#include "../rows.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gk::cpu {
namespace {

struct rope_params {
    int   n_dims;
    int   mode;
    int   n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
};

rope_params params_of(const gk_tensor * dst) {
    return {gk_get_op_params_i32(dst, 1),  gk_get_op_params_i32(dst, 2),  gk_get_op_params_i32(dst, 4),
            gk_get_op_params_f32(dst, 5),  gk_get_op_params_f32(dst, 6),  gk_get_op_params_f32(dst, 7),
            gk_get_op_params_f32(dst, 8),  gk_get_op_params_f32(dst, 9),  gk_get_op_params_f32(dst, 10)};
}

float corr_dim(int n_dims, int n_ctx_orig, float beta, float base) {
    return static_cast<float>(n_dims) * std::log(static_cast<float>(n_ctx_orig) / (beta * 2.0f * std::numbers::pi_v<float>)) /
           (2.0f * std::log(base));
}

/// cos/sin (scaled) of every pair for position pos into cs[2i], cs[2i+1].
void rope_cache(const rope_params & rp, float pos, const gk_tensor * ff, float * cs) {
    const float theta_scale = std::pow(rp.freq_base, -2.0f / static_cast<float>(rp.n_dims));
    const float low  = std::max(0.0f, std::floor(corr_dim(rp.n_dims, rp.n_ctx_orig, rp.beta_fast, rp.freq_base)));
    const float high = std::min(static_cast<float>(rp.n_dims - 1),
                                std::ceil(corr_dim(rp.n_dims, rp.n_ctx_orig, rp.beta_slow, rp.freq_base)));
    float mscale = rp.attn_factor;
    if (rp.ext_factor != 0.0f) {
        mscale *= 1.0f + 0.1f * std::log(1.0f / rp.freq_scale);
    }
    float theta = pos;
    for (int i = 0; i < rp.n_dims / 2; ++i) {
        const float extrap = theta / (ff ? read_element(ff, i, 0, 0, 0) : 1.0f);
        const float interp = rp.freq_scale * extrap;
        float       t      = interp;
        if (rp.ext_factor != 0.0f) {
            const float y    = (static_cast<float>(i) - low) / std::max(0.001f, high - low);
            const float ramp = (1.0f - std::min(1.0f, std::max(0.0f, y))) * rp.ext_factor;
            t                = interp * (1.0f - ramp) + extrap * ramp;
        }
        cs[2 * i]     = std::cos(t) * mscale;
        cs[2 * i + 1] = std::sin(t) * mscale;
        theta *= theta_scale;
    }
}

void rope(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const gk_tensor * pos  = dst->src[1];
    const gk_tensor * ff   = dst->src[2];  // contiguous f32 (checked at build time)
    const rope_params rp   = params_of(dst);
    const int64_t     n    = a->ne[0];
    const int64_t     half = rp.n_dims / 2;
    scratch           w    = p.work();
    float *           cs   = w.floats(rp.n_dims);
    int64_t           cached_token = -1;
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t, int64_t i2, int64_t) {
        if (i2 != cached_token) {  // rows of one token share the cache
            rope_cache(rp, static_cast<float>(read_index(pos, i2, 0, 0, 0)), ff, cs);
            cached_token = i2;
        }
        for (int64_t i = 0; i < half; ++i) {
            const int64_t j0 = rp.mode == GK_ROPE_TYPE_NEOX ? i : 2 * i;
            const int64_t j1 = rp.mode == GK_ROPE_TYPE_NEOX ? i + half : 2 * i + 1;
            const float   x0 = x[j0];
            const float   x1 = x[j1];
            y[j0]            = x0 * cs[2 * i] - x1 * cs[2 * i + 1];
            y[j1]            = x0 * cs[2 * i + 1] + x1 * cs[2 * i];
        }
        for (int64_t i = rp.n_dims; i < n; ++i) {
            y[i] = x[i];
        }
    });
}

size_t rope_work_size(const gk_tensor * dst) {
    return default_work_size(dst) + scratch_bytes(static_cast<size_t>(gk_get_op_params_i32(dst, 1)) * sizeof(float));
}

} // namespace

void register_rope(kernel_table & t) { t.ops[GK_OP_ROPE] = {rope, rope_work_size}; }

} // namespace gk::cpu
