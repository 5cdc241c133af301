#version 450
#extension GL_GOOGLE_include_directive : require
// scale.comp - dst = a * s + b (f32), the product and the sum rounded apart, as the CPU
// kernel (cpu/ops/misc.cpp).
#include "index.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };

layout(push_constant) uniform P {
    uvec4 ne;
    uvec4 as;
    uvec4 ds;
    uint  aoff, doff;
    float s, bias;
} p;

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4   j = unflatten(i, p.ne);
        precise float t = a[at4(p.aoff, p.as, j)] * p.s;
        precise float z = t + p.bias;
        d[at4(p.doff, p.ds, j)] = z;
    }
}
