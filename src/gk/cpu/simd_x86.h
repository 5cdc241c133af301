// simd_x86.h - 256-bit integer helpers of the x86 integer dot kernels (AVX2 and up).
//
// All of them are exact: products of bytes summed in 16- or 32-bit lanes that the
// callers' value ranges keep from saturating (stated at each helper).
#pragma once

#include "simd.h"

#if defined(GK_SIMD_X86)

namespace gk::simd::x86 {

/// 8 int32 lanes, lane k = sum of u[4k + t] * s[4k + t] over t < 4, with u read as
/// unsigned and s as signed bytes. Exact when every pair sum u*s + u'*s' fits int16
/// (the maddubs path saturates there; VPDPBUSD does not).
inline __m256i dot_u8s8(__m256i u, __m256i s) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/// As dot_u8s8 with both operands signed: w any byte, a never -128 (|w| is read as
/// unsigned, so w = -128 is exact; the sign moves onto a).
inline __m256i dot_s8s8(__m256i w, __m256i a) {
    return dot_u8s8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

/// acc plus 8 int32 lanes, lane k = u16[2k] * sc[2k] + u16[2k+1] * sc[2k+1], where u16 are
/// the 16 pair sums of u (unsigned bytes) times s (signed bytes) and sc holds int16 scales.
/// Exact when each pair sum fits int16 (2 * 63 * 128 for 6-bit weights); the int32 adds
/// wrap, so VPDPWSSD (one instruction for the scale and the add) gives the same lanes.
inline __m256i acc_u8s8_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(u, s), sc);
#elif defined(__AVXVNNI__)
    return _mm256_dpwssd_avx_epi32(acc, _mm256_maddubs_epi16(u, s), sc);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), sc));
#endif
}

/// Sum of the 4 int32 lanes (wrapping, as int32 addition in any order).
inline int32_t hsum_i32(__m128i v) {
    v = _mm_add_epi32(v, _mm_unpackhi_epi64(v, v));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 1));
    return _mm_cvtsi128_si32(v);
}

/// Sum of the 8 int32 lanes.
inline int32_t hsum_i32(__m256i v) {
    return hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

/// [hsum(a), hsum(b), hsum(c), hsum(d)].
inline __m128i hsum4_i32(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i abcd = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
}

/// 32 bytes from an unaligned address.
inline __m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

/// v, hidden from the optimiser: a compare against it stays one VPCMPGTB. (GCC 12 turns
/// x > c for some constants c into x >= c + 1, which it spells VPMINSB + VPCMPEQB.)
inline __m256i opaque(__m256i v) {
    __asm__("" : "+v"(v));
    return v;
}

} // namespace gk::simd::x86

#endif
