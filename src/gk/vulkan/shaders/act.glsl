// act.glsl - the activations of glu.comp and unary.comp, as the CPU's for f32 rows
// (cpu/ops/activations.h): ACT 0 silu (silu_f32, exp.glsl), 1 gelu (0 at or below -10,
// x from 10, else the f16 table), 2 gelu_quick (the f16 table), 3 relu, 4 neg. The
// tables are the CPU's own, filled by the host: binding 3, f16 bits two to a word,
// from word `toff`.
#include "exp.glsl"

layout(std430, set = 0, binding = 3) readonly buffer T { uint table[]; };

float from_table(uint toff, float x) {
    const uint h = f32_to_f16_bits(x);
    return half_at(table[toff + (h >> 1)], h);
}

float activate(uint act, uint toff, float x) {
    if (act == 0u) return silu_f32(x);
    if (act == 1u) return x <= -10.0 ? 0.0 : (x >= 10.0 ? x : from_table(toff, x));
    if (act == 2u) return from_table(toff, x);
    if (act == 3u) return x > 0.0 ? x : 0.0;
    return -x;
}
