// Quantised parameters' blocks through gk's codec (kernel/quant.h).
#include "kernel/quant.h"

#include <string>
#include <vector>

#include "../../quant/codec.h"
#include "../../quant/fp16.h"
#include "lang/source.h"

namespace presk::kernel {
namespace {

const gk::quant::type_traits& traits(DType t) {
    if (!quantised(t)) throw Error({}, std::string("quant: ") + dtype_name(t) + " is not a quantised type");
    const gk::quant::type_traits* tr = gk::quant::get_type_traits(gk_type_of(t));
    if (!tr || !tr->to_float || !tr->from_float) throw Error({}, std::string("quant: gk's codec has no ") + dtype_name(t) + " blocks");
    return *tr;
}

void check_count(DType t, int64_t n) {
    if (n < 0 || n % kQuantBlock)
        throw Error({}, std::string("quant: ") + std::to_string(n) + " elements of " + dtype_name(t) +
                            " are not a whole number of blocks of " + std::to_string(kQuantBlock));
}

} // namespace

int gk_type_of(DType t) { return t == DType::I8 ? GK_TYPE_Q8_0 : GK_TYPE_Q4_0; }

void quantise(DType t, const float* x, void* dst, int64_t n) {
    check_count(t, n);
    if (n) traits(t).from_float(x, dst, n, nullptr);
}

void dequantise(DType t, const void* src, float* out, int64_t n) {
    check_count(t, n);
    if (n) traits(t).to_float(src, out, n);
}

void check_layout(DType t) {
    const gk::quant::type_traits& tr = traits(t);
    const std::string at = std::string("quant: gk's ") + tr.name + " blocks ";
    if (tr.blck_size != kQuantBlock || (int64_t)tr.type_size != quant_block_bytes(t))
        throw Error({}, at + "are " + std::to_string(tr.blck_size) + " elements in " + std::to_string(tr.type_size) +
                            " bytes, not " + std::to_string(kQuantBlock) + " in " + std::to_string(quant_block_bytes(t)));
    std::vector<float> x((size_t)kQuantBlock), back(x.size());  // a block with every integer's sign
    for (int64_t j = 0; j < kQuantBlock; ++j) x[(size_t)j] = (float)(j - kQuantBlock / 2) * 0.375f + 0.0625f;
    std::vector<uint8_t> b((size_t)quant_block_bytes(t));
    quantise(t, x.data(), b.data(), kQuantBlock);
    dequantise(t, b.data(), back.data(), kQuantBlock);
    const float s = gk::fp16_to_fp32(quant_scale_bits(t, b.data(), 0));
    for (int64_t j = 0; j < kQuantBlock; ++j)
        if (back[(size_t)j] != (float)quant_int(t, b.data(), j) * s)
            throw Error({}, at + "decode element " + std::to_string(j) + " otherwise than f32(q) * s");
}

} // namespace presk::kernel
