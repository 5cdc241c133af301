#version 450
#extension GL_GOOGLE_include_directive : require
// unary.comp - activations of f32 tensors, as the CPU kernel (cpu/ops/unary.cpp,
// activations.h): OP by specialization: 0 silu (silu_f32, exp.glsl), 1 gelu (0 at or
// below -10, x from 10, else the f16 table), 2 gelu_quick (the f16 table), 3 relu,
// 4 neg. The tables (binding 3, f16 bits two to a word) are the CPU's own, filled by
// the host.
#include "index.glsl"
#include "exp.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };
layout(std430, set = 0, binding = 3) readonly buffer T { uint table[]; };

layout(push_constant) uniform P {
    uvec4 ne;
    uvec4 as;
    uvec4 ds;
    uint  aoff, doff, toff;
} p;

float from_table(float x) {
    const uint h = f32_to_f16_bits(x);
    return half_at(table[p.toff + (h >> 1)], h);
}

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, p.ne);
        const float x = a[at4(p.aoff, p.as, j)];
        float       y;
        if (OP == 0u) y = silu_f32(x);
        else if (OP == 1u) y = x <= -10.0 ? 0.0 : (x >= 10.0 ? x : from_table(x));
        else if (OP == 2u) y = from_table(x);
        else if (OP == 3u) y = x > 0.0 ? x : 0.0;
        else y = -x;
        d[at4(p.doff, p.ds, j)] = y;
    }
}
