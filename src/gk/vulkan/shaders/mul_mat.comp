#version 450
#extension GL_GOOGLE_include_directive : require
// mul_mat.comp - dst[m, n, i2, i3] = dot(row m of weight slab (i2 / r2, i3 / r3), row n
// of the activations), weights f32 or f16 (W = 0 / 1), activations f32 (for f16 weights
// first rounded to f16, the CPU's vec_dot_type). The dot is the CPU's (dot.glsl). With
// ID, mul_mat_id: weight slab ids[n, i2] and activation row (n % xN, i2)
// (mul_mat_push.glsl); an id outside the experts gives 0 and sets the word eoff of
// binding 3. One invocation per output element.
#include "index.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;  // bit 0: f16 weights; bit 1: fma_exact; bit 2: mul_mat_id
const uint W     = MODE & 1u;
const bool EXACT = (MODE & 2u) != 0u;
const bool ID    = (MODE & 4u) != 0u;

layout(std430, set = 0, binding = 0) readonly buffer A { uint w[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer D { float d[]; };
layout(std430, set = 0, binding = 3) writeonly buffer F { uint flag[]; };

#include "mul_mat_push.glsl"

float dot_x(uint e) { return W == 0u ? uintBitsToFloat(w[e]) : half_at(w[e >> 1], e); }
float dot_y(uint e) { return W == 0u ? x[e] : unpackHalf2x16(f32_to_f16_bits(x[e])).x; }

#include "dot.glsl"

void main() {
    const uint n = p.M * p.N * p.ne2 * p.ne3;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uvec4 j  = unflatten(i, uvec4(p.M, p.N, p.ne2, p.ne3));
        const uint  w0 = weight_row(j, ID);
        const uint  x0 = p.xoff + (j.y % p.xN) * p.xs1 + j.z * p.xs2 + j.w * p.xs3;
        const bool  bad = ID && w0 == k_bad_row;
        if (bad) flag[p.eoff] = 1u;
        d[p.doff + j.x + j.y * p.ds1 + j.z * p.ds2 + j.w * p.ds3] = bad ? 0.0 : dot_rows(w0, x0, p.K, EXACT);
    }
}
