// presk's math library (src/presk/kernel/pmath.c) against MPFR at 256 bits: for every
// function in f64 and f32, random arguments over the whole range and dense around the hard
// places (near 0, the overflow and underflow thresholds, multiples of pi/2 up to the largest
// doubles, 1 for log, the tails of erf and erfc, tanh's saturation), the error of each result
// in ulps of the exact value's binade, printed as a table and held to the bounds pmath.h
// states; and the special values of C99 Annex F checked bit for bit. GK_LONG_TESTS=1 runs ten
// times the samples and sweeps every 257th float of [-16, 16] (of (0, 2^128) for log): about
// 8.5 million floats per function, every residue of the mantissa modulo 257 among them.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel/pmath.h"

namespace {

constexpr mpfr_prec_t kBits = 256;

bool long_tests() {
    const char* v = std::getenv("GK_LONG_TESTS");
    return v && std::string(v) == "1";
}

size_t samples_per_set() { return long_tests() ? 200000 : 20000; }

/// The bounds pmath.h states, in ulps of the exact result.
constexpr double kBoundF64 = 1.0;
constexpr double kBoundF32 = 0.5 + 0x1p-20;

uint64_t bits(double x) {
    uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
uint32_t bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

/// An MPFR number at kBits, freed on scope exit.
struct Big {
    mpfr_t v;
    Big() { mpfr_init2(v, kBits); }
    ~Big() { mpfr_clear(v); }
    Big(const Big&) = delete;
    Big& operator=(const Big&) = delete;
};

/// The floating-point format a result is measured in.
struct Format {
    int prec;  // significand bits
    int emin;  // exponent of the least normal number
};
constexpr Format kF64{53, -1022};
constexpr Format kF32{24, -126};

double round_to(const mpfr_t x, Format f) {
    return f.prec == 53 ? mpfr_get_d(x, MPFR_RNDN) : static_cast<double>(mpfr_get_flt(x, MPFR_RNDN));
}

/// |got - exact| in ulps of exact's binade (the subnormal ulp below the normal range);
/// 0 when both are the same infinity, NaN or exact overflow, +inf for any other mismatch
/// of infinities or NaN.
double ulp_error(const mpfr_t exact, double got, Format f) {
    if (mpfr_nan_p(exact)) return std::isnan(got) ? 0.0 : INFINITY;
    double rounded = round_to(exact, f);
    if (std::isnan(got)) return INFINITY;
    if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0.0 : INFINITY;
    long e = f.emin;
    if (!mpfr_zero_p(exact)) e = std::max<long>(mpfr_get_exp(exact) - 1, f.emin);
    Big d;
    mpfr_set_d(d.v, got, MPFR_RNDN);
    mpfr_sub(d.v, d.v, exact, MPFR_RNDN);
    mpfr_abs(d.v, d.v, MPFR_RNDN);
    mpfr_mul_2si(d.v, d.v, f.prec - 1 - e, MPFR_RNDN);
    return mpfr_get_d(d.v, MPFR_RNDN);
}

/// Worst error over a set of arguments, and how many results were not correctly rounded.
struct Tally {
    size_t n = 0, misrounded = 0;
    double worst = 0, at_x = 0, at_y = 0;
    void add(double err, bool correctly_rounded, double x, double y = 0) {
        n++;
        if (!correctly_rounded) misrounded++;
        if (err > worst || std::isnan(err)) {
            worst = err;
            at_x = x;
            at_y = y;
        }
    }
};

void print_header() {
    std::printf("\n%-6s %-4s %9s %10s %7s  %s\n", "func", "type", "samples", "max ulps", "not CR", "at");
}

/// One line of the table: the worst error, where, and how many results were not the exact
/// value rounded to the type.
void print_row(const char* name, const char* type, const Tally& t, bool binary) {
    std::printf("%-6s %-4s %9zu %10.6f %7zu  x = %.17g", name, type, t.n, t.worst, t.misrounded, t.at_x);
    if (binary) std::printf(", y = %.17g", t.at_y);
    std::printf("\n");
    std::fflush(stdout);
}

// ---- argument generators ----------------------------------------------------------------

using Rng = std::mt19937_64;

double uniform(Rng& g, double a, double b) { return std::uniform_real_distribution<double>(a, b)(g); }

/// A double of random sign (when both) whose binade is uniform over [2^lo, 2^hi), mantissa
/// uniform; binades below 2^-1022 give subnormals.
double log_uniform(Rng& g, int lo, int hi, bool both_signs) {
    int e = std::uniform_int_distribution<int>(lo, hi - 1)(g);
    double m = 1.0 + static_cast<double>(g() >> 12) * 0x1p-52;
    double x = std::ldexp(m, e);
    return both_signs && (g() & 1) ? -x : x;
}

/// Every bit pattern of a positive finite double, uniformly (all binades equally likely).
double random_positive_double(Rng& g) {
    for (;;) {
        uint64_t u = g() & 0x7fffffffffffffffu;
        double x;
        std::memcpy(&x, &u, sizeof x);
        if (std::isfinite(x) && x > 0) return x;
    }
}

/// The double nearest k pi/2 moved by a few ulps, k uniform in binades up to 2^kmax.
double near_multiple_of_pio2(Rng& g, int kmax) {
    double k = std::floor(log_uniform(g, 0, kmax, false));
    if (k < 1) k = 1;
    Big v;
    mpfr_const_pi(v.v, MPFR_RNDN);
    mpfr_mul_d(v.v, v.v, k, MPFR_RNDN);
    mpfr_div_2ui(v.v, v.v, 1, MPFR_RNDN);
    double x = mpfr_get_d(v.v, MPFR_RNDN);
    int steps = static_cast<int>(g() % 7) - 3;
    for (; steps > 0; steps--) x = std::nextafter(x, INFINITY);
    for (; steps < 0; steps++) x = std::nextafter(x, 0.0);
    return g() & 1 ? -x : x;
}

/// A weighted mix of argument distributions.
struct Mix {
    std::vector<std::pair<double, std::function<double(Rng&)>>> parts;
    double operator()(Rng& g) const {
        double total = 0;
        for (auto& p : parts) total += p.first;
        double u = uniform(g, 0, total);
        for (auto& p : parts) {
            if (u < p.first) return p.second(g);
            u -= p.first;
        }
        return parts.back().second(g);
    }
};

// ---- the unary functions ------------------------------------------------------------------

using MpfrFn = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

/// MPFR's erfc at 128 bits, correctly rounded there: ample to measure a double's error (to
/// 2^-70 ulp), and for large x hundreds of times faster than at 256 bits (up to 2 ms a call).
int erfc_128(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t rnd) {
    mpfr_t t;
    mpfr_init2(t, 128);
    int inexact = mpfr_erfc(t, x, rnd);
    mpfr_set(y, t, rnd);
    mpfr_clear(t);
    return inexact;
}

struct Unary {
    const char* name;
    double (*f64)(double);
    float (*f32)(float);
    MpfrFn exact;
    Mix args64, args32;     // the random arguments
    std::vector<double> hard;  // fixed arguments checked in both types
};

std::vector<Unary> unary_functions() {
    using G = Rng&;
    std::vector<Unary> fs;
    fs.push_back({"exp", presk_exp, presk_expf, mpfr_exp,
                  Mix{{{4, [](G g) { return log_uniform(g, -1074, 10, true); }},
                       {3, [](G g) { return uniform(g, -745.2, 709.8); }},
                       {1, [](G g) { return uniform(g, 700, 709.8); }},
                       {1, [](G g) { return uniform(g, -745.2, -700); }},
                       {1, [](G g) { return uniform(g, -1, 1); }}}},
                  Mix{{{4, [](G g) { return log_uniform(g, -149, 7, true); }},
                       {3, [](G g) { return uniform(g, -104, 89); }},
                       {1, [](G g) { return uniform(g, 85, 88.8); }},
                       {1, [](G g) { return uniform(g, -104, -85); }},
                       {1, [](G g) { return uniform(g, -1, 1); }}}},
                  {709.782712893384, 709.7827128933841, -745.1332191019411, -745.1332191019412,
                   -708.39641853226408, -708.3964185322642, 88.72283905206835, 88.72284, -103.972084,
                   -87.33654475, 0x1p-60, -0x1p-60, 0x1p-1074, 1.0, -1.0, 0.5, 2.0}});
    fs.push_back({"log", presk_log, presk_logf, mpfr_log,
                  Mix{{{4, [](G g) { return random_positive_double(g); }},
                       {3, [](G g) { return 1.0 + uniform(g, -1, 1) * std::ldexp(1.0, -static_cast<int>(g() % 53)); }},
                       {2, [](G g) { return uniform(g, 0.5, 2.0); }},
                       {1, [](G g) { return log_uniform(g, -1074, -1022, false); }}}},
                  Mix{{{4, [](G g) { return log_uniform(g, -149, 128, false); }},
                       {3, [](G g) { return 1.0 + uniform(g, -1, 1) * std::ldexp(1.0, -static_cast<int>(g() % 24)); }},
                       {2, [](G g) { return uniform(g, 0.5, 2.0); }},
                       {1, [](G g) { return log_uniform(g, -149, -126, false); }}}},
                  {1.0, 2.0, 0.5, 0x1p-1074, 0x1p-1022, 1.7976931348623157e308, 0x1.fffffffffffffp-1,
                   0x1.0000000000001p+0, 0x1.fffffep-1, 0x1.000002p+0, 3.4028234663852886e38, 0x1p-149,
                   0.6892089843750001, 1.3784179687499998}});
    fs.push_back({"tanh", presk_tanh, presk_tanhf, mpfr_tanh,
                  Mix{{{4, [](G g) { return log_uniform(g, -60, 5, true); }},
                       {2, [](G g) { return uniform(g, -1, 1); }},
                       {1, [](G g) { return log_uniform(g, -30, -25, true); }},
                       {1, [](G g) { return uniform(g, 15, 23); }},
                       {1, [](G g) { return uniform(g, 0.005, 0.05); }},
                       {1, [](G g) { return log_uniform(g, -1074, -1000, true); }}}},
                  Mix{{{4, [](G g) { return log_uniform(g, -149, 5, true); }},
                       {2, [](G g) { return uniform(g, -1, 1); }},
                       {1, [](G g) { return log_uniform(g, -14, -10, true); }},
                       {1, [](G g) { return uniform(g, 7, 10); }},
                       {1, [](G g) { return uniform(g, 0.005, 0.05); }}}},
                  {0x1p-28, 0x1.fffffffffffffp-29, 19.0, 19.1, 21.999999999999996, 22.0, 9.0, 9.1,
                   0.0108, 0.0109, 0x1p-1074, 0.5493061443340549}});
    auto trig_args64 = Mix{{{3, [](G g) { return log_uniform(g, -1074, 1024, true); }},
                            {2, [](G g) { return uniform(g, -10, 10); }},
                            {2, [](G g) { return near_multiple_of_pio2(g, 20); }},
                            {2, [](G g) { return near_multiple_of_pio2(g, 1000); }},
                            {1, [](G g) { return log_uniform(g, 19, 23, true); }}}};
    auto trig_args32 = Mix{{{3, [](G g) { return log_uniform(g, -149, 128, true); }},
                            {2, [](G g) { return uniform(g, -10, 10); }},
                            {2, [](G g) { return static_cast<double>(static_cast<float>(near_multiple_of_pio2(g, 20))); }},
                            {2, [](G g) { return static_cast<double>(static_cast<float>(near_multiple_of_pio2(g, 127))); }}}};
    // The doubles closest to a multiple of pi/2 (Muller, "Elementary Functions", ch. 11) and
    // the edges of the reductions.
    std::vector<double> trig_hard{std::ldexp(6381956970095103.0, 797), std::ldexp(5261692873635770.0, 499),
                                  std::ldexp(8010702961963409.0, -10), 1.5707963267948966, 3.141592653589793,
                                  0x1.921fb54442d18p-1, 0x1.921fb54442d19p-1, 0x1.921fb54442d18p+20,
                                  0x1.921fb54442d17p+20, 1e22, 1.7976931348623157e308, 0x1p-26, 0x1p-27,
                                  0x1.fffffffffffffp-27, 3.4028234663852886e38, 0x1p-1074, 355.0, 103993.0};
    fs.push_back({"sin", presk_sin, presk_sinf, mpfr_sin, trig_args64, trig_args32, trig_hard});
    fs.push_back({"cos", presk_cos, presk_cosf, mpfr_cos, trig_args64, trig_args32, trig_hard});
    fs.push_back({"erf", presk_erf, presk_erff, mpfr_erf,
                  Mix{{{4, [](G g) { return uniform(g, -6.5, 6.5); }},
                       {3, [](G g) { return log_uniform(g, -60, 3, true); }},
                       {1, [](G g) { return uniform(g, 0.4, 1.3); }},
                       {1, [](G g) { return uniform(g, 3, 6); }},
                       {1, [](G g) { return log_uniform(g, -1074, -38, true); }}}},
                  Mix{{{4, [](G g) { return uniform(g, -4.5, 4.5); }},
                       {3, [](G g) { return log_uniform(g, -149, 3, true); }},
                       {1, [](G g) { return uniform(g, 0.7, 1.3); }},
                       {1, [](G g) { return uniform(g, 2, 4); }}}},
                  {0.5, 0x1.fffffffffffffp-2, 0x1p-40, 0x1.fffffffffffffp-41, 0.75, 6.0, 5.9999999999999991,
                   5.86, 3.9, 0x1p-1074, 0x1p-1022, 0.875, 1.0, 0.7071067811865476}});
    // erfc: both signs of every piece, 6 and beyond (subnormal results from 26.54 in f64,
    // 9.19 in f32; +0 from 27.23 and 10.05).
    fs.push_back({"erfc", presk_erfc, presk_erfcf, erfc_128,
                  Mix{{{4, [](G g) { return uniform(g, -6.5, 27.5); }},
                       {2, [](G g) { return log_uniform(g, -60, 3, true); }},
                       {1, [](G g) { return uniform(g, 0.4, 1.3) * (g() & 1 ? -1 : 1); }},
                       {1, [](G g) { return uniform(g, 5.5, 6.5); }},
                       {1, [](G g) { return uniform(g, 26, 27.3); }},
                       {1, [](G g) { return log_uniform(g, -1074, -50, true); }}}},
                  Mix{{{4, [](G g) { return uniform(g, -4.5, 10.2); }},
                       {2, [](G g) { return log_uniform(g, -149, 3, true); }},
                       {1, [](G g) { return uniform(g, 0.4, 1.3) * (g() & 1 ? -1 : 1); }},
                       {1, [](G g) { return uniform(g, 5.5, 6.5); }},
                       {1, [](G g) { return uniform(g, 8.5, 10.2); }}}},
                  {0.5, -0.5, 0x1.fffffffffffffp-2, -0x1.fffffffffffffp-2, 0x1p-56, 0x1.fffffffffffffp-57,
                   -0x1p-56, 0x1p-54, -0x1p-54, 6.0, 5.9999999999999991, -6.0, -5.9999999999999991, 5.86, -5.86,
                   27.25, 27.249999999999996, 27.226017, 27.226018, 26.543258, 26.5, 10.054195, 10.054194,
                   9.1945494, 1.0, -1.0, 0x1p-1074, 0.4769362762044699}});
    return fs;
}

template <class T>
void measure_unary(const Unary& f, Format fmt, const char* type, T (*fn)(T), const Mix& args, Rng& g,
                   double bound, size_t n, const std::vector<double>& extra = {}) {
    Tally tally;
    Big x, y;
    auto check = [&](double a) {
        T xt = static_cast<T>(a);
        if (!std::isfinite(static_cast<double>(xt))) return;
        T got = fn(xt);
        mpfr_set_d(x.v, static_cast<double>(xt), MPFR_RNDN);
        f.exact(y.v, x.v, MPFR_RNDN);
        double err = ulp_error(y.v, static_cast<double>(got), fmt);
        double rounded = round_to(y.v, fmt);
        tally.add(err, static_cast<double>(got) == rounded, static_cast<double>(xt));
    };
    for (double a : f.hard) check(a);
    for (double a : extra) check(a);
    for (size_t i = 0; i < n; i++) check(args(g));
    print_row(f.name, type, tally, false);
    EXPECT_LE(tally.worst, bound) << f.name << " " << type << " at x = " << tally.at_x;
}

TEST(PreskMath, UnaryAgainstMpfr) {
    print_header();
    Rng g(20240607);
    for (const Unary& f : unary_functions()) {
        measure_unary<double>(f, kF64, "f64", f.f64, f.args64, g, kBoundF64, samples_per_set());
        measure_unary<float>(f, kF32, "f32", f.f32, f.args32, g, kBoundF32, samples_per_set());
    }
}

// ---- pow --------------------------------------------------------------------------------

/// (x, y) pairs: x over the whole range with y chosen so that y log x covers the whole
/// result range (overflow and subnormals included); x near 1 with large y; negative x with
/// integer y; small y.
template <class T>
std::pair<T, T> pow_arg(Rng& g, bool f32) {
    int emin = f32 ? -149 : -1074, emax = f32 ? 128 : 1024;
    double tmax = f32 ? 89 : 710, tmin = f32 ? -104 : -745.2;
    double x, y;
    switch (g() % 5) {
    case 0:
    case 1: {  // the whole result range
        do x = log_uniform(g, emin, emax, false);
        while (x == 1.0);
        y = uniform(g, tmin, tmax) / std::log(x);
        break;
    }
    case 2:  // x near 1, large y
        x = 1.0 + uniform(g, -1, 1) * std::ldexp(1.0, -static_cast<int>(g() % (f32 ? 24 : 53)));
        y = log_uniform(g, 0, f32 ? 30 : 60, true);
        break;
    case 3: {  // negative x, integer y
        x = -log_uniform(g, -20, 20, false);
        double ymax = std::floor(std::fabs(tmax / std::log(std::fabs(x))));
        y = std::floor(uniform(g, -ymax, ymax));
        break;
    }
    default:  // moderate x and y
        x = log_uniform(g, -20, 20, false);
        y = uniform(g, -8, 8);
        break;
    }
    return {static_cast<T>(x), static_cast<T>(y)};
}

template <class T>
void measure_pow(Format fmt, const char* type, T (*fn)(T, T), Rng& g, double bound, size_t n) {
    Tally tally;
    Big x, y, z;
    auto check = [&](T a, T b) {
        if (!std::isfinite(static_cast<double>(a)) || !std::isfinite(static_cast<double>(b))) return;
        T got = fn(a, b);
        mpfr_set_d(x.v, static_cast<double>(a), MPFR_RNDN);
        mpfr_set_d(y.v, static_cast<double>(b), MPFR_RNDN);
        mpfr_pow(z.v, x.v, y.v, MPFR_RNDN);
        double err = ulp_error(z.v, static_cast<double>(got), fmt);
        tally.add(err, static_cast<double>(got) == round_to(z.v, fmt), static_cast<double>(a),
                  static_cast<double>(b));
    };
    const double hard[][2] = {{2, 1023}, {2, -1074}, {2, -1075}, {2, 1024}, {0.5, 1074}, {10, 308},
                              {10, -323}, {-2, 3}, {-2, -1073}, {-0.5, 1075}, {1.0000000000000002, 1e17},
                              {0.9999999999999999, -1e17}, {3, 0.5}, {-3, 1}, {7, 1.0 / 3}, {2, 127},
                              {2, -149}, {2, -150}, {2, 128}, {-2, 127}};
    for (auto& h : hard) check(static_cast<T>(h[0]), static_cast<T>(h[1]));
    for (size_t i = 0; i < n; i++) {
        auto [a, b] = pow_arg<T>(g, fmt.prec == 24);
        check(a, b);
    }
    print_row("pow", type, tally, true);
    EXPECT_LE(tally.worst, bound) << "pow " << type << " at x = " << tally.at_x << ", y = " << tally.at_y;
}

TEST(PreskMath, PowAgainstMpfr) {
    print_header();
    Rng g(19830101);
    measure_pow<double>(kF64, "f64", presk_pow, g, kBoundF64, 2 * samples_per_set());
    measure_pow<float>(kF32, "f32", presk_powf, g, kBoundF32, 2 * samples_per_set());
}

// ---- the long sweep ---------------------------------------------------------------------

/// Every 257th float of [-16, 16] (of (0, 2^128) for log), each f32 function.
TEST(PreskMath, Float32Sweep) {
    if (!long_tests()) GTEST_SKIP() << "set GK_LONG_TESTS=1 for the sweep over floats";
    print_header();
    for (const Unary& f : unary_functions()) {
        Tally tally;
        Big x, y;
        bool is_log = std::strcmp(f.name, "log") == 0;
        uint32_t end = bits(is_log ? 3.4028234663852886e38f : 16.0f);
        for (uint32_t b = 1; b <= end; b += 257) {
            for (int sign = 0; sign < (is_log ? 1 : 2); sign++) {
                uint32_t u = b | (sign ? 0x80000000u : 0u);
                float a;
                std::memcpy(&a, &u, sizeof a);
                float got = f.f32(a);
                mpfr_set_d(x.v, a, MPFR_RNDN);
                f.exact(y.v, x.v, MPFR_RNDN);
                tally.add(ulp_error(y.v, got, kF32), static_cast<double>(got) == round_to(y.v, kF32), a);
            }
        }
        print_row(f.name, "f32", tally, false);
        EXPECT_LE(tally.worst, kBoundF32) << f.name << " at x = " << tally.at_x;
    }
}

// ---- the same bits everywhere -----------------------------------------------------------

uint64_t splitmix64(uint64_t& s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/// FNV-1a over the bytes of x's bits, least significant first.
uint64_t fnv(uint64_t h, double x) {
    uint64_t u = bits(x);
    for (int i = 0; i < 8; i++) {
        h ^= (u >> (8 * i)) & 255u;
        h *= 0x100000001b3u;
    }
    return h;
}

double from_bits(uint64_t u) {
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

/// Argument i: odd i a random bit pattern, even i uniform in [-a, a) (exact arithmetic on
/// the generator's bits, no library distribution, so every platform draws the same).
double hash_arg(uint64_t& s, int i, double a) {
    uint64_t u = splitmix64(s);
    return (i & 1) ? from_bits(u) : (static_cast<double>(u >> 11) * 0x1p-53 * 2.0 - 1.0) * a;
}

/// A digest of 200 000 results of each function in each type, recorded on x86-64 (GCC and
/// Clang, -O0 to -O3) and found identical on AArch64 (GCC, run under QEMU): a compiler or
/// platform that changes any bit fails here.
TEST(PreskMath, SameBitsEverywhere) {
    struct Fn {
        const char* name;
        double (*f64)(double);
        float (*f32)(float);
        double range;
        uint64_t want64, want32;
    };
    const Fn fns[] = {
        {"exp", presk_exp, presk_expf, 750, 0x677e734a2a59825au, 0xcea7894e9b396bedu},
        {"log", presk_log, presk_logf, 4, 0x778c31348c84c2fdu, 0x0f8f7e8f6d92f133u},
        {"tanh", presk_tanh, presk_tanhf, 25, 0xa5febf11cc301505u, 0xd381adab7ca317fbu},
        {"sin", presk_sin, presk_sinf, 20, 0x12462b3c9b32c7fdu, 0x80f9fe5c26e938d6u},
        {"cos", presk_cos, presk_cosf, 20, 0x4037b4ab5f7ba0a6u, 0x925725f7e5f17127u},
        {"erf", presk_erf, presk_erff, 7, 0x44140090d1c46387u, 0xc28ef84bb4de4bd0u},
        {"erfc", presk_erfc, presk_erfcf, 28, 0x18568d954221c8a3u, 0x793c66d8f7065c73u},
    };
    for (size_t f = 0; f < std::size(fns); f++) {
        uint64_t s = 42 + f, h = 0xcbf29ce484222325u, h32 = h;
        for (int i = 0; i < 200000; i++) {
            double x = hash_arg(s, i, fns[f].range);
            if (f == 1) {  // log: positive, half of them near 1
                x = x < 0 ? -x : x;  // not fabs: a NaN or -0 keeps its sign, as recorded
                if (!(i & 2)) x += 1.0;
            }
            h = fnv(h, fns[f].f64(x));
            uint32_t w = static_cast<uint32_t>(splitmix64(s));
            float xf;
            std::memcpy(&xf, &w, sizeof xf);
            if (!(i & 1)) xf = static_cast<float>(x);
            h32 = fnv(h32, static_cast<double>(fns[f].f32(xf)));
        }
        EXPECT_EQ(h, fns[f].want64) << fns[f].name << " f64";
        EXPECT_EQ(h32, fns[f].want32) << fns[f].name << " f32";
    }
    uint64_t s = 7, h = 0xcbf29ce484222325u, h32 = h;
    for (int i = 0; i < 200000; i++) {
        double x = hash_arg(s, i, 8), y = hash_arg(s, i >> 1, 60);
        h = fnv(h, presk_pow(x, y));
        h = fnv(h, presk_pow(x < 0 ? -x : x, y));
        h32 = fnv(h32, static_cast<double>(presk_powf(static_cast<float>(x), static_cast<float>(y))));
    }
    EXPECT_EQ(h, 0x91dcf2a8195715b2u) << "pow f64";
    EXPECT_EQ(h32, 0x6f23c03a5bc3f072u) << "pow f32";
}

// ---- special values ---------------------------------------------------------------------

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = [] {
    uint64_t u = 0x7ff8000000000000u;
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}();

/// The expected result of a special case, compared bit for bit in f64 and in f32.
void expect_same_bits(double got, double want, const char* what) {
    EXPECT_EQ(bits(got), bits(want)) << what << ": got " << got << ", want " << want;
}
void expect_same_bits(float got, double want, const char* what) {
    EXPECT_EQ(bits(got), bits(static_cast<float>(want))) << what << " (f32): got " << got << ", want " << want;
}

#define SPECIAL1(fn, x, want)                                                      \
    do {                                                                           \
        expect_same_bits(fn(x), want, #fn "(" #x ")");                             \
        expect_same_bits(fn##f(static_cast<float>(x)), want, #fn "f(" #x ")");     \
    } while (0)

TEST(PreskMath, SpecialValuesC99AnnexF) {
    // F.9.3.1 exp
    SPECIAL1(presk_exp, 0.0, 1.0);
    SPECIAL1(presk_exp, -0.0, 1.0);
    SPECIAL1(presk_exp, kInf, kInf);
    SPECIAL1(presk_exp, -kInf, 0.0);
    SPECIAL1(presk_exp, 1000.0, kInf);
    SPECIAL1(presk_exp, -1000.0, 0.0);
    SPECIAL1(presk_exp, kNaN, kNaN);
    EXPECT_EQ(presk_exp(709.79), kInf);
    EXPECT_EQ(presk_exp(-745.14), 0.0);
    EXPECT_EQ(presk_exp(-745.13), 0x1p-1074);
    EXPECT_EQ(presk_expf(88.73f), INFINITY);
    EXPECT_EQ(presk_expf(-103.98f), 0.0f);
    EXPECT_EQ(presk_expf(-103.97f), 0x1p-149f);
    // F.9.3.7 log
    SPECIAL1(presk_log, 0.0, -kInf);
    SPECIAL1(presk_log, -0.0, -kInf);
    SPECIAL1(presk_log, 1.0, 0.0);
    SPECIAL1(presk_log, -1.0, kNaN);
    SPECIAL1(presk_log, -0x1p-149, kNaN);
    SPECIAL1(presk_log, -kInf, kNaN);
    SPECIAL1(presk_log, kInf, kInf);
    SPECIAL1(presk_log, kNaN, kNaN);
    // F.9.2.6 tanh
    SPECIAL1(presk_tanh, 0.0, 0.0);
    SPECIAL1(presk_tanh, -0.0, -0.0);
    SPECIAL1(presk_tanh, kInf, 1.0);
    SPECIAL1(presk_tanh, -kInf, -1.0);
    SPECIAL1(presk_tanh, kNaN, kNaN);
    EXPECT_EQ(presk_tanh(0x1p-1074), 0x1p-1074);
    EXPECT_EQ(presk_tanh(-19.1), -1.0);
    EXPECT_EQ(presk_tanhf(9.02f), 1.0f);
    // F.9.1.6 sin, F.9.1.5 cos
    SPECIAL1(presk_sin, 0.0, 0.0);
    SPECIAL1(presk_sin, -0.0, -0.0);
    SPECIAL1(presk_sin, kInf, kNaN);
    SPECIAL1(presk_sin, -kInf, kNaN);
    SPECIAL1(presk_sin, kNaN, kNaN);
    SPECIAL1(presk_cos, 0.0, 1.0);
    SPECIAL1(presk_cos, -0.0, 1.0);
    SPECIAL1(presk_cos, kInf, kNaN);
    SPECIAL1(presk_cos, -kInf, kNaN);
    SPECIAL1(presk_cos, kNaN, kNaN);
    EXPECT_EQ(presk_sin(-0x1p-1074), -0x1p-1074);
    // F.9.5.1 erf
    SPECIAL1(presk_erf, 0.0, 0.0);
    SPECIAL1(presk_erf, -0.0, -0.0);
    SPECIAL1(presk_erf, kInf, 1.0);
    SPECIAL1(presk_erf, -kInf, -1.0);
    SPECIAL1(presk_erf, kNaN, kNaN);
    EXPECT_EQ(presk_erf(6.0), 1.0);
    EXPECT_EQ(presk_erf(-30.0), -1.0);
    EXPECT_EQ(presk_erf(0x1p-1074), 0x1p-1074);  // 2/sqrt(pi) 2^-1074 rounds to 2^-1074
    EXPECT_EQ(presk_erf(0x1p-1072), 5 * 0x1p-1074);  // 4.51 least subnormals round to 5
    // F.9.5.2 erfc
    SPECIAL1(presk_erfc, 0.0, 1.0);
    SPECIAL1(presk_erfc, -0.0, 1.0);
    SPECIAL1(presk_erfc, kInf, 0.0);
    SPECIAL1(presk_erfc, -kInf, 2.0);
    SPECIAL1(presk_erfc, kNaN, kNaN);
    SPECIAL1(presk_erfc, 0x1p-1074, 1.0);
    SPECIAL1(presk_erfc, -6.0, 2.0);
    SPECIAL1(presk_erfc, 30.0, 0.0);
    EXPECT_EQ(presk_erfc(27.23), 0.0);         // 0.40 least subnormals: +0
    EXPECT_EQ(presk_erfc(27.22), 0x1p-1074);   // 0.69 least subnormals
    EXPECT_EQ(presk_erfcf(10.06f), 0.0f);       // 0.44 least subnormals
    EXPECT_EQ(presk_erfcf(10.05f), 0x1p-149f);  // 0.54
    EXPECT_EQ(bits(presk_erfc(-30.0)), bits(2.0));
}

/// pow's special cases (C99 F.9.4.4), each in f64 and f32.
TEST(PreskMath, PowSpecialValues) {
    struct Case {
        double x, y, want;
    };
    const double nan = kNaN, inf = kInf;
    const Case cases[] = {
        {nan, 0.0, 1.0},    {nan, -0.0, 1.0},   {1.0, nan, 1.0},    {1.0, inf, 1.0},     {1.0, -inf, 1.0},
        {-1.0, inf, 1.0},   {-1.0, -inf, 1.0},  {nan, 1.0, nan},    {2.0, nan, nan},     {-2.0, 0.5, nan},
        {-2.0, -1.5, nan},  {-inf, 0.5, inf},   {0.0, -3.0, inf},   {-0.0, -3.0, -inf},  {0.0, -2.0, inf},
        {-0.0, -2.0, inf},  {-0.0, -0.5, inf},  {0.0, -inf, inf},   {-0.0, -inf, inf},   {0.0, 3.0, 0.0},
        {-0.0, 3.0, -0.0},  {-0.0, 2.0, 0.0},   {-0.0, 0.5, 0.0},   {0.0, inf, 0.0},     {0.5, -inf, inf},
        {-0.5, -inf, inf},  {2.0, -inf, 0.0},   {-2.0, -inf, 0.0},  {0.5, inf, 0.0},     {-0.5, inf, 0.0},
        {2.0, inf, inf},    {-2.0, inf, inf},   {-inf, -3.0, -0.0}, {-inf, -2.0, 0.0},   {-inf, -0.5, 0.0},
        {-inf, 3.0, -inf},  {-inf, 2.0, inf},   {-inf, 0.5, inf},   {inf, -1.0, 0.0},    {inf, 0.5, inf},
        {-2.0, 3.0, -8.0},  {-2.0, 2.0, 4.0},   {-2.0, -1.0, -0.5}, {2.0, 0.5, 1.4142135623730951},
        {4.0, 0.5, 2.0},    {-1.0, 1e300, 1.0}, {-1.0, 3.0, -1.0},  {2.0, 1024.0, inf},  {-2.0, 1025.0, -inf},
        {2.0, -1075.0, 0.0}, {-2.0, -1075.0, -0.0}, {2.0, -1074.0, 0x1p-1074}, {10.0, 2.0, 100.0},
    };
    for (const Case& c : cases) {
        std::string what = "pow(" + std::to_string(c.x) + ", " + std::to_string(c.y) + ")";
        expect_same_bits(presk_pow(c.x, c.y), c.want, what.c_str());
        if (std::fabs(c.y) < 1000 || std::isinf(c.y) || std::isnan(c.y))
            expect_same_bits(presk_powf(static_cast<float>(c.x), static_cast<float>(c.y)), c.want, what.c_str());
    }
    EXPECT_EQ(bits(presk_powf(2.0f, 128.0f)), bits(INFINITY));
    EXPECT_EQ(bits(presk_powf(-2.0f, -149.0f)), bits(-0x1p-149f));
    EXPECT_EQ(bits(presk_powf(2.0f, -150.0f)), bits(0.0f));
}

/// A NaN argument comes back quiet with its payload; invalid operations give the default NaN.
TEST(PreskMath, NaNBits) {
    uint64_t u = 0x7ff0000000000123u;  // signalling, payload 0x123
    double snan;
    std::memcpy(&snan, &u, sizeof snan);
    EXPECT_EQ(bits(presk_exp(snan)), 0x7ff8000000000123u);
    EXPECT_EQ(bits(presk_erfc(snan)), 0x7ff8000000000123u);
    EXPECT_EQ(bits(presk_sin(-kNaN)), 0xfff8000000000000u);
    EXPECT_EQ(bits(presk_log(-1.0)), 0x7ff8000000000000u);
    EXPECT_EQ(bits(presk_cos(kInf)), 0x7ff8000000000000u);
    EXPECT_EQ(bits(presk_pow(-8.0, 1.0 / 3)), 0x7ff8000000000000u);
    EXPECT_EQ(bits(presk_logf(-1.0f)), 0x7fc00000u);
}

}  // namespace
