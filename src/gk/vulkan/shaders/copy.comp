#version 450
#extension GL_GOOGLE_include_directive : require
// copy.comp - dup, cont and cpy between f32 and f16 tensors of equal element counts:
// element f of the destination (flat index, ne0 fastest) is element f of the source, as
// the CPU kernel (cpu/ops/copy.cpp) matches them; f32 -> f16 rounds to nearest even
// (f32_to_f16_bits), f16 -> f32 is exact. MODE bit 0: the source is f16; bit 1: the
// destination is f16 (its 16-bit halves written with atomics, two to a 32-bit word).
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 2) buffer D { uint d[]; };

layout(push_constant) uniform P {
    uvec4 ane;  // source shape
    uvec4 as;   // strides in its elements
    uvec4 dne;
    uvec4 ds;
    uint  aoff, doff;
} p;

void main() {
    const uint n = p.dne.x * p.dne.y * p.dne.z * p.dne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uint e = at4(p.aoff, p.as, unflatten(i, p.ane));
        const uint o = at4(p.doff, p.ds, unflatten(i, p.dne));
        const float x = LOAD_F32_OR_F16(a, e, (MODE & 1u) != 0u);
        STORE_F32_OR_F16(d, o, x, (MODE & 2u) != 0u)
    }
}
