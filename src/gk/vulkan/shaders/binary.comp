#version 450
#extension GL_GOOGLE_include_directive : require
// binary.comp - dst = a OP b, b repeated over a's shape (ggml's broadcast); MODE by
// specialization: bits 0-1 OP (0 add, 1 sub, 2 mul, 3 div), bits 2, 3, 4: a, b, dst f16
// (else f32). As the CPU kernel (cpu/ops/binary.cpp): the operands as f32, one rounding
// per element, an f16 dst rounded to nearest even.
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;
const uint OP  = MODE & 3u;
const bool A16 = (MODE & 4u) != 0u, B16 = (MODE & 8u) != 0u, D16 = (MODE & 16u) != 0u;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) buffer D { uint d[]; };

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
        const float x = LOAD_F32_OR_F16(a, at4(p.aoff, p.as, j), A16);
        const float y = LOAD_F32_OR_F16(b, at4(p.boff, p.bs, j % p.bne), B16);
        precise float z;
        if (OP == 0) z = x + y;
        else if (OP == 1) z = x - y;
        else if (OP == 2) z = x * y;
        else z = x / y;
        STORE_F32_OR_F16(d, at4(p.doff, p.ds, j), z, D16)
    }
}
