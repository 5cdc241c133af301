// gk-bench - mul_mat throughput (GFLOP/s) of every weight type, and, when built against a
// reference ggml with its CPU library, ggml's on the same bytes in the same process.
//
//   gk-bench [--types q4_0,q4_K,...] [--n 1,512] [--threads 1,2] [--k 4096] [--rows 14336]
//            [--prompt-rows M] [--budget-ms 200] [--min-runs 3] [--burst 3] [--stream-mb MB]
//            [--no-ggml]
//
// For every type: a weight of k x rows (the gk codec encodes 128 rows of N(0, 1) values,
// repeated to `rows`; the values do not change the time), and f32 N(0, 1) activations of n
// columns per shape. Shapes with n > 1 use the first --prompt-rows weight rows. Each case
// (type, shape, threads) runs in bursts, as a model runner calls a library: an untimed run,
// then --burst timed runs back to back, then the library rests (ggml's thread pool is
// paused, gk's sleeps by itself). The bursts alternate between gk and ggml (which goes first
// alternating too) until --budget-ms has passed and each has run --min-runs times. Runs
// alternated one by one measured each library just after the other: at 2 threads gk's
// worker had gone to sleep and was slow to wake, and ggml started new threads per run,
// neither of which a model runner sees. One markdown table row per case: median and best
// GFLOP/s of each library (2 k m n / time), the ratio of the medians, at 1 thread the ratio
// of the median CPU times (the process's: robust to the time slices a loaded machine takes
// away, while the wall ratio is not), and the relative L2 difference of the two results.
// With --stream-mb each library holds enough copies of the weight to pass MB megabytes and
// runs them in turn: one matrix computed over and over stays in the last-level cache (300
// MiB on the Intel Xeon of docs/performance.md), while a model's decode streams every
// weight from memory once per token.
// It reports, never judges: the exit status is 0 unless the arguments are wrong.
#include "gk-bench.h"
#include "median_time.h"

#include "gk/cpu/vec_dot.h"
#include "quant/codec.h"
#include "quant/rows.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gk::bench {

arena::arena(size_t bytes) {
    constexpr size_t k_huge = size_t{2} << 20;
    size_  = (bytes + k_huge - 1) / k_huge * k_huge;
    data_  = std::aligned_alloc(k_huge, size_);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (data_) {
        madvise(data_, size_, MADV_HUGEPAGE);  // a hint: without huge pages both sides still match
    }
#endif
}

arena::~arena() { std::free(data_); }

namespace {

struct options {
    std::vector<gk_type> types;  // empty: every weight type
    std::vector<int64_t> n       = {1, 512};
    std::vector<int>     threads = {1, 2};
    int64_t              k           = 4096;
    int64_t              rows        = 14336;
    int64_t              prompt_rows = 0;  // 0: rows
    double               budget_ms   = 200;
    int                  min_runs    = 3;
    int                  burst       = 3;
    int64_t              stream_mb   = 0;  // 0: one copy of the weight
    bool                 ggml        = true;
};

constexpr int64_t k_distinct_rows = 128;

void usage(FILE * f) {
    std::fprintf(f,
                 "usage: gk-bench [--types LIST] [--n LIST] [--threads LIST] [--k K] [--rows M]\n"
                 "                [--prompt-rows M] [--budget-ms MS] [--min-runs R] [--burst B]\n"
                 "                [--stream-mb MB] [--no-ggml]\n"
                 "  --types        weight types, comma separated (default: every type with a dot product)\n"
                 "  --n            activation columns per shape (default 1,512)\n"
                 "  --threads      thread counts (default 1,2)\n"
                 "  --k            weight row length (default 4096)\n"
                 "  --rows         weight rows (default 14336)\n"
                 "  --prompt-rows  weight rows used by shapes with n > 1 (default: --rows)\n"
                 "  --budget-ms    time per case, both libraries together (default 200)\n"
                 "  --min-runs     timed runs per library per case, at least (default 3)\n"
                 "  --burst        timed runs per burst, after one untimed run (default 3)\n"
                 "  --stream-mb    copies of the weight per library to pass MB megabytes, run in turn\n"
                 "                 (a decode from memory, as in a model; default: one copy)\n"
                 "  --no-ggml      gk only, even when built against a reference ggml\n");
}

template <class T> bool parse_list(const char * s, std::vector<T> & out) {
    out.clear();
    std::stringstream ss(s);
    std::string       item;
    while (std::getline(ss, item, ',')) {
        char *          end = nullptr;
        const long long v   = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1) {
            return false;
        }
        out.push_back(static_cast<T>(v));
    }
    return !out.empty();
}

bool parse_types(const char * s, std::vector<gk_type> & out) {
    std::stringstream ss(s);
    std::string       item;
    while (std::getline(ss, item, ',')) {
        gk_type t{};
        if (!gk_type_from_name(item.c_str(), &t)) {
            std::fprintf(stderr, "gk-bench: unknown type '%s'\n", item.c_str());
            return false;
        }
        out.push_back(t);
    }
    return !out.empty();
}

bool parse_int(const char * s, int64_t & out) {
    std::vector<int64_t> v;
    if (!parse_list(s, v) || v.size() != 1) {
        return false;
    }
    out = v[0];
    return true;
}

std::optional<options> parse(int argc, char ** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a     = argv[i];
        const char *      value = i + 1 < argc ? argv[i + 1] : nullptr;
        int64_t           v     = 0;
        bool              ok    = value != nullptr;
        if (a == "--no-ggml") {
            o.ggml = false;
            continue;
        }
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        }
        if (a == "--types") {
            ok = ok && parse_types(value, o.types);
        } else if (a == "--n") {
            ok = ok && parse_list(value, o.n);
        } else if (a == "--threads") {
            ok = ok && parse_list(value, o.threads);
        } else if (a == "--k") {
            ok = ok && parse_int(value, o.k);
        } else if (a == "--rows") {
            ok = ok && parse_int(value, o.rows);
        } else if (a == "--prompt-rows") {
            ok = ok && parse_int(value, o.prompt_rows);
        } else if (a == "--budget-ms") {
            ok = ok && parse_int(value, v);
            o.budget_ms = static_cast<double>(v);
        } else if (a == "--min-runs") {
            ok = ok && parse_int(value, v);
            o.min_runs = static_cast<int>(std::min<int64_t>(v, 1000000));
        } else if (a == "--stream-mb") {
            ok = ok && parse_int(value, o.stream_mb);
        } else if (a == "--burst") {
            ok      = ok && parse_int(value, v);
            o.burst = static_cast<int>(std::min<int64_t>(v, 1000));
        } else {
            ok = false;
        }
        if (!ok) {
            std::fprintf(stderr, "gk-bench: bad argument '%s'%s%s\n", a.c_str(), value ? " " : "", value ? value : "");
            return std::nullopt;
        }
        ++i;
    }
    if (o.prompt_rows == 0 || o.prompt_rows > o.rows) {
        o.prompt_rows = o.rows;
    }
    return o;
}

/// Every type a weight can have in a mul_mat: the codec encodes it and gk or the reference
/// has a dot product for it (the reference side is asked when its graphs are built).
std::vector<gk_type> weight_types() {
    std::vector<gk_type> out;
    for (int id = 0; id < GK_TYPE_COUNT; ++id) {
        const quant::type_traits * tt = quant::get_type_traits(id);
        const auto                 t  = static_cast<gk_type>(id);
        if (tt && tt->valid && tt->from_float && cpu::get_vec_dot_traits(t)) {
            out.push_back(t);
        }
    }
    return out;
}

/// N(0, 1) values from a fixed seed.
std::vector<float> normals(size_t count, uint64_t seed) {
    test::rng          r(seed);
    std::vector<float> v(count);
    for (float & x : v) {
        x = static_cast<float>(r.normal());
    }
    return v;
}

bool make_problem(const options & o, gk_type type, problem & p, std::string & err) {
    p.type = type;
    p.k    = o.k;
    p.rows = o.rows;
    if (!gk_row_len_ok(type, o.k)) {
        err = "rows of " + std::to_string(o.k) + " are not whole blocks";
        return false;
    }
    const size_t       row   = gk_row_size(type, o.k);
    const int64_t      nd    = std::min(o.rows, k_distinct_rows);
    const auto         w     = normals(static_cast<size_t>(nd * o.k), 1);
    std::vector<uint8_t> distinct(row * static_cast<size_t>(nd));
    if (quant::quantize_rows(type, w.data(), distinct.data(), nd, o.k, nullptr) == 0) {
        err = "the codec cannot encode it";
        return false;
    }
    p.weight.resize(row * static_cast<size_t>(o.rows));
    for (int64_t r = 0; r < o.rows; ++r) {
        std::memcpy(p.weight.data() + row * static_cast<size_t>(r), distinct.data() + row * static_cast<size_t>(r % nd),
                    row);
    }
    const int64_t stream = o.stream_mb * (int64_t(1) << 20);
    p.copies             = static_cast<int>(std::max<int64_t>(
        1, (stream + static_cast<int64_t>(p.weight.size()) - 1) / static_cast<int64_t>(p.weight.size())));
    p.shapes.clear();
    p.act.clear();
    for (int64_t n : o.n) {
        p.shapes.push_back({o.k, n > 1 ? o.prompt_rows : o.rows, n});
        p.act.push_back(normals(static_cast<size_t>(o.k * n), 2 + static_cast<uint64_t>(n)));
    }
    return true;
}

using clock_type = std::chrono::steady_clock;

/// The timed runs of one library in one case; after an error it gives no figures.
/// The process's CPU time in seconds (every thread, user and system).
double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct timing {
    std::vector<double> seconds;      // wall time per run
    std::vector<double> cpu_seconds;  // the process's CPU time per run
    std::string         error;

    bool failed() const { return !error.empty(); }

    void time(matmul & mm, size_t s, int nth) {
        if (failed()) {
            return;
        }
        const double c0 = process_cpu_seconds();
        const auto   t0 = clock_type::now();
        if (mm.run(s, nth, error)) {
            seconds.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
            cpu_seconds.push_back(process_cpu_seconds() - c0);
        }
    }

    /// GFLOP/s of the median run (0 when there is none).
    double median_rate(double gflop) const { return seconds.empty() || failed() ? 0 : gflop / median_of(seconds); }

    /// GFLOP/s of the median run's CPU time (0 when there is none).
    double median_cpu_rate(double gflop) const {
        const double m = cpu_seconds.empty() || failed() ? 0 : median_of(cpu_seconds);
        return m > 0 ? gflop / m : 0;
    }

    double best_rate(double gflop) const {
        return seconds.empty() || failed() ? 0 : gflop / *std::min_element(seconds.begin(), seconds.end());
    }
};

/// ||a - b|| / ||b|| over `count` values.
double rel_diff(const float * a, const float * b, int64_t count) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; ++i) {
        const double d = static_cast<double>(a[i]) - b[i];
        num += d * d;
        den += static_cast<double>(b[i]) * b[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::string fmt(const char * f, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// One burst of a library: an untimed run, then `o.burst` timed runs back to back, then the
/// library rests (its threads stop polling, so they do not take the other's cores).
void burst(const options & o, matmul & mm, timing & t, size_t s, int nth) {
    if (t.failed()) {
        return;
    }
    if (!mm.run(s, nth, t.error)) {
        return;
    }
    for (int r = 0; r < o.burst; ++r) {
        t.time(mm, s, nth);
    }
    mm.rest();
}

/// Time one case: bursts of each library, alternating (and which goes first alternating
/// too), until the budget is spent and each has run --min-runs times.
void run_case(const options & o, const problem & p, size_t s, int nth, matmul & ours, matmul * ref,
              std::vector<std::string> & notes) {
    const shape & sh    = p.shapes[s];
    const double  gflop = 2e-9 * static_cast<double>(sh.k) * static_cast<double>(sh.m) * static_cast<double>(sh.n);
    timing        a, b;
    const auto    min_runs = static_cast<size_t>(o.min_runs);
    const auto    t0       = clock_type::now();
    for (int round = 0;; ++round) {
        const double ms     = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
        const bool   enough = a.seconds.size() >= min_runs && (!ref || b.seconds.size() >= min_runs);
        if ((ms >= o.budget_ms && enough) || (a.failed() && (!ref || b.failed()))) {
            break;
        }
        if (round % 2 == 0) {
            burst(o, ours, a, s, nth);
        }
        if (ref) {
            burst(o, *ref, b, s, nth);
        }
        if (round % 2 == 1) {
            burst(o, ours, a, s, nth);
        }
    }
    const std::string name  = gk_type_name(p.type);
    const std::string shape = std::to_string(sh.k) + "x" + std::to_string(sh.m) + "x" + std::to_string(sh.n);
    const char *      path  = cpu::dot_path_name(cpu::get_vec_dot_traits(p.type)->path);
    const double      ga = a.median_rate(gflop), gb = b.median_rate(gflop);  // 0: no figure
    const auto        cell = [](double v) { return v > 0 ? fmt("%.1f", v) : std::string("-"); };
    const std::string ratio = ga > 0 && gb > 0 ? fmt("%.2f", ga / gb) : "-";
    // At 1 thread the CPU time is the time the kernel ran, whatever else the machine ran
    // meanwhile; with more threads it also counts their waits, so no figure is given.
    const double      ca = a.median_cpu_rate(gflop), cb = b.median_cpu_rate(gflop);
    const std::string cpu_ratio = nth == 1 && ca > 0 && cb > 0 ? fmt("%.2f", ca / cb) : "-";
    const std::string diff  = ref && !a.failed() && !b.failed()
                                  ? fmt("%.1e", rel_diff(ours.result(s), ref->result(s), sh.m * sh.n))
                                  : "-";
    std::printf("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %zu/%zu | %s |\n", name.c_str(), path,
                shape.c_str(), nth, cell(ga).c_str(), cell(a.best_rate(gflop)).c_str(), cell(gb).c_str(),
                cell(b.best_rate(gflop)).c_str(), ratio.c_str(), cpu_ratio.c_str(), a.seconds.size(),
                b.seconds.size(), diff.c_str());
    std::fflush(stdout);
    if (a.failed()) {
        notes.push_back(name + " " + shape + " gk: " + a.error);
    }
    if (b.failed()) {
        notes.push_back(name + " " + shape + " ggml: " + b.error);
    }
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string   line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) == 0) {
            const size_t c = line.find(':');
            return c == std::string::npos ? line : line.substr(c + 2);
        }
    }
    return "?";
}

std::unique_ptr<matmul> make_reference(const options & o, const problem & p, std::string & err) {
#ifdef GK_HAVE_REFERENCE_CPU
    if (o.ggml) {
        return make_ggml_matmul(p, err);
    }
#else
    (void) o;
    (void) p;
#endif
    err.clear();
    return nullptr;
}

bool built_with_reference() {
#ifdef GK_HAVE_REFERENCE_CPU
    return true;
#else
    return false;
#endif
}

int run(const options & o) {
    const bool compare = o.ggml && built_with_reference();
    std::printf(
        "gk-bench: mul_mat, weight %lld x %lld (rows used: %lld at n = 1, %lld at n > 1), f32 activations; "
        "budget %.0f ms per case, >= %d runs per library in bursts of %d; GFLOP/s = 2 K M N / time\n",
        static_cast<long long>(o.k), static_cast<long long>(o.rows), static_cast<long long>(o.rows),
        static_cast<long long>(o.prompt_rows), o.budget_ms, o.min_runs, o.burst);
    const char * reference = compare                  ? "ggml (same process, alternating bursts)"
                             : built_with_reference() ? "off (--no-ggml)"
                                                      : "not built in";
    if (o.stream_mb > 0) {
        std::printf("weights: copies of at least %lld MB in all per library, run in turn\n",
                    static_cast<long long>(o.stream_mb));
    }
    std::printf("cpu: %s; reference: %s\n\n", cpu_model().c_str(), reference);
    std::printf("| type | gk dot | K x M x N | thr | gk med | gk best | ggml med | ggml best | gk/ggml | gk/ggml cpu "
                "| runs | rel diff |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::fflush(stdout);
    std::vector<std::string> notes;
    const std::vector<gk_type> types = o.types.empty() ? weight_types() : o.types;
    for (gk_type t : types) {
        const std::string name = gk_type_name(t);
        problem           p;
        std::string       err;
        if (!cpu::get_vec_dot_traits(t) || !make_problem(o, t, p, err)) {
            notes.push_back(name + ": skipped: " + (err.empty() ? "gk has no dot product for it" : err));
            continue;
        }
        std::unique_ptr<matmul> ours = make_gk_matmul(p, err);
        if (!ours) {
            notes.push_back(name + ": skipped: gk: " + err);
            continue;
        }
        std::unique_ptr<matmul> ref = compare ? make_reference(o, p, err) : nullptr;
        if (compare && !ref) {
            notes.push_back(name + ": " + err);
        }
        for (size_t s = 0; s < p.shapes.size(); ++s) {
            for (int nth : o.threads) {
                run_case(o, p, s, nth, *ours, ref.get(), notes);
            }
        }
    }
    if (!notes.empty()) {
        std::printf("\nnotes:\n");
        for (const std::string & n : notes) {
            std::printf("- %s\n", n.c_str());
        }
    }
    return 0;
}

} // namespace
} // namespace gk::bench

int main(int argc, char ** argv) {
    const auto o = gk::bench::parse(argc, argv);
    if (!o) {
        gk::bench::usage(stderr);
        return 2;
    }
    return gk::bench::run(*o);
}
