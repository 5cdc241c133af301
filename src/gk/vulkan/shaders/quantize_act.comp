#version 450
#extension GL_GOOGLE_include_directive : require
// quantize_act.comp - the activations of a quantized mul_mat in the weight type's
// vec_dot_type, as the CPU's activation conversion writes them (cpu/act_convert.h, equal
// byte for byte to the codec's functions), one invocation per block. MODE 0: q8_0
// (quant/legacy.cpp, quantize_row_q8_0_dot): amax = max |x|, id = 127 / amax, q = (x id
// + 1.5 * 2^23) - 1.5 * 2^23, d = f16(amax / 127); a block with a NaN or an infinity, or
// whose id overflows, by quantize_block_q8: d = amax / 127, q = round(clamp(x / d, -127,
// 127)) (half away from zero; NaN -> 0). MODE 1: q8_K (quant/k_quants.cpp,
// quantize_row_q8_K): vmax = the first element of largest |x|, iscale = -127 / vmax,
// d = 1 / iscale, q = round_clamp(iscale x, -128, 127). MODE 2: q8_1
// (quantize_row_q8_1_dot): q8_0's quants and d, and s = f16(float(sum of q) * d) with the
// unrounded d. Output (binding 3): per block word 0 = d as f32 (for q8_0 / q8_1 the f16
// value), for q8_1 word 1 = s as f32 (the f16 value), then the quants, four to a word;
// blocks in row order (row n + xN (i2 + ne2 i3), xN the activation rows per slab).
#include "index.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;
const uint QB = MODE == 1u ? 256u : 32u;  // elements per block
const uint HW = MODE == 2u ? 2u : 1u;     // header words (d, s)
const uint BW = HW + QB / 4u;             // words per block

layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 3) buffer Q { uint q[]; };

#include "mul_mat_push.glsl"

const float k_round = 12582912.0;  // 1.5 * 2^23

/// std::max(a, b) and std::clamp's comparisons (a NaN never wins).
float cpp_max(float a, float b) { return a < b ? b : a; }

/// std::round: to the nearest integer, half away from zero.
float round_away(float v) {
    const float t = trunc(v);
    precise float r = v - t;  // exact
    return abs(r) >= 0.5 ? t + sign(v) : t;
}

void store(uint o, uint e, int v) {
    const uint w = o + HW + e / 4u, s = 8u * (e & 3u);
    q[w] = (q[w] & ~(0xFFu << s)) | ((uint(v) & 0xFFu) << s);
}

void main() {
    const uint nb     = p.K / QB;
    const uint blocks = nb * p.xN * p.ne2 * p.ne3;
    for (uint i = gl_GlobalInvocationID.x; i < blocks; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        const uint b = i % nb, r = i / nb;
        const uint n = r % p.xN, i2 = (r / p.xN) % p.ne2, i3 = r / (p.xN * p.ne2);
        const uint x0 = p.xoff + n * p.xs1 + i2 * p.xs2 + i3 * p.xs3 + b * QB;
        const uint o  = p.aoff + i * BW;
        for (uint w = HW; w < BW; ++w) q[o + w] = 0u;
        if (MODE != 1u) {
            int   sum    = 0;
            float amax   = 0.0;
            bool  finite = true;
            for (uint j = 0u; j < QB; ++j) {
                finite = finite && !isnan(x[x0 + j]) && !isinf(x[x0 + j]);
                amax   = cpp_max(amax, abs(x[x0 + j]));
            }
            precise float id = amax != 0.0 ? 127.0 / amax : 0.0;
            precise float d  = amax / 127.0;
            if (!finite || isinf(id)) {
                precise float id1 = d != 0.0 ? 1.0 / d : 0.0;
                for (uint j = 0u; j < QB; ++j) {
                    precise float v = x[x0 + j] * id1;
                    const float   c = v < -127.0 ? -127.0 : (127.0 < v ? 127.0 : v);
                    const int     qv = isnan(v) ? 0 : int(round_away(c));
                    store(o, j, qv);
                    sum += qv;
                }
            } else {
                for (uint j = 0u; j < QB; ++j) {
                    precise float v = (x[x0 + j] * id + k_round) - k_round;
                    store(o, j, int(v));
                    sum += int(v);
                }
            }
            q[o] = floatBitsToUint(unpackHalf2x16(f32_to_f16_bits(d)).x);
            precise float s = float(sum) * d;
            if (MODE == 2u) q[o + 1u] = floatBitsToUint(unpackHalf2x16(f32_to_f16_bits(s)).x);
        } else {
            float amax = 0.0, vmax = 0.0;
            for (uint j = 0u; j < QB; ++j) {
                if (abs(x[x0 + j]) > amax) {
                    amax = abs(x[x0 + j]);
                    vmax = x[x0 + j];
                }
            }
            precise float iscale = amax != 0.0 ? -127.0 / vmax : 0.0;
            precise float d      = amax != 0.0 ? 1.0 / iscale : 0.0;
            for (uint j = 0u; j < QB; ++j) {
                precise float v = iscale * x[x0 + j];
                v               = v > -128.0 ? v : -128.0;
                v               = v < 127.0 ? v : 127.0;
                precise float r = (v + k_round) - k_round;
                store(o, j, int(r));
            }
            q[o] = floatBitsToUint(d);
        }
    }
}
