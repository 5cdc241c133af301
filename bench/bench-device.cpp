// bench-device - the device backends' speed against the CPU backend's on the same graphs
// (the "bench-cuda"; it measures every device the build and the machine have:
// CUDA0, ..., Vulkan0, ..., and the CPU as the baseline).
//
//   bench-device [--benchmark_filter=CUDA0] [--benchmark_repetitions=5 ...]
//
// Cases, each a one-node graph computed on one backend with its inputs and weights already
// in that backend's memory (no staging, no scheduler), timed to the end of the computation
// (gk_backend_synchronize):
//   mul_mat/TYPE/N    a 4096 x 4096 weight of TYPE (f32, f16, q8_0, q4_0, q4_K, q6_K) times N
//                     f32 columns (1: decode, 128: a prompt batch); counter GFLOP/s = 2 K M N
//   flash_attn/KV     one query token of 32 heads of 128 against KV cached f16 keys and
//                     values (decode attention); counter GB/s of K and V read
// A device that does not support a case (gk_backend_supports_op) reports it as skipped.
// Software Vulkan devices (lavapipe) are listed too (GK_VULKAN_SOFTWARE=1 is set), so the
// program runs on a machine without a GPU; their figures are the CPU running shaders.
// The CPU backend runs on all hardware threads (GK_BENCH_THREADS overrides). It reports
// and never fails; it is not registered with CTest. scripts/device-check runs it.
#include "gk/gk-alloc.h"
#include "gk/gk-backend.h"
#include "gk/gk.h"
#include "quant/codec.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t k_dim = 4096;  // the weight's K and M

struct ctx_deleter {
    void operator()(gk_context * c) const { gk_free(c); }
};
struct buffer_deleter {
    void operator()(gk_backend_buffer * b) const { gk_backend_buffer_free(b); }
};
struct backend_deleter {
    void operator()(gk_backend * b) const { gk_backend_free(b); }
};
using ctx_ptr     = std::unique_ptr<gk_context, ctx_deleter>;
using buffer_ptr  = std::unique_ptr<gk_backend_buffer, buffer_deleter>;
using backend_ptr = std::unique_ptr<gk_backend, backend_deleter>;

/// Deterministic values in [-1, 1) (a 32-bit LCG).
std::vector<float> values(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t           s = seed * 2654435761u + 1;
    for (float & x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(s >> 8) / 8388608.0f - 1.0f;
    }
    return v;
}

/// The bytes of a tensor of `t`'s type and shape holding values(seed), encoded by gk's codec.
std::vector<unsigned char> encoded(const gk_tensor * t, uint32_t seed) {
    const int64_t              n = gk_nelements(t);
    const std::vector<float>   v = values(static_cast<size_t>(n), seed);
    std::vector<unsigned char> b(gk_nbytes(t));
    if (t->type == GK_TYPE_F32) {
        std::memcpy(b.data(), v.data(), b.size());
    } else {
        gk::quant::quantize_rows(t->type, v.data(), b.data(), n / t->ne[0], t->ne[0], nullptr);
    }
    return b;
}

/// The backend a case runs on: the device's own, the CPU with its thread count.
backend_ptr make_backend(gk_backend_dev_t dev) {
    backend_ptr b(gk_backend_dev_init(dev, nullptr));
    if (b && gk_backend_is_cpu(b.get())) {
        const char * env = std::getenv("GK_BENCH_THREADS");
        const int    n   = env ? std::atoi(env) : static_cast<int>(std::thread::hardware_concurrency());
        gk_backend_cpu_set_n_threads(b.get(), n > 0 ? n : 1);
    }
    return b;
}

/// Builds the case's graph in `ctx` (no_alloc) and returns its one node.
using build_fn = gk_tensor * (*)(gk_context * ctx, int64_t arg);

/// Run one case: build, place every tensor in the device's buffer, fill the leaves, then
/// time gk_backend_graph_compute + synchronize. `work` turns the argument into the counter's
/// units per run (flops or bytes).
void run_case(benchmark::State & state, gk_backend_dev_t dev, build_fn build, double (*work)(int64_t),
              const char * counter) {
    const int64_t arg = state.range(0);
    ctx_ptr       ctx(gk_init({64 * gk_tensor_overhead() + gk_graph_overhead(), nullptr, true}));
    gk_tensor *   out = ctx ? build(ctx.get(), arg) : nullptr;
    backend_ptr   backend = out ? make_backend(dev) : nullptr;
    if (!backend) {
        state.SkipWithError(("cannot build the case: " + std::string(gk_backend_last_error())).c_str());
        return;
    }
    if (!gk_backend_supports_op(backend.get(), out)) {
        state.SkipWithError("skipped: the device does not support this case");
        return;
    }
    buffer_ptr buf(gk_backend_alloc_ctx_tensors(ctx.get(), backend.get()));
    if (!buf) {
        state.SkipWithError(("cannot allocate: " + std::string(gk_backend_last_error())).c_str());
        return;
    }
    uint32_t seed = 1;
    for (int i = 0; i < GK_MAX_SRC && out->src[i]; ++i) {
        const std::vector<unsigned char> b = encoded(out->src[i], seed++);
        gk_backend_tensor_set(out->src[i], b.data(), 0, b.size());
    }
    gk_cgraph * g = gk_new_graph(ctx.get());
    if (gk_build_forward_expand(g, out) != GK_STATUS_SUCCESS ||
        gk_backend_graph_compute(backend.get(), g) != GK_STATUS_SUCCESS) {  // also the warm-up
        state.SkipWithError(("compute failed: " + std::string(gk_backend_last_error())).c_str());
        return;
    }
    gk_backend_synchronize(backend.get());
    for (auto _ : state) {
        gk_backend_graph_compute(backend.get(), g);
        gk_backend_synchronize(backend.get());
    }
    state.counters[counter] = benchmark::Counter(work(arg) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

/// mul_mat of a k_dim x k_dim weight of type T with N f32 columns.
template <gk_type T> gk_tensor * mul_mat_case(gk_context * ctx, int64_t n) {
    gk_tensor * w = gk_new_tensor_2d(ctx, T, k_dim, k_dim);
    gk_tensor * x = gk_new_tensor_2d(ctx, GK_TYPE_F32, k_dim, n);
    return w && x ? gk_mul_mat(ctx, w, x) : nullptr;
}
double mul_mat_flops(int64_t n) { return 2.0 * k_dim * k_dim * static_cast<double>(n); }

constexpr int64_t k_heads = 32, k_head_dim = 128;

/// One query of 32 heads of 128 against kv f16 keys and values (decode attention).
gk_tensor * flash_attn_case(gk_context * ctx, int64_t kv) {
    gk_tensor * q = gk_new_tensor_3d(ctx, GK_TYPE_F32, k_head_dim, 1, k_heads);
    gk_tensor * k = gk_new_tensor_3d(ctx, GK_TYPE_F16, k_head_dim, kv, k_heads);
    gk_tensor * v = gk_new_tensor_3d(ctx, GK_TYPE_F16, k_head_dim, kv, k_heads);
    return q && k && v ? gk_flash_attn_ext(ctx, q, k, v, nullptr, 0.088388f, 0.0f, 0.0f) : nullptr;
}
double flash_attn_bytes(int64_t kv) { return 2.0 * 2.0 * k_head_dim * k_heads * static_cast<double>(kv); }

struct mul_mat_type {
    const char * name;
    build_fn     build;
};
constexpr mul_mat_type k_types[] = {
    {"f32", mul_mat_case<GK_TYPE_F32>},   {"f16", mul_mat_case<GK_TYPE_F16>},
    {"q8_0", mul_mat_case<GK_TYPE_Q8_0>}, {"q4_0", mul_mat_case<GK_TYPE_Q4_0>},
    {"q4_K", mul_mat_case<GK_TYPE_Q4_K>}, {"q6_K", mul_mat_case<GK_TYPE_Q6_K>},
};

/// Every case on every device, the CPU last.
void register_cases() {
    setenv("GK_VULKAN_SOFTWARE", "1", 0);  // before the first registry call
    for (size_t i = 0; i < gk_backend_dev_count(); ++i) {
        gk_backend_dev_t  dev  = gk_backend_dev_get(i);
        const std::string name = gk_backend_dev_name(dev);
        for (const mul_mat_type & t : k_types) {
            benchmark::RegisterBenchmark((name + "/mul_mat/" + t.name).c_str(),
                                         [dev, t](benchmark::State & s) { run_case(s, dev, t.build, mul_mat_flops, "GFLOP/s"); })
                ->Arg(1)
                ->Arg(128)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
        benchmark::RegisterBenchmark((name + "/flash_attn").c_str(),
                                     [dev](benchmark::State & s) { run_case(s, dev, flash_attn_case, flash_attn_bytes, "GB/s"); })
            ->Arg(4096)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
    }
}

} // namespace

int main(int argc, char ** argv) {
    register_cases();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
