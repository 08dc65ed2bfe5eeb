#pragma once
// Collectives over every rank of the running MPI job (a dup of MPI_COMM_WORLD), for commands
// that need a barrier or a reduction but no Session (`partita generate` under mpirun). Call it
// on every rank inside run_mpi_ranks's body (rank_job.h), which owns MPI's lifetime; destroy
// the result before that body returns. Every wait is bounded by timeout_s (TimeoutError).
#include <memory>

#include "partita/comm/collectives.h"

namespace partita::runtime {

// Collective over the job's ranks. Throws CommError if MPI is not initialized.
std::unique_ptr<Collectives> mpi_job_collectives(double timeout_s);

}  // namespace partita::runtime
