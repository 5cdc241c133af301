// vec_dot_iq1.cpp - integer dots of iq1_s and iq1_m against q8_K activations, each a vector
// kernel and its scalar twin: the formats as vec_dot_iq.h reads them (the arithmetic and its
// order are written out there).
#include "vec_dot_iq.h"

namespace gk::cpu::detail {
namespace iq {
namespace {

using quant::block_iq1_m;
using quant::block_iq1_s;

static_assert(quant::IQ1S_DELTA * 8 == 1.0f && quant::IQ1M_DELTA * 8 == 1.0f, "iq1 weights are integers at 8x");

// iq1_s: 11-bit grid indices (the high 3 bits of group l of sub-block k in bits 3l of
// qh[k]), the scale code in bits 12..14 of qh[k] and the sub-block's shift sign in bit 15.
template <> struct format<block_iq1_s> : format_defaults<block_iq1_s> {
    static constexpr int              tile_planes  = 2;  // |w| <= 9, scales <= 15
    static constexpr const uint64_t * table        = quant::iq1s_grid;
    static constexpr float            factor       = 0.125f;
    static constexpr bool             shifted      = true;
    static constexpr int              group_signs  = 1;
    static constexpr int              scale_groups = 8;
    static constexpr uint32_t         high_mask    = 7;
    static uint32_t high(const block_iq1_s & x, int c) { return load<uint32_t>(x.qh + 2 * c); }
    static constexpr int high_shift(int i) { return 16 * (i / 4) + 3 * (i % 4); }
    static uint16_t sign_word(const block_iq1_s & x, int k) { return x.qh[k]; }
    static constexpr int sign_at(int) { return 15; }
    static half_codes halves(const block_iq1_s & x) {  // bits 12..14 of u16 k to byte k
        const auto four = [](uint64_t w) {
            w = (w >> 12) & 0x0007000700070007ull;
            w = (w | w >> 8) & 0x0000FFFF0000FFFFull;
            return (w | w >> 16) & 0xFFFFFFFFull;
        };
        const uint64_t v = four(load<uint64_t>(x.qh)) | four(load<uint64_t>(x.qh + 4)) << 32;
        return {v, v};
    }
#if defined(GK_SIMD_X86)
    /// 8 - delta of the halves, word k of each 128-bit lane for sub-block k (shift_by_sums).
    static __m256i eight_minus_delta(const block_iq1_s & x) {
        const __m128i neg = _mm_srai_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x.qh)), 15);  // delta -1
        return _mm256_sub_epi16(_mm256_set1_epi16(7), _mm256_broadcastsi128_si256(_mm_add_epi16(neg, neg)));
    }
#endif
};

// iq1_m: group g owns nibble g % 2 of qh[g / 2]: the high 3 bits of its grid index and its
// shift sign; 3-bit codes per half, 4 to each u16 of scales, whose top nibbles assemble d.
template <> struct format<block_iq1_m> : format_defaults<block_iq1_m> {
    static constexpr int              tile_planes = 2;  // |w| <= 9, scales <= 15
    static constexpr const uint64_t * table       = quant::iq1s_grid;
    static constexpr float            factor      = 0.125f;
    static constexpr bool             shifted     = true;
    static constexpr int              group_signs = 1;
    static constexpr uint32_t         high_mask   = 7;
    static uint32_t high(const block_iq1_m & x, int c) { return load<uint32_t>(x.qh + 4 * c); }
    static constexpr int high_shift(int i) { return 4 * i; }
    static uint32_t sign_word(const block_iq1_m & x, int k) { return load<uint16_t>(x.qh + 2 * k); }
    static constexpr int sign_at(int l) { return 4 * l + 3; }
    static half_codes halves(const block_iq1_m & x) {
        // word w holds halves 4w .. 4w + 3 at bits 0, 3, 6, 9: the even ones (bits 0 and 6)
        // go to bytes 2w and 2w + 1 of lo, the odd ones (shifted down 3) to those of hi
        const auto sc     = load<uint64_t>(x.scales);
        const auto spread = [](uint64_t t) { return (t & 0x0007000700070007ull) | (t & 0x01C001C001C001C0ull) << 2; };
        return {spread(sc), spread(sc >> 3)};
    }
    static fp16_t d(const block_iq1_m & x) {  // top nibble of word w to nibble w
        uint64_t t = (load<uint64_t>(x.scales) >> 12) & 0x000F000F000F000Full;
        t |= t >> 12;
        t |= t >> 24;
        return static_cast<fp16_t>(t & 0xFFFF);
    }
};

} // namespace
} // namespace iq

GK_DEFINE_IQ_DOT(vec_dot_iq1_s_q8_K, iq::block_iq1_s)
GK_DEFINE_IQ_DOT(vec_dot_iq1_m_q8_K, iq::block_iq1_m)
GK_DEFINE_IQ_TILE(tile_iq1_s, iq::block_iq1_s)
GK_DEFINE_IQ_TILE(tile_iq1_m, iq::block_iq1_m)

} // namespace gk::cpu::detail
