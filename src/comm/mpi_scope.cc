#include "partita/comm/mpi_scope.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "partita/comm/mpi_check.h"
#include "partita/core/log.h"

namespace partita {
namespace {

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown thread level";
  }
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

int compute_cores_per_rank(int local_size) {
  const int host = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int bound = affinity_cpus();
  // A launcher that binds ranks (mpirun --bind-to core/socket) has already divided the host.
  if (bound > 0 && bound < host) return bound;
  return std::max(1, host / std::max(1, local_size));
}

}  // namespace

MpiScope::MpiScope(int* argc, char*** argv) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  PARTITA_CHECK(!initialized && !finalized, CommError,
                "MPI is already {} in this process: create one MpiScope per process",
                finalized ? "finalized" : "initialized");

  int provided = MPI_THREAD_SINGLE;
  // MPI_Init_thread's failures go to MPI_ERRORS_ARE_FATAL (no communicator exists yet).
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  try {
    PARTITA_CHECK(provided >= MPI_THREAD_MULTIPLE, CommError,
                  "MPI provides only {} but Partita needs MPI_THREAD_MULTIPLE (a service "
                  "thread per rank): use an MPI library built with thread support",
                  thread_level_name(provided));
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler on MPI_COMM_WORLD");
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank of MPI_COMM_WORLD");
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size of MPI_COMM_WORLD");

    MPI_Comm local = MPI_COMM_NULL;
    check_mpi(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) on rank {}", rank_);
    const int rank_rc = MPI_Comm_rank(local, &local_rank_);
    const int size_rc = MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
    check_mpi(rank_rc, "MPI_Comm_rank of the host-local communicator");
    check_mpi(size_rc, "MPI_Comm_size of the host-local communicator");
    cores_per_rank_ = compute_cores_per_rank(local_size_);
  } catch (...) {
    MPI_Finalize();
    throw;
  }
  log_debug("mpi: rank {} of {}, local rank {} of {}, {} cores per rank", rank_, size_, local_rank_,
            local_size_, cores_per_rank_);
}

MpiScope::~MpiScope() {
  const int rc = MPI_Finalize();
  if (rc != MPI_SUCCESS) log_warning("MPI_Finalize on rank {}: {}", rank_, mpi_error_string(rc));
}

}  // namespace partita
