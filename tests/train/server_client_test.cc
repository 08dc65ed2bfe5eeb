// Server-client mode (DESIGN 5, runtime/session.h Roles) equals worker mode: the same 2-part
// directory trained by 2 workers, and by 2 servers + T trainers (threads over the in-process
// transport; world collectives for set-up, the trainers' own for training), with SGD and no
// dropout, gives the same losses per epoch, weights and accuracies up to floating-point
// summation order (the same global batches, split by owner in worker mode and evenly among
// trainers in server-client mode). A server whose trainer vanished does not wait forever.
// tests/train/CMakeLists.txt checks the same under mpirun (train --servers 2, 4 ranks).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>

#include "helpers/test_paths.h"
#include "partita/comm/errors.h"
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
  int64_t steps = 0;
  int64_t request_bytes = 0;   // the first trainer's, epoch 1
  std::vector<float> weights;  // the first trainer's parameters after training
  std::vector<int64_t> roles;  // per world rank: 0 worker, 1 server, 2 trainer
};

class ServerClient : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    testing::make_small_partitions(dir_->path(), {2});
  }
  static void TearDownTestSuite() { delete dir_; }

  static runtime::SessionOptions session_options(int servers, double timeout_s = 60) {
    runtime::SessionOptions so;
    so.parts_dir = *dir_ / "p2";
    so.timeout_s = timeout_s;
    so.servers = servers;
    // The request path: "every row and sample came from the servers" (host-local reads of
    // the servers' parts are compared in inprocess_equality_test and host_local_test).
    so.host_local = runtime::HostLocal::kOff;
    return so;
  }

  // 2 workers (trainers == 0), or 2 servers + `trainers` trainers, on the 2-part directory;
  // the results of the first rank that trains.
  static RunResult run(int trainers, const TrainOptions& options) {
    const int servers = trainers > 0 ? 2 : 0;
    const int world_size = trainers > 0 ? servers + trainers : 2;
    InProcessWorld world(world_size);
    InProcessCollectiveGroup world_group(world_size, 60);
    std::unique_ptr<InProcessCollectiveGroup> trainer_group;
    if (trainers > 0) trainer_group = std::make_unique<InProcessCollectiveGroup>(trainers, 60);
    std::vector<std::string> failures(static_cast<size_t>(world_size));
    RunResult result;
    result.roles.assign(static_cast<size_t>(world_size), -1);
    std::vector<std::thread> threads;
    for (int r = 0; r < world_size; ++r) {
      threads.emplace_back([&, r] {
        try {
          Collectives* mine =
              trainers > 0 && r >= servers ? &trainer_group->member(r - servers) : nullptr;
          runtime::Session session(world.transport(r), world_group.member(r),
                                   session_options(servers), mine);
          result.roles[static_cast<size_t>(r)] = static_cast<int64_t>(session.role());
          if (session.role() != runtime::Role::kServer) {
            Trainer trainer(session, options);
            const TrainResult t = trainer.train();
            if (session.rank() == 0) {
              for (const EpochRecord& e : t.epochs) {
                result.epoch_losses.push_back(e.loss);
                result.val_accs.push_back(e.val_acc);
              }
              result.test_acc = t.test_acc;
              result.steps = t.epochs[0].steps;
              result.request_bytes = t.epochs[0].request_bytes;
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
    for (int r = 0; r < world_size; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
    return result;
  }

  static TrainOptions options() {
    TrainOptions o;
    o.model.hidden = 16;
    o.model.layers = 2;
    o.model.dropout = 0;
    o.loader.fanouts = {5, 5};
    o.optimizer.kind = OptimizerKind::kSgd;
    o.optimizer.lr = 0.2;
    o.loader.batch_size = 64;  // 900 training ids: the last step is short
    o.epochs = 3;
    o.seed = 11;
    o.loader.threads = 1;
    o.torch_threads = 1;
    return o;
  }

  static TempDir* dir_;
};
TempDir* ServerClient::dir_ = nullptr;

TEST_F(ServerClient, LossesWeightsAndAccuraciesEqualWorkerMode) {
  const RunResult workers = run(0, options());
  ASSERT_EQ(workers.epoch_losses.size(), 3u);
  EXPECT_LT(workers.epoch_losses.back(), workers.epoch_losses.front()) << "it learns";
  for (int trainers : {2, 1, 3}) {
    const RunResult sc = run(trainers, options());
    const std::string what = "2 servers + " + std::to_string(trainers) + " trainers";
    std::vector<int64_t> roles(2, static_cast<int64_t>(runtime::Role::kServer));
    roles.resize(static_cast<size_t>(2 + trainers), static_cast<int64_t>(runtime::Role::kTrainer));
    EXPECT_EQ(sc.roles, roles) << what;
    EXPECT_EQ(sc.steps, workers.steps) << what;
    EXPECT_GT(sc.request_bytes, 0) << what << ": every row and sample came from the servers";
    ASSERT_EQ(sc.epoch_losses.size(), workers.epoch_losses.size()) << what;
    for (size_t e = 0; e < workers.epoch_losses.size(); ++e)
      EXPECT_NEAR(sc.epoch_losses[e], workers.epoch_losses[e], 1e-4 * workers.epoch_losses[e])
          << what << ", epoch " << e + 1;
    ASSERT_EQ(sc.weights.size(), workers.weights.size()) << what;
    size_t bad = 0;
    for (size_t i = 0; i < sc.weights.size(); ++i)
      if (std::abs(sc.weights[i] - workers.weights[i]) > 1e-5 + 1e-3 * std::abs(workers.weights[i]))
        ++bad;
    EXPECT_EQ(bad, 0u) << what << ": weights differ";
    EXPECT_EQ(sc.val_accs, workers.val_accs) << what;
    EXPECT_EQ(sc.test_acc, workers.test_acc) << what;
  }
}

// A trainer that goes away without finish() (as a crashed process would: its service stops)
// makes each server's finish() throw TimeoutError naming it, instead of serving forever.
TEST_F(ServerClient, ServerNamesAVanishedTrainer) {
  const int world_size = 3;
  InProcessWorld world(world_size);
  InProcessCollectiveGroup world_group(world_size, 60);
  InProcessCollectiveGroup trainer_group(1, 60);
  std::vector<std::string> errors(static_cast<size_t>(world_size));
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      try {
        runtime::Session session(world.transport(r), world_group.member(r),
                                 session_options(2, /*timeout_s=*/1),
                                 r == 2 ? &trainer_group.member(0) : nullptr);
        if (r != 2) session.finish();  // the trainer leaves without a word
      } catch (const TimeoutError& e) {
        errors[static_cast<size_t>(r)] = e.what();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = std::string("unexpected: ") + e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(errors[static_cast<size_t>(r)].find("trainer rank 2 did not answer"),
              std::string::npos)
        << "server " << r << ": " << errors[static_cast<size_t>(r)];
  EXPECT_EQ(errors[2], "");
}

// A usage error only the trainers see (e.g. an existing checkpoint directory) reaches the
// servers: their finish() raises the same UsageError, so the whole job agrees on it.
TEST_F(ServerClient, ServersRaiseATrainersUsageError) {
  const int world_size = 3;
  InProcessWorld world(world_size);
  InProcessCollectiveGroup world_group(world_size, 60);
  InProcessCollectiveGroup trainer_group(1, 60);
  std::vector<std::string> errors(static_cast<size_t>(world_size));
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      try {
        runtime::Session session(world.transport(r), world_group.member(r), session_options(2),
                                 r == 2 ? &trainer_group.member(0) : nullptr);
        if (r == 2)
          session.fail_with_usage_error("--flag: bad");
        else
          session.finish();
      } catch (const UsageError& e) {
        errors[static_cast<size_t>(r)] = e.what();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = std::string("unexpected: ") + e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors, (std::vector<std::string>{"--flag: bad", "--flag: bad", ""}));
}

}  // namespace
}  // namespace partita::train
