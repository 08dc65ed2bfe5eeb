// Host-local reads (runtime/host_local.h, store/host_parts.h): ranks of one process (threads
// over the in-process transport, so one host) that opened the same partition directory
// sample each other's nodes and copy each other's rows from the mapped parts, send no
// feature or hop request, and get exactly what the request path and the single-process
// sampler on the unpartitioned graph give. A copy of the directory, or host_local off,
// falls back to requests.
#include "partita/runtime/host_local.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/loader/seeds.h"
#include "partita/partition/partition.h"
#include "partita/runtime/session.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

// One rank's traffic and what it read from memory.
struct RankRun {
  std::vector<int> host_ranks;
  sample::DistSamplerStats sampling;
  store::FetchStats fetching;
  int64_t requests_sent = 0;
  std::vector<sample::SampledBatch> batches;
  std::vector<std::vector<float>> features;
  std::vector<std::vector<int64_t>> labels, degrees;
};

class HostLocal : public ::testing::Test {
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
    for (int parts : {2, 3}) {
      partition::PartitionOptions p;
      p.num_parts = parts;
      p.seed = 5;
      p.out_dir = *dir_ / ("p" + std::to_string(parts));
      partition::partition_dataset(*dataset_, p);
    }
    // A copy of the 2-part directory: same contents, another path and inode.
    std::filesystem::copy(*dir_ / "p2", *dir_ / "p2-copy",
                          std::filesystem::copy_options::recursive);
  }
  static void TearDownTestSuite() {
    delete dataset_;
    delete dir_;
  }

  // Every rank that samples (not the servers) samples batches of 64 of its share of the
  // training ids and fetches their input nodes' features, labels and degrees. dirs[r]: the
  // directory rank r opens.
  static std::vector<RankRun> run(const std::vector<std::string>& dirs, runtime::HostLocal mode,
                                  int servers = 0) {
    const int ranks = static_cast<int>(dirs.size());
    InProcessWorld world(ranks);
    InProcessCollectiveGroup group(ranks, 60);
    std::unique_ptr<InProcessCollectiveGroup> trainers;
    if (servers > 0) trainers = std::make_unique<InProcessCollectiveGroup>(ranks - servers, 60);
    std::vector<RankRun> runs(static_cast<size_t>(ranks));
    const std::vector<std::string> failures = testing::on_threads(ranks, [&](int r) {
      runtime::SessionOptions so;
      so.parts_dir = dirs[static_cast<size_t>(r)];
      so.timeout_s = 60;
      so.servers = servers;
      so.host_local = mode;
      runtime::Session session(
          world.transport(r), group.member(r), so,
          servers > 0 && r >= servers ? &trainers->member(r - servers) : nullptr);
      RankRun& out = runs[static_cast<size_t>(r)];
      out.host_ranks = session.host_local_ranks();
      if (session.role() == runtime::Role::kServer) {
        session.finish();
        return;
      }
      std::vector<int64_t> seeds;
      if (session.graph().client()) {
        for (const store::SeedId& id : session.job_ids(runtime::Split::kTrain))
          seeds.push_back(id.global);
      } else {
        seeds.assign(session.graph().train_ids().begin(), session.graph().train_ids().end());
      }
      const std::vector<std::vector<int64_t>> batches = loader::chunk(seeds, 64);
      for (uint64_t b = 0; b < batches.size(); ++b) {
        sample::BlockOptions options;
        options.fanouts = {5, 3, -1};
        options.key = {7, 1, b};
        sample::SampledBatch got = sample::sample_blocks(batches[b], options, session.sampler());
        const std::vector<int64_t>& in = got.input_nodes;
        std::vector<float> feat(in.size() * 6);
        std::vector<int64_t> labels(in.size()), degrees(in.size());
        session.fetcher().fetch_features(in, feat.data());
        session.fetcher().fetch_labels(in, labels.data());
        session.fetcher().fetch_degrees(in, degrees.data());
        out.batches.push_back(std::move(got));
        out.features.push_back(std::move(feat));
        out.labels.push_back(std::move(labels));
        out.degrees.push_back(std::move(degrees));
      }
      out.sampling = session.sampler().stats();
      out.fetching = session.fetcher().stats();
      out.requests_sent = session.endpoint()->stats().requests_sent;
      session.finish();
    });
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
    return runs;
  }

  // Every batch of `run` against the single-process sampler on the unpartitioned graph.
  static void expect_reference(const RankRun& run, const std::string& parts) {
    const std::vector<int64_t> node_map = testing::read_node_map(parts);
    sample::LocalSampler reference(sample::csc_view_of(dataset_->in_edges), {});
    for (size_t b = 0; b < run.batches.size(); ++b) {
      const sample::SampledBatch& got = run.batches[b];
      sample::BlockOptions options;
      options.fanouts = {5, 3, -1};
      options.key = {7, 1, b};
      const sample::SampledBatch want =
          sample::sample_blocks(testing::map_ids(got.seeds, node_map), options, reference);
      ASSERT_EQ(testing::compare_batches(got, want, node_map), "") << "batch " << b;
      for (size_t i = 0; i < got.input_nodes.size(); ++i) {
        const int64_t orig = node_map[got.input_nodes[i]];
        for (int c = 0; c < 6; ++c)
          ASSERT_EQ(run.features[b][i * 6 + c], dataset_->features.row(orig)[c]) << orig;
        ASSERT_EQ(run.labels[b][i], dataset_->labels[orig]) << orig;
        ASSERT_EQ(run.degrees[b][i], dataset_->in_edges.degree(orig)) << orig;
      }
    }
  }

  static void expect_same(const RankRun& a, const RankRun& b) {
    ASSERT_EQ(a.batches.size(), b.batches.size());
    for (size_t i = 0; i < a.batches.size(); ++i) {
      EXPECT_EQ(testing::compare_batches(a.batches[i], b.batches[i], identity_), "");
      EXPECT_EQ(a.features[i], b.features[i]);
      EXPECT_EQ(a.labels[i], b.labels[i]);
      EXPECT_EQ(a.degrees[i], b.degrees[i]);
    }
  }

  static TempDir* dir_;
  static data::Dataset* dataset_;
  static std::vector<int64_t> identity_;
};
TempDir* HostLocal::dir_ = nullptr;
data::Dataset* HostLocal::dataset_ = nullptr;
std::vector<int64_t> HostLocal::identity_;

void fill_identity(std::vector<int64_t>* ids, int64_t n) {
  ids->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) (*ids)[static_cast<size_t>(i)] = i;
}

TEST_F(HostLocal, SameDirectoryReadsPeersFromMemoryWithIdenticalResults) {
  fill_identity(&identity_, dataset_->in_edges.num_rows());
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::string parts = *dir_ / ("p" + std::to_string(ranks));
    const std::vector<std::string> dirs(static_cast<size_t>(ranks), parts);
    const std::vector<RankRun> on = run(dirs, runtime::HostLocal::kAuto);
    const std::vector<RankRun> off = run(dirs, runtime::HostLocal::kOff);
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const RankRun& a = on[static_cast<size_t>(r)];
      const RankRun& b = off[static_cast<size_t>(r)];
      expect_reference(a, parts);
      expect_reference(b, parts);
      expect_same(a, b);
      std::vector<int> others;
      for (int q = 0; q < ranks; ++q)
        if (q != r) others.push_back(q);
      EXPECT_EQ(a.host_ranks, others);
      // auto: no request of any kind (the endpoint counts them all), rows read from memory.
      EXPECT_EQ(a.requests_sent, 0);
      EXPECT_EQ(a.sampling.remote_requests, 0);
      EXPECT_EQ(a.sampling.remote_nodes, 0);
      EXPECT_EQ(a.fetching.remote_requests, 0);
      EXPECT_EQ(a.fetching.remote_rows, 0);
      EXPECT_GT(a.sampling.host_nodes, 0);
      EXPECT_GT(a.fetching.host_rows, 0);
      EXPECT_EQ(a.sampling.host_nodes, b.sampling.remote_nodes);
      EXPECT_EQ(a.fetching.host_rows, b.fetching.remote_rows);
      // off: the request path, as before.
      EXPECT_TRUE(b.host_ranks.empty());
      EXPECT_GT(b.sampling.remote_requests, 0);
      EXPECT_GT(b.fetching.remote_requests, 0);
      EXPECT_EQ(b.sampling.host_nodes, 0);
      EXPECT_EQ(b.fetching.host_rows, 0);
    }
  }
}

TEST_F(HostLocal, CopyOfTheDirectoryFallsBackToRequests) {
  fill_identity(&identity_, dataset_->in_edges.num_rows());
  const std::string parts = *dir_ / "p2";
  const std::vector<RankRun> runs = run({parts, *dir_ / "p2-copy"}, runtime::HostLocal::kAuto);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const RankRun& a = runs[static_cast<size_t>(r)];
    expect_reference(a, parts);
    EXPECT_TRUE(a.host_ranks.empty());
    EXPECT_GT(a.sampling.remote_requests, 0);
    EXPECT_GT(a.fetching.remote_requests, 0);
    EXPECT_EQ(a.sampling.host_nodes, 0);
    EXPECT_EQ(a.fetching.host_rows, 0);
  }
}

TEST_F(HostLocal, ServerClientTrainerReadsServersFromMemory) {
  fill_identity(&identity_, dataset_->in_edges.num_rows());
  const std::string parts = *dir_ / "p2";
  const std::vector<std::string> dirs(3, parts);
  const std::vector<RankRun> on = run(dirs, runtime::HostLocal::kAuto, /*servers=*/2);
  const std::vector<RankRun> off = run(dirs, runtime::HostLocal::kOff, /*servers=*/2);
  EXPECT_TRUE(on[0].host_ranks.empty());  // servers sample and fetch nothing remote
  EXPECT_EQ(on[2].host_ranks, (std::vector<int>{0, 1}));
  expect_reference(on[2], parts);
  expect_same(on[2], off[2]);
  EXPECT_EQ(on[2].requests_sent, 0);
  EXPECT_GT(on[2].fetching.host_rows, 0);
  EXPECT_GT(off[2].requests_sent, 0);
}

TEST(HostLocalPeers, SameHostSameDirectoryEnabledServingOnly) {
  using runtime::HostIdentity;
  const HostIdentity a{1, 7, 1, 0}, other_host{2, 7, 1, 0}, other_dir{1, 8, 1, 0}, off{1, 7, 0, 0},
      unknown{1, 0, 1, 0};
  EXPECT_EQ(runtime::host_local_peers({a, a, other_host, other_dir, off}, 0, 5),
            (std::vector<int>{1, 4}));  // a peer's own setting does not matter
  EXPECT_TRUE(runtime::host_local_peers({off, a}, 0, 2).empty());
  EXPECT_TRUE(runtime::host_local_peers({unknown, unknown}, 0, 2).empty());
  EXPECT_EQ(runtime::host_local_peers({a, a, a}, 2, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(runtime::host_local_peers({a, a, a}, 0, 2), (std::vector<int>{1}));
}

TEST(HostLocalIdentity, SameDirectorySameIdentityCopyDiffers) {
  TempDir dir;
  std::filesystem::create_directories(dir / "a");
  { std::ofstream(dir / "a/partita.json") << "{\"format_version\": 1}"; }
  std::filesystem::copy(dir / "a", dir / "b", std::filesystem::copy_options::recursive);
  const auto x = runtime::host_identity(dir / "a", runtime::HostLocal::kAuto);
  const auto y = runtime::host_identity(dir / "a/../a", runtime::HostLocal::kAuto);
  const auto z = runtime::host_identity(dir / "b", runtime::HostLocal::kAuto);
  const auto none = runtime::host_identity(dir / "missing", runtime::HostLocal::kAuto);
  EXPECT_NE(x.dir, 0u);
  EXPECT_EQ(x.dir, y.dir);
  EXPECT_EQ(x.host, z.host);
  EXPECT_NE(x.dir, z.dir);
  EXPECT_EQ(none.dir, 0u);
  EXPECT_EQ(runtime::host_identity(dir / "a", runtime::HostLocal::kOff).enabled, 0);
}

}  // namespace
}  // namespace partita
