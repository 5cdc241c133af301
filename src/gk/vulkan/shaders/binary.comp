#version 450
#extension GL_GOOGLE_include_directive : require
// binary.comp - dst = a OP b for f32 tensors, b repeated over a's shape (ggml's
// broadcast); OP by specialization: 0 add, 1 sub, 2 mul, 3 div. One rounding per
// element, as the CPU kernel (cpu/ops/binary.cpp).
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };

layout(push_constant) uniform P {
    uvec4 ne;   // dst = a's shape
    uvec4 as;   // strides in elements
    uvec4 bne;
    uvec4 bs;
    uvec4 ds;
    uint  aoff, boff, doff;
} p;

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, p.ne);
        const float x = a[at4(p.aoff, p.as, j)];
        const float y = b[at4(p.boff, p.bs, j % p.bne)];
        precise float z;
        if (OP == 0) z = x + y;
        else if (OP == 1) z = x - y;
        else if (OP == 2) z = x * y;
        else z = x / y;
        d[at4(p.doff, p.ds, j)] = z;
    }
}
