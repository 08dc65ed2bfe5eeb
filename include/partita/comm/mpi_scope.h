#pragma once
// RAII owner of MPI_Init_thread / MPI_Finalize. Create exactly one, first thing in main(),
// and destroy it last: every MpiTransport, Collectives and RpcEndpoint over MPI must be gone
// before it (declare them after it). Works under mpirun/srun and alone (singleton, size 1).
//
// MPI_THREAD_MULTIPLE is required (DESIGN decision 5): the constructor throws CommError if
// the library provides less. MPI_COMM_WORLD gets the MPI_ERRORS_RETURN handler, so MPI
// failures on it become CommError instead of aborting the job.
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
  // Cores this rank should size its thread pools to (DESIGN decision 10): the CPUs of its
  // affinity mask when the launcher bound it to fewer than all of the host's CPUs,
  // otherwise the host's CPUs divided by local_size(); at least 1.
  int cores_per_rank() const { return cores_per_rank_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int cores_per_rank_ = 1;
};

}  // namespace partita
