// bench-codec - decode and encode throughput of every type with a codec (elements/s),
// and, when built against a reference ggml (GK_HAVE_REFERENCE), ggml's in the same run.
//
//   bench-codec [--benchmark_filter=q4_K] [--benchmark_repetitions=5 ...]
//
// Input: 16 gaussian rows of 4096 values (tests/quant/rows.h). Encodes take no imatrix,
// except for the types ggml refuses to encode without one (iq2_xxs, iq2_xs, iq1_s),
// which both sides encode with a flat imatrix.
#include "quant/codec.h"
#include "quant/rows.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#ifdef GK_HAVE_REFERENCE
#include "ggml.h"
#endif

namespace {

constexpr int64_t k_rows      = 16;
constexpr int64_t k_n_per_row = 4096;

const std::vector<float> & input() {
    static const std::vector<float> x = [] {
        std::vector<float> v;
        std::string        err;
        gk::test::make_rows(gk::test::family::gaussian, k_rows, k_n_per_row, v, err);
        return v;
    }();
    return x;
}

const float * imatrix_for(int t) {
    static const std::vector<float> flat(k_n_per_row, 1.0f);
    const bool needs = t == GK_TYPE_IQ2_XXS || t == GK_TYPE_IQ2_XS || t == GK_TYPE_IQ1_S;
    return needs ? flat.data() : nullptr;
}

size_t row_size(int t) { return gk_row_size(static_cast<gk_type>(t), k_n_per_row); }

/// The input encoded by our encoder, for the decode benchmarks.
std::vector<uint8_t> encoded(int t) {
    std::vector<uint8_t> q(row_size(t) * k_rows);
    gk::quant::quantize_rows(t, input().data(), q.data(), k_rows, k_n_per_row, imatrix_for(t));
    return q;
}

void count(benchmark::State & st) { st.SetItemsProcessed(st.iterations() * k_rows * k_n_per_row); }

void bm_decode(benchmark::State & st, int t) {
    const std::vector<uint8_t> q = encoded(t);
    std::vector<float>         y(input().size());
    for (auto _ : st) {
        gk::quant::dequantize_rows(t, q.data(), y.data(), k_rows, k_n_per_row);
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
    count(st);
}

void bm_encode(benchmark::State & st, int t) {
    std::vector<uint8_t> q(row_size(t) * k_rows);
    for (auto _ : st) {
        gk::quant::quantize_rows(t, input().data(), q.data(), k_rows, k_n_per_row, imatrix_for(t));
        benchmark::DoNotOptimize(q.data());
        benchmark::ClobberMemory();
    }
    count(st);
}

#ifdef GK_HAVE_REFERENCE
/// ggml_quantize_chunk takes every block type but q8_1 and q8_K, and f32/f16/bf16.
bool ggml_encodes(int t) {
    return t != GK_TYPE_Q8_1 && t != GK_TYPE_Q8_K &&
           (gk_is_quantized(static_cast<gk_type>(t)) || t == GK_TYPE_F32 || t == GK_TYPE_F16 || t == GK_TYPE_BF16);
}

void bm_ggml_decode(benchmark::State & st, int t) {
    const std::vector<uint8_t> q  = encoded(t);
    const ggml_to_float_t      fn = ggml_get_type_traits(static_cast<ggml_type>(t))->to_float;
    std::vector<float>         y(input().size());
    for (auto _ : st) {
        for (int64_t r = 0; r < k_rows; ++r) {
            fn(q.data() + r * row_size(t), y.data() + r * k_n_per_row, k_n_per_row);
        }
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
    count(st);
}

void bm_ggml_encode(benchmark::State & st, int t) {
    std::vector<uint8_t> q(row_size(t) * k_rows);
    ggml_quantize_init(static_cast<ggml_type>(t));  // its tables are built once, outside the timing
    for (auto _ : st) {
        ggml_quantize_chunk(static_cast<ggml_type>(t), input().data(), q.data(), 0, k_rows, k_n_per_row,
                            imatrix_for(t));
        benchmark::DoNotOptimize(q.data());
        benchmark::ClobberMemory();
    }
    count(st);
}
#endif

} // namespace

int main(int argc, char ** argv) {
    for (int t = 0; t < GK_TYPE_COUNT; ++t) {
        const gk::quant::type_traits * tt = gk::quant::get_type_traits(t);
        if (!tt || !tt->to_float || !tt->from_float) {
            continue;  // not a type, or its codec has not landed
        }
        const std::string name = tt->name;
        benchmark::RegisterBenchmark(("decode/gk/" + name).c_str(), bm_decode, t);
#ifdef GK_HAVE_REFERENCE
        if (ggml_get_type_traits(static_cast<ggml_type>(t))->to_float) {
            benchmark::RegisterBenchmark(("decode/ggml/" + name).c_str(), bm_ggml_decode, t);
        }
#endif
        benchmark::RegisterBenchmark(("encode/gk/" + name).c_str(), bm_encode, t);
#ifdef GK_HAVE_REFERENCE
        if (ggml_encodes(t)) {
            benchmark::RegisterBenchmark(("encode/ggml/" + name).c_str(), bm_ggml_encode, t);
        }
#endif
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 2;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
#ifdef GK_HAVE_REFERENCE
    ggml_quantize_free();
#endif
    return 0;
}
