// Resident rows (store/resident_rows.h) and the batch pipeline's skip of them (issue 24,
// loader::BatchPipelineOptions::resident), torch-free: slots against a brute-force sort;
// over 2 parts (ranks as threads, every remote row through requests), a pipeline with a
// resident set fetches exactly the other rows, and the fetch counters drop by exactly the
// hits counted by brute force; the device-cache warm-up chooses local and remote rows.
#include "partita/store/resident_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>

#include "../partition/test_datasets.h"
#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/cache_warmup.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seed_plans.h"
#include "partita/partition/partition.h"
#include "partita/runtime/session.h"
#include "partita/runtime/split_ids.h"

namespace partita::store {
namespace {

using testing::on_threads;
using testing::TempDir;

TEST(ResidentRows, SlotsAreRanksInIdOrder) {
  for (int64_t num_nodes : {int64_t{1}, int64_t{63}, int64_t{64}, int64_t{65}, int64_t{1000}}) {
    std::mt19937_64 rng(static_cast<uint64_t>(num_nodes));
    std::vector<int64_t> ids;
    for (int64_t g = 0; g < num_nodes; ++g)
      if (rng() % 3 == 0) ids.push_back(g);
    std::vector<int64_t> shuffled = ids;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    const ResidentRows resident(num_nodes, shuffled);
    EXPECT_EQ(resident.ids(), ids);
    EXPECT_EQ(resident.size(), static_cast<int64_t>(ids.size()));
    for (int64_t g = -2; g < num_nodes + 70; ++g) {
      const auto it = std::lower_bound(ids.begin(), ids.end(), g);
      const int64_t want = it != ids.end() && *it == g ? it - ids.begin() : -1;
      ASSERT_EQ(resident.slot(g), want) << num_nodes << " nodes, id " << g;
    }
  }
  const ResidentRows none;
  EXPECT_EQ(none.slot(0), -1);
  EXPECT_TRUE(none.empty());
}

TEST(ResidentRows, SplitKeepsOrder) {
  const ResidentRows resident(100, {7, 3, 50});
  const std::vector<int64_t> ids{3, 4, 50, 3, 99, 7, -1, 100};
  ResidentHits hits;
  std::vector<int64_t> misses;
  resident.split(ids, &hits, &misses);
  EXPECT_EQ(hits.positions, (std::vector<int64_t>{0, 2, 3, 5}));
  EXPECT_EQ(hits.slots, (std::vector<int64_t>{0, 2, 0, 1}));
  EXPECT_EQ(misses, (std::vector<int64_t>{4, 99, -1, 100}));
}

TEST(ResidentRows, RefusesBadIds) {
  EXPECT_THROW(ResidentRows(10, {1, 10}), Error);
  EXPECT_THROW(ResidentRows(10, {-1}), Error);
  EXPECT_THROW(ResidentRows(10, {4, 2, 4}), Error);
}

class ResidentFetch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const data::Dataset planted = testing::planted_dataset(testing::PlantedOptions{});
    partition::PartitionOptions p;
    p.num_parts = 2;
    p.method = partition::Method::kRandom;
    p.seed = 2;
    p.threads = 1;
    p.out_dir = *dir_ / "p2";
    partition::partition_dataset(planted, p);
  }
  static void TearDownTestSuite() { delete dir_; }

  static TempDir* dir_;
};
TempDir* ResidentFetch::dir_ = nullptr;

// What one rank saw over a pass of the pipeline.
struct Pass {
  std::vector<loader::Batch> batches;
  FetchStats stats;  // the pass's increase
};

Pass run_pass(runtime::Session& session, const std::vector<std::vector<int64_t>>& seeds,
              const ResidentRows* resident) {
  loader::BatchPipelineOptions o;
  o.threads = 2;
  o.prefetch = 2;
  o.fanouts = {4, 4};
  o.seed = 5;
  o.epoch = 1;
  o.feature_row_bytes = session.graph().feature_row_bytes();
  o.fetch_labels = false;  // the counters then count feature rows only
  o.resident = resident;
  const FetchStats before = session.fetcher().stats();
  Pass pass;
  {
    loader::BatchPipeline pipeline(o, seeds, session.sampler(), session.fetcher());
    while (std::optional<loader::Batch> b = pipeline.next()) pass.batches.push_back(std::move(*b));
  }
  const FetchStats after = session.fetcher().stats();
  pass.stats.local_rows = after.local_rows - before.local_rows;
  pass.stats.remote_rows = after.remote_rows - before.remote_rows;
  pass.stats.remote_requests = after.remote_requests - before.remote_requests;
  pass.stats.remote_bytes = after.remote_bytes - before.remote_bytes;
  pass.stats.resident_lookups = after.resident_lookups - before.resident_lookups;
  pass.stats.resident_hits = after.resident_hits - before.resident_hits;
  pass.stats.resident_remote_hits = after.resident_remote_hits - before.resident_remote_hits;
  return pass;
}

// Every third node resident (local and remote ones): the pipeline's batches hold exactly the
// other rows, in order; the counters drop by exactly the brute-force hits; the bytes that
// crossed the wire are the rows that did (8 bytes of count per reply besides).
TEST_F(ResidentFetch, SkipsExactlyTheResidentRows) {
  InProcessWorld world(2);
  InProcessCollectiveGroup group(2, 60);
  const auto failures = on_threads(2, [&](int r) {
    runtime::SessionOptions so;
    so.parts_dir = *dir_ / "p2";
    so.timeout_s = 60;
    so.host_local = runtime::HostLocal::kOff;
    runtime::Session session(world.transport(r), group.member(r), so);
    const DistGraph& graph = session.graph();
    std::vector<int64_t> ids;
    for (int64_t g = 0; g < graph.num_nodes(); g += 3) ids.push_back(g);
    const ResidentRows resident(graph.num_nodes(), ids);
    // This rank's training nodes in batches of 8.
    std::vector<std::vector<int64_t>> seeds(1);
    for (int64_t g = graph.first_node(); g < graph.end_node(); ++g) {
      if (graph.original_ids()[g - graph.first_node()] % 10 != 0) continue;
      if (seeds.back().size() == 8) seeds.emplace_back();
      seeds.back().push_back(g);
    }
    const Pass plain = run_pass(session, seeds, nullptr);
    const Pass skip = run_pass(session, seeds, &resident);
    const int64_t row_bytes = graph.feature_row_bytes();
    ASSERT_EQ(plain.batches.size(), skip.batches.size());
    int64_t inputs = 0, local_hits = 0, remote_hits = 0;
    for (size_t b = 0; b < plain.batches.size(); ++b) {
      const loader::Batch& p = plain.batches[b];
      const loader::Batch& s = skip.batches[b];
      ASSERT_EQ(p.sampled.input_nodes, s.sampled.input_nodes) << "the same samples";
      EXPECT_TRUE(p.resident.hits.positions.empty());
      EXPECT_EQ(p.resident.set, nullptr);
      EXPECT_EQ(s.resident.set, &resident);
      const std::vector<int64_t>& input = p.sampled.input_nodes;
      inputs += static_cast<int64_t>(input.size());
      // Brute force: position i is skipped iff its node is a multiple of 3.
      std::vector<int64_t> want_positions, want_slots;
      size_t next_row = 0;
      for (size_t i = 0; i < input.size(); ++i) {
        if (input[i] % 3 == 0) {
          want_positions.push_back(static_cast<int64_t>(i));
          want_slots.push_back(input[i] / 3);
          ++(graph.owns(input[i]) ? local_hits : remote_hits);
          continue;
        }
        const size_t rb = static_cast<size_t>(row_bytes);
        ASSERT_LE((next_row + 1) * rb, s.features.size());
        EXPECT_EQ(std::memcmp(s.features.data() + next_row * rb, p.features.data() + i * rb, rb), 0)
            << "batch " << b << " input " << i;
        ++next_row;
      }
      EXPECT_EQ(s.resident.hits.positions, want_positions) << "batch " << b;
      EXPECT_EQ(s.resident.hits.slots, want_slots) << "batch " << b;
      EXPECT_EQ(s.features.size(), next_row * static_cast<size_t>(row_bytes));
      EXPECT_EQ(loader::fetched_feature_rows(s), static_cast<int64_t>(next_row));
    }
    ASSERT_GT(local_hits, 0);
    ASSERT_GT(remote_hits, 0);
    EXPECT_EQ(plain.stats.local_rows + plain.stats.remote_rows, inputs);
    EXPECT_EQ(plain.stats.resident_lookups, 0);
    EXPECT_EQ(skip.stats.resident_lookups, inputs);
    EXPECT_EQ(skip.stats.resident_hits, local_hits + remote_hits);
    EXPECT_EQ(skip.stats.resident_remote_hits, remote_hits);
    EXPECT_EQ(skip.stats.local_rows, plain.stats.local_rows - local_hits);
    EXPECT_EQ(skip.stats.remote_rows, plain.stats.remote_rows - remote_hits);
    for (const Pass* pass : {&plain, &skip})
      EXPECT_EQ(pass->stats.remote_bytes,
                8 * pass->stats.remote_requests + pass->stats.remote_rows * row_bytes);
    EXPECT_LT(skip.stats.remote_bytes, plain.stats.remote_bytes);
    session.collectives().barrier();
    session.finish();
  });
  EXPECT_EQ(failures, std::vector<std::string>(2, ""));
}

// The device cache's rows: the hottest input nodes, local ones included, at most ratio x
// owned; their rows are the fetched ones in slot order; a single trainer gets one too.
TEST_F(ResidentFetch, DeviceWarmupChoosesLocalAndRemoteRows) {
  InProcessWorld world(2);
  InProcessCollectiveGroup group(2, 60);
  std::vector<int64_t> local(2), remote(2), budget(2), rows(2);
  const auto failures = on_threads(2, [&](int r) {
    runtime::SessionOptions so;
    so.parts_dir = *dir_ / "p2";
    so.timeout_s = 60;
    so.host_local = runtime::HostLocal::kOff;
    runtime::Session session(world.transport(r), group.member(r), so);
    const DistGraph& graph = session.graph();
    std::vector<loader::SeedId> mine = runtime::own_split_ids(graph, runtime::Split::kTrain);
    const loader::GlobalBatches plan(session.collectives().allgather(mine), 8);
    loader::CacheWarmupOptions o;
    o.ratio = 0.3;
    o.presample_batches = 4;
    o.fanouts = {4, 4};
    o.seed = 7;
    o.epoch = 1000;
    const loader::SeedShare share(graph, r, 2);
    const loader::DeviceRowsWarmup w =
        loader::warm_device_rows(session.sampler(), session.fetcher(), graph, plan, share, o);
    budget[r] = loader::cache_budget(graph, o.ratio);
    rows[r] = w.resident.size();
    const int64_t row_bytes = graph.feature_row_bytes();
    ASSERT_EQ(w.rows.size(), static_cast<size_t>(w.resident.size() * row_bytes));
    std::vector<uint8_t> want(w.rows.size());
    session.fetcher().fetch_features(w.resident.ids(), want.data());
    EXPECT_EQ(w.rows, want);
    for (int64_t gid : w.resident.ids()) ++(graph.owns(gid) ? local[r] : remote[r]);
    EXPECT_EQ(w.remote_rows, remote[r]);
    EXPECT_GT(w.expected_hit_rate, 0);
    EXPECT_LE(w.expected_hit_rate, 1);
    // The remote weight: counted once or a thousand times; with the heavy weight the remote
    // nodes come first (a prefix), and at least as many of them.
    std::vector<std::vector<int64_t>> pre = plan.epoch_batches(o.seed, o.epoch, share);
    pre.resize(std::min<size_t>(pre.size(), 4));
    const auto remote_of = [&](const loader::HotNodes& hot) {
      int64_t n = 0;
      for (int64_t gid : hot.ids) n += graph.owns(gid) ? 0 : 1;
      return n;
    };
    const loader::HotNodes once = loader::hottest_input_nodes(session.sampler(), graph, pre,
                                                              o.fanouts, o.seed, o.epoch, 40, 1);
    const loader::HotNodes heavy = loader::hottest_input_nodes(
        session.sampler(), graph, pre, o.fanouts, o.seed, o.epoch, 40, 1000);
    EXPECT_GE(remote_of(heavy), remote_of(once));
    EXPECT_GT(remote_of(heavy), 0);
    const auto first_local = std::find_if(heavy.ids.begin(), heavy.ids.end(),
                                          [&](int64_t gid) { return graph.owns(gid); });
    EXPECT_TRUE(
        std::none_of(first_local, heavy.ids.end(), [&](int64_t gid) { return !graph.owns(gid); }));
    EXPECT_EQ(heavy.appearances, once.appearances);
    EXPECT_THROW(loader::hottest_input_nodes(session.sampler(), graph, pre, o.fanouts, o.seed,
                                             o.epoch, 40, 0),
                 Error);
    // Ratio 0: nothing.
    o.ratio = 0;
    EXPECT_TRUE(
        loader::warm_device_rows(session.sampler(), session.fetcher(), graph, plan, share, o)
            .resident.empty());
    session.collectives().barrier();
    session.finish();
  });
  EXPECT_EQ(failures, std::vector<std::string>(2, ""));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(rows[r], budget[r]) << "enough distinct input nodes to fill the budget";
    EXPECT_GT(local[r], 0) << r;
    EXPECT_GT(remote[r], 0) << r;
  }
}

}  // namespace
}  // namespace partita::store
