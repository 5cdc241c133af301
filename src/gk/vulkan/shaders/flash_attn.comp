#version 450
#extension GL_GOOGLE_include_directive : require
// flash_attn.comp - flash_attn_ext as the CPU kernel (cpu/ops/attention.cpp), one
// invocation per dst row (head h, query iq, sequence s), K and V rows f32 or f16:
// - the score of key j: dot(K row j, q) (dot.glsl; q rounded to f16 for f16 K, the
//   CPU's from_float) times scale, plus slope * mask[j]; a key whose mask is -inf (with
//   slope > 0) scores -inf without its dot;
// - softmax_in_place (cpu/ops/alibi.h): the largest score (starting from the sink),
//   w = exp_f32(score - max) (exp.glsl) summed in double in key order, plus
//   exp_f32(sink - max), and each w times float(1 / sum); all -inf gives zeros;
// - y = the sum in key order of w[j] * V row j over the keys with w[j] != 0, from +0,
//   each step a rounded product and a rounded sum.
// The scores are recomputed in each of the three passes (the same operations, so the
// same bits) instead of being kept. The slopes are the CPU's alibi_slope values (binding
// 3, host-filled). No logit softcap (its tanh is libm's). MODE bits: 0 f16 K; 1 f16 V;
// 2 a mask; 3 it is f16; 4 ALiBi slopes; 5 sinks; 6 fma_exact.
#include "index.glsl"
#include "exp.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;
const bool K16   = (MODE & 1u) != 0u;
const bool V16   = (MODE & 2u) != 0u;
const bool MASK  = (MODE & 4u) != 0u;
const bool M16   = (MODE & 8u) != 0u;
const bool ALIBI = (MODE & 16u) != 0u;
const bool SINKS = (MODE & 32u) != 0u;
const bool EXACT = (MODE & 64u) != 0u;

layout(std430, set = 0, binding = 0) readonly buffer Q { float q[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { uint k[]; };
layout(std430, set = 0, binding = 2) buffer D { float d[]; };
layout(std430, set = 0, binding = 3) readonly buffer S { float slopes[]; };
layout(std430, set = 0, binding = 4) readonly buffer V { uint v[]; };
layout(std430, set = 0, binding = 5) readonly buffer M { uint m[]; };
layout(std430, set = 0, binding = 6) readonly buffer Z { float sinks[]; };

layout(push_constant) uniform P {
    uint  D, Dv, n_kv, H;      // head sizes, keys, query heads
    uint  NQ, S, group, mne2;  // queries, sequences, query heads per kv head, mask dims
    uint  mne3, qs1, qs2, qs3; // strides in elements (rows dense)
    uint  ks1, ks2, ks3, vs1;
    uint  vs2, vs3, ms1, ms2;
    uint  ms3, ds1, ds2, ds3;
    uint  qoff, koff, voff, moff;
    uint  doff, zoff, soff;
    float scale;
} p;

float dot_x(uint e) { return K16 ? half_at(k[e >> 1], e) : uintBitsToFloat(k[e]); }
float dot_y(uint e) { return K16 ? unpackHalf2x16(f32_to_f16_bits(q[e])).x : q[e]; }

#include "dot.glsl"

float v_at(uint e) { return V16 ? half_at(v[e >> 1], e) : uintBitsToFloat(v[e]); }
float mask_at(uint e) { return M16 ? half_at(m[e >> 1], e) : uintBitsToFloat(m[e]); }

/// The score of key j (see the file comment).
float score(uint j, uint q0, uint k0, uint m0, float slope) {
    const float mk = MASK ? mask_at(m0 + j) : 0.0;
    if (MASK && slope > 0.0 && mk == -k_inf) return -k_inf;
    precise float x = dot_rows(k0 + j * p.ks1, q0, p.D, EXACT) * p.scale;
    if (MASK) {
        precise float t = slope * mk;
        x = x + t;
    }
    return x;
}

void main() {
    const uint n_rows = p.H * p.NQ * p.S;
    for (uint r = gl_GlobalInvocationID.x; r < n_rows; r += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uint  h = r % p.H, iq = (r / p.H) % p.NQ, s = r / (p.H * p.NQ);
        const uint  hk    = h / p.group;
        const float slope = ALIBI ? slopes[p.soff + h] : 1.0;
        const uint  q0    = p.qoff + iq * p.qs1 + h * p.qs2 + s * p.qs3;
        const uint  k0    = p.koff + hk * p.ks2 + s * p.ks3;
        const uint  v0    = p.voff + hk * p.vs2 + s * p.vs3;
        const uint  m0    = p.moff + iq * p.ms1 + (h % p.mne2) * p.ms2 + (s % p.mne3) * p.ms3;
        const uint  d0    = p.doff + h * p.ds1 + iq * p.ds2 + s * p.ds3;
        const float sink  = SINKS ? sinks[p.zoff + h] : 0.0;
        float       mx    = SINKS ? sink : -k_inf;
        for (uint j = 0u; j < p.n_kv; ++j) {
            const float x = score(j, q0, k0, m0, slope);
            mx = x > mx ? x : mx;
        }
        for (uint i = 0u; i < p.Dv; ++i) d[d0 + i] = 0.0;
        if (mx == -k_inf) continue;
        double sum = 0.0LF;
        for (uint j = 0u; j < p.n_kv; ++j) {
            precise float  t = score(j, q0, k0, m0, slope) - mx;
            precise double u = sum + double(exp_f32(t));
            sum = u;
        }
        if (SINKS) {
            precise float  t = sink - mx;
            precise double u = sum + double(exp_f32(t));
            sum = u;
        }
        precise double inv_d = 1.0LF / sum;
        const float    inv   = float(inv_d);
        for (uint j = 0u; j < p.n_kv; ++j) {
            precise float t = score(j, q0, k0, m0, slope) - mx;
            precise float w = exp_f32(t) * inv;
            if (w == 0.0) continue;
            for (uint i = 0u; i < p.Dv; ++i) {
                precise float y = w * v_at(v0 + j * p.vs1 + i);
                precise float z = d[d0 + i] + y;
                d[d0 + i] = z;
            }
        }
    }
}
