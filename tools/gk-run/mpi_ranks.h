// mpi_ranks.h - gk-run --mpi: every rank of an MPI job runs the same gk-run, computes its
// layers of each forward graph (run/pipeline.h) and advances in lockstep with the others;
// rank 0 alone writes standard output, --dump-logits and the timings (docs/mpi.md).
//
// Exits: failures every rank meets together (found with mpi_all_ok) end every rank with
// its message and MPI finalised; a failure of one rank alone aborts the job (MPI_Abort),
// so that no rank waits for it; a rank that dies takes the job with it (mpirun's doing).
// A rank that never starts (a process of the job that is not gk-run --mpi) would leave
// the others waiting in MPI's start forever: a rank whose peers have not all started
// within --mpi-start-timeout seconds ends with an error instead.
#pragma once

#include "options.h"

#include "run/model.h"

#include <string>

namespace gk_run_tool {

/** --mpi: start MPI, wait for every rank (at most opt.mpi_start_timeout seconds: then
 *  the process ends with exit status 1 and a message) and fit `opt` to this rank (the
 *  others' standard output goes to /dev/null, no --dump-logits nor timings; one seed for
 *  all when it is drawn at random). "" when done, else why not: the build has no MPI, MPI
 *  cannot start, or the mode reads a terminal (-i, -cnv: only completions run over MPI). */
std::string mpi_start(run_options & opt);

/** Collective under --mpi (every rank calls it at the same point): true when `ok` on
 *  every rank; false tells every rank to stop, and mpi_finish then ends them together.
 *  Without --mpi: ok. */
bool mpi_all_ok(bool ok);

/** Collective under --mpi: "" when every rank loaded a model of rank 0's shape (layers,
 *  width, vocabulary), else what differs (the ranks would not fit together). */
std::string mpi_same_model(const gk::run::hparams & hp);

/** "rank R: " under --mpi over several ranks (begins gk-run's messages), else "". */
std::string mpi_rank_prefix();

/** The program's exit code `rc`, once MPI is done with: finalised when the ranks stop
 *  together (rc 0, or a failure mpi_all_ok agreed on), else the whole job aborted. */
int mpi_finish(int rc);

} // namespace gk_run_tool
