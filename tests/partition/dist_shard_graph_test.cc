// Stages 1 and 2 (random) of the distributed partition pipeline in one process, with
// threads as ranks (tests/helpers/inproc_dist_comm.h): the in-edge CSC built across R ranks
// must equal load_dataset's rows exactly, and random assignment must be balanced and
// deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "helpers/inproc_dist_comm.h"
#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/core/npy.h"
#include "partita/data/generate.h"
#include "partita/partition/assign.h"
#include "partita/partition/pipeline.h"

namespace partita {
namespace {

using partition::ShardGraph;

// The listed edges of a dataset directory, as one flat list with relations (typed: the
// homogenised ids and the input relation of each edge).
struct ListedEdges {
  std::vector<int64_t> src, dst;
  std::vector<int32_t> relation;
};

ListedEdges homogeneous_edges(const std::string& dir) {
  ListedEdges e;
  const std::vector<int64_t> pairs = read_npy_vector<int64_t>(dir + "/edges.npy", 2);
  for (size_t i = 0; i < pairs.size(); i += 2) {
    e.src.push_back(pairs[i]);
    e.dst.push_back(pairs[i + 1]);
  }
  return e;
}

ListedEdges typed_edges(const std::string& dir, const data::HeteroSchema& schema) {
  ListedEdges e;
  int input = 0;
  for (int r = 0; r < schema.num_relations(); ++r) {
    const data::Relation& rel = schema.relations[r];
    if (rel.reverse) continue;
    const std::vector<int64_t> pairs =
        read_npy_vector<int64_t>(dir + "/edges/" + schema.triplet(r) + ".npy", 2);
    for (size_t i = 0; i < pairs.size(); i += 2) {
      e.src.push_back(pairs[i] + schema.node_types[rel.src_type].offset);
      e.dst.push_back(pairs[i + 1] + schema.node_types[rel.dst_type].offset);
      e.relation.push_back(input);
    }
    ++input;
  }
  return e;
}

// Hand-made shards: rank r lists the edges i with (i * 7 + 3) % R == r (any split works:
// which rank reads an edge says nothing about its endpoints).
data::DatasetShard make_shard(const data::Dataset& ds, const ListedEdges& edges, int rank,
                              int ranks) {
  data::DatasetShard shard;
  shard.rank = rank;
  shard.ranks = ranks;
  shard.num_nodes = ds.num_nodes;
  std::tie(shard.node_begin, shard.node_end) = data::node_block(ds.num_nodes, rank, ranks);
  for (size_t i = 0; i < edges.src.size(); ++i) {
    if (static_cast<int>((i * 7 + 3) % ranks) != rank) continue;
    shard.src.push_back(edges.src[i]);
    shard.dst.push_back(edges.dst[i]);
    if (!edges.relation.empty()) shard.edge_relation.push_back(edges.relation[i]);
  }
  shard.input_edges_total = static_cast<int64_t>(edges.src.size());
  if (ds.hetero) {
    // The schema without features and without reverse relations (the builder adds them).
    shard.hetero.emplace();
    for (const data::NodeType& t : ds.hetero->node_types) {
      shard.hetero->node_types.emplace_back();
      shard.hetero->node_types.back().name = t.name;
      shard.hetero->node_types.back().count = t.count;
      shard.hetero->node_types.back().offset = t.offset;
    }
    for (const data::Relation& rel : ds.hetero->relations)
      if (!rel.reverse) shard.hetero->relations.push_back(rel);
    shard.hetero->target_type = ds.hetero->target_type;
  }
  for (int64_t t : ds.train_idx)
    if (t >= shard.node_begin && t < shard.node_end) shard.train_idx.push_back(t);
  shard.labels.assign(ds.labels.begin() + shard.node_begin, ds.labels.begin() + shard.node_end);
  return shard;
}

// Builds the graph on `ranks` threads and checks every rank's rows against `ds`.
void expect_rows_equal(const data::Dataset& ds, const ListedEdges& edges, int ranks,
                       bool undirected, bool reverse_relations) {
  testing::InProcessDistComms comms(ranks);
  std::vector<ShardGraph> graphs(static_cast<size_t>(ranks));
  const auto failures = testing::on_threads(ranks, [&](int r) {
    data::DatasetShard shard = make_shard(ds, edges, r, ranks);
    graphs[r] = partition::build_shard_graph(shard, undirected, reverse_relations, comms.member(r),
                                             /*threads=*/2);
    EXPECT_TRUE(shard.src.empty());  // consumed
  });
  for (const auto& f : failures) ASSERT_EQ(f, "");
  for (int r = 0; r < ranks; ++r) {
    const ShardGraph& g = graphs[r];
    SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(ranks));
    EXPECT_EQ(g.num_nodes, ds.num_nodes);
    EXPECT_EQ(g.num_edges_total, ds.num_edges());
    EXPECT_EQ(g.symmetric, ds.hetero ? reverse_relations : undirected);
    ASSERT_EQ(g.in_edges.num_rows(), g.node_end - g.node_begin);
    const int64_t base = ds.in_edges.indptr[g.node_begin];
    for (int64_t v = g.node_begin; v <= g.node_end; ++v)
      ASSERT_EQ(g.in_edges.indptr[v - g.node_begin], ds.in_edges.indptr[v] - base) << v;
    const auto first = ds.in_edges.indices.begin() + base;
    ASSERT_TRUE(std::equal(g.in_edges.indices.begin(), g.in_edges.indices.end(), first));
    if (ds.hetero) {
      const auto rel = ds.edge_relation.begin() + base;
      ASSERT_EQ(g.edge_relation.size(), g.in_edges.indices.size());
      EXPECT_TRUE(std::equal(g.edge_relation.begin(), g.edge_relation.end(), rel));
    } else {
      EXPECT_TRUE(g.edge_relation.empty());
    }
  }
}

class DistShardGraph : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    data::GenerateOptions gen;
    gen.nodes = 1500;
    gen.avg_degree = 6;  // duplicates and self loops occur at this density (power law)
    gen.feat_dim = 2;
    gen.classes = 3;
    gen.seed = 5;
    gen.out_dir = *dir_ / "homo";
    data::generate_synthetic(gen);
    data::HeteroGenerateOptions het;
    het.nodes = 2000;
    het.feat_dim = 2;
    het.classes = 4;
    het.seed = 6;
    het.out_dir = *dir_ / "typed";
    data::generate_hetero(het);
  }
  static void TearDownTestSuite() { delete dir_; }
  static testing::TempDir* dir_;
};
testing::TempDir* DistShardGraph::dir_ = nullptr;

TEST_F(DistShardGraph, DirectedRowsEqualLoadDataset) {
  data::LoadOptions load;
  const data::Dataset ds = data::load_dataset(*dir_ / "homo", load);
  ASSERT_GT(ds.self_loops_dropped + ds.duplicates_dropped, 0);  // the dedup is exercised
  const ListedEdges edges = homogeneous_edges(*dir_ / "homo");
  for (int ranks = 1; ranks <= 4; ++ranks) expect_rows_equal(ds, edges, ranks, false, true);
}

TEST_F(DistShardGraph, UndirectedRowsEqualLoadDataset) {
  data::LoadOptions load;
  load.undirected = true;
  const data::Dataset ds = data::load_dataset(*dir_ / "homo", load);
  const ListedEdges edges = homogeneous_edges(*dir_ / "homo");
  for (int ranks = 1; ranks <= 4; ++ranks) expect_rows_equal(ds, edges, ranks, true, true);
}

TEST_F(DistShardGraph, TypedRowsEqualLoadDataset) {
  for (bool reverse : {true, false}) {
    data::LoadOptions load;
    load.reverse_relations = reverse;
    const data::Dataset ds = data::load_dataset(*dir_ / "typed", load);
    ASSERT_TRUE(ds.hetero.has_value());
    const ListedEdges edges = typed_edges(*dir_ / "typed", *ds.hetero);
    for (int ranks = 1; ranks <= 4; ++ranks) expect_rows_equal(ds, edges, ranks, false, reverse);
  }
}

// Random assignment: parts of every block gathered in rank order.
std::vector<int32_t> random_parts(const data::Dataset& ds, const ListedEdges& edges, int ranks,
                                  int parts, uint64_t seed) {
  testing::InProcessDistComms comms(ranks);
  std::vector<std::vector<int32_t>> local(static_cast<size_t>(ranks));
  const auto failures = testing::on_threads(ranks, [&](int r) {
    data::DatasetShard shard = make_shard(ds, edges, r, ranks);
    const ShardGraph g = partition::build_shard_graph(shard, false, true, comms.member(r), 1);
    partition::PartitionOptions options;
    options.method = partition::Method::kRandom;
    options.num_parts = parts;
    options.seed = seed;
    local[r] = partition::assign_parts({g, shard.train_idx, options, comms.member(r)}).part;
  });
  for (const auto& f : failures) EXPECT_EQ(f, "");
  std::vector<int32_t> all;
  for (const auto& l : local) all.insert(all.end(), l.begin(), l.end());
  return all;
}

TEST_F(DistShardGraph, RandomAssignmentIsBalancedAndDeterministic) {
  const data::Dataset ds = data::load_dataset(*dir_ / "homo", data::LoadOptions{});
  const ListedEdges edges = homogeneous_edges(*dir_ / "homo");
  for (int ranks : {1, 3, 4}) {
    for (int parts : {1, 2, 7}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(parts) + " parts");
      const std::vector<int32_t> a = random_parts(ds, edges, ranks, parts, 11);
      ASSERT_EQ(static_cast<int64_t>(a.size()), ds.num_nodes);
      std::vector<int64_t> count(static_cast<size_t>(parts), 0);
      for (int32_t p : a) {
        ASSERT_GE(p, 0);
        ASSERT_LT(p, parts);
        ++count[p];
      }
      // The single-process counts: floor(n/P) + 1 for the first n mod P parts.
      for (int p = 0; p < parts; ++p)
        EXPECT_EQ(count[p], ds.num_nodes / parts + (p < ds.num_nodes % parts ? 1 : 0)) << p;
      EXPECT_EQ(random_parts(ds, edges, ranks, parts, 11), a);  // same seed, same parts
      if (parts > 1) {
        EXPECT_NE(random_parts(ds, edges, ranks, parts, 12), a);
      }
      // Not the unshuffled pattern v mod P (all n nodes in place): shuffled, about n/P are.
      if (parts > 1) {
        int64_t in_place = 0;
        for (int64_t v = 0; v < ds.num_nodes; ++v) in_place += a[v] == v % parts;
        EXPECT_LT(in_place, ds.num_nodes / parts + ds.num_nodes / 10);
      }
    }
  }
}

// The stand-in part_graph gives contiguous blocks of ids: the METIS path must return
// exactly those (the adjacency reaches part_graph with its vtxdist) on any rank count, and
// distributed_edge_cut must count the cut of those parts exactly.
TEST_F(DistShardGraph, MetisPathReturnsPartGraphsPartsAndCountsTheCut) {
  const data::Dataset ds = data::load_dataset(*dir_ / "homo", data::LoadOptions{});
  const ListedEdges edges = homogeneous_edges(*dir_ / "homo");
  for (int ranks : {1, 2, 3}) {
    testing::InProcessDistComms comms(ranks);
    std::vector<std::vector<int32_t>> local(static_cast<size_t>(ranks));
    std::vector<int64_t> cuts(static_cast<size_t>(ranks), -1);
    const auto failures = testing::on_threads(ranks, [&](int r) {
      data::DatasetShard shard = make_shard(ds, edges, r, ranks);
      const ShardGraph g = partition::build_shard_graph(shard, false, true, comms.member(r), 1);
      partition::PartitionOptions options;
      options.method = partition::Method::kMetis;
      options.dist_partitioner = partition::DistPartitioner::kPtScotch;  // the stand-in
      options.num_parts = 5;
      local[r] = partition::assign_parts({g, shard.train_idx, options, comms.member(r),
                                          partition::AssignStrategy::kPtScotch})
                     .part;
      cuts[r] = partition::distributed_edge_cut(g, local[r], comms.member(r));
    });
    for (const auto& f : failures) ASSERT_EQ(f, "");
    // The cut, counted by brute force over the whole CSC with the predicted parts.
    int64_t cut = 0;
    for (int64_t d = 0; d < ds.num_nodes; ++d)
      for (int64_t k = ds.in_edges.indptr[d]; k < ds.in_edges.indptr[d + 1]; ++k)
        cut += ds.in_edges.indices[k] * 5 / ds.num_nodes != d * 5 / ds.num_nodes;
    ASSERT_GT(cut, 0);
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(cuts[r], cut) << r;
    int64_t v = 0;
    for (const auto& l : local) {
      for (int32_t p : l) {
        EXPECT_EQ(p, v * 5 / ds.num_nodes) << v;
        ++v;
      }
    }
    EXPECT_EQ(v, ds.num_nodes);
  }
}

}  // namespace
}  // namespace partita

namespace partita {
namespace {

// The adjacency handed to part_graph: row v = in(v) ∪ out(v) without v, as single-process
// METIS gets it (partition::metis_graph), for directed, undirected and typed graphs.
void expect_adjacency_equals_metis_graph(const data::Dataset& ds, const ListedEdges& edges,
                                         bool undirected, bool reverse) {
  const partition::MetisGraph mg = partition::metis_graph(ds.in_edges, 1);
  for (int ranks = 1; ranks <= 3; ++ranks) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    testing::InProcessDistComms comms(ranks);
    std::vector<partition::DistAdjacency> adj(static_cast<size_t>(ranks));
    const auto failures = testing::on_threads(ranks, [&](int r) {
      data::DatasetShard shard = make_shard(ds, edges, r, ranks);
      const ShardGraph g =
          partition::build_shard_graph(shard, undirected, reverse, comms.member(r), 2);
      adj[r] = partition::distributed_adjacency(g, comms.member(r), 2);
    });
    for (const auto& f : failures) ASSERT_EQ(f, "");
    int64_t v = 0;
    for (int r = 0; r < ranks; ++r) {
      ASSERT_EQ(adj[r].vtxdist.size(), static_cast<size_t>(ranks) + 1);
      EXPECT_EQ(adj[r].vtxdist[r], v);
      EXPECT_TRUE(adj[r].vwgt.empty());
      const int64_t rows = static_cast<int64_t>(adj[r].xadj.size()) - 1;
      for (int64_t i = 0; i < rows; ++i, ++v) {
        const auto b = adj[r].adjncy.begin();
        const std::vector<int64_t> got(b + adj[r].xadj[i], b + adj[r].xadj[i + 1]);
        // Compared as sets: a symmetric typed CSC reaches METIS as is, rows sorted by
        // (relation, source), a source repeated in two relations.
        std::vector<int64_t> want(mg.adj.indices.begin() + mg.adj.indptr[v],
                                  mg.adj.indices.begin() + mg.adj.indptr[v + 1]);
        std::sort(want.begin(), want.end());
        want.erase(std::unique(want.begin(), want.end()), want.end());
        ASSERT_EQ(got, want) << "node " << v;
      }
    }
    EXPECT_EQ(v, ds.num_nodes);
  }
}

TEST_F(DistShardGraph, AdjacencyEqualsSingleProcessMetisGraph) {
  const ListedEdges homo = homogeneous_edges(*dir_ / "homo");
  for (bool undirected : {false, true}) {
    data::LoadOptions load;
    load.undirected = undirected;
    expect_adjacency_equals_metis_graph(data::load_dataset(*dir_ / "homo", load), homo, undirected,
                                        true);
  }
  for (bool reverse : {false, true}) {
    data::LoadOptions load;
    load.reverse_relations = reverse;
    const data::Dataset ds = data::load_dataset(*dir_ / "typed", load);
    expect_adjacency_equals_metis_graph(ds, typed_edges(*dir_ / "typed", *ds.hetero), false,
                                        reverse);
  }
}

}  // namespace
}  // namespace partita

namespace partita {
namespace {

// balance_train / balance_edges under the stand-in part_graph (contiguous id blocks): with
// every training node among the first quarter of ids, part 0 of 4 holds them all (train
// max/mean 4); the rebalancing pass must bring nodes, training nodes and in-edges to
// max/mean <= 1.05, the same way on two runs.
TEST_F(DistShardGraph, RebalancingReachesTrainAndEdgeBalance) {
  const data::Dataset ds = data::load_dataset(*dir_ / "homo", data::LoadOptions{});
  const ListedEdges edges = homogeneous_edges(*dir_ / "homo");
  const int parts = 4;
  for (int ranks : {1, 3}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    std::vector<int32_t> first;
    for (int run = 0; run < 2; ++run) {
      testing::InProcessDistComms comms(ranks);
      std::vector<std::vector<int32_t>> local(static_cast<size_t>(ranks));
      std::vector<std::vector<int64_t>> train(static_cast<size_t>(ranks));
      std::vector<ShardGraph> graphs(static_cast<size_t>(ranks));
      const auto failures = testing::on_threads(ranks, [&](int r) {
        data::DatasetShard shard = make_shard(ds, edges, r, ranks);
        shard.train_idx.clear();
        for (int64_t v = shard.node_begin; v < std::min(shard.node_end, ds.num_nodes / 4); ++v)
          if (v % 3 != 0) shard.train_idx.push_back(v);
        train[r] = shard.train_idx;
        graphs[r] = partition::build_shard_graph(shard, false, true, comms.member(r), 1);
        partition::PartitionOptions options;
        options.num_parts = parts;
        options.dist_partitioner = partition::DistPartitioner::kPtScotch;  // the stand-in
        options.balance_train = true;
        options.balance_edges = true;
        local[r] = partition::assign_parts({graphs[r], shard.train_idx, options, comms.member(r),
                                            partition::AssignStrategy::kPtScotch})
                       .part;
      });
      for (const auto& f : failures) ASSERT_EQ(f, "");
      std::vector<int32_t> all;
      std::vector<double> nodes(parts, 0), trains(parts, 0), in_edges(parts, 0);
      for (int r = 0; r < ranks; ++r) {
        for (size_t i = 0; i < local[r].size(); ++i) {
          nodes[local[r][i]] += 1;
          in_edges[local[r][i]] += static_cast<double>(graphs[r].in_edges.degree(i));
        }
        for (int64_t t : train[r]) trains[local[r][t - graphs[r].node_begin]] += 1;
        all.insert(all.end(), local[r].begin(), local[r].end());
      }
      for (const auto* load : {&nodes, &trains, &in_edges}) {
        const double sum = std::accumulate(load->begin(), load->end(), 0.0);
        const double largest = *std::max_element(load->begin(), load->end());
        EXPECT_LE(largest * parts / sum, 1.05);
        EXPECT_GT(*std::min_element(load->begin(), load->end()), 0);
      }
      if (run == 0)
        first = all;
      else
        EXPECT_EQ(all, first);
    }
  }
}

}  // namespace
}  // namespace partita
