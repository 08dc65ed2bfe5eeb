#pragma once
// Everything one rank of a distributed command needs, built in the order the contracts
// require: MPI first (and last to go), the mapped partition, a request transport and
// collectives on communicators of their own, every service route registered before the
// endpoint starts serving, then the clients (feature fetcher, distributed sampler).
//
// finish() shuts the request layer down cleanly (no rank stops serving while another may
// still ask it something); call it on the success path of every rank. On an error the
// command prints it and aborts the job (MPI_Abort) so that no peer waits forever, except
// for the errors every rank knows about (see run_rank), which end the job without an abort.
//
// Set-up is agreed: after every rank tried to map its part, one allreduce tells all ranks
// whether any failed (a missing or corrupt file, parts that do not match the ranks). If one
// did, the constructor throws SetupError on every rank: only the lowest failing rank carries
// its message, and every rank exits with that error's code.
#include <functional>
#include <memory>
#include <string>

#include "partita/comm/collectives.h"
#include "partita/comm/mpi_scope.h"
#include "partita/comm/mpi_transport.h"
#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/core/error.h"
#include "partita/sample/dist_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"

namespace partita::loader {

// A set-up failure that every rank of the job knows about (thrown by DistSession's
// constructor on every rank of a multi-rank job). report() is true on exactly one rank, the
// lowest failing one, whose what() is its own error message; exit_code() is that error's
// code on every rank (2 for a UsageError, else 1). all_failed() says that every rank failed,
// usually with the same error (e.g. parts that do not match the ranks).
class SetupError : public Error {
 public:
  SetupError(const std::string& message, int exit_code, bool report, bool all_failed)
      : Error(message), exit_code_(exit_code), report_(report), all_failed_(all_failed) {}
  int exit_code() const { return exit_code_; }
  bool report() const { return report_; }
  bool all_failed() const { return all_failed_; }

 private:
  int exit_code_;
  bool report_;
  bool all_failed_;
};

struct DistSessionOptions {
  std::string parts_dir;
  double timeout_s = 60;
  sample::LocalSamplerOptions sampling;
  store::DistGraphOptions graph;
};

class DistSession {
 public:
  DistSession(MpiScope& mpi, const DistSessionOptions& options);
  ~DistSession();

  int rank() const { return mpi_.rank(); }
  int size() const { return mpi_.size(); }
  const store::DistGraph& graph() const { return graph_; }
  Collectives& collectives() { return collectives_; }
  store::FeatureFetcher& fetcher() { return *fetcher_; }
  sample::DistSampler& sampler() { return *sampler_; }
  RpcEndpoint* endpoint() { return endpoint_.get(); }

  void finish();

 private:
  MpiScope& mpi_;
  store::DistGraph graph_;
  MpiTransport transport_;
  Collectives collectives_;
  std::unique_ptr<RpcEndpoint> endpoint_;
  std::unique_ptr<store::FeatureFetcher> fetcher_;
  std::unique_ptr<sample::DistSampler> sampler_;
};

// Runs `body` on this rank and returns the exit code. Alone (one rank) an exception
// propagates to the caller. In a job of several ranks, one `error: ...` line is printed for
// the whole job:
//  - SetupError (see above): the reporting rank prints it; every rank returns its code.
//  - UsageError: flag checks give the same verdict on every rank, so each rank that raises
//    one waits (at most kUsageAgreementSeconds) for all ranks to raise one too. If they all
//    do, the lowest rank prints its message and every rank returns 2. Otherwise (a rank
//    raised it alone) it is handled like any other error:
//  - any other exception: the rank prints `error: rank R: ...` and aborts the job
//    (MPI_Abort) so that peers do not hang.
// A clean return of 1 or 2 on every rank lets MPI finish without an abort banner.
int run_rank(MpiScope& mpi, const std::function<int()>& body);

// How long a rank that raised a UsageError waits for the other ranks to raise one too.
constexpr double kUsageAgreementSeconds = 10;

}  // namespace partita::loader
