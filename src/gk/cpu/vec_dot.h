// vec_dot.h - dot products of one weight row with one activation row, per weight type:
// the inner kernel of mul_mat.
//
// Each weight type is dotted against the activation format its reference dot uses
// (ggml's type_traits_cpu vec_dot_type): q4_0 q5_0 q8_0 iq4_nl mxfp4 nvfp4 q1_0 q2_0 ->
// q8_0; q4_1 q5_1 q8_1 -> q8_1; the K-quants, i-quants and tq* -> q8_K; f16 -> f16;
// bf16 -> bf16; f32 -> f32. The compute pass converts an f32 activation row once with
// `from_float` and then calls `vec_dot` against every weight row.
//
// Accumulation order (it depends only on the row length n, never on the thread, the
// machine's vector width or the build's SIMD level, provided the target has FMA):
// * float path (f32, f16): element i feeds chain
//   (i / 16) % 4, lane i % 16, each of these 64 partial sums accumulating x[i] * y[i]
//   with a fused multiply-add in increasing i; then per lane (c0 + c1) + (c2 + c3), and
//   the 16 lanes by halving: l += l + 8, l += l + 4, l += l + 2, l += l + 1.
// * bf16: the order of x86's VDPBF16PS (vec_dot_bf16.cpp has it in full): pair p of
//   elements (2p, 2p + 1) feeds chain (p / 16) % 4, lane p % 16, the odd element's
//   product added first, each add rounded once and a subnormal result (or input) flushed
//   to zero; the row zero-padded to whole 32-element steps; then the float path's end.
// * integer path: the products of a block (32 elements for q8_0 / q4_0, a 256-element
//   super-block for the K-quants) are summed exactly in int32; block b then updates
//   chain b % 4 with fused multiply-adds, acc = fma(d, float(isum), acc) (the K-quants
//   with a mins term add acc = fma(-dmin, float(isum_min), acc) after it), with d the
//   f32 product of the weight's and the activation's scales; the result is
//   (c0 + c1) + (c2 + c3). The SIMD kernels and their scalar twins do exactly this, so
//   they agree bit for bit. Vector kernels: x86 (256-bit, AVX2 with VPDPBUSD where the
//   build has AVX-512 VNNI or AVX-VNNI; the AVX-512 build uses them too) and AArch64 NEON
//   (SDOT where present).
//
// Preconditions of every vec_dot: n is a whole number of blocks of the weight type and
// of its vec_dot_type (vec_dot_row_ok() checks it; the kernels do not), the rows hold
// n elements, and an integer-path activation row came from `from_float` (its q8 values
// lie in the encoder's range: the x86 kernels against q8_0 / q8_1 rely on those never
// holding -128, and the q8_K ones on bsums being the true sums). Weight rows may hold
// any bytes.
//
// q4_1 and q5_1 add their offset as ggml does: after chain += d * isum, chain += f32(m) *
// f32(s) with s the q8_1 block's stored f16 sum (d times the sum of its quants). nvfp4's
// units are its 16-element groups (each with its own scale), so block b of the order
// above is group b there.
#pragma once

#include "gk/gk-type.h"

#include <cstddef>
#include <cstdint>

namespace gk::cpu {

/// s[0] = the dot of n elements of weight row `x` with activation row `y`.
using vec_dot_fn = void (*)(int64_t n, float * s, const void * x, const void * y);

/// s[0], s[1] = the dots of n elements of weight rows x and x + bx (bx in bytes) with
/// activation row y, each with the bits vec_dot gives that row alone: the pair shares
/// the activation loads and scales and the reduction of its block sums, never an
/// operation of one row's dot with the other's. Decode (one activation row) takes weight
/// rows in pairs this way where a type has it.
using vec_dot2_fn = void (*)(int64_t n, float * s, const void * x, size_t bx, const void * y);

/// Convert n f32 activations (a whole number of vec_dot_type blocks) to vec_dot_type.
using act_from_float_fn = void (*)(const float * src, void * dst, int64_t n);

/// Convert n values of a plain vec_dot_type (f32, f16, bf16) to f32, exactly.
using act_to_float_fn = void (*)(const void * src, float * dst, int64_t n);

/// How a weight type's dot is computed (tests print it).
enum class dot_path : uint8_t {
    float_simd,   // f32 / f16 / bf16 on the vector layer
    float_scalar, // the same order on a scalar build
    bf16_dpbf16,  // bf16 by the VDPBF16PS instruction (its order is the bf16 order)
    int_simd,     // integer kernel, vectorised
    int_scalar,   // integer kernel, scalar (no vector variant for this build)
};

/// Name of a path ("float-simd", "int-simd", ...).
const char * dot_path_name(dot_path p);

struct vec_dot_traits {
    gk_type           vec_dot_type;    // format of the activation row
    act_from_float_fn from_float;      // f32 -> vec_dot_type
    act_to_float_fn   to_float;        // vec_dot_type -> f32 for f32 / f16 / bf16, else nullptr
    vec_dot_fn        vec_dot;         // the kernel mul_mat calls
    vec_dot_fn        vec_dot_scalar;  // its scalar twin: same order, same bits
    vec_dot2_fn       vec_dot2;        // two weight rows at once, or nullptr
    dot_path          path;
};

/// The dot of weight type `type` in the active kernel set (kernel_set.h), or nullptr for
/// a type with no dot (integers, f64, an invalid id).
const vec_dot_traits * get_vec_dot_traits(gk_type type);

/// True when weight type `type` has a dot and a row of n elements is a whole number of
/// blocks of both the weight type and its vec_dot_type.
bool vec_dot_row_ok(gk_type type, int64_t n);

} // namespace gk::cpu
