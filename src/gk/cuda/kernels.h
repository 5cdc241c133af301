// kernels.h - the CUDA kernels' launch entry points (kernels.cu) and their arguments:
// device pointers, shapes ne[] in elements and strides nb[] in bytes, as gk_tensor has
// them. Plain types only, so that nvcc and the host compiler read the same layouts.
#pragma once

#include <cstdint>

namespace gk::cuda::kernels {

struct tensor_arg {
    char *  data;
    int64_t ne[4];
    int64_t nb[4];
    bool    f16;  // element type: f16 (else f32)
};

enum class binary_op { add, sub, mul, div };

/// dst = a OP b, b repeated over a's shape; all f32.
int binary(binary_op op, const tensor_arg & a, const tensor_arg & b, const tensor_arg & dst, void * stream);
/// dst = a * s + bias, rounded apart; f32.
int scale(const tensor_arg & a, const tensor_arg & dst, float s, float bias, void * stream);
/// dst[m, n, i2, i3] = the CPU's dot of weight row (m, i2 / r2, i3 / r3) and activation
/// row (n, i2, i3); weights f32 or f16 (activations then rounded to f16), rows dense.
int mul_mat(const tensor_arg & w, const tensor_arg & x, const tensor_arg & dst, void * stream);
/// norm (mean = true) or rms_norm of each row, sums in double as the CPU's.
int norm(const tensor_arg & a, const tensor_arg & dst, float eps, bool mean, void * stream);
/// dst's flat element f = a's flat element f, f32 / f16 either way (RNE to f16).
int copy(const tensor_arg & a, const tensor_arg & dst, void * stream);
/// An empty kernel (the device probe).
int empty(void * stream);

} // namespace gk::cuda::kernels
