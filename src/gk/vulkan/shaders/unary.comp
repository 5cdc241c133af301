#version 450
#extension GL_GOOGLE_include_directive : require
// unary.comp - activations, as the CPU kernel (cpu/ops/unary.cpp): MODE by
// specialization, bits 0-2 the activation (act.glsl): 0 silu, 1 gelu, 2 gelu_quick, 3
// relu, 4 neg; bits 3, 4: the source, the destination f16 (else f32). An f16 source's
// GELU is the table's value everywhere (the CPU's act_gelu_f16: no range test), which is
// activation 2 with GELU's table (ops.cpp); an f16 destination is rounded to nearest even.
#include "index.glsl"
#include "act.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;
const uint ACT = MODE & 7u;
const bool A16 = (MODE & 8u) != 0u, D16 = (MODE & 16u) != 0u;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 2) buffer D { uint d[]; };

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
        const float x = LOAD_F32_OR_F16(a, at4(p.aoff, p.as, j), A16);
        const float y = activate(ACT, p.toff, x);
        STORE_F32_OR_F16(d, at4(p.doff, p.ds, j), y, D16)
    }
}
