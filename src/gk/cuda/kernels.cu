// kernels.cu - the CUDA kernels (kernels.h). Each is a second implementation of a CPU
// kernel, operation for operation: built with -fmad=false and IEEE division and square
// root, products and sums round where the CPU's do, and fmaf where the CPU fuses.
#include "kernels.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace gk::cuda::kernels {
namespace {

constexpr int k_block = 256;

struct idx4 {
    int64_t i[4];
};

__device__ idx4 unflatten(int64_t f, const int64_t ne[4]) {
    idx4 r;
    for (int d = 0; d < 4; ++d) {
        r.i[d] = f % ne[d];
        f /= ne[d];
    }
    return r;
}

__device__ char * at(const tensor_arg & t, const idx4 & j) {
    return t.data + j.i[0] * t.nb[0] + j.i[1] * t.nb[1] + j.i[2] * t.nb[2] + j.i[3] * t.nb[3];
}

__device__ float load(const tensor_arg & t, const idx4 & j) {
    return t.f16 ? __half2float(*reinterpret_cast<const __half *>(at(t, j))) : *reinterpret_cast<const float *>(at(t, j));
}

int64_t count(const tensor_arg & t) { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }

int blocks(int64_t n) {
    const int64_t b = (n + k_block - 1) / k_block;
    return static_cast<int>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

int status(void * stream) { return static_cast<int>(cudaPeekAtLastError()); }

__global__ void binary_kernel(binary_op op, tensor_arg a, tensor_arg b, tensor_arg d) {
    const int64_t n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4 j = unflatten(f, d.ne);
        idx4       k;
        for (int q = 0; q < 4; ++q) k.i[q] = j.i[q] % b.ne[q];
        const float x = load(a, j), y = load(b, k);
        const float z = op == binary_op::add   ? __fadd_rn(x, y)
                        : op == binary_op::sub ? __fsub_rn(x, y)
                        : op == binary_op::mul ? __fmul_rn(x, y)
                                               : __fdiv_rn(x, y);
        *reinterpret_cast<float *>(at(d, j)) = z;
    }
}

__global__ void scale_kernel(tensor_arg a, tensor_arg d, float s, float bias) {
    const int64_t n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4 j                          = unflatten(f, d.ne);
        *reinterpret_cast<float *>(at(d, j)) = __fadd_rn(__fmul_rn(load(a, j), s), bias);
    }
}

/// The CPU's dot (cpu/vec_dot.h): 64 partial sums, element k into sum k % 64 by a fused
/// multiply-add, then (s[l] + s[l+16]) + (s[l+32] + s[l+48]) and halving 8, 4, 2, 1.
__global__ void mul_mat_kernel(tensor_arg w, tensor_arg x, tensor_arg d) {
    const int64_t n  = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    const int64_t K  = w.ne[0];
    const int64_t r2 = x.ne[2] / w.ne[2], r3 = x.ne[3] / w.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4   j  = unflatten(f, d.ne);
        const char * wr = w.data + j.i[0] * w.nb[1] + (j.i[2] / r2) * w.nb[2] + (j.i[3] / r3) * w.nb[3];
        const float * xr = reinterpret_cast<const float *>(x.data + j.i[1] * x.nb[1] + j.i[2] * x.nb[2] + j.i[3] * x.nb[3]);
        float s[64];
        for (int l = 0; l < 64; ++l) s[l] = 0.0f;
        for (int64_t k = 0; k < K; ++k) {
            float y = xr[k];
            float a;
            if (w.f16) {
                y = __half2float(__float2half_rn(y));
                a = __half2float(reinterpret_cast<const __half *>(wr)[k]);
            } else {
                a = reinterpret_cast<const float *>(wr)[k];
            }
            s[k & 63] = fmaf(a, y, s[k & 63]);
        }
        float t[16];
        for (int l = 0; l < 16; ++l) t[l] = __fadd_rn(__fadd_rn(s[l], s[l + 16]), __fadd_rn(s[l + 32], s[l + 48]));
        for (int h = 8; h >= 1; h /= 2) {
            for (int l = 0; l < h; ++l) t[l] = __fadd_rn(t[l], t[l + h]);
        }
        *reinterpret_cast<float *>(at(d, j)) = t[0];
    }
}

/// cpu/ops/norm.cpp: sums in double, left to right; mean and scale in float.
__global__ void norm_kernel(tensor_arg a, tensor_arg d, float eps, bool mean) {
    const int64_t rows = d.ne[1] * d.ne[2] * d.ne[3];
    const int64_t n    = d.ne[0];
    for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i1 = r % d.ne[1], i2 = (r / d.ne[1]) % d.ne[2], i3 = r / (d.ne[1] * d.ne[2]);
        const float * x  = reinterpret_cast<const float *>(a.data + i1 * a.nb[1] + i2 * a.nb[2] + i3 * a.nb[3]);
        float *       y  = reinterpret_cast<float *>(d.data + i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3]);
        float         m  = 0.0f;
        if (mean) {
            double sum = 0.0;
            for (int64_t i = 0; i < n; ++i) sum = __dadd_rn(sum, double(x[i]));
            m = float(__ddiv_rn(sum, double(n)));
        }
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const double c = double(__fsub_rn(x[i], m));
            sum2           = __dadd_rn(sum2, __dmul_rn(c, c));
        }
        const float scale = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(float(__ddiv_rn(sum2, double(n))), eps)));
        for (int64_t i = 0; i < n; ++i) y[i] = __fmul_rn(__fsub_rn(x[i], m), scale);
    }
}

__global__ void copy_kernel(tensor_arg a, tensor_arg d) {
    const int64_t n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const float v = load(a, unflatten(f, a.ne));
        char *      o = at(d, unflatten(f, d.ne));
        if (d.f16) {
            *reinterpret_cast<__half *>(o) = __float2half_rn(v);
        } else {
            *reinterpret_cast<float *>(o) = v;
        }
    }
}

__global__ void empty_kernel() {}

} // namespace

int binary(binary_op op, const tensor_arg & a, const tensor_arg & b, const tensor_arg & dst, void * stream) {
    binary_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(op, a, b, dst);
    return status(stream);
}

int scale(const tensor_arg & a, const tensor_arg & dst, float s, float bias, void * stream) {
    scale_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst, s, bias);
    return status(stream);
}

int mul_mat(const tensor_arg & w, const tensor_arg & x, const tensor_arg & dst, void * stream) {
    mul_mat_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(w, x, dst);
    return status(stream);
}

int norm(const tensor_arg & a, const tensor_arg & dst, float eps, bool mean, void * stream) {
    const int64_t rows = dst.ne[1] * dst.ne[2] * dst.ne[3];
    norm_kernel<<<blocks(rows), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst, eps, mean);
    return status(stream);
}

int copy(const tensor_arg & a, const tensor_arg & dst, void * stream) {
    copy_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst);
    return status(stream);
}

int empty(void * stream) {
    empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
    return status(stream);
}

} // namespace gk::cuda::kernels
