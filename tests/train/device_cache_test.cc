// The device feature cache (train/device_feature_cache.h, issue 24) on the CPU device, the
// same code path as on a GPU: the assembled input matrix equals the uncached one bit for
// bit (float32, bfloat16 and float16 stored features; some, all and no rows cached); and
// training with --gpu-cache-ratio gives bit-identical losses and weights to training
// without, on 1 and 2 ranks (threads over the in-process transport), with the remote rows
// fetched dropping by exactly the cache's remote hits.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <optional>
#include <string>

#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/nn/precision.h"
#include "partita/runtime/session.h"
#include "partita/sample/dist_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"
#include "partita/train/device_feature_cache.h"
#include "partita/train/trainer.h"
#include "train_test_util.h"

namespace partita::train {
namespace {

using testing::TempDir;

torch::ScalarType torch_type(DType dtype) {
  return dtype == DType::kBFloat16  ? torch::kBFloat16
         : dtype == DType::kFloat16 ? torch::kHalf
                                    : torch::kFloat32;
}

class DeviceCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    testing::make_small_partitions(dir_->path(), {1, 2});
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      partition::PartitionOptions p;
      p.num_parts = 1;
      p.method = partition::Method::kRandom;
      p.seed = 3;
      p.threads = 1;
      p.feature_dtype = dtype;
      p.out_dir = dir_->path() + "/p1-" + dtype_name(dtype);
      partition::run_partition(dir_->path() + "/ds", data::LoadOptions{}, p);
    }
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string parts(DType dtype) {
    return dtype == DType::kFloat32 ? dir_->path() + "/p1"
                                    : dir_->path() + "/p1-" + dtype_name(dtype);
  }

  static TempDir* dir_;
};
TempDir* DeviceCache::dir_ = nullptr;

// Batches of one pass over a 1-part graph with `resident` skipped (null: none).
std::vector<loader::Batch> batches(const store::DistGraph& graph, sample::NeighborSampler& sampler,
                                   store::FeatureFetcher& fetcher,
                                   const store::ResidentRows* resident) {
  loader::BatchPipelineOptions o;
  o.threads = 2;
  o.fanouts = {5, 5};
  o.seed = 3;
  o.feature_row_bytes = graph.feature_row_bytes();
  o.fetch_labels = false;
  o.resident = resident;
  std::vector<std::vector<int64_t>> seeds(6);
  for (int64_t g = 0; g < 6 * 40; ++g) seeds[static_cast<size_t>(g % 6)].push_back(g * 5);
  std::vector<loader::Batch> out;
  loader::BatchPipeline pipeline(o, seeds, sampler, fetcher);
  while (std::optional<loader::Batch> b = pipeline.next()) out.push_back(std::move(*b));
  return out;
}

torch::Tensor fetched_tensor(loader::Batch& batch, const store::DistGraph& graph) {
  return torch::from_blob(batch.features.data(),
                          {loader::fetched_feature_rows(batch), graph.feat_dim()},
                          torch_type(graph.feature_dtype()));
}

// Every third node cached, then every node, then none (an empty set): the assembled matrix
// has the bytes of the uncached one, and widens to the same float32 matrix.
TEST_F(DeviceCache, AssembledMatrixEqualsTheUncachedOne) {
  for (DType dtype : {DType::kFloat32, DType::kBFloat16, DType::kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const store::DistGraph graph = store::DistGraph::open(parts(dtype), 0, 1);
    ASSERT_EQ(graph.feature_dtype(), dtype);
    sample::DistSampler sampler(graph, nullptr, {});
    store::FeatureFetcher fetcher(graph, nullptr);
    std::vector<loader::Batch> plain = batches(graph, sampler, fetcher, nullptr);
    for (int every : {3, 1, 0}) {
      SCOPED_TRACE("every " + std::to_string(every));
      std::vector<int64_t> ids;
      for (int64_t g = 0; every > 0 && g < graph.num_nodes(); g += every) ids.push_back(g);
      store::ResidentRows resident(graph.num_nodes(), ids);
      std::vector<uint8_t> rows(ids.size() * static_cast<size_t>(graph.feature_row_bytes()));
      fetcher.fetch_features(resident.ids(), rows.data());
      const DeviceFeatureCache cache(std::move(resident), rows, graph.feat_dim(), dtype,
                                     torch::kCPU);
      EXPECT_EQ(cache.rows(), static_cast<int64_t>(ids.size()));
      EXPECT_EQ(cache.bytes(), static_cast<int64_t>(rows.size()));
      EXPECT_EQ(cache.device(), torch::Device(torch::kCPU));
      std::vector<loader::Batch> cached = batches(graph, sampler, fetcher, &cache.resident());
      ASSERT_EQ(cached.size(), plain.size());
      int64_t hits = 0;
      for (size_t b = 0; b < plain.size(); ++b) {
        const torch::Tensor want = fetched_tensor(plain[b], graph);
        const torch::Tensor got =
            with_cached_rows(&cache, cached[b], fetched_tensor(cached[b], graph));
        hits += static_cast<int64_t>(cached[b].resident.hits.positions.size());
        ASSERT_EQ(got.sizes(), want.sizes());
        ASSERT_EQ(got.scalar_type(), want.scalar_type());
        ASSERT_TRUE(got.is_contiguous());
        EXPECT_EQ(std::memcmp(got.data_ptr(), want.data_ptr(), want.nbytes()), 0) << "batch " << b;
        EXPECT_TRUE(torch::equal(got.to(torch::kFloat32), want.to(torch::kFloat32)));
      }
      if (every > 0) {
        EXPECT_GT(hits, 0);
      } else {
        EXPECT_EQ(hits, 0);
      }
    }
  }
}

// Without a cache the fetched tensor passes unchanged; a batch that skipped rows needs the
// cache it was split against.
TEST_F(DeviceCache, RefusesBatchesItCannotFill) {
  const store::DistGraph graph = store::DistGraph::open(parts(DType::kFloat32), 0, 1);
  sample::DistSampler sampler(graph, nullptr, {});
  store::FeatureFetcher fetcher(graph, nullptr);
  std::vector<loader::Batch> plain = batches(graph, sampler, fetcher, nullptr);
  const torch::Tensor x = fetched_tensor(plain[0], graph);
  EXPECT_EQ(with_cached_rows(nullptr, plain[0], x).data_ptr(), x.data_ptr());
  store::ResidentRows all(graph.num_nodes(), {0, 5, 10, 15, 20});
  std::vector<uint8_t> rows(5 * static_cast<size_t>(graph.feature_row_bytes()));
  fetcher.fetch_features(all.ids(), rows.data());
  const DeviceFeatureCache cache(all, rows, graph.feat_dim(), DType::kFloat32, torch::kCPU);
  const DeviceFeatureCache other(all, rows, graph.feat_dim(), DType::kFloat32, torch::kCPU);
  std::vector<loader::Batch> cached = batches(graph, sampler, fetcher, &cache.resident());
  ASSERT_FALSE(cached[0].resident.hits.positions.empty()) << "seed 0 is in the set";
  const torch::Tensor y = fetched_tensor(cached[0], graph);
  EXPECT_THROW(with_cached_rows(nullptr, cached[0], y), Error);
  EXPECT_THROW(with_cached_rows(&other, cached[0], y), Error);
  EXPECT_THROW(with_cached_rows(&cache, cached[0], x), Error) << "rows of another split";
  EXPECT_THROW(DeviceFeatureCache(all, std::vector<uint8_t>(3), graph.feat_dim(), DType::kFloat32,
                                  torch::kCPU),
               Error);
}

struct RunResult {
  std::vector<double> epoch_losses;
  std::vector<double> val_accs;
  double test_acc = 0;
  std::vector<float> weights;
  EpochRecord first;  // rank 0's epoch 1
  DeviceCacheReport cache;
};

// Trains on `ranks` threads over the `ranks`-part directory (every remote row through
// requests); rank 0's results.
RunResult run(const std::string& dir, int ranks, const TrainOptions& options) {
  InProcessWorld world(ranks);
  InProcessCollectiveGroup group(ranks, 60);
  RunResult result;
  const std::vector<std::string> failures = testing::on_threads(ranks, [&](int r) {
    runtime::SessionOptions so;
    so.parts_dir = dir + "/p" + std::to_string(ranks);
    so.timeout_s = 60;
    so.host_local = runtime::HostLocal::kOff;
    runtime::Session session(world.transport(r), group.member(r), so);
    {
      Trainer trainer(session, options);
      const TrainResult t = trainer.train();
      if (r == 0) {
        for (const EpochRecord& e : t.epochs) {
          result.epoch_losses.push_back(e.loss);
          result.val_accs.push_back(e.val_acc);
        }
        result.test_acc = t.test_acc;
        result.first = t.epochs[0];
        result.cache = t.device_cache;
        result.weights = testing::flat_parameters(trainer.model());
      }
    }
    session.finish();
  });
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
  return result;
}

TrainOptions options(ModelKind kind) {
  TrainOptions o;
  o.model.kind = kind;
  o.model.hidden = 16;
  o.model.dropout = 0.3;  // masks keyed by (seed, epoch, step, rank): the same in both runs
  o.loader.fanouts = {5, 5};
  o.loader.batch_size = 64;
  o.epochs = 2;
  o.seed = 11;
  o.cache.presample_batches = 4;
  return o;
}

// Same losses, accuracies and weights, bit for bit, with and without the cache; fewer rows
// fetched: the local ones by the local hits, the remote ones by the remote hits.
TEST_F(DeviceCache, TrainingIsBitIdenticalWithFewerFetches) {
  struct Case {
    ModelKind kind;
    int ranks;
    bool normalize;
  };
  for (const Case c : {Case{ModelKind::kSage, 1, false}, Case{ModelKind::kSage, 2, false},
                       Case{ModelKind::kGcn, 2, false}, Case{ModelKind::kGat, 2, false}}) {
    SCOPED_TRACE("model " + std::to_string(static_cast<int>(c.kind)) + ", " +
                 std::to_string(c.ranks) + " ranks");
    TrainOptions o = options(c.kind);
    o.normalize_features = c.normalize;
    const RunResult plain = run(dir_->path(), c.ranks, o);
    o.cache.gpu_ratio = 0.3;
    const RunResult cached = run(dir_->path(), c.ranks, o);
    ASSERT_EQ(plain.epoch_losses.size(), 2u);
    EXPECT_EQ(cached.epoch_losses, plain.epoch_losses);
    EXPECT_EQ(cached.val_accs, plain.val_accs);
    EXPECT_EQ(cached.test_acc, plain.test_acc);
    EXPECT_EQ(cached.weights, plain.weights);
    EXPECT_EQ(plain.first.gpu_cache_lookups, 0);
    EXPECT_EQ(plain.cache.rows, 0);
    EXPECT_GT(cached.cache.rows, 0);
    EXPECT_EQ(cached.cache.device, "cpu");
    EXPECT_GT(cached.first.gpu_cache_hits, 0);
    EXPECT_LE(cached.first.gpu_cache_hits, cached.first.gpu_cache_lookups);
    if (c.ranks == 1) {
      EXPECT_EQ(cached.cache.remote_rows, 0);
      EXPECT_EQ(cached.first.gpu_cache_remote_hits, 0);
    } else {
      EXPECT_GT(cached.cache.remote_rows, 0);
      EXPECT_GT(cached.first.gpu_cache_remote_hits, 0);
      // Remote label rows are none (a worker's seeds are its own); GCN's remote degrees are
      // fetched either way.
      EXPECT_EQ(plain.first.remote_rows - cached.first.remote_rows,
                cached.first.gpu_cache_remote_hits);
      EXPECT_LT(cached.first.remote_bytes, plain.first.remote_bytes);
    }
  }
}

// A bf16 model on bfloat16-stored features takes the rows as they are (no widening): the
// cache's rows go in as they are too.
TEST_F(DeviceCache, Bf16ModelOnBf16FeaturesIsBitIdentical) {
  if (!nn::cpu_supports_bf16()) GTEST_SKIP() << "this CPU has no native bfloat16";
  TempDir dir;
  data::GenerateOptions g;
  g.nodes = 1500;
  g.avg_degree = 8;
  g.feat_dim = 12;
  g.classes = 4;
  g.seed = 5;
  g.threads = 1;
  g.out_dir = dir.path() + "/ds";
  data::generate_synthetic(g);
  partition::PartitionOptions p;
  p.num_parts = 2;
  p.method = partition::Method::kRandom;
  p.seed = 3;
  p.threads = 1;
  p.feature_dtype = DType::kBFloat16;
  p.out_dir = dir.path() + "/p2";
  partition::run_partition(g.out_dir, data::LoadOptions{}, p);
  TrainOptions o = options(ModelKind::kSage);
  o.model.precision = nn::Precision::kBf16;
  const RunResult plain = run(dir.path(), 2, o);
  o.cache.gpu_ratio = 0.3;
  const RunResult cached = run(dir.path(), 2, o);
  EXPECT_EQ(cached.epoch_losses, plain.epoch_losses);
  EXPECT_EQ(cached.weights, plain.weights);
  EXPECT_GT(cached.first.gpu_cache_hits, 0);
}

// The ratio is checked with the other options; a typed model is refused by name.
TEST(DeviceCacheOptions, RatioAndModelChecked) {
  const auto parameter_of = [](const TrainOptions& o) -> std::string {
    try {
      check_options(o);
    } catch (const ParameterError& e) {
      return e.parameter();
    }
    return "";
  };
  TrainOptions o;
  o.cache.gpu_ratio = 1;
  EXPECT_EQ(parameter_of(o), "");
  o.cache.gpu_ratio = 1.5;
  EXPECT_EQ(parameter_of(o), "gpu_cache_ratio");
  o.cache.gpu_ratio = -0.1;
  EXPECT_EQ(parameter_of(o), "gpu_cache_ratio");
  o.cache.gpu_ratio = 0.2;
  o.model.kind = ModelKind::kRgcn;
  EXPECT_EQ(parameter_of(o), "gpu_cache_ratio");
}

}  // namespace
}  // namespace partita::train
