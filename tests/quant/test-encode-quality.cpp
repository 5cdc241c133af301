// test-encode-quality - every encoder against the reference's recorded error.
//
// For each type and case (row family of rows.h, with or without an imatrix), the RMSE
// of decode(encode(rows)) must be at most k_quality_max_ratio times the reference
// ggml's RMSE on the same rows, recorded in tests/data/encode_quality_ref.json by
// `test-vs-ggml --record=...` (so this test needs no reference build). Types whose
// codec has not landed are skipped. Prints one table row per case.
#include "encode_quality.h"
#include "quant/codec.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using gk::test::quality_case;
using gk::test::quality_status;

const nlohmann::json & reference() {
    static const nlohmann::json doc = [] {
        std::ifstream f(std::string(GK_TEST_DATA) + "/encode_quality_ref.json");
        return f ? nlohmann::json::parse(f, nullptr, false) : nlohmann::json();
    }();
    return doc;
}

bool our_encode(int type, const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return gk::quant::quantize_rows(type, src, dst, nrows, n_per_row, imatrix) ==
           gk_row_size(static_cast<gk_type>(type), n_per_row) * static_cast<size_t>(nrows);
}

bool our_decode(int type, const void * src, float * dst, int64_t nrows, int64_t n_per_row) {
    return gk::quant::dequantize_rows(type, src, dst, nrows, n_per_row);
}

TEST(EncodeQualityRef, RecordedForTheseRows) {
    const nlohmann::json & ref = reference();
    ASSERT_TRUE(ref.is_object()) << "cannot read " GK_TEST_DATA "/encode_quality_ref.json";
    EXPECT_EQ(ref.value("n_per_row", 0), gk::test::k_quality_n_per_row);
    EXPECT_EQ(ref.value("rows", 0), gk::test::k_quality_rows);
    std::printf("reference: %s\n", ref.value("reference", "?").c_str());
}

class EncodeQuality : public testing::TestWithParam<int> {};

TEST_P(EncodeQuality, AtMostSlightlyWorseThanReference) {
    const int                t    = GetParam();
    const char *             name = gk_type_name(static_cast<gk_type>(t));
    const auto *             tt   = gk::quant::get_type_traits(t);
    const nlohmann::json &   ref  = reference();
    if (!tt->from_float || !tt->to_float) {
        GTEST_SKIP() << name << ": not implemented (encoder or decoder)";
    }
    ASSERT_TRUE(ref.is_object() && ref["rmse"].contains(name)) << "no reference figures for " << name;
    const nlohmann::json & row = ref["rmse"][name];
    std::printf("%-8s %-22s %12s %12s %8s\n", name, "case", "rmse ours", "rmse ggml", "ratio");
    const size_t rs = gk_row_size(static_cast<gk_type>(t), gk::test::k_quality_n_per_row);
    for (const quality_case & c : gk::test::quality_cases()) {
        double      ours = 0;
        std::string err;
        const auto  s = gk::test::measure_quality(t, rs, c, gk::test::k_quality_rows, our_encode, our_decode, ours, err);
        ASSERT_NE(s, quality_status::no_data) << err;
        const bool has_ref = row.contains(c.key()) && row[c.key()].is_number();
        if (s != quality_status::ok || !has_ref) {
            std::printf("%-8s %-22s %12s %12s %8s\n", "", c.key().c_str(), s == quality_status::ok ? "" : "n/a",
                        has_ref ? "" : "n/a", "-");
            continue;
        }
        const double theirs = row[c.key()].get<double>();
        const double ratio  = theirs > 0 ? ours / theirs : (ours > 0 ? INFINITY : 1.0);
        std::printf("%-8s %-22s %12.6g %12.6g %8.4f%s\n", "", c.key().c_str(), ours, theirs, ratio,
                    ratio > gk::test::k_quality_max_ratio ? "  WORSE" : "");
        EXPECT_LE(ratio, gk::test::k_quality_max_ratio) << name << " " << c.key() << ": ours " << ours << ", ggml "
                                                        << theirs;
    }
}

std::vector<int> measured_types() {
    std::vector<int> types;
    for (int t = 0; t < GK_TYPE_COUNT; ++t) {
        if (gk_type_is_valid(t) && gk::test::quality_measures(static_cast<gk_type>(t))) {
            types.push_back(t);
        }
    }
    return types;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, EncodeQuality, testing::ValuesIn(measured_types()),
                         [](const testing::TestParamInfo<int> & i) { return gk_type_name(static_cast<gk_type>(i.param)); });

} // namespace
