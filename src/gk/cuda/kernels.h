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
/// mul_mat_id's expert lookup (data null for mul_mat): dst column (u, t) takes weight
/// slab ids[u, t] (i32, strides nb in bytes) and activation row (u % x.ne[1], t); an id
/// outside [0, n_expert) gives a column of zeros and sets *bad (device memory) to 1.
struct expert_ids {
    const char * data;
    int64_t      nb[2];
    int64_t      n_expert;
    int *        bad;
};

/// dst[m, n, i2, i3] = the CPU's dot of weight row (m, i2 / r2, i3 / r3) and activation
/// row (n, i2, i3) (or mul_mat_id's rows: `ids`); weights f32 or f16 (activations then
/// rounded to f16), rows dense.
int mul_mat(const tensor_arg & w, const tensor_arg & x, const tensor_arg & dst, const expert_ids & ids, void * stream);
/// The activation formats of quantized dots (the weight type's vec_dot_type).
enum class act_quant { q8_0, q8_K, q8_1 };
/// The bytes quantize_act writes for x in `kind`.
int64_t act_bytes(act_quant kind, const tensor_arg & x);
/// The rows of f32 x (dense rows, K a multiple of the block) in `kind` as the CPU's
/// activation conversion writes them: per block d (f32; q8_1 then s, f32) then the int8
/// quants, blocks in row order, into `out` (act_bytes).
int quantize_act(act_quant kind, const tensor_arg & x, char * out, void * stream);
/// dst[m, n, i2, i3] = the CPU's integer dot of weight row (m, i2 / r2, i3 / r3) of
/// block format `type` (gk_type's value: device/block_decode.h decodes it) and activation
/// row (n, i2, i3) of `act` (quantize_act's output of x in the type's vec_dot_type), or
/// mul_mat_id's rows (`ids`); `table` the format's table in device memory
/// (device/block_formats.h's block_table), or nullptr for a format without one.
int mul_mat_q(uint32_t type, const tensor_arg & w, const tensor_arg & x, const char * act, const uint32_t * table,
              const tensor_arg & dst, const expert_ids & ids, void * stream);
/// True when the current device has int8 tensor-core fragments (compute capability 7.2+).
bool mma_capable();
/// mul_mat_q of q8_0 (q4 false) or q4_0 (q4 true) weights on tensor cores (mma.cu), for
/// mul_mat (not mul_mat_id): the same result, bit for bit (the block sums are exact
/// integers either way). Only on a device where mma_capable() holds.
int mul_mat_q8_mma(bool q4, const tensor_arg & w, const char * act, const tensor_arg & dst, void * stream);
/// flash_attn_ext of f32 q, f32 / f16 K and V and mask (mask.data null for none), the
/// sinks per head or nullptr, ALiBi slopes per head in device memory or nullptr (1); no
/// softcap.
int flash_attn(const tensor_arg & q, const tensor_arg & k, const tensor_arg & v, const tensor_arg & mask,
               const float * sinks, const tensor_arg & dst, float scale, const float * slopes, void * stream);
/// norm, rms_norm or l2_norm of each row, sums in double as the CPU's.
enum class norm_kind { mean_var, rms, l2 };
int norm(const tensor_arg & a, const tensor_arg & dst, float eps, norm_kind kind, void * stream);
/// dst's flat element f = a's flat element f, f32 / f16 either way (RNE to f16).
int copy(const tensor_arg & a, const tensor_arg & dst, void * stream);
/// Activations with a GLU or on their own (cpu/ops/glu.cpp, unary.cpp): silu (exp_f32's
/// operations), the CPU's f32 GELU and GELU_QUICK through its f16 tables (`table`: 65536
/// f16 bit patterns in device memory, nullptr for the others), relu, neg.
enum class act_kind { silu, gelu, relu, gelu_quick, neg, swiglu_oai };

/// dst = act(x) * g: x, g from a and b (split, b.data not null) or the halves of a's rows
/// (swapped or not); f32, dense rows. swiglu_oai (glu only) uses alpha and limit.
int glu(act_kind act, const tensor_arg & a, const tensor_arg & b, const tensor_arg & dst, bool swapped,
        const uint16_t * table, float alpha, float limit, void * stream);
/// dst = act(a); f32.
int unary(act_kind act, const tensor_arg & a, const tensor_arg & dst, const uint16_t * table, void * stream);
/// dst[:, i1, i2, i3] = row idx[i1, i2, i3] of a, decoded as the codec's to_float: `type`
/// gk_type's value, f32, f16 or a block format (device/block_formats.h's
/// block_rows_decodable; `table` its table in device memory or nullptr, as mul_mat_q's);
/// an index outside [0, a.ne[1]) gives zeros. idx i32, dst f32.
int get_rows(uint32_t type, const tensor_arg & a, const tensor_arg & idx, const uint32_t * table,
             const tensor_arg & dst, void * stream);
/// dst row idx[i1, i2 % .., i3 % ..] = b's row i1 (f32 into f32 or f16; i32 or i64
/// indices; later rows win; an index outside the rows is skipped).
int set_rows(const tensor_arg & b, const tensor_arg & idx, bool idx_i64, const tensor_arg & dst, void * stream);
/// soft_max of f32 rows of a*scale (+ slope[i2] * mask, mask.data null for none), the
/// normaliser summed in double as the CPU's; slopes in device memory or nullptr (1);
/// sinks (per i2) or nullptr.
int soft_max(const tensor_arg & a, const tensor_arg & mask, const tensor_arg & dst, float scale, const float * slopes,
             const float * sinks, void * stream);
/// rope of f32 rows with the CPU's cos / sin table (cs: per token, per pair, c then s, in
/// device memory): pairs (2i, 2i+1) when adjacent, else (i, i + pairs); the rest copied.
int rope(const tensor_arg & a, const tensor_arg & dst, int64_t pairs, bool adjacent, const float * cs, void * stream);
/// group_norm (cpu/ops/norm.cpp): one thread per (group, i3), n_groups groups of
/// ceil(ne2 / n_groups) slices, sums in double in the CPU's order; f32, dense rows.
int group_norm(const tensor_arg & a, const tensor_arg & dst, int n_groups, float eps, void * stream);
/// pad: dst element i is a's element i - lp (per dim; modulo a's size when circular),
/// 0 outside a; f32.
int pad(const tensor_arg & a, const tensor_arg & dst, const int32_t lp[4], bool circular, void * stream);
/// im2col (cpu/ops/conv.cpp): dst element (j, ox, oy, n) (2-D; (j, ox, n) 1-D) with j =
/// (ic KH + ky) KW + kx is b[ox s0 + kx d0 - p0, oy s1 + ky d1 - p1, ic, n], 0 outside b;
/// b f32 or f16, dst f32 or f16 (rounded to nearest even). conv = s0, s1, p0, p1, d0, d1.
int im2col(const tensor_arg & b, const tensor_arg & dst, int64_t kw, int64_t kh, const int32_t conv[6], bool is_2d,
           void * stream);
/// upscale (cpu/ops/resample.cpp) of f32: nearest, or bilinear with the CPU's source
/// coordinates (offset 0.5, or 0 and sf = (out - 1) / (in - 1) with aligned corners) and
/// its weights, each product and sum rounded in the CPU's order.
int upscale(const tensor_arg & a, const tensor_arg & dst, bool bilinear, bool align_corners, void * stream);
/// An empty kernel (the device probe).
int empty(void * stream);

} // namespace gk::cuda::kernels
