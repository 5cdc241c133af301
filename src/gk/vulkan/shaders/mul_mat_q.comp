#version 450
#extension GL_GOOGLE_include_directive : require
// mul_mat_q.comp - mul_mat of block-format weights against activations already in the
// weight type's vec_dot_type (quantize_act.comp, binding 3), as the CPU's integer dots
// (cpu/vec_dot_legacy.cpp, cpu/vec_dot_k.cpp; the scalar twins): per block b an exact
// integer sum, then chain b % 4 += d * float(isum) by a fused multiply-add, and the dot
// (c0 + c1) + (c2 + c3). TYPE (bits 0-1): 0 q8_0 (q), 1 q4_0 (nibble - 8) against q8_0,
// d = f32(weight d) * activation d; 2 q4_K: isum = sum over sub-blocks j of sc_j * dot_j,
// isum_min = sum of m_j * (sum of the activation quants of j), d as above and then
// chain += -(f32(dmin) * activation d) * float(isum_min); 3 q6_K: isum = sum of
// scale_g * (q - 32) * a. Bit 2: the fused multiply-add by fma_exact (index.glsl). Bit
// 3: mul_mat_id (weight_row, act_row in mul_mat_push.glsl; an id outside the experts
// gives 0 and sets the word eoff of binding 3). The weights are read in bytes (blocks
// need not be 4-byte aligned). One invocation per output element.
#include "index.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;
const uint TYPE  = MODE & 3u;
const bool EXACT = (MODE & 4u) != 0u;
const bool ID    = (MODE & 8u) != 0u;
const uint QB    = TYPE < 2u ? 32u : 256u;                                       // elements per block
const uint WB    = TYPE == 0u ? 34u : TYPE == 1u ? 18u : TYPE == 2u ? 144u : 210u;  // weight block bytes
const uint BW    = 1u + QB / 4u;                                                 // activation block words

layout(std430, set = 0, binding = 0) readonly buffer A { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };
layout(std430, set = 0, binding = 3) buffer Q { uint aq[]; };  // the activations; the bad-id word

#include "mul_mat_push.glsl"

uint  byte_at(uint o) { return (w[o >> 2] >> (8u * (o & 3u))) & 0xFFu; }
int   sbyte_at(uint o) { return int(byte_at(o) << 24) >> 24; }
float half_at_byte(uint o) { return half_at(w[o >> 2], o >> 1); }
int   act(uint a0, uint e) { return int(aq[a0 + 1u + e / 4u] << (24u - 8u * (e & 3u))) >> 24; }

float fmadd(float a, float b, float c) { return EXACT ? fma_exact(a, b, c) : fma(a, b, c); }

void main() {
    const uint n  = p.M * p.N * p.ne2 * p.ne3;
    const uint nb = p.K / QB;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j  = unflatten(i, uvec4(p.M, p.N, p.ne2, p.ne3));
        const uint  w0 = weight_row(j, ID);
        const uint  a0 = p.aoff + act_row(j) * nb * BW;
        float       c[4] = float[4](0.0, 0.0, 0.0, 0.0);
        const bool  bad  = ID && w0 == k_bad_row;
        if (bad) aq[p.eoff] = 1u;
        for (uint b = 0u; b < (bad ? 0u : nb); ++b) {
            const uint  blk = w0 + b * WB;
            const uint  ab  = a0 + b * BW;
            const float ad  = uintBitsToFloat(aq[ab]);
            int         isum = 0, isum_min = 0;
            float       wd;
            if (TYPE == 0u) {
                wd = half_at_byte(blk);
                for (uint e = 0u; e < 32u; ++e) isum += sbyte_at(blk + 2u + e) * act(ab, e);
            } else if (TYPE == 1u) {
                wd = half_at_byte(blk);
                for (uint e = 0u; e < 32u; ++e) {
                    const uint qb = byte_at(blk + 2u + e % 16u);
                    isum += (int(e < 16u ? qb & 0xFu : qb >> 4) - 8) * act(ab, e);
                }
            } else if (TYPE == 2u) {
                wd = half_at_byte(blk);
                for (uint s = 0u; s < 8u; ++s) {
                    const uint sc = s < 4u ? byte_at(blk + 4u + s) & 63u
                                           : (byte_at(blk + 8u + s) & 0xFu) | ((byte_at(blk + s) >> 6) << 4);
                    const uint m  = s < 4u ? byte_at(blk + 8u + s) & 63u
                                           : (byte_at(blk + 8u + s) >> 4) | ((byte_at(blk + 4u + s) >> 6) << 4);
                    int dot = 0, asum = 0;
                    for (uint l = 0u; l < 32u; ++l) {
                        const uint qb = byte_at(blk + 16u + 32u * (s / 2u) + l);
                        const int  a  = act(ab, 32u * s + l);
                        dot += int((s & 1u) != 0u ? qb >> 4 : qb & 0xFu) * a;
                        asum += a;
                    }
                    isum += int(sc) * dot;
                    isum_min += int(m) * asum;
                }
            } else {
                wd = half_at_byte(blk + 208u);
                for (uint h = 0u; h < 2u; ++h) {
                    const uint ql = blk + 64u * h, qh = blk + 128u + 32u * h;
                    for (uint l = 0u; l < 32u; ++l) {
                        const uint lo0 = byte_at(ql + l), lo1 = byte_at(ql + l + 32u), hi = byte_at(qh + l);
                        const int  q[4] = int[4](int((lo0 & 0xFu) | ((hi & 3u) << 4)), int((lo1 & 0xFu) | (((hi >> 2) & 3u) << 4)),
                                                 int((lo0 >> 4) | (((hi >> 4) & 3u) << 4)), int((lo1 >> 4) | (((hi >> 6) & 3u) << 4)));
                        for (uint k = 0u; k < 4u; ++k) {
                            const uint e = 128u * h + 32u * k + l;
                            isum += sbyte_at(blk + 192u + e / 16u) * (q[k] - 32) * act(ab, e);
                        }
                    }
                }
            }
            precise float dd = wd * ad;
            c[b & 3u]        = fmadd(dd, float(isum), c[b & 3u]);
            if (TYPE == 2u) {
                precise float dm = half_at_byte(blk + 2u) * ad;
                c[b & 3u]        = fmadd(-dm, float(isum_min), c[b & 3u]);
            }
        }
        precise float s01 = c[0] + c[1];
        precise float s23 = c[2] + c[3];
        precise float s   = s01 + s23;
        d[p.doff + j.x + j.y * p.ds1 + j.z * p.ds2 + j.w * p.ds3] = s;
    }
}
