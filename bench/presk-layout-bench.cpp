// presk-layout-bench: an m x k by k x n f32 matmul (bench/matmul.psk's dot; default m = k = n =
// 1024) run natively at every point of its layout space (kernel::layout_space with the
// register's lanes; at T > 1 threads each point split over T workers at the first of depths 0,
// 1, 2 the executor admits), the cost model's pick (presk plan's realize::choose_plan), and
// OpenBLAS's cblas_sgemm on as many threads where it was built with OpenBLAS: the median of
// --repeat calls of each, GFLOP/s, the cost model's predicted cycles (kernel/cost.h) and the
// best measured point. Then --rounds interleaved rounds of the best point, the pick and
// cblas_sgemm (one median of --repeat calls of each per round, in turn, so a change of
// the machine's load falls on all three alike) and the medians of the rounds: the pick's time
// over the best's and the best's and the pick's speed over OpenBLAS's. Every point's output is
// checked against the default's bytes (a point changes no bit). It reports and never fails; the
// times are the machine's as it is at the run (say under what load when recording them).
//
// Usage: presk-layout-bench [--n N | --shape M,K,N] [--repeat R] [--rounds U] [--threads T]...
//                           [--every E] [--only TEXT]... [--min-rows M]
// (default 1024, 3, 5, 1 and 2, 1: every point; E > 1 measures every E-th point of the space
// only, --only the points whose name (kernel::to_string) contains every TEXT, "lanes 16" say,
// and --min-rows M the tiles of at least M rows: a sample, which the output says)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernel/cost.h"
#include "kernel/layout.h"
#include "kernel/llvm_jit.h"
#include "lang/checker.h"
#include "lang/parser.h"
#include "median_time.h"
#include "realize/executor.h"
#include "realize/planner.h"
#include "ref/interp.h"

#ifdef PRESK_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using namespace presk;

struct Row {
    std::string name;
    double us = 0;
    double cycles = 0;  // the cost model's prediction, 0 for none
};

/// The multiply-adds of the m x k by k x n product, twice: its floating-point operations.
double flops(const int64_t (&mkn)[3]) { return 2.0 * (double)mkn[0] * (double)mkn[1] * (double)mkn[2]; }

void print(const Row& r, const int64_t (&mkn)[3]) {
    std::printf("  %-62s %10.2f ms %8.2f GFLOP/s", r.name.c_str(), r.us / 1e3, flops(mkn) / (r.us * 1e3));
    if (r.cycles) std::printf(" %8.2f Mcycles predicted", r.cycles / 1e6);
    std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is measured
    int64_t                  mkn[3] = {1024, 1024, 1024}, repeat = 3, every = 1, rounds = 5, min_rows = 0, n = 0;
    std::vector<std::string> only;
    std::vector<int>         threads = {1, 2};
    std::vector<int64_t>     shape;
    CLI::App                 app{"presk-layout-bench: an m x k by k x n f32 matmul at every point of its layout space",
                 "presk-layout-bench"};
    auto *                   n_opt = app.add_option("--n", n, "m = k = n (default 1024)")
                       ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
    app.add_option("--shape", shape, "M,K,N")
        ->delimiter(',')
        ->expected(3)
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 16))
        ->excludes(n_opt);
    app.add_option("--repeat", repeat, "timed calls per median")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
        ->capture_default_str();
    app.add_option("--rounds", rounds, "interleaved rounds of the best point, the pick and OpenBLAS")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
        ->capture_default_str();
    app.add_option("--threads", threads, "thread counts (repeat the option or list them)")
        ->delimiter(',')
        ->check(CLI::Range(1, 512));
    app.add_option("--every", every, "measure every E-th point of the space")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
        ->capture_default_str();
    app.add_option("--only", only, "points whose name contains every TEXT");
    app.add_option("--min-rows", min_rows, "tiles of at least M rows only")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    if (n > 0) mkn[0] = mkn[1] = mkn[2] = n;
    if (shape.size() == 3) std::copy(shape.begin(), shape.end(), mkn);
    if (!kernel::have_llvm()) {
        std::printf("presk-layout-bench: presk was built without LLVM: nothing to measure\n");
        return 0;
    }
    try {
        CheckOptions co;
        co.dims = {{"m", mkn[0]}, {"k", mkn[1]}, {"n", mkn[2]}};
        const core::Program p =
            check(parse(Source{"matmul.psk", "fn mm(x : [m, k], w : [k, n]) -> [m, n] {\n  dot(x, w)\n}\n"}), "mm", co);
        const realize::Realization r = realize::parse_realization("f32");
        ref::Interp interp(p, {64, 7, false});
        const std::vector<ref::Value> args = interp.entry_args();
        std::printf("presk-layout-bench: %lld x %lld by %lld x %lld f32 matmul on %s, median of %lld calls\n",
                    (long long)mkn[0], (long long)mkn[1], (long long)mkn[1], (long long)mkn[2], kernel::native_cpu().c_str(),
                    (long long)repeat);
        for (int t : threads) {
            realize::ExecOptions o;
            o.backend = realize::Backend::Native;
            o.threads = t;
            o.lanes = 0;
            o.log_launches = false;
            auto time_plan = [&](const realize::Plan& plan, std::string* bytes) {
                realize::ExecOptions po = o;
                po.plan = plan;
                realize::Executor ex(p, r, po);
                const std::vector<realize::Value> in = ex.convert_args(p.entry, args);
                realize::Value out;
                const double us = median_call_us(repeat, [&] { out = ex.call_values(p.entry, in); });
                *bytes = std::string(static_cast<const char*>(out.t->raw()), (size_t)out.t->size() * sizeof(float));
                return us;
            };
            realize::Executor probe(p, r, o);
            const auto nests = probe.nests();
            const std::string site = nests.begin()->first;
            const kernel::Node& node = nests.begin()->second.node;
            std::printf("-- %d thread%s\n", t, t == 1 ? "" : "s");
            std::string want, got;
            Row best{"", 0};
            const double default_us = time_plan({}, &want);
            print({"default point", default_us}, mkn);
            const std::vector<kernel::Layout> space = kernel::layout_space(node, kernel::register_lanes(kernel::DType::F32));
            const bool sample = every > 1 || !only.empty() || min_rows > 1;
            std::string which;
            for (const std::string& o : only) which += ", with \"" + o + "\"";
            if (min_rows > 1) which += ", of at least " + std::to_string(min_rows) + " rows";
            if (sample)
                std::printf("  (a sample: every %lld-th of the space's %zu candidates%s)\n", (long long)every, space.size(),
                            which.c_str());
            realize::Plan best_plan;
            for (size_t i = 0; i < space.size(); i += (size_t)every) {
                kernel::Layout l = space[i];
                const std::string name = kernel::to_string(l);
                if (l.tile_m < min_rows ||
                    std::any_of(only.begin(), only.end(), [&](const std::string& o) { return name.find(o) == std::string::npos; }))
                    continue;
                l.split_workers = t > 1 ? t : 1;
                double us = 0;
                for (int depth = 0; depth < (t > 1 ? 3 : 1) && !us; ++depth) {  // the first depth admitted
                    l.split_depth = depth;
                    realize::Plan plan;
                    plan.layout[site] = l;
                    plan.spelling = "@bench";
                    try {
                        us = time_plan(plan, &got);
                    } catch (const Error&) {
                        // a point (or a split) this nest does not admit
                    }
                }
                if (!us) continue;
                std::vector<kernel::Kernel> ks = kernel::lower_layout(node, kernel::DType::F32, l);
                ks.back().split_depth = l.split_depth;
                ks.back().split_workers = l.split_workers;
                Row row{kernel::to_string(l), us, kernel::cost(ks, kernel::host_registers()).cycles};
                if (got != want) row.name += " (OTHER BITS)";
                print(row, mkn);
                if (!best.us || us < best.us) {
                    best = row;
                    best_plan.layout[site] = l;
                    best_plan.spelling = "@best";
                }
            }
            if (!best.us) continue;
            const auto choices = realize::choose_plan(p, r, t, kernel::host_registers(), kernel::register_lanes);
            realize::Plan pick;
            pick.layout[choices.at(0).site] = choices.at(0).point;
            pick.spelling = "@pick";
            std::printf("  best measured%s: %s\n  the cost model's pick: %s (%.2f Mcycles predicted)\n", sample ? " of the sample" : "",
                        best.name.c_str(), kernel::to_string(choices.at(0).point).c_str(), choices.at(0).cost.cycles / 1e6);
            std::vector<double> best_us, pick_us, blas_us;
            std::function<double()> blas;
#ifdef PRESK_HAVE_OPENBLAS
            openblas_set_num_threads(t);
            const int m = (int)mkn[0], k = (int)mkn[1], n = (int)mkn[2];
            std::vector<float> a((size_t)m * (size_t)k), b((size_t)k * (size_t)n), c((size_t)m * (size_t)n);
            std::mt19937 rng(7);
            std::normal_distribution<float> d;
            for (float& x : a) x = d(rng);
            for (float& x : b) x = d(rng);
            blas = [&] {
                return median_call_us(repeat, [&] {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                                c.data(), n);
                });
            };
#endif
            for (int64_t u = 0; u < rounds; ++u) {
                best_us.push_back(time_plan(best_plan, &got));
                pick_us.push_back(time_plan(pick, &got));
                if (got != want) std::printf("  the pick gives OTHER BITS\n");
                if (blas) blas_us.push_back(blas());
            }
            std::printf("  %lld interleaved rounds, the median of each:\n", (long long)rounds);
            const double bu = median_of(best_us), pu = median_of(pick_us);
            print({"the best point", bu}, mkn);
            print({"the cost model's pick", pu}, mkn);
            std::printf("  the pick's time over the best's: %.2f\n", pu / bu);
            if (blas) {
                const double ou = median_of(blas_us);
                print({"openblas cblas_sgemm", ou}, mkn);
                std::printf("  over OpenBLAS's speed: the best point %.2f, the pick %.2f\n", ou / bu, ou / pu);
            } else {
                std::printf("  (built without OpenBLAS: no cblas_sgemm row)\n");
            }
        }
    } catch (const Error& e) {
        std::printf("presk-layout-bench: %s\n", e.what());
    }
    return 0;
}
