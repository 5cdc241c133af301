// act_convert.cpp - the activation conversions of the dot products, vectorised: f32 rows
// to f16, bf16, q8_0, q8_1 and q8_K (and f16 / bf16 rows back to f32), each equal byte
// for byte to the codec's function (fp32_to_fp16, fp32_to_bf16,
// quant::quantize_row_q8_0_dot / _q8_1_dot / _q8_K) on every input.
// The scalar build calls those functions; the vector levels perform their operations:
//
// q8_0 / q8_1, per block of 32 (quantize_row_q8_0_dot / _q8_1_dot: ggml's x86 CPU rule):
//   amax = max |x|, taken as the largest bit pattern of |x| (non-negative floats order as
//   their bits); id = 127 / amax (0 where amax is 0); q = (x * id + 1.5 * 2^23) - 1.5 * 2^23,
//   x * id rounded to nearest with ties to even (|x * id| <= 127 (1 + 2^-23), so no clamp);
//   stored d = f16(amax / 127); q8_1 also stores s = f16(float(sum of q) * d), the sum taken
//   exactly in f32 from the registers; d and s go to f16 by the hardware conversion (never
//   NaN here, see f16 below). A block holding a NaN or an infinity, or whose 127 / amax
//   overflows (amax below 127 / FLT_MAX), and an all-zero block go through the codec.
// q8_K, per block of 256: vmax = the first element of largest |x|; iscale = -127 / vmax,
//   d = 1 / iscale (both 0 for an all-zero block); q = kq::round_clamp(iscale * x, -128, 127):
//   v > -128 ? v : -128 (a NaN gives -128), then v < 127 ? v : 127, then
//   (v + 1.5 * 2^23) - 1.5 * 2^23 (ties to even); bsums[g] = sum of q[16g .. 16g + 15].
//   A block holding a NaN or an infinity (where max |x| and the first maximum would need
//   the scalar comparisons' NaN rules) goes through the codec's function.
// f16: the hardware conversion with round to nearest even (F16C, AArch64 FCVTN), equal to
//   fp32_to_fp16 on every non-NaN input (subnormal results rounded, never flushed; overflow
//   to Inf); a piece of 16 holding a NaN goes through fp32_to_fp16 (the instruction keeps
//   payload bits where the codec writes 0x7E00).
// bf16: fp32_to_bf16's integer rounding, lane by lane: NaN -> upper half | 0x40, else
//   (u + 0x7FFF + bit 16 of u) >> 16.
// Rows are converted in pieces of 16 elements; a tail shorter than that (f16, bf16 only)
// goes through the codec's function.
// And the other way, f16 and bf16 rows widened to f32 (exact; the hardware's f16 NaN keeps
// its payload and sets the quiet bit, as fp16_to_fp32 does).
#include "act_convert.h"

#include "simd.h"
#include "simd_neon.h"
#include "simd_x86.h"

#include <bit>
#include <limits>
#include <type_traits>

namespace gk::cpu::detail {

#if defined(GK_SIMD_SCALAR)

/// y[i] = F(x[i]) for i < n: the codec's conversion of each element.
template <auto F, class In, class Out>
void each(const In * x, Out * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = F(x[i]);
    }
}

void convert_row_f16(const float * x, fp16_t * y, int64_t n) { each<fp32_to_fp16>(x, y, n); }
void convert_row_bf16(const float * x, bf16_t * y, int64_t n) { each<fp32_to_bf16>(x, y, n); }
void widen_row_f16(const fp16_t * x, float * y, int64_t n) { each<fp16_to_fp32>(x, y, n); }
void widen_row_bf16(const bf16_t * x, float * y, int64_t n) { each<bf16_to_fp32>(x, y, n); }
void convert_row_q8_0(const float * x, quant::block_q8_0 * y, int64_t n) { quant::quantize_row_q8_0_dot(x, y, n); }
void convert_row_q8_1(const float * x, quant::block_q8_1 * y, int64_t n) { quant::quantize_row_q8_1_dot(x, y, n); }
void convert_row_q8_K(const float * x, quant::block_q8_K * y, int64_t n) { quant::quantize_row_q8_K(x, y, n); }

#else

namespace {

using simd::vf;
using simd::vf_lanes;

constexpr int      piece    = 16;                // elements converted and stored together
constexpr int      regs     = piece / vf_lanes;  // vector registers per piece
constexpr uint32_t abs_mask = 0x7FFFFFFFu;
constexpr uint32_t inf_bits = 0x7F800000u;       // |x| bits above: NaN; equal: Inf

// ---- per-ISA pieces -------------------------------------------------------------------
//
// sub(a, b)           a - b
// max_or_second(a, b) a > b ? a : b, lane by lane (a NaN in either gives b)
// min_or_second(a, b) a < b ? a : b
// max_abs_bits(x, n)  the largest bit pattern of |x[i]|, i < n (n a multiple of 16)
// first_abs_bits(x, bits)  the first i with the bits of |x[i]| equal to bits (present)
// has_nan(x)          whether x[0..16) holds a NaN
// store_i8(q, r)      q[0..16) = the integers r[0..regs) hold (in [-128, 127])
// store_f16(y, x)     y[0..16) = f16 of x[0..16), round to nearest even, no NaN in x
// to_f16(v)           the same for one float (not NaN)
// store_bf16(y, x)    y[0..16) = fp32_to_bf16 of x[0..16)
// group_sums(q, s)    s[g] = sum of q[16g .. 16g + 15], g < 16

#if defined(GK_SIMD_AVX512)

inline vf sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
inline vf max_or_second(vf a, vf b) { return _mm512_max_ps(a, b); }
inline vf min_or_second(vf a, vf b) { return _mm512_min_ps(a, b); }

inline __m512i abs_bits(const float * x) {
    return _mm512_and_si512(_mm512_castps_si512(_mm512_loadu_ps(x)), _mm512_set1_epi32(abs_mask));
}
uint32_t max_abs_bits(const float * x, int n) {
    __m512i m = abs_bits(x);
    for (int i = 16; i < n; i += 16) {
        m = _mm512_max_epu32(m, abs_bits(x + i));
    }
    return _mm512_reduce_max_epu32(m);
}
int first_abs_bits(const float * x, uint32_t bits) {
    for (int i = 0;; i += 16) {
        const __mmask16 k = _mm512_cmpeq_epi32_mask(abs_bits(x + i), _mm512_set1_epi32(static_cast<int>(bits)));
        if (k != 0) {
            return i + std::countr_zero(static_cast<unsigned>(k));
        }
    }
}
inline bool has_nan(const float * x) {
    const __m512 v = _mm512_loadu_ps(x);
    return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0;
}
inline void store_i8(int8_t * q, const vf * r) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(q), _mm512_cvtsepi32_epi8(_mm512_cvttps_epi32(r[0])));
}
inline void store_f16(fp16_t * y, const float * x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(y),
                        _mm512_cvtps_ph(_mm512_loadu_ps(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline fp16_t to_f16(float v) { return _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT); }
inline void store_bf16(bf16_t * y, const float * x) {
    const __m512i  u    = _mm512_castps_si512(_mm512_loadu_ps(x));
    const __m512i  hi   = _mm512_srli_epi32(u, 16);
    const __m512i  odd  = _mm512_and_si512(hi, _mm512_set1_epi32(1));
    const __m512i  r    = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(abs_mask)),
                                                  _mm512_set1_epi32(inf_bits));
    const __m512i  out  = _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(y), _mm512_cvtepi32_epi16(out));
}

#elif defined(GK_SIMD_AVX2)

inline vf sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
inline vf max_or_second(vf a, vf b) { return _mm256_max_ps(a, b); }
inline vf min_or_second(vf a, vf b) { return _mm256_min_ps(a, b); }

inline __m256i abs_bits(const float * x) {
    return _mm256_and_si256(_mm256_castps_si256(_mm256_loadu_ps(x)), _mm256_set1_epi32(abs_mask));
}
uint32_t max_abs_bits(const float * x, int n) {
    __m256i m = abs_bits(x);
    for (int i = 8; i < n; i += 8) {
        m = _mm256_max_epu32(m, abs_bits(x + i));
    }
    __m128i r = _mm_max_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    r = _mm_max_epu32(r, _mm_unpackhi_epi64(r, r));
    r = _mm_max_epu32(r, _mm_shuffle_epi32(r, 1));
    return static_cast<uint32_t>(_mm_cvtsi128_si32(r));
}
int first_abs_bits(const float * x, uint32_t bits) {
    for (int i = 0;; i += 8) {
        const __m256i eq = _mm256_cmpeq_epi32(abs_bits(x + i), _mm256_set1_epi32(static_cast<int>(bits)));
        const int     k  = _mm256_movemask_ps(_mm256_castsi256_ps(eq));
        if (k != 0) {
            return i + std::countr_zero(static_cast<unsigned>(k));
        }
    }
}
/// Unordered compare of the two halves: true in a lane where either holds a NaN.
inline bool has_nan(const float * x) {
    const __m256 a = _mm256_loadu_ps(x);
    const __m256 b = _mm256_loadu_ps(x + 8);
    return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)) != 0;
}
/// Two registers of 8 int32 -> 16 int16 in element order (the packs interleave lanes).
inline __m256i pack_i32_pair(__m256i a, __m256i b) {
    return _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
}
inline void store_i8(int8_t * q, const vf * r) {
    const __m256i w = pack_i32_pair(_mm256_cvttps_epi32(r[0]), _mm256_cvttps_epi32(r[1]));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(q),
                     _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
}
inline void store_f16(fp16_t * y, const float * x) {
    for (int k = 0; k < 2; ++k) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y + 8 * k),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + 8 * k), _MM_FROUND_TO_NEAREST_INT));
    }
}
inline fp16_t to_f16(float v) { return _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT); }
/// fp32_to_bf16 of 8 lanes, the result in the low 16 bits of each.
inline __m256i bf16_lanes(const float * x) {
    const __m256i u   = _mm256_castps_si256(_mm256_loadu_ps(x));
    const __m256i hi  = _mm256_srli_epi32(u, 16);
    const __m256i odd = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    const __m256i r   = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7FFF))), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(abs_mask)),
                                           _mm256_set1_epi32(inf_bits));
    return _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
}
inline void store_bf16(bf16_t * y, const float * x) {
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi32(bf16_lanes(x), bf16_lanes(x + 8)), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(y), w);
}

#elif defined(GK_SIMD_NEON)

inline vf sub(vf a, vf b) { return vsubq_f32(a, b); }
inline vf max_or_second(vf a, vf b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
inline vf min_or_second(vf a, vf b) { return vbslq_f32(vcltq_f32(a, b), a, b); }

inline uint32x4_t abs_bits(const float * x) {
    return vandq_u32(vreinterpretq_u32_f32(vld1q_f32(x)), vdupq_n_u32(abs_mask));
}
uint32_t max_abs_bits(const float * x, int n) {
    uint32x4_t m = abs_bits(x);
    for (int i = 4; i < n; i += 4) {
        m = vmaxq_u32(m, abs_bits(x + i));
    }
    return vmaxvq_u32(m);
}
int first_abs_bits(const float * x, uint32_t bits) {
    for (int i = 0;; i += 4) {
        if (vmaxvq_u32(vceqq_u32(abs_bits(x + i), vdupq_n_u32(bits))) != 0) {
            while ((std::bit_cast<uint32_t>(x[i]) & abs_mask) != bits) {
                ++i;
            }
            return i;
        }
    }
}
inline bool has_nan(const float * x) {
    uint32x4_t ordered = vdupq_n_u32(~0u);
    for (int k = 0; k < 4; ++k) {
        const float32x4_t v = vld1q_f32(x + 4 * k);
        ordered             = vandq_u32(ordered, vceqq_f32(v, v));
    }
    return vminvq_u32(ordered) == 0;
}
inline void store_i8(int8_t * q, const vf * r) {
    int16x8_t w[2];
    for (int h = 0; h < 2; ++h) {
        w[h] = vcombine_s16(vqmovn_s32(vcvtq_s32_f32(r[2 * h])), vqmovn_s32(vcvtq_s32_f32(r[2 * h + 1])));
    }
    vst1q_s8(q, vcombine_s8(vqmovn_s16(w[0]), vqmovn_s16(w[1])));
}
inline void store_f16(fp16_t * y, const float * x) {
    for (int k = 0; k < 4; ++k) {
        vst1_u16(y + 4 * k, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + 4 * k))));
    }
}
inline fp16_t to_f16(float v) { return vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(v))), 0); }
inline void store_bf16(bf16_t * y, const float * x) {
    for (int k = 0; k < 4; ++k) {
        const uint32x4_t u   = vreinterpretq_u32_f32(vld1q_f32(x + 4 * k));
        const uint32x4_t hi  = vshrq_n_u32(u, 16);
        const uint32x4_t r   = vshrq_n_u32(vaddq_u32(u, vaddq_u32(vandq_u32(hi, vdupq_n_u32(1)), vdupq_n_u32(0x7FFF))), 16);
        const uint32x4_t nan = vcgtq_u32(vandq_u32(u, vdupq_n_u32(abs_mask)), vdupq_n_u32(inf_bits));
        vst1_u16(y + 4 * k, vmovn_u32(vbslq_u32(nan, vorrq_u32(hi, vdupq_n_u32(0x40)), r)));
    }
}
inline void group_sums(const int8_t * q, int16_t * s) {
    for (int g = 0; g < quant::QK_K / 16; ++g) {
        s[g] = vaddlvq_s8(vld1q_s8(q + 16 * g));
    }
}

#endif

#if defined(GK_SIMD_X86)

/// Two groups per register (read as the 16-byte halves store_i8 wrote, which the stores
/// forward): the 4-byte sums, folded by two rounds of hadd into [g0 g2 g4 g6 | g1 g3 g5 g7]
/// (and g8.. likewise), then interleaved.
inline void group_sums(const int8_t * q, int16_t * s) {
    __m256i part[8];
    for (int k = 0; k < 8; ++k) {
        const __m256i b = _mm256_loadu2_m128i(reinterpret_cast<const __m128i *>(q + 32 * k + 16),
                                              reinterpret_cast<const __m128i *>(q + 32 * k));
        part[k]         = simd::x86::dot_u8s8(_mm256_set1_epi8(1), b);
    }
    const __m256i lo = _mm256_hadd_epi32(_mm256_hadd_epi32(part[0], part[1]), _mm256_hadd_epi32(part[2], part[3]));
    const __m256i hi = _mm256_hadd_epi32(_mm256_hadd_epi32(part[4], part[5]), _mm256_hadd_epi32(part[6], part[7]));
    const __m256i w  = _mm256_packs_epi32(lo, hi);  // [g0 g2 .. g14 | g1 g3 .. g15]
    const __m128i even = _mm256_castsi256_si128(w);
    const __m128i odd  = _mm256_extracti128_si256(w, 1);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(s), _mm_unpacklo_epi16(even, odd));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(s + 8), _mm_unpackhi_epi16(even, odd));
}

#endif

// ---- the shared loops ------------------------------------------------------------------

/// d and the sum of the quants of a q8_0 / q8_1 block.
struct q8_result {
    float d;
    float sum;  // exact: integers below 2^12 summed in f32
};

/// quantize_row_q8_0_dot's block of 32 with max |x| = amax and id = 127 / amax (both finite,
/// amax nonzero): writes qs; the sum of the quants only when WithSum (q8_1), taken from the
/// registers.
template <bool WithSum> q8_result q8_block(const float * x, float amax, float id, int8_t * qs) {
    const vf vid   = simd::broadcast(id);
    const vf magic = simd::broadcast(12582912.0f);  // 1.5 * 2^23: ties to even, as legacy.cpp
    vf       sum   = simd::zero();
    for (int i = 0; i < quant::QK8_0; i += piece) {
        vf r[regs];
        for (int k = 0; k < regs; ++k) {
            r[k] = sub(simd::add(simd::mul(simd::load(x + i + k * vf_lanes), vid), magic), magic);
            if constexpr (WithSum) {
                sum = simd::add(sum, r[k]);
            }
        }
        store_i8(qs + i, r);
    }
    return {amax / 127.0f, WithSum ? simd::reduce_add(sum) : 0.0f};
}

/// q8_0 and q8_1: all-zero blocks, blocks with a NaN or an infinity and blocks whose
/// 127 / max |x| overflows go to the codec's function `ref`.
template <class Block>
void convert_q8_legacy(const float * x, Block * y, int64_t n, void (*ref)(const float *, Block *, int64_t)) {
    for (int64_t b = 0; b < n / quant::QK8_0; ++b, x += quant::QK8_0) {
        const uint32_t m  = max_abs_bits(x, quant::QK8_0);
        const float    id = 127.0f / std::bit_cast<float>(m);  // NaN, +0 or +inf where ref decides
        if (m >= inf_bits || !(id <= std::numeric_limits<float>::max())) {
            ref(x, y + b, quant::QK8_0);
            continue;
        }
        constexpr bool  q8_1 = std::is_same_v<Block, quant::block_q8_1>;
        const q8_result r    = q8_block<q8_1>(x, std::bit_cast<float>(m), id, y[b].qs);
        y[b].d               = to_f16(r.d);
        if constexpr (q8_1) {
            y[b].s = to_f16(r.sum * r.d);
        }
    }
}

/// f16 / bf16 in pieces of 16; `Vector` may refuse pieces holding a NaN (`NanSafe` false),
/// which then go through `Ref`, as does the tail.
template <void (*Vector)(uint16_t *, const float *), uint16_t (*Ref)(float), bool NanSafe>
void convert_halves(const float * x, uint16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + piece <= n; i += piece) {
        if (NanSafe || !has_nan(x + i)) {
            Vector(y + i, x + i);
        } else {
            for (int k = 0; k < piece; ++k) {
                y[i + k] = Ref(x[i + k]);
            }
        }
    }
    for (; i < n; ++i) {
        y[i] = Ref(x[i]);
    }
}

} // namespace

void convert_row_f16(const float * x, fp16_t * y, int64_t n) {
    convert_halves<store_f16, fp32_to_fp16, false>(x, y, n);
}

void convert_row_bf16(const float * x, bf16_t * y, int64_t n) {
    convert_halves<store_bf16, fp32_to_bf16, true>(x, y, n);
}

void convert_row_q8_0(const float * x, quant::block_q8_0 * y, int64_t n) {
    convert_q8_legacy(x, y, n, quant::quantize_row_q8_0_dot);
}

void convert_row_q8_1(const float * x, quant::block_q8_1 * y, int64_t n) {
    convert_q8_legacy(x, y, n, quant::quantize_row_q8_1_dot);
}

void convert_row_q8_K(const float * x, quant::block_q8_K * y, int64_t n) {
    constexpr int QK_K = quant::QK_K;
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        const uint32_t m = max_abs_bits(x, QK_K);
        if (m >= inf_bits) {
            quant::quantize_row_q8_K(x, y + b, QK_K);
            continue;
        }
        quant::block_q8_K & o      = y[b];
        const float         amax   = std::bit_cast<float>(m);
        const float         vmax   = amax != 0 ? x[first_abs_bits(x, m)] : 0.0f;
        const float         iscale = amax != 0 ? -127.0f / vmax : 0.0f;
        o.d                        = amax != 0 ? 1.0f / iscale : 0.0f;
        const vf s     = simd::broadcast(iscale);
        const vf lo    = simd::broadcast(-128.0f);
        const vf hi    = simd::broadcast(127.0f);
        const vf magic = simd::broadcast(12582912.0f);  // 1.5 * 2^23, as kq::round_clamp
        for (int i = 0; i < QK_K; i += piece) {
            vf r[regs];
            for (int k = 0; k < regs; ++k) {
                const vf v = min_or_second(max_or_second(simd::mul(s, simd::load(x + i + k * vf_lanes)), lo), hi);
                r[k]       = sub(simd::add(v, magic), magic);
            }
            store_i8(o.qs + i, r);
        }
        group_sums(o.qs, o.bsums);
    }
}

void widen_row_f16(const fp16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + vf_lanes <= n; i += vf_lanes) {
        simd::store(y + i, simd::load_f16(x + i));
    }
    for (; i < n; ++i) {
        y[i] = simd::half_to_float(x[i]);
    }
}

void widen_row_bf16(const bf16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + vf_lanes <= n; i += vf_lanes) {
        simd::store(y + i, simd::load_bf16(x + i));
    }
    for (; i < n; ++i) {
        y[i] = bf16_to_fp32(x[i]);
    }
}

#endif

} // namespace gk::cpu::detail
