// mma.cu - mul_mat of q8_0 and q4_0 weights on tensor cores (WMMA with int8 fragments,
// compute capability 7.2 and later), with the CPU's bits.
//
// The CPU's integer path (cpu/vec_dot.h) sums each 32-element block's products exactly in
// int32 before any rounding, so the order inside a block does not matter: a tensor core's
// int8 multiply-accumulate into int32 gives the same integer. One warp computes a 16 x 16
// tile of outputs (16 weight rows by 16 activation columns of one (i2, i3) slab). Per block
// b it stages the tile's weight values (q8_0: the stored bytes; q4_0: nibble - 8) and
// activation quants in shared memory, multiplies the two halves of 16 on the tensor core,
// stores the 16 x 16 integer sums, and then each lane applies the CPU's float step to its 8
// outputs: chain b % 4 = fmaf(f32(weight d) * activation d, float(isum), chain), and at the
// end (c0 + c1) + (c2 + c3) - the operations of mul_mat_q_kernel (kernels.cu) and of the
// CPU's twin, so test-device-ops' bit-for-bit comparison with the CPU covers this path.
//
// Compiled for every target; the kernel body exists only for sm_72 and later, and
// ops.cpp uses it only on such a device (mma_capable), with at least k_mma_min_cols
// columns (decode keeps the one-output-per-thread kernel).
#include "kernels.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace gk::cuda::kernels {
namespace {

constexpr int k_tile = 16;  // the int8 fragment's M = N = K
constexpr int k_qk   = 32;  // elements per q8_0 / q4_0 block (and per q8_0 activation block)

/// One warp (32 threads) per 16 x 16 output tile: blockIdx.x the tile, blockIdx.y the slab.
__global__ void mul_mat_q8_mma_kernel(bool q4, tensor_arg w, const char * act, tensor_arg d) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 720
    using namespace nvcuda;
    // Both halves of a block, 16 x 16 each: weights row-major (row r, element k of half h
    // at h * 256 + 16 r + k), activations column-major (column c at h * 256 + 16 c + k):
    // every fragment base is 256 bytes apart, as load_matrix_sync needs.
    __shared__ __align__(32) signed char sw[2 * k_tile * k_tile];
    __shared__ __align__(32) signed char sa[2 * k_tile * k_tile];
    __shared__ __align__(32) int         si[k_tile * k_tile];
    __shared__ float                     swd[k_tile], sad[k_tile];

    const int     lane    = threadIdx.x;
    const int64_t M       = d.ne[0], N = d.ne[1], K = w.ne[0];
    const int64_t tiles_m = (M + k_tile - 1) / k_tile;
    const int64_t m0 = (blockIdx.x % tiles_m) * k_tile, n0 = (blockIdx.x / tiles_m) * k_tile;
    const int64_t i2 = blockIdx.y % d.ne[2], i3 = blockIdx.y / d.ne[2];
    const int64_t r2 = d.ne[2] / w.ne[2], r3 = d.ne[3] / w.ne[3];
    const int64_t nb = K / k_qk, wbytes = q4 ? 18 : 34, abytes = 4 + k_qk;
    const char *  wslab = w.data + (i2 / r2) * w.nb[2] + (i3 / r3) * w.nb[3];
    const char *  aslab = act + (i2 + d.ne[2] * i3) * N * nb * abytes;

    float c[8][4] = {};  // lane's outputs e = lane + 32 t: row e / 16, column e % 16
    wmma::fragment<wmma::matrix_a, k_tile, k_tile, k_tile, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, k_tile, k_tile, k_tile, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, k_tile, k_tile, k_tile, int>                       fc;
    for (int64_t b = 0; b < nb; ++b) {
        for (int e = lane; e < k_tile * k_qk; e += 32) {
            const int r = e / k_qk, k = e % k_qk, at = (k / k_tile) * k_tile * k_tile + r * k_tile + k % k_tile;
            signed char wv = 0, av = 0;
            if (m0 + r < M) {
                const auto * blk = reinterpret_cast<const unsigned char *>(wslab + (m0 + r) * w.nb[1] + b * wbytes);
                wv = q4 ? static_cast<signed char>((k < 16 ? blk[2 + k] & 0xF : blk[2 + k - 16] >> 4) - 8)
                        : static_cast<signed char>(blk[2 + k]);
            }
            if (n0 + r < N) av = static_cast<signed char>(aslab[((n0 + r) * nb + b) * abytes + 4 + k]);
            sw[at] = wv;
            sa[at] = av;  // column r of the activations, element k
        }
        if (lane < k_tile) {
            const auto * blk = reinterpret_cast<const __half *>(wslab + (m0 + lane) * w.nb[1] + b * wbytes);
            swd[lane]        = m0 + lane < M ? __half2float(*blk) : 0.0f;
        } else {
            const int col = lane - k_tile;
            sad[col] = n0 + col < N ? *reinterpret_cast<const float *>(aslab + ((n0 + col) * nb + b) * abytes) : 0.0f;
        }
        __syncwarp();
        wmma::fill_fragment(fc, 0);
        for (int h = 0; h < 2; ++h) {
            wmma::load_matrix_sync(fa, sw + h * k_tile * k_tile, k_tile);
            wmma::load_matrix_sync(fb, sa + h * k_tile * k_tile, k_tile);
            wmma::mma_sync(fc, fa, fb, fc);
        }
        wmma::store_matrix_sync(si, fc, k_tile, wmma::mem_row_major);
        __syncwarp();
        for (int t = 0; t < 8; ++t) {
            const int e = lane + 32 * t;
            c[t][b & 3] = fmaf(__fmul_rn(swd[e / k_tile], sad[e % k_tile]), static_cast<float>(si[e]), c[t][b & 3]);
        }
        __syncwarp();
    }
    for (int t = 0; t < 8; ++t) {
        const int     e = lane + 32 * t;
        const int64_t m = m0 + e / k_tile, n = n0 + e % k_tile;
        if (m < M && n < N) {
            *reinterpret_cast<float *>(d.data + m * d.nb[0] + n * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3]) =
                __fadd_rn(__fadd_rn(c[t][0], c[t][1]), __fadd_rn(c[t][2], c[t][3]));
        }
    }
#endif
}

} // namespace

bool mma_capable() {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        return false;
    }
    return major * 10 + minor >= 72;
}

int mul_mat_q8_mma(bool q4, const tensor_arg & w, const char * act, const tensor_arg & dst, void * stream) {
    const int64_t tiles = ((dst.ne[0] + k_tile - 1) / k_tile) * ((dst.ne[1] + k_tile - 1) / k_tile);
    const int64_t slabs = dst.ne[2] * dst.ne[3];
    if (tiles > 0x7FFFFFFF || slabs > 65535) return static_cast<int>(cudaErrorInvalidConfiguration);
    mul_mat_q8_mma_kernel<<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(slabs)), 32, 0,
                            static_cast<cudaStream_t>(stream)>>>(q4, w, act, dst);
    return static_cast<int>(cudaPeekAtLastError());
}

} // namespace gk::cuda::kernels
