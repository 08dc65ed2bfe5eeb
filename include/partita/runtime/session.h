#pragma once
// The wiring of one rank of a distributed job (DESIGN: runtime/), built in the order the
// contracts require: the mapped partition (opening agreed by every rank), every service
// route registered and a barrier before the request endpoint starts serving, then the
// clients (feature fetcher, distributed sampler). A Session runs over any Transport and
// Collectives: MpiRank (mpi_rank.h) gives it MPI's; tests give it in-process ones (threads
// as ranks), so the trainer runs in-process too.
//
// finish() shuts the request layer down cleanly (no rank stops serving while another may
// still ask it something); call it on the success path of every rank.
//
// Set-up is agreed: after every rank tried to map its part, one allreduce (with the
// collectives' deadline) tells all ranks whether any failed (a missing or corrupt file,
// parts that do not match the ranks). If one did, the constructor throws SetupError on every
// rank: only the lowest failing rank carries its message, and every rank exits with that
// error's code. Alone (one rank) an opening error propagates as it is.
//
// Library code: nothing here prints or exits; the command line decides (cli/rank_main.h).
#include <memory>
#include <string>

#include "partita/comm/collectives.h"
#include "partita/core/error.h"
#include "partita/sample/dist_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"

namespace partita {
class RpcEndpoint;
class Transport;
}  // namespace partita

namespace partita::runtime {

// A set-up failure that every rank of the job knows about (thrown by Session's constructor
// on every rank of a multi-rank job). report() is true on exactly one rank, the lowest
// failing one, whose what() is its own error message; exit_code() is that error's code on
// every rank (2 for a UsageError, else 1). all_failed() says that every rank failed,
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

// Exit codes of the command line: 1 for errors, 2 for usage errors.
int exit_code_of(const std::exception& e);
// The one-line message the command line prints for `e` (without "error: ").
std::string message_of(const std::exception& e);

struct SessionOptions {
  std::string parts_dir;
  double timeout_s = 60;  // every remote wait of the session: requests and collectives
  sample::LocalSamplerOptions sampling;
  store::DistGraphOptions graph;
};

class Session {
 public:
  // `transport` and `collectives` span the same ranks and must outlive the session.
  // Collective over them.
  Session(Transport& transport, Collectives& collectives, const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return collectives_.rank(); }
  int size() const { return collectives_.size(); }
  const store::DistGraph& graph() const { return graph_; }
  Collectives& collectives() { return collectives_; }
  store::FeatureFetcher& fetcher() { return *fetcher_; }
  sample::DistSampler& sampler() { return *sampler_; }
  RpcEndpoint* endpoint() { return endpoint_.get(); }
  // Bytes this rank sent to other ranks as requests and replies so far (Transport).
  uint64_t request_bytes_sent() const;

  // Collective: stops serving requests once every rank is done asking.
  void finish();

 private:
  Transport& transport_;
  Collectives& collectives_;
  store::DistGraph graph_;
  std::unique_ptr<RpcEndpoint> endpoint_;
  std::unique_ptr<store::FeatureFetcher> fetcher_;
  std::unique_ptr<sample::DistSampler> sampler_;
};

}  // namespace partita::runtime
