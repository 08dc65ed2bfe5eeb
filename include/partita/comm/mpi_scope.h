#pragma once
// RAII owner of MPI_Init_thread / MPI_Finalize. Create exactly one, first thing in main(),
// and destroy it last: every MpiTransport, Collectives and RpcEndpoint over MPI must be gone
// before it (declare them after it). Works under mpirun/srun and alone (singleton, size 1).
//
// MPI_THREAD_MULTIPLE is required (DESIGN decision 5): the constructor throws CommError if
// the library provides less. MPI_COMM_WORLD gets the MPI_ERRORS_RETURN handler, so MPI
// failures on it become CommError instead of aborting the job.
//
// The constructor also sets the process's malloc policy for message buffers
// (keep_message_memory(), message_memory.h): multi-MiB requests and replies reuse heap
// memory instead of fresh pages per message.
//
// Not copyable or movable; all accessors are const and thread-safe.
#include <mpi.h>

namespace partita {

class MpiScope {
 public:
  // argc/argv may be null. Throws CommError if MPI was already initialized or finalized in
  // this process, or if MPI_THREAD_MULTIPLE is not available (MPI is finalized again first).
  MpiScope(int* argc, char*** argv);
  // Calls MPI_Finalize (never throws; a failure is logged).
  ~MpiScope();
  MpiScope(const MpiScope&) = delete;
  MpiScope& operator=(const MpiScope&) = delete;

  MPI_Comm world() const { return MPI_COMM_WORLD; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank among, and number of, the ranks on this host (MPI_COMM_TYPE_SHARED).
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // Cores this rank should size its thread pools to (DESIGN decision 10), at least 1: the
  // CPUs of its affinity mask divided by the number of ranks on this host whose masks
  // overlap it (itself included). So: bound to k CPUs of its own (mpirun --bind-to core,
  // PE=k) -> k; unbound -> the host's usable CPUs / local_size(); a mask on the whole job
  // (taskset, cgroup cpuset) is shared the same way (`taskset -c 0 partita train` -> 1;
  // two unbound ranks under a 4-CPU cpuset -> 2 each). Computed once, collectively, in the
  // constructor; CPU quotas (cgroup cpu.max) are not looked at.
  int cores_per_rank() const { return cores_per_rank_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int cores_per_rank_ = 1;
};

}  // namespace partita
