#version 450
#extension GL_GOOGLE_include_directive : require
// soft_max.comp - soft_max_ext of f32 rows as the CPU kernel (cpu/ops/softmax.cpp and
// softmax_in_place in alibi.h): y = x * scale (+ slope * mask, the mask f32 or f16,
// broadcast over dims 2 and 3; the slope per head from binding 3, the CPU's
// alibi_slope values), then w = exp_f32(y - max) (exp.glsl) summed in double, left to
// right, plus exp_f32(sink - max) with attention sinks (the sink of head i2 at binding 4;
// the max starts from it), and each w times float(1 / sum); a row that is all -inf gives
// zeros. MODE bit 0: a mask; bit 1: it is f16; bit 2: ALiBi slopes; bit 3: sinks. One
// invocation per row; the row is built in place in dst.
#include "index.glsl"
#include "exp.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer M { uint m[]; };
layout(std430, set = 0, binding = 2) buffer D { float d[]; };
layout(std430, set = 0, binding = 3) readonly buffer S { float slopes[]; };
layout(std430, set = 0, binding = 4) readonly buffer Z { float sinks[]; };

layout(push_constant) uniform P {
    uvec4 ne;
    uvec4 as;
    uvec4 ms;   // the mask's strides in its elements
    uvec4 ds;
    uint  aoff, moff, doff, soff;
    uint  mne2, mne3;
    float scale;
    uint  zoff;
} p;

float mask_at(uint e) { return (MODE & 2u) != 0u ? half_at(m[e >> 1], e) : uintBitsToFloat(m[e]); }

void main() {
    const uint n_rows = p.ne.y * p.ne.z * p.ne.w;
    const uint n      = p.ne.x;
    for (uint r = gl_GlobalInvocationID.x; r < n_rows; r += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j     = unflatten(r * n, p.ne);
        const uint  a0    = at4(p.aoff, p.as, j);
        const uint  d0    = at4(p.doff, p.ds, j);
        const uint  m0    = p.moff + j.y * p.ms.y + (j.z % p.mne2) * p.ms.z + (j.w % p.mne3) * p.ms.w;
        const float slope = (MODE & 4u) != 0u ? slopes[p.soff + j.z] : 1.0;
        const float sink  = (MODE & 8u) != 0u ? sinks[p.zoff + j.z] : 0.0;
        float       mx    = (MODE & 8u) != 0u ? sink : -k_inf;
        for (uint i = 0u; i < n; ++i) {
            precise float y = a[a0 + i * p.as.x] * p.scale;
            if ((MODE & 1u) != 0u) {
                precise float t = slope * mask_at(m0 + i * p.ms.x);
                y = y + t;
            }
            d[d0 + i * p.ds.x] = y;
            mx = y > mx ? y : mx;
        }
        if (mx == -k_inf) {
            for (uint i = 0u; i < n; ++i) d[d0 + i * p.ds.x] = 0.0;
            continue;
        }
        double sum = 0.0LF;
        for (uint i = 0u; i < n; ++i) {
            precise float  t = d[d0 + i * p.ds.x] - mx;
            const float    w = exp_f32(t);
            d[d0 + i * p.ds.x] = w;
            precise double s = sum + double(w);
            sum = s;
        }
        if ((MODE & 8u) != 0u) {
            precise float  t = sink - mx;
            precise double s = sum + double(exp_f32(t));
            sum = s;
        }
        precise double q   = 1.0LF / sum;
        const float    inv = float(q);
        for (uint i = 0u; i < n; ++i) {
            precise float y = d[d0 + i * p.ds.x] * inv;
            d[d0 + i * p.ds.x] = y;
        }
    }
}
