// rope.cpp - ggml's rope entry points that gk spells otherwise: the deprecated
// ggml_rope_custom forms (ggml_rope_ext without frequency factors) and ggml_rope_set_offset
// (gk_rope_set_offset reports a bad node or offset with false; ggml asserts).
#include "convert.h"

extern "C" {

struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                      float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return ggml_rope_ext(ctx, a, b, nullptr, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                         beta_fast, beta_slow);
}

struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                              float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return ggml_rope_ext_inplace(ctx, a, b, nullptr, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                                 attn_factor, beta_fast, beta_slow);
}

struct ggml_tensor * ggml_rope_set_offset(struct ggml_tensor * a, int n_offs) {
    if (!gk_rope_set_offset(compat::to_gk(a), n_offs)) {
        ggml_abort(__FILE__, __LINE__,
                   "ggml_rope_set_offset: needs a rope node of a non-vision mode and an even n_offs >= 0 with "
                   "n_offs + n_dims <= ne0 (n_offs = %d)",
                   n_offs);
    }
    return a;
}

} // extern "C"
