// comm.cpp - MPI's start and end, the rank queries and the collectives of gk-mpi.h, and
// the peer devices made at the start (registered with the device registry).
#include "peer.h"

#include <memory>
#include <vector>

namespace gk::mpi {
namespace {

struct state {
    bool                                      started = false;  // gk_mpi_init succeeded
    bool                                      owns    = false;  // and called MPI_Init_thread
    MPI_Comm                                  comm    = MPI_COMM_NULL;
    int                                       rank    = 0;
    int                                       size    = 1;
    std::vector<std::unique_ptr<peer_device>> peers;  // by rank; nullptr for this rank
};

state & the_state() {
    static state * s = new state;  // never destroyed: devices stay registered until exit
    return *s;
}

} // namespace

MPI_Comm comm() { return the_state().comm; }

peer_device * peer(int rank) {
    state & s = the_state();
    return rank >= 0 && rank < static_cast<int>(s.peers.size()) ? s.peers[static_cast<size_t>(rank)].get() : nullptr;
}

} // namespace gk::mpi

using gk::backend_error;

extern "C" {

bool gk_mpi_available(void) { return true; }

gk_status gk_mpi_init(int * argc, char *** argv) {
    gk::mpi::state & s = gk::mpi::the_state();
    if (s.started) return GK_STATUS_SUCCESS;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            backend_error("mpi_init: MPI_Init_thread failed");
            return GK_STATUS_FAILED;
        }
        s.owns = true;
    }
    if (MPI_Comm_dup(MPI_COMM_WORLD, &s.comm) != MPI_SUCCESS) {
        backend_error("mpi_init: MPI_Comm_dup failed");
        return GK_STATUS_FAILED;
    }
    MPI_Comm_rank(s.comm, &s.rank);
    MPI_Comm_size(s.comm, &s.size);
    s.peers.resize(static_cast<size_t>(s.size));
    for (int r = 0; r < s.size; ++r) {
        if (r == s.rank) continue;
        auto d         = std::make_unique<gk::mpi::peer_device>();
        d->rank        = r;
        d->name        = "MPI" + std::to_string(r);
        d->description = "memory of MPI rank " + std::to_string(r) + " (this process is rank " +
                         std::to_string(s.rank) + " of " + std::to_string(s.size) + ")";
        gk::mpi::init_peer_device(*d);
        gk_backend_device_register(&d->device);
        s.peers[static_cast<size_t>(r)] = std::move(d);
    }
    s.started = true;
    return GK_STATUS_SUCCESS;
}

void gk_mpi_finalize(void) {
    gk::mpi::state & s = gk::mpi::the_state();
    if (!s.started) return;
    MPI_Comm_free(&s.comm);
    if (s.owns) MPI_Finalize();
    s.started = false;
}

void gk_mpi_abort(int code) {
    if (gk::mpi::the_state().started) MPI_Abort(MPI_COMM_WORLD, code);
}

int gk_mpi_rank(void) { return gk::mpi::the_state().rank; }

int gk_mpi_size(void) { return gk::mpi::the_state().size; }

gk_status gk_mpi_bcast(void * data, size_t size, int root) {
    const gk::mpi::state & s = gk::mpi::the_state();
    if (!s.started) {
        backend_error("mpi_bcast: MPI is not initialised (gk_mpi_init)");
        return GK_STATUS_UNSUPPORTED;
    }
    if (root < 0 || root >= s.size || (!data && size > 0)) {
        backend_error("mpi_bcast: %s", !data && size > 0 ? "data is NULL" : "root is not a rank");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    auto * bytes = static_cast<unsigned char *>(data);
    gk::mpi::in_pieces(size, [&](size_t at, int n) { MPI_Bcast(bytes + at, n, MPI_BYTE, root, s.comm); });
    return GK_STATUS_SUCCESS;
}

bool gk_mpi_all(bool ok) {
    const gk::mpi::state & s = gk::mpi::the_state();
    if (!s.started) return ok;
    int mine = ok ? 1 : 0;
    int all  = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, s.comm);
    return all != 0;
}

} // extern "C"
