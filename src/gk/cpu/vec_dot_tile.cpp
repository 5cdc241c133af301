// vec_dot_tile.cpp - the per-type table of tile kernels (vec_dot_tile.h).
#include "vec_dot_tile.h"

#include "vec_dot_impl.h"
#include "vec_dot_tile_impl.h"

namespace gk::cpu {
namespace {

struct tile_rows {
    const tile_kernel * rows[GK_TYPE_COUNT] = {};
};

tile_rows build_table() {
    tile_rows t;
#if defined(GK_TILE_AVX512) || defined(GK_SIMD_AVX2)
    t.rows[GK_TYPE_Q2_K]    = &detail::tile_q2_K;
    t.rows[GK_TYPE_Q3_K]    = &detail::tile_q3_K;
    t.rows[GK_TYPE_Q4_K]    = &detail::tile_q4_K;
    t.rows[GK_TYPE_Q5_K]    = &detail::tile_q5_K;
    t.rows[GK_TYPE_Q6_K]    = &detail::tile_q6_K;
    t.rows[GK_TYPE_IQ4_XS]  = &detail::tile_iq4_xs;
    t.rows[GK_TYPE_TQ1_0]   = &detail::tile_tq1_0;
    t.rows[GK_TYPE_TQ2_0]   = &detail::tile_tq2_0;
    t.rows[GK_TYPE_IQ2_XXS] = &detail::tile_iq2_xxs;
    t.rows[GK_TYPE_IQ2_XS]  = &detail::tile_iq2_xs;
    t.rows[GK_TYPE_IQ2_S]   = &detail::tile_iq2_s;
    t.rows[GK_TYPE_IQ3_XXS] = &detail::tile_iq3_xxs;
    t.rows[GK_TYPE_IQ3_S]   = &detail::tile_iq3_s;
    t.rows[GK_TYPE_IQ1_S]   = &detail::tile_iq1_s;
    t.rows[GK_TYPE_IQ1_M]   = &detail::tile_iq1_m;
    // the formats against q8_0 / q8_1 (vec_dot_tile_blocks.h)
    t.rows[GK_TYPE_Q8_0]    = &detail::tile_q8_0;
    t.rows[GK_TYPE_Q8_1]    = &detail::tile_q8_1;
    t.rows[GK_TYPE_Q4_0]    = &detail::tile_q4_0;
    t.rows[GK_TYPE_Q4_1]    = &detail::tile_q4_1;
    t.rows[GK_TYPE_Q5_0]    = &detail::tile_q5_0;
    t.rows[GK_TYPE_Q5_1]    = &detail::tile_q5_1;
    t.rows[GK_TYPE_IQ4_NL]  = &detail::tile_iq4_nl;
    t.rows[GK_TYPE_MXFP4]   = &detail::tile_mxfp4;
    t.rows[GK_TYPE_NVFP4]   = &detail::tile_nvfp4;
    t.rows[GK_TYPE_Q1_0]    = &detail::tile_q1_0;
    t.rows[GK_TYPE_Q2_0]    = &detail::tile_q2_0;
#endif
#if defined(GK_TILE_AVX512)
    t.rows[GK_TYPE_F32]    = &detail::tile_f32;
    t.rows[GK_TYPE_F16]    = &detail::tile_f16;
    t.rows[GK_TYPE_BF16]   = detail::bf16_instruction_dot() ? &detail::tile_bf16 : nullptr;  // VDPBF16PS
#endif
    return t;
}

} // namespace

const tile_kernel * tile_table(gk_type type) {
    static const tile_rows t = build_table();
    if (static_cast<int>(type) < 0 || type >= GK_TYPE_COUNT) {
        return nullptr;
    }
    return t.rows[type];
}

} // namespace gk::cpu
