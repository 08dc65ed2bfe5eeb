#pragma once
// One rank of an MPI job: the request transport and the collectives on communicators of
// their own (dups of MPI_COMM_WORLD), and the Session over them. In server-client mode
// (options.servers > 0) the trainers also get collectives of their own, over a split of the
// world (colour = role), for training; the transport and the set-up stay on the world. Declare it
// after the MpiScope, which must outlive it.
//
// Commands do not build one: they call run_mpi_ranks (rank_job.h), which owns the MPI scope
// and the job's failure policy. MpiRank is for programs that manage MPI themselves (the
// Python binding, benchmarks, MPI tests).
#include <memory>

#include "partita/comm/mpi_collectives.h"
#include "partita/comm/mpi_scope.h"
#include "partita/comm/mpi_transport.h"
#include "partita/runtime/session.h"

namespace partita::runtime {

// The communicators of a session on this rank (see above). Collective over MPI_COMM_WORLD;
// every wait is bounded by options.timeout_s (the collectives' communicator first, which
// proves every rank is there, then the transport's). The split for the trainers
// (MPI_Comm_split has no deadline) runs only after the world's collectives proved every
// rank is here. Throws TimeoutError when a rank is missing.
struct MpiLinks {
  MpiLinks(MpiScope& mpi, const SessionOptions& options);
  ~MpiLinks();
  MpiLinks(const MpiLinks&) = delete;
  MpiLinks& operator=(const MpiLinks&) = delete;

  MpiCollectives collectives;
  MpiTransport transport;
  std::unique_ptr<MpiCollectives> trainers;  // server-client mode, trainers only
};

class MpiRank {
 public:
  // Collective over MPI_COMM_WORLD (MpiLinks, then Session's agreed opening). Throws
  // SetupError as Session does, TimeoutError when a rank is missing.
  MpiRank(MpiScope& mpi, const SessionOptions& options);
  ~MpiRank();
  MpiRank(const MpiRank&) = delete;
  MpiRank& operator=(const MpiRank&) = delete;

  Session& session() { return *session_; }

 private:
  MpiLinks links_;
  std::unique_ptr<Session> session_;
};

}  // namespace partita::runtime
