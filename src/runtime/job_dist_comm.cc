// partition::DistComm over the running MPI job.
#include "partita/runtime/job_dist_comm.h"

#include <mpi.h>

#include "partita/comm/errors.h"
#include "partita/core/error.h"
#include "partita/runtime/mpi_dist_comm.h"

namespace partita::runtime {

std::unique_ptr<partition::DistComm> mpi_job_dist_comm(double timeout_s) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  PARTITA_CHECK(initialized != 0, CommError, "mpi_job_dist_comm: MPI is not initialized");
  MpiDistCommOptions options;
  options.timeout_s = timeout_s;
  return std::make_unique<MpiDistComm>(MPI_COMM_WORLD, options);
}

}  // namespace partita::runtime
