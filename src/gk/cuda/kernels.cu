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

/// Row r of a tensor of shape ne (rows in dims 1-3, dim 1 fastest): its (i1, i2, i3).
struct row3 {
    int64_t i1, i2, i3;
};

__device__ row3 row_at(int64_t r, const int64_t ne[4]) { return {r % ne[1], (r / ne[1]) % ne[2], r / (ne[1] * ne[2])}; }

/// The first element of row `w` of `t`.
__device__ char * row_ptr(const tensor_arg & t, const row3 & w) {
    return t.data + w.i1 * t.nb[1] + w.i2 * t.nb[2] + w.i3 * t.nb[3];
}

__host__ __device__ int64_t count_of(const tensor_arg & t) { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }
int64_t                     count(const tensor_arg & t) { return count_of(t); }

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

/// The CPU's float dot (cpu/vec_dot.h) of row `a` (f32, or f16 when a16) and f32 row
/// `y` (rounded to f16 first when a16, the CPU's vec_dot_type): 64 partial sums, element
/// k into sum k % 64 by a fused multiply-add, then (s[l] + s[l+16]) + (s[l+32] + s[l+48])
/// and halving 8, 4, 2, 1.
__device__ float dot_rows(const char * a, bool a16, const float * y, int64_t K) {
    float s[64];
    for (int l = 0; l < 64; ++l) s[l] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
        float v = y[k];
        float w;
        if (a16) {
            v = __half2float(__float2half_rn(v));
            w = __half2float(reinterpret_cast<const __half *>(a)[k]);
        } else {
            w = reinterpret_cast<const float *>(a)[k];
        }
        s[k & 63] = fmaf(w, v, s[k & 63]);
    }
    float t[16];
    for (int l = 0; l < 16; ++l) t[l] = __fadd_rn(__fadd_rn(s[l], s[l + 16]), __fadd_rn(s[l + 32], s[l + 48]));
    for (int h = 8; h >= 1; h /= 2) {
        for (int l = 0; l < h; ++l) t[l] = __fadd_rn(t[l], t[l + h]);
    }
    return t[0];
}

/// The weight row dst element j dots: row j0 of slab (j2 / r2, j3 / r3), or for
/// mul_mat_id of slab ids[j1, j2]; nullptr (and *ids.bad set) for an id outside the experts.
__device__ const char * weight_row(const tensor_arg & w, const idx4 & j, int64_t r2, int64_t r3, const expert_ids & ids) {
    if (!ids.data) return w.data + j.i[0] * w.nb[1] + (j.i[2] / r2) * w.nb[2] + (j.i[3] / r3) * w.nb[3];
    const int32_t e = *reinterpret_cast<const int32_t *>(ids.data + j.i[1] * ids.nb[0] + j.i[2] * ids.nb[1]);
    if (e < 0 || e >= ids.n_expert) {
        *ids.bad = 1;
        return nullptr;
    }
    return w.data + j.i[0] * w.nb[1] + e * w.nb[2];
}

__global__ void mul_mat_kernel(tensor_arg w, tensor_arg x, tensor_arg d, expert_ids ids) {
    const int64_t n  = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    const int64_t r2 = x.ne[2] / w.ne[2], r3 = x.ne[3] / w.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4   j  = unflatten(f, d.ne);
        const char * wr = weight_row(w, j, r2, r3, ids);
        const float * xr = reinterpret_cast<const float *>(x.data + (j.i[1] % x.ne[1]) * x.nb[1] + j.i[2] * x.nb[2] + j.i[3] * x.nb[3]);
        *reinterpret_cast<float *>(at(d, j)) = wr ? dot_rows(wr, w.f16, xr, w.ne[0]) : 0.0f;
    }
}

/// quant/legacy.cpp's quantize_block_q8_dot (and its other rule, quantize_block_q8, for
/// blocks with a NaN or an infinity or whose 127 / amax overflows), quantize_row_q8_1_dot
/// (the same, and s = f16(float(sum of q) * d) with the unrounded d) and quant/k_quants.cpp's
/// quantize_row_q8_K, one thread per block of the activations: per block d as f32 (for
/// q8_0 / q8_1 the f16 value), for q8_1 s as f32 (the f16 value), then the quants, into
/// `out` (act_block_bytes(kind) a block).
__device__ float round_away(float v) {
    const float t = truncf(v);
    return fabsf(__fsub_rn(v, t)) >= 0.5f ? __fadd_rn(t, copysignf(1.0f, v)) : t;
}

__host__ __device__ int64_t act_header(act_quant kind) { return kind == act_quant::q8_1 ? 8 : 4; }
__host__ __device__ int64_t act_block(act_quant kind) { return kind == act_quant::q8_K ? 256 : 32; }

__device__ float f16_round(float v) { return __half2float(__float2half_rn(v)); }

__global__ void quantize_act_kernel(act_quant kind, tensor_arg x, char * out) {
    const int64_t QB     = act_block(kind);
    const int64_t nb     = x.ne[0] / QB;
    const int64_t blocks = nb * x.ne[1] * x.ne[2] * x.ne[3];
    const float   rnd    = 12582912.0f;  // 1.5 * 2^23
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < blocks; i += int64_t(gridDim.x) * blockDim.x) {
        const row3    w  = row_at(i / nb, x.ne);
        const float * xr = reinterpret_cast<const float *>(row_ptr(x, w)) + (i % nb) * QB;
        char *        o  = out + i * (act_header(kind) + QB);
        int8_t *      q  = reinterpret_cast<int8_t *>(o + act_header(kind));
        float         d;
        if (kind != act_quant::q8_K) {
            float amax   = 0.0f;
            bool  finite = true;
            for (int j = 0; j < 32; ++j) {
                finite     = finite && isfinite(xr[j]);
                const float a = fabsf(xr[j]);
                amax       = amax < a ? a : amax;
            }
            const float id = amax != 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
            d              = __fdiv_rn(amax, 127.0f);
            int sum        = 0;
            if (!finite || isinf(id)) {
                const float id1 = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
                for (int j = 0; j < 32; ++j) {
                    const float v = __fmul_rn(xr[j], id1);
                    const float c = v < -127.0f ? -127.0f : (127.0f < v ? 127.0f : v);
                    q[j]          = isnan(v) ? 0 : static_cast<int8_t>(round_away(c));
                    sum += q[j];
                }
            } else {
                for (int j = 0; j < 32; ++j) {
                    q[j] = static_cast<int8_t>(__fsub_rn(__fadd_rn(__fmul_rn(xr[j], id), rnd), rnd));
                    sum += q[j];
                }
            }
            if (kind == act_quant::q8_1)
                *reinterpret_cast<float *>(o + 4) = f16_round(__fmul_rn(static_cast<float>(sum), d));
            d = f16_round(d);
        } else {
            float amax = 0.0f, vmax = 0.0f;
            for (int j = 0; j < 256; ++j) {
                if (fabsf(xr[j]) > amax) {
                    amax = fabsf(xr[j]);
                    vmax = xr[j];
                }
            }
            const float iscale = amax != 0.0f ? __fdiv_rn(-127.0f, vmax) : 0.0f;
            d                  = amax != 0.0f ? __fdiv_rn(1.0f, iscale) : 0.0f;
            for (int j = 0; j < 256; ++j) {
                float v = __fmul_rn(iscale, xr[j]);
                v       = v > -128.0f ? v : -128.0f;
                v       = v < 127.0f ? v : 127.0f;
                q[j]    = static_cast<int8_t>(__fsub_rn(__fadd_rn(v, rnd), rnd));
            }
        }
        *reinterpret_cast<float *>(o) = d;
    }
}

/// The block formats' decoding (device/block_decode.h, shared with the Vulkan shader
/// mul_mat_q.comp) and the row loops over it (device/block_row.h, shared with
/// test-block-decode) over one weight row and the format's table.
struct block_reader {
    using uint = unsigned int;
    const unsigned char * wrow_;
    const uint32_t *      table_;

    __device__ uint  wbyte(uint o) const { return wrow_[o]; }
    __device__ float whalf(uint o) const { return half_bits_to_float(wrow_[o] | (wrow_[o + 1] << 8)); }
    __device__ uint  wtable(uint i) const { return table_[i]; }
    __device__ float bits_to_float(uint b) const { return __uint_as_float(b); }
    __device__ float half_bits_to_float(uint h) const {
        return __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
    }
    __device__ float fmul(float a, float b) const { return __fmul_rn(a, b); }
    __device__ float fadd(float a, float b) const { return __fadd_rn(a, b); }
    __device__ float fsub(float a, float b) const { return __fsub_rn(a, b); }
    __device__ float ffma(float a, float b, float c) const { return fmaf(a, b, c); }
    __device__ float load_f32(const unsigned char * p) const { return *reinterpret_cast<const float *>(p); }

#define GK_DEV __device__
#define GK_CONST static constexpr
#include "../device/block_decode.h"
#include "../device/block_row.h"
#undef GK_DEV
#undef GK_CONST
};

/// The CPU's integer dots (cpu/vec_dot_*.cpp; the scalar twins): block_row.h's row_dot
/// per output, mul_mat_q.comp's loop operation for operation. mul_mat_id: the weight row
/// by weight_row, the activation row (n % x.ne[1], i2, i3), and a column of zeros for a
/// bad id.
__global__ void mul_mat_q_kernel(uint32_t type, tensor_arg w, tensor_arg x, const char * aq, const uint32_t * table,
                                 tensor_arg d, expert_ids ids) {
    using uint = block_reader::uint;
    block_reader  r{nullptr, table};
    const uint    qa       = r.k_family(type) ? 256u : 32u;                   // activation block elements
    const int64_t ab_bytes = (r.q8_1_family(type) ? 8 : 4) + int64_t{qa};  // and its bytes (d, s, quants)
    const int64_t n        = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    const int64_t r2 = d.ne[2] / w.ne[2], r3 = d.ne[3] / w.ne[3];
    const uint    K = static_cast<uint>(w.ne[0]);
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4 j = unflatten(f, d.ne);
        r.wrow_      = reinterpret_cast<const unsigned char *>(weight_row(w, j, r2, r3, ids));
        const char * ar = aq + (j.i[1] % x.ne[1] + x.ne[1] * (j.i[2] + x.ne[2] * j.i[3])) * (K / qa) * ab_bytes;
        *reinterpret_cast<float *>(at(d, j)) =
            r.wrow_ ? r.row_dot(type, reinterpret_cast<const unsigned char *>(ar), K) : 0.0f;
    }
}

/// cpu/ops/norm.cpp: sums in double, left to right; mean and scale in float (l2: the
/// square root in double, 1 / fmax(float(sqrt(sum2)), eps)).
__global__ void norm_kernel(tensor_arg a, tensor_arg d, float eps, norm_kind kind) {
    const int64_t rows = d.ne[1] * d.ne[2] * d.ne[3];
    const int64_t n    = d.ne[0];
    for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
        const row3    w = row_at(r, d.ne);
        const float * x = reinterpret_cast<const float *>(row_ptr(a, w));
        float *       y = reinterpret_cast<float *>(row_ptr(d, w));
        float         m = 0.0f;
        if (kind == norm_kind::mean_var) {
            double sum = 0.0;
            for (int64_t i = 0; i < n; ++i) sum = __dadd_rn(sum, double(x[i]));
            m = float(__ddiv_rn(sum, double(n)));
        }
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const double c = double(__fsub_rn(x[i], m));
            sum2           = __dadd_rn(sum2, __dmul_rn(c, c));
        }
        const float scale = kind == norm_kind::l2
                                ? __fdiv_rn(1.0f, fmaxf(float(__dsqrt_rn(sum2)), eps))
                                : __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(float(__ddiv_rn(sum2, double(n))), eps)));
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

/// gk's f32 exp (cpu/vec_exp.h, exp_f32), operation for operation; fmaf is fused.
__device__ float exp2_int(int k) { return __int_as_float((k + 127) << 23); }

__device__ float exp_f32(float x) {
    if (isnan(x)) return __fadd_rn(x, x);
    const float z = fmaf(x, 0x1.715476p+0f, 0x1.8p23f);
    const float n = __fsub_rn(z, 0x1.8p23f);
    if (fabsf(n) > 192.0f) return n > 0.0f ? __int_as_float(0x7f800000) : 0.0f;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    const float u = __fmul_rn(b, b);
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                         fmaf(0x1.ffffecp-1f, b, 1.0f));
    const float n1 = fminf(fmaxf(n, -100.0f), 100.0f);
    return __fmul_rn(__fmul_rn(j, exp2_int(static_cast<int>(n1))), exp2_int(static_cast<int>(__fsub_rn(n, n1))));
}

__device__ float from_table(const uint16_t * table, float x) {
    return __half2float(__ushort_as_half(table[__half_as_ushort(__float2half_rn(x))]));
}

__device__ float activate(act_kind act, float x, const uint16_t * table) {
    switch (act) {
    case act_kind::silu: return __fdiv_rn(x, __fadd_rn(1.0f, exp_f32(__fsub_rn(0.0f, x))));
    case act_kind::gelu: return x <= -10.0f ? 0.0f : (x >= 10.0f ? x : from_table(table, x));
    case act_kind::gelu_quick: return from_table(table, x);
    case act_kind::relu: return x > 0.0f ? x : 0.0f;
    default: return -x;
    }
}

__global__ void glu_kernel(act_kind act, tensor_arg a, tensor_arg b, tensor_arg d, bool swapped,
                           const uint16_t * table, float alpha, float limit) {
    const int64_t n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4    j  = unflatten(f, d.ne);
        const float * xa = reinterpret_cast<const float *>(at(a, j));
        float         x, g;
        if (b.data) {
            x = *xa;
            g = *reinterpret_cast<const float *>(at(b, j));
        } else {
            x = swapped ? xa[d.ne[0]] : xa[0];
            g = swapped ? xa[0] : xa[d.ne[0]];
        }
        float y;
        if (act == act_kind::swiglu_oai) {  // cpu/ops/glu.cpp: clamped, x / (1 + exp_f32(-alpha x)) * (g + 1)
            const float xc = limit < x ? limit : x;
            const float gc = g < -limit ? -limit : (limit < g ? limit : g);
            y = __fmul_rn(__fdiv_rn(xc, __fadd_rn(1.0f, exp_f32(__fmul_rn(-alpha, xc)))), __fadd_rn(gc, 1.0f));
        } else {
            y = act == act_kind::gelu && x <= -10.0f ? 0.0f : __fmul_rn(activate(act, x, table), g);
        }
        *reinterpret_cast<float *>(at(d, j)) = y;
    }
}

__global__ void unary_kernel(act_kind act, tensor_arg a, tensor_arg d, const uint16_t * table) {
    const int64_t n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4 j                          = unflatten(f, d.ne);
        *reinterpret_cast<float *>(at(d, j)) = activate(act, load(a, j), table);
    }
}

__global__ void get_rows_kernel(uint32_t type, tensor_arg a, tensor_arg idx, const uint32_t * table, tensor_arg d) {
    using uint = block_reader::uint;
    block_reader  rd{nullptr, table};
    const int64_t n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4    j = unflatten(f, d.ne);
        const int32_t r = *reinterpret_cast<const int32_t *>(idx.data + j.i[1] * idx.nb[0] + j.i[2] * idx.nb[1] +
                                                             j.i[3] * idx.nb[2]);
        float         y = 0.0f;
        if (r >= 0 && r < a.ne[1]) {
            const char * row = a.data + r * a.nb[1] + j.i[2] * a.nb[2] + j.i[3] * a.nb[3];
            const uint   e   = static_cast<uint>(j.i[0]);
            rd.wrow_         = reinterpret_cast<const unsigned char *>(row);
            if (type == 0) {
                y = reinterpret_cast<const float *>(row)[e];
            } else if (type == 1) {
                y = rd.whalf(2 * e);
            } else {
                y = rd.element(type, e);
            }
        }
        *reinterpret_cast<float *>(at(d, j)) = y;
    }
}

/// One thread per (i0, i2, i3) walks the source rows in order: the later of two rows
/// with one index wins, as on the CPU.
__global__ void set_rows_kernel(tensor_arg b, tensor_arg idx, bool i64, tensor_arg d) {
    const int64_t n = b.ne[0] * b.ne[2] * b.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i0 = f % b.ne[0], i2 = (f / b.ne[0]) % b.ne[2], i3 = f / (b.ne[0] * b.ne[2]);
        for (int64_t i1 = 0; i1 < b.ne[1]; ++i1) {
            const char *  k = idx.data + i1 * idx.nb[0] + (i2 % idx.ne[1]) * idx.nb[1] + (i3 % idx.ne[2]) * idx.nb[2];
            const int64_t r = i64 ? *reinterpret_cast<const int64_t *>(k) : *reinterpret_cast<const int32_t *>(k);
            if (r < 0 || r >= d.ne[1]) continue;
            const float x = load(b, idx4{{i0, i1, i2, i3}});
            char *      o = at(d, idx4{{i0, r, i2, i3}});
            if (d.f16) {
                *reinterpret_cast<__half *>(o) = __float2half_rn(x);
            } else {
                *reinterpret_cast<float *>(o) = x;
            }
        }
    }
}

/// cpu/ops/softmax.cpp with alibi.h's softmax_in_place: the row built in dst.
__global__ void soft_max_kernel(tensor_arg a, tensor_arg m, tensor_arg d, float scale, const float * slopes,
                                const float * sinks) {
    const int64_t rows = d.ne[1] * d.ne[2] * d.ne[3];
    const int64_t n    = d.ne[0];
    for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
        const row3    w     = row_at(r, d.ne);
        const float * x     = reinterpret_cast<const float *>(row_ptr(a, w));
        float *       y     = reinterpret_cast<float *>(row_ptr(d, w));
        const float   slope = slopes ? slopes[w.i2] : 1.0f;
        const float   sink  = sinks ? sinks[w.i2] : 0.0f;
        float         mx    = sinks ? sink : -__int_as_float(0x7f800000);
        for (int64_t i = 0; i < n; ++i) {
            float v = __fmul_rn(x[i], scale);
            if (m.data) v = __fadd_rn(v, __fmul_rn(slope, load(m, idx4{{i, w.i1, w.i2 % m.ne[2], w.i3 % m.ne[3]}})));
            y[i] = v;
            mx   = v > mx ? v : mx;
        }
        if (mx == -__int_as_float(0x7f800000)) {
            for (int64_t i = 0; i < n; ++i) y[i] = 0.0f;
            continue;
        }
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            y[i] = exp_f32(__fsub_rn(y[i], mx));
            sum  = __dadd_rn(sum, double(y[i]));
        }
        if (sinks) sum = __dadd_rn(sum, double(exp_f32(__fsub_rn(sink, mx))));
        const float inv = float(__ddiv_rn(1.0, sum));
        for (int64_t i = 0; i < n; ++i) y[i] = __fmul_rn(y[i], inv);
    }
}

/// cpu/ops/attention.cpp, one thread per dst row (head h, query iq, sequence s), K and V
/// f32 or f16 (shaders/flash_attn.comp says the same steps): scores recomputed in each of
/// three passes (max, sum in double, weighted V rows), masked keys (-inf, slope > 0)
/// without their dot, sinks in the max and the normaliser; no softcap.
__device__ float fa_score(const tensor_arg & k, const float * q, const tensor_arg & m, int64_t j, int64_t hk,
                          int64_t s, int64_t iq, int64_t h, float scale, float slope) {
    float mk = 0.0f;
    if (m.data) {
        mk = load(m, idx4{{j, iq, h % m.ne[2], s % m.ne[3]}});
        if (slope > 0.0f && mk == -__int_as_float(0x7f800000)) return mk;
    }
    const float x = __fmul_rn(dot_rows(k.data + j * k.nb[1] + hk * k.nb[2] + s * k.nb[3], k.f16, q, k.ne[0]), scale);
    return m.data ? __fadd_rn(x, __fmul_rn(slope, mk)) : x;
}

__global__ void flash_attn_kernel(tensor_arg q, tensor_arg k, tensor_arg v, tensor_arg m, const float * sinks,
                                  tensor_arg d, float scale, const float * slopes) {
    const int64_t H = q.ne[2], NQ = q.ne[1], rows = H * NQ * q.ne[3], n_kv = k.ne[1], group = q.ne[2] / k.ne[2];
    const float   inf = __int_as_float(0x7f800000);
    for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
        const int64_t h = r % H, iq = (r / H) % NQ, s = r / (H * NQ), hk = h / group;
        const float   slope = slopes ? slopes[h] : 1.0f;
        const float * qr    = reinterpret_cast<const float *>(q.data + iq * q.nb[1] + h * q.nb[2] + s * q.nb[3]);
        float *       y     = reinterpret_cast<float *>(d.data + h * d.nb[1] + iq * d.nb[2] + s * d.nb[3]);
        const float   sink  = sinks ? sinks[h] : 0.0f;
        float         mx    = sinks ? sink : -inf;
        for (int64_t j = 0; j < n_kv; ++j) {
            const float x = fa_score(k, qr, m, j, hk, s, iq, h, scale, slope);
            mx            = x > mx ? x : mx;
        }
        for (int64_t i = 0; i < v.ne[0]; ++i) y[i] = 0.0f;
        if (mx == -inf) continue;
        double sum = 0.0;
        for (int64_t j = 0; j < n_kv; ++j) {
            sum = __dadd_rn(sum, double(exp_f32(__fsub_rn(fa_score(k, qr, m, j, hk, s, iq, h, scale, slope), mx))));
        }
        if (sinks) sum = __dadd_rn(sum, double(exp_f32(__fsub_rn(sink, mx))));
        const float inv = float(__ddiv_rn(1.0, sum));
        for (int64_t j = 0; j < n_kv; ++j) {
            const float wt = __fmul_rn(exp_f32(__fsub_rn(fa_score(k, qr, m, j, hk, s, iq, h, scale, slope), mx)), inv);
            if (wt == 0.0f) continue;
            for (int64_t i = 0; i < v.ne[0]; ++i) y[i] = __fadd_rn(y[i], __fmul_rn(wt, load(v, idx4{{i, j, hk, s}})));
        }
    }
}

/// One thread per pair (in place is safe) or copied element of a row.
__global__ void rope_kernel(tensor_arg a, tensor_arg d, int64_t pairs, bool adjacent, const float * cs) {
    const int64_t units = a.ne[0] - pairs;
    const int64_t n     = units * a.ne[1] * a.ne[2] * a.ne[3];
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const int64_t k = f % units;
        const row3    w = row_at(f / units, a.ne);
        const char *  x = row_ptr(a, w);
        char *        y = row_ptr(d, w);
        if (k >= pairs) {
            const int64_t e                                = 2 * pairs + (k - pairs);
            *reinterpret_cast<float *>(y + e * d.nb[0]) = *reinterpret_cast<const float *>(x + e * a.nb[0]);
            continue;
        }
        const int64_t e0 = adjacent ? 2 * k : k, e1 = adjacent ? 2 * k + 1 : k + pairs;
        const float   x0 = *reinterpret_cast<const float *>(x + e0 * a.nb[0]);
        const float   x1 = *reinterpret_cast<const float *>(x + e1 * a.nb[0]);
        const float   c = cs[2 * (w.i2 * pairs + k)], s = cs[2 * (w.i2 * pairs + k) + 1];
        *reinterpret_cast<float *>(y + e0 * d.nb[0]) = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
        *reinterpret_cast<float *>(y + e1 * d.nb[0]) = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
    }
}

__global__ void group_norm_kernel(tensor_arg a, tensor_arg d, int n_groups, float eps) {
    const int64_t per = (a.ne[2] + n_groups - 1) / n_groups, units = n_groups * a.ne[3];
    for (int64_t u = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; u < units; u += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i3 = u / n_groups, c0 = (u % n_groups) * per;
        const int64_t c1 = c0 + per < a.ne[2] ? c0 + per : a.ne[2];
        double        sum = 0.0;
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                for (int64_t i = 0; i < a.ne[0]; ++i) sum = __dadd_rn(sum, double(load(a, idx4{{i, i1, c, i3}})));
            }
        }
        const double count = double((c1 > c0 ? c1 - c0 : 0) * a.ne[1] * a.ne[0]);
        const float  mean  = count > 0 ? float(__ddiv_rn(sum, count)) : 0.0f;
        double       sum2  = 0.0;
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                for (int64_t i = 0; i < a.ne[0]; ++i) {
                    const double x = double(__fsub_rn(load(a, idx4{{i, i1, c, i3}}), mean));
                    sum2           = __dadd_rn(sum2, __dmul_rn(x, x));
                }
            }
        }
        const float scale =
            count > 0 ? __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(float(__ddiv_rn(sum2, count)), eps))) : 0.0f;
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                for (int64_t i = 0; i < a.ne[0]; ++i) {
                    const idx4 j                          = {{i, i1, c, i3}};
                    *reinterpret_cast<float *>(at(d, j)) = __fmul_rn(__fsub_rn(load(a, j), mean), scale);
                }
            }
        }
    }
}

struct pad_arg {
    int32_t lp[4];
};

__global__ void pad_kernel(tensor_arg a, tensor_arg d, pad_arg lp, bool circular) {
    const int64_t n = count_of(d);
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4 j = unflatten(f, d.ne);
        idx4       k;
        bool       in_a = true;
        for (int q = 0; q < 4; ++q) {
            k.i[q] = j.i[q] - lp.lp[q];
            if (circular) k.i[q] = ((k.i[q] % a.ne[q]) + a.ne[q]) % a.ne[q];
            in_a = in_a && k.i[q] >= 0 && k.i[q] < a.ne[q];
        }
        *reinterpret_cast<float *>(at(d, j)) = in_a ? load(a, k) : 0.0f;
    }
}

struct conv_arg {
    int32_t s0, s1, p0, p1, d0, d1;
};

__global__ void im2col_kernel(tensor_arg b, tensor_arg d, int64_t kw, int64_t kh, conv_arg c, bool is_2d) {
    const int64_t n = count_of(d);
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4    j  = unflatten(f, d.ne);
        const int64_t kx = j.i[0] % kw, ky = (j.i[0] / kw) % kh, ic = j.i[0] / (kw * kh);
        const int64_t x  = j.i[1] * c.s0 + kx * c.d0 - c.p0;
        const int64_t y  = is_2d ? j.i[2] * c.s1 + ky * c.d1 - c.p1 : 0;
        const int64_t nb = is_2d ? j.i[3] : j.i[2];
        const bool    in = x >= 0 && x < b.ne[0] && y >= 0 && y < (is_2d ? b.ne[1] : 1);
        const float   v  = !in ? 0.0f : is_2d ? load(b, idx4{{x, y, ic, nb}}) : load(b, idx4{{x, ic, nb, 0}});
        if (d.f16) {
            *reinterpret_cast<__half *>(at(d, j)) = __float2half_rn(v);
        } else {
            *reinterpret_cast<float *>(at(d, j)) = v;
        }
    }
}

__device__ int64_t clamp_index(int64_t i, int64_t n) { return i < 0 ? 0 : (i > n - 1 ? n - 1 : i); }

/// std::max(0.0f, std::min(t, 1.0f)), comparisons as std's.
__device__ float clamp01(float t) {
    const float m = 1.0f < t ? 1.0f : t;
    return 0.0f < m ? m : 0.0f;
}

__global__ void upscale_kernel(tensor_arg a, tensor_arg d, bool bilinear, bool align_corners) {
    float sf[4];
    for (int q = 0; q < 4; ++q) sf[q] = __fdiv_rn(float(d.ne[q]), float(a.ne[q]));
    float offset = 0.5f;
    if (align_corners) {
        offset = 0.0f;
        for (int q = 0; q < 2; ++q) {
            if (d.ne[q] > 1 && a.ne[q] > 1) sf[q] = __fdiv_rn(float(d.ne[q] - 1), float(a.ne[q] - 1));
        }
    }
    const int64_t n = count_of(d);
    for (int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; f < n; f += int64_t(gridDim.x) * blockDim.x) {
        const idx4    j  = unflatten(f, d.ne);
        const int64_t j2 = int64_t(__fdiv_rn(float(j.i[2]), sf[2])), j3 = int64_t(__fdiv_rn(float(j.i[3]), sf[3]));
        float         v;
        if (!bilinear) {
            v = load(a, idx4{{int64_t(__fdiv_rn(float(j.i[0]), sf[0])), int64_t(__fdiv_rn(float(j.i[1]), sf[1])), j2, j3}});
        } else {
            const float   x  = __fsub_rn(__fdiv_rn(__fadd_rn(float(j.i[0]), offset), sf[0]), offset);
            const float   y  = __fsub_rn(__fdiv_rn(__fadd_rn(float(j.i[1]), offset), sf[1]), offset);
            const int64_t fx = int64_t(floorf(x)), fy = int64_t(floorf(y));
            const int64_t x0 = clamp_index(fx, a.ne[0]), x1 = clamp_index(fx + 1, a.ne[0]);
            const int64_t y0 = clamp_index(fy, a.ne[1]), y1 = clamp_index(fy + 1, a.ne[1]);
            const float   dx = clamp01(__fsub_rn(x, float(x0)));
            const float   dy = clamp01(__fsub_rn(y, float(y0)));
            const float   ex = __fsub_rn(1.0f, dx), ey = __fsub_rn(1.0f, dy);
            const float   t0 = __fmul_rn(__fmul_rn(load(a, idx4{{x0, y0, j2, j3}}), ex), ey);
            const float   t1 = __fmul_rn(__fmul_rn(load(a, idx4{{x1, y0, j2, j3}}), dx), ey);
            const float   t2 = __fmul_rn(__fmul_rn(load(a, idx4{{x0, y1, j2, j3}}), ex), dy);
            const float   t3 = __fmul_rn(__fmul_rn(load(a, idx4{{x1, y1, j2, j3}}), dx), dy);
            v                = __fadd_rn(__fadd_rn(__fadd_rn(t0, t1), t2), t3);
        }
        *reinterpret_cast<float *>(at(d, j)) = v;
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

int mul_mat(const tensor_arg & w, const tensor_arg & x, const tensor_arg & dst, const expert_ids & ids, void * stream) {
    mul_mat_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(w, x, dst, ids);
    return status(stream);
}

int norm(const tensor_arg & a, const tensor_arg & dst, float eps, norm_kind kind, void * stream) {
    const int64_t rows = dst.ne[1] * dst.ne[2] * dst.ne[3];
    norm_kernel<<<blocks(rows), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst, eps, kind);
    return status(stream);
}

int copy(const tensor_arg & a, const tensor_arg & dst, void * stream) {
    copy_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst);
    return status(stream);
}

int glu(act_kind act, const tensor_arg & a, const tensor_arg & b, const tensor_arg & dst, bool swapped,
        const uint16_t * table, float alpha, float limit, void * stream) {
    glu_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(act, a, b, dst, swapped, table,
                                                                                        alpha, limit);
    return status(stream);
}

int unary(act_kind act, const tensor_arg & a, const tensor_arg & dst, const uint16_t * table, void * stream) {
    unary_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(act, a, dst, table);
    return status(stream);
}

int get_rows(uint32_t type, const tensor_arg & a, const tensor_arg & idx, const uint32_t * table,
             const tensor_arg & dst, void * stream) {
    get_rows_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(type, a, idx, table, dst);
    return status(stream);
}

int set_rows(const tensor_arg & b, const tensor_arg & idx, bool idx_i64, const tensor_arg & dst, void * stream) {
    set_rows_kernel<<<blocks(b.ne[0] * b.ne[2] * b.ne[3]), k_block, 0, static_cast<cudaStream_t>(stream)>>>(
        b, idx, idx_i64, dst);
    return status(stream);
}

int soft_max(const tensor_arg & a, const tensor_arg & mask, const tensor_arg & dst, float scale,
             const float * slopes, const float * sinks, void * stream) {
    const int64_t rows = dst.ne[1] * dst.ne[2] * dst.ne[3];
    soft_max_kernel<<<blocks(rows), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, mask, dst, scale, slopes,
                                                                                      sinks);
    return status(stream);
}

int64_t act_bytes(act_quant kind, const tensor_arg & x) {
    return count(x) / act_block(kind) * (act_header(kind) + act_block(kind));
}

int quantize_act(act_quant kind, const tensor_arg & x, char * out, void * stream) {
    const int64_t n = count(x) / act_block(kind);
    quantize_act_kernel<<<blocks(n), k_block, 0, static_cast<cudaStream_t>(stream)>>>(kind, x, out);
    return status(stream);
}

int mul_mat_q(uint32_t type, const tensor_arg & w, const tensor_arg & x, const char * act, const uint32_t * table,
              const tensor_arg & dst, const expert_ids & ids, void * stream) {
    mul_mat_q_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(type, w, x, act, table, dst,
                                                                                          ids);
    return status(stream);
}

int flash_attn(const tensor_arg & q, const tensor_arg & k, const tensor_arg & v, const tensor_arg & mask,
               const float * sinks, const tensor_arg & dst, float scale, const float * slopes, void * stream) {
    const int64_t rows = q.ne[1] * q.ne[2] * q.ne[3];
    flash_attn_kernel<<<blocks(rows), k_block, 0, static_cast<cudaStream_t>(stream)>>>(q, k, v, mask, sinks, dst, scale,
                                                                                        slopes);
    return status(stream);
}

int rope(const tensor_arg & a, const tensor_arg & dst, int64_t pairs, bool adjacent, const float * cs, void * stream) {
    const int64_t units = (a.ne[0] - pairs) * a.ne[1] * a.ne[2] * a.ne[3];
    rope_kernel<<<blocks(units), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst, pairs, adjacent, cs);
    return status(stream);
}

int group_norm(const tensor_arg & a, const tensor_arg & dst, int n_groups, float eps, void * stream) {
    group_norm_kernel<<<blocks(n_groups * a.ne[3]), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst, n_groups,
                                                                                                    eps);
    return status(stream);
}

int pad(const tensor_arg & a, const tensor_arg & dst, const int32_t lp[4], bool circular, void * stream) {
    pad_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(
        a, dst, pad_arg{{lp[0], lp[1], lp[2], lp[3]}}, circular);
    return status(stream);
}

int im2col(const tensor_arg & b, const tensor_arg & dst, int64_t kw, int64_t kh, const int32_t conv[6], bool is_2d,
           void * stream) {
    im2col_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(
        b, dst, kw, kh, conv_arg{conv[0], conv[1], conv[2], conv[3], conv[4], conv[5]}, is_2d);
    return status(stream);
}

int upscale(const tensor_arg & a, const tensor_arg & dst, bool bilinear, bool align_corners, void * stream) {
    upscale_kernel<<<blocks(count(dst)), k_block, 0, static_cast<cudaStream_t>(stream)>>>(a, dst, bilinear,
                                                                                          align_corners);
    return status(stream);
}

int empty(void * stream) {
    empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
    return status(stream);
}

} // namespace gk::cuda::kernels
