// absent.cpp - gk-mpi.h in a build without MPI (GK_MPI=OFF, or AUTO without MPI found):
// nothing starts, every rank query answers for one process alone.
#include "../backend/impl.h"
#include "gk/gk-mpi.h"

using gk::backend_error;

extern "C" {

bool gk_mpi_available(void) { return false; }

gk_status gk_mpi_init(int *, char ***) {
    backend_error("this build has no MPI backend (configure with MPI installed, or -DGK_MPI=ON)");
    return GK_STATUS_UNSUPPORTED;
}

void gk_mpi_finalize(void) {}
void gk_mpi_abort(int) {}
int  gk_mpi_rank(void) { return 0; }
int  gk_mpi_size(void) { return 1; }

gk_backend_t gk_backend_mpi_init(int peer) {
    backend_error("backend_mpi_init: this build has no MPI backend (rank %d)", peer);
    return nullptr;
}

gk_status gk_mpi_bcast(void *, size_t, int) {
    backend_error("mpi_bcast: this build has no MPI backend");
    return GK_STATUS_UNSUPPORTED;
}

bool gk_mpi_all(bool ok) { return ok; }

} // extern "C"
