// vec_dot_tile_bf16.cpp - the bf16 tile kernel, AVX512-BF16: 2 weight rows x 3 columns
// in registers, one VDPBF16PS per output and 32-element step.
//
// The bf16 order (vec_dot_bf16.cpp) is the instruction's, so an output is its 4 chain
// registers and vec_dot_bf16's steps; 2 x 3 outputs keep 24 accumulators, and each step
// loads 2 weight and 3 activation registers for 6 instructions where vec_dot loads 2 for
// 1. The last step reads zeros past the row's end as vec_dot does, so every output has
// vec_dot_bf16's bits. The table (vec_dot_tile.cpp) lists it only where the host has
// AVX512-BF16; elsewhere mul_mat calls the emulated vec_dot per element.
//
// micro() has the shape of vec_dot_tile_float.cpp's (the chain rounds, the sums): the two
// are not one template because this one needs the avx512bf16 target on the function that
// holds the accumulators, and a shared loop without it could not inline its steps.
#include "vec_dot_tile_impl.h"

#include "vec_dot_impl.h"

#if defined(GK_TILE_AVX512)

namespace gk::cpu::detail {
namespace {

constexpr int     kRows   = 16;  // weight rows per call (pairs of them in turn)
constexpr int     kCols   = 64;  // columns per call
constexpr int     kChains = float_chains;
constexpr int64_t kStep   = 2 * float_lanes;  // elements per instruction: a pair per lane

/// RR x CC outputs (RR <= 2, CC <= 3): rows x[0 .. RR-1] (bx bytes apart) times columns
/// y[0 .. CC-1] (by apart), s[c * ldc + r].
template <int RR, int CC>
__attribute__((target("avx512bf16"))) void micro(int64_t n, const char * x, size_t bx, const char * y, size_t by,
                                                 float * s, size_t ldc) {
    __m512 acc[RR][CC][kChains];
    for (auto & row : acc) {
        for (auto & out : row) {
            for (__m512 & chain : out) {
                chain = _mm512_setzero_ps();
            }
        }
    }
    // chain K of every output += the 32 elements from i (K a template argument, so that
    // the 24 accumulators stay in registers; so do whole steps' plain loads, as in
    // vec_dot_tile_float.cpp's load16); masked-off elements read as zeros
    const auto load = [](const char * p, int64_t i, __mmask32 mask, bool partial) {
        const bf16_t * b = reinterpret_cast<const bf16_t *>(p) + i;
        return partial ? _mm512_maskz_loadu_epi16(mask, b) : _mm512_loadu_si512(b);
    };
    const auto step = [&]<int K, bool Partial = false>(int64_t i, __mmask32 mask)
        __attribute__((target("avx512bf16"))) {
        __m512i w[RR], a[CC];
        for (int r = 0; r < RR; ++r) {
            w[r] = load(x + r * bx, i, mask, Partial);
        }
        for (int c = 0; c < CC; ++c) {
            a[c] = load(y + c * by, i, mask, Partial);
        }
        for (int r = 0; r < RR; ++r) {
            for (int c = 0; c < CC; ++c) {
                acc[r][c][K] = _mm512_dpbf16_ps(acc[r][c][K], (__m512bh)w[r], (__m512bh)a[c]);
            }
        }
    };
    constexpr __mmask32 all = ~__mmask32(0);
    int64_t             i   = 0;
    for (; i + kChains * kStep <= n; i += kChains * kStep) {
        step.template operator()<0>(i, all);
        step.template operator()<1>(i + kStep, all);
        step.template operator()<2>(i + 2 * kStep, all);
        step.template operator()<3>(i + 3 * kStep, all);
    }
    for (; i < n; i += kStep) {  // the last round: whole steps, then a padded one
        const int64_t   left = n - i;
        const __mmask32 mask = left >= kStep ? all : static_cast<__mmask32>((1ull << left) - 1);
        switch ((i / kStep) % kChains) {
        case 0: step.template operator()<0, true>(i, mask); break;
        case 1: step.template operator()<1, true>(i, mask); break;
        case 2: step.template operator()<2, true>(i, mask); break;
        default: step.template operator()<3, true>(i, mask); break;
        }
    }
    store_chain_outputs<RR, CC>(acc, s, ldc);
}

/// micro<RR, CC> as pair_triple_tile calls it.
struct bf16_micro {
    template <int RR, int CC>
    static void run(int64_t n, const char * x, size_t bx, const char * y, size_t by, float * s, size_t ldc) {
        micro<RR, CC>(n, x, bx, y, by, s, ldc);
    }
};

/// The tile kernel (vec_dot_tile.h).
void tile_dot(int64_t n, int nr, const void * x, size_t bx, int nc, const void * y, size_t by, float * s, size_t ldc,
              void *) {
    pair_triple_tile<bf16_micro>(n, nr, x, bx, nc, y, by, s, ldc);
}

}  // namespace

const tile_kernel tile_bf16 = {tile_dot, kRows, kCols, 0, true};

}  // namespace gk::cpu::detail

#endif
