// Trainer on one rank (an MPI singleton) over a 1-part partition of a generated graph.
#include "partita/train/trainer.h"

#include <gtest/gtest.h>

#include <memory>

#include "helpers/test_paths.h"
#include "partita/comm/mpi_scope.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/partition/partition.h"
#include "partita/runtime/mpi_rank.h"

namespace partita::train {
namespace {

TrainOptions small_options() {
  TrainOptions o;
  o.model.kind = ModelKind::kSage;
  o.model.hidden = 32;
  o.model.layers = 2;
  o.model.dropout = 0.2;
  o.loader.fanouts = {10, 10};
  o.optimizer.lr = 0.01;
  o.epochs = 4;
  o.loader.batch_size = 256;
  o.seed = 3;
  o.loader.threads = 1;
  o.torch_threads = 1;
  return o;
}

// One process, one MPI init: both checks share a session.
TEST(Trainer, LearnsAndIsDeterministic) {
  testing::TempDir dir;
  data::GenerateOptions g;
  g.nodes = 3000;
  g.avg_degree = 10;
  g.feat_dim = 16;
  g.classes = 4;
  g.seed = 1;
  g.threads = 1;
  g.out_dir = dir / "ds";
  data::generate_synthetic(g);
  partition::PartitionOptions p;
  p.num_parts = 1;
  p.out_dir = dir / "p1";
  p.threads = 1;
  partition::run_partition(g.out_dir, data::LoadOptions{}, p);

  MpiScope mpi(nullptr, nullptr);
  runtime::SessionOptions so;
  so.parts_dir = p.out_dir;
  runtime::MpiRank rank(mpi, so);
  runtime::Session& session = rank.session();

  TrainResult first, second;
  {
    Trainer trainer(session, small_options());
    first = trainer.train();
  }
  {
    Trainer trainer(session, small_options());
    second = trainer.train();
  }
  session.finish();

  ASSERT_EQ(first.epochs.size(), 4u);
  EXPECT_LT(first.epochs.back().loss, first.epochs.front().loss);
  EXPECT_GT(first.test_acc, 0.6) << "chance is 0.25";
  EXPECT_GT(first.epochs.back().val_acc, 0.6);
  ASSERT_EQ(second.epochs.size(), first.epochs.size());
  for (size_t e = 0; e < first.epochs.size(); ++e) {
    EXPECT_EQ(first.epochs[e].loss, second.epochs[e].loss) << "epoch " << e;
    EXPECT_EQ(first.epochs[e].val_acc, second.epochs[e].val_acc) << "epoch " << e;
  }
  EXPECT_EQ(first.test_acc, second.test_acc);
}

}  // namespace
}  // namespace partita::train
