#version 450
#extension GL_GOOGLE_include_directive : require
// get_rows.comp - dst[:, i1, i2, i3] = row idx[i1, i2, i3] of a[:, :, i2, i3], decoded to
// f32 as the CPU does (cpu/ops/rows.cpp through the codecs' to_float): TYPE (gk_type's
// value) by specialization: f32, f16 (exact), or a block format of device/block_decode.h
// but the lattice i-quants. The blocks of 32 (and q1_0 / q2_0 / nvfp4's) decode as
// float(value) * scale, one rounded product, q4_1 / q5_1 adding their m after it
// (quant/legacy.cpp, fp4.cpp, low_bit.cpp); the super-blocks as dl * float(value), dl =
// f32(d) * float(sc) of the element's group, q2_K / q4_K / q5_K then subtracting
// ml = f32(dmin) * float(m) (quant/k_quants.cpp, fp4.cpp's iq4_xs, low_bit.cpp's tq1_0 /
// tq2_0, whose sc is 1). The source is read in bytes (its blocks need not be 4-byte
// aligned); a codebook is at binding 3 from word p.toff. A row index outside the table
// gives a row of zeros (the CPU reports GK_STATUS_OUT_OF_RANGE; the device reads nothing
// outside the table either way).
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TYPE = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };
layout(std430, set = 0, binding = 3) readonly buffer T { uint tab[]; };

layout(push_constant) uniform P {
    uvec4 ne;   // dst
    uvec4 as;   // a's strides in bytes
    uvec4 is;   // idx's strides in elements
    uvec4 ds;
    uint  aoff, ioff, doff, rows;  // aoff in bytes
    uint  toff;                    // the codebook's first word at binding 3
} p;

#define GK_DEV
#define GK_CONST const
uint  wbyte(uint o) { return (a[o >> 2] >> (8u * (o & 3u))) & 0xFFu; }
float whalf(uint o) { return half_at(a[o >> 2], o >> 1); }
uint  wtable(uint i) { return tab[p.toff + i]; }
float bits_to_float(uint b) { return uintBitsToFloat(b); }
float half_bits_to_float(uint h) { return unpackHalf2x16(h).x; }
#include "block_decode.h"

/// Element e of the row at byte offset row.
float decode(uint row, uint e) {
    if (TYPE == 0u) return uintBitsToFloat(a[(row + e * 4u) >> 2]);
    if (TYPE == 1u) return whalf(row + e * 2u);
    const uint blk = row + (e / qk_w(TYPE)) * block_bytes(TYPE), j = e % qk_w(TYPE);
    if (!k_family(TYPE)) {
        precise float y = float(value32(TYPE, blk, j)) * unit_scale(TYPE, blk, j / unit_len(TYPE));
        if (has_offset(TYPE)) y = y + whalf(blk + 2u);
        return y;
    }
    precise float dl = d256(TYPE, blk) * float(scale256(TYPE, blk, j / 16u));
    precise float y  = dl * float(value256(TYPE, blk, j));
    if (has_dmin(TYPE)) {
        precise float ml = dmin256(TYPE, blk) * float(min256(TYPE, blk, j / 16u));
        y                = y - ml;
    }
    return y;
}

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, p.ne);
        const int   r = idx[p.ioff + j.y * p.is.x + j.z * p.is.y + j.w * p.is.z];
        float       y = 0.0;
        if (r >= 0 && uint(r) < p.rows) y = decode(p.aoff + uint(r) * p.as.y + j.z * p.as.z + j.w * p.as.w, j.x);
        d[at4(p.doff, p.ds, j)] = y;
    }
}
