// block_rows.h - adapters from the codec table's untyped row entry points (codec.h) to a
// family's typed block functions, safe for buffers of any alignment.
//
// A block struct needs the alignment of its widest field (2 for f16 fields). Rows read
// from a file or a byte buffer may not have it; those are copied through an aligned
// local instead of being reinterpreted, so no misaligned access ever happens.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace gk::quant {

template <class Block>
bool is_aligned_for(const void * p) {
    return reinterpret_cast<std::uintptr_t>(p) % alignof(Block) == 0;
}

/// to_float_fn for a typed decoder `Decode(blocks, dst, n)`; QK = elements per block.
template <class Block, int64_t QK, void (*Decode)(const Block *, float *, int64_t)>
void decode_blocks(const void * src, float * dst, int64_t n) {
    if (is_aligned_for<Block>(src)) {
        Decode(static_cast<const Block *>(src), dst, n);
        return;
    }
    const auto * bytes = static_cast<const unsigned char *>(src);
    for (int64_t i = 0; i < n / QK; ++i) {
        Block b;
        std::memcpy(&b, bytes + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
        Decode(&b, dst + i * QK, QK);
    }
}

/// from_float_fn for a typed row encoder `Encode(src, blocks, n, imatrix)`.
template <class Block, int64_t QK, void (*Encode)(const float *, Block *, int64_t, const float *)>
void encode_blocks(const float * src, void * dst, int64_t n, const float * imatrix) {
    if (is_aligned_for<Block>(dst)) {
        Encode(src, static_cast<Block *>(dst), n, imatrix);
        return;
    }
    std::vector<Block> row(static_cast<size_t>(n / QK));
    Encode(src, row.data(), n, imatrix);
    std::memcpy(dst, row.data(), row.size() * sizeof(Block));
}

} // namespace gk::quant
