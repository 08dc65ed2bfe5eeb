// Collectives over the whole MPI job, without a Session (job_collectives.h).
#include "partita/runtime/job_collectives.h"

#include "partita/comm/errors.h"
#include "partita/comm/mpi_collectives.h"
#include "partita/core/error.h"

namespace partita::runtime {

std::unique_ptr<Collectives> mpi_job_collectives(double timeout_s) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  PARTITA_CHECK(initialized != 0, CommError,
                "internal: job collectives asked for outside run_mpi_ranks (MPI not initialized)");
  CollectiveOptions options;
  options.timeout_s = timeout_s;
  return std::make_unique<MpiCollectives>(MPI_COMM_WORLD, options);
}

}  // namespace partita::runtime
