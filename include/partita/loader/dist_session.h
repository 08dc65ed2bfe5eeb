#pragma once
// Everything one rank of a distributed command needs, built in the order the contracts
// require: MPI first (and last to go), the mapped partition, a request transport and
// collectives on communicators of their own, every service route registered before the
// endpoint starts serving, then the clients (feature fetcher, distributed sampler).
//
// finish() shuts the request layer down cleanly (no rank stops serving while another may
// still ask it something); call it on the success path of every rank. On an error the
// command prints it and aborts the job (MPI_Abort) so that no peer waits forever.
#include <functional>
#include <memory>
#include <string>

#include "partita/comm/collectives.h"
#include "partita/comm/mpi_scope.h"
#include "partita/comm/mpi_transport.h"
#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/sample/dist_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"

namespace partita::loader {

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

// Runs `body` on this rank; on an exception prints `error: ...` once (from the failing rank)
// and, when the job has more than one rank, aborts it so that peers do not hang. Returns
// the exit code.
int run_rank(MpiScope& mpi, const std::function<int()>& body);

}  // namespace partita::loader
