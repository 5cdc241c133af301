/* pmath.h: presk's transcendental functions, one implementation for every backend.
 *
 * The kernel interpreter, the native backends and exported C programs all call these
 * functions, so that a kernel's exp, log, tanh, sin, cos, erf, erfc and pow give the same bits
 * everywhere. pmath.c is plain C99 and uses only +, -, *, /, comparisons, integer
 * operations and exact bit manipulation (no libm call, no fma, no long double), so any
 * conforming compiler on any IEEE-754 machine gives the same bits, provided that
 *   - double and float arithmetic is evaluated in its own type (FLT_EVAL_METHOD == 0,
 *     e.g. SSE2 on x86, any AArch64, or 16 where the target has AVX512-FP16), in
 *     round-to-nearest-even;
 *   - the compiler does not contract a*b+c into an fma (-ffp-contract=off, no fast-math).
 * pmath.c refuses to compile when it can tell that either is broken.
 *
 * Accuracy, measured against MPFR by tests/presk/test-presk-pmath.cpp (docs/presk-math.md
 * has the table): the double versions are within 0.51 ulp of the exact result, erfc within
 * 0.52 (the test holds them to 1 ulp); each float version evaluates the double algorithm on the float
 * argument and rounds once, so it is within 0.5 ulp plus 2^-29 of an ulp, i.e. correctly
 * rounded unless the exact value lies within 2^-29 ulp of a midpoint.
 *
 * Special values follow C99 Annex F (F.9) for each function. NaN results: a NaN argument is
 * returned with its quiet bit set (payload kept); an invalid operation (log of a negative
 * number, sin/cos of an infinity, pow of a negative number to a non-integer) returns the
 * positive quiet NaN 0x7ff8000000000000 (0x7fc00000 in float). No function sets errno or
 * reads the floating-point environment.
 */
#ifndef PRESK_KERNEL_PMATH_H
#define PRESK_KERNEL_PMATH_H

#ifdef __cplusplus
extern "C" {
#endif

/* e^x. Overflows to +inf above 709.78 (88.72 in float); subnormal results rounded once. */
double presk_exp(double x);
float presk_expf(float x);

/* Natural logarithm: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, log(1) = +0. */
double presk_log(double x);
float presk_logf(float x);

/* Hyperbolic tangent: odd, tanh(+-inf) = +-1, exactly +-1 from |x| >= 19.1 (9.01 in float). */
double presk_tanh(double x);
float presk_tanhf(float x);

/* sin and cos of x in radians, over the whole finite range: the argument is reduced by
 * pi/2 exactly (Cody-Waite below 2^20 pi/2, Payne-Hanek above). sin(+-inf) = cos(+-inf) = NaN. */
double presk_sin(double x);
float presk_sinf(float x);
double presk_cos(double x);
float presk_cosf(float x);

/* The error function 2/sqrt(pi) int_0^x e^(-t^2) dt: odd, erf(+-inf) = +-1. */
double presk_erf(double x);
float presk_erff(float x);

/* The complementary error function 1 - erf(x), without the cancellation of that difference:
 * erfc(-x) = 2 - erfc(x), erfc(-inf) = 2, erfc(+inf) = +0; subnormal results from x = 26.54
 * (9.19 in float), +0 from 27.23 (10.05 in float) on. The kernels compute
 * gelu(x) = x Phi(x) = x erfc(-x/sqrt 2) / 2 from it, which keeps its relative accuracy for
 * x << 0, where x (1 + erf(x/sqrt 2)) / 2 cancels. */
double presk_erfc(double x);
float presk_erfcf(float x);

/* x^y as C99 F.9.4.4 defines pow: for x > 0, e^(y log x) rounded once (with overflow to
 * +inf and underflow to subnormals or 0); for x < 0, |x|^y when y is an integer, negated
 * when y is odd, and NaN when y is finite and not an integer; and the special cases:
 * pow(x, +-0) = 1 for every x (NaN too), pow(+1, y) = 1 for every y (NaN too),
 * pow(-1, +-inf) = 1, pow(+-0, y < 0) = +-inf (the sign kept for odd integers y, else
 * +inf), pow(+-0, y > 0) = +-0 (likewise), pow(x, -inf) = +inf for |x| < 1 and +0 for
 * |x| > 1, pow(x, +inf) the reverse, pow(-inf, y) = pow(-0, -y), pow(+inf, y) = +inf
 * for y > 0 and +0 for y < 0; any other NaN argument gives NaN. */
double presk_pow(double x, double y);
float presk_powf(float x, float y);

#ifdef __cplusplus
}
#endif

#endif
