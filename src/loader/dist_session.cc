#include "partita/loader/dist_session.h"

#include <cstdio>

#include "partita/core/error.h"

namespace partita::loader {

DistSession::DistSession(MpiScope& mpi, const DistSessionOptions& options)
    : mpi_(mpi),
      graph_(store::DistGraph::open(options.parts_dir, mpi.rank(), mpi.size(), options.graph)),
      transport_(mpi.world()),
      collectives_(mpi.world(), CollectiveOptions{options.timeout_s}) {
  RpcRouter router;
  store::add_feature_routes(router, graph_);
  sample::add_sample_routes(router, graph_, options.sampling);
  RpcOptions rpc;
  rpc.timeout_s = options.timeout_s;
  // Every rank has its routes before any rank may send it a request.
  collectives_.barrier();
  endpoint_ = std::make_unique<RpcEndpoint>(transport_, router.handler(), rpc);
  RpcEndpoint* remote = graph_.meta().num_parts > 1 ? endpoint_.get() : nullptr;
  fetcher_ = std::make_unique<store::FeatureFetcher>(graph_, remote);
  sampler_ = std::make_unique<sample::DistSampler>(graph_, remote, options.sampling);
}

DistSession::~DistSession() = default;

void DistSession::finish() { endpoint_->shutdown(); }

int run_rank(MpiScope& mpi, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
    if (mpi.size() > 1) {
      std::fprintf(stderr, "error: rank %d: %s\n", mpi.rank(), e.what());
      std::fflush(stderr);
      MPI_Abort(mpi.world(), usage ? 2 : 1);
    }
    throw;
  }
}

}  // namespace partita::loader
