#version 450
#extension GL_GOOGLE_include_directive : require
// rope.comp - rotary position embedding of f32 rows, as the CPU kernel (cpu/ops/rope.cpp):
// pair i of row (head, token i2) is (x[2i], x[2i+1]) when ADJACENT (normal mode), else
// (x[i], x[i + pairs]); (x0, x1) -> (x0 c - x1 s, x0 s + x1 c), each product rounded,
// with c, s the CPU's own (scaled) cos and sin of the pair's angle for the token
// (binding 3: per token, per pair, c then s; filled by the host with cpu/ops/rope_cache.h,
// so the frequency factors, YaRN and the multi-section modes are the CPU's). Elements
// past 2 pairs are copied. One invocation per pair (in place is safe) or copied element.
#include "index.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ADJACENT = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) buffer D { float d[]; };
layout(std430, set = 0, binding = 3) readonly buffer T { float cs[]; };

layout(push_constant) uniform P {
    uvec4 ne;
    uvec4 as;
    uvec4 ds;
    uint  aoff, doff, toff, pairs;
} p;

void main() {
    const uint units = p.ne.x - p.pairs;  // per row: the pairs, then the copied elements
    const uint n     = units * p.ne.y * p.ne.z * p.ne.w;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j = unflatten(i, uvec4(units, p.ne.yzw));
        const uint  k = j.x;
        if (k >= p.pairs) {
            const uint e = 2u * p.pairs + (k - p.pairs);
            d[at4(p.doff, p.ds, uvec4(e, j.yzw))] = a[at4(p.aoff, p.as, uvec4(e, j.yzw))];
            continue;
        }
        const uint    e0 = ADJACENT != 0u ? 2u * k : k;
        const uint    e1 = ADJACENT != 0u ? 2u * k + 1u : k + p.pairs;
        const float   x0 = a[at4(p.aoff, p.as, uvec4(e0, j.yzw))];
        const float   x1 = a[at4(p.aoff, p.as, uvec4(e1, j.yzw))];
        const uint    t  = p.toff + 2u * (j.z * p.pairs + k);
        const float   c  = cs[t];
        const float   s  = cs[t + 1u];
        precise float u0 = x0 * c;
        precise float u1 = x1 * s;
        precise float v0 = x0 * s;
        precise float v1 = x1 * c;
        precise float y0 = u0 - u1;
        precise float y1 = v0 + v1;
        d[at4(p.doff, p.ds, uvec4(e0, j.yzw))] = y0;
        d[at4(p.doff, p.ds, uvec4(e1, j.yzw))] = y1;
    }
}
