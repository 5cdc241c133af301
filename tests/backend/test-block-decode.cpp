// test-block-decode: the device backends' decoding of the block formats
// (src/gk/device/block_decode.h, which the Vulkan shaders and the CUDA kernels include)
// and the CUDA kernels' loops over it (block_row.h), compiled as C++ the way the CUDA
// kernels compile them (inside a struct, kernels.cu's block_reader), and held to the
// CPU's bits on the host, so that they are checked in every build, with or without a
// device: for every format block_formats.h lists, each element a get_rows kernel decodes
// equals the codec's to_float, and the quantized dot in the kernels' order (units, chains
// u % 4, fused steps) equals the CPU's scalar twin on the CPU's own activation conversion.
#include "backend_util.h"

#include "gk/cpu/vec_dot.h"
#include "gk/device/block_formats.h"
#include "quant/codec.h"
#include "quant/fp16.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

using namespace gktest;

namespace {

/// block_decode.h over one weight row in host memory (kernels.cu's block_reader, on the host).
struct block_reader {
    using uint = unsigned int;
    const unsigned char * wrow_;
    const uint32_t *      table_;

    uint  wbyte(uint o) const { return wrow_[o]; }
    float whalf(uint o) const { return half_bits_to_float(wrow_[o] | (wrow_[o + 1] << 8)); }
    uint  wtable(uint i) const { return table_[i]; }
    float bits_to_float(uint b) const { return std::bit_cast<float>(b); }
    float half_bits_to_float(uint h) const { return gk::fp16_to_fp32(static_cast<uint16_t>(h)); }
    float fmul(float a, float b) const { return a * b; }
    float fadd(float a, float b) const { return a + b; }
    float fsub(float a, float b) const { return a - b; }
    float ffma(float a, float b, float c) const { return std::fma(a, b, c); }
    float load_f32(const unsigned char * p) const {
        float f;
        std::memcpy(&f, p, sizeof f);
        return f;
    }

#define GK_DEV
#define GK_CONST static constexpr
#include "gk/device/block_decode.h"
#include "gk/device/block_row.h"
#undef GK_DEV
#undef GK_CONST
};

constexpr int k_len  = 512;  // elements per row: two super-blocks, 16 blocks of 32
constexpr int k_rows = 3;

/// The CPU's activation row (vec_dot_type `at`) in the kernels' layout: per block d as
/// f32, for q8_1 s as f32, then the quants (kernels.cu's quantize_act_kernel writes it).
std::vector<unsigned char> kernel_layout(gk_type at, const std::vector<unsigned char> & cpu) {
    const size_t               qa = at == GK_TYPE_Q8_K ? 256 : 32, hb = at == GK_TYPE_Q8_1 ? 8 : 4;
    const size_t               bb = gk_type_size(at), n = cpu.size() / bb;
    std::vector<unsigned char> out(n * (hb + qa));
    for (size_t b = 0; b < n; ++b) {
        const unsigned char * src = cpu.data() + b * bb;
        unsigned char *       o   = out.data() + b * (hb + qa);
        if (at == GK_TYPE_Q8_K) {  // block_q8_K: f32 d, then the quants
            std::memcpy(o, src, 4 + qa);
            continue;
        }
        uint16_t h[2];  // block_q8_0: f16 d; block_q8_1: f16 d, f16 s; then the quants
        std::memcpy(h, src, hb / 2);
        for (size_t k = 0; k < hb / 4; ++k) {
            const float f = gk::fp16_to_fp32(h[k]);
            std::memcpy(o + 4 * k, &f, 4);
        }
        std::memcpy(o + hb, src + hb / 2, qa);
    }
    return out;
}

}  // namespace

TEST(BlockDecode, EveryFormatDecodesAndDotsAsTheCpu) {
    int formats = 0;
    for (int i = 0; i < GK_TYPE_COUNT; ++i) {
        const auto    t  = static_cast<gk_type>(i);
        const gk_type at = gk::device::block_act_type(t);
        if (at == GK_TYPE_COUNT) continue;
        SCOPED_TRACE(gk_type_name(t));
        ++formats;
        const std::vector<float>   x         = random_values(k_len * k_rows, 1, 1.0f);
        const size_t               row_bytes = gk_type_size(t) * k_len / gk_blck_size(t);
        std::vector<unsigned char> q(row_bytes * k_rows);
        ASSERT_EQ(gk::quant::quantize_rows(t, x.data(), q.data(), k_rows, k_len, nullptr), q.size());
        const std::vector<uint32_t> table = gk::device::block_table(t);
        block_reader                r{q.data(), table.data()};

        if (gk::device::block_rows_decodable(t)) {
            std::vector<float> y(x.size());
            ASSERT_TRUE(gk::quant::dequantize_rows(t, q.data(), y.data(), k_rows, k_len));
            for (int row = 0; row < k_rows; ++row) {
                r.wrow_ = q.data() + row * row_bytes;
                for (unsigned e = 0; e < k_len; ++e) {
                    const float want = y[row * k_len + e], got = r.element(t, e);
                    ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << "element " << e;
                }
            }
        }

        const gk::cpu::vec_dot_traits * dt = gk::cpu::get_vec_dot_traits(t);
        ASSERT_NE(dt, nullptr);
        ASSERT_EQ(dt->vec_dot_type, at);
        const std::vector<float>   a = random_values(k_len, 2, 3.0f);
        std::vector<unsigned char> aq(gk_type_size(at) * k_len / gk_blck_size(at));
        dt->from_float(a.data(), aq.data(), k_len);
        const std::vector<unsigned char> act = kernel_layout(at, aq);
        for (int row = 0; row < k_rows; ++row) {
            r.wrow_    = q.data() + row * row_bytes;
            float want = 0.0f;
            dt->vec_dot_scalar(k_len, &want, r.wrow_, aq.data());
            EXPECT_EQ(std::bit_cast<uint32_t>(r.row_dot(t, act.data(), k_len)), std::bit_cast<uint32_t>(want))
                << "row " << row;
        }
    }
    EXPECT_EQ(formats, 26);
}
