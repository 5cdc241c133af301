#version 450
#extension GL_GOOGLE_include_directive : require
// mul_mat_q.comp - mul_mat of block-format weights against activations already in the
// weight type's vec_dot_type (quantize_act.comp, binding 3), as the CPU's integer dots
// (cpu/vec_dot_*.cpp; the scalar twins): per unit (a block of 32, nvfp4's 16, or a
// super-block of 256) an exact integer sum, then chain u % 4 += d * float(isum) by a fused
// multiply-add (and the offset or min term), and the dot (c0 + c1) + (c2 + c3). The
// formats' decoding is device/block_decode.h, shared with the CUDA kernels. MODE: bits
// 0-7 the weight type (gk_type's value), bit 8 the fused multiply-add by fma_exact
// (index.glsl). The weights are read in bytes (blocks need not be 4-byte aligned); the
// format's table (a codebook or a lattice grid: device/block_formats.h's block_table) is at
// binding 3 from word p.toff, put there by the host from gk's own tables. Bit 9:
// mul_mat_id (weight_row, act_row in mul_mat_push.glsl; an id outside the experts gives 0
// and sets the word eoff of binding 3). One invocation per output element.
#include "index.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;
const uint TYPE  = MODE & 255u;
const bool EXACT = (MODE & 256u) != 0u;
const bool ID    = (MODE & 512u) != 0u;

layout(std430, set = 0, binding = 0) readonly buffer A { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };
layout(std430, set = 0, binding = 3) buffer Q { uint aq[]; };  // the activations; the bad-id word

#include "mul_mat_push.glsl"

#define GK_DEV
#define GK_CONST const
uint  wbyte(uint o) { return (w[o >> 2] >> (8u * (o & 3u))) & 0xFFu; }
float whalf(uint o) { return half_at(w[o >> 2], o >> 1); }
uint  wtable(uint i) { return aq[p.toff + i]; }
float bits_to_float(uint b) { return uintBitsToFloat(b); }
float half_bits_to_float(uint h) { return unpackHalf2x16(h).x; }
#include "block_decode.h"

/// Quant e of the activation block at word ab (hw header words before the quants).
int act(uint ab, uint hw, uint e) { return int(aq[ab + hw + e / 4u] << (24u - 8u * (e & 3u))) >> 24; }

float fmadd(float a, float b, float c) { return EXACT ? fma_exact(a, b, c) : fma(a, b, c); }

void main() {
    const bool kf = k_family(TYPE);
    const uint hw = q8_1_family(TYPE) ? 2u : 1u;        // activation block header words (d, s)
    const uint qa = kf ? 256u : 32u;                    // activation block elements
    const uint bw = hw + qa / 4u;                       // activation block words
    const uint wb = block_bytes(TYPE), qw = qk_w(TYPE), ul = kf ? 256u : unit_len(TYPE);
    const uint n  = p.M * p.N * p.ne2 * p.ne3;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j  = unflatten(i, uvec4(p.M, p.N, p.ne2, p.ne3));
        const uint  w0 = weight_row(j, ID);
        const uint  a0 = p.aoff + act_row(j) * (p.K / qa) * bw;
        float       c[4] = float[4](0.0, 0.0, 0.0, 0.0);
        const bool  bad  = ID && w0 == k_bad_row;
        if (bad) aq[p.eoff] = 1u;
        for (uint u = 0u; u < (bad ? 0u : p.K / ul); ++u) {
            const uint  e0  = u * ul;                        // the unit's first element
            const uint  blk = w0 + (e0 / qw) * wb, j0 = e0 % qw;
            const uint  ab  = a0 + (e0 / qa) * bw;
            const float ad  = uintBitsToFloat(aq[ab]);
            if (kf) {
                int isum = 0, isum_min = 0;
                for (uint g = 0u; g < 16u; ++g) {
                    int dot = 0, asum = 0;
                    for (uint k = 16u * g; k < 16u * g + 16u; ++k) {
                        const int a = act(ab, hw, k);
                        dot += value256(TYPE, blk, k) * a;
                        asum += a;
                    }
                    isum += scale256(TYPE, blk, g) * dot;
                    isum_min += min256(TYPE, blk, g) * asum;
                }
                precise float dd = d256(TYPE, blk) * ad;
                precise float df = dd * factor256(TYPE);
                c[u & 3u]        = fmadd(df, float(isum), c[u & 3u]);
                if (has_dmin(TYPE)) {
                    precise float dm = dmin256(TYPE, blk) * ad;
                    c[u & 3u]        = fmadd(-dm, float(isum_min), c[u & 3u]);
                }
            } else {
                int isum = 0;
                for (uint k = 0u; k < ul; ++k) isum += value32(TYPE, blk, j0 + k) * act(ab, hw, e0 % qa + k);
                precise float dd = unit_scale(TYPE, blk, j0 / ul) * ad;
                c[u & 3u]        = fmadd(dd, float(isum), c[u & 3u]);
                if (has_offset(TYPE)) c[u & 3u] = fmadd(whalf(blk + 2u), uintBitsToFloat(aq[ab + 1u]), c[u & 3u]);
            }
        }
        precise float s01 = c[0] + c[1];
        precise float s23 = c[2] + c[3];
        precise float s   = s01 + s23;
        d[p.doff + j.x + j.y * p.ds1 + j.z * p.ds2 + j.w * p.ds3] = s;
    }
}
