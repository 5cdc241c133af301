// exp-bench: ns per element of a softmax row's numerators and normaliser, gk's vector
// exp_shift (src/gk/cpu/vec_exp.h) in every kernel set the host runs and the sum in double
// (src/gk/cpu/ops/alibi.h), against the loop it replaced (libm expf per element, the same
// sum). Rows of 64, 512 and 4096 logits,
// medians of 15 interleaved runs. Reports and never fails; not registered with CTest.
#include "gk/cpu/kernel_set.h"
#include "gk/cpu/ops/alibi.h"
#include "gk/cpu/vec_exp.h"
#include "median_time.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

/// The softmax numerators and normaliser as gk computed them before vec_exp.h.
double libm_exp_sum(float * w, int64_t n, float max) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        w[i] = std::exp(w[i] - max);
        sum += w[i];
    }
    return sum;
}

} // namespace

int main(int argc, char ** argv) {
    if (argc > 1) {  // no options: --help says so, anything else is refused
        const bool help = std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h";
        std::fprintf(help ? stdout : stderr, "%susage: exp-bench (no options)\n",
                     help ? "" : ("exp-bench: unknown option '" + std::string(argv[1]) + "'\n").c_str());
        return help ? 0 : 2;
    }
    std::mt19937                    rng(1);
    std::normal_distribution<float> logit(0.0f, 3.0f);
    std::printf("%-8s %-8s %14s %14s %8s\n", "n", "set", "libm ns/elem", "gk ns/elem", "speedup");
    for (int64_t n : {64, 512, 4096}) {
        std::vector<float> x(static_cast<size_t>(n)), w(x.size());
        for (float & v : x) {
            v = logit(rng);
        }
        const float   max  = *std::max_element(x.begin(), x.end());
        const int64_t rows = 2000000 / n;  // about 2M elements per timed call
        volatile double sink = 0.0;
        for (const gk::cpu::kernel_set * set : gk::cpu::runnable_kernel_sets()) {
            const gk::cpu::exp_kernels & k = set->exp();
            std::vector<double>          a, b;
            for (int run = 0; run < 15; ++run) {  // interleaved: each run times both
                a.push_back(median_call_us(1, [&] {
                    for (int64_t r = 0; r < rows; ++r) {
                        std::copy(x.begin(), x.end(), w.begin());
                        sink = sink + libm_exp_sum(w.data(), n, max);
                    }
                }));
                b.push_back(median_call_us(1, [&] {
                    for (int64_t r = 0; r < rows; ++r) {
                        std::copy(x.begin(), x.end(), w.begin());
                        k.exp_shift(w.data(), n, max);
                        double sum = 0.0;
                        gk::cpu::detail::sum_rows<1>(w.data(), 0, &n, &sum);
                        sink = sink + sum;
                    }
                }));
            }
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            const double per = 1000.0 / static_cast<double>(rows * n);
            std::printf("%-8lld %-8s %14.2f %14.2f %7.1fx\n", static_cast<long long>(n), set->name, a[7] * per,
                        b[7] * per, a[7] / b[7]);
        }
    }
    return 0;
}
