// test-kv-quant - the writing side of a quantized KV cache: the codec's reference
// encoders (from_float_ref) give ggml's bytes, and set_rows writes every row with them.
#include "op_check.h"

#include "quant/fp4.h"
#include "quant/legacy.h"

#include <string>

namespace {

using namespace gk_test;

constexpr int k_blocks = 24;  // blocks of 32 values in the golden input

/// The input of scripts/kv-quant-golden.py: 24 blocks of 32 exact f32 values (24-bit
/// integers times powers of two), blocks 0-5 edge cases (zeros, a constant, a +-0.75 tie
/// for the largest magnitude, values whose f16 scale underflows, values up to 16384, a
/// negative largest magnitude), the rest random at scales 2^-3 .. 2^3.
std::vector<float> golden_input() {
    uint64_t           state = 0x9E3779B97F4A7C15ull;
    std::vector<float> out;
    for (int b = 0; b < k_blocks; ++b) {
        float block[32];
        for (float & v : block) {
            state         = state * 6364136223846793005ull + 1442695040888963407ull;
            const auto u  = static_cast<int64_t>(state >> 40) - (int64_t{1} << 23);
            const int  e2 = b == 2 ? -25 : b == 3 ? -53 : b == 4 ? -9 : b == 5 ? -24 : -23 + b % 7 - 3;
            v             = b == 0 ? 0.0f : b == 1 ? 0.25f : std::ldexp(static_cast<float>(u), e2);
        }
        if (b == 2) {
            block[3]  = 0.75f;
            block[20] = -0.75f;
        }
        if (b == 5) {
            block[7] = -1.5f;
        }
        out.insert(out.end(), block, block + 32);
    }
    return out;
}

uint64_t fnv1a(const std::vector<uint8_t> & bytes) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (uint8_t c : bytes) {
        h = (h ^ c) * 0x100000001B3ull;
    }
    return h;
}

std::vector<uint8_t> encode_ref(gk_type t, const std::vector<float> & x) {
    std::vector<uint8_t> out(gk_row_size(t, static_cast<int64_t>(x.size())));
    gk::quant::get_type_traits(t)->from_float_ref(x.data(), out.data(), static_cast<int64_t>(x.size()));
    return out;
}

// The encoders ggml's CPU backend stores rows with on x86: the reference encoders as gguf-py
// computes them (q4_0 .. q5_1), q8_0 by its x86 rule, and a float32 transcription of
// ggml-quants.c (iq4_nl): scripts/kv-quant-golden.py prints these.
TEST(KvQuant, ReferenceEncodersGiveGgmlsBytes) {
    const std::vector<float> x = golden_input();
    const struct {
        gk_type  type;
        uint64_t hash;
    } golden[] = {
        {GK_TYPE_Q4_0, 0x5C6822634DFDE451ull}, {GK_TYPE_Q4_1, 0xC805D99082DC522Cull},
        {GK_TYPE_Q5_0, 0x4751E830B6DBFBCEull}, {GK_TYPE_Q5_1, 0x1417004347090249ull},
        {GK_TYPE_Q8_0, 0x4480EA7B5489526Aull}, {GK_TYPE_IQ4_NL, 0x222F957D037B9B83ull},
    };
    for (const auto & g : golden) {
        SCOPED_TRACE(gk_type_name(g.type));
        ASSERT_NE(gk::quant::get_type_traits(g.type)->from_float_ref, nullptr);
        const std::vector<uint8_t> bytes = encode_ref(g.type, x);
        EXPECT_EQ(fnv1a(bytes), g.hash) << "first block: "
                                        << testing::PrintToString(std::vector<uint8_t>(
                                               bytes.begin(), bytes.begin() + static_cast<long>(gk_type_size(g.type))));
    }
}

// A few blocks decoded by hand from the rules of legacy.h / fp4.h.
TEST(KvQuant, ReferenceEncodersFollowTheirRules) {
    std::vector<float> x(32, 0.0f);
    x[0] = 1.0f, x[1] = -2.0f, x[2] = 0.5f, x[17] = 2.0f;  // -2 is the first of largest |x|
    gk::quant::block_q4_0 q4;
    gk::quant::quantize_row_q4_0_ref(x.data(), &q4, 32);
    EXPECT_EQ(gk::fp16_to_fp32(q4.d), 0.25f);  // -2 / -8
    // levels trunc(x / 0.25 + 8.5): 1 -> 12, -2 -> 0, 0.5 -> 10, 0 -> 8, 2 -> min(15, 16)
    EXPECT_EQ(q4.qs[0], 12 | (8 << 4));
    EXPECT_EQ(q4.qs[1], 0 | (15 << 4));
    EXPECT_EQ(q4.qs[2], 10 | (8 << 4));

    gk::quant::block_q5_1 q5;
    gk::quant::quantize_row_q5_1_ref(x.data(), &q5, 32);
    EXPECT_EQ(gk::fp16_to_fp32(q5.m), -2.0f);
    EXPECT_EQ(gk::fp16_to_fp32(q5.d), gk::fp16_to_fp32(gk::fp32_to_fp16(4.0f / 31.0f)));

    gk::quant::block_iq4_nl nl;
    std::vector<float>      z(32, 1e-16f);  // below 1e-15: d = 0, every index 0
    gk::quant::quantize_row_iq4_nl_ref(z.data(), &nl, 32);
    EXPECT_EQ(nl.d, 0);
    for (uint8_t b : nl.qs) EXPECT_EQ(b, 0);
    // q8_0 is stored by ggml-cpu's x86 rule (ties to even at id = 127 / max|x|), not by its
    // reference (ties away from zero): 2.5 -> 2, -3.5 -> -4, where the reference gives 3, -4.
    std::vector<float> t(32, 0.0f);
    t[0] = 127.0f, t[1] = 2.5f, t[2] = -3.5f, t[3] = 0.5f;
    const std::vector<uint8_t> stored = encode_ref(GK_TYPE_Q8_0, t);
    const auto *               q8     = reinterpret_cast<const gk::quant::block_q8_0 *>(stored.data());
    EXPECT_EQ(q8->qs[1], 2);
    EXPECT_EQ(q8->qs[2], -4);
    EXPECT_EQ(q8->qs[3], 0);
    gk::quant::block_q8_0 ref;
    gk::quant::quantize_row_q8_0(t.data(), &ref, 32);
    EXPECT_EQ(ref.qs[1], 3);
    // Non-finite inputs encode without undefined behaviour (UBSan checks the conversions).
    std::vector<float> bad(32, NAN);
    bad[5] = INFINITY;
    for (gk_type t : {GK_TYPE_Q4_0, GK_TYPE_Q4_1, GK_TYPE_Q5_0, GK_TYPE_Q5_1, GK_TYPE_Q8_0, GK_TYPE_IQ4_NL}) {
        EXPECT_EQ(encode_ref(t, bad).size(), gk_type_size(t)) << gk_type_name(t);
    }
}

// set_rows writes each source row as the reference encoder encodes it (ggml's set_rows
// bytes), at every thread count, and leaves the other rows alone. The file encoders
// (from_float, with a scale search) give other bytes on these rows, so a set_rows that
// used them fails here.
TEST(KvQuant, SetRowsWritesTheReferenceEncoding) {
    const std::vector<float> x = golden_input();  // 12 rows of 64
    constexpr int64_t        n = 64, rows = k_blocks * 32 / n, cells = 17;
    for (gk_type t : {GK_TYPE_Q8_0, GK_TYPE_Q4_0, GK_TYPE_Q4_1, GK_TYPE_Q5_0, GK_TYPE_Q5_1, GK_TYPE_IQ4_NL}) {
        SCOPED_TRACE(gk_type_name(t));
        const size_t         row_bytes = gk_row_size(t, n);
        std::vector<uint8_t> want(row_bytes * cells, 0xA5);  // untouched cells keep their bytes
        std::vector<int32_t> cell(rows);
        for (int64_t r = 0; r < rows; ++r) {
            cell[static_cast<size_t>(r)] = static_cast<int32_t>((r * 5 + 3) % cells);
            const std::vector<float>   row(x.begin() + r * n, x.begin() + (r + 1) * n);
            const std::vector<uint8_t> enc = encode_ref(t, row);
            std::copy(enc.begin(), enc.end(),
                      want.begin() + static_cast<long>(cell[static_cast<size_t>(r)] * row_bytes));
        }
        bool search_differs = false;
        for (int64_t r = 0; r < rows && !search_differs; ++r) {
            std::vector<uint8_t> file(row_bytes);
            gk::quant::get_type_traits(t)->from_float(x.data() + r * n, file.data(), n, nullptr);
            search_differs = file != encode_ref(t, std::vector<float>(x.begin() + r * n, x.begin() + (r + 1) * n));
        }
        EXPECT_TRUE(search_differs) << "the rows do not tell the reference encoder from the file encoder";
        for (int threads : {1, 2, 3, 5}) {
            env         e;
            gk_tensor * a = gk_new_tensor_2d(e.ctx, t, n, cells);
            gk_tensor * b = gk_new_tensor_2d(e.ctx, GK_TYPE_F32, n, rows);
            gk_tensor * c = gk_new_tensor_1d(e.ctx, GK_TYPE_I32, rows);
            std::memset(a->data, 0xA5, gk_nbytes(a));
            std::memcpy(b->data, x.data(), gk_nbytes(b));
            std::memcpy(c->data, cell.data(), gk_nbytes(c));
            ASSERT_TRUE(compute(e.ctx, gk_set_rows(e.ctx, a, b, c), threads));
            EXPECT_EQ(std::memcmp(a->data, want.data(), want.size()), 0) << threads << " threads";
        }
    }
}

} // namespace
