// The step profile of `train --profile` (train/step_profile.h), in-process on one rank: its
// stage rows add up to the steps' wall time with one call per step, partita's kernels
// appear by name with the calls the model makes, and profiling changes no loss.
#include "partita/train/step_profile.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>
#include <thread>
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

  // One rank (a thread over the in-process transport) trains with `o`, calling on_step.
  static TrainResult train(const TrainOptions& o,
                           const std::function<void(const StepRecord&)>& on_step = {}) {
    InProcessWorld world(1);
    InProcessCollectiveGroup group(1, 60);
    TrainResult result;
    const auto failures = testing::on_threads(1, [&](int r) {
      runtime::SessionOptions so;
      so.parts_dir = *dir_ / "p1";
      so.timeout_s = 60;
      runtime::Session session(world.transport(r), group.member(r), so);
      Trainer trainer(session, o);
      result = trainer.train({}, on_step);
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
  EXPECT_EQ(calls("partita::allreduce"), -1) << "one rank: the gradient sum sends nothing";
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

int64_t syncs_of(const OpCounts& c, const std::string& op) {
  for (const auto& [name, n] : c.syncs_by_op)
    if (name == op) return n;
  return 0;
}

// The CPU proxies of a GPU step (issue 38): with the device-generic ops (what a GPU runs,
// --kernels generic), GraphSAGE 3 x 256 with fanouts 15,10,5 runs at most 250 aten ops per
// step on the training thread, and the step's threads read device data on the host at most
// 3 times per layer plus once (the training thread never: its losses stay on the device).
TEST_F(StepProfileTest, GenericStepStaysUnderTheGpuProxies) {
  TrainOptions o = options(ModelKind::kSage, true);
  o.kernels = nn::KernelPath::kGeneric;
  o.model.layers = 3;
  o.model.hidden = 256;
  o.loader.fanouts = {15, 10, 5};
  const TrainResult result = train(o);
  ASSERT_TRUE(result.profile.has_value());
  const StepProfileReport& r = *result.profile;
  ASSERT_EQ(r.steps, kSteps * 2);
  const double ops = static_cast<double>(r.training.ops) / static_cast<double>(r.steps);
  const double syncs = static_cast<double>(r.training.host_syncs + r.loader.host_syncs) /
                       static_cast<double>(r.steps);
  EXPECT_GT(ops, 20) << "the counts saw the step";
  EXPECT_LE(ops, 250);
  EXPECT_LE(syncs, 3 * 3 + 1);
  EXPECT_EQ(r.training.host_syncs, 0);
  // The generic path ran: its scopes, not the fused kernels.
  const auto by_name = ops_by_name(r);
  EXPECT_EQ(by_name.count("partita::spmm_forward"), 0u);
  ASSERT_EQ(by_name.count("partita::generic_spmm_forward"), 1u);
  EXPECT_EQ(by_name.at("partita::generic_spmm_forward").calls, 3 * r.steps);
}

// Losses accumulate on the device: a step reads nothing back, a progress record (every
// log_every steps and the last of an epoch) reads the loss sum once; a record's loss is the
// mean of its steps' losses.
TEST_F(StepProfileTest, LossIsReadOncePerProgressRecord) {
  for (nn::KernelPath kernels : {nn::KernelPath::kAuto, nn::KernelPath::kGeneric}) {
    SCOPED_TRACE(name_of(nn::kernel_path_names(), kernels));
    TrainOptions o = options(ModelKind::kSage, true);
    o.kernels = kernels;
    const TrainResult silent = train(o);
    ASSERT_TRUE(silent.profile.has_value());
    EXPECT_EQ(silent.profile->training.host_syncs, 0);
    std::vector<double> every, paired;
    o.log_every = 1;
    const TrainResult each = train(o, [&](const StepRecord& s) { every.push_back(s.loss); });
    EXPECT_EQ(syncs_of(each.profile->training, "aten::_local_scalar_dense"), kSteps * 2);
    EXPECT_EQ(each.profile->training.host_syncs, kSteps * 2);
    o.log_every = 3;  // steps 3 and 4 (the last) of each epoch
    std::vector<int64_t> steps;
    const TrainResult some = train(o, [&](const StepRecord& s) {
      paired.push_back(s.loss);
      steps.push_back(s.step);
    });
    EXPECT_EQ(some.profile->training.host_syncs, 2 * 2);
    EXPECT_EQ(steps, (std::vector<int64_t>{3, 4, 3, 4}));
    ASSERT_EQ(every.size(), 8u);
    ASSERT_EQ(paired.size(), 4u);
    for (int e = 0; e < 2; ++e) {
      const double* l = every.data() + 4 * e;
      EXPECT_NEAR(paired[2 * e], (l[0] + l[1] + l[2]) / 3, 1e-12 * l[0]);
      EXPECT_EQ(paired[2 * e + 1], l[3]);
      EXPECT_EQ(silent.epochs[e].loss, each.epochs[e].loss) << "records change no figure";
      EXPECT_EQ(silent.epochs[e].loss, some.epochs[e].loss);
      EXPECT_NEAR(silent.epochs[e].loss, (l[0] + l[1] + l[2] + l[3]) / 4, 1e-12 * l[0]);
    }
  }
}

// The counts: ops of the recording thread and of other threads, apart; reads of device data
// on the host by name (on the CPU, the ops that would read a GPU's).
TEST(OpRecording, CountsOpsAndHostSyncsOfTheTrainingThreadAndTheLoader) {
  StepProfile profile;
  {
    OpRecording recording(&profile);
    const torch::Tensor x = torch::arange(10);
    x.sum().item<int64_t>();          // _local_scalar_dense
    x.gt(4).nonzero();                // nonzero
    std::get<0>(torch::_unique2(x));  // _unique2
    std::thread loader([] { torch::arange(5).gt(2).nonzero(); });
    loader.join();
  }
  torch::arange(5).nonzero();  // after the recording: not counted
  const StepProfileReport r = profile.report();
  EXPECT_EQ(r.training.host_syncs, 3);
  EXPECT_EQ(syncs_of(r.training, "aten::_local_scalar_dense"), 1);
  EXPECT_EQ(syncs_of(r.training, "aten::nonzero"), 1);
  EXPECT_EQ(syncs_of(r.training, "aten::_unique2"), 1);
  EXPECT_GE(r.training.ops, 6);
  EXPECT_EQ(r.loader.host_syncs, 1);
  EXPECT_EQ(syncs_of(r.loader, "aten::nonzero"), 1);
  EXPECT_GE(r.loader.ops, 3);
  EXPECT_LT(r.loader.ops, r.training.ops);
}

// No recording, no callback: torch's RecordFunction sees none registered.
TEST(OpRecording, NullProfileRegistersNothing) {
  const bool before = at::hasThreadLocalCallbacks();
  const bool global_before = at::hasGlobalCallbacks();
  {
    OpRecording none(nullptr);
    EXPECT_EQ(at::hasThreadLocalCallbacks(), before);
    EXPECT_EQ(at::hasGlobalCallbacks(), global_before);
  }
  StepProfile profile;
  {
    OpRecording recording(&profile);
    EXPECT_TRUE(at::hasThreadLocalCallbacks());
    (torch::ones({4, 4}) * 2).sum();
  }
  EXPECT_EQ(at::hasThreadLocalCallbacks(), before);
  EXPECT_EQ(at::hasGlobalCallbacks(), global_before);
  bool mul = false;
  for (const OpRow& o : profile.report().ops) mul = mul || o.name == "aten::mul";
  EXPECT_TRUE(mul);
}

}  // namespace
}  // namespace partita::train
