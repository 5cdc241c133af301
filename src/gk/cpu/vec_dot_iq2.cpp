// vec_dot_iq2.cpp - integer dots of iq2_xxs, iq2_xs and iq2_s against q8_K activations,
// each a vector kernel and its scalar twin: the formats as vec_dot_iq.h reads them (the
// arithmetic and its order are written out there).
#include "vec_dot_iq.h"

namespace gk::cpu::detail {
namespace iq {
namespace {

using quant::block_iq2_s;
using quant::block_iq2_xs;
using quant::block_iq2_xxs;

// iq2_xxs: the 8 bytes at qs + 4k are four grid indices, then a u32 with four 7-bit sign
// codes and the scale code in bits 28..31.
template <> struct format<block_iq2_xxs> : format_defaults<block_iq2_xxs> {
    static constexpr const uint64_t * table        = quant::iq2xxs_grid;
    static constexpr float            factor       = 0.125f;
    static constexpr int              group_signs  = 7;
    static constexpr int              scale_groups = 8;
    // gk-bench decode on an AVX2 Zen 3, side by side: 0.81-0.88 -> 0.90-0.93 of ggml with
    // the table; iq2_xs (1.01 -> 0.95) and iq3_xxs (0.93 -> 0.91) lost with it and keep the
    // vector form: their index extraction already loads the scalar ports. The AVX-512 set
    // (Zen 4): iq2_xxs 1.02 -> 1.08 with the table, iq2_xs 0.97 -> 0.95; its tile, which
    // unpacks the rows once per 128 columns, lost 3 % at N = 512 (1.31 -> 1.27 of ggml).
    static constexpr bool sign_table = true;
    static uint32_t index(const block_iq2_xxs & x, int r) {
        return reinterpret_cast<const uint8_t *>(x.qs)[8 * (r / 4) + r % 4];
    }
    static uint32_t sign_word(const block_iq2_xxs & x, int k) { return load<uint32_t>(x.qs + 4 * k + 2); }
    static constexpr int sign_at(int l) { return 7 * l; }
    static half_codes halves(const block_iq2_xxs & x) {
        return same_halves([&](int k) { return load<uint32_t>(x.qs + 4 * k + 2) >> 28; });
    }
#if defined(GK_SIMD_X86)
    // gk-bench decode (Zen 4): AVX-512 set 0.96 -> 1.02 of ggml, AVX2 set 0.95 -> 0.96
    static __m128i codes16(const block_iq2_xxs & x) {  // byte 7 of qword k
        return top_nibbles8<8, 7>(reinterpret_cast<const uint8_t *>(x.qs));
    }
#endif
};

// iq2_xs: qs[g] = grid index (bits 0..8) and 7-bit sign code (bits 9..15) of group g.
template <> struct format<block_iq2_xs> : format_defaults<block_iq2_xs> {
    static constexpr const uint64_t * table       = quant::iq2xs_grid;
    static constexpr float            factor      = 0.125f;
    static constexpr int              group_signs = 7;
    static uint32_t index(const block_iq2_xs & x, int r) { return x.qs[r] & 511; }
    static uint64_t sign_word(const block_iq2_xs & x, int k) { return load<uint64_t>(x.qs + 4 * k); }
    static constexpr int sign_at(int l) { return 16 * l + 9; }
    static half_codes halves(const block_iq2_xs & x) { return nibble_halves(x.scales); }
};

// iq2_s: 10-bit grid indices (the high 2 bits of group g in bits 2 (g % 4) of qh[g / 4]),
// a plain sign byte per group from qs + 32.
template <> struct format<block_iq2_s> : format_defaults<block_iq2_s> {
    static constexpr const uint64_t * table       = quant::iq2s_grid;
    static constexpr float            factor      = 0.125f;
    static constexpr int              group_signs = 8;
    static constexpr uint32_t         high_mask   = 3;
    static uint32_t high(const block_iq2_s & x, int c) { return load<uint16_t>(x.qh + 2 * c); }
    static constexpr int high_shift(int i) { return 2 * i; }
    static uint32_t sign_word(const block_iq2_s & x, int k) { return load<uint32_t>(x.qs + QK_K / 8 + 4 * k); }
    static constexpr int sign_at(int l) { return 8 * l; }
    static half_codes halves(const block_iq2_s & x) { return nibble_halves(x.scales); }
};

} // namespace
} // namespace iq

GK_DEFINE_IQ_DOT(vec_dot_iq2_xxs_q8_K, iq::block_iq2_xxs)
GK_DEFINE_IQ_DOT(vec_dot_iq2_xs_q8_K, iq::block_iq2_xs)
GK_DEFINE_IQ_DOT(vec_dot_iq2_s_q8_K, iq::block_iq2_s)
GK_DEFINE_IQ_TILE(tile_iq2_xxs, iq::block_iq2_xxs)
GK_DEFINE_IQ_TILE(tile_iq2_xs, iq::block_iq2_xs)
GK_DEFINE_IQ_TILE(tile_iq2_s, iq::block_iq2_s)

} // namespace gk::cpu::detail
