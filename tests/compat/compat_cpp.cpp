// compat_cpp.cpp - a C++ program written only against the ggml compat headers (ggml-cpp.h's
// owners included): a graph of ops built with ggml_* and run through ggml_backend_sched,
// checked value by value; a refused build fails through ggml's abort path (not tested
// here: it aborts). argv[1]: a scratch directory (unused).
#include "ggml-backend.h"
#include "ggml-cpp.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

static void check(bool ok, const char * what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) {
        std::exit(1);
    }
}

int main() {
    ggml_init_params params{ggml_tensor_overhead() * 16 + ggml_graph_overhead(), nullptr, true};
    ggml_context_ptr ctx{ggml_init(params)};
    check(ctx != nullptr, "context");
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 8, 2);
    ggml_tensor * w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 8, 4);
    ggml_set_input(x);
    ggml_set_input(w);
    ggml_tensor * y = ggml_silu(ctx.get(), ggml_mul_mat(ctx.get(), w, x));       // [4, 2]
    ggml_tensor * z = ggml_soft_max(ctx.get(), ggml_scale(ctx.get(), y, 0.5f));  // rows sum to 1
    ggml_set_output(z);
    ggml_cgraph * graph = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(graph, z);
    check(ggml_graph_n_nodes(graph) == 4, "graph has mul_mat, silu, scale, soft_max");

    ggml_backend_ptr cpu{ggml_backend_cpu_init()};
    ggml_backend_t   backends[] = {cpu.get()};
    ggml_backend_sched_ptr sched{ggml_backend_sched_new(backends, nullptr, 1, GGML_DEFAULT_GRAPH_SIZE, false, true)};
    check(ggml_backend_sched_alloc_graph(sched.get(), graph), "sched allocates");
    std::vector<float> xv(16), wv(32);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.1f * static_cast<float>(i) - 0.5f;
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
    ggml_backend_tensor_set(x, xv.data(), 0, xv.size() * sizeof(float));
    ggml_backend_tensor_set(w, wv.data(), 0, wv.size() * sizeof(float));
    check(ggml_backend_sched_graph_compute(sched.get(), graph) == GGML_STATUS_SUCCESS, "sched computes");

    std::vector<float> zv(8);
    ggml_backend_tensor_get(z, zv.data(), 0, zv.size() * sizeof(float));
    bool close = true;
    for (int n = 0; n < 2; ++n) {
        double row[4], sum = 0, mx = -1e30;
        for (int m = 0; m < 4; ++m) {
            double d = 0;
            for (int k = 0; k < 8; ++k) d += static_cast<double>(wv[m * 8 + k]) * xv[n * 8 + k];
            row[m] = 0.5 * d / (1 + std::exp(-d));
            mx     = std::fmax(mx, row[m]);
        }
        for (double & r : row) sum += (r = std::exp(r - mx));
        for (int m = 0; m < 4; ++m) close = close && std::fabs(zv[n * 4 + m] - row[m] / sum) < 1e-5;
    }
    check(close, "silu(mul_mat) -> scale -> soft_max equals the double-precision reference within 1e-5");
    check(std::string_view(ggml_op_name(GGML_OP_MUL_MAT)) == "MUL_MAT" && std::string_view(ggml_op_desc(y)) == "SILU",
          "op names");
    std::printf("compat C++ program: all checks passed\n");
    return 0;
}
