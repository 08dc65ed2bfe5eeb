#pragma once
// In-process distributed runs for the store tests: every rank of a partition as a thread of
// this process, each serving samples and features to the others over an in-process world.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/local_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"

namespace partita::testing {

using RankWork = std::function<void(int, const store::DistGraph&, RpcEndpoint*)>;

// Runs `work(rank, graph, endpoint)` on every one of `ranks` ranks of the partition in `dir`
// (each rank serving samples with `sampling`, and features) and expects no rank to throw; the
// endpoints shut down once every rank's work returned. Returns the requests rank 0 sent.
inline int64_t run_serving_ranks(const std::string& dir, int ranks,
                                 const sample::LocalSamplerOptions& sampling,
                                 const RankWork& work) {
  InProcessWorld world(ranks);
  std::vector<store::DistGraph> graphs;
  for (int r = 0; r < ranks; ++r) graphs.push_back(store::DistGraph::open(dir, r, ranks));
  std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
  for (int r = 0; r < ranks; ++r) {
    RpcRouter router;
    store::add_feature_routes(router, graphs[r]);
    sample::add_sample_routes(router, graphs[r], sampling);
    RpcOptions options;
    options.timeout_s = 20;
    endpoints.push_back(
        std::make_unique<RpcEndpoint>(world.transport(r), router.handler(), options));
  }
  std::vector<std::string> failures(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        work(r, graphs[r], endpoints[r].get());
      } catch (const std::exception& e) {
        failures[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << dir << ", rank " << r;
  const int64_t sent = endpoints[0]->stats().requests_sent;
  std::vector<std::thread> closing;
  for (int r = 0; r < ranks; ++r) closing.emplace_back([&, r] { endpoints[r]->shutdown(); });
  for (auto& t : closing) t.join();
  return sent;
}

}  // namespace partita::testing
