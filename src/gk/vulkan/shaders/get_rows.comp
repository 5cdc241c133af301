#version 450
#extension GL_GOOGLE_include_directive : require
// get_rows.comp - dst[:, i1, i2, i3] = row idx[i1, i2, i3] of a[:, :, i2, i3], decoded to
// f32 as the CPU does (cpu/ops/rows.cpp through the codecs): TYPE by specialization:
// 0 f32, 1 f16 (exact), 2 q8_0 (q * d), 3 q4_0 ((q - 8) * d), each product rounded
// once (quant/legacy.h). The source is read in bytes (its blocks need not be 4-byte
// aligned). A row index outside the table gives a row of zeros (the CPU reports
// GK_STATUS_OUT_OF_RANGE; the device reads nothing outside the table either way).
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TYPE = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };

layout(push_constant) uniform P {
    uvec4 ne;   // dst
    uvec4 as;   // a's strides in bytes
    uvec4 is;   // idx's strides in elements
    uvec4 ds;
    uint  aoff, ioff, doff, rows;  // aoff in bytes
} p;

uint byte_at(uint o) { return (a[o >> 2] >> (8u * (o & 3u))) & 0xFFu; }
float half_at_byte(uint o) { return half_at(a[o >> 2], o >> 1); }

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, p.ne);
        const int   r = idx[p.ioff + j.y * p.is.x + j.z * p.is.y + j.w * p.is.z];
        float       y = 0.0;
        if (r >= 0 && uint(r) < p.rows) {
            const uint row = p.aoff + uint(r) * p.as.y + j.z * p.as.z + j.w * p.as.w;
            if (TYPE == 0u) {
                y = uintBitsToFloat(a[(row + j.x * 4u) >> 2]);
            } else if (TYPE == 1u) {
                y = half_at_byte(row + j.x * 2u);
            } else if (TYPE == 2u) {
                const uint    blk = row + (j.x / 32u) * 34u;
                const int     q   = int(byte_at(blk + 2u + j.x % 32u) << 24) >> 24;
                precise float v   = float(q) * half_at_byte(blk);
                y = v;
            } else {
                const uint    blk = row + (j.x / 32u) * 18u;
                const uint    e   = j.x % 32u;
                const uint    qb  = byte_at(blk + 2u + e % 16u);
                const int     q   = int(e < 16u ? qb & 0xFu : qb >> 4) - 8;
                precise float v   = float(q) * half_at_byte(blk);
                y = v;
            }
        }
        d[at4(p.doff, p.ds, j)] = y;
    }
}
