// Training with the device sampler (train/device_sampling.h) and with the whole topology on
// every rank (runtime::Topology::kFull), in-process (ranks as threads) on the CPU: both keep
// the sampled-edge contract, so the losses are those of host sampling over owned parts, bit
// for bit (SAGE, GCN with its degrees, GAT, R-GCN on a typed graph with per-relation
// fanouts); with the full topology no rank asks another for a sample; device sampling where
// the rank does not hold the topology is refused naming the option.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "../partition/test_datasets.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/core/log.h"
#include "partita/partition/partition.h"
#include "partita/runtime/session.h"
#include "partita/train/trainer.h"
#include "train_test_util.h"

namespace partita::train {
namespace {

using testing::TempDir;

struct Outcome {
  std::vector<std::string> failures;  // per rank
  std::vector<double> losses;         // rank 0's, per epoch
  double test_acc = 0;
  std::string sample_on;
  int64_t remote_sampled = 0;  // frontier nodes rank 0 had sampled by their owners
  int64_t here_sampled = 0;    // ... sampled from other parts mapped here
};

struct Sampling {
  runtime::Topology topology = runtime::Topology::kOwned;
  SampleOn sample_on = SampleOn::kHost;
  bool typed = false;
};

class DeviceSamplingTraining : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    dir_ = new TempDir();
    testing::make_small_partitions(dir_->path(), {1, 2});
    testing::TypedOptions t;
    t.papers = 240;
    t.authors = 120;
    t.fields = 20;
    t.seed = 9;
    const data::Dataset typed = testing::typed_dataset(t);
    for (int parts : {1, 2}) {
      partition::PartitionOptions p;
      p.num_parts = parts;
      p.method = partition::Method::kRandom;
      p.seed = 6;
      p.threads = 1;
      p.out_dir = *dir_ / ("typed" + std::to_string(parts));
      partition::partition_dataset(typed, p);
    }
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions options(ModelKind kind) {
    TrainOptions o;
    o.model.kind = kind;
    o.model.hidden = 16;
    o.model.heads = 2;
    o.model.layers = 2;
    o.model.dropout = 0.3;  // the same keys either way: dropout stays in the comparison
    o.loader.fanouts = {6, 4};
    o.optimizer.kind = OptimizerKind::kSgd;
    o.optimizer.lr = 0.3;
    o.loader.batch_size = 64;
    o.epochs = 2;
    o.seed = 5;
    o.loader.threads = 2;  // batches built concurrently: the source is shared
    o.torch_threads = 1;
    return o;
  }

  static Outcome run(int ranks, TrainOptions o, const Sampling& setup) {
    o.loader.sample_on = setup.sample_on;
    InProcessWorld world(ranks);
    InProcessCollectiveGroup group(ranks, 60);
    Outcome result;
    result.failures.assign(static_cast<size_t>(ranks), "");
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        try {
          runtime::SessionOptions so;
          so.parts_dir = *dir_ / ((setup.typed ? "typed" : "p") + std::to_string(ranks));
          so.timeout_s = 60;
          so.host_local = runtime::HostLocal::kOff;  // other parts' samples by request
          so.topology = setup.topology;
          if (setup.typed) {  // as the command line builds them (cmd_train.cc)
            so.embeddings.dim = o.model.hidden;
            so.embeddings.seed = o.seed;
            so.embeddings.optimizer.kind = store::SparseOptimizer::kAdam;
            so.embeddings.optimizer.lr = static_cast<float>(o.optimizer.lr);
          }
          runtime::Session session(world.transport(r), group.member(r), so);
          {
            Trainer trainer(session, o);
            const TrainResult t = trainer.train();
            if (r == 0) {
              for (const EpochRecord& e : t.epochs) result.losses.push_back(e.loss);
              result.test_acc = t.test_acc;
              result.sample_on = t.sample_on;
              result.remote_sampled = session.sampler().stats().remote_nodes;
              result.here_sampled = session.sampler().stats().host_nodes;
            }
          }
          session.finish();
        } catch (const std::exception& e) {
          result.failures[static_cast<size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    return result;
  }

  static void expect_ok(const Outcome& run, const std::string& what) {
    for (size_t r = 0; r < run.failures.size(); ++r)
      EXPECT_EQ(run.failures[r], "") << what << ", rank " << r;
  }

  static TempDir* dir_;
};
TempDir* DeviceSamplingTraining::dir_ = nullptr;

TEST_F(DeviceSamplingTraining, DeviceSamplingTrainsExactlyAsHostSampling) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    const std::string what = name_of(model_kind_names(), kind);
    const Outcome host = run(1, options(kind), {});
    const Outcome device = run(1, options(kind), {runtime::Topology::kOwned, SampleOn::kDevice});
    expect_ok(host, what);
    expect_ok(device, what);
    EXPECT_EQ(host.sample_on, "host");
    EXPECT_EQ(device.sample_on, "device") << what;
    ASSERT_EQ(host.losses.size(), 2u) << what;
    EXPECT_EQ(device.losses, host.losses) << what;  // bit for bit
    EXPECT_EQ(device.test_acc, host.test_acc) << what;
    EXPECT_GT(host.test_acc, 0.5) << what;  // 4 classes
  }
}

// R-GCN with Adam (its planted features are large: SGD at the others' rate diverges).
TrainOptions rgcn_options(TrainOptions o) {
  o.optimizer.kind = OptimizerKind::kAdam;
  o.optimizer.lr = 0.01;
  return o;
}

TEST_F(DeviceSamplingTraining, DeviceSamplingTrainsRgcnExactlyAsHostSampling) {
  TrainOptions o = rgcn_options(options(ModelKind::kRgcn));
  // Per relation (writes, cites, has_topic and their reverses): some none, some all.
  o.loader.fanouts = sample::Fanouts({4, 3}, {{2, 4, 0, 3, -1, 1}, {}});
  const Outcome host = run(1, o, {runtime::Topology::kOwned, SampleOn::kHost, /*typed=*/true});
  const Outcome device = run(1, o, {runtime::Topology::kOwned, SampleOn::kDevice, true});
  expect_ok(host, "rgcn host");
  expect_ok(device, "rgcn device");
  ASSERT_EQ(host.losses.size(), 2u);
  EXPECT_EQ(device.sample_on, "device");
  EXPECT_EQ(device.losses, host.losses);
  EXPECT_EQ(device.test_acc, host.test_acc);
  EXPECT_TRUE(std::isfinite(host.losses[1])) << "the run diverged: nothing compared";
}

// Two ranks, two parts: the whole topology on each rank samples every node locally, with
// the owner's streams, so training repeats the owned-topology run exactly; and it lets
// the device sampler run on each rank.
TEST_F(DeviceSamplingTraining, FullTopologySamplesLocallyWithTheSameEdges) {
  const TrainOptions o = options(ModelKind::kSage);
  const Outcome owned = run(2, o, {});
  const Outcome full = run(2, o, {runtime::Topology::kFull, SampleOn::kHost});
  const Outcome device = run(2, o, {runtime::Topology::kFull, SampleOn::kDevice});
  expect_ok(owned, "owned");
  expect_ok(full, "full");
  expect_ok(device, "full, device");
  ASSERT_EQ(owned.losses.size(), 2u);
  EXPECT_EQ(full.losses, owned.losses);
  EXPECT_EQ(device.losses, owned.losses);
  EXPECT_EQ(full.test_acc, owned.test_acc);
  EXPECT_EQ(device.test_acc, owned.test_acc);
  EXPECT_GT(owned.remote_sampled, 0) << "owned: the other part's nodes go to their owner";
  EXPECT_EQ(full.remote_sampled, 0) << "full: no sampling request";
  EXPECT_GT(full.here_sampled, 0) << "full: the other part's nodes sampled here";
  EXPECT_EQ(device.sample_on, "device");
  EXPECT_GT(owned.test_acc, 0.5);
}

TEST_F(DeviceSamplingTraining, TypedFullTopologyOnTwoRanksEqualsOwned) {
  const TrainOptions o = rgcn_options(options(ModelKind::kRgcn));
  const Outcome owned = run(2, o, {runtime::Topology::kOwned, SampleOn::kHost, true});
  const Outcome device = run(2, o, {runtime::Topology::kFull, SampleOn::kDevice, true});
  expect_ok(owned, "owned");
  expect_ok(device, "full, device");
  ASSERT_EQ(owned.losses.size(), 2u);
  EXPECT_TRUE(std::isfinite(owned.losses[1])) << "the run diverged: nothing compared";
  EXPECT_EQ(device.losses, owned.losses);
  EXPECT_EQ(device.test_acc, owned.test_acc);
}

TEST_F(DeviceSamplingTraining, DeviceSamplingWithoutTheTopologyIsRefused) {
  const Outcome refused =
      run(2, options(ModelKind::kSage), {runtime::Topology::kOwned, SampleOn::kDevice});
  for (const std::string& failure : refused.failures) {
    EXPECT_NE(failure.find("sample_on: device:"), std::string::npos) << failure;
    EXPECT_NE(failure.find("`topology` full"), std::string::npos) << failure;
  }
  // auto on the CPU: host sampling, whatever the topology.
  const Outcome automatic =
      run(1, options(ModelKind::kSage), {runtime::Topology::kOwned, SampleOn::kAuto});
  expect_ok(automatic, "auto");
  EXPECT_EQ(automatic.sample_on, "host");
  TrainOptions link = options(ModelKind::kSage);
  link.task = Task::kLink;
  const Outcome link_refused = run(1, link, {runtime::Topology::kOwned, SampleOn::kDevice});
  EXPECT_NE(link_refused.failures[0].find("sample_on: device:"), std::string::npos)
      << link_refused.failures[0];
}

}  // namespace
}  // namespace partita::train
