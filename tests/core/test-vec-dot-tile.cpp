// test-vec-dot-tile: every tile kernel against the vec_dot of each of its elements (and
// so against the scalar twin, which test-vec-dot holds to vec_dot), bit for bit, over
// weight rows of random bytes (finite scales), partial tiles and column counts from 1 to
// the kernel's maximum. Skips where the build has no tile kernel.
#include "gk/cpu/cpu_features.h"
#include "gk/cpu/kernel_set.h"
#include "gk/cpu/vec_dot.h"
#include "gk/cpu/vec_dot_tile.h"
#include "quant/codec.h"
#include "weight_rows.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {


bool same_bits(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

/// A weight row of `type`: finite values at varied scales for the float types, random
/// bytes with finite scales (weight_rows.h) for the others.
void random_row(gk_type type, std::vector<uint8_t> & row, std::mt19937 & rng) {
    if (type == GK_TYPE_F32 || type == GK_TYPE_F16 || type == GK_TYPE_BF16) {
        const int64_t      n = static_cast<int64_t>(row.size() / gk_type_size(type));
        std::vector<float> f(static_cast<size_t>(n));
        std::normal_distribution<float> g(0.0f, 1.0f);
        for (float & v : f) {
            v = g(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 12) - 6);
        }
        gk::quant::get_type_traits(type)->from_float(f.data(), row.data(), n, nullptr);
        return;
    }
    for (uint8_t & b : row) {
        b = static_cast<uint8_t>(rng());
    }
    fix_scales(type, row, rng);
}

/// In every kernel set the host runs (kernel_set.h), against that set's vec_dot. Where
/// the host grants AMX, the AVX-512 set's integer tiles are their AMX variants (the VNNI
/// tile where AMX did not pay; test-vec-dot-tile-no-amx runs the VNNI ones).
TEST(VecDotTile, EveryElementIsItsVecDot) {
    int kernels = 0;
    for (const gk::cpu::kernel_set * ks : gk::cpu::runnable_kernel_sets()) {
        std::mt19937 rng(2024);
        for (int id = 0; id < GK_TYPE_COUNT; ++id) {
            const auto                          type = static_cast<gk_type>(id);
            const gk::cpu::tile_kernel *        tk   = ks->tile(type);
            const gk::cpu::vec_dot_traits *     vd   = ks->vec_dot(type);
            if (!tk) {
                continue;
            }
            ASSERT_NE(vd, nullptr) << gk_type_name(type);
            ++kernels;
            void * work = std::aligned_alloc(64, (tk->work_bytes + 63) / 64 * 64);
            // the float path: any length, partial registers, rows of one register or less
            // (an attention head of 8); the others whole blocks
            const bool           plain = gk_blck_size(type) == 1;
            std::vector<int64_t> lengths;
            if (plain) {
                lengths = {1, 2, 3, 5, 7, 8, 9, 16, 17, 31, 33};
            }
            for (int64_t nb : {1, 2, 3, 4, 5, 9}) {
                lengths.push_back(plain ? nb * 67 - 3 : nb * gk_blck_size(type));
            }
            for (int64_t n : lengths) {
                const size_t  bx   = gk_row_size(type, n) + 16;  // rows not packed: the stride is honoured
                const size_t  by   = gk_row_size(vd->vec_dot_type, n);
                const int     cols = tk->max_cols;
                std::vector<uint8_t> w(bx * static_cast<size_t>(tk->rows));
                for (int r = 0; r < tk->rows; ++r) {
                    std::vector<uint8_t> row(gk_row_size(type, n));
                    random_row(type, row, rng);
                    ASSERT_FALSE(::testing::Test::HasFatalFailure());
                    std::memcpy(w.data() + r * bx, row.data(), row.size());
                }
                if (plain) {  // a row of -0: its products are -0, and the sum's sign must be vec_dot's
                    const size_t esize = gk_type_size(type);
                    for (int64_t i = 0; i < n; ++i) {
                        std::memset(w.data() + 3 * bx + i * esize, 0, esize);
                        w[3 * bx + i * esize + esize - 1] = 0x80;
                    }
                }
                std::vector<uint8_t> y(by * static_cast<size_t>(cols));
                std::normal_distribution<float> g(0.0f, 1.0f);
                std::vector<float> f(static_cast<size_t>(n));
                for (int c = 0; c < cols; ++c) {
                    const float scale = std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10);
                    for (float & v : f) {  // column 0 positive, so that the -0 row's products are all -0
                        v = (c == 0 ? std::abs(g(rng)) : g(rng)) * scale;
                    }
                    vd->from_float(f.data(), y.data() + c * by, n);
                }
                for (int nr : {tk->rows, 1, 7, tk->rows - 1}) {
                    for (int nc : {1, 2, 5, 16, 17, 33, cols - 1, cols}) {
                        const size_t       ldc = static_cast<size_t>(tk->rows) + 3;
                        std::vector<float> s(ldc * static_cast<size_t>(nc), 12345.0f);
                        tk->fn(n, nr, w.data(), bx, nc, y.data(), by, s.data(), ldc, work);
                        for (int c = 0; c < nc; ++c) {
                            for (int r = 0; r < static_cast<int>(ldc); ++r) {
                                const float got = s[c * ldc + r];
                                if (r >= nr) {
                                    ASSERT_EQ(got, 12345.0f) << "wrote outside its rows";
                                    continue;
                                }
                                float want = NAN;
                                vd->vec_dot(n, &want, w.data() + r * bx, y.data() + c * by);
                                ASSERT_TRUE(same_bits(got, want)) << gk_type_name(type) << " n=" << n << " nr=" << nr
                                                                  << " nc=" << nc << " r=" << r << " c=" << c << ": "
                                                                  << got << " vs " << want;
                            }
                        }
                    }
                }
            }
            std::free(work);
            // the AVX-512 set's integer tiles take their AMX variants where the host grants the tiles
            const bool amx = gk::cpu::host_cpu().amx_usable && std::strcmp(ks->name, "AVX512") == 0 &&
                             type != GK_TYPE_F32 && type != GK_TYPE_F16 && type != GK_TYPE_BF16;
            std::printf("%-7s %-7s tile %dx%d%s: every element equals its vec_dot\n", ks->name, gk_type_name(type),
                        tk->rows, tk->max_cols, amx ? " (AMX host)" : "");
        }
    }
    if (kernels == 0) {
        GTEST_SKIP() << "GK-SKIP: this build has no tile kernel (they are x86: AVX-512 with VNNI, and AVX2 for the integer formats)";
    }
}

} // namespace
