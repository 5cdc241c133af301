#version 450
#extension GL_GOOGLE_include_directive : require
// norm.comp - norm (MODE 1), rms_norm (MODE 0) or l2_norm (MODE 2) of each f32 row, as
// the CPU kernel (cpu/ops/norm.cpp): the sums in double, left to right, mean =
// float(sum / n), scale = 1 / sqrt(float(sum2 / n) + eps) in float (l2_norm: 1 /
// fmax(float(sqrt(sum2)), eps), the square root in double), y = (x - mean) * scale. One
// invocation per row; needs shaderFloat64.
#include "index.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;
const uint MEAN = MODE == 1u ? 1u : 0u;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };

layout(push_constant) uniform P {
    uvec4 ne;
    uvec4 as;  // as.x unused: rows are dense
    uvec4 ds;
    uint  aoff, doff;
    float eps;
} p;

void main() {
    const uint n_rows = p.ne.y * p.ne.z * p.ne.w;
    const uint n      = p.ne.x;
    for (uint r = gl_GlobalInvocationID.x; r < n_rows; r += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j  = unflatten(r * n, p.ne);
        const uint  a0 = at4(p.aoff, p.as, j);
        const uint  d0 = at4(p.doff, p.ds, j);
        float       mean = 0.0;
        if (MEAN == 1u) {
            double sum = 0.0LF;
            for (uint i = 0u; i < n; ++i) {
                precise double t = sum + double(a[a0 + i]);
                sum = t;
            }
            precise double q = sum / double(n);
            mean = float(q);
        }
        double sum2 = 0.0LF;
        for (uint i = 0u; i < n; ++i) {
            precise float  c  = a[a0 + i] - mean;
            precise double dd = double(c) * double(c);
            precise double t  = sum2 + dd;
            sum2 = t;
        }
        precise double q     = sum2 / double(n);
        precise float  v     = float(q) + p.eps;
        precise float  scale = 1.0 / sqrt(v);
        if (MODE == 2u) {
            precise double r  = sqrt(sum2);
            const float    rf = float(r);
            precise float  s  = 1.0 / (isnan(rf) || rf < p.eps ? p.eps : rf);  // std::fmax
            scale             = s;
        }
        for (uint i = 0u; i < n; ++i) {
            precise float c = a[a0 + i] - mean;
            precise float y = c * scale;
            d[d0 + i] = y;
        }
    }
}
