// vec_dot_tile_impl.h - what the tile kernel files share: the vector level they need and
// the kernels the table in vec_dot_tile.cpp lists. Internal to src/gk/cpu/vec_dot_tile*.cpp.
#pragma once

#include "simd.h"
#include "vec_dot_tile.h"

// The tile kernels use 512-bit registers (one 32-bit lane per weight row) and VPDPBUSD.
#if defined(GK_SIMD_AVX512) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define GK_TILE_AVX512 1
#endif

namespace gk::cpu {

/// This kernel set's tile kernel of `type`, or nullptr (get_tile_kernel's source).
const tile_kernel * tile_table(gk_type type);

} // namespace gk::cpu

namespace gk::cpu::detail {

#if defined(GK_TILE_AVX512)
extern const tile_kernel tile_f32;
extern const tile_kernel tile_f16;
extern const tile_kernel tile_bf16;
extern const tile_kernel tile_q8_0;
extern const tile_kernel tile_q8_1;
extern const tile_kernel tile_q4_0;
extern const tile_kernel tile_q4_1;
extern const tile_kernel tile_q5_0;
extern const tile_kernel tile_q5_1;
extern const tile_kernel tile_iq4_nl;
extern const tile_kernel tile_mxfp4;
extern const tile_kernel tile_nvfp4;
extern const tile_kernel tile_q1_0;
extern const tile_kernel tile_q2_0;
extern const tile_kernel tile_q4_K;
extern const tile_kernel tile_q5_K;
extern const tile_kernel tile_q6_K;
extern const tile_kernel tile_q2_K;
extern const tile_kernel tile_q3_K;
extern const tile_kernel tile_iq4_xs;
extern const tile_kernel tile_tq1_0;
extern const tile_kernel tile_tq2_0;
extern const tile_kernel tile_iq2_xxs;
extern const tile_kernel tile_iq2_xs;
extern const tile_kernel tile_iq2_s;
extern const tile_kernel tile_iq3_xxs;
extern const tile_kernel tile_iq3_s;
extern const tile_kernel tile_iq1_s;
extern const tile_kernel tile_iq1_m;
#endif

} // namespace gk::cpu::detail
