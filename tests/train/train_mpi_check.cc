// Under mpirun (any number of ranks, one per part of PARTS_DIR): data-parallel training
// keeps every rank's parameters bit-identical after every step, and resuming from a
// checkpoint repeats the uninterrupted run exactly.
//   mpirun -np P train_mpi_check PARTS_DIR
// Every rank runs every test in the same order (the trainer is collective); an assertion
// never skips a collective, so a failure on one rank cannot hang the others.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/nn/precision.h"
#include "partita/runtime/mpi_rank.h"
#include "partita/train/checkpoint.h"
#include "partita/train/trainer.h"

namespace partita::train {
namespace {

runtime::Session* g_session = nullptr;

TrainOptions options(nn::ConvKind kind, nn::Precision precision = nn::Precision::kFp32) {
  TrainOptions o;
  o.model.kind = model_kind(kind);
  o.model.precision = precision;
  o.model.heads = kind == nn::ConvKind::kGat ? 2 : 1;
  o.model.hidden = 16;
  o.model.layers = 2;
  o.model.dropout = 0.3;
  o.loader.fanouts = {5, 5};
  o.optimizer.lr = 0.01;
  o.epochs = 2;
  o.loader.batch_size = 300;
  o.seed = 11;
  o.loader.threads = 2;
  o.loader.prefetch = 2;
  o.bucket_bytes = 1024;  // several buckets even for this small model
  return o;
}

// CRC-32 of the bytes of every parameter: equal on two ranks iff bit-identical (but for
// collisions).
uint32_t parameter_crc(Trainer& trainer) {
  uint32_t crc = 0;
  for (const torch::Tensor& p : trainer.model().parameters()) {
    const torch::Tensor c = p.detach().contiguous();
    crc = crc32_update(crc, c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  }
  return crc;
}

// {min, max} over ranks.
std::pair<int64_t, int64_t> min_max(int64_t value) {
  int64_t lo = value, hi = value;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return {lo, hi};
}

void expect_identical_every_step(nn::ConvKind kind,
                                 nn::Precision precision = nn::Precision::kFp32) {
  Trainer trainer(*g_session, options(kind, precision));
  auto [lo0, hi0] = min_max(parameter_crc(trainer));
  EXPECT_EQ(lo0, hi0) << "initial weights differ across ranks";
  int64_t steps = 0, mismatches = 0;
  std::vector<double> losses;
  trainer.train({}, [&](const StepRecord& s) {
    auto [lo, hi] = min_max(parameter_crc(trainer));
    if (lo != hi) ++mismatches;
    ++steps;
    losses.push_back(s.loss);
  });
  EXPECT_EQ(steps, 2 * trainer.steps_per_epoch());
  EXPECT_GE(trainer.steps_per_epoch(), 2) << "too few steps to test anything";
  EXPECT_EQ(mismatches, 0) << "parameters differ across ranks after some step";
  // The loss reported on every rank is the global one: identical too.
  auto [lo, hi] =
      min_max(static_cast<int64_t>(crc32_update(0, losses.data(), losses.size() * sizeof(double))));
  EXPECT_EQ(lo, hi);
}

TEST(TrainMpi, SageParametersIdenticalAfterEveryStep) {
  expect_identical_every_step(nn::ConvKind::kSage);
}

TEST(TrainMpi, GcnParametersIdenticalAfterEveryStep) {
  expect_identical_every_step(nn::ConvKind::kGcn);
}

TEST(TrainMpi, GatParametersIdenticalAfterEveryStep) {
  expect_identical_every_step(nn::ConvKind::kGat);
}

TEST(TrainMpi, Bf16ParametersIdenticalAfterEveryStep) {
  if (!nn::cpu_supports_bf16()) GTEST_SKIP() << "no native bf16 on this CPU";
  expect_identical_every_step(nn::ConvKind::kSage, nn::Precision::kBf16);
  expect_identical_every_step(nn::ConvKind::kGat, nn::Precision::kBf16);
}

struct RunLog {
  std::vector<double> step_losses;
  std::vector<EpochRecord> epochs;
  double test_acc = 0;
  uint32_t crc = 0;
};

RunLog train_run(TrainOptions o) {
  RunLog run;
  Trainer trainer(*g_session, o);
  TrainResult result =
      trainer.train([&](const EpochRecord& r) { run.epochs.push_back(r); },
                    [&](const StepRecord& s) { run.step_losses.push_back(s.loss); });
  run.test_acc = result.test_acc;
  run.crc = parameter_crc(trainer);
  return run;
}

void expect_resume_repeats_the_uninterrupted_run(nn::Precision precision) {
  testing::TempDir dir;  // only rank 0's is used: it alone reads and writes checkpoints
  TrainOptions o = options(nn::ConvKind::kSage, precision);
  o.epochs = 4;
  const RunLog whole = train_run(o);

  TrainOptions first_half = o;
  first_half.epochs = 2;
  first_half.checkpoint.dir = dir / "ckpt";
  const RunLog head = train_run(first_half);
  if (g_session->rank() == 0) {
    EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir / "ckpt", 1)));
    EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir / "ckpt", 2)));
  }

  TrainOptions resumed = o;
  resumed.checkpoint.dir = dir / "ckpt";
  resumed.checkpoint.resume = true;
  const RunLog tail = train_run(resumed);

  ASSERT_EQ(head.step_losses.size() + tail.step_losses.size(), whole.step_losses.size());
  for (size_t i = 0; i < whole.step_losses.size(); ++i) {
    const double got = i < head.step_losses.size() ? head.step_losses[i]
                                                   : tail.step_losses[i - head.step_losses.size()];
    EXPECT_EQ(got, whole.step_losses[i]) << "step " << i;
  }
  ASSERT_EQ(tail.epochs.size(), 2u);
  EXPECT_EQ(tail.epochs[0].epoch, 3);
  EXPECT_EQ(tail.epochs[1].val_acc, whole.epochs[3].val_acc);
  EXPECT_EQ(tail.test_acc, whole.test_acc);
  EXPECT_EQ(tail.crc, whole.crc) << "final parameters differ";
  if (g_session->rank() == 0) {  // the two latest are kept
    EXPECT_FALSE(std::filesystem::exists(checkpoint_path(dir / "ckpt", 2)));
    EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir / "ckpt", 3)));
    EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir / "ckpt", 4)));
  }

  // Negative control: the comparison above can fail. From the same checkpoint (a copy),
  // resuming with another seed gives other losses than resuming with the right one.
  if (g_session->rank() == 0) std::filesystem::copy(dir / "ckpt", dir / "ckpt-copy");
  TrainOptions same = resumed;
  same.epochs = 5;
  const RunLog reference = train_run(same);
  TrainOptions reseeded = same;
  reseeded.checkpoint.dir = dir / "ckpt-copy";
  reseeded.seed = o.seed + 1;
  const RunLog other = train_run(reseeded);
  ASSERT_EQ(other.step_losses.size(), whole.step_losses.size() / 4);
  ASSERT_EQ(reference.step_losses.size(), other.step_losses.size());
  EXPECT_NE(other.step_losses, reference.step_losses);
}

TEST(TrainMpi, ResumeRepeatsTheUninterruptedRun) {
  expect_resume_repeats_the_uninterrupted_run(nn::Precision::kFp32);
}

TEST(TrainMpi, ResumeRepeatsTheUninterruptedRunInBf16) {
  if (!nn::cpu_supports_bf16()) GTEST_SKIP() << "no native bf16 on this CPU";
  expect_resume_repeats_the_uninterrupted_run(nn::Precision::kBf16);
}

TEST(TrainMpi, DamagedCheckpointIsRefusedOnEveryRank) {
  testing::TempDir dir;
  TrainOptions o = options(nn::ConvKind::kSage);
  o.epochs = 1;
  o.checkpoint.dir = dir / "ckpt";
  train_run(o);
  if (g_session->rank() == 0) {
    const std::string path = checkpoint_path(o.checkpoint.dir, 1);
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  }
  o.checkpoint.resume = true;
  o.epochs = 2;
  std::string message;
  try {
    train_run(o);
  } catch (const FormatError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("unreadable checkpoint"), std::string::npos) << message;
  if (g_session->rank() == 0) {
    EXPECT_NE(message.find("checkpoint-000001.pt"), std::string::npos) << message;
  }

  // A fresh run (no --resume) refuses a directory that already holds checkpoints.
  TrainOptions fresh = o;
  fresh.checkpoint.resume = false;
  EXPECT_THROW(train_run(fresh), UsageError);

  // A checkpoint of another model shape is refused with a usage error.
  testing::TempDir other;
  TrainOptions small = options(nn::ConvKind::kSage);
  small.epochs = 1;
  small.checkpoint.dir = other / "ckpt";
  train_run(small);
  TrainOptions wide = small;
  wide.model.hidden = 32;
  wide.checkpoint.resume = true;
  wide.epochs = 2;
  EXPECT_THROW(train_run(wide), UsageError);
}

}  // namespace
}  // namespace partita::train

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: train_mpi_check PARTS_DIR\n");
    return 2;
  }
  partita::MpiScope mpi(&argc, &argv);
  partita::runtime::SessionOptions so;
  so.parts_dir = argv[1];
  so.timeout_s = 60;
  partita::runtime::MpiRank rank(mpi, so);
  partita::runtime::Session& session = rank.session();
  partita::train::g_session = &session;
  // Only rank 0 prints gtest's report.
  if (mpi.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  session.finish();
  // Any rank's failure fails the job.
  int any = failed != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}
