#version 450
#extension GL_GOOGLE_include_directive : require
// set_rows.comp - row i1 of b (f32) to row idx[i1, i2 % ine1, i3 % ine2] of dst[:, :, i2,
// i3], as the CPU kernel (cpu/ops/rows.cpp): MODE bit 0: dst is f16 (f32_to_f16_bits:
// the CPU's rounding; its halves written with atomics); bit 1: the indices are i64
// (little-endian words; one outside [0, rows) skips its row - the CPU reports
// GK_STATUS_OUT_OF_RANGE). One invocation per (i0, i2, i3) walks the source rows in
// order, so of two rows with one index the later wins, as on the CPU.
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;

layout(std430, set = 0, binding = 0) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { uint idx[]; };
layout(std430, set = 0, binding = 2) buffer D { uint d[]; };

layout(push_constant) uniform P {
    uvec4 ne;   // b's shape
    uvec4 bs;
    uvec4 is;   // idx's strides in elements (of 4 or 8 bytes)
    uvec4 ds;   // dst's strides in its elements
    uint  boff, ioff, doff, rows;  // ioff in idx's elements
    uint  ine1, ine2;
} p;

void main() {
    const uint n = p.ne.x * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uint i0 = i % p.ne.x;
        const uint i2 = (i / p.ne.x) % p.ne.z;
        const uint i3 = i / (p.ne.x * p.ne.z);
        for (uint i1 = 0u; i1 < p.ne.y; ++i1) {
            const uint k = p.ioff + i1 * p.is.x + (i2 % p.ine1) * p.is.y + (i3 % p.ine2) * p.is.z;
            uint       r;
            bool       ok;
            if ((MODE & 2u) != 0u) {
                r  = idx[2u * k];
                ok = idx[2u * k + 1u] == 0u && r < p.rows;
            } else {
                r  = idx[k];
                ok = int(r) >= 0 && r < p.rows;
            }
            if (!ok) continue;
            const float x = b[at4(p.boff, p.bs, uvec4(i0, i1, i2, i3))];
            const uint  o = at4(p.doff, p.ds, uvec4(i0, r, i2, i3));
            if ((MODE & 1u) != 0u) {
                const uint shift = 16u * (o & 1u);
                atomicAnd(d[o >> 1], ~(0xFFFFu << shift));
                atomicOr(d[o >> 1], f32_to_f16_bits(x) << shift);
            } else {
                d[o] = floatBitsToUint(x);
            }
        }
    }
}
