#version 450
#extension GL_GOOGLE_include_directive : require
// glu.comp - the gated linear units of f32 rows, as the CPU kernel (cpu/ops/glu.cpp):
// y = act(x) * g, split (x from a, g from b) or fused (x and g the halves of a's row,
// swapped or not). ACT by specialization (act.glsl): 0 swiglu, 1 geglu (below -10 the
// product is 0 too, as the CPU writes it), 2 geglu_quick, 3 reglu; 5 swiglu_oai: x
// clamped to at most limit, g to [-limit, limit], y = x / (1 + exp_f32(-alpha x)) * (g + 1).
#include "index.glsl"
#include "act.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ACT = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };

layout(push_constant) uniform P {
    uvec4 ne;  // dst
    uvec4 as;
    uvec4 bs;
    uvec4 ds;
    uint  aoff, boff, doff, toff;
    uint  split, swapped;
    float alpha, limit;
} p;

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
        precise float y;
        if (ACT == 5u) {
            const float   xc = p.limit < x ? p.limit : x;
            const float   gc = g < -p.limit ? -p.limit : (p.limit < g ? p.limit : g);
            precise float e  = 1.0 + exp_f32(-p.alpha * xc);
            precise float s  = xc / e;
            precise float h  = gc + 1.0;
            y                = s * h;
        } else {
            y = activate(ACT, p.toff, x) * g;
            if (ACT == 1u && x <= -10.0) y = 0.0;
        }
        d[at4(p.doff, p.ds, j)] = y;
    }
}
