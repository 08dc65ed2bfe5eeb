#pragma once
// partition::DistComm over every rank of the running MPI job (MpiDistComm on a duplicate of
// MPI_COMM_WORLD), for `partita partition` under mpirun, without naming MPI's headers. Call
// it on every rank inside run_mpi_ranks's body (rank_job.h), which owns MPI's lifetime;
// destroy the result before that body returns. Every wait is bounded by timeout_s.
#include <memory>

#include "partita/partition/dist_comm.h"

namespace partita::runtime {

// Collective over the job's ranks. Throws CommError if MPI is not initialized.
std::unique_ptr<partition::DistComm> mpi_job_dist_comm(double timeout_s);

}  // namespace partita::runtime
