// iq_quants.cpp - decoders of the lattice i-quants and their rows of the codec table.
// Formats and value tables: iq_quants.h / iq_tables.cpp; encoders: iq_encode.cpp.
//
// Each decoder copies a block into an aligned local before reading it (rows may sit at
// any address) and evaluates ggml's reference expressions in the same order, so every
// output value matches dequantize_row_iq* bit for bit.
#include "iq_quants.h"

#include "codec.h"

#include <cstring>

namespace gk::quant {
namespace {

template <class Block>
Block load_block(const void * row, int64_t i) {
    Block b;
    std::memcpy(&b, static_cast<const uint8_t *>(row) + i * static_cast<int64_t>(sizeof(Block)), sizeof b);
    return b;
}

uint32_t load_u32(const uint8_t * p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// Byte j of a packed grid entry.
inline uint8_t coord(uint64_t point, int j) { return static_cast<uint8_t>(point >> (8 * j)); }

/// y[j] = db * g_j * (bit j of signs ? -1 : 1) for the n coordinates of `point`, sign bits
/// taken from signs >> shift.
inline void put_signed(float db, uint64_t point, uint8_t signs, int shift, int n, float * y) {
    for (int j = 0; j < n; ++j) {
        y[j] = db * static_cast<float>(coord(point, j)) * ((signs & kmask_iq2xs[j + shift]) ? -1.f : 1.f);
    }
}

/// y[j] = dl * (g_j + delta) for the 8 int8 coordinates of an iq1s_grid entry.
inline void put_shifted(float dl, float delta, uint64_t point, float * y) {
    for (int j = 0; j < 8; ++j) {
        y[j] = dl * (static_cast<float>(static_cast<int8_t>(coord(point, j))) + delta);
    }
}

} // namespace

void dequantize_row_iq2_xxs(const void * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const auto    b  = load_block<block_iq2_xxs>(x, i);
        const auto *  qs = reinterpret_cast<const uint8_t *>(b.qs);
        const float   d  = fp16_to_fp32(b.d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint32_t aux = load_u32(qs + 8 * ib + 4);
            const float    db  = iq2_sub_scale(d, static_cast<int>(aux >> 28));
            for (int l = 0; l < 4; ++l) {
                put_signed(db, iq2xxs_grid[qs[8 * ib + l]], ksigns_iq2xs[(aux >> (7 * l)) & 127], 0, 8, y);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_xs(const void * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const auto  b = load_block<block_iq2_xs>(x, i);
        const float d = fp16_to_fp32(b.d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float db[2] = {iq2_sub_scale(d, b.scales[ib] & 0xf), iq2_sub_scale(d, b.scales[ib] >> 4)};
            for (int l = 0; l < 4; ++l) {
                const uint16_t q = b.qs[4 * ib + l];
                put_signed(db[l / 2], iq2xs_grid[q & 511], ksigns_iq2xs[q >> 9], 0, 8, y);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_s(const void * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const auto      b     = load_block<block_iq2_s>(x, i);
        const float     d     = fp16_to_fp32(b.d);
        const uint8_t * signs = b.qs + QK_K / 8;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float db[2] = {iq2_sub_scale(d, b.scales[ib] & 0xf), iq2_sub_scale(d, b.scales[ib] >> 4)};
            for (int l = 0; l < 4; ++l) {
                const int g     = 4 * ib + l;
                const int index = b.qs[g] | (((b.qh[ib] >> (2 * l)) & 3) << 8);
                put_signed(db[l / 2], iq2s_grid[index], signs[g], 0, 8, y);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq3_xxs(const void * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const auto  b = load_block<block_iq3_xxs>(x, i);
        const float d = fp16_to_fp32(b.d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint32_t  aux = load_u32(b.qs + QK_K / 4 + 4 * ib);
            const float     db  = iq3xxs_sub_scale(d, static_cast<int>(aux >> 28));
            const uint8_t * qs  = b.qs + 8 * ib;
            for (int l = 0; l < 4; ++l) {
                const uint8_t signs = ksigns_iq2xs[(aux >> (7 * l)) & 127];
                put_signed(db, iq3xxs_grid[qs[2 * l + 0]], signs, 0, 4, y);
                put_signed(db, iq3xxs_grid[qs[2 * l + 1]], signs, 4, 4, y + 4);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq3_s(const void * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const auto  b = load_block<block_iq3_s>(x, i);
        const float d = fp16_to_fp32(b.d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const int   code = (b.scales[ib / 2] >> (4 * (ib % 2))) & 0xf;
            const float db   = iq3s_sub_scale(d, code);
            for (int l = 0; l < 4; ++l) {
                const int     q0    = 8 * ib + 2 * l;  // group of 4 holding values 0..3
                const int     i0    = b.qs[q0] | (((b.qh[ib] >> (2 * l)) & 1) << 8);
                const int     i1    = b.qs[q0 + 1] | (((b.qh[ib] >> (2 * l + 1)) & 1) << 8);
                const uint8_t signs = b.signs[4 * ib + l];
                put_signed(db, iq3s_grid[i0], signs, 0, 4, y);
                put_signed(db, iq3s_grid[i1], signs, 4, 4, y + 4);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq1_s(const void * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const auto  b = load_block<block_iq1_s>(x, i);
        const float d = fp16_to_fp32(b.d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const unsigned h     = b.qh[ib];
            const float    dl    = iq1_sub_scale(d, static_cast<int>((h >> 12) & 7));
            const float    delta = (h & 0x8000) ? -IQ1S_DELTA : IQ1S_DELTA;
            for (int l = 0; l < 4; ++l) {
                const int index = b.qs[4 * ib + l] | (((h >> (3 * l)) & 7) << 8);
                put_shifted(dl, delta, iq1s_grid[index], y);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq1_m(const void * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const auto b = load_block<block_iq1_m>(x, i);
        uint16_t   sc[4];
        std::memcpy(sc, b.scales, sizeof sc);
        const auto  dbits = static_cast<fp16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) |
                                                (sc[3] & 0xf000));
        const float d     = fp16_to_fp32(dbits);
        for (int g = 0; g < QK_K / 8; ++g) {
            const int   sub   = g / 2;  // sub-block of 16 values
            const int   code  = (sc[sub / 4] >> (3 * (sub % 4))) & 7;
            const float dl    = iq1_sub_scale(d, code);
            const int   h     = b.qh[g / 2] >> (4 * (g % 2));
            const float delta = (h & 0x08) ? -IQ1M_DELTA : IQ1M_DELTA;
            const int   index = b.qs[g] | ((h & 7) << 8);
            put_shifted(dl, delta, iq1s_grid[index], y);
            y += 8;
        }
    }
}

void register_iq_quants(codec_table & t) {
    struct entry {
        int           type;
        to_float_fn   to_float;
        from_float_fn from_float;
    };
    const entry entries[] = {
        {GK_TYPE_IQ2_XXS, dequantize_row_iq2_xxs, quantize_row_iq2_xxs},
        {GK_TYPE_IQ2_XS, dequantize_row_iq2_xs, quantize_row_iq2_xs},
        {GK_TYPE_IQ2_S, dequantize_row_iq2_s, quantize_row_iq2_s},
        {GK_TYPE_IQ3_XXS, dequantize_row_iq3_xxs, quantize_row_iq3_xxs},
        {GK_TYPE_IQ3_S, dequantize_row_iq3_s, quantize_row_iq3_s},
        {GK_TYPE_IQ1_S, dequantize_row_iq1_s, quantize_row_iq1_s},
        {GK_TYPE_IQ1_M, dequantize_row_iq1_m, quantize_row_iq1_m},
    };
    for (const entry & e : entries) {
        type_traits & r  = t.rows[e.type];
        r.to_float       = e.to_float;
        r.from_float     = e.from_float;
        r.takes_imatrix  = true;
    }
}

} // namespace gk::quant
