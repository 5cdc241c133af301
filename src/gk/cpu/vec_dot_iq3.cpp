// vec_dot_iq3.cpp - integer dots of iq3_xxs and iq3_s against q8_K activations, each a
// vector kernel and its scalar twin: the formats as vec_dot_iq.h reads them (the arithmetic
// and its order are written out there).
#include "cpu_features.h"
#include "vec_dot_iq.h"

namespace gk::cpu::detail {
namespace iq {
namespace {

using quant::block_iq3_s;
using quant::block_iq3_xxs;

// iq3_xxs: 8 grid indices per sub-block, then (from qs + 64) a u32 per sub-block laid out
// as iq2_xxs's.
template <> struct format<block_iq3_xxs> : format_defaults<block_iq3_xxs> {
    static constexpr const uint32_t * table        = quant::iq3xxs_grid;
    static constexpr float            factor       = 0.25f;
    static constexpr int              group_signs  = 7;
    static constexpr int              scale_groups = 8;
    static const uint8_t *            index_bytes(const block_iq3_xxs & x) { return x.qs; }
    static uint32_t                   index(const block_iq3_xxs & x, int r) { return index_bytes(x)[r]; }
    static uint32_t sign_word(const block_iq3_xxs & x, int k) { return load<uint32_t>(x.qs + QK_K / 4 + 4 * k); }
    static constexpr int sign_at(int l) { return 7 * l; }
    static half_codes halves(const block_iq3_xxs & x) {
        return same_halves([&](int k) { return load<uint32_t>(x.qs + QK_K / 4 + 4 * k) >> 28; });
    }
#if defined(GK_SIMD_X86) && !defined(__AVX512VL__)
    // gk-bench decode (Zen 4): the AVX2 set 0.95 -> 1.02 of ggml with it, the AVX-512 set
    // 1.02 -> 0.95 (its sign masks already load the vector ports; the scalar ones were idle)
    static __m128i codes16(const block_iq3_xxs & x) { return top_nibbles8<4, 3>(x.qs + QK_K / 4); }
#endif
};

// iq3_s: 9-bit grid indices (the high bit of row r in bit r % 8 of qh[r / 8]), plain sign
// bytes, a nibble of scale per sub-block.
template <> struct format<block_iq3_s> : format_defaults<block_iq3_s> {
    static constexpr int              tile_planes  = 2;  // |w| <= 15, scales <= 31
    static constexpr const uint32_t * table        = quant::iq3s_grid;
    static constexpr float            factor       = 1.0f;
    static constexpr int              group_signs  = 8;
    static constexpr int              scale_groups = 8;
    static constexpr uint32_t         high_mask    = 1;
    static uint32_t high(const block_iq3_s & x, int c) { return x.qh[c]; }
    static constexpr int high_shift(int i) { return i; }
    static uint32_t sign_word(const block_iq3_s & x, int k) { return load<uint32_t>(x.signs + 4 * k); }
    static constexpr int sign_at(int l) { return 8 * l; }
    static half_codes halves(const block_iq3_s & x) {  // nibble k to byte k
        uint64_t v = load<uint32_t>(x.scales);
        v          = (v | v << 16) & 0x0000FFFF0000FFFFull;
        v          = (v | v << 8) & 0x00FF00FF00FF00FFull;
        v          = (v | v << 4) & 0x0F0F0F0F0F0F0F0Full;
        return {v, v};
    }
};

} // namespace
} // namespace iq

GK_DEFINE_IQ_DOT(vec_dot_iq3_xxs_q8_K, iq::block_iq3_xxs)
GK_DEFINE_IQ_DOT(vec_dot_iq3_s_q8_K, iq::block_iq3_s)

vec_dot_fn gathered_dot(gk_type type) {
#if defined(GK_SIMD_X86) && defined(__BMI2__)
    if (host_cpu().fast_gather) {
        switch (type) {
        case GK_TYPE_IQ3_XXS: return iq::iq_dot_simd<iq::block_iq3_xxs, true>;
        case GK_TYPE_IQ3_S: return iq::iq_dot_simd<iq::block_iq3_s, true>;
        default: break;
        }
    }
#endif
    (void)type;
    return nullptr;
}

GK_DEFINE_IQ_TILE(tile_iq3_xxs, iq::block_iq3_xxs)
GK_DEFINE_IQ_TILE(tile_iq3_s, iq::block_iq3_s)

#if defined(GK_TILE_AVX512)
using iq3_xxs_gathered = iq::tile_format<iq::block_iq3_xxs, true>;
using iq3_s_gathered   = iq::tile_format<iq::block_iq3_s, true>;
GK_DEFINE_Q8K_TILE(tile_iq3_xxs_gather, iq3_xxs_gathered)
GK_DEFINE_Q8K_TILE(tile_iq3_s_gather, iq3_s_gathered)

const tile_kernel * gathered_tile(gk_type type, bool amx) {
    if (!host_cpu().fast_gather) {
        return nullptr;
    }
    switch (type) {
    case GK_TYPE_IQ3_XXS: return amx ? &tile_iq3_xxs_gather_amx : &tile_iq3_xxs_gather;
    case GK_TYPE_IQ3_S: return amx ? &tile_iq3_s_gather_amx : &tile_iq3_s_gather;
    default: return nullptr;
    }
}
#endif

} // namespace gk::cpu::detail
