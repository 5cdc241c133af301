// vec_dot_blocks.h - the shape every integer dot against q8_0 / q8_1 activations shares
// (vec_dot_legacy.cpp, vec_dot_fp4.cpp, vec_dot_low_bit.cpp): the scalar twin, the vector
// loop and its four-unit step, written once for any weight format a small struct describes.
//
// A row is cut into units of F::unit elements: an activation block of 32, or 16 for a
// format whose weight scales cover 16 elements (nvfp4). Per unit u:
//   isum = the sum of F::value(weight element) * activation quant over the unit, exact in
//          int32;
//   d    = f32(weight scale of u) * f32(activation d of u);
//   chain u % 4 += d * float(isum) with one fused multiply-add; a format with an offset
//   (a field m: q4_1, q5_1) then adds chain u % 4 += f32(m) * f32(activation s), the q8_1
//   block's stored d * sum(qs), as a second fused multiply-add on the same chain.
// The dot is (c0 + c1) + (c2 + c3). The vector kernels take four units per step, lane c
// of one register holding chain c, and finish the last n / unit % 4 units as the twin
// does; the integer sums are exact, so both agree bit for bit.
//
// A format F is a struct (format_base below gives the plain members) with
//   weight, act      the block types (act is quant::block_q8_0 or block_q8_1)
//   block, unit      elements per weight block and per unit
//   value(x, j)      the integer the dot multiplies for element j of weight block x
//   wscale(x, u)     (optional) the f32 weight scale of unit u of row x; without it the
//                    scale is the f16 field d of the unit's weight block
//   unpack(x, k)     (vector builds) the 32 weight bytes that meet activation block k of
//                    row x, in the activation's element order: one __m256i on x86, two
//                    int8x16_t on NEON
//   unsigned_bytes   x86: unpack's bytes are unsigned (dotted without the sign trick)
//   dot(w, a)        (optional, x86) the products of unpacked bytes w with activation
//                    bytes a, summed in fours, where the format knows a cheaper way
//   products(x, y, k) (optional, x86) the same sums straight from the blocks, for a
//                    format whose cheapest form never materialises the weight bytes
//   products16(x, y, k) (optional, x86) the same products summed in pairs, 16 int16
//                    lanes of at most 8191 in magnitude, reduced per unit as int16
//   max_weight       (optional) the largest |integer| value() gives: where the pair sums
//                    fit (<= 31), x86 without VNNI reduces them as products16's are
//   isums4(x, y), wscales4(x) (optional, x86) a step's four unit sums and four weight
//                    scales at once, where a format has a cheaper form for the whole step
//   isums4x2(x0, x1, y) (optional, x86) isums4 of two weight rows at once, where the
//                    format reduces their lanes together (the two-row form, vec_dot2_fn)
// Internal to src/gk/cpu/vec_dot*.cpp.
#pragma once

#include "vec_dot_impl.h"

#include "quant/legacy.h"
#include "simd_neon.h"
#include "simd_x86.h"

#include <cstdint>
#include <cstring>

namespace gk::cpu::detail {

using quant::QK8_0;

/// The plain members of a format: its block types and sizes, and (x86) whether unpack's
/// bytes are unsigned.
template <class W, class A, int Block, int Unit, bool Unsigned = false> struct format_base {
    using weight                         = W;
    using act                            = A;
    static constexpr int  block          = Block;
    static constexpr int  unit           = Unit;
    static constexpr bool unsigned_bytes = Unsigned;
};

// ---- the scalar twin -------------------------------------------------------------------

/// Element j < g of a group of g 4-bit codes: low nibbles hold j < g / 2, high the rest.
inline int group_nibble(const uint8_t * qs, int g, int j) {
    return j < g / 2 ? qs[j] & 0xF : qs[j - g / 2] >> 4;
}

/// Bit j of a little-endian bit field.
inline int bit_of(const uint8_t * bits, int j) { return (bits[j / 8] >> (j % 8)) & 1; }

/// The weight block that unit u of row x lies in.
template <class F> const typename F::weight & weight_of(const typename F::weight * x, int64_t u) {
    return x[u * F::unit / F::block];
}

/// The activation block that unit u of row y lies in.
template <class F> const typename F::act & act_of(const typename F::act * y, int64_t u) {
    return y[u * F::unit / QK8_0];
}

template <class F>
constexpr bool has_wscale = requires(const typename F::weight * x) { F::wscale(x, int64_t{0}); };

template <class F> constexpr bool has_offset = requires(const typename F::weight & b) { b.m; };

template <class F> float weight_scale(const typename F::weight * x, int64_t u) {
    if constexpr (has_wscale<F>) {
        return F::wscale(x, u);
    } else {
        return simd::half_to_float(weight_of<F>(x, u).d);
    }
}

/// Unit u's exact integer sum: its weight integers (every format's fit a signed byte)
/// unpacked first, then dotted with the activation quants. The two loops are deliberate:
/// GCC 12 with VNNI vectorises the fused form, sum of (nibble - 8) * a, as an unsigned-
/// by-signed byte dot and drops the sign of the weight (wrong sums at -O2).
template <class F> int32_t unit_isum(const typename F::weight * x, const typename F::act * y, int64_t u) {
    const int64_t  e  = u * F::unit;  // its first element
    const auto &   xb = x[e / F::block];
    const int      j0 = static_cast<int>(e % F::block);
    const int8_t * a  = y[e / QK8_0].qs + e % QK8_0;
    int8_t         w[F::unit];
    for (int j = 0; j < F::unit; ++j) {
        w[j] = static_cast<int8_t>(F::value(xb, j0 + j));
    }
    int32_t s = 0;
    for (int j = 0; j < F::unit; ++j) {
        s += static_cast<int32_t>(w[j]) * a[j];
    }
    return s;
}

/// Unit u's float step on its chain (the twin's, and the vector kernels' tail).
template <class F>
void unit_step(block_chains & ch, const typename F::weight * x, const typename F::act * y, int64_t u, int32_t isum) {
    const float d = weight_scale<F>(x, u) * simd::half_to_float(act_of<F>(y, u).d);
    ch.add(u, d, static_cast<float>(isum));
    if constexpr (has_offset<F>) {
        ch.add(u, simd::half_to_float(weight_of<F>(x, u).m), simd::half_to_float(act_of<F>(y, u).s));
    }
}

/// The scalar twin: every unit in order.
template <class F> void block_dot_scalar(int64_t n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const typename F::weight *>(vx);
    const auto * y = static_cast<const typename F::act *>(vy);
    block_chains ch;
    for (int64_t u = 0; u < n / F::unit; ++u) {
        unit_step<F>(ch, x, y, u, unit_isum<F>(x, y, u));
    }
    *s = ch.sum();
}

// ---- vector pieces ----------------------------------------------------------------------
// Each level supplies f32x4 / i32x4 (four lanes, lane c = chain c), f32x4_zero,
// f32x4_store, halves4 (four f16 as f32), broadcast_half4 (one f16 in four lanes), floats4, fma4 (fused a * b + c per
// lane), mul4, to_f32x4, and isums4<F> (the integer sums of units 0 .. 3 of rows x, y: the kernel passes the blocks
// where a step starts, so every block index below is a constant).

#if defined(GK_SIMD_X86)

using f32x4 = __m128;
using i32x4 = __m128i;

inline f32x4 f32x4_zero() { return _mm_setzero_ps(); }
inline void  f32x4_store(float * c, f32x4 v) { _mm_storeu_ps(c, v); }
/// Packed in a general register first: one move into the vector unit instead of a
/// word insert per scale (the shuffle port is what these kernels run out of).
inline f32x4 halves4(fp16_t a, fp16_t b, fp16_t c, fp16_t d) {
    const uint64_t h =
        a | static_cast<uint64_t>(b) << 16 | static_cast<uint64_t>(c) << 32 | static_cast<uint64_t>(d) << 48;
    return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<int64_t>(h)));
}
/// One f16 as f32 in all four lanes.
inline f32x4 broadcast_half4(fp16_t a) { return _mm_set1_ps(simd::half_to_float(a)); }
inline f32x4 floats4(float a, float b, float c, float d) { return _mm_setr_ps(a, b, c, d); }
inline f32x4 fma4(f32x4 a, f32x4 b, f32x4 c) { return _mm_fmadd_ps(a, b, c); }
inline f32x4 mul4(f32x4 a, f32x4 b) { return _mm_mul_ps(a, b); }
inline f32x4 to_f32x4(i32x4 v) { return _mm_cvtepi32_ps(v); }

/// 16 bytes of 4-bit codes split into 32 bytes: the low nibbles (elements 0..15) in the
/// low 128-bit lane, the high nibbles (16..31) in the high lane.
inline __m256i split_nibbles(const uint8_t * qs) {
    const __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(qs)));
    return _mm256_and_si256(_mm256_srlv_epi64(q, _mm256_setr_epi64x(0, 0, 4, 4)), _mm256_set1_epi8(0x0F));
}

/// The 32 bits in bytes b .. b + 3 of each 128-bit lane of `bits` (b < 13, both lanes
/// alike; little-endian) as 32 bytes: byte i = 0xFF where bit i is CLEAR, else 0 (the mask
/// the callers combine most cheaply).
inline __m256i bit_clear_bytes(__m256i bits, int b) {
    const auto    c      = [b](int j) { return static_cast<char>(b + j); };
    const __m256i spread = _mm256_setr_epi8(c(0), c(0), c(0), c(0), c(0), c(0), c(0), c(0),  //
                                            c(1), c(1), c(1), c(1), c(1), c(1), c(1), c(1),  //
                                            c(2), c(2), c(2), c(2), c(2), c(2), c(2), c(2),  //
                                            c(3), c(3), c(3), c(3), c(3), c(3), c(3), c(3));
    const __m256i bit    = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    return _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(bits, spread), bit), _mm256_setzero_si256());
}

/// 32 bits from `p` as bit_clear_bytes above spreads them.
inline __m256i bit_clear_bytes(const uint8_t * p) {
    uint32_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return bit_clear_bytes(_mm256_set1_epi32(static_cast<int>(bits)), 0);
}

/// True where a format gives its weights as unsigned codes with a nonzero bias (value =
/// code - F::bias) and the build has VNNI: a block's products are then VPDPBUSD of the codes
/// with the activations, accumulated onto -bias x the activations' sums in fours (exact:
/// the same int32 lanes as the signed products), and that term is one per activation
/// block, shared by the rows of the two-row form.
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
template <class F>
constexpr bool biased_codes = requires(const typename F::weight * x) {
    F::codes(x, int64_t{0});
    requires F::bias != 0;
};
#else
template <class F>
constexpr bool biased_codes = false;
#endif

/// -F::bias times activation quants `a` summed in fours (biased_codes formats).
template <class F>
__m256i bias_products(__m256i a) {
    return _mm256_sub_epi32(_mm256_setzero_si256(), simd::x86::dot_u8s8(_mm256_set1_epi8(F::bias), a));
}

/// The products of the weight bytes meeting activation block k with its quants, summed
/// in fours (8 int32 lanes: lanes 0-3 hold elements 0..15, lanes 4-7 elements 16..31):
/// F::dot(w, a) where the format has a cheaper form, else the generic byte dot. The
/// activation quants are never -128 (the q8_0 / q8_1 encoders' range is -127..127).
template <class F>
[[gnu::always_inline]] inline __m256i act_products(const typename F::weight * x, const typename F::act * y, int64_t k) {
    if constexpr (requires { F::products(x, y, k); }) {
        return F::products(x, y, k);
    }
    if constexpr (biased_codes<F>) {
        const __m256i a = simd::x86::load256(y[k].qs);
        return _mm256_dpbusd_epi32(bias_products<F>(a), F::codes(x, k), a);
    }
    const __m256i w = F::unpack(x, k);
    const __m256i a = simd::x86::load256(y[k].qs);
    if constexpr (requires { F::dot(w, a); }) {
        return F::dot(w, a);
    } else if constexpr (F::unsigned_bytes) {
        return simd::x86::dot_u8s8(w, a);
    } else {
        return simd::x86::dot_s8s8(w, a);
    }
}

/// [sum of a's 16 int16 lanes, of b's, c's, d's], for lanes of at most 8191 in magnitude
/// (the sums of four lanes then fit int16 before they are widened; the adds wrap, so a
/// wider lane would be wrong).
inline __m128i hsum4_i16(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i abcd = _mm256_hadd_epi16(_mm256_hadd_epi16(a, b), _mm256_hadd_epi16(c, d));
    const __m256i s    = _mm256_madd_epi16(abcd, _mm256_set1_epi16(1));  // [a, b, c, d] per 128-bit half
    return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

/// The largest |weight integer| of a format that states it (max_weight), else 255.
template <class F>
constexpr int max_weight_of() {
    if constexpr (requires { F::max_weight; }) {
        return F::max_weight;
    } else {
        return 255;
    }
}

/// True where a step's products are taken as int16 pair sums and reduced by hsum4_i16:
/// a format's own products16, or (without VNNI, where maddubs forms the products anyway)
/// one whose pair sums, at most 2 x max |weight| x 127, stay within 8191.
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
template <class F>
constexpr bool int16_pairs = requires {
    F::products16(nullptr, nullptr, 0);
};
#else
template <class F>
constexpr bool int16_pairs = requires {
    F::products16(nullptr, nullptr, 0);
}
|| 2 * max_weight_of<F>() * 127 <= 8191;
#endif

/// The int16 pair sums of the weight bytes meeting activation block k with its quants
/// (int16_pairs formats): F::products16, else maddubs on the unpacked bytes.
template <class F>
__m256i act_pairs(const typename F::weight * x, const typename F::act * y, int64_t k) {
    if constexpr (requires { F::products16(x, y, k); }) {
        return F::products16(x, y, k);
    } else {
        const __m256i w = F::unpack(x, k);
        const __m256i a = simd::x86::load256(y[k].qs);
        if constexpr (F::unsigned_bytes) {
            return _mm256_maddubs_epi16(w, a);
        } else {
            return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
        }
    }
}

template <class F>
[[gnu::always_inline]] inline i32x4 isums4(const typename F::weight * x, const typename F::act * y) {
    if constexpr (requires { F::isums4(x, y); }) {
        return F::isums4(x, y);
    } else if constexpr (F::unit == QK8_0 && int16_pairs<F>) {
        return hsum4_i16(act_pairs<F>(x, y, 0), act_pairs<F>(x, y, 1), act_pairs<F>(x, y, 2), act_pairs<F>(x, y, 3));
    } else if constexpr (F::unit == QK8_0) {
        return simd::x86::hsum4_i32(act_products<F>(x, y, 0), act_products<F>(x, y, 1), act_products<F>(x, y, 2),
                                    act_products<F>(x, y, 3));
    } else {
        // two units per activation block, in the low and high halves of its products
        static_assert(2 * F::unit == QK8_0);
        const __m256i h = _mm256_hadd_epi32(act_products<F>(x, y, 0), act_products<F>(x, y, 1));
        const __m128i q = _mm_hadd_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        return _mm_shuffle_epi32(q, _MM_SHUFFLE(3, 1, 2, 0));  // units [0, 2, 1, 3] -> in order
    }
}

#elif defined(GK_SIMD_NEON)

using f32x4 = float32x4_t;
using i32x4 = int32x4_t;

inline f32x4 f32x4_zero() { return vdupq_n_f32(0.0f); }
inline void  f32x4_store(float * c, f32x4 v) { vst1q_f32(c, v); }
inline f32x4 halves4(fp16_t a, fp16_t b, fp16_t c, fp16_t d) {
    const uint16_t h[4] = {a, b, c, d};
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
}
inline f32x4 broadcast_half4(fp16_t a) { return vdupq_n_f32(simd::half_to_float(a)); }
inline f32x4 floats4(float a, float b, float c, float d) {
    const float f[4] = {a, b, c, d};
    return vld1q_f32(f);
}
inline f32x4 fma4(f32x4 a, f32x4 b, f32x4 c) { return vfmaq_f32(c, a, b); }
inline f32x4 mul4(f32x4 a, f32x4 b) { return vmulq_f32(a, b); }
inline f32x4 to_f32x4(i32x4 v) { return vcvtq_f32_s32(v); }

/// 16 bytes of 4-bit codes split: val[0] the low nibbles (elements 0..15), val[1] the
/// high nibbles (16..31).
inline uint8x16x2_t split_nibbles(const uint8_t * qs) {
    const uint8x16_t q = simd::neon::load_u8(qs);
    return {{vandq_u8(q, vdupq_n_u8(0x0F)), vshrq_n_u8(q, 4)}};
}

/// 32 bits from `p` (little-endian) as 32 bytes: byte i = 0xFF where bit i is set, else 0.
inline uint8x16x2_t bit_set_bytes(const uint8_t * p) {
    uint32_t bits;
    std::memcpy(&bits, p, sizeof bits);
    const uint8x16_t src    = vreinterpretq_u8_u32(vdupq_n_u32(bits));
    const uint8x16_t bit    = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
    const uint8_t    lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    const uint8x16_t idx    = vld1q_u8(lo);
    return {{vtstq_u8(vqtbl1q_u8(src, idx), bit), vtstq_u8(vqtbl1q_u8(src, vaddq_u8(idx, vdupq_n_u8(2))), bit)}};
}

template <class F> i32x4 isums4(const typename F::weight * x, const typename F::act * y) {
    using namespace simd::neon;
    // the products of units 0 .. 3: whole activation blocks, or their halves
    int32x4_t p[4];
    for (int k = 0; k < 4 * F::unit / QK8_0; ++k) {
        const int8x16x2_t w = F::unpack(x, k);
        const int8_t *    a = y[k].qs;
        if constexpr (F::unit == QK8_0) {
            p[k] = dot_s8(dot_s8(vdupq_n_s32(0), w.val[0], load_s8(a)), w.val[1], load_s8(a + 16));
        } else {
            static_assert(2 * F::unit == QK8_0);
            p[2 * k]     = dot_s8(vdupq_n_s32(0), w.val[0], load_s8(a));
            p[2 * k + 1] = dot_s8(vdupq_n_s32(0), w.val[1], load_s8(a + 16));
        }
    }
    return hsum4_i32(p[0], p[1], p[2], p[3]);
}

#endif

#if defined(GK_SIMD_X86) || defined(GK_SIMD_NEON)

/// The weight scales of units 0 .. 3 of row x.
template <class F> f32x4 weight_scales4(const typename F::weight * x) {
    if constexpr (requires { F::wscales4(x); }) {
        return F::wscales4(x);
    } else if constexpr (!has_wscale<F> && F::block == 4 * F::unit) {
        return broadcast_half4(x[0].d);  // one weight block, one scale (q1_0)
    } else if constexpr (has_wscale<F>) {
        return floats4(F::wscale(x, 0), F::wscale(x, 1), F::wscale(x, 2), F::wscale(x, 3));
    } else {
        return halves4(weight_of<F>(x, 0).d, weight_of<F>(x, 1).d, weight_of<F>(x, 2).d, weight_of<F>(x, 3).d);
    }
}

/// The four units' sums of two weight rows x0, x1 against one activation row y.
struct i32x4x2 {
    i32x4 r0, r1;
};

/// isums4 of rows x0 and x1: F::isums4x2 where the format reduces the two together, else
/// isums4 twice. Either way each row's sums are the exact integers isums4 gives it.
template <class F>
i32x4x2 isums4x2(const typename F::weight * x0, const typename F::weight * x1, const typename F::act * y) {
    if constexpr (requires { F::isums4x2(x0, x1, y); }) {
        return F::isums4x2(x0, x1, y);
#if defined(GK_SIMD_X86)
    } else if constexpr (biased_codes<F> && F::unit == QK8_0) {
        __m256i p0[4], p1[4];
        for (int k = 0; k < 4; ++k) {
            const __m256i a  = simd::x86::load256(y[k].qs);
            const __m256i nb = bias_products<F>(a);
            p0[k]            = _mm256_dpbusd_epi32(nb, F::codes(x0, k), a);
            p1[k]            = _mm256_dpbusd_epi32(nb, F::codes(x1, k), a);
        }
        return {simd::x86::hsum4_i32(p0[0], p0[1], p0[2], p0[3]), simd::x86::hsum4_i32(p1[0], p1[1], p1[2], p1[3])};
#endif
    } else {
        return {isums4<F>(x0, y), isums4<F>(x1, y)};
    }
}

/// The activation scales of units 0 .. 3.
template <class F>
f32x4 act_scales4(const typename F::act * y) {
    return halves4(act_of<F>(y, 0).d, act_of<F>(y, 1).d, act_of<F>(y, 2).d, act_of<F>(y, 3).d);
}

/// Units 0 .. 3 of weight row x, one per chain, given the activation scales ad and the
/// units' sums: the same float operations as four unit_steps.
template <class F>
f32x4 step4(f32x4 acc, const typename F::weight * x, const typename F::act * y, f32x4 ad, i32x4 isums) {
    acc = fma4(mul4(weight_scales4<F>(x), ad), to_f32x4(isums), acc);
    if constexpr (has_offset<F>) {
        const f32x4 m = halves4(weight_of<F>(x, 0).m, weight_of<F>(x, 1).m, weight_of<F>(x, 2).m, weight_of<F>(x, 3).m);
        const f32x4 s = halves4(act_of<F>(y, 0).s, act_of<F>(y, 1).s, act_of<F>(y, 2).s, act_of<F>(y, 3).s);
        acc           = fma4(m, s, acc);
    }
    return acc;
}

/// The vector kernel: four units per step, the rest as the twin.
template <class F> void block_dot_simd(int64_t n, float * s, const void * vx, const void * vy) {
    static_assert(4 * F::unit % F::block == 0, "a step starts on a weight block");
    const auto *  x   = static_cast<const typename F::weight *>(vx);
    const auto *  y   = static_cast<const typename F::act *>(vy);
    const int64_t nu  = n / F::unit;
    f32x4         acc = f32x4_zero();
    int64_t       u   = 0;
    for (; u + 4 <= nu; u += 4) {
        const auto * xs = x + u * F::unit / F::block;
        const auto * ys = y + u * F::unit / QK8_0;
        acc             = step4<F>(acc, xs, ys, act_scales4<F>(ys), isums4<F>(xs, ys));
    }
    block_chains ch;
    f32x4_store(ch.c, acc);
    for (; u < nu; ++u) {
        unit_step<F>(ch, x, y, u, unit_isum<F>(x, y, u));
    }
    *s = ch.sum();
}

/// Two weight rows, vx and vx + bx bytes, against one activation row: each row's chains
/// take exactly block_dot_simd's operations; the rows share the activation scales and,
/// where the format has isums4x2, the reduction of their sums.
template <class F>
void block_dot2_simd(int64_t n, float * s, const void * vx, size_t bx, const void * vy) {
    const auto *  x0   = static_cast<const typename F::weight *>(vx);
    const auto *  x1   = reinterpret_cast<const typename F::weight *>(static_cast<const char *>(vx) + bx);
    const auto *  y    = static_cast<const typename F::act *>(vy);
    const int64_t nu   = n / F::unit;
    f32x4         acc0 = f32x4_zero();
    f32x4         acc1 = f32x4_zero();
    int64_t       u    = 0;
    for (; u + 4 <= nu; u += 4) {
        const int64_t b  = u * F::unit / F::block;
        const auto *  ys = y + u * F::unit / QK8_0;
        const f32x4   ad = act_scales4<F>(ys);
        const i32x4x2 is = isums4x2<F>(x0 + b, x1 + b, ys);
        acc0             = step4<F>(acc0, x0 + b, ys, ad, is.r0);
        acc1             = step4<F>(acc1, x1 + b, ys, ad, is.r1);
    }
    block_chains ch[2];
    f32x4_store(ch[0].c, acc0);
    f32x4_store(ch[1].c, acc1);
    for (; u < nu; ++u) {
        unit_step<F>(ch[0], x0, y, u, unit_isum<F>(x0, y, u));
        unit_step<F>(ch[1], x1, y, u, unit_isum<F>(x1, y, u));
    }
    s[0] = ch[0].sum();
    s[1] = ch[1].sum();
}

template <class F>
constexpr vec_dot_fn block_dot = block_dot_simd<F>;
template <class F>
constexpr vec_dot2_fn block_dot2 = block_dot2_simd<F>;
#else
/// Two rows on a scalar build: the twin twice.
template <class F>
void block_dot2_scalar(int64_t n, float * s, const void * vx, size_t bx, const void * vy) {
    block_dot_scalar<F>(n, s, vx, vy);
    block_dot_scalar<F>(n, s + 1, static_cast<const char *>(vx) + bx, vy);
}

template <class F>
constexpr vec_dot_fn block_dot = block_dot_scalar<F>;
template <class F>
constexpr vec_dot2_fn block_dot2 = block_dot2_scalar<F>;
#endif

/// Defines kernel `name` for format F (vectorised where the build allows), its twin and
/// its two-row form name_x2.
#define GK_DEFINE_BLOCK_DOT(name, F)                                                                                   \
    void name(int64_t n, float * s, const void * x, const void * y) { block_dot<F>(n, s, x, y); }                      \
    void name##_x2(int64_t n, float * s, const void * x, size_t bx, const void * y) { block_dot2<F>(n, s, x, bx, y); } \
    void name##_scalar(int64_t n, float * s, const void * x, const void * y) { block_dot_scalar<F>(n, s, x, y); }

} // namespace gk::cpu::detail
