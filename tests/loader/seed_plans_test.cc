// Seed plans per role (loader/seed_plans.h) and the hot-feature cache warm-up
// (loader/cache_warmup.h), torch-free: ranks are threads over the in-process transport and
// collectives.
#include "partita/loader/seed_plans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "../partition/test_datasets.h"
#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/core/parameter_error.h"
#include "partita/loader/cache_warmup.h"
#include "partita/loader/hot_nodes.h"
#include "partita/partition/partition.h"
#include "partita/runtime/session.h"
#include "partita/runtime/split_ids.h"
#include "partita/sample/dist_sampler.h"

namespace partita::loader {
namespace {

using testing::on_threads;
using testing::TempDir;

// Every training id of the job, as runtime::split_ids gathers it for a worker.
std::vector<SeedId> all_train_ids(const store::DistGraph& graph, Collectives& coll) {
  std::vector<SeedId> mine = runtime::own_split_ids(graph, runtime::Split::kTrain);
  return graph.replicated() ? mine : coll.allgather(mine);
}

class SeedPlans : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    testing::PlantedOptions po;
    const data::Dataset planted = testing::planted_dataset(po);
    for (int parts : {1, 2}) {
      partition::PartitionOptions p;
      p.num_parts = parts;
      p.method = partition::Method::kRandom;
      p.seed = 2;
      p.threads = 1;
      p.out_dir = *dir_ / ("p" + std::to_string(parts));
      partition::partition_dataset(planted, p);
    }
    testing::TypedOptions t;
    partition::PartitionOptions p;
    p.num_parts = 1;
    p.threads = 1;
    p.out_dir = *dir_ / "typed";
    partition::partition_dataset(testing::typed_dataset(t), p);
  }
  static void TearDownTestSuite() { delete dir_; }

  static TempDir* dir_;
};
TempDir* SeedPlans::dir_ = nullptr;

// Worker mode over 2 parts: every rank learns every training id once (the allgather), and
// the owned shares of a batch split it exactly, each in batch order.
TEST_F(SeedPlans, OwnedSharesSplitEveryBatch) {
  InProcessCollectiveGroup group(2, 60);
  std::vector<std::vector<SeedId>> ids(2);
  std::vector<std::vector<std::vector<int64_t>>> shares(2);
  std::vector<bool> even(2);
  const std::vector<int64_t> batch{5, 17, 300, 2, 599, 123, 42, 0};
  const auto failures = on_threads(2, [&](int r) {
    const store::DistGraph graph = store::DistGraph::open(*dir_ / "p2", r, 2);
    ids[r] = all_train_ids(graph, group.member(r));
    const SeedShare share(graph, r, 2);
    even[r] = share.even();
    shares[r].push_back(share(batch));
    for (int64_t gid : shares[r].back()) EXPECT_TRUE(graph.owns(gid)) << gid;
  });
  EXPECT_EQ(failures, std::vector<std::string>(2, ""));
  EXPECT_FALSE(even[0]);
  ASSERT_EQ(ids[0].size(), ids[1].size());
  std::set<int64_t> originals, globals;
  for (const SeedId& id : ids[0]) {
    originals.insert(id.original);
    globals.insert(id.global);
  }
  EXPECT_EQ(originals.size(), ids[0].size());
  EXPECT_EQ(globals.size(), ids[0].size());
  EXPECT_EQ(static_cast<int64_t>(ids[0].size()), 60) << "600 nodes, train v % 10 == 0";
  // Every seed of the batch in exactly one share, and each share in batch order.
  std::vector<int64_t> both = shares[0][0];
  both.insert(both.end(), shares[1][0].begin(), shares[1][0].end());
  std::vector<int64_t> sorted_batch = batch;
  std::sort(both.begin(), both.end());
  std::sort(sorted_batch.begin(), sorted_batch.end());
  EXPECT_EQ(both, sorted_batch);
  for (const auto& s : {shares[0][0], shares[1][0]}) {
    std::vector<size_t> at;
    for (int64_t gid : s) at.push_back(std::find(batch.begin(), batch.end(), gid) - batch.begin());
    EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  }
}

// Replicated mode (a 1-part directory on 2 ranks): no collective, every rank already has
// every id, and the shares are loader::even_share's.
TEST_F(SeedPlans, ReplicatedSharesAreEven) {
  const auto failures = on_threads(2, [&](int r) {
    const store::DistGraph graph = store::DistGraph::open(*dir_ / "p1", r, 2);
    ASSERT_TRUE(graph.replicated());
    InProcessCollectiveGroup alone(1, 5);  // a group of one: nothing to gather from others
    const std::vector<SeedId> ids = all_train_ids(graph, alone.member(0));
    EXPECT_EQ(ids.size(), 60u);
    const SeedShare share(graph, r, 2);
    EXPECT_TRUE(share.even());
    const std::vector<int64_t> batch{9, 8, 7, 6, 5};
    EXPECT_EQ(share(batch), even_share(batch, r, 2));
  });
  EXPECT_EQ(failures, std::vector<std::string>(2, ""));
}

// Cache warm-up: nothing for ratio 0 or one rank, typed or not; over 2 parts, at most ratio x owned
// rows, none of them owned, and the same choice on a second run (deterministic).
TEST_F(SeedPlans, CacheWarmup) {
  {
    const store::DistGraph graph = store::DistGraph::open(*dir_ / "p1", 0, 1);
    sample::DistSampler sampler(graph, nullptr, {});
    store::FeatureFetcher fetcher(graph, nullptr);
    InProcessCollectiveGroup alone(1, 5);
    const GlobalBatches plan(all_train_ids(graph, alone.member(0)), 16);
    CacheWarmupOptions o;
    o.fanouts = {3, 3};
    o.ratio = 0.5;
    o.trainers = 1;
    EXPECT_FALSE(
        warm_feature_cache(sampler, fetcher, graph, plan, SeedShare(graph, 0, 1), o).built);
  }
  {
    const store::DistGraph graph = store::DistGraph::open(*dir_ / "typed", 0, 1);
    sample::DistSampler sampler(graph, nullptr, {});
    store::FeatureFetcher fetcher(graph, nullptr);
    const GlobalBatches plan({{1, 1}, {2, 2}}, 1);
    CacheWarmupOptions o;
    o.ratio = 0.1;
    o.fanouts = {2};
    // Typed graphs get a cache too (issue 28); one part owns every row: nothing to cache.
    EXPECT_FALSE(
        warm_feature_cache(sampler, fetcher, graph, plan, SeedShare(graph, 0, 1), o).built);
  }
  InProcessWorld world(2);
  InProcessCollectiveGroup group(2, 60);
  std::vector<int64_t> rows(2), budget(2), batches(2), owned(2), again(2);
  std::vector<double> hit_rate(2);
  const auto failures = on_threads(2, [&](int r) {
    runtime::SessionOptions so;
    so.parts_dir = *dir_ / "p2";
    so.timeout_s = 60;
    runtime::Session session(world.transport(r), group.member(r), so);
    const store::DistGraph& graph = session.graph();
    const GlobalBatches plan(all_train_ids(graph, session.collectives()), 8);
    const SeedShare share(graph, r, 2);
    CacheWarmupOptions o;
    o.ratio = 0.25;
    o.presample_batches = 3;
    o.fanouts = {4, 4};
    o.seed = 7;
    o.epoch = 1000;
    o.trainers = 2;
    CacheWarmup none = warm_feature_cache(session.sampler(), session.fetcher(), graph, plan, share,
                                          CacheWarmupOptions{0, 3, {4, 4}, 7, 1000, 2});
    EXPECT_FALSE(none.built);
    CacheWarmup w = warm_feature_cache(session.sampler(), session.fetcher(), graph, plan, share, o);
    EXPECT_TRUE(w.built);
    rows[r] = w.cache.rows();
    budget[r] = cache_budget(graph, o.ratio);
    batches[r] = w.presample_batches;
    hit_rate[r] = w.expected_hit_rate;
    for (int64_t gid = 0; gid < graph.num_nodes(); ++gid)
      if (graph.owns(gid) && w.cache.find(gid) != nullptr) ++owned[r];
    again[r] = warm_feature_cache(session.sampler(), session.fetcher(), graph, plan, share, o)
                   .cache.rows();
    session.collectives().barrier();
    session.finish();
  });
  EXPECT_EQ(failures, std::vector<std::string>(2, ""));
  for (int r = 0; r < 2; ++r) {
    EXPECT_GT(rows[r], 0) << r;
    EXPECT_LE(rows[r], budget[r]) << r;
    EXPECT_EQ(batches[r], 3) << r;
    EXPECT_GT(hit_rate[r], 0) << r;
    EXPECT_LE(hit_rate[r], 1) << r;
    EXPECT_EQ(owned[r], 0) << r;
    EXPECT_EQ(again[r], rows[r]) << r;
  }
}

}  // namespace
}  // namespace partita::loader
