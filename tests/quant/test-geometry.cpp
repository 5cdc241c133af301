// Block geometry of every type: ids, names, elements and bytes per block, row sizes.
#include "gk/gk-type.h"

#include <gtest/gtest.h>

#include <set>

TEST(Geometry, ValidIdsAreExactlyThePublishedOnes) {
    const std::set<int> removed = {4, 5, 31, 32, 33, 36, 37, 38};
    for (int id = -3; id < GK_TYPE_COUNT + 5; ++id) {
        const bool expect = id >= 0 && id < GK_TYPE_COUNT && !removed.count(id);
        EXPECT_EQ(gk_type_is_valid(id), expect) << "id " << id;
    }
}

TEST(Geometry, BlockSizesAndBytes) {
    struct row { gk_type t; int64_t blck; size_t bytes; };
    // Values from the block structs of ggml-common.h (sizeof each block_*).
    const row rows[] = {
        {GK_TYPE_F32, 1, 4},       {GK_TYPE_F16, 1, 2},       {GK_TYPE_BF16, 1, 2},
        {GK_TYPE_F64, 1, 8},       {GK_TYPE_I8, 1, 1},        {GK_TYPE_I16, 1, 2},
        {GK_TYPE_I32, 1, 4},       {GK_TYPE_I64, 1, 8},       {GK_TYPE_Q4_0, 32, 18},
        {GK_TYPE_Q4_1, 32, 20},    {GK_TYPE_Q5_0, 32, 22},    {GK_TYPE_Q5_1, 32, 24},
        {GK_TYPE_Q8_0, 32, 34},    {GK_TYPE_Q8_1, 32, 36},    {GK_TYPE_Q2_K, 256, 84},
        {GK_TYPE_Q3_K, 256, 110},  {GK_TYPE_Q4_K, 256, 144},  {GK_TYPE_Q5_K, 256, 176},
        {GK_TYPE_Q6_K, 256, 210},  {GK_TYPE_Q8_K, 256, 292},  {GK_TYPE_IQ2_XXS, 256, 66},
        {GK_TYPE_IQ2_XS, 256, 74}, {GK_TYPE_IQ2_S, 256, 82},  {GK_TYPE_IQ3_XXS, 256, 98},
        {GK_TYPE_IQ3_S, 256, 110}, {GK_TYPE_IQ1_S, 256, 50},  {GK_TYPE_IQ1_M, 256, 56},
        {GK_TYPE_IQ4_NL, 32, 18},  {GK_TYPE_IQ4_XS, 256, 136}, {GK_TYPE_TQ1_0, 256, 54},
        {GK_TYPE_TQ2_0, 256, 66},  {GK_TYPE_MXFP4, 32, 17},   {GK_TYPE_NVFP4, 64, 36},
        {GK_TYPE_Q1_0, 128, 18},   {GK_TYPE_Q2_0, 64, 18},
    };
    EXPECT_EQ(sizeof(rows) / sizeof(rows[0]), 35u);
    for (const row & r : rows) {
        SCOPED_TRACE(gk_type_name(r.t));
        EXPECT_EQ(gk_blck_size(r.t), r.blck);
        EXPECT_EQ(gk_type_size(r.t), r.bytes);
        EXPECT_EQ(gk_is_quantized(r.t), r.blck > 1);
        EXPECT_TRUE(gk_row_len_ok(r.t, 0));
        EXPECT_TRUE(gk_row_len_ok(r.t, r.blck * 3));
        EXPECT_EQ(gk_row_size(r.t, r.blck * 3), 3 * r.bytes);
        if (r.blck > 1) {
            EXPECT_FALSE(gk_row_len_ok(r.t, r.blck + 1));
            EXPECT_EQ(gk_row_size(r.t, r.blck + 1), 0u);
        }
        EXPECT_FALSE(gk_row_len_ok(r.t, -r.blck));
    }
}

TEST(Geometry, NamesRoundTrip) {
    for (int id = 0; id < GK_TYPE_COUNT; ++id) {
        if (!gk_type_is_valid(id)) {
            EXPECT_STREQ(gk_type_name(static_cast<gk_type>(id)), "?");
            continue;
        }
        gk_type back = GK_TYPE_COUNT;
        ASSERT_TRUE(gk_type_from_name(gk_type_name(static_cast<gk_type>(id)), &back));
        EXPECT_EQ(back, id);
    }
    gk_type t;
    EXPECT_TRUE(gk_type_from_name("Q4_K", &t));
    EXPECT_EQ(t, GK_TYPE_Q4_K);
    EXPECT_FALSE(gk_type_from_name("q4_2", &t));
    EXPECT_FALSE(gk_type_from_name(nullptr, &t));
}
