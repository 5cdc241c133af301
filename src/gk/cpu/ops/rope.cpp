// rope.cpp - rotary position embedding, normal and neox, partial (n_dims < ne0, the
// rest copied), frequency factors, YaRN (ext_factor, attn_factor, beta_fast,
// beta_slow), and the multi-section modes of rope_multi (M-RoPE, interleaved M-RoPE,
// vision). Split by destination row: row (head i1, token i2, i3).
//
// Pair i (i = 0 .. n_pairs-1) is rotated by theta_i = p * base^(-2i/n_dims) / ff[i],
// with theta computed by repeated multiplication (theta_{i+1} = theta_i * base^(-2/n_dims)),
// then YaRN-corrected:
//   interp = freq_scale * theta; ramp = 1 - clamp((i - low) / max(0.001, high - low), 0, 1)
//   theta' = interp * (1 - ramp*ext) + theta * ramp*ext
//   mscale = attn_factor * (ext != 0 ? 1 + 0.1 ln(1/freq_scale) : 1)
// where [low, high] are the correction dims: floor / ceil of
//   n_dims * ln(n_ctx_orig / (beta * 2 pi)) / (2 ln base)  for beta_fast / beta_slow,
// clamped to [0, n_dims-1]. Normal mode pairs (x[2i], x[2i+1]); the others pair
// (x[i], x[i + n_pairs]). (x0, x1) -> (x0 c - x1 s, x0 s + x1 c), c = cos(theta')*mscale,
// s = sin(theta')*mscale.
//
// Multi-section modes (op_params[11..14]: sections s0..s3, in pairs) take four positions
// per token (t, h, w, e: b[i2 + k*ne2]) and one running theta per position, all advanced
// together; pair i uses the theta of its sector's position, sector = i % (s0+s1+s2+s3):
//   M-RoPE: sectors [0, s0) t, [s0, s0+s1) h, then s2 sectors w, the rest e;
//   interleaved M-RoPE: sector % 3 == 1 and < 3 s1: h; == 2 and < 3 s2: w; == 0 and
//   < 3 s0: t; else e;
//   vision: as M-RoPE, but each position's theta restarts at its section's first sector
//   (the sector s0+s1 restarts w, and so on), n_pairs = n_dims = ne0/2, nothing is copied.
// M-RoPE and its interleaved form rotate like neox (n_pairs = n_dims/2).
//
// gk_rope_set_offset (op_params[15] = offs, not for vision) moves the rotated window to
// [offs, offs + 2 n_pairs) of the row; the elements on either side are copied.
//
// rope_back (GK_OP_ROPE_BACK, the gradient of any of these modes) rotates by -theta':
// s is negated, so the map is the transpose of rope's (ggml's sin_sign).
#include "rope_cache.h"

#include "../dispatch.h"
#include "../rows.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gk::cpu {
namespace {

/// Which of the four positions (t, h, w, e) pair i of a multi-section mode uses (see the
/// file comment). For vision, *restart is the position whose theta restarts at pair i
/// (ggml's order of tests: the first sector that matches wins), else left as is.
int section_of(const rope_params & rp, int i, int * restart) {
    const int64_t s[4]   = {rp.sections[0], rp.sections[1], rp.sections[2], rp.sections[3]};
    const int64_t sector = i % (s[0] + s[1] + s[2] + s[3]);
    const int64_t sec_w  = s[0] + s[1];
    const int64_t sec_e  = sec_w + s[2];
    if (rp.mode == GK_ROPE_TYPE_VISION) {
        *restart = sector == 0 ? 0 : sector == s[0] ? 1 : sector == sec_w ? 2 : sector == sec_e ? 3 : -1;
    }
    if (rp.mode == GK_ROPE_TYPE_IMROPE) {
        if (sector % 3 == 1 && sector < 3 * s[1]) {
            return 1;
        }
        if (sector % 3 == 2 && sector < 3 * s[2]) {
            return 2;
        }
        return sector % 3 == 0 && sector < 3 * s[0] ? 0 : 3;
    }
    return sector < s[0] ? 0 : sector < sec_w ? 1 : sector < sec_e ? 2 : 3;
}

float corr_dim(int n_dims, int n_ctx_orig, float beta, float base) {
    return static_cast<float>(n_dims) * std::log(static_cast<float>(n_ctx_orig) / (beta * 2.0f * std::numbers::pi_v<float>)) /
           (2.0f * std::log(base));
}

} // namespace

rope_params rope_params_of(const gk_tensor * dst) {
    return {gk_get_op_params_i32(dst, 1),
            gk_get_op_params_i32(dst, 2),
            gk_get_op_params_i32(dst, 4),
            gk_get_op_params_f32(dst, 5),
            gk_get_op_params_f32(dst, 6),
            gk_get_op_params_f32(dst, 7),
            gk_get_op_params_f32(dst, 8),
            gk_get_op_params_f32(dst, 9),
            gk_get_op_params_f32(dst, 10),
            {gk_get_op_params_i32(dst, 11), gk_get_op_params_i32(dst, 12), gk_get_op_params_i32(dst, 13),
             gk_get_op_params_i32(dst, 14)}};
}

void rope_cache(const rope_params & rp, const float pos[4], const gk_tensor * ff, float sin_sign, float * cs) {
    const float theta_scale = std::pow(rp.freq_base, -2.0f / static_cast<float>(rp.n_dims));
    float       corr[2];
    gk_rope_yarn_corr_dims(rp.n_dims, rp.n_ctx_orig, rp.freq_base, rp.beta_fast, rp.beta_slow, corr);
    const float low  = corr[0];
    const float high = corr[1];
    float mscale = rp.attn_factor;
    if (rp.ext_factor != 0.0f) {
        mscale *= 1.0f + 0.1f * std::log(1.0f / rp.freq_scale);
    }
    float theta[4] = {pos[0], pos[1], pos[2], pos[3]};
    for (int i = 0; i < rp.n_pairs(); ++i) {
        int k = 0;
        if (rp.multi()) {
            int restart = -1;
            k           = section_of(rp, i, &restart);
            if (restart >= 0) {
                theta[restart] = pos[restart];
            }
        }
        const float extrap = theta[k] / (ff ? read_element(ff, i, 0, 0, 0) : 1.0f);
        const float interp = rp.freq_scale * extrap;
        float       t      = interp;
        if (rp.ext_factor != 0.0f) {
            const float y    = (static_cast<float>(i) - low) / std::max(0.001f, high - low);
            const float ramp = (1.0f - std::min(1.0f, std::max(0.0f, y))) * rp.ext_factor;
            t                = interp * (1.0f - ramp) + extrap * ramp;
        }
        cs[2 * i]     = std::cos(t) * mscale;
        cs[2 * i + 1] = std::sin(t) * mscale * sin_sign;
        for (float & th : theta) {
            th *= theta_scale;
        }
    }
}

namespace {

void rope(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const gk_tensor * pos  = dst->src[1];
    const gk_tensor * ff   = dst->src[2];  // contiguous f32 (checked at build time)
    const rope_params rp   = rope_params_of(dst);
    const int64_t     n     = a->ne[0];
    const int64_t     pairs = rp.n_pairs();
    const bool        adjacent = rp.mode == GK_ROPE_TYPE_NORMAL;
    const int64_t     offs     = gk_get_op_params_i32(dst, 15);  // gk_rope_set_offset's window
    const float       sin_sign = dst->op == GK_OP_ROPE_BACK ? -1.0f : 1.0f;
    scratch           w     = p.work();
    float *           cs    = w.floats(2 * pairs);
    int64_t           cached_token = -1;
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t, int64_t i2, int64_t) {
        if (i2 != cached_token) {  // rows of one token share the cache
            float ps[4] = {};
            for (int k = 0; k < (rp.multi() ? 4 : 1); ++k) {
                ps[k] = static_cast<float>(read_index(pos, i2 + k * a->ne[2], 0, 0, 0));
            }
            rope_cache(rp, ps, ff, sin_sign, cs);
            cached_token = i2;
        }
        for (int64_t i = 0; i < offs; ++i) {
            y[i] = x[i];
        }
        for (int64_t i = 0; i < pairs; ++i) {
            const int64_t j0 = offs + (adjacent ? 2 * i : i);
            const int64_t j1 = offs + (adjacent ? 2 * i + 1 : i + pairs);
            const float   x0 = x[j0];
            const float   x1 = x[j1];
            y[j0]            = x0 * cs[2 * i] - x1 * cs[2 * i + 1];
            y[j1]            = x0 * cs[2 * i + 1] + x1 * cs[2 * i];
        }
        for (int64_t i = offs + 2 * pairs; i < n; ++i) {
            y[i] = x[i];
        }
    });
}

size_t rope_work_size(const gk_tensor * dst) {
    return default_work_size(dst) + scratch_bytes(static_cast<size_t>(2 * rope_params_of(dst).n_pairs()) * sizeof(float));
}

} // namespace

void register_rope(kernel_table & t) {
    t.ops[GK_OP_ROPE]      = {rope, rope_work_size};
    t.ops[GK_OP_ROPE_BACK] = {rope, rope_work_size};
}

} // namespace gk::cpu

extern "C" void gk_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                                       float dims[2]) {
    const float start = std::floor(gk::cpu::corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    const float end   = std::ceil(gk::cpu::corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    dims[0]           = std::max(0.0f, start);
    dims[1]           = std::min(static_cast<float>(n_dims - 1), end);
}
