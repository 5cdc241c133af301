// Quantised parameters (DType I8, I4): a realization's "quant" entry stores a parameter as the
// blocks of GGUF's q8_0 or q4_0 (docs/formats.md): along the parameter's last axis, each run of
// 32 elements is one block holding its scale s (an f16) and 32 integers q (int8, or int4 as
// nibbles less 8), and element k of the buffer is block k / 32's element k % 32. A kernel loads
// it as f32(q) * s, which is exact in f32 and f64 and equals gk's decoder's value bit for bit
// (../shared/seeds/presk-native.txt, "A parameter a realization quantises").
//
// The encoder and decoder are gk's codec (src/quant/codec.h): presk meets gk's formats here
// and in realize/params_gguf.h only. The byte layout below is what the kernels' loads read;
// check_layout() holds it against the codec's.
#pragma once
#include <cstdint>
#include <cstring>

#include "kernel/ir.h"

namespace presk::kernel {

/// Elements per block.
constexpr int64_t kQuantBlock = 32;

/// Bytes per block of quantised type `t` (I8: 34, I4: 18): the f16 scale first, then the
/// integers (I8: 32 bytes, one per element; I4: 16 bytes, element j < 16 in the low nibble of
/// byte j and element j >= 16 in the high nibble of byte j - 16).
constexpr int64_t quant_block_bytes(DType t) { return t == DType::I8 ? 2 + kQuantBlock : 2 + kQuantBlock / 2; }

/// The bytes of `n` elements of quantised type `t` (n a multiple of kQuantBlock).
constexpr int64_t quant_bytes(DType t, int64_t n) { return n / kQuantBlock * quant_block_bytes(t); }

/// The integer q of element `k` of the blocks at `base` (I8: -128..127; I4: -8..7).
inline int32_t quant_int(DType t, const void* base, int64_t k) {
    const auto* b = static_cast<const uint8_t*>(base) + k / kQuantBlock * quant_block_bytes(t) + 2;
    const int64_t j = k % kQuantBlock;
    if (t == DType::I8) return (int8_t)b[j];
    return (int32_t)((b[j % (kQuantBlock / 2)] >> (j / (kQuantBlock / 2) * 4)) & 15) - 8;
}

/// The f16 bits of the scale of element `k` of the blocks at `base`.
inline uint16_t quant_scale_bits(DType t, const void* base, int64_t k) {
    uint16_t h;
    std::memcpy(&h, static_cast<const uint8_t*>(base) + k / kQuantBlock * quant_block_bytes(t), 2);
    return h;
}

/// The gk type id of `t`'s blocks (GK_TYPE_Q8_0, GK_TYPE_Q4_0).
int gk_type_of(DType t);

/// Encodes `n` f32 values (a multiple of kQuantBlock) into blocks of `t` at `dst` with gk's
/// encoder (the codec's from_float, as gk-quantize encodes without importance weights).
void quantise(DType t, const float* x, void* dst, int64_t n);

/// Decodes `n` elements of `t`'s blocks at `src` into f32 with gk's decoder.
void dequantise(DType t, const void* src, float* out, int64_t n);

/// Throws presk::Error when gk's codec lays out `t`'s blocks otherwise than this header says
/// (block size, bytes per block, or a decoded value other than f32(q) * s).
void check_layout(DType t);

} // namespace presk::kernel
