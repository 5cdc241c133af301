/* gk-mpi.h - the MPI backend: memory that is another process's (rank's), over MPI.
 *
 * A program started by mpirun calls gk_mpi_init first; then each other rank (peer) of
 * MPI_COMM_WORLD is a device of the registry, named "MPI<rank>" (type ACCEL), whose buffer
 * type is that peer's memory. Such memory has no host address (gk_backend_buffer_is_host
 * is false) and holds nothing on this side: writing a tensor there (gk_backend_tensor_set,
 * _memset, the scheduler's staging copy into it) sends the bytes to the peer, reading one
 * (gk_backend_tensor_get, the staging copy out of it) receives the next message of that
 * size from the peer, with MPI's own point-to-point calls (MPI_Send / MPI_Recv of bytes on
 * a communicator of gk's own, one tag). Messages between two ranks arrive in the order they
 * were sent, so the two sides must write and read in the same order and sizes: gk-run's
 * pipeline does (docs/mpi.md).
 *
 * A backend of an MPI device computes one op, GK_OP_CPY into its memory: the scheduler
 * stages the source into the peer's memory (the send) and the copy is then complete there.
 * That is how a graph hands a value to the next rank: gk_sched_set_tensor_backend places a
 * destination tensor in the peer's memory, and gk_cpy(ctx, value, destination) is computed
 * on the MPI backend. A rank receives the value through an input placed the same way in
 * the sending peer's memory: the split that reads it stages it in (the receive).
 *
 * Failures of the transfers themselves (a peer that died, sizes that do not match) are
 * MPI's: its default handler ends the whole job with MPI's message, so no rank waits for
 * a peer that is gone. Without MPI in the build (GK_MPI=OFF, or AUTO without MPI found)
 * gk_mpi_available() is false and gk_mpi_init fails with a message.
 *
 * Threads: MPI is initialised for calls from the thread that called gk_mpi_init only
 * (MPI_THREAD_FUNNELED); every function below and every transfer must run there.
 */
#ifndef GK_MPI_H
#define GK_MPI_H

#include "gk/gk-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** True when this build has the MPI backend. */
bool gk_mpi_available(void);

/** Initialise MPI (MPI_Init_thread, FUNNELED) with the program's arguments (may be NULL)
 *  and make the peer devices. GK_STATUS_UNSUPPORTED with a message when the build has no
 *  MPI; GK_STATUS_FAILED when MPI cannot start. A second call does nothing. */
enum gk_status gk_mpi_init(int * argc, char *** argv);
/** Finalise MPI (a no-op when gk_mpi_init did not succeed). Every rank must call it. */
void gk_mpi_finalize(void);
/** End every rank of the job now with exit status `code` (MPI_Abort): the way out of an
 *  error that one rank meets alone, so that no peer waits for it. Returns only when MPI
 *  is not initialised. */
void gk_mpi_abort(int code);

/** This process's rank in MPI_COMM_WORLD and the number of ranks (0 and 1 before
 *  gk_mpi_init). */
int gk_mpi_rank(void);
int gk_mpi_size(void);

/** A backend whose memory is rank `peer`'s (not this rank, 0 <= peer < gk_mpi_size());
 *  NULL with a message otherwise or before gk_mpi_init. Free with gk_backend_free. */
gk_backend_t gk_backend_mpi_init(int peer);

/** Collective (every rank calls it): `size` bytes at `data` of rank `root` copied to
 *  `data` of every rank (MPI_Bcast). GK_STATUS_INVALID_ARGUMENT for a bad root or a
 *  NULL data with size > 0, UNSUPPORTED before gk_mpi_init. */
enum gk_status gk_mpi_bcast(void * data, size_t size, int root);
/** Collective: true when `ok` is true on every rank (MPI_Allreduce with logical and);
 *  `ok` itself before gk_mpi_init. */
bool gk_mpi_all(bool ok);

#ifdef __cplusplus
}
#endif

#endif /* GK_MPI_H */
