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

/// The vector dot of Rows weight rows (x, then every bx bytes) with one activation row:
/// each row's 64 partial sums in registers for the whole row (lane l of the virtual 16 is
/// lane l % W of register l / W), then the fixed combination; the rows share the loads
/// (and f16 conversions) of y. s[row] = row's dot.
template <elem E, int Rows>
void dot_simd(int64_t n, float * s, const void * x, size_t bx, const void * y) {
    const char * xr[Rows];
    for (int row = 0; row < Rows; ++row) {
        xr[row] = static_cast<const char *>(x) + static_cast<size_t>(row) * bx;
    }
    simd::vf a[Rows][float_chains][R];
    for (auto & rows : a) {
        for (auto & chain : rows) {
            for (simd::vf & r : chain) {
                r = simd::zero();
            }
        }
    }
    int64_t i = 0;
    for (; i + float_step <= n; i += float_step) {
        for (int c = 0; c < float_chains; ++c) {
            for (int r = 0; r < R; ++r) {
                const int64_t  k  = i + c * float_lanes + r * W;
                const simd::vf yk = load_vec<E>(y, k);
                for (int row = 0; row < Rows; ++row) {
                    a[row][c][r] = simd::fmadd(load_vec<E>(xr[row], k), yk, a[row][c][r]);
                }
            }
        }
    }
    for (int row = 0; row < Rows; ++row) {
        // The last partial round: whole registers first, then the lanes of one register.
        int64_t j = i;
        for (; j + W <= n; j += W) {
            const int c  = static_cast<int>((j / float_lanes) % float_chains);
            const int r  = static_cast<int>((j % float_lanes) / W);
            a[row][c][r] = simd::fmadd(load_vec<E>(xr[row], j), load_vec<E>(y, j), a[row][c][r]);
        }
        if (j < n) {
            const int c = static_cast<int>((j / float_lanes) % float_chains);
            const int r = static_cast<int>((j % float_lanes) / W);
            float     lanes[W];
            simd::store(lanes, a[row][c][r]);
            for (int l = 0; j + l < n; ++l) {
                lanes[l] = simd::fmadd_scalar(load_one<E>(xr[row], j + l), load_one<E>(y, j + l), lanes[l]);
            }
            a[row][c][r] = simd::load(lanes);
        }
        simd::vf t[R];
        for (int r = 0; r < R; ++r) {
            t[r] = simd::add(simd::add(a[row][0][r], a[row][1][r]), simd::add(a[row][2][r], a[row][3][r]));
        }
        for (int h = R / 2; h >= 1; h /= 2) {  // lanes l and l + 8, l + 4, ... across registers
            for (int r = 0; r < h; ++r) {
                t[r] = simd::add(t[r], t[r + h]);
            }
        }
        s[row] = simd::reduce_add(t[0]);  // the same halving within the register
    }
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

void vec_dot_f32(int64_t n, float * s, const void * x, const void * y) { dot_simd<elem::f32, 1>(n, s, x, 0, y); }
void vec_dot_f32_scalar(int64_t n, float * s, const void * x, const void * y) {
    *s = dot_scalar<elem::f32>(n, x, y);
}
void vec_dot_f16(int64_t n, float * s, const void * x, const void * y) { dot_simd<elem::f16, 1>(n, s, x, 0, y); }
void vec_dot_f32_x2(int64_t n, float * s, const void * x, size_t bx, const void * y) {
    dot_simd<elem::f32, 2>(n, s, x, bx, y);
}
void vec_dot_f16_x2(int64_t n, float * s, const void * x, size_t bx, const void * y) {
    dot_simd<elem::f16, 2>(n, s, x, bx, y);
}
void vec_dot_f16_scalar(int64_t n, float * s, const void * x, const void * y) {
    *s = dot_scalar<elem::f16>(n, x, y);
}

} // namespace gk::cpu::detail
