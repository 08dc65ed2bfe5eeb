// Server-client mode's views of a partition directory (store::DistGraph::open_server /
// open_client): a client owns nothing and looks owners up like a worker; its counts are
// checked with one usage error each; and a client samples and fetches, all remotely, the
// same batches, features and labels as the unpartitioned graph gives (2 servers + 1 client,
// threads over the in-process transport).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "helpers/test_paths.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/partition/partition.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/local_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

class ClientView : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    data::GenerateOptions g;
    g.nodes = 2000;
    g.avg_degree = 6;
    g.feat_dim = 5;
    g.classes = 3;
    g.seed = 9;
    g.out_dir = *dir_ / "ds";
    data::generate_synthetic(g);
    dataset_ = new data::Dataset(data::load_dataset(g.out_dir, {}));
    for (int parts : {1, 2}) {
      partition::PartitionOptions p;
      p.num_parts = parts;
      p.seed = 5;
      p.out_dir = *dir_ / ("p" + std::to_string(parts));
      partition::partition_dataset(*dataset_, p);
    }
  }
  static void TearDownTestSuite() {
    delete dataset_;
    delete dir_;
  }
  static std::string parts(int n) { return *dir_ / ("p" + std::to_string(n)); }
  static TempDir* dir_;
  static data::Dataset* dataset_;
};
TempDir* ClientView::dir_ = nullptr;
data::Dataset* ClientView::dataset_ = nullptr;

template <class F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_F(ClientView, OwnsNothingAndFindsOwnersLikeAWorker) {
  const store::DistGraph worker = store::DistGraph::open(parts(2), 0, 2);
  const store::DistGraph server = store::DistGraph::open_server(parts(2), 1, 3, 2);
  const store::DistGraph client = store::DistGraph::open_client(parts(2), 2, 3, 2);
  EXPECT_TRUE(client.client());
  EXPECT_FALSE(server.client());
  EXPECT_EQ(client.num_local_nodes(), 0);
  EXPECT_EQ(client.indptr().size(), 1);
  EXPECT_TRUE(client.train_ids().empty());
  EXPECT_TRUE(client.labels().empty());
  EXPECT_EQ(client.world_size(), 3);
  EXPECT_EQ(client.feat_dim(), worker.feat_dim());
  EXPECT_EQ(client.num_classes(), worker.num_classes());
  // The server of part 1 maps what worker 1 would.
  const store::DistGraph worker1 = store::DistGraph::open(parts(2), 1, 2);
  EXPECT_EQ(server.first_node(), worker1.first_node());
  EXPECT_EQ(server.end_node(), worker1.end_node());
  EXPECT_EQ(server.train_ids().size(), worker1.train_ids().size());
  for (int64_t gid = 0; gid < client.num_nodes(); ++gid) {
    ASSERT_FALSE(client.owns(gid));
    ASSERT_EQ(client.owner_rank(gid), worker.owner_rank(gid)) << gid;
  }
}

TEST_F(ClientView, BadCountsAreUsageErrors) {
  EXPECT_EQ(usage_error_of([] { store::DistGraph::open_client(parts(2), 2, 3, 1); }),
            "servers: 1 server, but " + parts(2) +
                " has 2 parts; server-client mode needs one server per part (`servers` 2)");
  EXPECT_EQ(usage_error_of([] { store::DistGraph::open_server(parts(2), 0, 2, 2); }),
            "servers: 2 servers, but the job has 2 ranks, which leaves no rank to train; run "
            "more ranks than servers (the first 2 serve, the others train)");
  EXPECT_NE(usage_error_of([] {
              store::DistGraph::open_client(parts(1), 1, 2, 1);
            }).find("has 1 part (replicated mode"),
            std::string::npos);
  EXPECT_NE(usage_error_of([] {
              store::DistGraph::open(parts(2), 0, 3);
            }).find("or pass `servers` 2 (server-client mode"),
            std::string::npos);
}

TEST_F(ClientView, ClientSamplesAndFetchesLikeTheWholeGraph) {
  constexpr int kWorld = 3;
  sample::LocalSamplerOptions sampling;
  sample::LocalSampler reference(sample::csc_view_of(dataset_->in_edges), sampling);
  InProcessWorld world(kWorld);
  std::vector<store::DistGraph> graphs;
  for (int r = 0; r < 2; ++r)
    graphs.push_back(store::DistGraph::open_server(parts(2), r, kWorld, 2));
  graphs.push_back(store::DistGraph::open_client(parts(2), 2, kWorld, 2));
  std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
  for (int r = 0; r < kWorld; ++r) {
    RpcRouter router;
    store::add_feature_routes(router, graphs[r]);
    sample::add_sample_routes(router, graphs[r], sampling);
    RpcOptions options;
    options.timeout_s = 20;
    endpoints.push_back(
        std::make_unique<RpcEndpoint>(world.transport(r), router.handler(), options));
  }
  const std::vector<int64_t> node_map = testing::read_node_map(parts(2));
  std::string failure;
  std::thread client([&] {
    try {
      sample::DistSampler sampler(graphs[2], endpoints[2].get(), sampling);
      store::FeatureFetcher fetcher(graphs[2], endpoints[2].get());
      // Every server's training ids, as the session gathers them.
      std::vector<int64_t> seeds;
      for (int r = 0; r < 2; ++r)
        seeds.insert(seeds.end(), graphs[r].train_ids().begin(), graphs[r].train_ids().end());
      for (uint64_t b = 0; b < 4; ++b) {
        std::vector<int64_t> batch(seeds.begin() + b * 50, seeds.begin() + b * 50 + 50);
        sample::BlockOptions options;
        options.fanouts = {4, 3};
        options.key = {7, 1, b};
        sample::SampledBatch got = sample::sample_blocks(batch, options, sampler);
        sample::SampledBatch want =
            sample::sample_blocks(testing::map_ids(batch, node_map), options, reference);
        const std::string diff = testing::compare_batches(got, want, node_map);
        if (!diff.empty()) throw Error("batch " + std::to_string(b) + ": " + diff);
        std::vector<float> feat(got.input_nodes.size() * 5);
        fetcher.fetch_features(got.input_nodes, feat.data());
        std::vector<int64_t> labels(got.input_nodes.size());
        fetcher.fetch_labels(got.input_nodes, labels.data());
        for (size_t i = 0; i < got.input_nodes.size(); ++i) {
          const int64_t orig = node_map[got.input_nodes[i]];
          for (int c = 0; c < 5; ++c)
            if (feat[i * 5 + c] != dataset_->features.row(orig)[c])
              throw Error("feature mismatch at node " + std::to_string(orig));
          if (labels[i] != dataset_->labels[orig])
            throw Error("label mismatch at node " + std::to_string(orig));
        }
      }
      if (sampler.stats().local_nodes != 0 || fetcher.stats().local_rows != 0)
        throw Error("the client sampled or fetched something locally");
      if (sampler.stats().remote_nodes == 0 || fetcher.stats().remote_rows == 0)
        throw Error("the client made no remote request");
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  client.join();
  EXPECT_EQ(failure, "");
  std::vector<std::thread> closing;
  for (int r = 0; r < kWorld; ++r) closing.emplace_back([&, r] { endpoints[r]->shutdown(); });
  for (auto& t : closing) t.join();
}

}  // namespace
}  // namespace partita
