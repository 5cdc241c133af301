// test-vs-ggml - differential tests of the gk codec against a reference ggml build
// (libggml-base; see scripts/build-reference-ggml). Built only when CMake is given
// GK_REFERENCE_DIR and GK_REFERENCE_LIB.
//
//   block geometry   every type id: validity, name, block size, type size, row size
//   narrow floats    f16 and bf16 both ways: every 16-bit pattern, a wide f32 sweep
//   codec interop    ours -> both decoders, theirs -> both decoders, random bytes ->
//                    both decoders; all compared bit for bit
//   encode quality   RMSE of ours / RMSE of theirs per row family, with and without
//                    an imatrix; each ratio <= k_quality_max_ratio
//
// A type whose codec has not landed on our side is skipped as "not implemented".
//   test-vs-ggml --record=FILE   writes the reference's encode-quality figures for
//                                test-encode-quality (tests/data/encode_quality_ref.json)
#include "ggml.h"
#include "quant/codec.h"
#include "quant/encode_quality.h"
#include "quant/fp16.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

// Row functions libggml-base exports (ggml-quants.h) for q8_1 and q8_K, which neither
// ggml_quantize_chunk nor the base type traits reach. ggml has no q8_1 decoder.
extern "C" {
void quantize_row_q8_1_ref(const float * x, void * y, int64_t k);
void quantize_row_q8_K_ref(const float * x, void * y, int64_t k);
void dequantize_row_q8_K(const void * x, float * y, int64_t k);
}

namespace {

using gk::test::quality_case;
using gk::test::quality_status;

// ---- the two codecs behind one interface ------------------------------------------

size_t row_size(int type, int64_t n_per_row) { return gk_row_size(static_cast<gk_type>(type), n_per_row); }

void ref_copy_f32(const void * src, float * dst, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }

ggml_to_float_t ref_decoder(int type) {
    if (type == GGML_TYPE_F32) {
        return ref_copy_f32;
    }
    if (type == GGML_TYPE_Q8_K) {
        return dequantize_row_q8_K;
    }
    return ggml_get_type_traits(static_cast<ggml_type>(type))->to_float;
}

bool ref_has_encoder(int type) {
    switch (type) {
        case GGML_TYPE_I8:
        case GGML_TYPE_I16:
        case GGML_TYPE_I32:
        case GGML_TYPE_I64:
        case GGML_TYPE_F64: return false;
        default: return ggml_blck_size(static_cast<ggml_type>(type)) > 0;
    }
}

bool ref_encode(int type, const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    const auto t = static_cast<ggml_type>(type);
    if (!ref_has_encoder(type) || (!imatrix && ggml_quantize_requires_imatrix(t))) {
        return false;
    }
    if (type == GGML_TYPE_Q8_1 || type == GGML_TYPE_Q8_K) {
        const auto fn = type == GGML_TYPE_Q8_1 ? quantize_row_q8_1_ref : quantize_row_q8_K_ref;
        for (int64_t r = 0; r < nrows; ++r) {
            fn(src + r * n_per_row, static_cast<char *>(dst) + r * row_size(type, n_per_row), n_per_row);
        }
        return true;
    }
    ggml_quantize_chunk(t, src, dst, 0, nrows, n_per_row, imatrix);
    return true;
}

bool ref_decode(int type, const void * src, float * dst, int64_t nrows, int64_t n_per_row) {
    const ggml_to_float_t fn = ref_decoder(type);
    if (!fn) {
        return false;
    }
    for (int64_t r = 0; r < nrows; ++r) {
        fn(static_cast<const char *>(src) + r * row_size(type, n_per_row), dst + r * n_per_row, n_per_row);
    }
    return true;
}

bool our_encode(int type, const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return gk::quant::quantize_rows(type, src, dst, nrows, n_per_row, imatrix) ==
           row_size(type, n_per_row) * static_cast<size_t>(nrows);
}

bool our_decode(int type, const void * src, float * dst, int64_t nrows, int64_t n_per_row) {
    return gk::quant::dequantize_rows(type, src, dst, nrows, n_per_row);
}

bool our_has_decoder(int type) { return gk::quant::get_type_traits(type)->to_float != nullptr; }
bool our_has_encoder(int type) { return gk::quant::get_type_traits(type)->from_float != nullptr; }

/// Quality figures of the reference need a decoder; ggml has none for q8_1, so its
/// output is decoded by ours there (checked against gguf-py's by test-decode-vs-gguf-py).
bool ref_decode_for_quality(int type, const void * src, float * dst, int64_t nrows, int64_t n_per_row) {
    return ref_decoder(type) ? ref_decode(type, src, dst, nrows, n_per_row)
                             : our_decode(type, src, dst, nrows, n_per_row);
}

std::vector<int> valid_types() {
    std::vector<int> types;
    for (int t = 0; t < GK_TYPE_COUNT; ++t) {
        if (gk_type_is_valid(t)) {
            types.push_back(t);
        }
    }
    return types;
}

std::string type_param_name(const testing::TestParamInfo<int> & info) { return gk_type_name(static_cast<gk_type>(info.param)); }

/// Bitwise comparison of two decoded buffers; the message counts the differences (and
/// how many of them are NaNs that differ only in the sign bit) and names the first.
testing::AssertionResult same_bits(const std::vector<float> & ours, const std::vector<float> & theirs, int64_t n_per_row) {
    size_t differ = 0, nan_sign = 0, first = 0;
    for (size_t i = 0; i < ours.size(); ++i) {
        const uint32_t diff = std::bit_cast<uint32_t>(ours[i]) ^ std::bit_cast<uint32_t>(theirs[i]);
        if (diff != 0) {
            first = differ++ == 0 ? i : first;
            nan_sign += std::isnan(ours[i]) && diff == 0x80000000u;
        }
    }
    if (differ == 0) {
        return testing::AssertionSuccess();
    }
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%zu of %zu values differ (%zu of them NaNs differing only in sign); first at row %zu col %zu: "
                  "ours %a (0x%08" PRIx32 "), theirs %a (0x%08" PRIx32 ")",
                  differ, ours.size(), nan_sign, first / static_cast<size_t>(n_per_row),
                  first % static_cast<size_t>(n_per_row), ours[first], std::bit_cast<uint32_t>(ours[first]),
                  theirs[first], std::bit_cast<uint32_t>(theirs[first]));
    return testing::AssertionFailure() << buf;
}

// ---- block geometry -----------------------------------------------------------------

TEST(Geometry, EveryTypeIdMatchesGgml) {
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
        const auto gt = static_cast<ggml_type>(t);
        const auto kt = static_cast<gk_type>(t);
        const bool ggml_has = ggml_blck_size(gt) > 0;
        ASSERT_EQ(gk_type_is_valid(t), ggml_has) << "type id " << t;
        if (!ggml_has) {
            continue;
        }
        EXPECT_STREQ(gk_type_name(kt), ggml_type_name(gt)) << "type id " << t;
        EXPECT_EQ(gk_blck_size(kt), ggml_blck_size(gt)) << gk_type_name(kt);
        EXPECT_EQ(gk_type_size(kt), ggml_type_size(gt)) << gk_type_name(kt);
        EXPECT_EQ(gk_is_quantized(kt), ggml_is_quantized(gt)) << gk_type_name(kt);
        for (int64_t blocks : {1, 2, 7, 64}) {
            const int64_t ne = blocks * ggml_blck_size(gt);
            EXPECT_EQ(gk_row_size(kt, ne), ggml_row_size(gt, ne)) << gk_type_name(kt) << " ne " << ne;
        }
    }
    EXPECT_EQ(static_cast<int>(GK_TYPE_COUNT), static_cast<int>(GGML_TYPE_COUNT));
}

// ---- narrow floats --------------------------------------------------------------------

/// f32 bit patterns: a strided sweep of all 2^32 (about a million), plus every rounding
/// midpoint between neighbouring finite f16 (or bf16) values and the f32s either side.
std::vector<uint32_t> f32_sweep(bool for_bf16) {
    std::vector<uint32_t> v;
    for (uint64_t u = 0; u < (1ull << 32); u += 4099) {
        v.push_back(static_cast<uint32_t>(u));
    }
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        uint32_t mid;
        if (for_bf16) {
            mid = (h << 16) | 0x8000u;
        } else {
            const float a = gk::fp16_to_fp32(static_cast<gk::fp16_t>(h));
            const float b = gk::fp16_to_fp32(static_cast<gk::fp16_t>(h + 1));
            if (!std::isfinite(a) || !std::isfinite(b) || ((h + 1) & 0x7FFFu) == 0) {
                continue;
            }
            mid = std::bit_cast<uint32_t>(static_cast<float>((static_cast<double>(a) + b) / 2));
        }
        v.insert(v.end(), {mid - 1, mid, mid + 1});
    }
    return v;
}

TEST(NarrowFloats, F16ToF32EveryPattern) {
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        const uint32_t ours   = std::bit_cast<uint32_t>(gk::fp16_to_fp32(static_cast<gk::fp16_t>(h)));
        const uint32_t theirs = std::bit_cast<uint32_t>(ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(h)));
        ASSERT_EQ(ours, theirs) << "f16 0x" << std::hex << h;
    }
}

TEST(NarrowFloats, F32ToF16Sweep) {
    const std::vector<uint32_t> sweep = f32_sweep(false);
    for (uint32_t u : sweep) {
        const float f = std::bit_cast<float>(u);
        ASSERT_EQ(gk::fp32_to_fp16(f), ggml_fp32_to_fp16(f)) << "f32 0x" << std::hex << u;
    }
    std::printf("f32 -> f16: %zu patterns equal\n", sweep.size());
}

TEST(NarrowFloats, Bf16ToF32EveryPattern) {
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        const uint32_t ours   = std::bit_cast<uint32_t>(gk::bf16_to_fp32(static_cast<gk::bf16_t>(h)));
        const uint32_t theirs = std::bit_cast<uint32_t>(ggml_bf16_to_fp32(ggml_bf16_t{static_cast<uint16_t>(h)}));
        ASSERT_EQ(ours, theirs) << "bf16 0x" << std::hex << h;
    }
}

TEST(NarrowFloats, F32ToBf16Sweep) {
    const std::vector<uint32_t> sweep = f32_sweep(true);
    for (uint32_t u : sweep) {
        const float f = std::bit_cast<float>(u);
        ASSERT_EQ(gk::fp32_to_bf16(f), ggml_fp32_to_bf16(f).bits) << "f32 0x" << std::hex << u;
    }
    std::printf("f32 -> bf16: %zu patterns equal\n", sweep.size());
}

// ---- codec interop ----------------------------------------------------------------------

constexpr int64_t k_interop_n_per_row = 256;
constexpr int64_t k_interop_rows      = 32;  // 12 gaussian, 12 per-column-scaled, 8 edge rows

class Interop : public testing::TestWithParam<int> {};

/// Input rows for the interop tests: gaussian and per-column-scaled rows, then edge rows
/// whose encodings reach the corners of the formats (zero and tiny scales that round to
/// f16 zero or subnormals, scales beyond the f16 range, a constant row, one spike).
const std::vector<float> & interop_rows() {
    static const std::vector<float> rows = [] {
        constexpr int64_t  n = k_interop_n_per_row;
        std::vector<float> a, b;
        std::string        err;
        gk::test::make_rows(gk::test::family::gaussian, 12, n, a, err);
        gk::test::make_rows(gk::test::family::col_scale, 12, n, b, err);
        a.insert(a.end(), b.begin(), b.end());
        const std::vector<float> g(a.begin(), a.begin() + n);
        auto scaled = [&](float s) {
            for (float v : g) {
                a.push_back(v * s);
            }
        };
        a.insert(a.end(), n, 0.0f);                   // all zero
        a.insert(a.end(), n, 0.375f);                 // constant
        scaled(1e-7f);                                 // scale in f16 subnormals
        scaled(1e-30f);                                // scale underflows f16
        scaled(3e4f);                                  // legacy/K scales near f16 max
        scaled(1e7f);                                  // scales beyond f16 max
        a.insert(a.end(), n, 0.0f);                   // one spike in zeros
        a[a.size() - n / 2] = 100.0f;
        scaled(-1.0f);                                 // negated gaussian
        return a;
    }();
    return rows;
}

/// Encodes the interop rows with `enc` (with and without the imatrix) and checks that
/// our decoder and the reference's give the same bits.
void check_encoded_decodes_alike(int type, bool (*enc)(int, const float *, void *, int64_t, int64_t, const float *)) {
    const std::vector<float> & x       = interop_rows();
    static const auto          imatrix = gk::test::make_imatrix(k_interop_n_per_row);
    int                        checked = 0;
    for (const float * w : {static_cast<const float *>(nullptr), imatrix.data()}) {
        std::vector<uint8_t> q(row_size(type, k_interop_n_per_row) * k_interop_rows);
        if (!enc(type, x.data(), q.data(), k_interop_rows, k_interop_n_per_row, w)) {
            continue;  // e.g. the reference requires an imatrix
        }
        std::vector<float> ours(x.size()), theirs(x.size());
        ASSERT_TRUE(our_decode(type, q.data(), ours.data(), k_interop_rows, k_interop_n_per_row));
        ASSERT_TRUE(ref_decode(type, q.data(), theirs.data(), k_interop_rows, k_interop_n_per_row));
        EXPECT_TRUE(same_bits(ours, theirs, k_interop_n_per_row)) << (w ? "with imatrix" : "without imatrix");
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

#define SKIP_UNLESS(cond, why)   \
    if (!(cond)) {               \
        GTEST_SKIP() << (why);   \
    }

TEST_P(Interop, OurEncodingDecodesAlike) {
    const int t = GetParam();
    SKIP_UNLESS(ref_decoder(t), "the reference has no decoder");
    SKIP_UNLESS(our_has_decoder(t) && our_has_encoder(t), "not implemented (our encoder or decoder)");
    check_encoded_decodes_alike(t, our_encode);
}

TEST_P(Interop, TheirEncodingDecodesAlike) {
    const int t = GetParam();
    SKIP_UNLESS(ref_decoder(t) && ref_has_encoder(t), "the reference has no encoder or decoder");
    SKIP_UNLESS(our_has_decoder(t), "not implemented (our decoder)");
    check_encoded_decodes_alike(t, ref_encode);
}

TEST_P(Interop, RandomBytesDecodeAlike) {
    const int t = GetParam();
    SKIP_UNLESS(ref_decoder(t), "the reference has no decoder");
    SKIP_UNLESS(our_has_decoder(t), "not implemented (our decoder)");
    constexpr int64_t rows = 256;
    const int64_t     n    = 256;
    std::vector<uint8_t> q(row_size(t, n) * rows);
    gk::test::rng        r(0xB17E5ull + static_cast<uint64_t>(t));
    for (uint8_t & b : q) {
        b = static_cast<uint8_t>(r.next() >> 56);
    }
    std::vector<float> ours(static_cast<size_t>(rows * n)), theirs(ours.size());
    ASSERT_TRUE(our_decode(t, q.data(), ours.data(), rows, n));
    ASSERT_TRUE(ref_decode(t, q.data(), theirs.data(), rows, n));
    EXPECT_TRUE(same_bits(ours, theirs, n));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, Interop, testing::ValuesIn(valid_types()), type_param_name);

// ---- encode quality -----------------------------------------------------------------------

/// Rows per family here: more than the default test's, within what stories260K holds.
constexpr int64_t k_vs_quality_rows = 128;

std::vector<int> quality_types() {
    std::vector<int> types;
    for (int t : valid_types()) {
        if (gk::test::quality_measures(static_cast<gk_type>(t))) {
            types.push_back(t);
        }
    }
    return types;
}

class EncodeQuality : public testing::TestWithParam<int> {};

TEST_P(EncodeQuality, OursAtMostSlightlyWorse) {
    const int t = GetParam();
    SKIP_UNLESS(our_has_encoder(t) && our_has_decoder(t), "not implemented (our encoder or decoder)");
    const size_t rs = row_size(t, gk::test::k_quality_n_per_row);
    std::printf("%-8s %-22s %12s %12s %8s\n", gk_type_name(static_cast<gk_type>(t)), "case", "rmse ours", "rmse ggml",
                "ratio");
    for (const quality_case & c : gk::test::quality_cases()) {
        double      ours = 0, theirs = 0;
        std::string err;
        const auto  so = gk::test::measure_quality(t, rs, c, k_vs_quality_rows, our_encode, our_decode, ours, err);
        ASSERT_NE(so, quality_status::no_data) << err;
        const auto st =
            gk::test::measure_quality(t, rs, c, k_vs_quality_rows, ref_encode, ref_decode_for_quality, theirs, err);
        if (so != quality_status::ok || st != quality_status::ok) {
            std::printf("%-8s %-22s %12s %12s %8s\n", "", c.key().c_str(), so == quality_status::ok ? "" : "n/a",
                        st == quality_status::ok ? "" : "n/a", "-");
            continue;
        }
        const double ratio = theirs > 0 ? ours / theirs : (ours > 0 ? INFINITY : 1.0);
        std::printf("%-8s %-22s %12.6g %12.6g %8.4f%s\n", "", c.key().c_str(), ours, theirs, ratio,
                    ratio > gk::test::k_quality_max_ratio ? "  WORSE" : "");
        EXPECT_LE(ratio, gk::test::k_quality_max_ratio) << c.key() << ": ours " << ours << ", ggml " << theirs;
    }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, EncodeQuality, testing::ValuesIn(quality_types()), type_param_name);

// ---- recording the reference figures for test-encode-quality ------------------------------

int record_reference(const char * path) {
    nlohmann::ordered_json rmse = nlohmann::ordered_json::object();
    for (int t : quality_types()) {
        nlohmann::ordered_json row = nlohmann::ordered_json::object();
        for (const quality_case & c : gk::test::quality_cases()) {
            double      v = 0;
            std::string err;
            const auto  s = gk::test::measure_quality(t, row_size(t, gk::test::k_quality_n_per_row), c,
                                                      gk::test::k_quality_rows, ref_encode, ref_decode_for_quality, v, err);
            if (s == quality_status::no_data) {
                std::fprintf(stderr, "test-vs-ggml: %s\n", err.c_str());
                return 1;
            }
            row[c.key()] = s == quality_status::ok ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
        }
        rmse[gk_type_name(static_cast<gk_type>(t))] = row;
    }
    nlohmann::ordered_json doc;
    doc["about"] = "RMSE (imatrix-weighted for +imatrix) of the reference ggml encoders on the rows of "
                   "tests/quant/rows.h; written by test-vs-ggml --record, read by test-encode-quality. "
                   "null: the reference does not encode that case.";
    doc["reference"] = std::string("ggml ") + ggml_version() + " (" + ggml_commit() + ")";
    doc["n_per_row"] = gk::test::k_quality_n_per_row;
    doc["rows"]      = gk::test::k_quality_rows;
    doc["rmse"]      = rmse;
    std::ofstream f(path);
    f << doc.dump(2) << "\n";
    if (!f) {
        std::fprintf(stderr, "test-vs-ggml: cannot write %s\n", path);
        return 1;
    }
    std::printf("wrote %s\n", path);
    return 0;
}

} // namespace

int main(int argc, char ** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--record=", 9) == 0) {
            return record_reference(argv[i] + 9);
        }
    }
    testing::InitGoogleTest(&argc, argv);
    const int rc = RUN_ALL_TESTS();
    ggml_quantize_free();
    return rc;
}
