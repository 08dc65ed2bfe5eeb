// The coarse-partition-refine partitioner (src/partition/coarse_partition.h) through
// assign_parts, with threads as ranks (one rank too): balance of every asked constraint,
// non-empty parts, identical reruns, independence of the thread count, and an edge cut
// close to single-process METIS's on a generated 30k-node community graph.
#include "coarse_partition.h"  // src/partition

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "helpers/inproc_dist_comm.h"
#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/data/shard.h"
#include "partita/partition/assign.h"
#include "partita/partition/pipeline.h"

namespace partita {
namespace {

using partition::PartitionOptions;

struct Result {
  std::vector<int32_t> part;  // by original id
  int64_t cut = 0;
};

// Stages 1-2 on `ranks` thread ranks (coarse partitioner, the default).
Result run_distributed(const std::string& dir, int64_t n, const PartitionOptions& options,
                       int ranks) {
  testing::InProcessDistComms comms(ranks);
  Result result;
  result.part.assign(static_cast<size_t>(n), -1);
  std::vector<int64_t> cut(static_cast<size_t>(ranks));
  const auto failures = testing::on_threads(ranks, [&](int r) {
    data::DatasetShard shard = data::read_dataset_shard(dir, r, ranks);
    const partition::ShardGraph g =
        partition::build_shard_graph(shard, false, true, comms.member(r), options.threads);
    const std::vector<int32_t> part =
        partition::assign_parts(
            {g, shard.train_idx, options, comms.member(r), partition::AssignStrategy::kCoarse})
            .part;
    std::copy(part.begin(), part.end(), result.part.begin() + g.node_begin);
    cut[r] = partition::distributed_edge_cut(g, part, comms.member(r));
  });
  for (const auto& f : failures) EXPECT_EQ(f, "");
  result.cut = cut[0];
  return result;
}

// max/mean of each constraint (nodes, training nodes, in-edges) over the parts.
std::vector<double> imbalance(const data::Dataset& ds, const std::vector<int32_t>& part, int P) {
  std::vector<std::vector<double>> load(3, std::vector<double>(static_cast<size_t>(P), 0));
  for (int64_t v = 0; v < ds.num_nodes; ++v) {
    load[0][part[v]] += 1;
    load[2][part[v]] += static_cast<double>(ds.in_edges.degree(v));
  }
  for (int64_t t : ds.train_idx) load[1][part[t]] += 1;
  std::vector<double> out;
  for (const auto& l : load) {
    EXPECT_GT(*std::min_element(l.begin(), l.end()), 0) << "an empty part";
    out.push_back(*std::max_element(l.begin(), l.end()) * P /
                  std::accumulate(l.begin(), l.end(), 0.0));
  }
  return out;
}

int64_t edge_cut(const data::Dataset& ds, const std::vector<int32_t>& part) {
  int64_t cut = 0;
  for (int64_t v = 0; v < ds.num_nodes; ++v)
    for (int64_t k = ds.in_edges.indptr[v]; k < ds.in_edges.indptr[v + 1]; ++k)
      cut += part[ds.in_edges.indices[k]] != part[v];
  return cut;
}

class CoarsePartition : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    data::GenerateOptions gen;
    gen.nodes = 30000;
    gen.avg_degree = 8;
    gen.feat_dim = 2;
    gen.classes = 24;
    gen.seed = 11;
    gen.train_fraction = 0.1;
    gen.out_dir = *dir_ / "g";
    data::generate_synthetic(gen);
    ds_ = new data::Dataset(data::load_dataset(*dir_ / "g", data::LoadOptions{}));
  }
  static void TearDownTestSuite() {
    delete ds_;
    delete dir_;
  }
  static testing::TempDir* dir_;
  static data::Dataset* ds_;
};
testing::TempDir* CoarsePartition::dir_ = nullptr;
data::Dataset* CoarsePartition::ds_ = nullptr;

TEST_F(CoarsePartition, BalancedAndDeterministicForOneToFourRanks) {
  const std::string dir = *dir_ / "g";
  for (bool constraints : {false, true}) {
    for (int ranks = 1; ranks <= 4; ++ranks) {
      const int P = ranks == 3 ? 5 : ranks + 2;  // P != R
      SCOPED_TRACE(::testing::Message()
                   << ranks << " ranks, " << P << " parts, constraints " << constraints);
      PartitionOptions o;
      o.num_parts = P;
      o.seed = 7;
      o.threads = 1;
      o.balance_train = constraints;
      o.balance_edges = constraints;
      const Result a = run_distributed(dir, ds_->num_nodes, o, ranks);
      o.threads = 3;
      const Result b = run_distributed(dir, ds_->num_nodes, o, ranks);
      EXPECT_EQ(a.part, b.part);  // a rerun, with another thread count
      EXPECT_EQ(a.cut, edge_cut(*ds_, a.part));
      const std::vector<double> im = imbalance(*ds_, a.part, P);
      EXPECT_LE(im[0], 1.05);
      if (constraints) {
        EXPECT_LE(im[1], 1.05);
        EXPECT_LE(im[2], 1.05);
      }
    }
  }
}

// Measured (seed 7, 4 parts): cut / METIS's cut 0.999 at 1 rank, 1.004 at 2, 1.005 at 4
// (printed); the bound is 1.3x.
TEST_F(CoarsePartition, CutWithinBoundOfSingleProcessMetis) {
  const graph::CsrOf<int32_t> adj = partition::metis_graph(ds_->in_edges, 1).adj;
  for (int ranks : {1, 2, 4}) {
    PartitionOptions o;
    o.num_parts = 4;
    o.seed = 7;
    o.threads = 1;
    partition::MetisAssignOptions mo;
    mo.num_parts = 4;
    mo.seed = 7;
    const std::vector<int32_t> single =
        partition::assign_metis(adj, ds_->in_edges.indptr, ds_->train_idx, mo, nullptr);
    const int64_t metis_cut = edge_cut(*ds_, single);
    const Result dist = run_distributed(*dir_ / "g", ds_->num_nodes, o, ranks);
    const double ratio = static_cast<double>(dist.cut) / static_cast<double>(metis_cut);
    std::printf("coarse partitioner, %d ranks: cut %lld, METIS %lld, ratio %.3f\n", ranks,
                static_cast<long long>(dist.cut), static_cast<long long>(metis_cut), ratio);
    EXPECT_LE(ratio, 1.3) << ranks << " ranks";
  }
}

// The figures coarse_partition reports are the job's, the same on every rank: levels and
// the gathered graph's size as maxima over ranks (only rank 0 sees that graph), moves summed.
// 30k nodes in 2 parts coarsen (each rank's block is far above its share of 4000 clusters).
TEST_F(CoarsePartition, StatsAreTheSameOnEveryRank) {
  for (int ranks : {2, 3}) {
    testing::InProcessDistComms comms(ranks);
    std::vector<partition::CoarseStats> stats(static_cast<size_t>(ranks));
    const auto failures = testing::on_threads(ranks, [&](int r) {
      data::DatasetShard shard = data::read_dataset_shard(*dir_ / "g", r, ranks);
      const partition::ShardGraph g =
          partition::build_shard_graph(shard, false, true, comms.member(r), 1);
      const std::vector<std::vector<int64_t>> weight{
          std::vector<int64_t>(static_cast<size_t>(g.node_end - g.node_begin), 1)};
      partition::coarse_partition(partition::distributed_adjacency(g, comms.member(r), 1), weight,
                                  {2, 1.04, 7}, comms.member(r), stats[r]);
    });
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE(::testing::Message() << "rank " << r << " of " << ranks);
      EXPECT_EQ(failures[r], "");
      EXPECT_GE(stats[r].levels, 1);
      EXPECT_GT(stats[r].coarse_vertices, 0);
      EXPECT_LT(stats[r].coarse_vertices, ds_->num_nodes);
      EXPECT_GT(stats[r].coarse_edges, 0);
      EXPECT_EQ(stats[r].levels, stats[0].levels);
      EXPECT_EQ(stats[r].coarse_vertices, stats[0].coarse_vertices);
      EXPECT_EQ(stats[r].coarse_edges, stats[0].coarse_edges);
      EXPECT_EQ(stats[r].refine_moves, stats[0].refine_moves);
      EXPECT_EQ(stats[r].refine_rounds, stats[0].refine_rounds);
    }
  }
}

}  // namespace
}  // namespace partita
