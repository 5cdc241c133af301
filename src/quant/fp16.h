// fp16.h - IEEE binary16 (f16) and bfloat16 (bf16) conversion, exact.
//
// f32 -> f16: round to nearest, ties to even; results below the f16 normal range are
// rounded into subnormals (not flushed); overflow gives +-Inf; any NaN gives the quiet
// NaN 0x7E00 with the input's sign (the bits ggml's reference writes).
// f16 -> f32: exact for every pattern; a NaN keeps its payload and becomes quiet.
// f32 -> bf16: round to nearest even on the upper 16 bits; NaN keeps its upper payload
// bits with the quiet bit forced. bf16 -> f32: exact (bf16 is the top half of an f32).
// bf16 is a storage format only: arithmetic happens in f32.
#pragma once

#include <bit>
#include <cstdint>

namespace gk {

using fp16_t = uint16_t;  // raw f16 bits
using bf16_t = uint16_t;  // raw bf16 bits

/// f16 bits -> f32 value (exact).
constexpr float fp16_to_fp32(fp16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp  = (h >> 10) & 0x1Fu;
    uint32_t       mant = h & 0x3FFu;
    uint32_t       bits;
    if (exp == 0x1Fu) {                       // Inf or NaN
        bits = sign | 0x7F800000u | (mant << 13) | (mant ? 0x00400000u : 0u);
    } else if (exp != 0) {                    // normal
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {                   // +-0
        bits = sign;
    } else {                                  // subnormal: normalise
        int e = 113;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --e;
        }
        bits = sign | (static_cast<uint32_t>(e) << 23) | ((mant & 0x3FFu) << 13);
    }
    return std::bit_cast<float>(bits);
}

/// f32 value -> f16 bits (round to nearest even; see the file comment).
constexpr fp16_t fp32_to_fp16(float f) {
    const uint32_t w    = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (w >> 16) & 0x8000u;
    const uint32_t abs  = w & 0x7FFFFFFFu;
    if (abs > 0x7F800000u) {                  // NaN
        return static_cast<fp16_t>(sign | 0x7E00u);
    }
    if (abs >= 0x477FF000u) {                 // rounds to >= 65520: Inf
        return static_cast<fp16_t>(sign | 0x7C00u);
    }
    if (abs >= 0x38800000u) {                 // normal f16 range (>= 2^-14)
        const uint32_t mant = abs & 0x7FFFFFu;
        const uint32_t exp  = (abs >> 23) - 112u;
        uint32_t       h    = (exp << 10) | (mant >> 13);
        const uint32_t rest = mant & 0x1FFFu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) {
            ++h;                              // may carry into the exponent: correct
        }
        return static_cast<fp16_t>(sign | h);
    }
    if (abs < 0x33000000u) {                  // below half the smallest subnormal: 0
        return static_cast<fp16_t>(sign);
    }
    // subnormal result: value = m * 2^-24 with m = round(abs * 2^24)
    const uint32_t exp   = abs >> 23;                     // 102..112
    const uint32_t mant  = (abs & 0x7FFFFFu) | 0x800000u; // 24 significant bits
    const uint32_t shift = 126u - exp;                    // 14..24
    uint32_t       h     = mant >> shift;
    const uint32_t rest  = mant & ((1u << shift) - 1u);
    const uint32_t half  = 1u << (shift - 1u);
    if (rest > half || (rest == half && (h & 1u))) {
        ++h;
    }
    return static_cast<fp16_t>(sign | h);
}

/// bf16 bits -> f32 value (exact).
constexpr float bf16_to_fp32(bf16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

/// f32 value -> bf16 bits (round to nearest even; NaN quieted).
constexpr bf16_t fp32_to_bf16(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
        return static_cast<bf16_t>((u >> 16) | 0x40u);
    }
    return static_cast<bf16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

} // namespace gk
