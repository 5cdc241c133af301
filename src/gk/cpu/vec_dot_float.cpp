// vec_dot_float.cpp - the float path: f32 and f16 dots, vector and scalar twin (bf16 has
// its own order: vec_dot_bf16.cpp).
//
// Both implement the order in vec_dot.h: 4 chains x 16 lanes, element i in chain
// (i / 16) % 4 and lane i % 16, fused multiply-adds, then a fixed combination. The vector
// version keeps the 16 lanes of a chain in 16 / vf_lanes registers for the whole row; the
// scalar twin keeps them in an array and walks the elements one by one.
#include "vec_dot_impl.h"

namespace gk::cpu::detail {
namespace {

constexpr int W = simd::vf_lanes;
constexpr int R = float_lanes / W;  // registers per chain
static_assert(float_lanes % W == 0, "a chain is a whole number of registers");

/// The vector dot: the 64 partial sums in registers for the whole row (lane l of the
/// virtual 16 is lane l % W of register l / W), then the fixed combination.
template <elem E> float dot_simd(int64_t n, const void * x, const void * y) {
    simd::vf a[float_chains][R];
    for (auto & chain : a) {
        for (simd::vf & r : chain) {
            r = simd::zero();
        }
    }
    int64_t i = 0;
    for (; i + float_step <= n; i += float_step) {
        for (int c = 0; c < float_chains; ++c) {
            for (int r = 0; r < R; ++r) {
                const int64_t k = i + c * float_lanes + r * W;
                a[c][r] = simd::fmadd(load_vec<E>(x, k), load_vec<E>(y, k), a[c][r]);
            }
        }
    }
    // The last partial round: whole registers first, then the lanes of one register.
    for (; i + W <= n; i += W) {
        const int c = static_cast<int>((i / float_lanes) % float_chains);
        const int r = static_cast<int>((i % float_lanes) / W);
        a[c][r] = simd::fmadd(load_vec<E>(x, i), load_vec<E>(y, i), a[c][r]);
    }
    if (i < n) {
        const int c = static_cast<int>((i / float_lanes) % float_chains);
        const int r = static_cast<int>((i % float_lanes) / W);
        float lanes[W];
        simd::store(lanes, a[c][r]);
        for (int j = 0; i + j < n; ++j) {
            lanes[j] = simd::fmadd_scalar(load_one<E>(x, i + j), load_one<E>(y, i + j), lanes[j]);
        }
        a[c][r] = simd::load(lanes);
    }
    simd::vf t[R];
    for (int r = 0; r < R; ++r) {
        t[r] = simd::add(simd::add(a[0][r], a[1][r]), simd::add(a[2][r], a[3][r]));
    }
    for (int h = R / 2; h >= 1; h /= 2) {  // lanes l and l + 8, l + 4, ... across registers
        for (int r = 0; r < h; ++r) {
            t[r] = simd::add(t[r], t[r + h]);
        }
    }
    return simd::reduce_add(t[0]);  // the same halving within the register
}

/// The scalar twin: the same 64 partial sums as plain floats, element by element.
template <elem E> float dot_scalar(int64_t n, const void * x, const void * y) {
    float a[float_chains][float_lanes] = {};
    for (int64_t i = 0; i < n; ++i) {
        float & p = a[(i / float_lanes) % float_chains][i % float_lanes];
        p         = simd::fmadd_scalar(load_one<E>(x, i), load_one<E>(y, i), p);
    }
    return combine_chains(a);
}

} // namespace

void vec_dot_f32(int64_t n, float * s, const void * x, const void * y) {
    *s = dot_simd<elem::f32>(n, x, y);
}
void vec_dot_f32_scalar(int64_t n, float * s, const void * x, const void * y) {
    *s = dot_scalar<elem::f32>(n, x, y);
}
void vec_dot_f16(int64_t n, float * s, const void * x, const void * y) {
    *s = dot_simd<elem::f16>(n, x, y);
}
void vec_dot_f16_scalar(int64_t n, float * s, const void * x, const void * y) {
    *s = dot_scalar<elem::f16>(n, x, y);
}

} // namespace gk::cpu::detail
