#version 450
#extension GL_GOOGLE_include_directive : require
// glu.comp - the gated linear units of f32 rows, as the CPU kernel (cpu/ops/glu.cpp):
// y = act(x) * g, split (x from a, g from b) or fused (x and g the halves of a's row,
// swapped or not). OP by specialization: 0 swiglu (silu_f32, exp.glsl), 1 geglu (the
// CPU's f32 GELU: 0 below -10 - the product too -, x from 10, else the f16 table),
// 2 reglu, 3 geglu_quick (the f16 table everywhere). The tables (binding 3, f16 bits two
// to a word) are the CPU's own (cpu/ops/activations.h), filled by the host.
#include "index.glsl"
#include "exp.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };
layout(std430, set = 0, binding = 3) readonly buffer T { uint table[]; };

layout(push_constant) uniform P {
    uvec4 ne;  // dst
    uvec4 as;
    uvec4 bs;
    uvec4 ds;
    uint  aoff, boff, doff, toff;
    uint  split, swapped;
} p;

float from_table(float x) {
    const uint h = f32_to_f16_bits(x);
    return half_at(table[p.toff + (h >> 1)], h);
}

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, p.ne);
        float       x, g;
        if (p.split != 0u) {
            x = a[at4(p.aoff, p.as, j)];
            g = b[at4(p.boff, p.bs, j)];
        } else {
            const uint e     = at4(p.aoff, p.as, j);
            const uint other = p.ne.x * p.as.x;  // the other half of the row
            x = a[p.swapped != 0u ? e + other : e];
            g = a[p.swapped != 0u ? e : e + other];
        }
        float act;
        if (OP == 0u) act = silu_f32(x);
        else if (OP == 1u) act = x <= -10.0 ? 0.0 : (x >= 10.0 ? x : from_table(x));
        else if (OP == 2u) act = x > 0.0 ? x : 0.0;
        else act = from_table(x);
        precise float y = act * g;
        if (OP == 1u && x <= -10.0) y = 0.0;
        d[at4(p.doff, p.ds, j)] = y;
    }
}
