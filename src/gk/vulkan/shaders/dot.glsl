// dot.glsl - the CPU's float dot (cpu/vec_dot.h, f32 and f16 rows) operation for
// operation: 64 partial sums, element k into sum k % 64 by a fused multiply-add, then
// sums l and l + 16, l + 32, l + 48 combined as (s0 + s1) + (s2 + s3), then halved 8,
// 4, 2, 1. The fused multiply-add is fma() where the device fuses it, else fma_exact
// (index.glsl, which needs shaderFloat64). The including shader defines dot_x(e) and
// dot_y(e), the elements of the two rows (the second already in the dot's type: for
// f16 rows rounded to f16, as the CPU's from_float rounds it), before including this.

float dot_rows(uint x0, uint y0, uint n, bool exact) {
    float s[64];
    for (uint l = 0u; l < 64u; ++l) s[l] = 0.0;
    for (uint k = 0u; k < n; ++k) {
        const float   a = dot_x(x0 + k);
        const float   y = dot_y(y0 + k);
        precise float r = exact ? fma_exact(a, y, s[k & 63u]) : fma(a, y, s[k & 63u]);
        s[k & 63u]      = r;
    }
    float t[16];
    for (uint l = 0u; l < 16u; ++l) {
        precise float u = s[l] + s[l + 16u];
        precise float v = s[l + 32u] + s[l + 48u];
        precise float r = u + v;
        t[l] = r;
    }
    for (uint h = 8u; h >= 1u; h /= 2u) {
        for (uint l = 0u; l < h; ++l) {
            precise float r = t[l] + t[l + h];
            t[l] = r;
        }
    }
    return t[0];
}
