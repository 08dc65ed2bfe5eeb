#pragma once
// The lifecycle of one rank of a command's job, end to end, in one place: the job's processes
// (MPI's, or threads in tests), the command's body on this rank, its Session built for its
// role, and how a failure anywhere becomes one verdict for the whole job.
//
//   run_mpi_ranks(body, report)      starts MPI (MpiScope), runs run_ranks over it, finalizes
//   run_ranks(world, body, report)   the same over any JobWorld (tests: in-process)
//   body(RankContext&)               the command on this rank: checks its flags, sizes its
//                                    threads (cores_per_rank()), then run_session(options,
//                                    work), which builds the Session and runs by role
//
// Roles (session.h): a server serves until every trainer is done and returns 0; a worker or
// trainer runs `work` over the session, then Session::finish() (work may call it earlier).
//
// Failure policy of a job of several ranks (alone, one rank, an exception propagates to the
// caller as it is). Every outcome reaches the command line as a FailureReport; `report`
// prints it (when it carries an error) and returns the exit code; nothing here prints.
//  - SetupError (failure.h: the Session's opening, or a later agreed set-up step): every rank
//    knows; the lowest failing rank reports its own error (naming itself unless every rank
//    failed), the others report nothing; every rank returns the code of that error's kind.
//  - UsageError: flag checks give the same verdict on every rank, so each rank that raises
//    one waits (at most kUsageAgreementSeconds) for all ranks to raise one too. If they all
//    do, rank 0 reports it unnamed and every rank returns the usage code. (A trainer's usage
//    error is first passed to the servers, Session::fail_with_usage_error, so they raise it
//    too.) Otherwise (a rank raised it alone) it is handled like any other error:
//  - any other exception: the rank reports it, named, with abort = true, and the job is
//    aborted (JobWorld::abort) with the returned code so that no peer hangs.
// A clean return on every rank lets MPI finish without an abort banner.
#include <exception>
#include <functional>

#include "partita/runtime/failure.h"
#include "partita/runtime/session.h"

namespace partita {
class Transport;
}  // namespace partita

namespace partita::runtime {

// How long a rank that raised a UsageError waits for the other ranks to raise one too.
constexpr double kUsageAgreementSeconds = 10;

// The processes of a job as the lifecycle needs them. MPI's is built by run_mpi_ranks;
// tests build one over threads (in-process transport and collectives).
class JobWorld {
 public:
  virtual ~JobWorld() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Cores this rank should size its thread pools to (MpiScope::cores_per_rank).
  virtual int cores_per_rank() const = 0;
  // This rank among, and the number of, the job's ranks on its host (MpiScope::local_rank,
  // local_size: MPI_COMM_TYPE_SHARED); a world that does not know says rank 0 of 1.
  virtual int local_rank() const { return 0; }
  virtual int local_size() const { return 1; }

  // This rank's wiring for a Session with `options`: the request transport and collectives
  // spanning the job and, in server-client mode, on a trainer, the trainers' collectives
  // (see Session's constructor). Collective over the job; every wait bounded by
  // options.timeout_s. The world owns them (they outlive the session); called at most once.
  struct Links {
    Transport& transport;
    Collectives& world;
    Collectives* trainers = nullptr;
  };
  virtual Links connect(const SessionOptions& options) = 0;

  // Whether every rank of the job calls this within `seconds` (the usage agreement). On
  // false the agreement may stay pending: the caller aborts the job.
  virtual bool all_ranks_raise(double seconds) = 0;
  // Ends every rank of the job with `code` (MPI_Abort). Never returns; an in-process world
  // may throw instead.
  [[noreturn]] virtual void abort(int code) = 0;
};

// This rank, as a command's body sees it.
class RankContext {
 public:
  explicit RankContext(JobWorld& world) : world_(world) {}
  RankContext(const RankContext&) = delete;
  RankContext& operator=(const RankContext&) = delete;

  int rank() const { return world_.rank(); }  // in the job (the world)
  int size() const { return world_.size(); }
  int cores_per_rank() const { return world_.cores_per_rank(); }
  int local_rank() const { return world_.local_rank(); }  // on this host
  int local_size() const { return world_.local_size(); }

  // Builds this rank's Session (collective over the job; a set-up failure on any rank is a
  // SetupError on every rank), then runs by role: a server serves until every trainer is
  // done (Session::finish) and returns 0; a worker or trainer returns work(session), after
  // Session::finish() (which work may call earlier, e.g. before printing results). A
  // UsageError from work is passed to the servers first, then rethrown. At most once.
  int run_session(const SessionOptions& options, const std::function<int(Session&)>& work);

 private:
  JobWorld& world_;
  bool used_ = false;
};

// What one rank reports when the job fails (see the failure policy above).
struct FailureReport {
  FailureKind kind = FailureKind::kInternal;
  // The exception this rank reports; null: it reports nothing (another rank does).
  std::exception_ptr error;
  // The world rank to name before the message; -1: the whole job's verdict, no rank named.
  int rank = -1;
  // The job is aborted with the returned code once `report` returns.
  bool abort = false;
};
// Prints `report` (when it carries an error) and returns the exit code of its kind.
using ReportFailure = std::function<int(const FailureReport& report)>;

using RankBody = std::function<int(RankContext& rank)>;

// Runs `body` on this rank of `world` and returns this rank's exit code (body's result, or
// report's for a failure); see the failure policy above.
int run_ranks(JobWorld& world, const RankBody& body, const ReportFailure& report);

// run_ranks over MPI: the MpiScope (MPI_Init_thread .. MPI_Finalize) lives exactly as long
// as this call, so call it once per process. Alone (a singleton run, or mpirun -np 1) an
// exception from body (or from starting MPI) propagates to the caller.
int run_mpi_ranks(const RankBody& body, const ReportFailure& report);

}  // namespace partita::runtime
