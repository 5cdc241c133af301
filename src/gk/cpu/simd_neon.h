// simd_neon.h - integer helpers of the AArch64 integer dot kernels.
//
// Exact: 8-bit products are exact in int16 and summed in int32.
#pragma once

#include "simd.h"

#if defined(GK_SIMD_NEON)

namespace gk::simd::neon {

/// acc + the products of 16 signed bytes, summed into 4 int32 lanes (SDOT where the
/// target has it; the lane grouping differs between the two, the lane total does not).
inline int32x4_t dot_s8(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(acc, a, b);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}

/// 16 bytes from an address, as signed.
inline int8x16_t load_s8(const void * p) { return vld1q_s8(static_cast<const int8_t *>(p)); }
inline uint8x16_t load_u8(const void * p) { return vld1q_u8(static_cast<const uint8_t *>(p)); }

/// [sum(a), sum(b), sum(c), sum(d)].
inline int32x4_t hsum4_i32(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
    return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
}

} // namespace gk::simd::neon

#endif
