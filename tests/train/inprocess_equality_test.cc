// Distributed training equals single-process training: the same graph partitioned into 1, 2
// and 4 parts, trained by 1, 2 and 4 ranks (threads over the in-process transport and
// collectives), with SGD and no dropout, gives the same gradient on a step and the same
// losses and weights over epochs, up to floating-point summation order (DESIGN 7; the
// global shuffle of loader::GlobalBatches). tests/train/CMakeLists.txt checks the same
// under mpirun on Cora (1 rank vs 2 ranks).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/runtime/session.h"
#include "partita/train/trainer.h"
#include "train_test_util.h"

namespace partita::train {
namespace {

using testing::TempDir;

struct RunResult {
  std::vector<double> epoch_losses;
  std::vector<double> val_accs;
  double test_acc = 0;
  std::vector<float> weights;        // rank 0's parameters after training, flattened
  std::vector<float> first_weights;  // ... before training
  int64_t request_bytes = 0;         // rank 0's traffic in epoch 1
  int64_t collective_bytes = 0;
  int64_t steps = 0;
  int64_t cache_hits = 0;  // rank 0's, epoch 1
  int64_t remote_rows = 0;
  int64_t cache_rows = 0;
};

class InProcessEquality : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    testing::make_small_partitions(dir_->path(), {1, 2, 4});
  }
  static void TearDownTestSuite() { delete dir_; }

  // Trains on `ranks` threads over the `ranks`-part directory; rank 0's results. The tests
  // of traffic and the cache take the request path (host_local off); HostLocal* compares.
  static RunResult run(int ranks, const TrainOptions& options,
                       runtime::HostLocal host_local = runtime::HostLocal::kOff) {
    InProcessWorld world(ranks);
    InProcessCollectiveGroup group(ranks, 60);
    std::vector<std::string> failures(static_cast<size_t>(ranks));
    RunResult result;
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        try {
          runtime::SessionOptions so;
          so.parts_dir = *dir_ / ("p" + std::to_string(ranks));
          so.timeout_s = 60;
          so.host_local = host_local;
          runtime::Session session(world.transport(r), group.member(r), so);
          {
            Trainer trainer(session, options);
            if (r == 0) result.first_weights = testing::flat_parameters(trainer.model());
            const TrainResult t = trainer.train();
            if (r == 0) {
              for (const EpochRecord& e : t.epochs) {
                result.epoch_losses.push_back(e.loss);
                result.val_accs.push_back(e.val_acc);
              }
              result.test_acc = t.test_acc;
              result.request_bytes = t.epochs[0].request_bytes;
              result.collective_bytes = t.epochs[0].collective_bytes;
              result.steps = t.epochs[0].steps;
              result.cache_hits = t.epochs[0].cache_hits;
              result.remote_rows = t.epochs[0].remote_rows;
              result.cache_rows = t.cache.rows;
              result.weights = testing::flat_parameters(trainer.model());
            }
          }
          session.finish();
        } catch (const std::exception& e) {
          failures[static_cast<size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
    return result;
  }

  static TrainOptions options(nn::ConvKind kind) {
    TrainOptions o;
    o.model.kind = model_kind(kind);
    o.model.hidden = 16;
    o.model.heads = kind == nn::ConvKind::kGat ? 2 : 1;
    o.model.layers = 2;
    o.model.dropout = 0;
    o.model.attention_dropout = 0;
    o.loader.fanouts = {5, 5};
    o.optimizer.kind = OptimizerKind::kSgd;
    o.optimizer.lr = 0.2;
    o.loader.batch_size = 64;  // 1500 * 0.6 training ids: the last step is short
    o.epochs = 3;
    o.seed = 11;
    o.loader.threads = 1;
    // 1, or $PARTITA_TEST_TORCH_THREADS (CTest's t2.* run of this suite sets 2).
    const char* threads = std::getenv("PARTITA_TEST_TORCH_THREADS");
    o.torch_threads = threads != nullptr ? std::max(1, std::atoi(threads)) : 1;
    return o;
  }

  static TempDir* dir_;
};
TempDir* InProcessEquality::dir_ = nullptr;

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                  double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - want[i]);
    worst = std::max(worst, d);
    if (d > atol + rtol * std::abs(static_cast<double>(want[i]))) ++bad;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size()
                     << " values differ; largest difference " << worst;
}

// One step over the whole training set (batch = every id) with SGD at lr 1: the weights
// move by exactly minus the gradient of the mean loss, which must not depend on the ranks.
TEST_F(InProcessEquality, GradientOfOneStepIsTheSameForOneTwoAndFourRanks) {
  for (nn::ConvKind kind : {nn::ConvKind::kSage, nn::ConvKind::kGcn, nn::ConvKind::kGat}) {
    TrainOptions o = options(kind);
    o.epochs = 1;
    o.loader.batch_size = 100000;
    o.optimizer.lr = 1;
    o.eval.every = 0;
    const RunResult one = run(1, o);
    ASSERT_FALSE(one.weights.empty());
    std::vector<float> grad1(one.weights.size());
    for (size_t i = 0; i < grad1.size(); ++i) grad1[i] = one.first_weights[i] - one.weights[i];
    double norm = 0;
    for (float g : grad1) norm += static_cast<double>(g) * g;
    ASSERT_GT(norm, 1e-8) << "the step moved nothing: the test would prove nothing";
    for (int ranks : {2, 4}) {
      const RunResult many = run(ranks, o);
      ASSERT_EQ(many.first_weights, one.first_weights) << "initial weights differ";
      std::vector<float> grad(many.weights.size());
      for (size_t i = 0; i < grad.size(); ++i) grad[i] = many.first_weights[i] - many.weights[i];
      expect_close(grad, grad1, 1e-4, 1e-6,
                   "model " + std::to_string(static_cast<int>(kind)) + ", " +
                       std::to_string(ranks) + " ranks vs 1");
    }
  }
}

TEST_F(InProcessEquality, LossesPerEpochAndWeightsAreTheSameForOneTwoAndFourRanks) {
  for (nn::ConvKind kind : {nn::ConvKind::kSage, nn::ConvKind::kGcn, nn::ConvKind::kGat}) {
    SCOPED_TRACE("model " + std::to_string(static_cast<int>(kind)));
    const TrainOptions o = options(kind);
    const RunResult one = run(1, o);
    ASSERT_EQ(one.epoch_losses.size(), 3u);
    // Traffic: none alone (a sum over one rank sends nothing: no gradient leaves the step);
    // with more, every step allreduces at least the gradients (4 bytes each).
    EXPECT_EQ(one.request_bytes, 0);
    EXPECT_LT(one.collective_bytes, one.steps * static_cast<int64_t>(one.weights.size()) * 4);
    EXPECT_LT(one.epoch_losses.back(), one.epoch_losses.front()) << "it learns";
    for (int ranks : {2, 4}) {
      const RunResult many = run(ranks, o);
      ASSERT_EQ(many.epoch_losses.size(), 3u);
      EXPECT_GT(many.request_bytes, 0) << "remote neighbors and features were fetched";
      EXPECT_GE(many.collective_bytes, many.steps * static_cast<int64_t>(many.weights.size()) * 4);
      for (size_t e = 0; e < 3; ++e) {
        EXPECT_NEAR(many.epoch_losses[e], one.epoch_losses[e], 1e-4 * one.epoch_losses[e])
            << ranks << " ranks, epoch " << e + 1;
      }
      expect_close(many.weights, one.weights, 1e-3, 1e-5,
                   std::to_string(ranks) + " ranks' weights after 3 epochs");
      EXPECT_EQ(many.val_accs, one.val_accs) << ranks << " ranks";
      EXPECT_EQ(many.test_acc, one.test_acc) << ranks << " ranks";
    }
  }
}

}  // namespace
}  // namespace partita::train

namespace partita::train {
namespace {

// The hot-feature cache changes the traffic, not the results: bit-identical losses and
// weights with and without it.
TEST_F(InProcessEquality, CacheGivesIdenticalResultsWithLessTraffic) {
  TrainOptions o = options(nn::ConvKind::kSage);
  const RunResult plain = run(2, o);
  o.cache.ratio = 0.3;
  o.cache.presample_batches = 4;
  const RunResult cached = run(2, o);
  EXPECT_EQ(cached.epoch_losses, plain.epoch_losses);
  EXPECT_EQ(cached.weights, plain.weights);
  EXPECT_EQ(cached.test_acc, plain.test_acc);
  EXPECT_GT(cached.cache_rows, 0);
  EXPECT_GT(cached.cache_hits, 0);
  EXPECT_EQ(plain.cache_hits, 0);
  EXPECT_LT(cached.remote_rows, plain.remote_rows);
  EXPECT_EQ(cached.remote_rows + cached.cache_hits, plain.remote_rows)
      << "every remote row is fetched or found in the cache";
}

}  // namespace
}  // namespace partita::train

namespace partita::train {
namespace {

// Host-local reads (the threads share a host and a directory) change the traffic, not the
// results: bit-identical losses and weights, and no request at all.
TEST_F(InProcessEquality, HostLocalGivesIdenticalResultsWithoutRequests) {
  const TrainOptions o = options(nn::ConvKind::kSage);
  for (int ranks : {2, 4}) {
    const RunResult off = run(ranks, o, runtime::HostLocal::kOff);
    const RunResult on = run(ranks, o, runtime::HostLocal::kAuto);
    EXPECT_EQ(on.epoch_losses, off.epoch_losses) << ranks << " ranks";
    EXPECT_EQ(on.weights, off.weights) << ranks << " ranks";
    EXPECT_EQ(on.test_acc, off.test_acc) << ranks << " ranks";
    EXPECT_GT(off.request_bytes, 0);
    EXPECT_GT(off.remote_rows, 0);
    EXPECT_EQ(on.request_bytes, 0) << ranks << " ranks";
    EXPECT_EQ(on.remote_rows, 0) << ranks << " ranks";
  }
}

}  // namespace
}  // namespace partita::train
