// exp.glsl - gk's f32 exp (cpu/vec_exp.h, exp_f32) operation for operation, each fused
// multiply-add as fma_exact (index.glsl, so the shaders that include this need
// shaderFloat64), and silu on it (silu_f32). The constants are vec_exp.h's, as bits
// (macros: a constant initializer cannot call uintBitsToFloat).

#define k_exp_shift uintBitsToFloat(0x4b400000u)  // 1.5 * 2^23
#define k_exp_log2e uintBitsToFloat(0x3fb8aa3bu)
#define k_exp_ln2_hi uintBitsToFloat(0x3f317200u)
#define k_exp_ln2_lo uintBitsToFloat(0x35bfbe8eu)
#define k_exp_p1 uintBitsToFloat(0x3f7ffff6u)
#define k_exp_p2 uintBitsToFloat(0x3efffedbu)
#define k_exp_p3 uintBitsToFloat(0x3e2aaf33u)
#define k_exp_p4 uintBitsToFloat(0x3d2b9f17u)
#define k_exp_p5 uintBitsToFloat(0x3c072010u)
#define k_inf uintBitsToFloat(0x7f800000u)

/// 2^k for an integer k in [-126, 127].
float exp2_int(int k) { return uintBitsToFloat(uint(k + 127) << 23); }

float exp_f32(float x) {
    if (isnan(x)) return x + x;
    precise float z = fma_exact(x, k_exp_log2e, k_exp_shift);
    precise float n = z - k_exp_shift;
    if (abs(n) > 192.0) return n > 0.0 ? k_inf : 0.0;
    const float   b = fma_exact(-n, k_exp_ln2_lo, fma_exact(-n, k_exp_ln2_hi, x));
    precise float u = b * b;
    const float   j = fma_exact(fma_exact(fma_exact(k_exp_p5, b, k_exp_p4), u, fma_exact(k_exp_p3, b, k_exp_p2)), u,
                                fma_exact(k_exp_p1, b, 1.0));
    const float   n1 = min(max(n, -100.0), 100.0);
    precise float r1 = j * exp2_int(int(n1));
    precise float r  = r1 * exp2_int(int(n - n1));
    return r;
}

/// silu(x) = x / (1 + exp_f32(0 - x)).
float silu_f32(float x) {
    precise float m = 0.0 - x;
    precise float d = 1.0 + exp_f32(m);
    precise float y = x / d;
    return y;
}
