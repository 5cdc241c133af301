// validate.cpp - ggml_validate_row_data: the checks ggml makes on a row before it is used
// (llama.cpp runs them on model tensors when asked to validate): the byte count is a whole
// number of blocks; plain float values (F16, BF16, F32, F64) are finite; each block of a
// quantized type has finite f16/f32 scales (d, and m or dmin where the format has them; the
// f16 assembled from IQ1_M's scale nibbles) and MXFP4's shared exponent is not 0xff. The
// quantized values themselves are not checked (every code decodes to a finite number when
// the scales are finite). Integer types and NVFP4 (every scale byte valid) always pass;
// Q8_1, which has no check in ggml either, is refused as an invalid type.
#include "convert.h"

#include "quant/fp16.h"
#include "quant/fp4.h"
#include "quant/iq_quants.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"
#include "quant/low_bit.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace {

namespace q = gk::quant;

bool report(const char * what, size_t block) {
    std::fprintf(stderr, "ggml_validate_row_data: %s at block %zu\n", what, block);
    return false;
}

bool finite_f16(uint16_t h, size_t block) {
    if ((h & 0x7fffu) == 0x7c00u) return report("infinite f16 value", block);
    if ((h & 0x7fffu) > 0x7c00u) return report("NaN f16 value", block);
    return true;
}

bool finite_bf16(uint16_t h, size_t block) {
    if ((h & 0x7fffu) == 0x7f80u) return report("infinite bf16 value", block);
    if ((h & 0x7fffu) > 0x7f80u) return report("NaN bf16 value", block);
    return true;
}

template <class Float> bool finite_float(Float f, size_t block) {
    if (std::isinf(f)) return report("infinite value", block);
    if (std::isnan(f)) return report("NaN value", block);
    return true;
}

// Reads block i of a row without assuming the row is aligned for Block.
template <class Block> Block block_at(const void * data, size_t i) {
    Block b;
    std::memcpy(&b, static_cast<const char *>(data) + i * sizeof(Block), sizeof(Block));
    return b;
}

// Every block's f16 scale fields (d; d and m; d and dmin) are finite.
template <class Block, class... Scale> bool f16_scales(const void * data, size_t n, Scale Block::*... scales) {
    for (size_t i = 0; i < n; ++i) {
        const Block b = block_at<Block>(data, i);
        if (!(finite_f16(b.*scales, i) && ...)) {
            return false;
        }
    }
    return true;
}

// Plain values of one type, each checked by ok(value, index).
template <class Value, class Check> bool values(const void * data, size_t n, Check ok) {
    for (size_t i = 0; i < n; ++i) {
        if (!ok(block_at<Value>(data, i), i)) {
            return false;
        }
    }
    return true;
}

bool iq1_m_scales(const void * data, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const q::block_iq1_m b = block_at<q::block_iq1_m>(data, i);
        uint16_t             sc[4];
        std::memcpy(sc, b.scales, sizeof sc);
        const uint16_t d = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        if (!finite_f16(d, i)) {
            return false;
        }
    }
    return true;
}

bool mxfp4_exponents(const void * data, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (block_at<q::block_mxfp4>(data, i).e == 0xff) {
            return report("shared exponent 0xff", i);
        }
    }
    return true;
}

bool blocks_valid(ggml_type type, const void * data, size_t n) {
    switch (type) {
    case GGML_TYPE_F32: return values<float>(data, n, finite_float<float>);
    case GGML_TYPE_F64: return values<double>(data, n, finite_float<double>);
    case GGML_TYPE_F16: return values<uint16_t>(data, n, finite_f16);
    case GGML_TYPE_BF16: return values<uint16_t>(data, n, finite_bf16);
    case GGML_TYPE_I8:
    case GGML_TYPE_I16:
    case GGML_TYPE_I32:
    case GGML_TYPE_I64:
    case GGML_TYPE_NVFP4: return true;
    case GGML_TYPE_Q4_0: return f16_scales(data, n, &q::block_q4_0::d);
    case GGML_TYPE_Q4_1: return f16_scales(data, n, &q::block_q4_1::d, &q::block_q4_1::m);
    case GGML_TYPE_Q5_0: return f16_scales(data, n, &q::block_q5_0::d);
    case GGML_TYPE_Q5_1: return f16_scales(data, n, &q::block_q5_1::d, &q::block_q5_1::m);
    case GGML_TYPE_Q8_0: return f16_scales(data, n, &q::block_q8_0::d);
    case GGML_TYPE_Q1_0: return f16_scales(data, n, &q::block_q1_0::d);
    case GGML_TYPE_Q2_0: return f16_scales(data, n, &q::block_q2_0::d);
    case GGML_TYPE_TQ1_0: return f16_scales(data, n, &q::block_tq1_0::d);
    case GGML_TYPE_TQ2_0: return f16_scales(data, n, &q::block_tq2_0::d);
    case GGML_TYPE_Q2_K: return f16_scales(data, n, &q::block_q2_K::d, &q::block_q2_K::dmin);
    case GGML_TYPE_Q3_K: return f16_scales(data, n, &q::block_q3_K::d);
    case GGML_TYPE_Q4_K: return f16_scales(data, n, &q::block_q4_K::d, &q::block_q4_K::dmin);
    case GGML_TYPE_Q5_K: return f16_scales(data, n, &q::block_q5_K::d, &q::block_q5_K::dmin);
    case GGML_TYPE_Q6_K: return f16_scales(data, n, &q::block_q6_K::d);
    case GGML_TYPE_Q8_K: return values<q::block_q8_K>(data, n, [](const q::block_q8_K & b, size_t i) { return finite_float(b.d, i); });
    case GGML_TYPE_IQ1_S: return f16_scales(data, n, &q::block_iq1_s::d);
    case GGML_TYPE_IQ1_M: return iq1_m_scales(data, n);
    case GGML_TYPE_IQ2_XXS: return f16_scales(data, n, &q::block_iq2_xxs::d);
    case GGML_TYPE_IQ2_XS: return f16_scales(data, n, &q::block_iq2_xs::d);
    case GGML_TYPE_IQ2_S: return f16_scales(data, n, &q::block_iq2_s::d);
    case GGML_TYPE_IQ3_XXS: return f16_scales(data, n, &q::block_iq3_xxs::d);
    case GGML_TYPE_IQ3_S: return f16_scales(data, n, &q::block_iq3_s::d);
    case GGML_TYPE_IQ4_NL: return f16_scales(data, n, &q::block_iq4_nl::d);
    case GGML_TYPE_IQ4_XS: return f16_scales(data, n, &q::block_iq4_xs::d);
    case GGML_TYPE_MXFP4: return mxfp4_exponents(data, n);
    default: std::fprintf(stderr, "ggml_validate_row_data: no check for type %d\n", static_cast<int>(type)); return false;
    }
}

} // namespace

extern "C" bool ggml_validate_row_data(enum ggml_type type, const void * data, size_t nbytes) {
    if (static_cast<int>(type) < 0 || type >= GGML_TYPE_COUNT || !gk_type_is_valid(compat::to_gk(type))) {
        std::fprintf(stderr, "ggml_validate_row_data: invalid type %d\n", static_cast<int>(type));
        return false;
    }
    const size_t block = ggml_type_size(type);
    if (nbytes % block != 0) {
        std::fprintf(stderr, "ggml_validate_row_data: %zu bytes are not whole %s blocks of %zu bytes\n", nbytes,
                     ggml_type_name(type), block);
        return false;
    }
    if (nbytes > 0 && !data) {
        std::fprintf(stderr, "ggml_validate_row_data: no data\n");
        return false;
    }
    return blocks_valid(type, data, nbytes / block);
}
