// weight_rows.h - random weight rows for the dot tests: any bytes in the quants, with
// the scales made finite so that products never hold NaN payloads.
#pragma once

#include "gk/gk-type.h"
#include "quant/fp16.h"
#include "quant/fp4.h"
#include "quant/iq_quants.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"
#include "quant/low_bit.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

/// A random f16 scale that is finite (so that products never hold NaN payloads).
inline gk::fp16_t finite_half(std::mt19937 & rng) {
    for (;;) {
        const auto h = static_cast<gk::fp16_t>(rng() & 0xFFFF);
        if ((h & 0x7C00) != 0x7C00) {
            return h;
        }
    }
}

/// Finite scales in every block of a row of random bytes (the integer-kernel types).
inline void fix_scales(gk_type type, std::vector<uint8_t> & row, std::mt19937 & rng) {
    const size_t bs = gk_type_size(type);
    for (size_t off = 0; off + bs <= row.size(); off += bs) {
        uint8_t * p = row.data() + off;
        switch (type) {
            case GK_TYPE_Q8_0: reinterpret_cast<gk::quant::block_q8_0 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_Q4_0: reinterpret_cast<gk::quant::block_q4_0 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_Q4_1:
                reinterpret_cast<gk::quant::block_q4_1 *>(p)->d = finite_half(rng);
                reinterpret_cast<gk::quant::block_q4_1 *>(p)->m = finite_half(rng);
                break;
            case GK_TYPE_Q5_0: reinterpret_cast<gk::quant::block_q5_0 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_Q5_1:
                reinterpret_cast<gk::quant::block_q5_1 *>(p)->d = finite_half(rng);
                reinterpret_cast<gk::quant::block_q5_1 *>(p)->m = finite_half(rng);
                break;
            case GK_TYPE_Q8_1: reinterpret_cast<gk::quant::block_q8_1 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ4_NL: reinterpret_cast<gk::quant::block_iq4_nl *>(p)->d = finite_half(rng); break;
            case GK_TYPE_Q1_0: reinterpret_cast<gk::quant::block_q1_0 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_Q2_0: reinterpret_cast<gk::quant::block_q2_0 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_MXFP4: case GK_TYPE_NVFP4: break;  // every E8M0 / UE4M3 scale byte is finite
            case GK_TYPE_Q4_K:
                reinterpret_cast<gk::quant::block_q4_K *>(p)->d    = finite_half(rng);
                reinterpret_cast<gk::quant::block_q4_K *>(p)->dmin = finite_half(rng);
                break;
            case GK_TYPE_Q5_K:
                reinterpret_cast<gk::quant::block_q5_K *>(p)->d    = finite_half(rng);
                reinterpret_cast<gk::quant::block_q5_K *>(p)->dmin = finite_half(rng);
                break;
            case GK_TYPE_Q6_K: reinterpret_cast<gk::quant::block_q6_K *>(p)->d = finite_half(rng); break;
            case GK_TYPE_Q2_K:
                reinterpret_cast<gk::quant::block_q2_K *>(p)->d    = finite_half(rng);
                reinterpret_cast<gk::quant::block_q2_K *>(p)->dmin = finite_half(rng);
                break;
            case GK_TYPE_Q3_K: reinterpret_cast<gk::quant::block_q3_K *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ4_XS: reinterpret_cast<gk::quant::block_iq4_xs *>(p)->d = finite_half(rng); break;
            case GK_TYPE_TQ1_0: reinterpret_cast<gk::quant::block_tq1_0 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_TQ2_0: reinterpret_cast<gk::quant::block_tq2_0 *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ2_XXS: reinterpret_cast<gk::quant::block_iq2_xxs *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ2_XS: reinterpret_cast<gk::quant::block_iq2_xs *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ2_S: reinterpret_cast<gk::quant::block_iq2_s *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ3_XXS: reinterpret_cast<gk::quant::block_iq3_xxs *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ3_S: reinterpret_cast<gk::quant::block_iq3_s *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ1_S: reinterpret_cast<gk::quant::block_iq1_s *>(p)->d = finite_half(rng); break;
            case GK_TYPE_IQ1_M: {  // d's four nibbles are the top nibbles of the four scale words
                const gk::fp16_t d  = finite_half(rng);
                uint8_t *        sc = reinterpret_cast<gk::quant::block_iq1_m *>(p)->scales;
                for (int w = 0; w < 4; ++w) {
                    sc[2 * w + 1] = static_cast<uint8_t>((sc[2 * w + 1] & 0x0F) | (((d >> (4 * w)) & 0xF) << 4));
                }
                break;
            }
            default: FAIL() << "no scale fix-up for " << gk_type_name(type);
        }
    }
}

} // namespace
