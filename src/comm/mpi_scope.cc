#include "partita/comm/mpi_scope.h"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "partita/comm/message_memory.h"
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

// Cores for this rank (see MpiScope::cores_per_rank): the CPUs it may run on (affinity
// mask: mpirun binding, taskset, cgroup cpuset), divided among the ranks of its host whose
// masks overlap its own. Collective over `local` (every local rank calls it).
int compute_cores_per_rank(MPI_Comm local, int local_size) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) CPU_ZERO(&mine);  // overlaps nothing
  std::vector<cpu_set_t> masks(static_cast<size_t>(std::max(1, local_size)));
  check_mpi(MPI_Allgather(&mine, sizeof(cpu_set_t), MPI_BYTE, masks.data(), sizeof(cpu_set_t),
                          MPI_BYTE, local),
            "MPI_Allgather of the CPU affinity masks on the host-local communicator");
  const int cpus = CPU_COUNT(&mine);
  if (cpus == 0) {  // no mask: assume the whole host, shared evenly
    const int host = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    return std::max(1, host / std::max(1, local_size));
  }
  int sharing = 0;  // local ranks (this one included) that may run on one of my CPUs
  for (cpu_set_t& other : masks) {
    cpu_set_t both;
    CPU_AND(&both, &mine, &other);
    if (CPU_COUNT(&both) > 0) ++sharing;
  }
  return std::max(1, cpus / std::max(1, sharing));
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
  // After MPI_Init_thread, in case the MPI library sets a policy of its own there.
  if (!keep_message_memory()) log_debug("MpiScope: the C library kept its own malloc policy");
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
    try {
      check_mpi(rank_rc, "MPI_Comm_rank of the host-local communicator");
      check_mpi(size_rc, "MPI_Comm_size of the host-local communicator");
      cores_per_rank_ = compute_cores_per_rank(local, local_size_);
    } catch (...) {
      MPI_Comm_free(&local);
      throw;
    }
    MPI_Comm_free(&local);
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
