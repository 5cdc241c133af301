// mpi_ranks.cpp - see mpi_ranks.h.
#include "mpi_ranks.h"

#include "gk/gk-mpi.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

namespace gk_run_tool {
namespace {

bool g_started = false;  // mpi_start started MPI
bool g_agreed  = false;  // the ranks agreed to stop (mpi_all_ok gave false)

/// Ends the process (exit status 1, a message) unless stop() comes within `seconds`.
class watchdog {
public:
    explicit watchdog(double seconds)
        : thread_([this, seconds] {
              std::unique_lock<std::mutex> lock(mutex_);
              if (!stopped_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
                  std::fprintf(stderr,
                               "gk-run: error: --mpi: not every MPI rank started within %g s (a process of the job "
                               "that is not gk-run --mpi, or one that failed before starting MPI?)\n",
                               seconds);
                  std::_Exit(1);
              }
          }) {}
    ~watchdog() { stop(); }
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        stopped_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

private:
    std::mutex              mutex_;
    std::condition_variable stopped_;
    bool                    done_ = false;
    std::thread             thread_;
};

} // namespace

std::string mpi_start(run_options & opt) {
    if (opt.chat || opt.interactive) {
        return "--mpi runs completions (-p, -f), not the interactive modes (-i, -if, -cnv)";
    }
    watchdog start(opt.mpi_start_timeout);
    if (gk_mpi_init(nullptr, nullptr) != GK_STATUS_SUCCESS) return std::string("--mpi: ") + gk_backend_last_error();
    g_started = true;
    gk_mpi_all(true);  // every rank is here
    start.stop();
    if (gk_mpi_rank() > 0) {
        if (!std::freopen("/dev/null", "w", stdout)) return "--mpi: cannot silence standard output";
        opt.dump_logits.clear();
        opt.show_timings = false;
        opt.verbose      = false;
    }
    if (opt.sampling.seed == gk::run::k_random_seed) {
        uint32_t seed = std::random_device{}();
        if (gk_mpi_bcast(&seed, sizeof seed, 0) != GK_STATUS_SUCCESS) {
            return std::string("--mpi: ") + gk_backend_last_error();
        }
        opt.sampling.seed = seed;
    }
    return "";
}

bool mpi_all_ok(bool ok) {
    if (!g_started) return ok;
    const bool all = gk_mpi_all(ok);
    g_agreed       = g_agreed || !all;
    return all;
}

std::string mpi_same_model(const gk::run::hparams & hp) {
    int64_t shape[3] = {hp.n_layer, hp.n_embd, hp.n_vocab};
    int64_t root[3]  = {hp.n_layer, hp.n_embd, hp.n_vocab};
    if (g_started && gk_mpi_bcast(root, sizeof root, 0) != GK_STATUS_SUCCESS) return gk_backend_last_error();
    const bool same = shape[0] == root[0] && shape[1] == root[1] && shape[2] == root[2];
    if (mpi_all_ok(same)) return "";
    if (same) return "the ranks loaded different models (another rank's differs from rank 0's)";
    return "this rank's model (" + std::to_string(shape[0]) + " layers, width " + std::to_string(shape[1]) +
           ", vocabulary " + std::to_string(shape[2]) + ") differs from rank 0's (" + std::to_string(root[0]) +
           " layers, width " + std::to_string(root[1]) + ", vocabulary " + std::to_string(root[2]) + ")";
}

std::string mpi_rank_prefix() {
    return g_started && gk_mpi_size() > 1 ? "rank " + std::to_string(gk_mpi_rank()) + ": " : "";
}

int mpi_finish(int rc) {
    if (!g_started) return rc;
    if (rc != 0 && !g_agreed && gk_mpi_size() > 1) gk_mpi_abort(rc);
    gk_mpi_finalize();
    return rc;
}

} // namespace gk_run_tool
