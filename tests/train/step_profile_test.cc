// The step profile of `train --profile` (train/step_profile.h), in-process on one rank: its
// stage rows add up to the steps' wall time with one call per step, partita's kernels
// appear by name with the calls the model makes, and profiling changes no loss.
#include "partita/train/step_profile.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/runtime/session.h"
#include "partita/train/trainer.h"
#include "train_test_util.h"

namespace partita::train {
namespace {

constexpr int64_t kSteps = 4;
constexpr int64_t kLayers = 2;

TrainOptions options(ModelKind kind, bool profile) {
  TrainOptions o;
  o.model.kind = kind;
  o.model.hidden = 16;
  o.model.heads = 2;
  o.model.layers = kLayers;
  o.model.dropout = 0.3;
  o.model.attention_dropout = 0;
  o.loader.fanouts = {5, 5};
  o.loader.batch_size = 64;
  o.loader.max_steps = kSteps;
  o.eval.every = 0;
  o.epochs = 2;
  o.seed = 7;
  o.profile = profile;
  return o;
}

class StepProfileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    testing::make_small_partitions(dir_->path(), {1});
  }
  static void TearDownTestSuite() { delete dir_; }

  // One rank (a thread over the in-process transport) trains with `o`.
  static TrainResult train(const TrainOptions& o) {
    InProcessWorld world(1);
    InProcessCollectiveGroup group(1, 60);
    TrainResult result;
    const auto failures = testing::on_threads(1, [&](int r) {
      runtime::SessionOptions so;
      so.parts_dir = *dir_ / "p1";
      so.timeout_s = 60;
      runtime::Session session(world.transport(r), group.member(r), so);
      Trainer trainer(session, o);
      result = trainer.train();
      session.finish();
    });
    EXPECT_EQ(failures[0], "");
    return result;
  }

  static testing::TempDir* dir_;
};

testing::TempDir* StepProfileTest::dir_ = nullptr;

std::map<std::string, OpRow> ops_by_name(const StepProfileReport& r) {
  std::map<std::string, OpRow> out;
  for (const OpRow& o : r.ops) out[o.name] = o;
  return out;
}

TEST_F(StepProfileTest, StagesAddUpAndKernelsAppearByName) {
  const TrainResult result = train(options(ModelKind::kSage, true));
  ASSERT_TRUE(result.profile.has_value());
  const StepProfileReport& r = *result.profile;
  const int64_t steps = kSteps * 2;  // two epochs
  EXPECT_EQ(r.steps, steps);

  double sum = 0, share = 0;
  std::vector<std::string> names;
  for (const StageRow& s : r.stages) {
    EXPECT_GE(s.seconds, 0) << s.name;
    if (s.overlapped) {
      EXPECT_EQ(s.calls, steps) << s.name << ": one batch per step";
      continue;
    }
    names.push_back(s.name);
    EXPECT_EQ(s.calls, steps) << s.name;
    sum += s.seconds;
    share += s.share;
  }
  EXPECT_NEAR(sum, r.step_s, 1e-9 * r.step_s);
  EXPECT_NEAR(share, 1.0, 1e-9);
  const std::vector<std::string> expected{
      "batch wait", "step setup (zero_grad)", "batch to tensors", "forward",  "loss",
      "backward",   "gradient packing",       "allreduce",        "optimizer"};
  EXPECT_EQ(names, expected) << "no embedding rows for GraphSAGE";

  const auto ops = ops_by_name(r);
  const auto calls = [&](const std::string& name) {
    auto it = ops.find(name);
    return it == ops.end() ? int64_t{-1} : it->second.calls;
  };
  // One mean aggregation and one dropout per layer and step; layer 0's input (the features)
  // needs no gradient, so only the later layers run backward.
  EXPECT_EQ(calls("partita::spmm_forward"), kLayers * steps);
  EXPECT_EQ(calls("partita::spmm_backward"), (kLayers - 1) * steps);
  EXPECT_EQ(calls("partita::dropout_forward"), kLayers * steps);
  EXPECT_EQ(calls("partita::dropout_backward"), (kLayers - 1) * steps);
  EXPECT_EQ(calls("partita::to_block_tensors"), steps);
  EXPECT_EQ(calls("partita::features_tensor"), steps);
  EXPECT_EQ(calls("partita::allreduce"), steps);
  EXPECT_GT(calls("aten::mm") + calls("aten::addmm"), 0);

  double self = 0;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const OpRow& o = r.ops[i];
    self += o.self_s;
    EXPECT_GE(o.self_s, 0) << o.name;
    EXPECT_LE(o.self_s, o.inclusive_s * (1 + 1e-9) + 1e-12) << o.name;
    EXPECT_NEAR(o.share, o.self_s / r.step_s, 1e-12) << o.name;
    if (i > 0) {
      EXPECT_LE(o.self_s, r.ops[i - 1].self_s) << "by self time, largest first";
    }
  }
  // Only the training thread is observed: its ops fit in the steps' wall time.
  EXPECT_LE(self, r.step_s * (1 + 1e-9));
  EXPECT_NEAR(self + r.outside_ops_s, r.step_s, 1e-9 * r.step_s);
}

TEST_F(StepProfileTest, GatKernelsByName) {
  const TrainResult result = train(options(ModelKind::kGat, true));
  ASSERT_TRUE(result.profile.has_value());
  const auto ops = ops_by_name(*result.profile);
  ASSERT_TRUE(ops.count("partita::gat_softmax_forward"));
  EXPECT_EQ(ops.at("partita::gat_softmax_forward").calls, kLayers * kSteps * 2);
  ASSERT_TRUE(ops.count("partita::gat_softmax_backward"));
  EXPECT_EQ(ops.at("partita::gat_softmax_backward").calls, kLayers * kSteps * 2);
}

// Profiling observes; it changes no number the run computes.
TEST_F(StepProfileTest, SameLossesWithAndWithout) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGat}) {
    const TrainResult off = train(options(kind, false));
    const TrainResult on = train(options(kind, true));
    EXPECT_FALSE(off.profile.has_value());
    ASSERT_EQ(off.epochs.size(), on.epochs.size());
    for (size_t e = 0; e < off.epochs.size(); ++e) {
      EXPECT_EQ(off.epochs[e].loss, on.epochs[e].loss) << "epoch " << e;
      EXPECT_EQ(off.epochs[e].train_acc, on.epochs[e].train_acc) << "epoch " << e;
    }
    EXPECT_EQ(off.test_acc, on.test_acc);
  }
}

// No recording, no callback: torch's RecordFunction sees none registered.
TEST(OpRecording, NullProfileRegistersNothing) {
  const bool before = at::hasThreadLocalCallbacks();
  {
    OpRecording none(nullptr);
    EXPECT_EQ(at::hasThreadLocalCallbacks(), before);
  }
  StepProfile profile;
  {
    OpRecording recording(&profile);
    EXPECT_TRUE(at::hasThreadLocalCallbacks());
    (torch::ones({4, 4}) * 2).sum();
  }
  EXPECT_EQ(at::hasThreadLocalCallbacks(), before);
  bool mul = false;
  for (const OpRow& o : profile.report().ops) mul = mul || o.name == "aten::mul";
  EXPECT_TRUE(mul);
}

}  // namespace
}  // namespace partita::train
