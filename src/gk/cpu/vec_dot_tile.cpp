// vec_dot_tile.cpp - the per-type table of tile kernels (vec_dot_tile.h).
#include "vec_dot_tile.h"

#include "cpu_features.h"
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
    // the integer formats (vec_dot_tile_q8k.h, vec_dot_tile_rows.h, vec_dot_tile_blocks.h):
    // their AMX variants where the host grants the tiles, and the gathering forms where its
    // gathers are fast (cpu_features.h; detail::gathered_tile)
#if defined(GK_TILE_AVX512)
    const bool amx  = host_cpu().amx_usable;
    const auto pick = [amx](gk_type type, const tile_kernel * plain, const tile_kernel * with_amx) {
        const tile_kernel * gathered = detail::gathered_tile(type, amx);
        return gathered ? gathered : amx ? with_amx : plain;
    };
#define GK_INT_TILE(type, name) t.rows[type] = pick(type, &detail::name, &detail::name##_amx)
#else
#define GK_INT_TILE(type, name) t.rows[type] = &detail::name
#endif
    GK_INT_TILE(GK_TYPE_Q2_K, tile_q2_K);
    GK_INT_TILE(GK_TYPE_Q3_K, tile_q3_K);
    GK_INT_TILE(GK_TYPE_Q4_K, tile_q4_K);
    GK_INT_TILE(GK_TYPE_Q5_K, tile_q5_K);
    GK_INT_TILE(GK_TYPE_Q6_K, tile_q6_K);
    GK_INT_TILE(GK_TYPE_IQ4_XS, tile_iq4_xs);
    GK_INT_TILE(GK_TYPE_TQ1_0, tile_tq1_0);
    GK_INT_TILE(GK_TYPE_TQ2_0, tile_tq2_0);
    GK_INT_TILE(GK_TYPE_IQ2_XXS, tile_iq2_xxs);
    GK_INT_TILE(GK_TYPE_IQ2_XS, tile_iq2_xs);
    GK_INT_TILE(GK_TYPE_IQ2_S, tile_iq2_s);
    GK_INT_TILE(GK_TYPE_IQ3_XXS, tile_iq3_xxs);
    GK_INT_TILE(GK_TYPE_IQ3_S, tile_iq3_s);
    GK_INT_TILE(GK_TYPE_IQ1_S, tile_iq1_s);
    GK_INT_TILE(GK_TYPE_IQ1_M, tile_iq1_m);
    GK_INT_TILE(GK_TYPE_Q8_0, tile_q8_0);
    GK_INT_TILE(GK_TYPE_Q8_1, tile_q8_1);
    GK_INT_TILE(GK_TYPE_Q4_0, tile_q4_0);
    GK_INT_TILE(GK_TYPE_Q4_1, tile_q4_1);
    GK_INT_TILE(GK_TYPE_Q5_0, tile_q5_0);
    GK_INT_TILE(GK_TYPE_Q5_1, tile_q5_1);
    GK_INT_TILE(GK_TYPE_IQ4_NL, tile_iq4_nl);
    GK_INT_TILE(GK_TYPE_MXFP4, tile_mxfp4);
    GK_INT_TILE(GK_TYPE_NVFP4, tile_nvfp4);
    GK_INT_TILE(GK_TYPE_Q1_0, tile_q1_0);
    GK_INT_TILE(GK_TYPE_Q2_0, tile_q2_0);
#undef GK_INT_TILE
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
