#version 450
#extension GL_GOOGLE_include_directive : require
// pad.comp - pad (cpu/ops/misc.cpp): dst element (i0, i1, i2, i3) is the source's
// (i0 - lp0, i1 - lp1, ...), 0 where that is outside the source; with CIRCULAR (bit 0)
// the index is taken modulo the source's size. With HOST (bit 1) the source is the
// node's host-made data at binding 3 (timestep_embedding's rows, made with the CPU's
// code: cpu/ops/timestep.h), laid out as dst and copied. f32; one invocation per element.
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;
const bool CIRCULAR = (MODE & 1u) != 0u;
const bool HOST     = (MODE & 2u) != 0u;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };
layout(std430, set = 0, binding = 3) readonly buffer H { float h[]; };

layout(push_constant) uniform P {
    uvec4 ne;   // dst
    uvec4 ane;  // the source
    uvec4 as;
    uvec4 ds;
    ivec4 lp;   // left padding per dim
    uint  aoff, doff;
} p;

void main() {
    const uint n = p.ne.x * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, p.ne);
        ivec4       k = ivec4(j) - p.lp;
        if (CIRCULAR) k = ((k % ivec4(p.ane)) + ivec4(p.ane)) % ivec4(p.ane);
        const bool in_a = all(greaterThanEqual(k, ivec4(0))) && all(lessThan(k, ivec4(p.ane)));
        const uint s    = at4(p.aoff, p.as, uvec4(k));
        d[at4(p.doff, p.ds, j)] = !in_a ? 0.0 : (HOST ? h[s] : a[s]);
    }
}
