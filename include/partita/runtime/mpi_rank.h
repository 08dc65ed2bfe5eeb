#pragma once
// One rank of an MPI job: the request transport and the collectives on communicators of
// their own (dups of MPI_COMM_WORLD), and the Session over them. In server-client mode
// (options.servers > 0) the trainers also get collectives of their own, over a split of the
// world (colour = role), for training; the transport and the set-up stay on the world. Declare it
// after the MpiScope, which must outlive it.
//
// Also the two MPI facts the command line's exit policy needs (cli/rank_main.h), so that
// it includes no MPI call itself: UsageAgreement and abort_job.
#include <memory>

#include "partita/comm/mpi_collectives.h"
#include "partita/comm/mpi_scope.h"
#include "partita/comm/mpi_transport.h"
#include "partita/runtime/session.h"

namespace partita::runtime {

class MpiRank {
 public:
  // Collective over MPI_COMM_WORLD; every wait is bounded by options.timeout_s (the
  // collectives' communicator first, which proves every rank is there, then the transport's
  // and the session's). Throws SetupError as Session does, TimeoutError when a rank is
  // missing. The split for the trainers (MPI_Comm_split has no deadline) runs only after the
  // world's collectives proved every rank is here.
  MpiRank(MpiScope& mpi, const SessionOptions& options);
  ~MpiRank();
  MpiRank(const MpiRank&) = delete;
  MpiRank& operator=(const MpiRank&) = delete;

  Session& session() { return *session_; }

 private:
  MpiCollectives collectives_;
  MpiTransport transport_;
  std::unique_ptr<MpiCollectives> trainers_;  // server-client mode, trainers only
  std::unique_ptr<Session> session_;
};

// Agreement on a usage error: flag checks give the same verdict on every rank, so each rank
// that raised one asks whether every rank did. Built before the body runs (collective: a
// communicator of its own, on which no other traffic can match).
class UsageAgreement {
 public:
  // Waits at most kStartupSeconds for every rank.
  explicit UsageAgreement(MpiScope& mpi);
  static constexpr double kStartupSeconds = 120;
  ~UsageAgreement();  // frees the communicator unless an agreement was left pending
  UsageAgreement(const UsageAgreement&) = delete;
  UsageAgreement& operator=(const UsageAgreement&) = delete;

  // Whether every rank joined within `seconds`; *lowest is then the lowest rank that did.
  // On false the request stays pending: the caller aborts the job.
  bool all_ranks_raise(double seconds, int* lowest);

 private:
  MpiScope& mpi_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool pending_ = false;
  int mine_ = 0;  // the pending agreement's buffers: MPI may write them until the abort
  int lowest_ = 0;
};

// Ends every rank of the job (MPI_Abort on MPI_COMM_WORLD) with `code`.
[[noreturn]] void abort_job(MpiScope& mpi, int code);

}  // namespace partita::runtime
