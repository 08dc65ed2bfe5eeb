// Distributed sampling and feature fetching equal the single-process result on the
// unpartitioned graph, after mapping ids back to original ids. Ranks are threads over the
// in-process transport here; tests/store/dist_mpi_check.cc does the same under mpirun.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "helpers/test_paths.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/core/half.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seeds.h"
#include "partita/partition/partition.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/local_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_cache.h"
#include "partita/store/feature_store.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

class DistEquality : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    data::GenerateOptions g;
    g.nodes = 3000;
    g.avg_degree = 8;
    g.feat_dim = 6;
    g.classes = 4;
    g.seed = 11;
    g.out_dir = *dir_ / "ds";
    data::generate_synthetic(g);
    dataset_ = new data::Dataset(data::load_dataset(g.out_dir, {}));
  }
  static void TearDownTestSuite() {
    delete dataset_;
    delete dir_;
  }
  static TempDir* dir_;
  static data::Dataset* dataset_;
};
TempDir* DistEquality::dir_ = nullptr;
data::Dataset* DistEquality::dataset_ = nullptr;

TEST_P(DistEquality, BlocksAndFeaturesMatchSingleProcess) {
  const int ranks = GetParam();
  const std::string parts = *dir_ / ("p" + std::to_string(ranks));
  partition::PartitionOptions p;
  p.num_parts = ranks;
  p.seed = 5;
  p.out_dir = parts;
  partition::partition_dataset(*dataset_, p);

  // Reference: the whole original graph, original ids.
  sample::LocalSamplerOptions sampling;
  sample::LocalSampler reference(sample::csc_view_of(dataset_->in_edges), sampling);
  const std::vector<int64_t> fanouts{5, 3, -1};

  InProcessWorld world(ranks);
  std::vector<store::DistGraph> graphs;
  for (int r = 0; r < ranks; ++r) graphs.push_back(store::DistGraph::open(parts, r, ranks));
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
  const std::vector<int64_t> node_map = testing::read_node_map(parts);

  std::vector<std::string> failures(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        RpcEndpoint* remote = ranks > 1 ? endpoints[r].get() : nullptr;
        sample::DistSampler sampler(graphs[r], remote, sampling);
        store::FeatureFetcher fetcher(graphs[r], remote);
        const std::vector<std::vector<int64_t>> batches = loader::chunk(
            std::vector<int64_t>(graphs[r].train_ids().begin(), graphs[r].train_ids().end()), 64);
        // Every batch's blocks, features and labels against the reference; `pass` names the
        // fetch path in errors.
        const auto check_batches = [&](const std::string& pass) {
          for (uint64_t b = 0; b < batches.size(); ++b) {
            sample::BlockOptions options;
            options.fanouts = fanouts;
            options.key = {7, 1, b};
            sample::SampledBatch got = sample::sample_blocks(batches[b], options, sampler);
            std::vector<int64_t> original = testing::map_ids(batches[b], node_map);
            sample::SampledBatch want = sample::sample_blocks(original, options, reference);
            std::string diff = testing::compare_batches(got, want, node_map);
            if (!diff.empty()) throw Error(pass + "batch " + std::to_string(b) + ": " + diff);

            std::vector<float> feat(got.input_nodes.size() * 6);
            fetcher.fetch_features(got.input_nodes, feat.data());
            std::vector<int64_t> labels(got.input_nodes.size());
            fetcher.fetch_labels(got.input_nodes, labels.data());
            for (size_t i = 0; i < got.input_nodes.size(); ++i) {
              const int64_t orig = node_map[got.input_nodes[i]];
              for (int c = 0; c < 6; ++c)
                if (feat[i * 6 + c] != dataset_->features.row(orig)[c])
                  throw Error(pass + "feature mismatch at node " + std::to_string(orig));
              if (labels[i] != dataset_->labels[orig])
                throw Error(pass + "label mismatch at node " + std::to_string(orig));
            }
          }
        };
        check_batches("");
        // The hot-feature cache: chosen from the first 3 batches, it answers remote rows
        // with the same values, deterministically, and only rows of other ranks.
        if (ranks > 1) {
          const std::vector<std::vector<int64_t>> presample(
              batches.begin(), batches.begin() + std::min<size_t>(3, batches.size()));
          const int64_t budget = graphs[r].num_local_nodes() / 4;
          const loader::HotNodes hot =
              loader::hottest_remote_nodes(sampler, graphs[r], presample, fanouts, 7, 99, budget);
          const loader::HotNodes again =
              loader::hottest_remote_nodes(sampler, graphs[r], presample, fanouts, 7, 99, budget);
          if (hot.ids != again.ids) throw Error("hot nodes differ between two identical calls");
          if (hot.ids.empty() || static_cast<int64_t>(hot.ids.size()) > budget)
            throw Error("hot nodes: " + std::to_string(hot.ids.size()) + " for budget " +
                        std::to_string(budget));
          for (int64_t gid : hot.ids)
            if (graphs[r].owns(gid)) throw Error("cached an owned node");
          const store::FeatureCache cache = store::FeatureCache::fetch(fetcher, hot.ids, 6 * 4, 7);
          fetcher.set_cache(&cache);
          const store::FetchStats before = fetcher.stats();
          check_batches("with the cache: ");
          const store::FetchStats after = fetcher.stats();
          fetcher.set_cache(nullptr);
          if (after.cache_hits <= before.cache_hits) throw Error("the cache was never hit");
        }
        endpoints[r]->shutdown();
      } catch (const std::exception& e) {
        failures[r] = e.what();
        endpoints[r]->shutdown();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
  if (ranks > 1) {
    EXPECT_GT(endpoints[0]->stats().requests_sent, 0) << "no remote traffic: test is vacuous";
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DistEquality, ::testing::Values(1, 2, 4));

TEST(DistGraph, RejectsPartsAndRanksThatDisagree) {
  TempDir dir;
  data::GenerateOptions g;
  g.nodes = 200;
  g.avg_degree = 4;
  g.feat_dim = 2;
  g.classes = 2;
  g.out_dir = dir / "ds";
  data::generate_synthetic(g);
  partition::PartitionOptions p;
  p.num_parts = 2;
  p.out_dir = dir / "p";
  partition::run_partition(g.out_dir, {}, p);
  try {
    store::DistGraph::open(dir / "p", 0, 3);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 parts but the job has 3 ranks"), std::string::npos)
        << e.what();
  }
  store::DistGraph g1 = store::DistGraph::open(dir / "p", 1, 2);
  EXPECT_EQ(g1.first_node(), g1.meta().ranges[1]);
  EXPECT_EQ(g1.owner_rank(0), 0);
  EXPECT_EQ(g1.owner_rank(199), 1);
  EXPECT_THROW(g1.owner_rank(200), Error);

  // In-memory copies hold exactly what the mapping holds.
  store::DistGraphOptions in_memory;
  in_memory.in_memory = true;
  store::DistGraph c1 = store::DistGraph::open(dir / "p", 1, 2, in_memory);
  auto same = [](auto a, auto b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); };
  EXPECT_TRUE(same(c1.indptr(), g1.indptr()));
  EXPECT_TRUE(same(c1.indices(), g1.indices()));
  EXPECT_TRUE(same(c1.original_ids(), g1.original_ids()));
  EXPECT_NE(c1.indices().data(), g1.indices().data());
  const int64_t values = g1.num_local_nodes() * g1.feat_dim();
  EXPECT_TRUE(std::equal(g1.features(), g1.features() + values, c1.features()));
}

}  // namespace
}  // namespace partita

namespace partita {
namespace {

TEST(FeatureCache, FindsItsRowsAndRefusesBadInput) {
  const store::FeatureCache cache({40, 7}, {1, 2, 3, 4, 5, 6}, 3);  // rows of 3 bytes
  ASSERT_NE(cache.find(7), nullptr);
  EXPECT_EQ(cache.find(7)[0], 4);
  EXPECT_EQ(cache.find(40)[2], 3);
  EXPECT_EQ(cache.find(8), nullptr);
  EXPECT_EQ(cache.rows(), 2);
  EXPECT_GE(cache.bytes(), 6 * 4);
  EXPECT_EQ(store::FeatureCache().find(7), nullptr);
  EXPECT_THROW(store::FeatureCache({1, 2}, {1, 2, 3}, 2), Error);
  EXPECT_THROW(store::FeatureCache({1, 1}, {1, 2, 3, 4}, 2), Error);
}

}  // namespace
}  // namespace partita

namespace partita {
namespace {

// Compact features: a partition written as float16 or bfloat16 serves, locally, remotely
// and from the cache, exactly the dataset's features rounded to that type.
TEST(CompactFeatures, ServeTheRoundedRowsEverywhere) {
  TempDir dir;
  data::GenerateOptions g;
  g.nodes = 1200;
  g.avg_degree = 6;
  g.feat_dim = 7;
  g.classes = 3;
  g.seed = 3;
  g.out_dir = dir / "ds";
  data::generate_synthetic(g);
  const data::Dataset dataset = data::load_dataset(g.out_dir, {});
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    partition::PartitionOptions p;
    p.num_parts = 2;
    p.seed = 1;
    p.feature_dtype = dtype;
    p.out_dir = dir / (std::string("p-") + dtype_name(dtype));
    partition::partition_dataset(dataset, p);
    const std::vector<int64_t> node_map = testing::read_node_map(p.out_dir);

    InProcessWorld world(2);
    std::vector<store::DistGraph> graphs;
    for (int r = 0; r < 2; ++r) graphs.push_back(store::DistGraph::open(p.out_dir, r, 2));
    std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
    for (int r = 0; r < 2; ++r) {
      RpcRouter router;
      store::add_feature_routes(router, graphs[r]);
      endpoints.push_back(std::make_unique<RpcEndpoint>(world.transport(r), router.handler()));
    }
    std::vector<std::string> failures(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        try {
          ASSERT_EQ(graphs[r].feature_dtype(), dtype);
          ASSERT_EQ(graphs[r].feature_row_bytes(), 7 * 2);
          store::FeatureFetcher fetcher(graphs[r], endpoints[r].get());
          std::vector<int64_t> all(1200);
          for (int64_t i = 0; i < 1200; ++i) all[i] = i;
          // The other rank's first 50 rows go through the cache on the second pass.
          std::vector<int64_t> cached;
          for (int64_t gid : all)
            if (!graphs[r].owns(gid) && cached.size() < 50) cached.push_back(gid);
          const store::FeatureCache cache =
              store::FeatureCache::fetch(fetcher, cached, graphs[r].feature_row_bytes());
          for (int pass = 0; pass < 2; ++pass) {
            fetcher.set_cache(pass == 1 ? &cache : nullptr);
            std::vector<uint8_t> rows(all.size() * 14);
            fetcher.fetch_features(all, rows.data());
            std::vector<float> got(all.size() * 7);
            widen_to_floats(rows.data(), static_cast<int64_t>(got.size()), dtype, got.data());
            for (int64_t gid : all) {
              std::vector<float> want(7);
              uint16_t narrow[7];
              narrow_floats(dataset.features.row(node_map[gid]), 7, dtype, narrow);
              widen_to_floats(narrow, 7, dtype, want.data());
              for (int c = 0; c < 7; ++c)
                if (got[gid * 7 + c] != want[c])
                  throw Error("node " + std::to_string(gid) + " pass " + std::to_string(pass));
            }
          }
          if (fetcher.stats().cache_hits != 50) throw Error("cache not used");
          endpoints[r]->shutdown();
        } catch (const std::exception& e) {
          failures[r] = e.what();
          endpoints[r]->shutdown();
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures[0], "");
    EXPECT_EQ(failures[1], "");
  }
}

}  // namespace
}  // namespace partita
