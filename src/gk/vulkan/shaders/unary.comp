#version 450
#extension GL_GOOGLE_include_directive : require
// unary.comp - activations of f32 tensors, as the CPU kernel (cpu/ops/unary.cpp): ACT
// by specialization (act.glsl): 0 silu, 1 gelu, 2 gelu_quick, 3 relu, 4 neg.
#include "index.glsl"
#include "act.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ACT = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };

layout(push_constant) uniform P {
    uvec4 ne;
    uvec4 as;
    uvec4 ds;
    uint  aoff, doff, toff;
} p;

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, p.ne);
        const float x = a[at4(p.aoff, p.as, j)];
        d[at4(p.doff, p.ds, j)] = activate(ACT, p.toff, x);
    }
}
