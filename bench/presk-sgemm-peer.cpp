// presk-sgemm-peer: the peer of `presk bench`'s 1024^3 f32 matmul (issue 11, "beside
// OpenBLAS's cblas_sgemm and numpy in the same run"): C = A B with A, B, C n x n row-major
// floats, timed on one OpenBLAS thread; prints the median of --repeat calls (after one untimed
// call) in microseconds and GFLOP/s (2 n^3 operations). A plain program: it reports, never
// fails a build, and is not registered with CTest.
//
// presk-sgemm-peer [--n N] [--repeat R]   (defaults 1024 and 10)
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "median_time.h"

namespace {

int usage() {
    std::fprintf(stderr, "usage: presk-sgemm-peer [--n N] [--repeat R]   (N in 1..8192, R in 1..1000)\n");
    return 2;
}

// Values in [-1, 1) from a fixed sequence (any would do; they keep the products finite).
void fill(std::vector<float>& v, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (float& x : v) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = (float)((double)(s >> 40) / (double)(1ull << 23) - 1.0);
    }
}

} // namespace

int main(int argc, char** argv) {
    long n = 1024, repeat = 10;
    for (int i = 1; i < argc; ++i) {
        long* into = !std::strcmp(argv[i], "--n") ? &n : !std::strcmp(argv[i], "--repeat") ? &repeat : nullptr;
        if (!into || i + 1 == argc) return usage();
        char* end = nullptr;
        *into = std::strtol(argv[++i], &end, 10);
        if (*end) return usage();
    }
    if (n < 1 || n > 8192 || repeat < 1 || repeat > 1000) return usage();

    openblas_set_num_threads(1);
    std::vector<float> a((size_t)(n * n)), b((size_t)(n * n)), c((size_t)(n * n));
    fill(a, 1);
    fill(b, 2);
    auto call = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, a.data(), (int)n, b.data(),
                    (int)n, 0.0f, c.data(), (int)n);
    };
    const double median = median_call_us(repeat, call);
    const double gflops = 2.0 * (double)n * (double)n * (double)n / (median * 1e3);

    std::printf("sgemm %ld^3 f32, %d thread, median of %ld\n", n, openblas_get_num_threads(), repeat);
    std::printf("-- %s, core %s\n", openblas_get_config(), openblas_get_corename());
    std::printf("%-24s %12s %10s\n", "peer", "median us", "GFLOP/s");
    std::printf("%-24s %12.2f %10.2f\n", "openblas cblas_sgemm", median, gflops);
    return 0;
}
