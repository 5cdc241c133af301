// rope_cache.h - the angles of rope (cpu/ops/rope.cpp's file comment has the formulas):
// its parameters as op_params hold them, and the scaled cos / sin of every pair for one
// token. The CPU kernel uses them; so does the Vulkan backend, whose rope shader rotates
// with this table (filled on the host) so that its angles are the CPU's bits.
#pragma once

#include "gk/gk.h"

namespace gk::cpu {

struct rope_params {
    int   n_dims;
    int   mode;
    int   n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int   sections[4];

    bool multi() const { return (mode & GK_ROPE_TYPE_MROPE) != 0; }  // true for vision and imrope too
    /// Pairs rotated per row.
    int n_pairs() const { return mode == GK_ROPE_TYPE_VISION ? n_dims : n_dims / 2; }
};

/// The rope parameters of a GK_OP_ROPE node (ggml's op_params layout).
rope_params rope_params_of(const gk_tensor * dst);

/// cos / sin (scaled by the YaRN mscale, the sin times sin_sign: -1 for rope_back) of
/// every pair into cs[2i], cs[2i+1], for the position pos[0] or, in the multi-section
/// modes, the four positions pos[0..3]; ff: the frequency factors (contiguous f32, one per
/// pair, in memory the host can read) or nullptr.
void rope_cache(const rope_params & rp, const float pos[4], const gk_tensor * ff, float sin_sign, float * cs);

} // namespace gk::cpu
